"""
From features to a fused classifier
===================================

:class:`fusion.FusionClassifier` starts from features rather than scores. It cross-fits
each scikit-learn base classifier, so that every training row gets a score from a model
that did not see it, fits a fusion method (the default :class:`~fusion.BernsteinFusion`)
on those out-of-fold scores, and refits the base classifiers on all rows to score new data.

Here three classifiers of different kinds (naive Bayes, gradient-boosted trees, logistic
regression) are fused on a generated task with label noise, and evaluated on held-out rows.
The fused classifier is saved and loaded like every fusion model: one archive, no pickle
(its base estimators are embedded as skops archives, built on loading only from trusted
types).
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

import fusion
from fusion import metrics, plot

X, y = make_classification(
    n_samples=6000, n_informative=8, flip_y=0.05, class_sep=0.8, random_state=0
)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)

bases = [
    ("naive Bayes", GaussianNB()),
    ("boosted trees", HistGradientBoostingClassifier(max_iter=100, random_state=0)),
    ("logistic regression", LogisticRegression()),
]
clf = fusion.FusionClassifier(bases).fit(X_train, y_train)

print(f"{'':22s}{'Brier':>8s}{'log-loss':>10s}{'ECE':>8s}")
predictions = {}
for name, model in clf.named_estimators_.items():  # the base classifiers, refitted
    predictions[name] = model.predict_proba(X_test)[:, 1]
predictions["fused"] = clf.predict_proba(X_test)[:, 1]
for name, p in predictions.items():
    print(
        f"{name:22s}{metrics.brier_score(y_test, p):8.4f}{metrics.log_loss(y_test, p):10.4f}"
        f"{metrics.binned_ece(y_test, p):8.4f}"
    )

# %%
# Saved and loaded, the classifier predicts exactly as before.
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "classifier.fusion"
    clf.save(path)
    loaded = fusion.load(path)
    same = np.array_equal(loaded.predict_proba(X_test), clf.predict_proba(X_test))
    print(f"{path.stat().st_size / 1e3:.0f} kB, identical predictions: {same}")

# %%
# Reliability of each base classifier and of the fused probability on the held-out rows (ten
# bins of 300 rows each).
fig, ax = plt.subplots(figsize=(5, 5), layout="constrained")
for name, p in predictions.items():
    plot.reliability_diagram(y_test, p, strategy="quantile", ax=ax, label=name, show_counts=False)
ax.set_title("Held-out reliability")
