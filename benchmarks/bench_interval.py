"""Coverage of ``BernsteinFusion.predict_interval`` against a known truth (issue 16.2).

Usage::

    python benchmarks/bench_interval.py [--seeds 5] [--n 500 2000 8000] [--n-bootstrap 200]

For each fusion-sample size ``n`` and seed: two correlated logit-scale scores, labels drawn
from a monotone, non-logistic truth ``p(s)``; the default model and the rank-only model
(``base=None``) are fitted with ``n_bootstrap`` refits, and on 20,000 fresh test points the
share of points whose true probability lies inside the 90 % interval (``alpha=0.1``) is
measured, with the mean interval width and the fit time (bootstrap included) against the
fit without it. Prints a Markdown table (mean and range over seeds).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import table
from scipy.stats import norm

from fusion import BernsteinFusion


def truth(S: np.ndarray) -> np.ndarray:
    return 0.05 + 0.9 * norm.cdf(S[:, 0]) * norm.cdf(S[:, 1] - 0.3)


def simulate(n: int, seed: int):
    rng = np.random.default_rng(seed)
    S = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]], size=n)
    p = truth(S)
    return S, (rng.random(n) < p).astype(int), p


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n", type=int, nargs="+", default=[500, 2000, 8000])
    parser.add_argument("--n-bootstrap", type=int, default=200)
    parser.add_argument("--alpha", type=float, default=0.1)
    args = parser.parse_args()
    S_test, _, p_test = simulate(20_000, seed=10_000)
    rows = []
    for label, params in (("default", {}), ("rank-only (base=None)", {"base": None})):
        for n in args.n:
            cover, width, slow = [], [], []
            for seed in range(args.seeds):
                S, y, _ = simulate(n, seed)
                start = time.perf_counter()
                BernsteinFusion(**params).fit(S, y)
                plain = time.perf_counter() - start
                start = time.perf_counter()
                model = BernsteinFusion(n_bootstrap=args.n_bootstrap, **params).fit(S, y)
                slow.append((time.perf_counter() - start) / plain)
                lo, hi = model.predict_interval(S_test, alpha=args.alpha)
                cover.append(np.mean((p_test >= lo) & (p_test <= hi)))
                width.append(np.mean(hi - lo))
            rows.append(
                [
                    label,
                    f"{n:,}",
                    f"{np.mean(cover):.3f} ({min(cover):.3f}-{max(cover):.3f})",
                    f"{np.mean(width):.3f}",
                    f"{np.median(slow):.1f}x",
                ]
            )
            print(rows[-1], flush=True)
    nominal = f"{1 - args.alpha:.0%}"
    print(
        f"\nCoverage of the true probability by the {nominal} interval, {args.seeds} seeds, "
        f"n_bootstrap={args.n_bootstrap}, 20,000 test points\n"
    )
    print(
        table(
            ["model", "n", "coverage: mean (range)", "mean width", "fit time with / without"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
