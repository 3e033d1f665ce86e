"""Random multi-class configurations through ``fusion.fit``: no exception, rows that are
distributions strictly inside (0, 1), bit-identical refits, every class's probability
non-decreasing in every network's score for that class, logits / log-probabilities /
shifted logits of the same networks giving the same predictions (to 1e-6), and weights
that change nothing when scaled and a zero weight that equals no row (to 1e-8).

Usage::

    python benchmarks/sweep_multiclass_configs.py [--trials 40] [--seed 2026]

Each trial draws n (30 to 8,000 rows), C (3 to 120 classes), M (1 to 4 networks), networks of
random sharpness and quality given as logits, probabilities (with exact zeros in some) or
float32 (in some trials two networks the same, a constant one, logits of 1e3, or one giving
hard labels), random weights (some zero) in 30 % of the trials, a class absent from the labels in
20 %, string labels in 20 %. Prints one line per failure and a summary.
"""

from __future__ import annotations

import warnings

import numpy as np
from _common import run_sweep, weight_problems
from scipy.special import log_softmax, softmax

import fusion


def draw(rng):
    n = int(rng.choice([30, 60, 150, 400, 1_000, 3_000, 8_000]))
    C = int(rng.choice([3, 5, 10, 20, 50, 120]))
    M = int(rng.integers(1, 5))
    signal = rng.normal(size=(n, C))
    y = (signal * 3 + rng.gumbel(size=(n, C))).argmax(axis=1)
    nets = []
    for _ in range(M):
        quality, temp = rng.uniform(0.2, 2.0), rng.choice([0.3, 1.0, 3.0, 10.0])
        L = quality * signal * 3 + rng.normal(size=(n, C))
        nets.append(L * temp)
    L = np.stack(nets, axis=1)
    quirk = str(rng.choice(["none"] * 4 + ["duplicate", "constant", "huge", "onehot"]))
    if quirk == "duplicate" and M > 1:  # two networks the same
        L[:, 1] = L[:, 0]
    elif quirk == "constant":  # a network that says nothing
        L[:, -1] = 0.0
    elif quirk == "huge":  # logits of 1e3: probabilities of exactly 0 and 1 in float64
        L = L * 300.0
    elif quirk == "onehot":  # a network that gives hard labels
        L[:, -1] = np.where(L[:, -1] == L[:, -1].max(axis=1, keepdims=True), 50.0, -50.0)
    kind = str(rng.choice(["logits", "probabilities", "zeros", "float32"]))
    weights = rng.exponential(size=n) * (rng.random(n) > 0.1) if rng.random() < 0.3 else None
    absent = rng.random() < 0.2
    if absent:  # a class no row has: its labels moved to the next class
        gone = int(rng.integers(C))
        y[y == gone] = (gone + 1) % C
    strings = rng.random() < 0.2
    return dict(n=n, C=C, M=M, L=L, y=y, kind=kind, w=weights, absent=absent, strings=strings,
                quirk=quirk)  # fmt: skip


def scores(L, kind):
    if kind == "logits":
        return L
    P = softmax(L, axis=-1)
    if kind == "zeros":
        P = np.where(P < 1e-4, 0.0, P)
        P /= P.sum(axis=-1, keepdims=True)
    if kind == "float32":
        return P.astype(np.float32)
    return P


def trial(cfg, rng) -> list[str]:
    problems = []
    n, C = cfg["n"], cfg["C"]
    S = scores(cfg["L"], cfg["kind"])
    labels = np.array([f"c{k:03d}" for k in range(C)])
    y = labels[cfg["y"]] if cfg["strings"] else cfg["y"]
    kw = {"classes": labels if cfg["strings"] else np.arange(C)}
    if cfg["w"] is not None:
        kw["sample_weight"] = cfg["w"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = fusion.fit(S, y, **kw)
        except ValueError as err:  # a clear refusal is allowed; say which
            return [f"refused: {err}"[:160]]
        P = model.predict_proba(S)
        if not np.all(np.isfinite(P)) or P.min() <= 0 or P.max() >= 1:
            problems.append(f"probabilities outside (0, 1): {P.min():.3g} {P.max():.3g}")
        if np.abs(P.sum(axis=1) - 1).max() > 1e-9:
            problems.append("rows do not sum to 1")
        again = fusion.fit(S, y, **kw).predict_proba(S)
        if not np.array_equal(P, again):
            problems.append(f"refit differs by {np.abs(P - again).max():.2g}")
        # monotone: raise one network's score for one class in 200 rows
        rows = rng.choice(n, size=min(n, 200), replace=False)
        m, k = int(rng.integers(cfg["M"])), int(rng.integers(C))
        base = S[rows].astype(np.float64)
        up = base.copy()
        if cfg["kind"] == "logits":
            up[:, m, k] += 0.05
        else:
            up[:, m, k] = np.minimum(up[:, m, k] * 1.05 + 1e-4, 1.0)
        drop = (
            model.predict_proba(base.astype(S.dtype))[:, k]
            - model.predict_proba(up.astype(S.dtype))[:, k]
        )
        if drop.max() > 1e-12:
            problems.append(f"class {k} fell by {drop.max():.2g} as network {m}'s score rose")
        w = cfg["w"]
        if w is not None:  # weights: scaled, and zero weights as no rows
            problems += weight_problems(S, y, kw, P, w)
        if cfg["kind"] == "logits":  # one input: log-probabilities and shifted logits
            for name, T in (("log-probabilities", log_softmax(S, axis=-1)), ("shifted", S + 3.7)):
                Q = fusion.fit(T, y, **kw).predict_proba(T)
                if np.abs(P - Q).max() > 1e-6:
                    problems.append(f"{name} differ by {np.abs(P - Q).max():.2g}")
    return problems


def describe(t: int, cfg) -> str:
    return (f"trial {t}: n={cfg['n']} C={cfg['C']} M={cfg['M']} {cfg['kind']} "
            f"quirk={cfg['quirk']} weights={cfg['w'] is not None} absent={cfg['absent']} "
            f"strings={cfg['strings']}")  # fmt: skip


def main() -> int:
    return run_sweep(__doc__.split("\n")[0], draw, trial, describe)


if __name__ == "__main__":
    raise SystemExit(main())
