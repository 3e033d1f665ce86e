"""The scenarios of the scorer benchmark: which scorers, on which data, on how many rows.

A scenario names a data set, two to four scorers (kind, feature subset, training rows) and
the fusion sample sizes. Per seed, the rows of the data set are split at random into
disjoint parts: one training sample per scorer, a fusion pool of ``max(n_fuse)`` rows (the
fusion samples of the smaller sizes are its first rows, so they are nested) and a test set
of ``n_test`` rows (fewer when the data run out).

The main set (``MAIN``) is what the project tunes against; the held-out set (``HOLDOUT``)
uses other scorer kinds (ExtraTrees, SVC), other feature subsets and other seeds, to check
that conclusions carry over to scorers nobody looked at.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .scorers import SCORER_KINDS

__all__ = [
    "ScorerSpec",
    "Scenario",
    "FEATURE_SETS",
    "MAIN",
    "HOLDOUT",
    "QUICK",
    "MAIN_SEEDS",
    "HOLDOUT_SEEDS",
    "SCENARIO_SETS",
    "split_rows",
    "feature_columns",
]

_SUSY_LOW = (
    "lepton_1_pT",
    "lepton_1_eta",
    "lepton_1_phi",
    "lepton_2_pT",
    "lepton_2_eta",
    "lepton_2_phi",
    "missing_energy_magnitude",
    "missing_energy_phi",
)
_SUSY_HIGH = (
    "MET_rel",
    "axial_MET",
    "M_R",
    "M_TR_2",
    "R",
    "MT2",
    "S_R",
    "M_Delta_R",
    "dPhi_r_b",
    "cos_theta_r1",
)
_COVTYPE_TERRAIN = (
    "Elevation",
    "Aspect",
    "Slope",
    "Horizontal_Distance_To_Hydrology",
    "Vertical_Distance_To_Hydrology",
    "Horizontal_Distance_To_Roadways",
    "Hillshade_9am",
    "Hillshade_Noon",
    "Hillshade_3pm",
    "Horizontal_Distance_To_Fire_Points",
)

#: Named feature subsets per data set ("all" is every column and is not listed).
FEATURE_SETS: dict[str, dict[str, tuple[str, ...]]] = {
    "adult": {
        "work": (
            "workclass",
            "education",
            "education_num",
            "occupation",
            "hours_per_week",
            "capital_gain",
            "capital_loss",
        ),
        "person": (
            "age",
            "marital_status",
            "relationship",
            "race",
            "sex",
            "native_country",
            "fnlwgt",
        ),
    },
    "census": {
        "work": (
            "class_of_worker",
            "detailed_industry_recode",
            "detailed_occupation_recode",
            "major_industry_code",
            "major_occupation_code",
            "wage_per_hour",
            "full_or_part_time_employment_stat",
            "num_persons_worked_for_employer",
            "weeks_worked_in_year",
            "own_business_or_self_employed",
            "member_of_a_labor_union",
        ),
        "person": (
            "age",
            "education",
            "marital_stat",
            "race",
            "hispanic_origin",
            "sex",
            "capital_gains",
            "capital_losses",
            "dividends_from_stocks",
            "tax_filer_stat",
            "detailed_household_and_family_stat",
            "detailed_household_summary_in_household",
            "citizenship",
            "country_of_birth_self",
        ),
        "numeric": (
            "age",
            "wage_per_hour",
            "capital_gains",
            "capital_losses",
            "dividends_from_stocks",
            "num_persons_worked_for_employer",
            "weeks_worked_in_year",
        ),
    },
    "covertype": {
        "terrain": _COVTYPE_TERRAIN,
        "soil_area": tuple(f"Wilderness_Area{i}" for i in range(1, 5))
        + tuple(f"Soil_Type{i}" for i in range(1, 41)),
    },
    "dota2": {"heroes": tuple(f"hero_{i}" for i in range(1, 114))},
    "susy": {"low": _SUSY_LOW, "high": _SUSY_HIGH},
}


@dataclass(frozen=True)
class ScorerSpec:
    """One scorer: a kind of :data:`~fusion.bench.scenarios.scorers.SCORER_KINDS`, the
    feature subset it sees and the number of rows it is trained on."""

    kind: str
    features: str = "all"
    n_train: int = 5_000

    def label(self) -> str:
        return self.kind if self.features == "all" else f"{self.kind}[{self.features}]"


@dataclass(frozen=True)
class Scenario:
    """One configuration of scorers on one data set.

    Attributes
    ----------
    name : str
        Unique key (also in cache file names).
    dataset : str
        A name of :data:`fusion.datasets.DATASETS`.
    role : str
        What the scenario stands for ("sharp pair", "tied/saturated pair", ...).
    scorers : tuple of ScorerSpec
    n_fuse : tuple of int
        Fusion sample sizes (nested samples of one pool).
    n_test : int
        Test rows wanted; fewer when the data set has fewer rows left.
    """

    name: str
    dataset: str
    role: str
    scorers: tuple[ScorerSpec, ...]
    n_fuse: tuple[int, ...] = (500, 2_000, 10_000)
    n_test: int = 50_000

    def __post_init__(self):
        if len(self.scorers) < 2:
            raise ValueError(f"scenario {self.name!r} needs at least 2 scorers.")
        for s in self.scorers:
            if s.kind not in SCORER_KINDS:
                raise ValueError(f"scenario {self.name!r}: unknown scorer kind {s.kind!r}.")
            if s.features != "all" and s.features not in FEATURE_SETS.get(self.dataset, {}):
                raise ValueError(
                    f"scenario {self.name!r}: no feature set {s.features!r} for {self.dataset}."
                )

    @property
    def M(self) -> int:
        return len(self.scorers)

    def describe(self) -> str:
        return " + ".join(s.label() for s in self.scorers)


def _s(kind: str, features: str = "all", n_train: int = 5_000) -> ScorerSpec:
    return ScorerSpec(kind, features, n_train)


# SUSY: the local copy has 10,000 rows, so its scenarios use three scorers of 1,000 rows each
# (or two of 1,500), fusion samples of 500 and 2,000 only, and the remaining 5,000 rows as the
# test set. Its cells are noisier than the others.
_SUSY_FUSE = (500, 2_000)

MAIN: tuple[Scenario, ...] = (
    Scenario(
        "adult_rf_gnb",
        "adult",
        "tied/saturated pair",
        (_s("rf", n_train=5_000), _s("gnb", n_train=5_000)),
    ),
    Scenario(
        "adult_m3",
        "adult",
        "M=3, mixed",
        (
            _s("hgb_overfit", "work", 3_000),
            _s("lr", "person", 5_000),
            _s("knn", "all", 5_000),
        ),
    ),
    Scenario(
        "census_rare",
        "census",
        "rare positives (6 %)",
        (_s("hgb", "all", 20_000), _s("lr", "person", 10_000)),
    ),
    Scenario(
        "census_rare_m3",
        "census",
        "rare positives, M=3, ties",
        (
            _s("rf", "work", 10_000),
            _s("gnb", "person", 10_000),
            _s("mlp_overfit", "all", 3_000),
        ),
    ),
    Scenario(
        "covertype_sharp",
        "covertype",
        "sharp pair",
        (_s("hgb", "all", 20_000), _s("mlp_overfit", "all", 5_000)),
    ),
    Scenario(
        "covertype_m4",
        "covertype",
        "M=4",
        (
            _s("hgb", "terrain", 10_000),
            _s("rf", "all", 10_000),
            _s("knn", "terrain", 10_000),
            _s("lr", "all", 10_000),
        ),
    ),
    Scenario(
        "dota2_weak",
        "dota2",
        "weak pair",
        (_s("lr", "all", 20_000), _s("knn", "heroes", 10_000)),
    ),
    Scenario(
        "dota2_weak_m3",
        "dota2",
        "weak, M=3, overfit",
        (
            _s("hgb_overfit", "all", 5_000),
            _s("gnb", "heroes", 10_000),
            _s("mlp_overfit", "heroes", 5_000),
        ),
    ),
    Scenario(
        "susy_m3",
        "susy",
        "M=3, small data",
        (
            _s("mlp_overfit", "low", 1_000),
            _s("hgb", "high", 1_000),
            _s("lr", "all", 1_000),
        ),
        n_fuse=_SUSY_FUSE,
        n_test=5_000,
    ),
)

HOLDOUT: tuple[Scenario, ...] = (
    Scenario(
        "h_adult_et_svc",
        "adult",
        "pair, unseen kinds",
        (_s("et", "all", 5_000), _s("svc", "work", 3_000)),
    ),
    Scenario(
        "h_adult_m4",
        "adult",
        "M=4, unseen mix",
        (
            _s("hgb", "person", 5_000),
            _s("et", "work", 5_000),
            _s("gnb", "work", 5_000),
            _s("mlp_overfit", "person", 3_000),
        ),
    ),
    Scenario(
        "h_census_rare",
        "census",
        "rare positives, unseen kinds",
        (_s("et", "work", 10_000), _s("knn", "numeric", 10_000)),
    ),
    Scenario(
        "h_covertype_m3",
        "covertype",
        "M=3, unseen mix",
        (
            _s("et", "soil_area", 10_000),
            _s("gnb", "terrain", 10_000),
            _s("hgb_overfit", "terrain", 3_000),
        ),
    ),
    Scenario(
        "h_dota2_svc",
        "dota2",
        "weak pair, unseen kinds",
        (_s("svc", "heroes", 3_000), _s("hgb", "all", 20_000)),
    ),
    Scenario(
        "h_susy_et_knn",
        "susy",
        "pair, small data",
        (_s("et", "high", 1_500), _s("knn", "low", 1_500)),
        n_fuse=_SUSY_FUSE,
        n_test=5_000,
    ),
)

_BY_NAME = {s.name: s for s in MAIN + HOLDOUT}

#: ``--quick``: three main scenarios (a tied pair, rare positives, M=3), seed 0, n_fuse 500.
QUICK: tuple[Scenario, ...] = tuple(_BY_NAME[n] for n in ("adult_rf_gnb", "census_rare", "susy_m3"))

MAIN_SEEDS: tuple[int, ...] = (0, 1, 2)
HOLDOUT_SEEDS: tuple[int, ...] = (100, 101, 102)

#: Scenario sets by name (``--holdout`` selects "holdout").
SCENARIO_SETS: dict[str, tuple[Scenario, ...]] = {"main": MAIN, "holdout": HOLDOUT}


def feature_columns(scenario: Scenario, scorer: ScorerSpec, columns) -> list[str]:
    """The columns a scorer sees, in the data set's order."""
    if scorer.features == "all":
        return list(columns)
    wanted = set(FEATURE_SETS[scenario.dataset][scorer.features])
    missing = wanted - set(columns)
    if missing:
        raise ValueError(f"{scenario.dataset} lacks the columns {sorted(missing)}.")
    return [c for c in columns if c in wanted]


def split_rows(
    n_rows: int, scenario: Scenario, rng: np.random.Generator
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Disjoint random rows: one training sample per scorer, the fusion pool, the test set.

    The fusion pool is in random order (its first ``k`` rows are the fusion sample of size
    ``k``); the other parts are sorted.

    Raises
    ------
    ValueError
        The data set cannot hold the scorers' training rows, the fusion pool and at least
        1,000 test rows.
    """
    n_train = [s.n_train for s in scenario.scorers]
    n_pool = max(scenario.n_fuse)
    n_test = min(scenario.n_test, n_rows - sum(n_train) - n_pool)
    if n_test < 1_000:
        raise ValueError(
            f"scenario {scenario.name!r}: {scenario.dataset} has {n_rows} rows; training "
            f"{sum(n_train)} + fusion {n_pool} rows leave {max(n_test, 0)} test rows "
            "(at least 1,000 are needed)."
        )
    perm = rng.permutation(n_rows)
    bounds = np.cumsum([0, *n_train, n_pool, n_test])
    parts = [perm[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    train = [np.sort(p) for p in parts[: len(n_train)]]
    return train, parts[-2], np.sort(parts[-1])
