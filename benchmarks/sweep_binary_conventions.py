"""Random binary configurations through ``fusion.fit``: no exception but a clear
``ValueError``, probabilities strictly inside (0, 1), bit-identical refits, the probability
non-decreasing in every score, weights that change nothing when scaled, a zero weight that
equals no row, and a reversed score read back (``increasing="auto"``). The default model
only, on the conventions a user relies on (``sweep_random_configs.py`` runs every method
on kinds of scores).

Usage::

    python benchmarks/sweep_binary_conventions.py [--trials 40] [--seed 2026] [--only T ...]

Each trial draws n (20 to 20,000 rows), M (1 to 5 scorers) of random quality and scale
given as raw scores, probabilities or logits (float32 in some), and in some trials: ties
(scores rounded), a constant scorer, two scorers the same, a scorer anti-aligned with the
label (it must be read reversed where a rank test is clear, p < 1e-6), scores of 1e6, a
rare positive class (1-5 %), random weights (some zero), missing scores (NaN, fitted with
``missing="marginal"``), string or boolean labels. Prints one line per failure and a
summary; exits 1 on any failure.
"""

from __future__ import annotations

import warnings

import numpy as np
from _common import run_sweep, weight_problems
from scipy.special import expit
from scipy.stats import mannwhitneyu

import fusion


def draw(rng):
    n = int(rng.choice([20, 60, 200, 1_000, 5_000, 20_000]))
    M = int(rng.integers(1, 6))
    z = rng.normal(size=n)
    rate = float(rng.choice([0.5, 0.2, 0.05, 0.01]))
    shift = np.log(rate / (1 - rate))
    y = (rng.random(n) < expit(1.5 * z + shift)).astype(int)
    cols = []
    for _ in range(M):
        quality = rng.uniform(0.1, 2.0)
        cols.append(quality * z + rng.normal(size=n) * rng.uniform(0.3, 1.5))
    S = np.stack(cols, axis=1) * rng.choice([0.1, 1.0, 10.0])
    quirk = str(rng.choice(["none"] * 4 + ["ties", "constant", "duplicate", "reversed",
                                             "huge"]))  # fmt: skip
    if quirk == "ties":
        S = np.round(S, 1)
    elif quirk == "constant" and M > 1:
        S[:, -1] = 0.25
    elif quirk == "duplicate" and M > 1:
        S[:, 1] = S[:, 0]
    elif quirk == "reversed":
        S[:, 0] = -S[:, 0] * 2.0
    elif quirk == "huge":
        S = S * 1e6
    kind = str(rng.choice(["raw", "probabilities", "logits", "float32"]))
    if kind == "probabilities":
        S = expit(S)
    elif kind == "float32":
        S = S.astype(np.float32)
    weights = rng.exponential(size=n) * (rng.random(n) > 0.1) if rng.random() < 0.3 else None
    missing = rng.random() < 0.15
    if missing:
        S = S.astype(float)
        S[rng.random(S.shape) < 0.05] = np.nan
    labels = str(rng.choice(["int", "int", "str", "bool"]))
    return dict(n=n, M=M, S=S, y=y, quirk=quirk, kind=kind, w=weights, missing=missing,
                labels=labels)  # fmt: skip


def trial(cfg, rng) -> list[str]:
    problems = []
    S, n = cfg["S"], cfg["n"]
    y = cfg["y"]
    if cfg["labels"] == "str":
        y = np.array(["neg", "pos"])[y]
    elif cfg["labels"] == "bool":
        y = y.astype(bool)
    kw = {"missing": "marginal"} if cfg["missing"] else {}
    w = cfg["w"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = fusion.fit(S, y, sample_weight=w, **kw)
        except ValueError as err:  # a clear refusal is allowed; say which
            return [f"refused: {err}"[:160]]
        P = model.predict_proba(S)
        if P.shape != (n, 2) or not np.all(np.isfinite(P)):
            return [f"predictions of shape {P.shape}, finite {np.isfinite(P).all()}"]
        if P.min() <= 0 or P.max() >= 1:
            problems.append(f"probabilities outside (0, 1): {P.min():.3g} {P.max():.3g}")
        again = fusion.fit(S, y, sample_weight=w, **kw).predict_proba(S)
        if not np.array_equal(P, again):
            problems.append(f"refit differs by {np.nanmax(np.abs(P - again)):.2g}")
        # monotone in every score (in the direction the model reads it)
        direction = np.asarray(getattr(model, "increasing_", [True] * cfg["M"]), dtype=bool)
        rows = rng.choice(n, size=min(n, 100), replace=False)
        base = np.nan_to_num(S[rows].astype(np.float64), nan=0.0)
        for m in range(cfg["M"]):
            finite = base[:, m][np.isfinite(base[:, m])]
            lo, hi = float(np.min(finite)), float(np.max(finite))
            grid = np.linspace(lo - 0.1 * (hi - lo + 1e-9), hi + 0.1 * (hi - lo + 1e-9), 25)
            if cfg["kind"] == "probabilities":
                grid = np.clip(grid, 1e-9, 1 - 1e-9)
            X = np.repeat(base[:10], grid.size, axis=0)
            X[:, m] = np.tile(grid, 10)
            p = model.predict_proba(X.astype(S.dtype))[:, 1].reshape(10, grid.size)
            step = np.diff(p, axis=1) * (1 if direction[m] else -1)
            if step.min() < -1e-12:
                problems.append(f"P(positive) fell by {-step.min():.2g} along score {m}")
        if cfg["quirk"] == "reversed" and direction[0]:  # "auto" flips only on evidence
            s0, pos = S[:, 0].astype(float), np.asarray(cfg["y"]) == 1
            ok = np.isfinite(s0)
            p = mannwhitneyu(s0[ok & pos], s0[ok & ~pos], alternative="less").pvalue
            if p < 1e-6:
                problems.append(f"score 0, reversed (rank test p = {p:.1g}), read as increasing")
        if w is not None:  # weights: scaled, and zero weights as no rows
            problems += weight_problems(S, y, kw, P, w)
    return problems


def describe(t: int, cfg) -> str:
    return (f"trial {t}: n={cfg['n']} M={cfg['M']} {cfg['kind']} quirk={cfg['quirk']} "
            f"weights={cfg['w'] is not None} missing={cfg['missing']} "
            f"labels={cfg['labels']} positives={int(cfg['y'].sum())}")  # fmt: skip


def main() -> int:
    return run_sweep(__doc__.split("\n")[0], draw, trial, describe)


if __name__ == "__main__":
    raise SystemExit(main())
