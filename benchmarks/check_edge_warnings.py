"""Grid-edge warnings of the default on real networks fitted on 4,000 of their fusion rows
(the five cross-fitting folds of ``bench_cross_class.py``): which fits warn that a smaller
``lam`` might fit better, with the chosen ``lam``, the test log-loss and the fit time.

    FUSION_DATA_DIR=../shared/datasets OMP_NUM_THREADS=1 python benchmarks/check_edge_warnings.py
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from networks_lib.data import CASES, data_dir, load_split
from sklearn.model_selection import StratifiedKFold

import fusion


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", default=["c100_densenet121", "c100_resnet110"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print("| case | fold | lam | test log-loss | fit s | edge warning |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for case in CASES:
        if case.name not in args.cases:
            continue
        split = load_split(case, args.seed, data_dir())
        S, y, St, yt = split.S_fuse, split.y_fuse, split.S_test, split.y_test
        folds = StratifiedKFold(5, shuffle=True, random_state=args.seed).split(S[:, 0, 0], y)
        for f, (fit, _) in enumerate(folds):
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = fusion.fit(S[fit], y[fit])
            seconds = time.perf_counter() - start
            edge = any("smallest value" in str(w.message) for w in caught)
            P = model.predict_proba(St)
            ll = float(-np.mean(np.log(P[np.arange(yt.shape[0]), yt])))
            print(
                f"| {case.name} | {f} | {model.lam_:g} | {ll:.5f} | {seconds:.1f} | "
                f"{'yes' if edge else 'no'} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
