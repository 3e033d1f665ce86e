"""How far the CIFAR-100 cases' top-label ECE differences are from test-set noise.

The CIFAR-100 networks of ``bench_networks.py`` have one given val/test split, so there are
no seeds to pair over. This script fits the default and the peers once on the validation
rows and resamples the test rows (a paired bootstrap: the same resample for every model),
printing for each peer the top-label ECE difference (15 equal-width bins) on the test set,
its bootstrap standard deviation, a 95 % percentile interval and the share of resamples on
which the default is lower.

    FUSION_DATA_DIR=../shared/datasets OMP_NUM_THREADS=1 \
        python benchmarks/bench_networks_bootstrap.py

SMS needs the optional ``probmetrics`` extra (``pip install -e ".[networks]"``); without it
that peer is left out.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from networks_lib.contenders import CONTENDERS, probmetrics_missing
from networks_lib.data import CASES, data_dir, load_split

from fusion import metrics

PEERS = ("ts", "ets", "sms")
BINS = 15


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling")
    parser.add_argument("--data-dir", default=None, help="the networks' folder")
    args = parser.parse_args(argv)

    pool = {c.key: c for c in CONTENDERS}
    peers = [p for p in PEERS if p != "sms" or probmetrics_missing() is None]
    rng = np.random.default_rng(args.seed)
    print("| case | peer | ECE default | ECE peer | difference | bootstrap sd | 95 % interval "
          "| default lower |")  # fmt: skip
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: |")
    for case in CASES:
        if case.split != "given":
            continue
        split = load_split(case, 0, data_dir(args.data_dir))
        labels = np.arange(split.C)
        P = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for key in ("default", *peers):
                model = pool[key].make().fit(split.S_fuse, split.y_fuse)
                P[key] = model.predict_proba(split.S_test)
        y = split.y_test
        n = y.shape[0]

        def ece(key, rows, y=y, P=P, labels=labels):
            return metrics.top_label_ece(y[rows], P[key][rows], n_bins=BINS, labels=labels)

        resamples = [rng.integers(0, n, n) for _ in range(args.resamples)]
        everything = np.arange(n)
        base = {key: ece(key, everything) for key in P}
        boot_default = np.array([ece("default", r) for r in resamples])
        for peer in peers:
            d = boot_default - np.array([ece(peer, r) for r in resamples])
            lo, hi = np.percentile(d, [2.5, 97.5])
            print(
                f"| {case.name} | {peer} | {base['default']:.4f} | {base[peer]:.4f} | "
                f"{base['default'] - base[peer]:+.4f} | {d.std():.4f} | [{lo:+.4f}, {hi:+.4f}] "
                f"| {np.mean(d < 0):.2f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
