"""Fit time of a fusion method against multinomial logistic regression (issue 13, item 3).

Both fit the same synthetic scorer outputs: ``C`` classes, ``M = 3`` scorers that
miscalibrate a known multinomial posterior in three ways (too hot, too cold, biased toward
class 0; :func:`simulate_scores`). Digits has too few rows for ``n = 5,000`` and Covertype
has 7 classes, hence synthetic data. The two fits alternate, ``repeats`` times each, in one
process; the ratio of the medians is what the target refers to (absolute times depend on the
machine and its load).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

import numpy as np
from scipy.special import softmax

from .contenders import StackedLogLR

__all__ = ["simulate_scores", "time_ratio", "speed_section"]


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
    """Median fit seconds of ``make()`` and of :class:`StackedLogLR` on ``(S, y)``, the two
    alternating ``repeats`` times; and their ratio."""
    ours, lr = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            t0 = time.perf_counter()
            StackedLogLR().fit(S, y)
            lr.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            make().fit(S, y)
            ours.append(time.perf_counter() - t0)
    ours_s, lr_s = float(np.median(ours)), float(np.median(lr))
    return {
        "seconds": ours_s,
        "lr_seconds": lr_s,
        "ratio": ours_s / lr_s,
        "repeats": repeats,
        "all_seconds": ours,
        "all_lr_seconds": lr,
    }


def speed_section(
    contenders, n: int, C: int, repeats: int, target: float = 30.0, quick: bool = False
) -> tuple[list[str], list[dict]]:
    """Time each contender against LR; Markdown lines and one dict per contender."""
    S, y = simulate_scores(n, C)
    rows, out = [], []
    for c in contenders:
        r = time_ratio(c.make, S, y, repeats)
        r.update(method=c.key, label=c.label, n=n, C=C, M=S.shape[1])
        out.append(r)
        verdict = "within" if r["ratio"] <= target else "above"
        rows.append(
            f"| {c.label} | {r['seconds']:.3g} | {r['lr_seconds']:.3g} | "
            f"{r['ratio']:.1f} | {verdict} {target:g}x |"
        )
    lines = [
        f"### Fit time: {C} classes x {S.shape[1]} scorers x {n:,} rows (issue 13 item 3)",
        "",
        f"Synthetic scorer outputs (three miscalibrations of a known {C}-class posterior; "
        f"`fusion.bench.multiclass.speed.simulate_scores`). Median of {repeats} alternating "
        "fits each, one process, one BLAS thread; LR = `LogisticRegression(max_iter=1000)` "
        "on the stacked log-probabilities (clipped to [1e-6, 1]).",
        "",
        "| method | fit s | LR fit s | ratio | target |",
        "| --- | ---: | ---: | ---: | --- |",
        *rows,
    ]
    if quick:
        lines += ["", f"(--quick: {n:,} rows, not the issue's 5,000.)"]
    return lines, out
