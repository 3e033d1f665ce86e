"""A default fit under the default BLAS threads against one BLAS thread (issue 22, item 6).

Run from the repository root::

    python benchmarks/bench_threads.py                 # idle machine
    python benchmarks/bench_threads.py --load 4        # with 4 busy processes beside it

Each timing is a fresh subprocess (thread limits are read when BLAS starts): ``fusion.fit``
of six scorers on 10,000 rows, binary, once with the environment's default BLAS threads
and once with ``OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=1``, alternating, ``--repeats`` times
each; and the same for ``LogisticRegressionCV`` as a reference. ``--load`` starts that many
processes that multiply matrices with the default threads for the whole run (a busy
machine). Prints the median seconds and the ratio default / one thread.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

FIT = r"""
import time, numpy as np, fusion, warnings
from sklearn.linear_model import LogisticRegressionCV
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
n, M = 10_000, 6
Z = rng.normal(size=(n, M)) + rng.normal(size=(n, 1))
y = (rng.random(n) < 1 / (1 + np.exp(-Z @ np.linspace(0.2, 1.2, M)))).astype(int)
S = 1 / (1 + np.exp(-(Z + 0.5 * rng.normal(size=(n, M)))))
start = time.perf_counter()
if "{what}" == "fusion":
    fusion.fit(S, y)
else:
    LogisticRegressionCV().fit(np.log(S / (1 - S)), y)
print(time.perf_counter() - start)
"""

LOAD = "import numpy as np\nA = np.random.rand(600, 600)\nwhile True:\n    A @ A\n"


def run(what: str, one: bool) -> float:
    env = dict(os.environ)
    for key in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(key, None)
        if one:
            env[key] = "1"
    out = subprocess.run(
        [sys.executable, "-c", FIT.format(what=what)], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(out.stderr)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--load", type=int, default=0, help="busy processes beside the fits")
    args = p.parse_args(argv)
    load = [subprocess.Popen([sys.executable, "-c", LOAD]) for _ in range(args.load)]
    try:
        time.sleep(1.0 if load else 0.0)
        times = {(w, one): [] for w in ("fusion", "lrcv") for one in (False, True)}
        for _ in range(args.repeats):
            for key in times:
                times[key].append(run(*key))
    finally:
        for proc in load:
            proc.kill()
    print(f"load: {args.load} busy process(es); median of {args.repeats} fresh processes")
    print("| fit | default BLAS threads s | one thread s | default / one |")
    print("| --- | ---: | ---: | ---: |")
    for what, label in (
        ("fusion", "fusion.fit (M = 6, n = 10,000)"),
        ("lrcv", "LogisticRegressionCV"),
    ):
        a, b = np.median(times[(what, False)]), np.median(times[(what, True)])
        print(f"| {label} | {a:.2f} | {b:.2f} | {a / b:.2f} |")


if __name__ == "__main__":
    main()
