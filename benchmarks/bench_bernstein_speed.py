"""Speed and size of BernsteinFusion's default model, as ratios against scikit-learn.

Usage::

    python benchmarks/bench_bernstein_speed.py [--repeats 5] [--max-n 1000000] [--skip-large]

Every ratio is measured in this process on the same data, with the two fits interleaved
(median over ``--repeats`` of each); run with ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``
for single-threaded BLAS on both sides. Data: ``M`` scorers' probabilities (logits of a
shared latent score plus scorer noise, some overconfident) with labels from a monotone,
non-logistic truth.

1. Default fit (``BernsteinFusion()``) against ``LogisticRegressionCV()`` at M = 3,
   n = 2,000 (target: at most 20x) and M = 6, n = 10,000 (target: at most 30x).
2. ``BernsteinFusion(degree=5)`` (default model, ``lam`` by cross-validation) against
   ``LogisticRegression()`` on the same raw scores, and against the exact ECDF +
   LogisticRegression pipeline, for n = 1e4 .. ``--max-n`` (M = 2): ratio and ns per row.
3. A default model fitted on ``--max-n`` rows (ECDF summarized automatically): saved size,
   ``predict_proba`` time of all rows against ``10 M`` calls of
   ``IsotonicRegression.predict`` on the same rows (target: at most 1x), and the largest
   difference of its probabilities to the same model with the exact ECDF (target 1e-3).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings

import numpy as np
from _common import table
from scipy.special import expit


def simulate(n: int, M: int, seed: int = 0):
    """Probabilities of M scorers and labels from a monotone, non-logistic truth."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    noise = rng.normal(size=(n, M))
    sharp = np.linspace(1.0, 2.5, M)  # later scorers overconfident
    logits = sharp * (latent[:, None] + 0.7 * noise)
    truth = 0.03 + 0.94 * expit(1.5 * latent + 0.4 * np.tanh(noise[:, 0]))
    y = (rng.random(n) < truth).astype(int)
    return expit(logits), y


def interleaved(fns: list, repeats: int) -> list[float]:
    """Median seconds of each function, the calls interleaved round by round."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t)
    return [float(np.median(t)) for t in times]


def bench_vs_lrcv(args) -> str:
    from sklearn.linear_model import LogisticRegressionCV

    from fusion import BernsteinFusion

    rows = []
    for M, n, target in ((3, 2_000, 20), (6, 10_000, 30)):
        S, y = simulate(n, M, seed=M)
        ours = BernsteinFusion()
        ref = LogisticRegressionCV()
        t_ours, t_ref = interleaved(
            [lambda o=ours, S=S, y=y: o.fit(S, y), lambda r=ref, S=S, y=y: r.fit(S, y)],
            args.repeats,
        )
        rows.append(
            [
                str(M),
                f"{n:,}",
                f"{t_ours:.2f}",
                f"{t_ref:.3f}",
                f"{t_ours / t_ref:.1f}x",
                f"{target}x",
                f"{ours.degree_[0]}, {ours.components_ and len(ours.components_)} comp.",
                f"{ours.lam_:g}",
            ]
        )
    return table(
        [
            "M",
            "n",
            "BernsteinFusion() s",
            "LogisticRegressionCV() s",
            "ratio",
            "target",
            "degree, components",
            "lam_",
        ],
        rows,
    )


def bench_large_n(args) -> str:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from fusion import BernsteinFusion, ECDFNormalizer

    rows = []
    sizes = [n for n in (10_000, 100_000, 1_000_000, 10_000_000) if n <= args.max_n]
    for n in sizes:
        S, y = simulate(n, 2, seed=1)
        reps = args.repeats if n <= 100_000 else max(3, args.repeats // 2)
        ours = BernsteinFusion(degree=5)
        lr = LogisticRegression()
        pipe = make_pipeline(ECDFNormalizer(), LogisticRegression())
        t_ours, t_lr, t_pipe = interleaved(
            [lambda e=e, S=S, y=y: e.fit(S, y) for e in (ours, lr, pipe)], reps
        )
        rows.append(
            [
                f"{n:,}",
                f"{t_ours:.3f}",
                f"{t_lr:.3f}",
                f"{t_ours / t_lr:.2f}",
                f"{t_pipe:.3f}",
                f"{t_ours / t_pipe:.2f}",
                f"{t_ours / n * 1e9:.0f}",
                str(ours.n_cells_ or "rows"),
                f"{ours.lam_:g}",
            ]
        )
    return table(
        [
            "n",
            "BernsteinFusion(degree=5) s",
            "LogisticRegression s",
            "ratio",
            "ECDF + LogisticRegression s",
            "ratio",
            "ns per row",
            "cells",
            "lam_",
        ],
        rows,
    )


def bench_predict(args) -> str:
    from sklearn.isotonic import IsotonicRegression

    from fusion import BernsteinFusion

    n = args.max_n
    M = 2
    S, y = simulate(n, M, seed=2)
    model = BernsteinFusion().fit(S, y)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.zip")
        model.save(path)
        size = os.path.getsize(path)
    iso = IsotonicRegression(out_of_bounds="clip").fit(S[:, 0], y)
    t_ours, t_iso = interleaved(
        [lambda: model.predict_proba(S), lambda: iso.predict(S[:, 0])], args.repeats
    )
    exact = BernsteinFusion(ecdf_knots=None, lam=model.lam_).fit(S, y)
    diff = np.max(np.abs(exact.predict_proba(S)[:, 1] - model.predict_proba(S)[:, 1]))
    rows = [
        [
            f"{n:,}",
            str(model.ecdf_knots_),
            f"{size / 1e6:.2f}",
            f"{t_ours:.3f}",
            f"{t_iso:.4f}",
            f"{t_ours / (10 * M * t_iso):.2f}",
            f"{diff:.1e}",
            f"{model.ecdf_error_bound_:.1e}",
        ]
    ]
    return table(
        [
            "n",
            "ecdf_knots_",
            "saved MB",
            "predict_proba s",
            "IsotonicRegression.predict s",
            f"ours / ({10 * M} isotonic predicts)",
            "max abs(p - p(exact ECDF))",
            "ecdf_error_bound_",
        ],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-n", type=int, default=1_000_000)
    parser.add_argument("--skip-large", action="store_true", help="only section 1")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"load average at start: {os.getloadavg()}\n", flush=True)
    print("### Default fit against LogisticRegressionCV()\n")
    print(bench_vs_lrcv(args), flush=True)
    if not args.skip_large:
        print("\n### BernsteinFusion(degree=5) against LogisticRegression, M = 2\n")
        print(bench_large_n(args), flush=True)
        print(f"\n### Default model fitted on {args.max_n:,} rows: size and prediction\n")
        print(bench_predict(args), flush=True)
    print(f"\nload average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
