"""FusionClassifier against StackingClassifier and CalibratedClassifierCV on real data (issue 16).

Run from the repository root (the data sets are read through ``fusion.datasets``)::

    FUSION_DATA_DIR=<data dir> OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/bench_classifier.py

For each data set and seed: a random training sample (``--n-train`` rows) and a disjoint
held-out sample (``--n-test`` rows); three base classifiers (logistic regression on one-hot
and standardized features, histogram gradient boosting, a random forest); the same
``StratifiedKFold(--folds, shuffle=True, random_state=seed)`` folds for every method:

* ``FusionClassifier``: default fusion method and parameters (``FusionClassifier(bases)``);
* ``StackingClassifier``: the same bases, ``final_estimator=LogisticRegression()``;
* ``CalibratedClassifierCV`` (isotonic, and sigmoid) on the best single base, chosen by
  out-of-fold ROC AUC on the training sample (ranking: what calibration cannot change). The
  out-of-fold scores come from the FusionClassifier run (``fit_transform``), so choosing costs
  no extra fits and is not counted in any fit time;
* the best base refitted on all training rows, uncalibrated (for reference).

Held-out log-loss, Brier score, ECE (15 equal-width bins, weighted by bin size) and ROC AUC;
fit wall-clock time of each method in the same process (``n_jobs=None``). Tables: mean and
standard deviation over seeds.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
from _common import table
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    StackingClassifier,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

import fusion
from fusion import FusionClassifier
from fusion.datasets import load
from fusion.metrics import binned_ece, brier_score, log_loss

ECE_BINS = 15
METHODS = (
    "FusionClassifier",
    "StackingClassifier (logistic)",
    "CalibratedClassifierCV isotonic (best base)",
    "CalibratedClassifierCV sigmoid (best base)",
    "best base, uncalibrated",
)


def base_estimators(categorical: list[str], numeric: list[str], seed: int) -> list:
    """Three different learners, each taking the raw DataFrame."""
    # An empty column list is skipped by ColumnTransformer (covertype has no categoricals).
    one_hot = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore"), categorical),
            ("num", StandardScaler(), numeric),
        ]
    )
    unknown = {"handle_unknown": "use_encoded_value", "unknown_value": -1}
    ordinal = ColumnTransformer(
        [("cat", OrdinalEncoder(**unknown), categorical), ("num", "passthrough", numeric)]
    )
    return [
        ("logreg", Pipeline([("pre", one_hot), ("lr", LogisticRegression(max_iter=2000))])),
        (
            "hgb",
            HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=seed),
        ),
        (
            "forest",
            Pipeline(
                [
                    ("pre", ordinal),
                    (
                        "rf",
                        RandomForestClassifier(
                            n_estimators=100, min_samples_leaf=3, random_state=seed
                        ),
                    ),
                ]
            ),
        ),
    ]


def metrics(y: np.ndarray, p: np.ndarray) -> dict:
    return {
        "log-loss": log_loss(y, p),
        "Brier": brier_score(y, p),
        "ECE": binned_ece(y, p, n_bins=ECE_BINS),
        "AUC": float(roc_auc_score(y, p)),
    }


def timed_fit(estimator, X, y):
    start = time.perf_counter()
    estimator.fit(X, y)
    return estimator, time.perf_counter() - start


def run_one(name: str, seed: int, n_train: int, n_test: int, folds: int) -> list[dict]:
    data = load(name)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(data.y.shape[0])
    train, test = perm[:n_train], perm[n_train : n_train + n_test]
    X, y = data.X.iloc[train], data.y[train]
    X_test, y_test = data.X.iloc[test], data.y[test]
    categorical = [c for c in data.X.columns if c in set(data.categorical)]
    numeric = [c for c in data.X.columns if c not in set(data.categorical)]
    bases = base_estimators(categorical, numeric, seed)
    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)

    rows = []

    def record(method, estimator, seconds, extra=""):
        p = estimator.predict_proba(X_test)[:, 1]
        rows.append(
            {"data": name, "seed": seed, "method": method, "fit s": seconds, "note": extra}
            | metrics(y_test, p)
        )

    fused = FusionClassifier(bases, cv=cv, passthrough_scores=True)
    start = time.perf_counter()
    oof = fused.fit_transform(X, y)
    record(METHODS[0], fused, time.perf_counter() - start)
    # The share of the fusion step: the same fit again on the out-of-fold scores.
    start = time.perf_counter()
    fusion.fit(oof[:, 1:], y, method=fused.method, random_state=fused.random_state)
    rows[-1]["fusion s"] = time.perf_counter() - start

    stacking, seconds = timed_fit(
        StackingClassifier(bases, final_estimator=LogisticRegression(), cv=cv), X, y
    )
    record(METHODS[1], stacking, seconds)

    oof_auc = [roc_auc_score(y, oof[:, 1 + j]) for j in range(len(bases))]
    best = int(np.argmax(oof_auc))
    best_name, best_base = bases[best]
    for method, how in zip(METHODS[2:4], ("isotonic", "sigmoid"), strict=True):
        calibrated, seconds = timed_fit(
            CalibratedClassifierCV(clone(best_base), method=how, cv=cv), X, y
        )
        record(method, calibrated, seconds, best_name)
    # The same base refitted on all training rows (FusionClassifier already did that fit).
    record(METHODS[4], fused.estimators_[best], float("nan"), best_name)
    return rows


def summarize(rows: list[dict]) -> str:
    import pandas as pd

    df = pd.DataFrame(rows)
    stacking = df[df.method == METHODS[1]].set_index(["data", "seed"])["fit s"]
    keys = list(zip(df.data, df.seed, strict=True))
    df["fit / stacking"] = df["fit s"].to_numpy() / stacking.loc[keys].to_numpy()
    out = []
    for name, block in df.groupby("data", sort=False):
        n_seeds = block.seed.nunique()
        chosen = block[block.method == METHODS[2]].note.value_counts()
        chosen = ", ".join(f"{b} {k}x" for b, k in chosen.items())
        out.append(f"#### {name} ({n_seeds} seeds; best base by out-of-fold AUC: {chosen})\n")
        body = []
        for method in METHODS:
            m = block[block.method == method]
            cells = [method]
            for col in ("log-loss", "Brier", "ECE", "AUC"):
                cells.append(f"{m[col].mean():.4f} ± {m[col].std(ddof=1):.4f}")
            fitted = m["fit s"].notna().all()
            cells.append(f"{m['fit s'].median():.1f}" if fitted else "-")
            cells.append(
                f"{m['fusion s'].median():.1f}"
                if "fusion s" in m and m["fusion s"].notna().all()
                else "-"
            )
            cells.append(f"{m['fit / stacking'].median():.2f}" if fitted else "-")
            body.append(cells)
        header = ["method", "log-loss", "Brier", "ECE (15 bins)", "AUC"]
        out.append(table(header + ["fit s", "of which fusion s", "fit / stacking"], body))
        ours = block[block.method == METHODS[0]].set_index("seed")
        wins = []
        for method in METHODS[1:]:
            other = block[block.method == method].set_index("seed")
            cells = [method]
            for col in ("log-loss", "Brier", "ECE"):
                cells.append(f"{int((ours[col] < other[col]).sum())}/{n_seeds}")
            wins.append(cells)
        out.append("\nSeeds where FusionClassifier is lower (better) than the peer:\n")
        out.append(table(["peer", "log-loss", "Brier", "ECE"], wins) + "\n")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["adult", "covertype", "census"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--n-train", type=int, default=5_000)
    parser.add_argument("--n-test", type=int, default=20_000)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)

    rows = []
    for name in args.datasets:
        for seed in args.seeds:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                rows += run_one(name, seed, args.n_train, args.n_test, args.folds)
            print(f"{name} seed {seed}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    print(
        f"n_train = {args.n_train:,}, n_test = {args.n_test:,}, {args.folds} folds, "
        f"seeds {args.seeds}\n"
    )
    print(summarize(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
