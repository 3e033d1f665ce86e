"""BernsteinFusion's default model against LR on logits, on the scores of realistic scorers.

Usage::

    FUSION_DATA_DIR=... python benchmarks/bench_bernstein_realistic.py \\
        [--datasets adult covertype] [--n-fuse 500 2000 10000] [--seeds 0 1 2] \\
        [--configs sharp tied weak m3 m4] [--methods default lr rank] [--cache DIR]

For every data set and seed the rows are shuffled and split into a scorer-training part, a
pool for the fusion samples and a large test part. Five scorers are trained once per data set
and seed (their test and pool scores are cached in ``--cache``): HistGradientBoosting
("hgb", sharp and calibrated), an MLP without early stopping or weight decay ("mlp",
overfitted, overconfident), a random forest ("rf", tied probabilities including exact 0 and
1), Gaussian naive Bayes ("gnb", saturated), and two weak scorers on a few low-signal
features with many distinct values: a logistic regression on two ("weak") and 25 nearest
neighbours on three others ("knn", 26 distinct probabilities). Configurations
(``--configs``): ``sharp`` hgb + mlp, ``tied`` rf + gnb, ``weak`` weak + knn, ``m3`` hgb +
mlp + gnb, ``m4`` hgb + mlp + rf + gnb. Each fusion method is fitted
on the first ``n`` rows of the pool (the scorers' probabilities) and scored on the test part.

Methods: ``default`` ``BernsteinFusion()``; ``lr`` LogisticRegression() on the logits of the
probabilities clipped to ``[1e-6, 1 - 1e-6]``; ``rank`` ``BernsteinFusion(base=None)``.

Output: per cell (data set, configuration, n) the mean Brier score, log-loss and ECE (10
equal-width bins) of every method, and the paired difference to ``lr`` over the seeds (mean
and sd); a method is *clearly worse* than ``lr`` in a cell when it is worse on every seed
and the mean gap exceeds the sd of the paired differences. A summary counts those cells.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.special import logit

METRICS = ("brier", "logloss", "ece")
SCORERS = ("hgb", "mlp", "rf", "gnb", "weak", "knn")
CONFIGS = {
    "sharp": ("hgb", "mlp"),
    "tied": ("rf", "gnb"),
    "weak": ("weak", "knn"),
    "m3": ("hgb", "mlp", "gnb"),
    "m4": ("hgb", "mlp", "rf", "gnb"),
}
#: rows for the scorers' training, the fusion pool and the test part, per data set
SPLITS = {
    "adult": (15_000, 10_000, 23_000),
    "covertype": (20_000, 10_000, 50_000),
    "census": (30_000, 10_000, 50_000),
    "dota2": (30_000, 10_000, 50_000),
    "susy": (3_000, 3_000, 4_000),
}


def _encode(X):
    """Numeric matrix for the scorers that need one: one-hot categories, standardized."""
    import pandas as pd

    cats = [c for c in X.columns if str(X[c].dtype) == "category"]
    Xn = pd.get_dummies(X, columns=cats, dummy_na=False, dtype=float) if cats else X
    Xn = Xn.to_numpy(dtype=float)
    Xn = np.nan_to_num(Xn)
    return Xn


def train_scorers(name: str, seed: int, cache: Path) -> dict:
    """Pool and test probabilities of every scorer, and the labels (cached per scorer)."""
    path = cache / f"{name}-{seed}.npz"
    out = {}
    if path.exists():
        with np.load(path) as f:
            out = dict(f)
    if all(f"{k}_test" in out for k in SCORERS):
        return out
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    from fusion.datasets import load

    ds = load(name, download_if_missing=False)
    n_tr, n_pool, n_te = SPLITS[name]
    rng = np.random.default_rng(seed)
    order = rng.permutation(ds.X.shape[0])[: n_tr + n_pool + n_te]
    X = ds.X.iloc[order].reset_index(drop=True)
    y = np.asarray(ds.y)[order]
    Xn = _encode(X)
    tr, pool, te = np.split(np.arange(order.shape[0]), [n_tr, n_tr + n_pool])
    scaler = StandardScaler().fit(Xn[tr])
    Xs = scaler.transform(Xn)
    out.update({"y_pool": y[pool], "y_test": y[te]})
    # weak scorers use a few low-signal features with many distinct values (no indicators)
    many = [j for j in range(Xs.shape[1]) if np.unique(Xs[tr[:2000], j]).shape[0] >= 20]
    if len(many) < 5:  # indicator features only (dota2): take them all
        many = list(range(Xs.shape[1]))
    corr = np.nan_to_num(np.abs([np.corrcoef(Xs[tr, j], y[tr])[0, 1] for j in many]))
    ranked = [many[j] for j in np.argsort(corr)]  # least correlated first
    half = len(ranked) // 2
    weak_cols = ranked[max(0, half - 2) : half]  # two of middling (weak) signal
    knn_cols = ranked[half : half + 3]
    hgb = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=seed)
    models = {
        "hgb": (hgb, X),
        "mlp": (
            MLPClassifier(
                hidden_layer_sizes=(256, 256), alpha=1e-6, max_iter=200, random_state=seed
            ),
            Xs,
        ),
        "rf": (RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1), Xs),
        "gnb": (GaussianNB(), Xs),
        "weak": (LogisticRegression(), Xs[:, weak_cols]),
        "knn": (KNeighborsClassifier(n_neighbors=25), Xs[:, knn_cols]),
    }
    for key, (model, data) in models.items():
        if f"{key}_test" in out:
            continue
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Xtr = data.iloc[tr] if hasattr(data, "iloc") else data[tr]
            model.fit(Xtr, y[tr])
        for part, rows in (("pool", pool), ("test", te)):
            Xp = data.iloc[rows] if hasattr(data, "iloc") else data[rows]
            out[f"{key}_{part}"] = model.predict_proba(Xp)[:, 1]
        took = time.perf_counter() - t
        print(f"    scorer {key} on {name} seed {seed}: {took:.1f} s", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, **out)
    return out


class LROnLogits:
    """LogisticRegression() on the logits of probabilities clipped to [1e-6, 1 - 1e-6]."""

    def fit(self, S, y):
        from sklearn.linear_model import LogisticRegression

        self.lr = LogisticRegression().fit(self._z(S), y)
        return self

    @staticmethod
    def _z(S):
        return logit(np.clip(S, 1e-6, 1 - 1e-6))

    def predict_proba(self, S):
        return self.lr.predict_proba(self._z(S))


def make_method(name: str):
    from fusion import BernsteinFusion

    if name == "default":
        return BernsteinFusion()
    if name == "lr":
        return LROnLogits()
    if name == "rank":
        return BernsteinFusion(base=None)
    if "=" in name:  # key=module:callable, a factory returning an unfitted model
        import importlib

        _, target = name.split("=", 1)
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)()
    raise ValueError(f"unknown method {name!r}")


def scores(y, p) -> dict:
    from fusion.metrics import binned_ece, brier_score, log_loss

    return {
        "brier": brier_score(y, p),
        "logloss": log_loss(y, p),
        "ece": binned_ece(y, p, n_bins=10),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["adult", "covertype"])
    ap.add_argument("--n-fuse", type=int, nargs="+", default=[500, 2000, 10_000])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS))
    ap.add_argument("--methods", nargs="+", default=["default", "lr", "rank"])
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/fusion-bench-scorers"))
    ap.add_argument(
        "--rank-max-n-m3",
        type=int,
        default=2_000,
        help="fit the rank-only model on M >= 3 configurations only up to this n (it takes "
        "minutes per fit beyond)",
    )
    args = ap.parse_args()
    cache = Path(args.cache)
    results = {}  # (ds, cfg, n, method, seed) -> metrics
    times = {}
    for ds in args.datasets:
        for seed in args.seeds:
            data = train_scorers(ds, seed, cache)
            for cfg in args.configs:
                cols = CONFIGS[cfg]
                for n in args.n_fuse:
                    S = np.column_stack([data[f"{c}_pool"][:n] for c in cols])
                    y = data["y_pool"][:n]
                    T = np.column_stack([data[f"{c}_test"] for c in cols])
                    for method in args.methods:
                        if method == "rank" and len(cols) >= 3 and n > args.rank_max_n_m3:
                            continue
                        model = make_method(method)
                        t = time.perf_counter()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            model.fit(S, y)
                        times[(ds, cfg, n, method, seed)] = time.perf_counter() - t
                        p = model.predict_proba(T)[:, 1]
                        results[(ds, cfg, n, method, seed)] = scores(data["y_test"], p)
                    print(
                        f"  {ds} seed {seed} {cfg} n={n}: "
                        + "  ".join(
                            f"{m} {results[(ds, cfg, n, m, seed)]['logloss']:.4f}"
                            f"/{results[(ds, cfg, n, m, seed)]['ece']:.4f}"
                            f" ({times[(ds, cfg, n, m, seed)]:.1f}s)"
                            for m in args.methods
                            if (ds, cfg, n, m, seed) in results
                        ),
                        flush=True,
                    )
    report(results, times, args)


def report(results, times, args) -> None:
    others = [m for m in args.methods if m != "lr"]
    print("\nMean over seeds; diff = method - lr (mean ± sd of the paired differences).")
    print("`W` marks clearly worse than lr, `B` clearly better.\n")
    head = "| data | config | n | " + " | ".join(
        f"{m} {k}" for k in METRICS for m in ["lr", *others]
    )
    print(head + " |")
    print("|" + "---|" * (3 + len(METRICS) * (1 + len(others))))
    worse = {m: dict.fromkeys(METRICS, 0) for m in others}
    better = {m: dict.fromkeys(METRICS, 0) for m in others}
    mean_metric = {m: {k: [] for k in METRICS} for m in args.methods}
    n_cells = 0
    for ds in args.datasets:
        for cfg in args.configs:
            for n in args.n_fuse:
                n_cells += 1
                cells = []
                for k in METRICS:
                    ref = np.array([results[(ds, cfg, n, "lr", s)][k] for s in args.seeds])
                    mean_metric["lr"][k].append(ref.mean())
                    cells.append(f"{ref.mean():.4f}")
                    for m in others:
                        if (ds, cfg, n, m, args.seeds[0]) not in results:
                            cells.append("-")
                            continue
                        v = np.array([results[(ds, cfg, n, m, s)][k] for s in args.seeds])
                        mean_metric[m][k].append(v.mean())
                        d = v - ref
                        sd = d.std(ddof=1) if len(d) > 1 else 0.0
                        flag = ""
                        if np.all(d > 0) and d.mean() > sd:
                            flag = " W"
                            worse[m][k] += 1
                        elif np.all(d < 0) and -d.mean() > sd:
                            flag = " B"
                            better[m][k] += 1
                        cells.append(f"{d.mean():+.4f}±{sd:.4f}{flag}")
                print(f"| {ds} | {cfg} | {n} | " + " | ".join(cells) + " |")
    print(f"\nCells: {n_cells}.")
    for m in others:
        print(
            f"{m}: clearly worse than lr in "
            + ", ".join(f"{k} {worse[m][k]}" for k in METRICS)
            + "; clearly better in "
            + ", ".join(f"{k} {better[m][k]}" for k in METRICS)
        )
    for m in args.methods:
        fit_t = [t for key, t in times.items() if key[3] == m]
        print(
            f"{m}: mean over cells "
            + ", ".join(f"{k} {np.mean(mean_metric[m][k]):.5f}" for k in METRICS)
            + f"; median fit {np.median(fit_t):.2f} s, max {np.max(fit_t):.1f} s"
        )


if __name__ == "__main__":
    main()
