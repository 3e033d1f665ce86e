"""Scale benchmark: fit/predict time and peak memory of BernsteinFusion against its peers.

Every (method, n) cell runs in a fresh forked process, which generates its data, then times
``fit`` and ``predict_proba`` on all ``n`` rows (median over ``--repeats``) and reports the
peak resident memory above the level right after data generation, also as a multiple of the
input size ``n * M * 8`` bytes. The dask rows generate the data blockwise on a
``LocalCluster`` (2 worker processes, 1 thread each): the whole data set never exists in any
one process; their memory column is the client's.

Data: M = 2 correlated logit-scale scores, labels from a monotone non-logistic truth
(``tests/conftest.py``'s simulation).

Methods (same process tree, same run):

* ``bernstein K=5 exact``  BernsteinFusion(base=None, degree=5, ecdf_knots=None): the rank-only
  (least-squares) model with the exact ECDF
* ``bernstein K=5 sketch`` BernsteinFusion(base=None, degree=5, ecdf_knots=10_000)
* ``bernstein cv sketch``  BernsteinFusion(base=None, degree="cv", ecdf_knots=10_000) (10 degrees
  x 5 folds)
* ``default K=5``          BernsteinFusion(degree=5): the default semi-parametric model, ``lam``
  by 5-fold cross-validation on cells of rows (ECDF sketched from 1e5 rows on)
* ``default``              BernsteinFusion(): all defaults
* ``lightgbm monotone``    LGBMClassifier(monotone_constraints=[1, 1]), 100 trees, raw scores
* ``logreg``               exact ECDFNormalizer + LogisticRegression on the normalized scores
* dask rows: ``bernstein K=5 dask`` (rank-only) and ``default K=5 dask`` (default model, on
  the cell sums; ``lam`` by cross-validation)
* ``pygam monotone``       LogisticGAM(s(0, monotonic_inc) + s(1, monotonic_inc)) on them

Run ``python benchmarks/bench_scale.py --help`` for the size flags.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import statistics
import time

import numpy as np

M = 2


def simulate(n: int, seed: int):
    from scipy.special import ndtr

    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, M))
    z[:, 1] = 0.5 * z[:, 0] + np.sqrt(0.75) * z[:, 1]
    p = 0.05 + 0.9 * ndtr(z[:, 0]) * ndtr(z[:, 1] - 0.3)
    y = (rng.random(n) < p).astype(np.int64)
    return z, y


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _make(method: str):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from fusion import BernsteinFusion, ECDFNormalizer

    if method == "bernstein K=5 exact":
        return BernsteinFusion(base=None, degree=5, ecdf_knots=None)
    if method == "bernstein K=5 sketch":
        return BernsteinFusion(base=None, degree=5, ecdf_knots=10_000)
    if method == "bernstein cv sketch":
        return BernsteinFusion(base=None, degree="cv", ecdf_knots=10_000, random_state=0)
    if method == "default K=5":
        return BernsteinFusion(degree=5)
    if method == "default":
        return BernsteinFusion()
    if method == "lightgbm monotone":
        from lightgbm import LGBMClassifier

        return LGBMClassifier(monotone_constraints=[1] * M, verbose=-1)
    if method == "logreg":
        return make_pipeline(ECDFNormalizer(), LogisticRegression())
    if method == "pygam monotone":
        from pygam import LogisticGAM, s

        class GAM:  # pygam has no predict_proba with two columns
            def fit(self, S, y):
                self.norm = ECDFNormalizer().fit(S)
                terms = s(0, constraints="monotonic_inc") + s(1, constraints="monotonic_inc")
                self.gam = LogisticGAM(terms).fit(self.norm.transform(S), y)
                return self

            def predict_proba(self, S):
                return self.gam.predict_proba(self.norm.transform(S))

        return GAM()
    raise ValueError(method)


def _cell(method: str, n: int, repeats: int, queue) -> None:
    try:
        # Warm up (imports, first-call costs) so that neither counts in time or memory.
        S, y = simulate(3000, seed=1)
        _make(method).fit(S, y).predict_proba(S)
        S, y = simulate(n, seed=0)
        base = _rss()
        fits, preds = [], []
        for _ in range(repeats):
            model = _make(method)
            t = time.perf_counter()
            model.fit(S, y)
            fits.append(time.perf_counter() - t)
            t = time.perf_counter()
            model.predict_proba(S)
            preds.append(time.perf_counter() - t)
        queue.put((statistics.median(fits), statistics.median(preds), _peak() - base, None))
    except Exception as err:  # noqa: BLE001 - reported in the table
        queue.put((np.nan, np.nan, np.nan, f"{type(err).__name__}: {err}"[:80]))


def _dask_block(block, n_rows, seed, block_id=None):
    from scipy.special import ndtr

    i = block_id[0]
    rng = np.random.default_rng([seed, i])
    z = rng.standard_normal((n_rows, M))
    z[:, 1] = 0.5 * z[:, 0] + np.sqrt(0.75) * z[:, 1]
    p = 0.05 + 0.9 * ndtr(z[:, 0]) * ndtr(z[:, 1] - 0.3)
    return np.column_stack([z, rng.random(n_rows) < p])


def _dask_cell(n: int, chunk: int, degree, base, queue) -> None:
    try:
        import dask.array as da
        from distributed import Client, LocalCluster

        from fusion import BernsteinFusion

        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
        blocks = -(-n // chunk)
        sizes = (chunk,) * (n // chunk) + ((n % chunk,) if n % chunk else ())
        # A lazy array whose blocks are generated where they are used: never materialized.
        X = da.map_blocks(
            lambda b, block_id=None: _dask_block(b, b.shape[0], 0, block_id),
            da.zeros((n, M + 1), chunks=(sizes, (M + 1,))),
            dtype=float,
        )
        S, y = X[:, :M], X[:, M]
        # Warm up the workers (imports) on the first block only.
        BernsteinFusion(base=base, degree=degree).fit(S[:chunk], y[:chunk])
        rss = _rss()
        t = time.perf_counter()
        model = BernsteinFusion(base=base, degree=degree, random_state=0).fit(S, y)
        fit = time.perf_counter() - t
        t = time.perf_counter()
        model.predict_proba(S)[:, 1].sum().compute()  # blockwise, nothing gathered
        pred = time.perf_counter() - t
        client.close()
        cluster.close()
        queue.put((fit, pred, _peak() - rss, f"{blocks} blocks, degree {model.degree_}"))
    except Exception as err:  # noqa: BLE001
        queue.put((np.nan, np.nan, np.nan, f"{type(err).__name__}: {err}"[:80]))


def _run(target, args, timeout):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        return np.nan, np.nan, np.nan, f"timeout > {timeout:.0f} s"
    return q.get() if not q.empty() else (np.nan, np.nan, np.nan, f"exit {p.exitcode}")


def main() -> None:
    import builtins
    import functools

    builtins.print = functools.partial(builtins.print, flush=True)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5, 1e6, 1e7])
    ap.add_argument("--dask-n", type=float, nargs="*", default=[1e7, 1e8])
    ap.add_argument("--dask-chunk", type=float, default=2e6)
    ap.add_argument("--gam-max-n", type=float, default=1e5)
    ap.add_argument("--exact-max-n", type=float, default=1e7)
    ap.add_argument("--cv-max-n", type=float, default=1e7)
    ap.add_argument("--repeats", type=int, default=3, help="repeats for n <= 1e5 (1 above)")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument(
        "--methods",
        nargs="+",
        default=[
            "bernstein K=5 exact",
            "bernstein K=5 sketch",
            "bernstein cv sketch",
            "default K=5",
            "default",
            "lightgbm monotone",
            "logreg",
            "pygam monotone",
        ],
    )
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}, cores: {os.cpu_count()}", flush=True)
    rows = []
    for n in [int(v) for v in args.sizes]:
        for method in args.methods:
            if method == "pygam monotone" and n > args.gam_max_n:
                continue
            if method == "bernstein K=5 exact" and n > args.exact_max_n:
                continue
            if method == "bernstein cv sketch" and n > args.cv_max_n:
                continue
            reps = args.repeats if n <= 100_000 else 1
            fit, pred, peak, note = _run(_cell, (method, n, reps), args.timeout)
            rows.append((method, n, fit, pred, peak, note))
            print(f"  {method} n={n:.0e}: fit {fit:.3g}s predict {pred:.3g}s {note or ''}")
    for n in [int(v) for v in args.dask_n]:
        for base, label in ((None, "bernstein K=5 dask, sketch 10k"), ("auto", "default K=5 dask")):
            fit, pred, peak, note = _run(
                _dask_cell, (n, int(args.dask_chunk), 5, base), args.timeout * 2
            )
            rows.append((label, n, fit, pred, peak, note))
            print(f"  {label} n={n:.0e}: fit {fit:.3g}s predict {pred:.3g}s {note}")
    print(f"load average at end: {os.getloadavg()}\n")
    ref = {n: fit for method, n, fit, *_ in rows if method == "bernstein K=5 sketch"}
    print(
        "| method | n | fit s | fit / bernstein K=5 sketch | predict s | peak extra MB | "
        "peak / input | note |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for method, n, fit, pred, peak, note in rows:
        r = fit / ref[n] if n in ref else np.nan
        print(
            f"| {method} | {n:.0e} | {fit:.3g} | {r:.2f} | {pred:.3g} | {peak / 1e6:.0f} | "
            f"{peak / (n * M * 8):.1f} | {note or ''} |"
        )


if __name__ == "__main__":
    main()
