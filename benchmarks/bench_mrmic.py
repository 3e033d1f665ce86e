"""Fit and predict time of MRMICFusion, against the same QP in cvxpy.

Usage::

    python benchmarks/bench_mrmic.py [--repeats 5] [--budget 10] [--tables paper,largest]

Prints Markdown tables: medians over ``--repeats`` runs measured in this process, with
ratios against the reference (the same QP stated in cvxpy and solved by Clarabel, as the
paper did with CVX) on the same data. The last table searches the largest ``n`` whose single
fit takes at most ``--budget`` seconds, for the dense and the k-NN graph.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import cvxpy as cp
import numpy as np
from _common import median_time, table

from fusion import MRMICFusion
from fusion.ecdf import ECDFNormalizer
from fusion.mrmic.graph import dominance_edges, laplacian, merge_points, similarity_matrix
from fusion.mrmic.qp import MRMICQP

#: Relative strength c of the fixed-lam runs: lam = c * 2 * mean(W) / mean(degree) (the
#: middle of the default cross-validation grid).
C_FIXED = 0.1


def simulate(n: int, M: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    S = z[:, None] + rng.normal(size=(n, M))
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * z))).astype(int)
    return S, y


def normalized(S) -> np.ndarray:
    return ECDFNormalizer().fit(S).transform(S)


def relative_lam(S, y, graph: str = "dense") -> float:
    """``lam = C_FIXED * 2 * mean(W) / mean(degree)`` on the merged training points."""
    points, _, weight = merge_points(normalized(S), y.astype(float), np.ones(len(y)))
    degree = np.asarray(similarity_matrix(points, graph).sum(axis=1)).ravel()
    return float(C_FIXED * 2 * weight.mean() / degree.mean())


def cvxpy_fit(qp: MRMICQP, lam: float) -> np.ndarray:
    """The same QP on the merged points, as the paper states it for CVX."""
    p = cp.Variable(qp.points.shape[0])
    obj = cp.sum(cp.multiply(qp.weight, cp.square(qp.target - p))) + 0.5 * lam * cp.quad_form(
        p, cp.psd_wrap(qp.L.toarray())
    )
    cons = [p[qp.hi] >= p[qp.lo], p >= 0, p <= 1]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    return p.value


def build_qp(S, y, graph="dense", n_neighbors=10) -> MRMICQP:
    points, target, weight = merge_points(normalized(S), y.astype(float), np.ones(len(y)))
    hi, lo = dominance_edges(points)
    L = laplacian(similarity_matrix(points, graph, n_neighbors))
    return MRMICQP(points, target, weight, hi, lo, L)


def bench_paper(args) -> str:
    rows = []
    paper = {500: 1.335, 1000: 7.964}
    target = {500: 0.2, 1000: 0.6}
    for n in (500, 1000):
        S, y = simulate(n)
        lam_rel = relative_lam(S, y)
        configs = [
            ("dense, lam = 1e-5 (paper's Fig. 1)", dict(lam=1e-5)),
            (f"dense, lam = {lam_rel:.2g} (c = {C_FIXED})", dict(lam=lam_rel)),
            ("knn (k = 10), same lam", dict(lam=lam_rel, graph="knn")),
        ]
        qp = build_qp(S, y)
        t_cvx = median_time(lambda qp=qp, lam=lam_rel: cvxpy_fit(qp, lam), 1)
        for name, params in configs:
            t = median_time(lambda S=S, y=y, p=params: MRMICFusion(**p).fit(S, y), args.repeats)
            rows.append(
                [
                    f"{n:,}",
                    name,
                    f"{t * 1e3:.0f}",
                    f"{target[n] * 1e3:.0f}",
                    f"{paper[n]:.2f}",
                    f"{t_cvx:.2f}",
                    f"{t_cvx / t:.0f}x",
                ]
            )
        reps = max(1, args.repeats // 2)
        t = median_time(lambda S=S, y=y: MRMICFusion(random_state=0).fit(S, y), reps)
        rows.append(
            [f"{n:,}", "dense, lam='cv' (5 folds x 5 values)", f"{t * 1e3:.0f}"] + ["-"] * 4
        )
    return table(
        [
            "n",
            "configuration",
            "fit ms",
            "target ms",
            "paper s (CVX)",
            "same QP in cvxpy s",
            "cvxpy / ours",
        ],
        rows,
    )


def bench_parts(args) -> str:
    rows = []
    for n, graph in ((1000, "dense"), (1000, "knn"), (2000, "dense"), (2000, "knn")):
        S, y = simulate(n)
        U = normalized(S)
        pts, t, w = merge_points(U, y.astype(float), np.ones(n))
        reps = args.repeats
        t_red = median_time(lambda pts=pts: dominance_edges(pts), reps)
        t_lap = median_time(lambda pts=pts, g=graph: laplacian(similarity_matrix(pts, g)), reps)
        hi, lo = dominance_edges(pts)
        L = laplacian(similarity_matrix(pts, graph))
        lam = C_FIXED * 2 / L.diagonal().mean()

        def solve(pts=pts, t=t, w=w, hi=hi, lo=lo, L=L, lam=lam):
            return MRMICQP(pts, t, w, hi, lo, L).solve(lam)

        t_qp = median_time(solve, max(1, reps // 2))
        rows.append(
            [
                f"{n:,}",
                graph,
                str(hi.shape[0]),
                f"{t_red * 1e3:.1f}",
                f"{t_lap * 1e3:.1f}",
                f"{t_qp * 1e3:.0f}",
            ]
        )
    return table(
        ["n", "graph", "dominance edges", "reduction ms", "Laplacian ms", "QP + repair ms"],
        rows,
    )


def bench_reduction(args) -> str:
    rows = []
    for M, n in ((2, 2_000), (2, 10_000), (3, 2_000)):
        S, _ = simulate(n, M)
        U = normalized(S)
        t = median_time(lambda U=U: dominance_edges(U), args.repeats)
        rows.append([str(M), f"{n:,}", str(dominance_edges(U)[0].shape[0]), f"{t * 1e3:.0f}"])
    return table(["M", "n", "edges", "transitive reduction ms"], rows)


def bench_predict(args) -> str:
    S, y = simulate(500)
    S_test, _ = simulate(600_000, seed=1)
    rows = []
    for rule in ("linear", "monotone"):
        model = MRMICFusion(lam=1e-4, interpolation=rule).fit(S, y)
        t = median_time(lambda m=model: m.predict_proba(S_test), max(1, args.repeats // 2))
        rows.append([rule, f"{t:.2f}"])
    return table(["interpolation (n = 500)", "predict_proba s for 600,000 rows"], rows)


def bench_largest(args) -> str:
    rows = []
    for graph in ("dense", "knn"):
        best = None
        for n in range(1000, 10_001, 250):
            S, y = simulate(n, seed=n)
            lam = relative_lam(S, y, graph)
            start = time.perf_counter()
            MRMICFusion(lam=lam, graph=graph).fit(S, y)
            t = time.perf_counter() - start
            print(f"  [{graph}] n = {n}: {t:.1f} s", file=sys.stderr, flush=True)
            if t > args.budget:
                rows.append(
                    [
                        graph,
                        f"{best[0]:,}" if best else "-",
                        f"{best[1]:.1f}" if best else "-",
                        f"{n:,}",
                        f"{t:.1f}",
                    ]
                )
                break
            best = (n, t)
        else:
            rows.append([graph, f"{best[0]:,}", f"{best[1]:.1f}", "-", "-"])
    return table(
        ["graph", f"largest n tried within {args.budget:g} s", "its fit s", "next n", "its fit s"],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument(
        "--tables",
        default=",".join(TABLES),
        help=f"comma-separated subset of {','.join(TABLES)} (default: all)",
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for key in args.tables.split(","):
        title, bench = TABLES[key.strip()]
        print(f"### {title}\n")
        print(bench(args) + "\n")


TABLES = {
    "paper": ("Fit time in the paper's setting (M = 2)", bench_paper),
    "parts": ("Where the time goes (fixed lam, c = 0.1)", bench_parts),
    "reduction": ("Transitive reduction of strict dominance", bench_reduction),
    "predict": ("Prediction", bench_predict),
    "largest": ("Largest n fitted within the budget (fixed lam, c = 0.1, M = 2)", bench_largest),
}


if __name__ == "__main__":
    main()
