"""
Calibrating one network, fusing two
===================================

Neural networks give one score per class. ``fusion.fit`` takes one network's ``(n, C)``
logits (or its probabilities, or log-probabilities: the same model) and calibrates it, or
several networks' scores ``(n, M, C)`` and fuses them, with one class-shared monotone model
and a top-label correction chosen by cross-validation.

Two scikit-learn MLPs learn a 10-class task from a third of the rows: a wide one with
almost no regularization (it overfits and is over-confident) and a small, strongly
regularized one (under-confident and less accurate). The second third calibrates and fuses
them; the last third measures the log-loss and the top-label calibration (is the
confidence in the predicted class right? points below the diagonal are over-confident).
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

import fusion
from fusion import metrics, plot

X, y = make_classification(
    n_samples=9000, n_features=20, n_informative=12, n_classes=10, n_clusters_per_class=1,
    flip_y=0.05, class_sep=1.2, random_state=0,
)  # fmt: skip
X_train, X_rest, y_train, y_rest = train_test_split(X, y, test_size=2 / 3, random_state=0)
X_fuse, X_test, y_fuse, y_test = train_test_split(X_rest, y_rest, test_size=0.5, random_state=0)

with warnings.catch_warnings():  # trained long enough to overfit, not to convergence
    warnings.simplefilter("ignore", ConvergenceWarning)
    wide = MLPClassifier((128,), alpha=1e-6, max_iter=300, random_state=0).fit(X_train, y_train)
    small = MLPClassifier((8,), alpha=1.0, max_iter=300, random_state=1).fit(X_train, y_train)


def logits(net, X):
    """The network's log-probabilities: its logits up to a constant per row, which changes
    nothing."""
    return np.log(np.clip(net.predict_proba(X), 1e-300, None))


single = fusion.fit(logits(wide, X_fuse), y_fuse)  # one network: (n, C)
S_fuse = np.stack([logits(wide, X_fuse), small.predict_proba(X_fuse)], axis=1)
S_test = np.stack([logits(wide, X_test), small.predict_proba(X_test)], axis=1)
ensemble = fusion.fit(S_fuse, y_fuse)  # two networks: (n, 2, C), logits and probabilities

candidates = {
    "wide network as trained": wide.predict_proba(X_test),
    "small network as trained": small.predict_proba(X_test),
    "wide network, calibrated": single.predict_proba(logits(wide, X_test)),
    "both networks, fused": ensemble.predict_proba(S_test),
}
fig, ax = plt.subplots(figsize=(5, 5), layout="constrained")
print(f"{'':26s} {'log-loss':>9s} {'top-label ECE':>14s} {'accuracy':>9s}")
for name, P in candidates.items():
    print(
        f"{name:26s} {metrics.log_loss(y_test, P):9.4f} "
        f"{metrics.top_label_ece(y_test, P, n_bins=10):14.4f} "
        f"{np.mean(P.argmax(axis=1) == y_test):9.3f}"
    )
    plot.top_label_reliability_diagram(
        y_test, P, n_bins=10, ax=ax, label=name, title="Test third (10 classes)"
    )
plt.show()
