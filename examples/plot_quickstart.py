"""
Fuse two classifiers into one calibrated probability
====================================================

Two gradient-boosting classifiers of different depth are trained on one part of the Adult
data; their scores on a second, held-out part fit the fusion; a third part evaluates it
against each classifier's own ``predict_proba``. Gradient boosting minimizes the log-loss,
so both scorers are fairly well calibrated already: the fusion's gain is in combining them
(Brier score, log-loss) while staying calibrated.

Adult is read from a local copy (``FUSION_DATA_DIR``, see :mod:`fusion.datasets`); without
one, a generated classification problem stands in for it.
"""

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

import fusion
from fusion import metrics, plot
from fusion.datasets import DatasetNotFoundError, load_adult

try:
    X, y = load_adult(return_X_y=True, download_if_missing=False)
    source = "Adult"
except (DatasetNotFoundError, ImportError):
    X, y = make_classification(20_000, n_features=20, n_informative=6, random_state=0)
    source = "generated data"

# Three disjoint parts: train the scorers, fit the fusion, test.
X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=2000, random_state=0)
X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, train_size=1000, random_state=0)
scorers = [
    HistGradientBoostingClassifier(
        max_depth=depth, categorical_features="from_dtype", random_state=0
    ).fit(X_fit, y_fit)
    for depth in (2, 6)
]


def scores(X):
    """One column per scorer: its predicted probability of the positive class."""
    return np.column_stack([s.predict_proba(X)[:, 1] for s in scorers])


model = fusion.fit(scores(X_cal), y_cal, random_state=0)  # BernsteinFusion, degree by CV
p_fused = model.predict_proba(scores(X_test))[:, 1]

# %%
# Compare on the test rows: the fused probability against each scorer alone.
S_test = scores(X_test)
print(f"{source}: {len(y_test)} test rows; chosen degree {model.degree_}")
print(f"{'':18s} {'Brier':>7s} {'log-loss':>9s} {'ECE':>7s}")
for name, p in [
    ("depth-2 scorer", S_test[:, 0]),
    ("depth-6 scorer", S_test[:, 1]),
    ("fused", p_fused),
]:
    print(
        f"{name:18s} {metrics.brier_score(y_test, p):7.4f} "
        f"{metrics.log_loss(y_test, p):9.4f} {metrics.binned_ece(y_test, p):7.4f}"
    )

# %%
# The reliability diagram of the fused probability: observed rate of positives against the
# predicted probability, with a 90 % bootstrap band and the number of test rows per bin.
ax = plot.reliability_bands(y_test, p_fused, label="fused", title=f"Fused probability on {source}")
