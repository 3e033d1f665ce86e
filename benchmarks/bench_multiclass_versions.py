"""Fit time of the default multi-class model in two checkouts of the package, paired.

Every fit runs in its own process on one thread, on the speed section's synthetic members
(``benchmarks/multiclass_lib/speed.py``, float32 probabilities), after a 300-row warm-up fit
(imports and compiled code load lazily); the two checkouts alternate, and the table gives the
best of ``--repeats`` fits of each::

    python benchmarks/bench_multiclass_versions.py --old ../old-checkout --new . \\
        --sizes 100,4,10000 1000,5,5000

``--old`` / ``--new``: repository roots (each is put first on ``sys.path``, so its ``fusion``
is imported, whatever is installed); the synthetic members come from this file's checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time, warnings
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import numpy as np
from threadpoolctl import threadpool_limits
from multiclass_lib.speed import _data
import fusion
C, M, n = map(int, sys.argv[3:6])
S, y = _data(C, M, n)
S = S.astype(np.float32)
classes = np.arange(C)
with threadpool_limits(1), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fusion.fit(S[:300], y[:300], classes=classes)
    t0 = time.perf_counter()
    fusion.fit(S, y, classes=classes)
    seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "fusion": fusion.__file__}))
"""


def fit_seconds(root: Path, C: int, M: int, n: int) -> float:
    here = Path(__file__).resolve().parent
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(here), str(C), str(M), str(n)],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not Path(result["fusion"]).resolve().is_relative_to(root.resolve()):
        raise RuntimeError(f"imported {result['fusion']}, not the checkout {root}")
    return float(result["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="root of the old checkout")
    parser.add_argument("--new", type=Path, default=Path("."), help="root of the new checkout")
    parser.add_argument("--sizes", nargs="+", default=["100,4,10000", "1000,5,5000"],
                        help="C,M,n of every measurement")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print("| C | M | n | old s | new s | old / new |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for size in args.sizes:
        C, M, n = (int(v) for v in size.split(","))
        times: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(args.repeats):
            for key, root in (("old", args.old), ("new", args.new)):
                times[key].append(fit_seconds(root, C, M, n))
        old, new = min(times["old"]), min(times["new"])
        print(f"| {C:,} | {M} | {n:,} | {old:.1f} | {new:.1f} | {old / new:.2f} |", flush=True)


if __name__ == "__main__":
    main()
