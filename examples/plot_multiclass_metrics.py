"""
Calibration of multi-class probabilities
========================================

For ``C >= 3`` classes, :mod:`fusion.metrics` has the multi-class Brier score and log-loss
(scikit-learn's conventions), the top-label ECE (is the confidence in the predicted class
right?) and the classwise ECE (is every class's probability right?), and
:func:`fusion.plot.top_label_reliability_diagram` draws the top-label view. Probability
columns follow the sorted labels, as ``predict_proba`` returns them.

Two classifiers on scikit-learn's digits (10 classes), miscalibrated in opposite
directions: naive Bayes, notoriously over-confident (points below the diagonal), and a
strongly regularized logistic regression, under-confident (points above it).
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fusion import metrics, plot

X, y = load_digits(return_X_y=True)
names = [f"digit {d}" for d in range(10)]  # string labels work as well as integers
y = [names[d] for d in y]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
classifiers = {
    "naive Bayes": GaussianNB(),
    "logistic regression": make_pipeline(StandardScaler(), LogisticRegression(C=0.05)),
}

fig, ax = plt.subplots(figsize=(5, 5), layout="constrained")
print(f"{'':20s} {'Brier':>7s} {'log-loss':>9s} {'top-label ECE':>14s} {'classwise ECE':>14s}")
for name, clf in classifiers.items():
    P = clf.fit(X_train, y_train).predict_proba(X_test)
    print(
        f"{name:20s} {metrics.brier_score(y_test, P):7.4f} {metrics.log_loss(y_test, P):9.4f} "
        f"{metrics.top_label_ece(y_test, P):14.4f} {metrics.classwise_ece(y_test, P):14.4f}"
    )
    plot.top_label_reliability_diagram(y_test, P, ax=ax, label=name, title="Digits, test half")
