"""Fuse two scikit-learn classifiers on Adult into one calibrated probability."""

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier as HGB
from sklearn.model_selection import train_test_split

import fusion
from fusion.datasets import load_adult  # local copy via FUSION_DATA_DIR, else downloads

X, y = load_adult(return_X_y=True)
X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=2000, random_state=0)
X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, train_size=1000, random_state=0)
clfs = [HGB(max_depth=d, categorical_features="from_dtype").fit(X_fit, y_fit) for d in (2, 6)]
scores = lambda X: np.column_stack([c.predict_proba(X)[:, 1] for c in clfs])  # noqa: E731
model = fusion.fit(scores(X_cal), y_cal)  # BernsteinFusion, degree chosen by 5-fold CV
p = model.predict_proba(scores(X_test))[:, 1]
print("Brier", fusion.metrics.brier_score(y_test, p), "ECE", fusion.metrics.binned_ece(y_test, p))
