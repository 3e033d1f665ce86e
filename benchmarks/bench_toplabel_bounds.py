"""The top-label correction's bounds (``DELTA``, ``SLOPE`` of
fusion/bernstein/multiclass/toplabel.py) compared on the real networks of
``bench_networks.py``.

Every setting is a valid one of the module's proof (``DELTA < 1/3``, ``DELTA / 2 + SLOPE <
1 - DELTA``); the default model is refitted with it on every case and seed (the CIFAR-100
networks on their given split and on two random re-splits of their 15,000 rows, 5,000 to fit;
the CIFAR-10 ensemble and its members on stratified halves), and the table prints the mean
test log-loss, the mean top-label ECE (15 bins) and the mean ratio of that ECE to temperature
scaling's, over all of them.

    FUSION_DATA_DIR=../shared/datasets OMP_NUM_THREADS=1 python benchmarks/bench_toplabel_bounds.py
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from networks_lib.contenders import TemperatureScaling
from networks_lib.data import CASES, Split, data_dir, load_split
from sklearn.model_selection import ShuffleSplit

import fusion
from fusion.bernstein.multiclass import toplabel

SETTINGS = ((0.15, 0.30), (0.20, 0.20), (0.25, 0.15), (0.25, 0.25), (0.20, 0.40))


def splits(seeds: list[int], resplits: int | None = 2):
    """``(case, name, Split)`` of every case and seed: CIFAR-100 given and re-split at random
    with the first ``resplits`` seeds (None: all), CIFAR-10 on every seed."""
    folder = data_dir()
    for case in CASES:
        if case.split == "given":
            given = load_split(case, 0, folder)
            yield case.name, f"{case.name} given", given
            S = np.concatenate([given.S_fuse, given.S_test])
            y = np.concatenate([given.y_fuse, given.y_test])
            for seed in seeds[:resplits]:
                fit, test = next(ShuffleSplit(1, train_size=5_000, random_state=seed).split(y))
                split = Split(seed, S[fit], y[fit], S[test], y[test])
                yield case.name, f"{case.name} re-split {seed}", split
        else:
            for seed in seeds:
                yield case.name, f"{case.name} seed {seed}", load_split(case, seed, folder)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args(argv)
    rows = {s: [] for s in SETTINGS}
    default = (toplabel.DELTA, toplabel.SLOPE)
    warnings.simplefilter("ignore")
    for _, name, sp in splits(args.seeds):
        ts = TemperatureScaling().fit(sp.S_fuse, sp.y_fuse).predict_proba(sp.S_test)
        ts_ece = fusion.metrics.top_label_ece(sp.y_test, ts)
        for delta, slope in SETTINGS:
            toplabel.DELTA, toplabel.SLOPE = delta, slope
            toplabel.constraints.cache_clear()
            P = fusion.fit(sp.S_fuse, sp.y_fuse).predict_proba(sp.S_test)
            ll = fusion.metrics.log_loss(sp.y_test, P, labels=np.arange(sp.C))
            ece = fusion.metrics.top_label_ece(sp.y_test, P, labels=np.arange(sp.C))
            rows[(delta, slope)].append((ll, ece, ece / ts_ece))
        print(name, "done", flush=True)
    toplabel.DELTA, toplabel.SLOPE = default
    toplabel.constraints.cache_clear()
    print(f"\n{len(rows[SETTINGS[0]])} splits; DELTA, SLOPE: mean log-loss, mean top-label ECE, "
          "mean ECE / TS's ECE (worst)\n")  # fmt: skip
    print("| DELTA | SLOPE | log-loss | top-label ECE | ECE / TS (worst) |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for (delta, slope), r in rows.items():
        r = np.array(r)
        mark = " (default)" if (delta, slope) == default else ""
        print(f"| {delta:g} | {slope:g}{mark} | {r[:, 0].mean():.4f} | {r[:, 1].mean():.4f} | "
              f"{r[:, 2].mean():.3f} ({r[:, 2].max():.3f}) |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
