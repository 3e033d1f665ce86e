"""Binary fusion on small samples (20 to 300 rows): the default against logistic stacking on
the scorers' logits, test log-loss paired over seeds, and fit seconds.

Usage::

    python benchmarks/bench_small_samples.py [--seeds 20] [--out results.csv]
        [--intercept -0.5] [--sizes 20 40 80 150 300]

Each cell draws a latent ``z``, labels with ``P(y = 1 | z) = sigmoid(1.5 z + b)`` (``b``:
``--intercept``, -0.5 gives 40 % positives, -3.5 rare events: 6 %), and M
scorers that report probabilities ``sigmoid(a_m z + noise)`` (random sharpness ``a_m``, some
too hot, some too cold), rounded to two decimals as scorers often report them (ties);
fused on n rows, scored on 20,000 fresh rows. Logistic stacking is
``LogisticRegression()`` on the clipped logits, as its users fit it. Prints, per (n, M),
the mean test log-loss of each, the mean paired difference (default - stacking) with its
standard error, and the median fit seconds.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _common import table
from scipy.special import expit, logit
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

import fusion

SIZES = (20, 40, 80, 150, 300)


def draw(rng, n: int, intercept: float):
    z = rng.normal(size=n)
    y = (rng.random(n) < expit(1.5 * z + intercept)).astype(int)
    return z, y


def scorers(rng, M: int):
    sharp = rng.uniform(0.5, 3.0, size=M)
    noise = rng.uniform(0.5, 1.5, size=M)
    return sharp, noise


def scores(rng, z, sharp, noise):
    S = expit(sharp * z[:, None] + noise * rng.normal(size=(z.shape[0], sharp.shape[0])))
    return np.round(S, 2)


def run_cell(n: int, M: int, seed: int, intercept: float = -0.5) -> dict:
    rng = np.random.default_rng([n, M, seed])
    sharp, noise = scorers(rng, M)
    z, y = draw(rng, n, intercept)
    while y.min() == y.max():  # both classes in the fusion sample
        z, y = draw(rng, n, intercept)
    S = scores(rng, z, sharp, noise)
    zt, yt = draw(rng, 20_000, intercept)
    St = scores(rng, zt, sharp, noise)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        model = fusion.fit(S, y)
        fit_s = time.perf_counter() - t0
        p = model.predict_proba(St)[:, 1]
        t0 = time.perf_counter()
        clip = lambda X: logit(np.clip(X, 1e-3, 1 - 1e-3))  # noqa: E731
        lr = LogisticRegression().fit(clip(S), y)
        lr_s = time.perf_counter() - t0
        q = lr.predict_proba(clip(St))[:, 1]
    return {
        "n": n, "M": M, "seed": seed,
        "default": log_loss(yt, p, labels=[0, 1]), "stacking": log_loss(yt, q, labels=[0, 1]),
        "fit_s": fit_s, "lr_s": lr_s, "degree": str(getattr(model, "degree_", "")),
        "positives": int(y.sum()),
    }  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--out", help="write every fit's row to this CSV")
    ap.add_argument("--intercept", type=float, default=-0.5, help="the labels' log-odds at z = 0")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="rows fused")
    args = ap.parse_args()
    cells = [(n, M) for M in (2, 3) for n in args.sizes]
    rows = [run_cell(n, M, s, args.intercept) for n, M in cells for s in range(args.seeds)]
    out = []
    for n, M in cells:
        cell = [r for r in rows if r["n"] == n and r["M"] == M]
        d = np.array([r["default"] - r["stacking"] for r in cell])
        out.append([
            str(n), str(M), f"{np.median([r['positives'] for r in cell]):g}",
            f"{np.mean([r['default'] for r in cell]):.4f}",
            f"{np.mean([r['stacking'] for r in cell]):.4f}",
            f"{d.mean() * 1e3:+.2f} ± {d.std(ddof=1) / np.sqrt(d.size) * 1e3:.2f}",
            f"{np.median([r['fit_s'] for r in cell]):.2f}",
            f"{max(r['fit_s'] for r in cell):.2f}",
        ])  # fmt: skip
    print(table(["n", "M", "median positives", "default", "stacking", "default - stacking (x 1e-3)",
                 "median fit s", "max fit s"], out))  # fmt: skip
    if args.out:
        import csv

        with open(args.out, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
