"""Rank-based methods under a strictly increasing transform, at new scores (issue 28, item 6).

Run from the repository root::

    OMP_NUM_THREADS=1 python benchmarks/bench_rank_invariance.py

Each rank-based method (BernsteinFusion's rank-only model, CopulaFusion, MR-MIC, RPR, ENIR)
is fitted twice on the same labels: on two probability-valued scores and on their logits.
Prints, per method, the largest difference of the predicted probabilities at the training
scores and at 2,000 new scores (the same new probabilities and their logits). The method's
predictions depend on the scores only through their ECDF values, so both should be 0.
Run with another checkout on ``PYTHONPATH`` to compare versions.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit, logit

import fusion

#: (method, parameters, training rows) of every fit.
CASES = [
    ("bernstein", {"base": None, "degree": 4}, 10_000),
    ("bernstein", {"base": None}, 500),
    ("copula", {}, 500),
    ("mrmic", {}, 500),
    ("rpr", {}, 500),
    ("enir", {}, 500),
]


def probabilities(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two noisy probability scores of a logistic truth, and the labels."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    y = (rng.random(n) < expit(1.5 * z)).astype(int)
    return expit(z[:, None] + rng.normal(size=(n, 2))), y


def main() -> None:
    warnings.simplefilter("ignore")
    print("| method | parameters | n | max diff, training scores | max diff, new scores |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, params, n in CASES:
        S, y = probabilities(n, 0)
        X, _ = probabilities(2000, 1)
        a = fusion.fit(S, y, method=name, **params)
        b = fusion.fit(logit(S), y, method=name, **params)
        train = np.abs(a.predict_proba(S) - b.predict_proba(logit(S))).max()
        new = np.abs(a.predict_proba(X) - b.predict_proba(logit(X))).max()
        print(f"| {name} | {params} | {n:,} | {train:.2g} | {new:.2g} |")


if __name__ == "__main__":
    main()
