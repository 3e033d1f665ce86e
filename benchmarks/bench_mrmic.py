"""Fit and predict time of MRMICFusion, against the same QP in cvxpy, and on hard data.

Usage::

    python benchmarks/bench_mrmic.py [--repeats 5] [--budget 10] [--timeout 300]
        [--tables paper,parts,reduction,predict,largest]

Prints Markdown tables: medians over ``--repeats`` runs measured in this process, with
ratios against the reference (the same QP stated in cvxpy and solved by Clarabel, as the
paper did with CVX) on the same data. ``largest`` searches the largest ``n`` whose single
ungrouped fit (``max_points=None``) takes at most ``--budget`` seconds, for the dense and
the k-NN graph.

Further tables, run only when named in ``--tables``: ``hard`` times default fits on data
that used to run for minutes (each in a subprocess stopped after ``--timeout`` seconds; it
calls only ``MRMICFusion()``, so it also runs against older versions of the package);
``settings`` counts OSQP iterations with and without the box rows and for several
``rho``; ``cost`` measures the per-iteration and setup times behind
:mod:`fusion.mrmic.cost`; ``grouping`` compares ``max_points`` and the graphs against a
known truth; ``triangulation`` times the linear rule by dimension.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from _common import median_time, table
from scipy.special import expit

from fusion import MRMICFusion, SolverError
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
            ("dense, lam = 1e-5 (paper's Fig. 1)", dict(lam=1e-5, max_points=None)),
            (f"dense, lam = {lam_rel:.2g} (c = {C_FIXED})", dict(lam=lam_rel, max_points=None)),
            ("knn (k = 10), same lam", dict(lam=lam_rel, graph="knn", max_points=None)),
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
        t = median_time(lambda S=S, y=y: MRMICFusion(max_points=None).fit(S, y), reps)
        rows.append(
            [f"{n:,}", "dense, lam='cv' (5 folds x 5 values)", f"{t * 1e3:.0f}"] + ["-"] * 4
        )
        t = median_time(lambda S=S, y=y: MRMICFusion().fit(S, y), reps)
        rows.append([f"{n:,}", "defaults (lam='cv', max_points=500)", f"{t * 1e3:.0f}"] + ["-"] * 4)
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
    for M, n in ((2, 2_000), (2, 10_000), (3, 2_000), (6, 500), (6, 2_000)):
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
            MRMICFusion(lam=lam, graph=graph, max_points=None).fit(S, y)
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


# -- hard data ---------------------------------------------------------------------------------


def hard_case(name: str):
    """``(S, y)`` of the hard case ``name`` (see HARD_CASES)."""
    rng = np.random.default_rng(0)
    if name == "one_positive":
        S = rng.normal(size=(10_000, 2))
        y = np.zeros(10_000, dtype=int)
        y[np.argmax(S.sum(axis=1))] = 1
        return S, y
    n, M = {"m6": (2000, 6), "m8": (2000, 8), "continuous": (10_000, 2)}.get(name, (5000, 2))
    S, y = simulate(n, M)
    if name == "ties":
        S[rng.uniform(size=n) < 0.99, 0] = 0.0
    elif name == "binary":
        S[:, 0] = S[:, 0] > 0
    elif name == "few_valued":
        S = np.round(S)
    return S, y


HARD_CASES = {
    "continuous": "continuous scores, n = 10,000, M = 2",
    "ties": "99 % ties in one score, n = 5,000",
    "binary": "one binary score, n = 5,000",
    "few_valued": "rounded scores (about 7 values each), n = 5,000",
    "one_positive": "1 positive in 10,000 rows",
    "m6": "M = 6, n = 2,000",
    "m8": "M = 8, n = 2,000",
}


def run_one_hard(name: str) -> None:
    """Fit MRMICFusion() on one hard case; print ``seconds|status|points|mean p|base rate``."""
    S, y = hard_case(name)
    start = time.perf_counter()
    try:
        model = MRMICFusion().fit(S, y)
        p = model.predict_proba(S)[:, 1]
        result = f"{model.solver_status_}|{model.train_scores_.shape[0]}|{p.mean():.4f}"
    except Exception as err:  # reported in the table, as the hang is
        result = f"{type(err).__name__}|-|-"
    print(f"{time.perf_counter() - start:.1f}|{result}|{y.mean():.4f}")


def bench_hard(args) -> str:
    rows = []
    for name, label in HARD_CASES.items():
        S, _ = hard_case(name)
        distinct = np.unique(S, axis=0).shape[0]
        try:
            out = (
                subprocess.run(
                    [sys.executable, __file__, "--one-hard", name],
                    capture_output=True,
                    text=True,
                    timeout=args.timeout,
                    check=True,
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            seconds, status, points, mean_p, base = out.split("|")
        except subprocess.TimeoutExpired:
            seconds, status, points, mean_p, base = f"> {args.timeout:.0f}", "-", "-", "-", "-"
        rows.append([label, f"{distinct:,}", points, seconds, status, mean_p, base])
        print(f"  [hard] {name}: {seconds} s", file=sys.stderr, flush=True)
    return table(
        [
            "data",
            "distinct points",
            "QP points",
            "fit + predict s",
            "status",
            "mean p",
            "base rate",
        ],
        rows,
    )


# -- OSQP settings -----------------------------------------------------------------------------


def _iterations(qp_args, settings, box: bool, lams) -> int:
    import fusion.mrmic.qp as qp_module

    edges_only = qp_module.monotone_constraints

    def with_box(hi, lo, n):
        A, lower, upper = edges_only(hi, lo, n)
        A = sp.vstack([A, sp.identity(n, format="csc")]).tocsc()
        return A, np.concatenate([lower, np.zeros(n)]), np.concatenate([upper, np.ones(n)])

    qp_module.monotone_constraints = with_box if box else edges_only
    try:
        total = 0
        for lam in lams:  # cold starts, as each fold's first solve
            qp = MRMICQP(*qp_args, **settings)
            qp.solve(lam)
            total += qp.last_iterations
        return total
    finally:
        qp_module.monotone_constraints = edges_only


def bench_settings(args) -> str:
    configs = [
        (
            "box rows, rho = 1, alpha = 1.6, interval 400 (before)",
            True,
            dict(rho=1.0, alpha=1.6, adaptive_rho_interval=400, adaptive_rho_tolerance=5.0),
        ),
        (
            "no box, rho = 1, alpha = 1.6, interval 400",
            False,
            dict(rho=1.0, alpha=1.6, adaptive_rho_interval=400, adaptive_rho_tolerance=5.0),
        ),
        (
            "no box, rho = 10, alpha = 1.8, interval 400",
            False,
            dict(rho=10.0, alpha=1.8, adaptive_rho_interval=400, adaptive_rho_tolerance=5.0),
        ),
        (
            "no box, rho = 3, alpha = 1.8, interval 100, tolerance 2",
            False,
            dict(rho=3.0, alpha=1.8, adaptive_rho_interval=100, adaptive_rho_tolerance=2.0),
        ),
        ("no box, rho = 10, alpha = 1.8, interval 100, tolerance 2 (now)", False, {}),
    ]
    cases = ("continuous", "ties", "binary", "few_valued", "m6")
    rows = []
    for name in cases:
        for seed in (1, 2):
            S, y = hard_case(name)
            idx = np.random.default_rng(seed).choice(S.shape[0], 500, replace=False)
            S, y = S[idx], y[idx]
            points, target, weight = merge_points(normalized(S), y.astype(float), np.ones(500))
            hi, lo = dominance_edges(points)
            L = laplacian(similarity_matrix(points, "dense"))
            scale = 2 * weight.mean() / L.diagonal().mean()
            lams = [c * scale for c in (1e-3, 0.1, 1.0)]
            qp_args = (points, target, weight, hi, lo, L)
            its = [_iterations(qp_args, cfg, box, lams) for _, box, cfg in configs]
            rows.append([f"{name} (sample {seed})", str(points.shape[0])] + [str(i) for i in its])
    totals = np.array([[int(v) for v in r[2:]] for r in rows]).sum(axis=0)
    rows.append(["total", "-"] + [str(t) for t in totals])
    header = ["data (500 rows)", "points"] + [label for label, _, _ in configs]
    return table(header, rows)


# -- cost model --------------------------------------------------------------------------------


def bench_cost(args) -> str:
    from fusion.mrmic.cost import EDGES_PER_POINT, seconds_per_iteration

    rows = []
    for M, g, graph in (
        (2, 250, "dense"),
        (2, 500, "dense"),
        (2, 1000, "dense"),
        (2, 1000, "knn"),
        (2, 2000, "knn"),
        (6, 500, "dense"),
        (6, 1000, "knn"),
    ):
        S, y = simulate(g, M)
        points, target, weight = merge_points(normalized(S), y.astype(float), np.ones(g))
        hi, lo = dominance_edges(points)
        L = laplacian(similarity_matrix(points, graph))
        lam = C_FIXED * 2 * weight.mean() / L.diagonal().mean()
        fixed = dict(max_iter=200, eps_abs=1e-12, eps_rel=1e-12, adaptive_rho_interval=10_000)
        qp = MRMICQP(points, target, weight, hi, lo, L, **fixed)

        def run(lam, qp=qp):  # 200 iterations: OSQP stops at max_iter, which raises
            start = time.perf_counter()
            try:
                qp.solve(lam)
            except SolverError:
                pass
            return time.perf_counter() - start

        first = run(lam)  # setup + 200 iterations
        per_iter = run(1.01 * lam) / 200  # 200 iterations, no setup
        m = hi.shape[0]
        model = seconds_per_iteration(g, EDGES_PER_POINT[M] * g, graph)
        rows.append(
            [
                str(M),
                f"{g:,}",
                graph,
                f"{m:,}",
                f"{EDGES_PER_POINT[M] * g:,.0f}",
                f"{per_iter * 1e3:.2f}",
                f"{model * 1e3:.2f}",
                f"{first - 200 * per_iter:.2f}",
            ]
        )
    return table(
        [
            "M",
            "g",
            "graph",
            "edges",
            "edges in the model",
            "ms / iteration",
            "model ms / iteration",
            "setup s",
        ],
        rows,
    )


# -- grouping ----------------------------------------------------------------------------------


def truth(S) -> np.ndarray:
    """P(Y = 1 | S) of ``simulate`` (z | S is normal), by Gauss-Hermite quadrature."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    v = 1 / (1 + S.shape[1])
    mean = S.sum(axis=1) * v
    return expit(2 * (mean[:, None] + np.sqrt(v) * nodes[None])) @ weights / weights.sum()


def bench_grouping(args) -> str:
    rows = []
    n = 1500
    S_test, _ = simulate(20_000, seed=99)
    T = truth(S_test)
    configs = [(None, "dense"), (1000, "dense"), (500, "dense"), (250, "dense")]
    configs += [(None, "knn"), (500, "knn")]
    for max_points, graph in configs:
        errs, times = [], []
        for seed in (1, 2, 3):
            S, y = simulate(n, seed=seed)
            start = time.perf_counter()
            model = MRMICFusion(max_points=max_points, graph=graph).fit(S, y)
            times.append(time.perf_counter() - start)
            errs.append(np.mean(np.abs(model.predict_proba(S_test)[:, 1] - T)))
        rows.append([str(max_points), graph, f"{np.mean(errs):.4f}", f"{np.median(times):.1f}"])
        print(f"  [grouping] {max_points} {graph}: {np.median(times):.1f} s", file=sys.stderr)
    header = [f"max_points (n = {n:,})", "graph", "mean abs(p - truth), 3 seeds", "fit s (median)"]
    return table(header, rows)


def bench_triangulation(args) -> str:
    from fusion.mrmic.interpolate import linear_weights

    rows = []
    queries = np.random.default_rng(1).uniform(size=(2000, 6))
    for M, g in ((2, 500), (4, 500), (4, 1000), (5, 500), (5, 1000), (6, 500)):
        S, _ = simulate(g, M)
        points = normalized(S)
        t = median_time(lambda p=points, M=M: linear_weights(p, queries[:, :M]), 1)
        rows.append([str(M), f"{g:,}", f"{t:.2f}"])
    return table(["M", "training points", "linear rule at 2,000 queries, s"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--one-hard", help=argparse.SUPPRESS)
    parser.add_argument(
        "--tables",
        default=",".join(DEFAULT_TABLES),
        help=f"comma-separated subset of {','.join(TABLES)} (default: all)",
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.one_hard:
        run_one_hard(args.one_hard)
        return
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
    "hard": ("Default fits on hard data", bench_hard),
    "settings": ("OSQP iterations: box rows and rho", bench_settings),
    "cost": ("Time per OSQP iteration and per setup (fusion.mrmic.cost)", bench_cost),
    "grouping": ("max_points against a known truth (M = 2, lam='cv')", bench_grouping),
    "triangulation": ("The linear rule's cost by dimension", bench_triangulation),
}
DEFAULT_TABLES = ("paper", "parts", "reduction", "predict", "largest")


if __name__ == "__main__":
    main()
