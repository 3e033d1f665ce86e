"""FusionClassifier against StackingClassifier and CalibratedClassifierCV (issues 16 and 23).

Run from the repository root (the data sets are read through ``fusion.datasets``)::

    FUSION_DATA_DIR=<data dir> OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/bench_classifier.py

For each task and seed: a random training sample (``--n-train`` rows) and a disjoint
held-out sample (``--n-test`` rows); three base classifiers (``--bases lr-hgb-rf``, issue 16:
logistic regression on one-hot and standardized features, histogram gradient boosting, a
random forest; ``--bases nb-hgb-lr``, issue 23: Gaussian naive Bayes and logistic regression
on one-hot and standardized features, histogram gradient boosting); the same
``StratifiedKFold(--folds, shuffle=True, random_state=seed)`` folds for every method.
A task is a data set of :mod:`fusion.datasets` or a scikit-learn one (``breast_cancer``;
``mc6k``: ``mc20k``'s generator with 6,000 rows (issue 28: a redundant-base task at a
size where a negative weight is harder to establish); ``mc12k``:
``make_classification(n_samples=12000, n_informative=8, flip_y=0.05, class_sep=0.8)``;
``mc20k``: ``make_classification(n_samples=20000, n_features=30, n_informative=10,
n_redundant=5, flip_y=0.02, class_sep=0.6)``, a new draw per seed); a scikit-learn task
smaller than ``--n-train + --n-test`` rows is split 75 / 25.

* ``FusionClassifier``: default fusion method and parameters (``FusionClassifier(bases)``;
  since issue 28 ``increasing="conditional"``: a base model is reversed where its weight in a
  logistic regression on the out-of-fold scores is significantly negative);
* ``StackingClassifier``: the same bases, ``final_estimator=LogisticRegression()``;
* ``StackingClassifier (non-negative logistic)``: the same with a logistic regression whose
  weights are non-negative (``NonNegativeLogisticRegression`` below): stacking that keeps
  the fused probability rising with every base model's, the yardstick of a monotone fusion
  where plain stacking wins through negative weights;
* ``FusionClassifier, increasing='auto'``: the default before issue 28, every score
  non-decreasing unless significantly anti-aligned on its own; and ``FusionClassifier,
  sign only``: the directions from the signs alone of a logistic regression on all
  out-of-fold scores (issue 23's opt-in ``"conditional"``, before the significance rule of
  issue 28). Both are the same fusion refitted on the default's out-of-fold scores with only
  ``increasing`` changed, scoring the held-out rows with the same refitted bases (what a
  full ``FusionClassifier`` fit with that ``increasing`` gives, bit for bit); their fit time
  is not measured;
* (``--peers all`` only) ``CalibratedClassifierCV`` (isotonic, and sigmoid) on the best
  single base, chosen by out-of-fold ROC AUC on the training sample (ranking: what
  calibration cannot change). The out-of-fold scores come from the FusionClassifier run
  (``fit_transform``), so choosing costs no extra fits and is not counted in any fit time;
* (``--peers all`` only) the best base refitted on all training rows, uncalibrated;
* (``--previous`` only) FusionClassifier with its defaults before issue 23,
  ``FusionClassifier(bases, structure="auto")``.

Held-out log-loss, Brier score, ECE (15 equal-width bins, weighted by bin size) and ROC AUC;
fit wall-clock time of each method in the same process (``n_jobs=None``). Tables: mean and
standard deviation over seeds, then FusionClassifier minus StackingClassifier paired by seed
(mean, smallest and largest difference, seeds won) with the median ratio of fit times.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from _common import table
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    StackingClassifier,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

import fusion
from fusion import FusionClassifier
from fusion.classifier.directions import conditional_directions
from fusion.datasets import load
from fusion.metrics import binned_ece, brier_score, log_loss

ECE_BINS = 15
METHODS = (
    "FusionClassifier",
    "StackingClassifier (logistic)",
    "CalibratedClassifierCV isotonic (best base)",
    "CalibratedClassifierCV sigmoid (best base)",
    "best base, uncalibrated",
    "FusionClassifier, previous defaults",
    "StackingClassifier (non-negative logistic)",
    "FusionClassifier, increasing='auto'",
    "FusionClassifier, sign only",
)
#: The defaults FusionClassifier had before issue 23 (``--previous``): every score
#: non-decreasing unless significantly anti-aligned on its own, BernsteinFusion's own choice
#: between the tensor and the additive model at M = 3.
PREVIOUS_DEFAULTS = {"structure": "auto"}


class NonNegativeLogisticRegression(ClassifierMixin, BaseEstimator):
    """Binary logistic regression with non-negative weights (free intercept), L2 penalty as
    :class:`~sklearn.linear_model.LogisticRegression`'s default (``C = 1``), by L-BFGS-B:
    stacking whose fused probability rises with every base model's (the yardstick for a
    monotone fusion where plain stacking wins through negative weights)."""

    def __init__(self, C: float = 1.0):
        self.C = C

    def fit(self, X, y):
        X = np.asarray(X, dtype=float)
        self.classes_, yi = np.unique(y, return_inverse=True)
        t = yi.astype(float)
        n, d = X.shape

        def loss(theta):
            w, b = theta[:d], theta[d]
            eta = X @ w + b
            p = 1.0 / (1.0 + np.exp(-eta))
            f = self.C * float(np.sum(np.logaddexp(0.0, eta) - t * eta)) + 0.5 * float(w @ w)
            g = self.C * (X.T @ (p - t)) + w
            return f, np.append(g, self.C * float(np.sum(p - t)))

        bounds = [(0.0, None)] * d + [(None, None)]
        res = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B", bounds=bounds)
        self.coef_, self.intercept_ = res.x[:d][None, :], res.x[d:]
        return self

    def predict_proba(self, X):
        eta = np.asarray(X, dtype=float) @ self.coef_[0] + self.intercept_[0]
        p = 1.0 / (1.0 + np.exp(-eta))
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]


#: scikit-learn tasks: name -> (description, function of the seed giving (X, y)).
SKLEARN_TASKS = {
    "breast_cancer": lambda seed: load_breast_cancer(return_X_y=True),
    "mc6k": lambda seed: make_classification(
        n_samples=6_000,
        n_features=30,
        n_informative=10,
        n_redundant=5,
        flip_y=0.02,
        class_sep=0.6,
        random_state=seed,
    ),
    "mc12k": lambda seed: make_classification(
        n_samples=12_000, n_informative=8, flip_y=0.05, class_sep=0.8, random_state=seed
    ),
    "mc20k": lambda seed: make_classification(
        n_samples=20_000,
        n_features=30,
        n_informative=10,
        n_redundant=5,
        flip_y=0.02,
        class_sep=0.6,
        random_state=seed,
    ),
}


@dataclass
class Task:
    X: pd.DataFrame
    y: np.ndarray
    categorical: list[str]
    numeric: list[str]


def load_task(name: str, seed: int) -> Task:
    """The rows of a task: a :mod:`fusion.datasets` data set, or a scikit-learn one (as a
    DataFrame of numeric columns)."""
    if name in SKLEARN_TASKS:
        X, y = SKLEARN_TASKS[name](seed)
        X = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        return Task(X, np.asarray(y), [], list(X.columns))
    data = load(name)
    categorical = [c for c in data.X.columns if c in set(data.categorical)]
    numeric = [c for c in data.X.columns if c not in set(data.categorical)]
    return Task(data.X, data.y, categorical, numeric)


def base_estimators(kind: str, categorical: list[str], numeric: list[str], seed: int) -> list:
    """Three different learners, each taking the raw DataFrame."""
    # An empty column list is skipped by ColumnTransformer (covertype has no categoricals).
    one_hot = ColumnTransformer(
        [
            # Dense: GaussianNB takes no sparse input.
            ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical),
            ("num", StandardScaler(), numeric),
        ]
    )
    unknown = {"handle_unknown": "use_encoded_value", "unknown_value": -1}
    ordinal = ColumnTransformer(
        [("cat", OrdinalEncoder(**unknown), categorical), ("num", "passthrough", numeric)]
    )
    logreg = ("logreg", Pipeline([("pre", one_hot), ("lr", LogisticRegression(max_iter=2000))]))
    hgb = (
        "hgb",
        HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=seed),
    )
    if kind == "nb-hgb-lr":
        return [("nb", Pipeline([("pre", clone(one_hot)), ("nb", GaussianNB())])), hgb, logreg]
    forest = RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=seed)
    return [logreg, hgb, ("forest", Pipeline([("pre", ordinal), ("rf", forest)]))]


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


def split_rows(n_rows: int, seed: int, n_train: int, n_test: int, sklearn_task: bool):
    """Disjoint random training and held-out rows; 75 / 25 for a scikit-learn task with
    fewer than ``n_train + n_test`` rows."""
    perm = np.random.default_rng(seed).permutation(n_rows)
    if sklearn_task and n_rows < n_train + n_test:
        n_train = int(round(0.75 * n_rows))
        n_test = n_rows - n_train
    return perm[:n_train], perm[n_train : n_train + n_test]


def run_one(
    name: str,
    seed: int,
    n_train: int,
    n_test: int,
    folds: int,
    bases_kind: str,
    peers: str,
    previous: bool = False,
) -> list[dict]:
    data = load_task(name, seed)
    train, test = split_rows(data.y.shape[0], seed, n_train, n_test, name in SKLEARN_TASKS)
    X, y = data.X.iloc[train], data.y[train]
    X_test, y_test = data.X.iloc[test], data.y[test]
    bases = base_estimators(bases_kind, data.categorical, data.numeric, seed)
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
    directions = "".join("+" if v else "-" for v in fused.fusion_.increasing_)
    rows[-1]["note"] = directions
    # The share of the fusion step: the same fit again on the out-of-fold scores.
    start = time.perf_counter()
    fusion.fit(oof[:, 1:], y, method=fused.method, **fused.fusion_.get_params())
    rows[-1]["fusion s"] = time.perf_counter() - start

    stacking, seconds = timed_fit(
        StackingClassifier(bases, final_estimator=LogisticRegression(), cv=cv), X, y
    )
    record(METHODS[1], stacking, seconds)
    nn_stacking, seconds = timed_fit(
        StackingClassifier(bases, final_estimator=NonNegativeLogisticRegression(), cv=cv), X, y
    )
    record(METHODS[6], nn_stacking, seconds)
    # The other directions: the same fusion on the same out-of-fold scores, the held-out rows
    # scored by the same refitted bases.
    S_oof, S_test = oof[:, 1:], fused.transform(X_test)[:, 1:]
    params = fused.fusion_.get_params()
    for method, increasing in (
        (METHODS[7], "auto"),
        (
            METHODS[8],
            [bool(v) for v in conditional_directions(S_oof, y == fused.classes_[1], threshold=0.0)],
        ),
    ):
        other = fusion.fit(S_oof, y, method=fused.method, **(params | {"increasing": increasing}))
        p = other.predict_proba(S_test)[:, 1]
        rows.append(
            {"data": name, "seed": seed, "method": method, "fit s": float("nan")}
            | {"note": "".join("+" if v else "-" for v in other.increasing_)}
            | metrics(y_test, p)
        )
    if previous:
        before, seconds = timed_fit(FusionClassifier(bases, cv=cv, **PREVIOUS_DEFAULTS), X, y)
        record(METHODS[5], before, seconds)
    if peers == "stacking":
        return rows

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


def with_time_ratio(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    stacking = df[df.method == METHODS[1]].set_index(["data", "seed"])["fit s"]
    keys = list(zip(df.data, df.seed, strict=True))
    df["fit / stacking"] = df["fit s"].to_numpy() / stacking.loc[keys].to_numpy()
    return df


def summarize(rows: list[dict]) -> str:
    df = with_time_ratio(rows)
    methods = [m for m in METHODS if m in set(df.method)]
    out = []
    for name, block in df.groupby("data", sort=False):
        n_seeds = block.seed.nunique()
        if METHODS[2] in methods:
            chosen = block[block.method == METHODS[2]].note.value_counts()
            chosen = ", ".join(f"{b} {k}x" for b, k in chosen.items())
            out.append(f"#### {name} ({n_seeds} seeds; best base by out-of-fold AUC: {chosen})\n")
        else:
            out.append(f"#### {name} ({n_seeds} seeds)\n")
        body = []
        for method in methods:
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
        for method in methods[1:]:
            other = block[block.method == method].set_index("seed")
            cells = [method]
            for col in ("log-loss", "Brier", "ECE"):
                cells.append(f"{int((ours[col] < other[col]).sum())}/{n_seeds}")
            wins.append(cells)
        out.append("\nSeeds where FusionClassifier is lower (better) than the peer:\n")
        out.append(table(["peer", "log-loss", "Brier", "ECE"], wins) + "\n")
    return "\n".join(out)


def paired_summary(rows: list[dict]) -> str:
    """FusionClassifier minus StackingClassifier per task, paired by seed: mean and standard
    deviation of the difference with the smallest and largest over seeds, seeds where
    FusionClassifier is lower, whether it is *clearly worse* in log-loss (higher on every seed
    and the mean difference larger than its standard deviation over seeds; issue 28's
    target), the median fit-time ratio, and the directions FusionClassifier chose (``+`` as
    given, ``-`` reversed; per seed)."""
    df = with_time_ratio(rows)
    body = []
    means = {"log-loss": [], "Brier": [], "ECE": []}
    for name, block in df.groupby("data", sort=False):
        ours = block[block.method == METHODS[0]].set_index("seed")
        stack = block[block.method == METHODS[1]].set_index("seed").loc[ours.index]
        cells = [name]
        for col in ("log-loss", "Brier", "ECE"):
            d = ours[col] - stack[col]
            means[col].append((ours[col].mean(), stack[col].mean()))
            cells.append(
                f"{ours[col].mean():.4f} / {stack[col].mean():.4f}: {d.mean():+.4f} ± "
                f"{d.std(ddof=1):.4f} [{d.min():+.4f}, {d.max():+.4f}] "
                f"{int((d < 0).sum())}/{d.shape[0]}"
            )
        d = ours["log-loss"] - stack["log-loss"]
        cells.append("yes" if (d > 0).all() and d.mean() > d.std(ddof=1) else "no")
        cells.append(f"{ours['fit / stacking'].median():.2f}")
        cells.append(f"{ours['fusion s'].median():.2f}")
        cells.append(" ".join(ours.note))
        body.append(cells)
    cells = ["mean over tasks"]
    for col in ("log-loss", "Brier", "ECE"):
        a, b = np.mean(means[col], axis=0)
        cells.append(f"{a:.4f} / {b:.4f}: {a - b:+.4f}")
    body.append(cells + ["", "", "", ""])
    header = ["task", "log-loss", "Brier", "ECE (15 bins)", "clearly worse"]
    header += ["fit / stacking", "fusion s", "dirs"]
    note = (
        "FusionClassifier / StackingClassifier means: FusionClassifier minus stacking, mean "
        "± sd [smallest, largest] over seeds, seeds where FusionClassifier is lower; clearly "
        "worse: higher log-loss on every seed and mean difference > sd; fit / stacking and "
        "fusion s (the fusion step's seconds) are medians over seeds.\n\n"
    )
    return note + table(header, body) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["adult", "covertype", "census"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--n-train", type=int, default=5_000)
    parser.add_argument("--n-test", type=int, default=20_000)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--bases", choices=["lr-hgb-rf", "nb-hgb-lr"], default="lr-hgb-rf")
    parser.add_argument(
        "--peers",
        choices=["all", "stacking"],
        default="all",
        help="all: also CalibratedClassifierCV and the best base; stacking: StackingClassifier "
        "only",
    )
    parser.add_argument(
        "--previous", action="store_true", help="also FusionClassifier's pre-issue-23 defaults"
    )
    args = parser.parse_args(argv)

    rows = []
    for name in args.datasets:
        for seed in args.seeds:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                rows += run_one(
                    name,
                    seed,
                    args.n_train,
                    args.n_test,
                    args.folds,
                    args.bases,
                    args.peers,
                    args.previous,
                )
            print(f"{name} seed {seed}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    print(
        f"n_train = {args.n_train:,}, n_test = {args.n_test:,} (scikit-learn tasks below "
        f"that: 75 / 25), {args.folds} folds, seeds {args.seeds}, bases {args.bases}\n"
    )
    print(summarize(rows))
    print(paired_summary(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
