"""The loop of the real-network benchmark: per case and seed, every contender fitted on the
fusion rows and scored on the test rows.

NumPy's global random state is seeded from (case, seed) before each fit, identically for
every contender (:func:`harness.loop.fit_seed`); a failing contender becomes a row with
status ``"error"`` and the run goes on.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from harness.loop import FitBar, fit_seed, run_cells, seeded_fit, timed_fit

from fusion import metrics

from .contenders import Contender
from .data import Case, Split, load_split

__all__ = [
    "ECE_BINS",
    "METRICS",
    "METRIC_NAMES",
    "RunResult",
    "score_probabilities",
    "run",
]

#: Bins of the binned ECEs (equal width, and equal mass for ``top_label_ece_mass``).
ECE_BINS = 15

#: Metric columns of a fit row, lower is better (accuracy is reported apart).
METRICS: tuple[str, ...] = (
    "log_loss",
    "brier",
    "top_label_ece",
    "top_label_ece_mass",
    "top_label_smece",
    "classwise_ece",
)

#: Their names in the report.
METRIC_NAMES = {
    "log_loss": "log-loss",
    "brier": "Brier",
    "accuracy": "accuracy",
    "top_label_ece": "top-label ECE",
    "top_label_ece_mass": "top-label ECE (equal mass)",
    "top_label_smece": "top-label smooth ECE",
    "classwise_ece": "classwise ECE",
}

_MEASURED = (*METRICS, "accuracy", "fit_seconds", "predict_seconds")


@dataclass
class RunResult:
    """Fit rows (one per case, seed and contender), one row per (case, seed) describing its
    rows, the contenders' labels and families, notes and the wall-clock seconds."""

    rows: list[dict]
    splits: list[dict]
    labels: dict[str, str]
    families: dict[str, str]
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0


def _empty_row(status: str = "ok", error: str = "") -> dict:
    row = dict.fromkeys(_MEASURED, math.nan)
    row.update(status=status, error=error, warnings=0, warning="", detail="")
    return row


def score_probabilities(y: np.ndarray, P: np.ndarray, C: int) -> dict:
    """The test metrics of class probabilities ``P`` (n, C) for class indices ``y``.

    Raises
    ------
    ValueError
        When ``P`` is not of shape (n, C).
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[1] != C:
        raise ValueError(f"predict_proba gave shape {P.shape}; expected (n, {C}).")
    labels = np.arange(C)
    return {
        "log_loss": metrics.log_loss(y, P, labels=labels),
        "brier": metrics.brier_score(y, P, labels=labels),
        "top_label_ece": metrics.top_label_ece(y, P, n_bins=ECE_BINS, labels=labels),
        "top_label_ece_mass": metrics.top_label_ece(
            y, P, n_bins=ECE_BINS, strategy="quantile", labels=labels
        ),
        "top_label_smece": metrics.top_label_smooth_ece(y, P, labels=labels),
        "classwise_ece": metrics.classwise_ece(y, P, n_bins=ECE_BINS, labels=labels),
        "accuracy": float(np.mean(np.argmax(P, axis=1) == y)),
    }


def _evaluate(estimator, split: Split) -> dict:
    row = timed_fit(
        estimator,
        split.S_fuse,
        split.y_fuse,
        split.S_test,
        _empty_row(),
        lambda P: score_probabilities(split.y_test, P, split.C),
        reset=_MEASURED,
    )
    if row["status"] == "ok" and hasattr(estimator, "describe"):
        try:
            row["detail"] = str(estimator.describe())[:200]
        except Exception:  # a description is optional
            pass
    return row


def _split_row(case: Case, split: Split, hit: bool, seconds: float) -> dict:
    row = {
        "case": case.name,
        "dataset": case.dataset,
        "seed": split.seed,
        "split": case.split,
        "M": case.M,
        "C": split.C,
        "n_fuse": int(split.y_fuse.shape[0]),
        "n_test": int(split.y_test.shape[0]),
        "scores": case.scores,
        "dtype": str(split.S_fuse.dtype),
        "seconds": seconds,
    }
    for m, name in enumerate(case.members):
        row[f"member{m + 1}"] = name
    return row


def _cell(case: Case, split: Split, contenders: Sequence[Contender], bar: FitBar) -> list[dict]:
    base = {
        "case": case.name,
        "dataset": case.dataset,
        "split": case.split,
        "M": case.M,
        "C": split.C,
        "seed": split.seed,
        "n_fuse": int(split.y_fuse.shape[0]),
        "n_test": int(split.y_test.shape[0]),
    }
    seed = fit_seed(case.name, split.seed, base["n_fuse"])
    out = []
    for c in contenders:
        bar.status(f"{case.name} seed {split.seed}: {c.key}")
        reason = c.skip_reason(case.M)
        if reason is not None:
            row = _empty_row("skipped", reason)
        else:
            row = seeded_fit(c.make, seed, lambda est: _evaluate(est, split), _empty_row)
        out.append({**base, "method": c.key, "label": c.label, "family": c.family, **row})
        bar.step()
    return out


def run(
    cases: Sequence[Case],
    seeds: Sequence[int],
    contenders: Sequence[Contender],
    folder: Path,
    *,
    progress: bool = True,
    on_rows: Callable[[list[dict]], None] | None = None,
    loader: Callable[[Case, int, Path], Split] = load_split,
) -> RunResult:
    """Fit every contender on every case: once on a given split, once per seed of ``seeds``
    on a random one.

    ``loader(case, seed, folder) -> Split`` reads the rows (tests pass their own);
    ``on_rows`` receives each (case, seed)'s rows as soon as they exist.
    """
    start = time.perf_counter()
    plan = [
        (case, seed, [0])
        for case in cases
        for seed in ((0,) if case.split == "given" else tuple(seeds))
    ]
    bar = FitBar(len(plan) * len(contenders), progress)
    rows, splits = run_cells(
        plan,
        lambda case, seed: (loader(case, seed, folder), False),
        _split_row,
        lambda case, split, _n: _cell(case, split, contenders, bar),
        bar,
        on_rows,
    )
    return RunResult(
        rows,
        splits,
        {c.key: c.label for c in contenders},
        {c.key: c.family for c in contenders},
        elapsed=time.perf_counter() - start,
    )
