"""The loop of the multi-class benchmark: scores (cached), then every contender on every cell.

A cell is (setup, fusion sample size); per seed every contender is fitted on the same
fusion rows and scored on the same test rows. NumPy's global random state is seeded from
(setup, seed, size) before each fit, identically for every contender.
"""

from __future__ import annotations

import math
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ... import metrics
from .._record import record_warnings
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


def _empty_row(status: str = "ok", error: str = "") -> dict:
    row = dict.fromkeys((*METRICS, "accuracy", "fit_seconds", "predict_seconds"), math.nan)
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
    row = _empty_row()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            t0 = time.perf_counter()
            estimator.fit(S_fuse, y_fuse)
            row["fit_seconds"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            P = estimator.predict_proba(S_test)
            row["predict_seconds"] = time.perf_counter() - t0
            row.update(score_probabilities(y_test, P, classes))
        except Exception as err:  # a failing method is reported, the benchmark goes on
            row.update(_empty_row("error", f"{type(err).__name__}: {err}"[:300]))
    return record_warnings(row, caught)


def _fit_seed(setup: str, seed: int, n: int) -> int:
    return zlib.crc32(f"{setup}|{seed}|{n}".encode()) & 0x7FFFFFFF


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
    data: dict[str, tuple] = {}

    def load_once(name):
        if name not in data:
            data[name] = loader(name)
        return data[name]

    labels = {c.key: c.label for c in contenders}
    families = {c.key: c.family for c in contenders}
    notes = [
        f"`{key}` is not fitted on fusion samples above {limit:,} rows (cells marked skipped)."
        for key, limit in config.max_n.items()
        if key in labels
    ]
    total = sum(
        len(config.cell_sizes(s)) * len(config.setup_seeds(s)) * (len(contenders) + s.M)
        for s in config.setups
    )
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="fit", dynamic_ncols=True, smoothing=0.05)
    rows: list[dict] = []
    score_rows: list[dict] = []
    try:
        for setup in config.setups:
            every = [*scorer_contenders(setup.scorers), *contenders]
            for c in every:
                labels.setdefault(c.key, c.label)
                families.setdefault(c.key, c.family)
            for seed in config.setup_seeds(setup):
                if bar is not None:
                    bar.set_postfix_str(f"{setup.name} seed {seed}: scorers")
                t0 = time.perf_counter()
                ss, hit = cached_scores(setup, seed, config.cache_dir, load_once)
                score_rows.append(_score_row(setup, ss, hit, time.perf_counter() - t0))
                for n in config.cell_sizes(setup):
                    new = _cell(setup, ss, n, every, config, bar)
                    rows += new
                    if on_rows is not None:
                        on_rows(new)
    finally:
        if bar is not None:
            bar.close()
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


def _cell(setup: Setup, ss: ScoreSet, n: int, contenders, config, bar) -> list[dict]:
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
    out = []
    for c in contenders:
        if bar is not None:
            bar.set_postfix_str(f"{setup.name} seed {ss.seed} n={n}: {c.key}")
        limit = config.max_n.get(c.key)
        if limit is not None and n > limit:
            row = _empty_row("skipped", f"not fitted above n_fuse = {limit:,}")
        else:
            # The legacy global state on purpose: what unseeded library code draws from.
            np.random.seed(_fit_seed(setup.name, ss.seed, n))  # noqa: NPY002
            try:
                estimator = c.make()
            except Exception as err:  # reported like any failure
                row = _empty_row("error", f"{type(err).__name__}: {err}"[:300])
            else:
                row = evaluate(estimator, S_fuse, y_fuse, ss.S_test, ss.y_test, ss.classes)
        out.append({**base, "method": c.key, "label": c.label, "family": c.family, **row})
        if bar is not None:
            bar.update(1)
    return out
