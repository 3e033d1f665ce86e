"""The class-shared multi-class model on a local Dask cluster (issue 21, item 5).

Run from the repository root::

    python benchmarks/bench_multiclass_dask.py                       # 10^6 rows x 100 x 3
    python benchmarks/bench_multiclass_dask.py --rows 200000 --compare   # and in memory

Rows are generated on the workers, chunk by chunk (a known posterior over ``C`` classes and
``M`` float32 members with their own temperature, noise and class biases), so the scores
never sit on the client. Prints the fit's wall time, its penalties and weights, the test
log-loss next to temperature scaling of the averaged log-probabilities and to the true
posterior, and, with ``--compare``, the largest difference in probability against the
in-memory fit of the same rows.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax, softmax

import fusion

MEMBERS = ((0.6, 0.8, 0.3), (1.8, 0.7, 0.3), (1.0, 1.0, 0.2))  # temperature, noise, bias sd


def make_chunk(seed: int, rows: int, C: int):
    """``(S, y, truth)`` of one chunk: S (rows, M, C) float32 probabilities."""
    rng = np.random.default_rng([seed, 7])
    biases = np.random.default_rng(12345).normal(size=(len(MEMBERS), C))  # fixed per member
    L = 1.5 * rng.normal(size=(rows, C))
    truth = softmax(L, axis=1)
    y = (rng.random(rows)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1).clip(0, C - 1)
    S = np.empty((rows, len(MEMBERS), C), dtype=np.float32)
    shared = 0.5 * rng.normal(size=(rows, C))
    for m, (temp, noise, bias) in enumerate(MEMBERS):
        logits = (L + shared + noise * rng.normal(size=(rows, C))) / temp + bias * biases[m]
        S[:, m] = softmax(logits, axis=1)
    return S, y, truth


def dask_data(n: int, C: int, chunk: int, seed: int):
    import dask
    import dask.array as da

    parts = [dask.delayed(make_chunk, nout=3)(seed + i, chunk, C) for i in range(n // chunk)]
    S = da.concatenate(
        [da.from_delayed(p[0], (chunk, len(MEMBERS), C), dtype=np.float32) for p in parts]
    )
    y = da.concatenate([da.from_delayed(p[1], (chunk,), dtype=np.int64) for p in parts])
    return S, y


def temperature_of_average(S, y, St):
    A = np.log(np.clip(S, 1e-12, 1.0)).mean(axis=1)
    rows = np.arange(y.shape[0])

    def loss(t):
        return -np.mean(log_softmax(A * np.exp(-t), axis=1)[rows, y])

    t = minimize_scalar(loss, bounds=(-5, 5), method="bounded").x
    return softmax(np.log(np.clip(St, 1e-12, 1.0)).mean(axis=1) * np.exp(-t), axis=1)


def log_loss(P, y) -> float:
    return float(-np.mean(np.log(P[np.arange(y.shape[0]), y])))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--classes", type=int, default=100)
    p.add_argument("--chunk", type=int, default=50_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compare", action="store_true", help="also fit in memory and compare")
    args = p.parse_args(argv)
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = Client(cluster)
    try:
        S, y = dask_data(args.rows, args.classes, args.chunk, args.seed)
        S, y = client.persist([S, y])
        St, yt, truth = make_chunk(10**6 + args.seed, 20_000, args.classes)
        start = time.perf_counter()
        model = fusion.BernsteinFusion(verbose=True).fit(S, y)
        seconds = time.perf_counter() - start
        P = model.predict_proba(St)
        sample = np.arange(0, args.rows, max(1, args.rows // 50_000))
        Ss, ys = S[sample].compute(), y[sample].compute()
        ts = temperature_of_average(Ss, ys, St)
        print(f"rows {args.rows:,} x {args.classes} classes x {len(MEMBERS)} members, "
              f"chunks of {args.chunk:,}, {args.workers} workers")  # fmt: skip
        weights = np.round(model.base_coef_, 3).tolist()
        print(f"dask fit: {seconds:.1f} s; lam {model.lam_:g}, bias penalty "
              f"{model.bias_penalty_:g}, weights {weights}")  # fmt: skip
        print(f"test log-loss (20,000 rows): fusion {log_loss(P, yt):.4f}, temperature "
              f"scaling of the average (fitted on {sample.size:,} rows) {log_loss(ts, yt):.4f}, "
              f"true posterior {log_loss(truth, yt):.4f}")  # fmt: skip
        if args.compare:
            Sm, ym = S.compute(), y.compute()
            start = time.perf_counter()
            ref = fusion.BernsteinFusion().fit(Sm, ym)
            print(f"in-memory fit: {time.perf_counter() - start:.1f} s; lam {ref.lam_:g}; "
                  f"largest difference in probability "
                  f"{np.abs(ref.predict_proba(St) - P).max():.2e}")  # fmt: skip
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
