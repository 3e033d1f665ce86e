"""Demo: fuse two scorers on generated data and print calibration metrics.

Run with ``python -m fusion`` (no network, about half a minute on two cores). Two
scikit-learn classifiers are trained on different feature subsets of a generated problem;
their scores on a separate fusion sample train every registered fusion method, and all are
scored on a large test set.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.special import logit
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier

import fusion
from fusion import metrics

#: Parameters that keep the demo quick; every other setting is each method's default.
DEMO_PARAMS: dict[str, dict] = {}


def make_scores(n_fusion: int, n_test: int, seed: int):
    """Scores of two classifiers on a fusion sample and a test sample."""
    X, y = make_classification(
        n_samples=2000 + n_fusion + n_test,
        n_features=12,
        n_informative=8,
        n_redundant=2,
        flip_y=0.08,
        class_sep=0.8,
        random_state=seed,
    )
    train, rest = slice(0, 2000), slice(2000, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        net = MLPClassifier((10,), max_iter=300, random_state=seed).fit(X[train, :7], y[train])
    bayes = GaussianNB().fit(X[train, 5:], y[train])
    scores = np.column_stack(
        [net.predict_proba(X[rest, :7])[:, 1], bayes.predict_proba(X[rest, 5:])[:, 1]]
    )
    y = y[rest]
    return (scores[:n_fusion], y[:n_fusion]), (scores[n_fusion:], y[n_fusion:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusion", description=__doc__)
    parser.add_argument("--n-fusion", type=int, default=1000, help="rows that train fusion")
    parser.add_argument("--n-test", type=int, default=100_000, help="test rows")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    (S, y), (S_test, y_test) = make_scores(args.n_fusion, args.n_test, args.seed)
    print(
        f"fusion {fusion.__version__} demo: 2 scorers, {len(y)} fusion rows, "
        f"{len(y_test)} test rows\n"
    )
    rows = []
    for name in fusion.METHODS:
        start = time.perf_counter()
        model = fusion.fit(S, y, method=name, **DEMO_PARAMS.get(name, {}))
        fit_s = time.perf_counter() - start
        label = f"{name} (fusion.fit default)" if name == "bernstein" else name
        rows.append((label, model.predict_proba(S_test)[:, 1], fit_s, model))
    # the peers a user would fit: logistic regression on the scorers' logits (the usual
    # stacking of probabilities, clipped as in fusion.bench) and on the raw probabilities
    logits = logit(np.clip(S, 1e-6, 1 - 1e-6))
    stack = LogisticRegression().fit(logits, y)
    test_logits = logit(np.clip(S_test, 1e-6, 1 - 1e-6))
    rows.append(("LR stacking (logits)", stack.predict_proba(test_logits)[:, 1], None, None))
    stack = LogisticRegression().fit(S, y)
    rows.append(("LR stacking (probabilities)", stack.predict_proba(S_test)[:, 1], None, None))
    for m, label in enumerate(["scorer 1 alone (MLP)", "scorer 2 alone (naive Bayes)"]):
        rows.append((label, S_test[:, m], None, None))

    print(
        f"{'method':30s} {'Brier':>7s} {'logloss':>8s} {'ECE':>7s} {'gridECE':>8s} "
        f"{'gridMCE':>8s} {'fit s':>7s}"
    )
    for name, p, fit_s, model in rows:
        # grid metrics compare a calibrating function with cell rates; only for fused models
        g_ece = g_mce = float("nan")
        if model is not None:
            cells = metrics.grid_calibration_table(model, S_test, y_test)
            g_ece, g_mce = cells.ece, cells.mce
        print(
            f"{name:30s} {100 * metrics.brier_score(y_test, p):7.2f} "
            f"{metrics.log_loss(y_test, p):8.4f} {100 * metrics.binned_ece(y_test, p):7.2f} "
            f"{100 * g_ece:8.2f} {100 * g_mce:8.2f} "
            + (f"{fit_s:7.3f}" if fit_s is not None else f"{'':>7s}")
        )
    print(
        "\nBrier, ECE (10 uniform bins, mass-weighted) and grid ECE/MCE (10x10 cells of the "
        "normalized square with >= 1000 test rows) in percent."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
