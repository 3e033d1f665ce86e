"""Fit time of the rank-only BernsteinFusion (``base=None``, the paper's least-squares QP)
against the same QP in cvxpy and LogisticRegression.

The default (semi-parametric logistic) model is timed by ``bench_bernstein_speed.py``.

Usage::

    python benchmarks/bench_bernstein.py [--repeats 5] [--max-n 1000000] [--cvxpy-max-n 100000]

Prints Markdown tables: medians over ``--repeats`` runs of each configuration, measured in
this process, with ratios against the reference runs made on the same data.
"""

from __future__ import annotations

import argparse
import warnings

import cvxpy as cp
import numpy as np
from _common import median_time, table
from sklearn.linear_model import LogisticRegression

from fusion import BernsteinFusion
from fusion.bernstein.basis import tensor_design


def simulate(n: int, M: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, M)) + 0.5 * rng.normal(size=(n, 1))
    logit = z.sum(1) / np.sqrt(M) + 0.3 * np.prod(np.tanh(z), axis=1)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return z, y


def cvxpy_fit(U: np.ndarray, y: np.ndarray, degrees: tuple[int, ...]) -> np.ndarray:
    """The paper's formulation: the QP stated on the n x P design (as with CVX)."""
    shape = [k + 1 for k in degrees]
    Phi = tensor_design(U, degrees)
    beta = cp.Variable(int(np.prod(shape)))
    idx = np.arange(beta.size).reshape(shape)
    cons = [beta >= 0, beta <= 1]
    for axis, size in enumerate(shape):
        lo = np.take(idx, np.arange(size - 1), axis=axis).ravel()
        hi = np.take(idx, np.arange(1, size), axis=axis).ravel()
        cons.append(beta[hi] >= beta[lo])
    prob = cp.Problem(cp.Minimize(cp.sum_squares(Phi @ beta - y)), cons)
    prob.solve(solver=cp.CLARABEL)
    return beta.value


def bench_n(args) -> str:
    rows = []
    n_values = [n for n in (1_000, 10_000, 100_000, 1_000_000) if n <= args.max_n]
    for n in n_values:
        S, y = simulate(n, 2)
        reps = args.repeats if n <= 100_000 else max(3, args.repeats // 2)
        t_fus = median_time(lambda S=S, y=y: BernsteinFusion(base=None, degree=5).fit(S, y), reps)
        model = BernsteinFusion(base=None, degree=5).fit(S, y)
        U = model.ecdf_.transform(S)
        t_lr = median_time(lambda U=U, y=y: LogisticRegression().fit(U, y), reps)
        t_pred = median_time(lambda S=S, m=model: m.predict_proba(S), reps)
        if n <= args.cvxpy_max_n:
            t_cvx = median_time(lambda U=U, y=y: cvxpy_fit(U, y.astype(float), (5, 5)), 3)
            cvx = f"{t_cvx:.3f}"
            ratio = f"{t_cvx / t_fus:.0f}x"
        else:
            cvx, ratio = "-", "-"
        rows.append(
            [
                f"{n:,}",
                f"{t_fus * 1e3:.1f}",
                f"{t_pred * 1e3:.1f}",
                cvx,
                ratio,
                f"{t_lr * 1e3:.1f}",
                f"{t_fus / t_lr:.2f}",
                f"{t_fus / n * 1e9:.0f}",
            ]
        )
    return table(
        [
            "n",
            "fit ms (OSQP, normal eq.)",
            "predict ms",
            "cvxpy s (n x P design)",
            "cvxpy / ours",
            "LogReg fit ms",
            "ours / LogReg",
            "ns per row",
        ],
        rows,
    )


def bench_shape(args) -> str:
    rows = []
    n = 10_000
    for M in (2, 3, 4):
        S, y = simulate(n, M)
        for K in (3, 5, 8):
            P = (K + 1) ** M
            if P > 4096:
                continue
            t = median_time(lambda S=S, y=y, K=K: BernsteinFusion(base=None, degree=K).fit(S, y), 3)
            rows.append([str(M), str(K), str(P), f"{t * 1e3:.1f}"])
    return table(["M", "K", "coefficients", f"fit ms (n = {n:,})"], rows)


def bench_small(args) -> str:
    S, y = simulate(500, 2)
    rows = []
    t_fixed = median_time(lambda: BernsteinFusion(base=None, degree=5).fit(S, y), 5 * args.repeats)
    t_cv = median_time(lambda: BernsteinFusion(base=None, random_state=0).fit(S, y), args.repeats)
    model = BernsteinFusion(base=None, degree=5).fit(S, y)
    U = model.ecdf_.transform(S)
    t_cvx = median_time(lambda: cvxpy_fit(U, y.astype(float), (5, 5)), args.repeats)
    rows.append(["fixed K = 5", f"{t_fixed * 1e3:.1f}", "5", f"{t_cvx * 1e3:.0f}", "500 (CVX)"])
    rows.append(["degree='cv' (1..10, 5 folds)", f"{t_cv * 1e3:.1f}", "100", "-", "-"])
    return table(
        ["n = 500, M = 2", "ours ms", "target ms", "same QP in cvxpy ms", "paper ms"], rows
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-n", type=int, default=1_000_000)
    parser.add_argument("--cvxpy-max-n", type=int, default=100_000)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print("### Small samples (the paper's setting)\n")
    print(bench_small(args))
    print("\n### Fit time against n (M = 2, K = 5)\n")
    print(bench_n(args))
    print("\n### Fit time against M and K\n")
    print(bench_shape(args))


if __name__ == "__main__":
    main()
