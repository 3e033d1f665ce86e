"""The loop of the multi-class benchmark: scores (cached), then every contender on every cell.

A cell is (setup, fusion sample size); per seed every contender is fitted on the same
fusion rows and scored on the same test rows. NumPy's global random state is seeded from
(setup, seed, size) before each fit, identically for every contender.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ... import metrics
from .._loop import FitBar, contender_rows, fit_seed, run_cells, seeded_fit, timed_fit
from ..scenarios.contenders import Contender
from .contenders import scorer_contenders
from .data import ScoreSet, Setup, cached_scores, load_data

__all__ = [
    "ECE_BINS",
    "METRICS",
    "RunConfig",
    "RunResult",
    "score_probabilities",
    "evaluate",
    "run",
]

#: Equal-width bins of the top-label and classwise ECE.
ECE_BINS = 15

#: Metric columns of a fit row; lower is better for all of them.
METRICS: tuple[str, ...] = ("log_loss", "brier", "top_label_ece", "classwise_ece")


@dataclass(frozen=True)
class RunConfig:
    """What a run covers: the setups, and per setup its seeds and sizes unless overridden;
    ``max_n[key]`` skips (and reports) a contender's cells above that fusion size."""

    setups: tuple[Setup, ...]
    seeds: tuple[int, ...] | None = None
    sizes: tuple[int, ...] | None = None
    max_n: dict = field(default_factory=dict)
    cache_dir: str | None = None

    def setup_seeds(self, setup: Setup) -> tuple[int, ...]:
        return setup.seeds if self.seeds is None else self.seeds

    def cell_sizes(self, setup: Setup) -> list[int]:
        return [n for n in setup.n_fuse if self.sizes is None or n in self.sizes]


@dataclass
class RunResult:
    """Fit rows (one per setup, seed, size, contender), per-(setup, seed) scorer rows, the
    contenders' labels and families, notes and the wall-clock seconds."""

    rows: list[dict]
    scores: list[dict]
    labels: dict[str, str]
    families: dict[str, str]
    config: RunConfig
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0


#: The numeric columns of a fit row: NaN until measured, and after a failure.
_MEASURED = (*METRICS, "accuracy", "fit_seconds", "predict_seconds")


def _empty_row(status: str = "ok", error: str = "") -> dict:
    row = dict.fromkeys(_MEASURED, math.nan)
    row.update(status=status, error=error, warnings=0, warning="")
    return row


def score_probabilities(y, P, classes) -> dict:
    """Test metrics of class probabilities ``P`` (n, C) for labels ``y`` (columns follow the
    sorted ``classes``)."""
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[1] != len(classes):
        raise ValueError(f"predict_proba gave shape {P.shape}; expected (n, {len(classes)}).")
    return {
        "log_loss": metrics.log_loss(y, P, labels=classes),
        "brier": metrics.brier_score(y, P, labels=classes),
        "top_label_ece": metrics.top_label_ece(y, P, n_bins=ECE_BINS, labels=classes),
        "classwise_ece": metrics.classwise_ece(y, P, n_bins=ECE_BINS, labels=classes),
        "accuracy": float(np.mean(classes[np.argmax(P, axis=1)] == np.asarray(y))),
    }


def evaluate(estimator, S_fuse, y_fuse, S_test, y_test, classes) -> dict:
    """Fit and score one contender; failures are recorded, not raised."""
    return timed_fit(
        estimator,
        S_fuse,
        y_fuse,
        S_test,
        _empty_row(),
        lambda P: score_probabilities(y_test, P, classes),
        reset=_MEASURED,
    )


def run(
    config: RunConfig,
    contenders: Sequence[Contender],
    *,
    loader: Callable[[str], tuple[np.ndarray, np.ndarray]] = load_data,
    progress: bool = True,
    on_rows: Callable[[list[dict]], None] | None = None,
) -> RunResult:
    """Run every contender (and the raw scorers) on every cell and seed of ``config``.

    ``loader(dataset) -> (X, y)`` is called at most once per data set, on cache misses;
    ``on_rows`` receives the rows of each (cell, seed) as soon as they exist.
    """
    start = time.perf_counter()
    load_once = functools.cache(loader)
    labels = {c.key: c.label for c in contenders}
    families = {c.key: c.family for c in contenders}
    notes = [
        f"`{key}` is not fitted on fusion samples above {limit:,} rows (cells marked skipped)."
        for key, limit in config.max_n.items()
        if key in labels
    ]
    every = {s: [*scorer_contenders(s.scorers), *contenders] for s in config.setups}
    for c in itertools.chain.from_iterable(every.values()):
        labels.setdefault(c.key, c.label)
        families.setdefault(c.key, c.family)
    plan = [
        (s, seed, config.cell_sizes(s)) for s in config.setups for seed in config.setup_seeds(s)
    ]
    bar = FitBar(sum(len(sizes) * (len(contenders) + s.M) for s, _, sizes in plan), progress)
    rows, score_rows = run_cells(
        plan,
        lambda setup, seed: cached_scores(setup, seed, config.cache_dir, load_once),
        _score_row,
        lambda setup, ss, n: _cell(setup, ss, n, every[setup], config, bar),
        bar,
        on_rows,
    )
    return RunResult(rows, score_rows, labels, families, config, notes, time.perf_counter() - start)


def _score_row(setup: Setup, ss: ScoreSet, hit: bool, seconds: float) -> dict:
    row = {
        "setup": setup.name,
        "seed": ss.seed,
        "M": setup.M,
        "C": int(ss.classes.shape[0]),
        "n_train": setup.n_train,
        "n_test": int(ss.y_test.shape[0]),
        "cached": hit,
        "seconds": seconds,
        "key": ss.key,
    }
    for m, kind in enumerate(setup.scorers):
        row[f"scorer{m + 1}"] = kind
        row[f"accuracy_{m + 1}"] = ss.info["scorer_accuracy"][m]
        row[f"log_loss_{m + 1}"] = ss.info["scorer_log_loss"][m]
    return row


def _cell(setup: Setup, ss: ScoreSet, n: int, contenders, config, bar: FitBar) -> list[dict]:
    S_fuse, y_fuse = ss.fusion_sample(n)
    base = {
        "setup": setup.name,
        "M": setup.M,
        "C": int(ss.classes.shape[0]),
        "n_fuse": n,
        "seed": ss.seed,
        "n_test": int(ss.y_test.shape[0]),
        "score_key": ss.key,
    }
    seed = fit_seed(setup.name, ss.seed, n)

    def fit(c: Contender) -> dict:
        return seeded_fit(
            c.make,
            seed,
            lambda est: evaluate(est, S_fuse, y_fuse, ss.S_test, ss.y_test, ss.classes),
            _empty_row,
        )

    where = f"{setup.name} seed {ss.seed} n={n}"
    return [
        {**base, "method": c.key, "label": c.label, "family": c.family, **row}
        for c, row in contender_rows(contenders, n, config.max_n, fit, _empty_row, bar, where)
    ]
