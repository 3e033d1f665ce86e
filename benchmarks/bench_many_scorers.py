"""Many scorers: BernsteinFusion structure="tensor" vs "additive" vs "pairwise" for M = 3..10.

Rows ``rank-only`` are the least-squares model (``base=None``) at a fixed degree; rows
``default`` the default semi-parametric model with that structure and degree (``lam`` by
cross-validation), and ``default auto`` the default model with all defaults.

Data: M scorers sharing a latent factor (correlation about 0.3), labels from the monotone,
non-additive truth ``p = 0.05 + 0.9 * prod_m Phi(z_m + 0.8) ** (2 / M)``. Fit on ``--n`` rows,
report the Brier score and the L2 distance to the truth on 20 000 fresh rows, the fit time
(median over ``--repeats``) and the number of coefficients. The tensor is fitted only while
it has at most ``--max-tensor`` coefficients (default 1024: M = 3, 4, 5 at degree 3).

    python benchmarks/bench_many_scorers.py [--n 20000] [--max-m 10] [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from scipy.special import ndtr

from fusion import BernsteinFusion
from fusion.metrics import brier_score


def simulate(n: int, M: int, seed: int):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, M)) * np.sqrt(0.7) + rng.normal(size=(n, 1)) * np.sqrt(0.3)
    p = 0.05 + 0.9 * np.prod(ndtr(z + 0.8) ** (2.0 / M), axis=1)
    return z, (rng.random(n) < p).astype(int), p


CONFIGS = [
    ("rank-only", "tensor", 3),
    ("rank-only", "additive", 3),
    ("rank-only", "additive", 6),
    ("rank-only", "pairwise", 2),
    ("rank-only", "pairwise", 3),
    ("default", "tensor", 3),
    ("default", "additive", 8),
    ("default", "pairwise", 3),
    ("default auto", "auto", "auto"),
]


def _structure(components) -> str:
    if len(components) == 1:
        return "tensor"
    return "additive" if all(len(c) == 1 for c in components) else "pairwise"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--min-m", type=int, default=3)
    ap.add_argument("--max-m", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--max-tensor", type=int, default=1024, help="largest tensor fitted")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}", flush=True)
    rows = []
    for M in range(args.min_m, args.max_m + 1):
        S, y, _ = simulate(args.n, M, seed=M)
        S_test, y_test, p_test = simulate(20_000, M, seed=100 + M)
        for model_name, structure, K in CONFIGS:
            base = None if model_name == "rank-only" else "auto"
            model = BernsteinFusion(base=base, degree=K, structure=structure, max_coefficients=4096)
            P = (K + 1) ** M if structure == "tensor" else None
            if P is not None and P > args.max_tensor:
                continue
            times = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                model.fit(S, y)
                times.append(time.perf_counter() - t)
            p = model.predict_proba(S_test)[:, 1]
            rows.append(
                (
                    M,
                    model_name,
                    _structure(model.components_),
                    model.degree_[0],
                    model.coef_.size,
                    statistics.median(times),
                    brier_score(y_test, p),
                    float(np.sqrt(np.mean((p - p_test) ** 2))),
                )
            )
            print(f"  M={M} {model_name} {structure} K={K}: {rows[-1][4:]}", flush=True)
    print(f"load average at end: {os.getloadavg()}\n")
    print("| M | model | structure | K | coefficients | fit s | Brier | L2 to truth |")
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    for M, name, structure, K, P, t, brier, l2 in rows:
        print(f"| {M} | {name} | {structure} | {K} | {P} | {t:.2f} | {brier:.4f} | {l2:.4f} |")


if __name__ == "__main__":
    main()
