"""The top-label correction's candidates compared on the real networks of ``bench_networks.py``:
the polytope's minimizer alone (the default before), the certified one alone, and both with
cross-validation choosing (``toplabel.KINDS``, the default).

The default model is refitted with each on every case and split (the CIFAR-100 networks on
their given split and on random re-splits of their 15,000 rows, 5,000 to fit; the CIFAR-10
ensemble and its members on stratified halves); the tables print, per case, the mean test
log-loss and top-label ECE (15 bins) of each, temperature scaling's, and the paired
difference of each against the polytope alone (mean and standard deviation over splits).

    FUSION_DATA_DIR=../shared/datasets OMP_NUM_THREADS=1 \\
        python benchmarks/bench_toplabel_certified.py
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from bench_toplabel_bounds import splits
from networks_lib.contenders import TemperatureScaling

import fusion
from fusion.bernstein.multiclass import toplabel

VARIANTS = {"polytope": ("polytope",), "certified": ("certified",), "both": toplabel.KINDS}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args(argv)
    default = toplabel.KINDS
    warnings.simplefilter("ignore")
    rows = []  # (case, variant, log-loss, ECE, fit seconds)
    start = time.perf_counter()
    try:
        for case, _, sp in splits(args.seeds, resplits=None):
            labels = np.arange(sp.C)

            def scores(P, labels=labels, y=sp.y_test):
                return (fusion.metrics.log_loss(y, P, labels=labels),
                        fusion.metrics.top_label_ece(y, P, labels=labels))  # fmt: skip

            ts = TemperatureScaling().fit(sp.S_fuse, sp.y_fuse).predict_proba(sp.S_test)
            rows.append((case, "ts", *scores(ts), 0.0))
            for name, kinds in VARIANTS.items():
                toplabel.KINDS = kinds
                t = time.perf_counter()
                model = fusion.fit(sp.S_fuse, sp.y_fuse)
                seconds = time.perf_counter() - t
                rows.append((case, name, *scores(model.predict_proba(sp.S_test)), seconds))
            print(f"[{(time.perf_counter() - start) / 60:5.1f} min] {case} split {sp.seed} done",
                  flush=True)  # fmt: skip
    finally:
        toplabel.KINDS = default
    table = np.array([(r[2], r[3], r[4]) for r in rows])
    cases = list(dict.fromkeys(r[0] for r in rows))
    names = ["ts", *VARIANTS]

    def pick(case, name):
        return table[[i for i, r in enumerate(rows) if r[0] == case and r[1] == name]]

    print("\nMean over splits (CIFAR-100: given + re-splits); paired difference against the "
          "polytope alone, mean ± sd over splits (x 1e-3)\n")  # fmt: skip
    print("| case | splits | metric | TS | polytope | certified | both (default) "
          "| certified - polytope | both - polytope |")  # fmt: skip
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case in cases:
        got = {name: pick(case, name) for name in names}
        for col, metric in ((0, "log-loss"), (1, "top-label ECE")):
            cells = " | ".join(f"{got[n][:, col].mean():.4f}" for n in names)
            diffs = []
            for n in ("certified", "both"):
                d = (got[n][:, col] - got["polytope"][:, col]) * 1e3
                diffs.append(f"{d.mean():+.2f} ± {d.std(ddof=1):.2f}")
            print(f"| {case} | {len(got['ts'])} | {metric} | {cells} | {' | '.join(diffs)} |")
    print("\n| variant | mean log-loss | mean top-label ECE | mean ECE / TS's | mean fit s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    ts = table[[i for i, r in enumerate(rows) if r[1] == "ts"]]
    for name in VARIANTS:
        got = table[[i for i, r in enumerate(rows) if r[1] == name]]
        print(f"| {name} | {got[:, 0].mean():.4f} | {got[:, 1].mean():.4f} | "
              f"{(got[:, 1] / ts[:, 1]).mean():.3f} | {got[:, 2].mean():.2f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
