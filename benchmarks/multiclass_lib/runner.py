"""The loop of the multi-class benchmark: scores (trained and cached, or generated), then
every contender on every cell.

A cell is (setup, fusion sample size); per seed every contender is fitted on the same
fusion rows and scored on the same test rows. Labels are turned into class indices
``0 .. C - 1`` before any fit. NumPy's global random state is seeded from (setup, seed,
size) before each fit, identically for every contender.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from harness.loop import FitBar, fit_seed, run_cells, seeded_fit, timed_fit

from fusion import metrics

from .contenders import Contender, member_contenders
from .data import ScoreSet, load_data

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
    """What a run covers: the setups (:class:`.data.Setup` or
    :class:`.synthetic.SyntheticSetup`), and per setup its seeds and sizes unless overridden;
    ``max_n[key]`` skips (and reports) a contender's cells above that fusion size."""

    setups: tuple
    seeds: tuple[int, ...] | None = None
    sizes: tuple[int, ...] | None = None
    max_n: dict = field(default_factory=dict)
    cache_dir: str | None = None

    def setup_seeds(self, setup) -> tuple[int, ...]:
        return setup.seeds if self.seeds is None else self.seeds

    def cell_sizes(self, setup) -> list[int]:
        return [n for n in setup.n_fuse if self.sizes is None or n in self.sizes]


@dataclass
class RunResult:
    """Fit rows (one per setup, seed, size, contender), per-(setup, seed) score rows, the
    contenders' labels and families, notes and the wall-clock seconds."""

    rows: list[dict]
    scores: list[dict]
    labels: dict[str, str]
    families: dict[str, str]
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0


#: The numeric columns of a fit row: NaN until measured, and after a failure.
_MEASURED = (*METRICS, "accuracy", "fit_seconds", "predict_seconds")


def _empty_row(status: str = "ok", error: str = "") -> dict:
    row = dict.fromkeys(_MEASURED, math.nan)
    row.update(status=status, error=error, warnings=0, warning="", detail="")
    return row


def score_probabilities(y: np.ndarray, P: np.ndarray, C: int) -> dict:
    """Test metrics of class probabilities ``P`` (n, C) for class indices ``y``."""
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[1] != C:
        raise ValueError(f"predict_proba gave shape {P.shape}; expected (n, {C}).")
    labels = np.arange(C)
    return {
        "log_loss": metrics.log_loss(y, P, labels=labels),
        "brier": metrics.brier_score(y, P, labels=labels),
        "top_label_ece": metrics.top_label_ece(y, P, n_bins=ECE_BINS, labels=labels),
        "classwise_ece": metrics.classwise_ece(y, P, n_bins=ECE_BINS, labels=labels),
        "accuracy": float(np.mean(np.argmax(P, axis=1) == y)),
    }


def evaluate(estimator, S_fuse, y_fuse, S_test, y_test, C: int) -> dict:
    """Fit and score one contender; failures are recorded, not raised. ``detail`` holds what
    the fit chose (the estimator's ``describe()``, when it has one)."""
    row = timed_fit(
        estimator,
        S_fuse,
        y_fuse,
        S_test,
        _empty_row(),
        lambda P: score_probabilities(y_test, P, C),
        reset=_MEASURED,
    )
    if row["status"] == "ok" and hasattr(estimator, "describe"):
        try:
            row["detail"] = str(estimator.describe())[:200]
        except Exception:  # a description is optional
            pass
    return row


def run(
    config: RunConfig,
    contenders: Sequence[Contender],
    *,
    loader: Callable[[str], tuple[np.ndarray, np.ndarray]] = load_data,
    progress: bool = True,
    on_rows: Callable[[list[dict]], None] | None = None,
) -> RunResult:
    """Run every contender (and the raw members, and the truth where known) on every cell
    and seed of ``config``.

    ``loader(dataset) -> (X, y)`` is called at most once per data set, on cache misses of
    trained setups; ``on_rows`` receives the rows of each (cell, seed) as soon as they exist.
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
    every = {s.name: [*member_contenders(s.scorers), *contenders] for s in config.setups}
    for s in config.setups:
        for c in every[s.name]:
            labels.setdefault(c.key, c.label)
            families.setdefault(c.key, c.family)
    labels.setdefault("truth", "true posterior")
    families.setdefault("truth", "truth")
    plan = [
        (s, seed, config.cell_sizes(s)) for s in config.setups for seed in config.setup_seeds(s)
    ]
    bar = FitBar(sum(len(sizes) * len(every[s.name]) for s, _, sizes in plan), progress)
    rows, score_rows = run_cells(
        plan,
        lambda setup, seed: setup.scores(seed, config.cache_dir, load_once),
        _score_row,
        lambda setup, ss, n: _cell(setup, ss, n, every[setup.name], config, bar),
        bar,
        on_rows,
    )
    return RunResult(rows, score_rows, labels, families, notes, time.perf_counter() - start)


def _score_row(setup, ss: ScoreSet, hit: bool, seconds: float) -> dict:
    row = {
        "setup": setup.name,
        "group": setup.group,
        "dataset": setup.dataset,
        "seed": ss.seed,
        "M": setup.M,
        "C": int(ss.classes.shape[0]),
        "n_train": getattr(setup, "n_train", 0),
        "n_fuse": " / ".join(str(n) for n in setup.n_fuse),
        "n_test": int(ss.y_test.shape[0]),
        "dtype": str(ss.S_pool.dtype),
        "cached": hit,
        "seconds": seconds,
        "key": ss.key,
        "description": setup.describe(),
        "truth_accuracy": ss.info.get("truth_accuracy", math.nan),
        "truth_log_loss": ss.info.get("truth_log_loss", math.nan),
    }
    for m, name in enumerate(setup.scorers):
        row[f"member{m + 1}"] = name
        row[f"accuracy_{m + 1}"] = ss.info["scorer_accuracy"][m]
        row[f"log_loss_{m + 1}"] = ss.info["scorer_log_loss"][m]
    return row


def _truth_row(ss: ScoreSet, y_test: np.ndarray, C: int) -> dict:
    row = _empty_row()
    row.update(score_probabilities(y_test, ss.truth_test, C))
    return row


def _cell(setup, ss: ScoreSet, n: int, contenders, config: RunConfig, bar: FitBar) -> list[dict]:
    S_fuse, y_fuse = ss.fusion_sample(n)
    C = int(ss.classes.shape[0])
    y_fuse = np.searchsorted(ss.classes, y_fuse)
    y_test = np.searchsorted(ss.classes, ss.y_test)
    M = int(ss.S_pool.shape[1])
    base = {
        "setup": setup.name,
        "group": setup.group,
        "C": C,
        "M": M,
        "n_fuse": n,
        "seed": ss.seed,
        "n_test": int(y_test.shape[0]),
        "score_key": ss.key,
    }
    seed = fit_seed(setup.name, ss.seed, n)
    out = []
    for c in contenders:
        bar.status(f"{setup.name} seed {ss.seed} n={n}: {c.key}")
        reason = c.skip_reason(n, M, C)
        limit = config.max_n.get(c.key)
        if reason is None and limit is not None and n > limit:
            reason = f"not fitted above n_fuse = {limit:,}"
        if reason is not None:
            row = _empty_row("skipped", reason)
        else:
            row = seeded_fit(
                c.make,
                seed,
                lambda est: evaluate(est, S_fuse, y_fuse, ss.S_test, y_test, C),
                _empty_row,
            )
        out.append({**base, "method": c.key, "label": c.label, "family": c.family, **row})
        bar.step()
    if ss.truth_test is not None:
        row = _truth_row(ss, y_test, C)
        out.append({**base, "method": "truth", "label": "true posterior", "family": "truth", **row})
    return out
