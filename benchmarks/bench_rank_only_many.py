"""The rank-only model (``BernsteinFusion(base=None)``) at M >= 3 (issue 23 item 3).

Run from the repository root (Covertype through ``FUSION_DATA_DIR`` or ``--data-dir``, see
:mod:`fusion.datasets`), one BLAS thread on both sides::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_rank_only_many.py \\
        [--repeats 3] [--seeds 0 1] [--tables speed truths] [--budgets 256 512]
        [--with-tensor]

``speed``: Covertype (label: Lodgepole Pine), M = 4 scorers (HistGradientBoosting and kNN on
the terrain columns, random forest and logistic regression on all columns) and M = 6 (the
same plus Gaussian naive Bayes and an overfit MLP on the soil/area columns), each trained on
its own 10,000 (MLP: 5,000) rows, disjoint from 10,000 fusion rows and 50,000 test rows
(benchmarks/scenarios_lib; the scores are cached in ``benchmarks/.cache/scores``). M = 3
is the first three scorers of M = 4. Fit seconds of ``BernsteinFusion(base=None)`` and of
``LogisticRegressionCV()`` on the logits of the same scores (clipped to ``[1e-6, 1 - 1e-6]``),
the two fits alternating ``--repeats`` times (medians, and the median of the paired ratios);
held-out Brier score and log-loss of both and of the default ``BernsteinFusion()``.
``--with-tensor`` adds ``structure="tensor"`` at M = 3 and 4 (what ``"auto"`` meant before:
minutes).

``truths``: known truths at M = 3, 4 and 6 (standard normal scores sharing one latent
factor, correlation 0.3; n = 10,000; L2 distance to the true probability on 20,000 fresh
rows), three seeds: the structure and degree that ``structure="auto"`` picks with a budget
of :data:`~fusion.bernstein.plan.RANK_ONLY_AUTO_COEFFICIENTS` coefficients (256) and
with the other ``--budgets``, ``structure="additive"``, logistic regression on the scores,
and (M = 3) the tensor over the whole degree grid (the former ``"auto"``).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
from _common import table
from scipy.special import expit, logit, ndtr

from fusion import BernsteinFusion
from fusion.bernstein import plan as bernstein_plan
from fusion.metrics import brier_score

#: Covertype scorers (kind, feature set, training rows) of M = 4 (the scenario benchmark's
#: ``covertype_m4``) and M = 6.
SCORERS = {
    4: [("hgb", "terrain", 10_000), ("rf", "all", 10_000), ("knn", "terrain", 10_000)]
    + [("lr", "all", 10_000)],
}
SCORERS[6] = SCORERS[4] + [("gnb", "all", 10_000), ("mlp_overfit", "soil_area", 5_000)]


def covertype_scores(M: int, seed: int, data_dir: str | None):
    """Fusion and test scores of ``M`` Covertype scorers (cached)."""
    from scenarios_lib.catalog import Scenario, ScorerSpec
    from scenarios_lib.scores import cached_scores

    from fusion.datasets import load

    specs = tuple(ScorerSpec(*spec) for spec in SCORERS[M])
    scenario = Scenario(f"rank_only_covertype_m{M}", "covertype", f"M={M}", specs, (10_000,))
    cache = Path(__file__).resolve().parent / ".cache" / "scores"
    scores, _ = cached_scores(scenario, seed, cache, lambda name: load(name, data_home=data_dir))
    return scores.S_pool, scores.y_pool, scores.S_test, scores.y_test


def log_loss(y: np.ndarray, p: np.ndarray) -> float:
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def describe(model: BernsteinFusion) -> str:
    """Structure, degree and coefficient count of a fitted model."""
    comps = model.components_
    if len(comps) == 1:
        structure = "tensor"
    else:
        structure = "additive" if all(len(c) == 1 for c in comps) else "pairwise"
    return f"{structure} {model.degree_[0]} ({model.coef_.size})"


def fit_quietly(model, S, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # grid-edge warnings; scikit-learn's FutureWarnings
        return model.fit(S, y)


def speed_table(args) -> str:
    from sklearn.linear_model import LogisticRegressionCV

    rows = []
    for M, seed in [(M, s) for M in (3, 4, 6) for s in args.seeds]:
        S, y, S_test, y_test = covertype_scores(6 if M == 6 else 4, seed, args.data_dir)
        S, S_test = S[:, :M], S_test[:, :M]
        Z, Z_test = (logit(np.clip(a, 1e-6, 1 - 1e-6)) for a in (S, S_test))
        ours, ref = BernsteinFusion(base=None), LogisticRegressionCV()
        t_ours, t_ref = [], []
        for _ in range(args.repeats):  # alternating: both see the same machine load
            t = time.perf_counter()
            fit_quietly(ours, S, y)
            t_ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            fit_quietly(ref, Z, y)
            t_ref.append(time.perf_counter() - t)
        ratio = float(np.median(np.array(t_ours) / np.array(t_ref)))
        t = time.perf_counter()
        default = fit_quietly(BernsteinFusion(), S, y)
        t_default = time.perf_counter() - t
        p = {
            "rank-only": ours.predict_proba(S_test)[:, 1],
            "LRCV": ref.predict_proba(Z_test)[:, 1],
            "default": default.predict_proba(S_test)[:, 1],
        }
        row = [
            str(M),
            str(seed),
            f"{np.median(t_ours):.2f}",
            f"{np.median(t_ref):.3f}",
            f"{ratio:.1f}x",
            describe(ours),
        ]
        row += [f"{brier_score(y_test, p[k]):.5f}" for k in p]
        row += [f"{log_loss(y_test, p[k]):.4f}" for k in p]
        row.append(f"{t_default:.2f}")
        rows.append(row)
        print("  " + " | ".join(row), flush=True)
        if args.with_tensor and M <= 4:
            t = time.perf_counter()
            tensor = fit_quietly(BernsteinFusion(base=None, structure="tensor"), S, y)
            seconds = time.perf_counter() - t
            q = tensor.predict_proba(S_test)[:, 1]
            print(
                f"  M={M} seed={seed} structure='tensor' (former auto): {seconds:.1f} s, "
                f"{describe(tensor)}, Brier {brier_score(y_test, q):.5f}, "
                f"log-loss {log_loss(y_test, q):.4f}",
                flush=True,
            )
    header = ["M", "seed", "rank-only s", "LRCV s", "ratio", "picked (coefficients)"]
    header += [f"Brier {k}" for k in ("rank-only", "LRCV", "default")]
    header += [f"log-loss {k}" for k in ("rank-only", "LRCV", "default")]
    header.append("default s")
    return table(header, rows)


TRUTHS = ("additive", "pair", "product", "logistic")


def simulate(truth: str, n: int, M: int, seed: int):
    """Scores with a shared factor and labels from a known, monotone truth."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, M)) * np.sqrt(0.7) + rng.normal(size=(n, 1)) * np.sqrt(0.3)
    if truth == "additive":  # curved in every score, no interaction
        p = 0.05 + 0.9 * ndtr(2 * z).mean(1)
    elif truth == "pair":  # scores 0 and 1 act together, the rest additively
        p = 0.05 + 0.9 * (0.5 * ndtr(1.5 * z[:, 0]) * ndtr(1.5 * z[:, 1]))
        p += 0.9 * 0.5 * ndtr(z[:, 2:]).mean(1)
    elif truth == "product":  # every score matters through a product (bench_many_scorers)
        p = 0.05 + 0.9 * np.prod(ndtr(z + 0.8) ** (2.0 / M), axis=1)
    else:  # logistic in the sum of the scores
        p = expit(1.5 * z.sum(1) / np.sqrt(M) - 0.5)
    return z, (rng.random(n) < p).astype(int), p


def truths_table(args) -> str:
    from sklearn.linear_model import LogisticRegression

    budget = bernstein_plan.RANK_ONLY_AUTO_COEFFICIENTS
    variants = [(f"auto (budget {b})", {}, b) for b in args.budgets]
    variants.append(("additive", {"structure": "additive"}, budget))
    rows = []
    for M in (3, 4, 6):
        for truth in TRUTHS:
            cells = {}
            for seed in range(3):
                S, y, _ = simulate(truth, args.n, M, seed)
                S_test, _, p_test = simulate(truth, 20_000, M, 1_000 + seed)
                runs = list(variants)
                if M == 3:
                    runs.append(("tensor, whole grid (former auto)", {"structure": "tensor"}, 0))
                for name, params, b in runs:
                    bernstein_plan.RANK_ONLY_AUTO_COEFFICIENTS = b
                    t = time.perf_counter()
                    model = fit_quietly(BernsteinFusion(base=None, **params), S, y)
                    seconds = time.perf_counter() - t
                    p = model.predict_proba(S_test)[:, 1]
                    l2 = float(np.sqrt(np.mean((p - p_test) ** 2)))
                    cells.setdefault(name, []).append((l2, seconds, describe(model)))
                bernstein_plan.RANK_ONLY_AUTO_COEFFICIENTS = budget
                lr = LogisticRegression().fit(S, y)
                l2 = float(np.sqrt(np.mean((lr.predict_proba(S_test)[:, 1] - p_test) ** 2)))
                cells.setdefault("LR on the scores", []).append((l2, 0.0, "linear"))
            for name, vals in cells.items():
                row = [
                    str(M),
                    truth,
                    name,
                    f"{np.mean([v[0] for v in vals]):.4f}",
                    f"{np.mean([v[1] for v in vals]):.2f}" if name[:2] != "LR" else "",
                    ", ".join(v[2] for v in vals),
                ]
                rows.append(row)
                print("  " + " | ".join(row), flush=True)
    header = ["M", "truth", "model", "L2 to truth", "fit s", "picked per seed (coefficients)"]
    return table(header, rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--n", type=int, default=10_000, help="rows of the known-truth fits")
    ap.add_argument(
        "--budgets",
        type=int,
        nargs="+",
        default=[256, 512],
        help="RANK_ONLY_AUTO_COEFFICIENTS values compared in the truths table",
    )
    ap.add_argument("--tables", nargs="+", default=["speed", "truths"])
    ap.add_argument("--data-dir", default=None, help="directory holding covtype.csv.gz")
    ap.add_argument("--with-tensor", action="store_true")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}", flush=True)
    out = []
    if "speed" in args.tables:
        out.append(speed_table(args))
    if "truths" in args.tables:
        out.append(truths_table(args))
    print(f"load average at end: {os.getloadavg()}\n")
    print("\n\n".join(out))


if __name__ == "__main__":
    main()
