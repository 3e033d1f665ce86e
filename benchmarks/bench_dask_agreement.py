"""Dask fit against the in-memory fit of the same rows: the default model up to 1e8 rows.

Issue 12 item 6: the dask path must fit the same model as the in-memory path (predictions
within 1e-4). For each n, the rows are generated blockwise (the generator of
``bench_scale.py``: two correlated scores, a monotone non-logistic truth), fitted by
``BernsteinFusion(random_state=0)`` on the lazy dask array (``LocalCluster``, 2 worker
processes, 1 thread each) and on the same rows materialized in memory; both predict the
same 200,000 fresh rows. Prints a Markdown table::

    python benchmarks/bench_dask_agreement.py --sizes 1e6 1e7 1e8
    python benchmarks/bench_dask_agreement.py --sizes 2e5 1e6 --reverse-second

``--reverse-second`` negates the second score, so that ``increasing="auto"`` reverses it
(both paths then refit the ECDF on the reversed scores).

Each size runs in its own forked process (peak memory of the in-memory fit at 1e8 is about
6x the 1.6 GB of scores).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time

import numpy as np
from bench_scale import M, _dask_block  # the same rows as bench_scale's dask cells

CHUNK = 2_000_000


def block(n_rows: int, seed: int, i: int, reverse: bool = False) -> np.ndarray:
    """Rows of block ``i``: two scores and the label (the second score negated)."""
    rows = _dask_block(None, n_rows, seed, (i,))
    if reverse:
        rows[:, 1] = -rows[:, 1]
    return rows


def _cell(n: int, reverse: bool, queue) -> None:
    try:
        import dask.array as da
        from distributed import Client, LocalCluster

        from fusion import BernsteinFusion

        sizes = (CHUNK,) * (n // CHUNK) + ((n % CHUNK,) if n % CHUNK else ())
        test = block(200_000, 1, 0, reverse)[:, :M]
        with (
            LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster),
        ):
            X = da.map_blocks(
                lambda b, block_id=None: block(b.shape[0], 0, block_id[0], reverse),
                da.zeros((n, M + 1), chunks=(sizes, (M + 1,))),
                dtype=float,
            )
            S, y = X[:, :M], X[:, M]
            BernsteinFusion().fit(S[:CHUNK], y[:CHUNK])  # warm up the workers
            t = time.perf_counter()
            lazy = BernsteinFusion(random_state=0).fit(S, y)
            t_dask = time.perf_counter() - t
        rows = np.concatenate([block(s, 0, i, reverse) for i, s in enumerate(sizes)])
        t = time.perf_counter()
        memory = BernsteinFusion(random_state=0).fit(rows[:, :M], rows[:, M])
        t_mem = time.perf_counter() - t
        diff = np.abs(lazy.predict_proba(test)[:, 1] - memory.predict_proba(test)[:, 1])
        queue.put(
            {
                "n": n,
                "blocks": len(sizes),
                "increasing_": f"{lazy.increasing_.tolist()} / {memory.increasing_.tolist()}",
                "dask fit s": t_dask,
                "in-memory fit s": t_mem,
                "max abs p diff": float(diff.max()),
                "degree": f"{lazy.degree_} / {memory.degree_}",
                "lam_": f"{lazy.lam_:.3g} / {memory.lam_:.3g}",
                "ecdf_error_bound_": f"{lazy.ecdf_error_bound_:.1e} / "
                f"{memory.ecdf_error_bound_:.1e}",
            }
        )
    except Exception as err:  # noqa: BLE001 - reported in the table
        queue.put({"n": n, "error": f"{type(err).__name__}: {err}"[:120]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7, 1e8])
    ap.add_argument(
        "--reverse-second", action="store_true", help="negate the second score (reversed by 'auto')"
    )
    args = ap.parse_args()
    ctx = mp.get_context("fork")
    rows = []
    for n in [int(v) for v in args.sizes]:
        queue = ctx.Queue()
        proc = ctx.Process(target=_cell, args=(n, args.reverse_second, queue))
        proc.start()
        rows.append(queue.get())
        proc.join()
        print(rows[-1], flush=True)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    print("\n| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        cells = [f"{r[k]:.3g}" if isinstance(r.get(k), float) else str(r.get(k, "")) for k in keys]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
