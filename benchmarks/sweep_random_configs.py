"""Random configurations through ``fusion.fit``: no exception, probabilities inside (0, 1),
bit-identical refits, and (default model, M = 2) monotone on a grid of score quantiles
(up to rounding: no step below -1e-12).

Usage::

    python benchmarks/sweep_random_configs.py [--trials 60] [--seed 2026]

Each trial draws n (40 to 25,000 rows), M (2 to 5 scores), a kind per score (probability,
logit, rounded to ties, integer, saturated at exactly 0/1, scaled by 1e200, reversed), random
weights in 30 % of the trials and a method (the default three times as often as each other
method; MR-MIC and RPR up to 3,000 rows). Prints one line per failure and a summary table.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _common import table
from scipy.special import expit

import fusion

KINDS = ("prob", "logit", "tied", "int", "saturated", "huge", "reversed")
METHODS = ("bernstein", "bernstein", "bernstein", "copula", "mrmic", "rpr", "enir")


def draw(rng):
    n = int(rng.choice([40, 120, 600, 3000, 25000]))
    M = int(rng.integers(2, 6))
    latent = rng.normal(size=n)
    y = (rng.random(n) < expit(rng.uniform(0.5, 4) * latent + rng.normal())).astype(int)
    cols = []
    for _ in range(M):
        kind = rng.choice(KINDS)
        z = rng.uniform(0.3, 3) * latent + rng.normal(size=n)
        if kind == "prob":
            c = expit(z)
        elif kind == "logit":
            c = z
        elif kind == "tied":
            c = np.round(expit(z), 1)
        elif kind == "int":
            c = np.round(z * 3)
        elif kind == "saturated":
            c = expit(3 * z)
            far = np.abs(z) > 1.5
            c[far] = z[far] > 0
        elif kind == "huge":
            c = z * 1e200
        else:
            c = 1 - expit(z)
        cols.append(c)
    w = rng.uniform(0, 3, n) if rng.random() < 0.3 else None
    return np.column_stack(cols), y, w, str(rng.choice(METHODS))


def check(S, y, w, method) -> str | None:
    """None if every property holds, else what failed."""
    m = fusion.fit(S, y, method=method, sample_weight=w)
    p = m.predict_proba(S)[:, 1]
    if not np.array_equal(
        p, fusion.fit(S, y, method=method, sample_weight=w).predict_proba(S)[:, 1]
    ):
        return "refit not bit-identical"
    if not (np.all(np.isfinite(p)) and np.all((p > 0) & (p < 1))):
        return f"probabilities outside (0, 1): [{p.min():.3g}, {p.max():.3g}]"
    if method == "bernstein" and S.shape[1] == 2:
        g = np.quantile(S, np.linspace(0, 1, 41), axis=0)
        G = np.array(np.meshgrid(g[:, 0], g[:, 1], indexing="ij")).reshape(2, -1).T
        P = m.predict_proba(G)[:, 1].reshape(41, 41)
        P = P if m.increasing_[0] else P[::-1]
        P = P if m.increasing_[1] else P[:, ::-1]
        # up to rounding, as the tests check it: where the fit is flat in a score, two grid
        # points can differ by an ulp either way (one did: -4.4e-16 at 40 rows)
        worst = min(np.diff(P, axis=0).min(), np.diff(P, axis=1).min())
        if worst < -1e-12:
            return f"not monotone on the quantile grid (a step of {worst:.3g})"
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=60)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    counts: dict[str, list[int]] = {}
    t0 = time.perf_counter()
    for trial in range(args.trials):
        S, y, w, method = draw(rng)
        if y.min() == y.max() or any(np.unique(S[:, j]).size < 2 for j in range(S.shape[1])):
            continue
        if method in ("mrmic", "rpr") and S.shape[0] > 3000:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                problem = check(S, y, w, method)
            except Exception as err:  # noqa: BLE001 - every failure is reported
                problem = f"{type(err).__name__}: {err}"[:160]
        row = counts.setdefault(method, [0, 0])
        row[0] += 1
        if problem:
            row[1] += 1
            print(f"trial {trial} {method} n={S.shape[0]} M={S.shape[1]}: {problem}", flush=True)
    rows = [[k, str(v[0]), str(v[1])] for k, v in sorted(counts.items())]
    print(f"\n{sum(v[0] for v in counts.values())} fits in {time.perf_counter() - t0:.0f} s\n")
    print(table(["method", "trials", "failures"], rows))


if __name__ == "__main__":
    main()
