"""Fit time of a fusion method against multinomial logistic regression (issue 13, item 3).

All fit the same synthetic scorer outputs: ``C`` classes, ``M = 3`` scorers that
miscalibrate a known multinomial posterior in three ways (too hot, too cold, biased toward
class 0; :func:`simulate_scores`). Digits has too few rows for ``n = 5,000`` and Covertype
has 7 classes, hence synthetic data. The references are ``LogisticRegression(max_iter=1000)``
on the stacked log-probabilities as they are, and on standardized ones (about ten times
faster: lbfgs needs far fewer iterations), so there are two ratios. The fits alternate,
``repeats`` times each, in one process; ratios of medians are what the target refers to
(absolute times depend on the machine and its load).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

import numpy as np
from scipy.special import softmax

from .contenders import StackedLogLR

__all__ = ["REFERENCES", "simulate_scores", "time_ratio", "measure", "speed_lines"]

#: The logistic regressions every method is timed against: key -> (label, factory).
REFERENCES: dict[str, tuple[str, Callable[[], object]]] = {
    "lr_raw": ("LR, unscaled", lambda: StackedLogLR(scale=False)),
    "lr_scaled": ("LR, standardized", StackedLogLR),
}


def simulate_scores(n: int, C: int = 10, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(S, y)``: ``S`` of shape (n, 3, C), three miscalibrated versions of a known
    posterior ``softmax(1.5 z)`` with ``z`` standard normal; ``y`` drawn from the posterior.
    Scorer 1 is too hot (logits x 2), scorer 2 too cold (x 0.5), scorer 3 biased (+1 on
    class 0's logit)."""
    rng = np.random.default_rng(seed)
    logits = 1.5 * rng.normal(size=(n, C))
    truth = softmax(logits, axis=1)
    y = (rng.random(n)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1)
    y = np.minimum(y, C - 1)  # rounding of the cumulative sum
    bias = np.zeros(C)
    bias[0] = 1.0
    S = np.stack(
        [
            softmax(2.0 * logits, axis=1),
            softmax(0.5 * logits, axis=1),
            softmax(logits + bias, axis=1),
        ],
        axis=1,
    )
    return S, y


def time_ratio(make: Callable[[], object], S: np.ndarray, y: np.ndarray, repeats: int) -> dict:
    """Median fit seconds of ``make()`` and of each of :data:`REFERENCES` on ``(S, y)``, all
    alternating ``repeats`` times; and the ratios ``ratio_<key>``."""
    times: dict[str, list[float]] = {"method": [], **{k: [] for k in REFERENCES}}
    factories = {**{k: f for k, (_, f) in REFERENCES.items()}, "method": make}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            for key, factory in factories.items():
                t0 = time.perf_counter()
                factory().fit(S, y)
                times[key].append(time.perf_counter() - t0)
    out = {"repeats": repeats, "seconds": float(np.median(times["method"]))}
    for key in REFERENCES:
        out[f"{key}_seconds"] = float(np.median(times[key]))
        out[f"ratio_{key}"] = out["seconds"] / out[f"{key}_seconds"]
    out["all_seconds"] = times
    return out


def measure(contenders, n: int, C: int, repeats: int) -> list[dict]:
    """:func:`time_ratio` of each contender on :func:`simulate_scores` ``(n, C)``."""
    S, y = simulate_scores(n, C)
    out = []
    for c in contenders:
        r = time_ratio(c.make, S, y, repeats)
        r.update(method=c.key, label=c.label, n=n, C=C, M=S.shape[1])
        out.append(r)
    return out


def speed_lines(rows: list[dict], target: float = 30.0, quick: bool = False) -> list[str]:
    """The Markdown section of :func:`measure`'s rows (all of one ``n`` and ``C``)."""
    if not rows:
        return []
    n, C, M, repeats = (rows[0][k] for k in ("n", "C", "M", "repeats"))
    table = []
    for r in rows:
        cells = [f"{r['seconds']:.3g}"]
        for key in REFERENCES:
            mark = "" if r[f"ratio_{key}"] <= target else " (above target)"
            cells += [f"{r[f'{key}_seconds']:.3g}", f"{r[f'ratio_{key}']:.1f}{mark}"]
        table.append(f"| {r['label']} | " + " | ".join(cells) + " |")
    header = ["method", "fit s"]
    for label, _ in REFERENCES.values():
        header += [f"{label} s", f"ratio to {label}"]
    lines = [
        f"### Fit time: {C} classes x {M} scorers x {n:,} rows (issue 13 item 3)",
        "",
        f"Synthetic scorer outputs (three miscalibrations of a known {C}-class posterior; "
        f"`fusion.bench.multiclass.speed.simulate_scores`). Median of {repeats} alternating "
        "fits each, one process; LR = `LogisticRegression(max_iter=1000)` on the stacked "
        f"log-probabilities (clipped to [1e-6, 1]), unscaled or standardized. Target: "
        f"ratio <= {target:g}.",
        "",
        "| " + " | ".join(header) + " |",
        "| --- |" + " ---: |" * (len(header) - 1),
        *table,
    ]
    if quick:
        lines += ["", f"(--quick: {n:,} rows, not the issue's 5,000.)"]
    return lines
