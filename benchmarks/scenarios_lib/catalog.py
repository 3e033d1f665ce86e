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

import re
from dataclasses import dataclass

import numpy as np

from fusion.datasets._registry import COVTYPE_SOIL, COVTYPE_TERRAIN, COVTYPE_WILDERNESS

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
        "terrain": COVTYPE_TERRAIN,
        "soil_area": COVTYPE_WILDERNESS + COVTYPE_SOIL,
    },
    "dota2": {"heroes": tuple(f"hero_{i}" for i in range(1, 114))},
    "susy": {"low": _SUSY_LOW, "high": _SUSY_HIGH},
}


@dataclass(frozen=True)
class ScorerSpec:
    """One scorer: a kind of :data:`~scenarios_lib.scorers.SCORER_KINDS`, the
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


_SCORER = re.compile(r"(?P<kind>\w+)(?:\[(?P<features>\w+)\])?:(?P<n_train>\d+)")


def _scorers(text: str) -> tuple[ScorerSpec, ...]:
    """Scorers from ``"kind[features]:n_train ..."``: the notation of :meth:`ScorerSpec.label`
    followed by the training rows (``"hgb[terrain]:10000 rf:10000"``)."""
    specs = []
    for item in text.split():
        match = _SCORER.fullmatch(item)
        if match is None:
            raise ValueError(
                f"scorer {item!r}: expected kind[features]:n_train, e.g. lr[work]:5000."
            )
        specs.append(ScorerSpec(match["kind"], match["features"] or "all", int(match["n_train"])))
    return tuple(specs)


# SUSY: the local copy has 10,000 rows, so its scenarios use three scorers of 1,000 rows each
# (or two of 1,500), fusion samples of 500 and 2,000 only, and the remaining 5,000 rows as the
# test set. Its cells are noisier than the others.
_SIZES: dict[str, dict] = {"susy": {"n_fuse": (500, 2_000), "n_test": 5_000}}


def _scenario(name: str, dataset: str, role: str, scorers: str) -> Scenario:
    """One row of the tables below; the sample sizes are the data set's (``_SIZES``)."""
    return Scenario(name, dataset, role, _scorers(scorers), **_SIZES.get(dataset, {}))


# One scenario a row: name, data set, role, scorers as kind[features]:training rows.
MAIN: tuple[Scenario, ...] = (
    _scenario("adult_rf_gnb", "adult", "tied/saturated pair", "rf:5000 gnb:5000"),
    _scenario("adult_m3", "adult", "M=3, mixed", "hgb_overfit[work]:3000 lr[person]:5000 knn:5000"),
    _scenario("census_rare", "census", "rare positives (6 %)", "hgb:20000 lr[person]:10000"),
    _scenario(
        "census_rare_m3",
        "census",
        "rare positives, M=3, ties",
        "rf[work]:10000 gnb[person]:10000 mlp_overfit:3000",
    ),
    _scenario("covertype_sharp", "covertype", "sharp pair", "hgb:20000 mlp_overfit:5000"),
    _scenario(
        "covertype_m4",
        "covertype",
        "M=4",
        "hgb[terrain]:10000 rf:10000 knn[terrain]:10000 lr:10000",
    ),
    _scenario("dota2_weak", "dota2", "weak pair", "lr:20000 knn[heroes]:10000"),
    _scenario(
        "dota2_weak_m3",
        "dota2",
        "weak, M=3, overfit",
        "hgb_overfit:5000 gnb[heroes]:10000 mlp_overfit[heroes]:5000",
    ),
    _scenario("susy_m3", "susy", "M=3, small data", "mlp_overfit[low]:1000 hgb[high]:1000 lr:1000"),
)

HOLDOUT: tuple[Scenario, ...] = (
    _scenario("h_adult_et_svc", "adult", "pair, unseen kinds", "et:5000 svc[work]:3000"),
    _scenario(
        "h_adult_m4",
        "adult",
        "M=4, unseen mix",
        "hgb[person]:5000 et[work]:5000 gnb[work]:5000 mlp_overfit[person]:3000",
    ),
    _scenario(
        "h_census_rare",
        "census",
        "rare positives, unseen kinds",
        "et[work]:10000 knn[numeric]:10000",
    ),
    _scenario(
        "h_covertype_m3",
        "covertype",
        "M=3, unseen mix",
        "et[soil_area]:10000 gnb[terrain]:10000 hgb_overfit[terrain]:3000",
    ),
    _scenario("h_dota2_svc", "dota2", "weak pair, unseen kinds", "svc[heroes]:3000 hgb:20000"),
    _scenario("h_susy_et_knn", "susy", "pair, small data", "et[high]:1500 knn[low]:1500"),
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
