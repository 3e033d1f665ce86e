"""The scorers of the scenario benchmark: scikit-learn models of the kinds people fuse.

Each kind is a function ``(categorical, numeric, random_state) -> Pipeline`` whose
``predict_proba(X)[:, 1]`` is the score handed to the fusion methods (a probability, as a
user would pass it). Some are built to be badly calibrated on purpose (the overfit MLP and
boosted model saturate at 0 and 1; the random forest and kNN produce heavy ties; Gaussian
naive Bayes is overconfident), because those are the scores fusion has to repair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    ExtraTreesClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
from sklearn.svm import SVC

__all__ = ["SCORER_KINDS", "make_scorer", "describe"]


def _encoded(categorical: Sequence[str], numeric: Sequence[str], *, scale: bool = True):
    """One-hot categorical columns, standardized numeric ones, as a dense matrix."""
    parts = []
    if categorical:
        parts.append(
            (
                "cat",
                OneHotEncoder(handle_unknown="ignore", min_frequency=10, sparse_output=False),
                list(categorical),
            )
        )
    if numeric:
        parts.append(("num", StandardScaler() if scale else "passthrough", list(numeric)))
    return ColumnTransformer(parts, sparse_threshold=0.0)


def _ordinal(categorical: Sequence[str], numeric: Sequence[str]):
    """Categorical columns as integer codes (for trees), numeric ones as they are."""
    parts = []
    if categorical:
        enc = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
        parts.append(("cat", enc, list(categorical)))
    if numeric:
        parts.append(("num", "passthrough", list(numeric)))
    return ColumnTransformer(parts, sparse_threshold=0.0)


def _pipeline(pre, model) -> Pipeline:
    """A scorer: the preprocessing step ``"pre"``, then the classifier ``"model"``."""
    return Pipeline([("pre", pre), ("model", model)])


def _hgb(categorical, numeric, random_state, **params):
    model = HistGradientBoostingClassifier(
        **params,
        categorical_features=list(range(len(categorical))) or None,
        random_state=random_state,
    )
    return _pipeline(_ordinal(categorical, numeric), model)


# Many deep, unregularized boosting rounds at a high learning rate: training loss near zero,
# test probabilities pushed to 0 and 1.
_OVERFIT_BOOSTING = {
    "learning_rate": 0.3,
    "max_iter": 400,
    "max_leaf_nodes": 63,
    "min_samples_leaf": 3,
    "l2_regularization": 0.0,
    "early_stopping": False,
}


def _hgb_overfit(categorical, numeric, random_state):
    return _hgb(categorical, numeric, random_state, **_OVERFIT_BOOSTING)


def _mlp_overfit(categorical, numeric, random_state):
    # A wide network with (almost) no weight decay trained to convergence on a small sample.
    model = MLPClassifier(
        hidden_layer_sizes=(256, 128),
        alpha=1e-6,
        max_iter=300,
        early_stopping=False,
        random_state=random_state,
    )
    return _pipeline(_encoded(categorical, numeric), model)


def _rf(categorical, numeric, random_state):
    # Fully grown trees: probabilities are multiples of 1/100, with many exact 0s and 1s.
    model = RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=random_state)
    return _pipeline(_ordinal(categorical, numeric), model)


def _extra_trees(categorical, numeric, random_state):
    model = ExtraTreesClassifier(
        n_estimators=100, min_samples_leaf=2, n_jobs=1, random_state=random_state
    )
    return _pipeline(_ordinal(categorical, numeric), model)


def _gnb(categorical, numeric, random_state):
    return _pipeline(_encoded(categorical, numeric), GaussianNB())


def _knn(categorical, numeric, random_state):
    # Probabilities are multiples of 1/30: a score with few distinct values.
    return _pipeline(_encoded(categorical, numeric), KNeighborsClassifier(30))


def _lr(categorical, numeric, random_state):
    return _pipeline(_encoded(categorical, numeric), LogisticRegression(max_iter=2000))


def _svc(categorical, numeric, random_state):
    # Platt-scaled RBF SVM: the sigmoid fitted on 5-fold out-of-fold decision values, one SVM
    # refitted on all rows (what SVC(probability=True) did before scikit-learn 1.9).
    svc = CalibratedClassifierCV(SVC(random_state=random_state), method="sigmoid", ensemble=False)
    return _pipeline(_encoded(categorical, numeric), svc)


#: kind -> (builder, one-line description for the report).
SCORER_KINDS: dict[str, tuple[Callable, str]] = {
    "hgb": (_hgb, "HistGradientBoosting (defaults)"),
    "hgb_overfit": (_hgb_overfit, "overfit boosting (400 rounds, lr 0.3, 63 leaves, no reg.)"),
    "mlp_overfit": (_mlp_overfit, "overfit MLP (256-128, alpha 1e-6)"),
    "rf": (_rf, "RandomForest (100 fully grown trees)"),
    "et": (_extra_trees, "ExtraTrees (100 trees, min leaf 2)"),
    "gnb": (_gnb, "Gaussian naive Bayes"),
    "knn": (_knn, "kNN (k = 30)"),
    "lr": (_lr, "LogisticRegression (C = 1)"),
    "svc": (_svc, "RBF SVC with Platt scaling"),
}


def make_scorer(
    kind: str, categorical: Sequence[str], numeric: Sequence[str], random_state: int
) -> Pipeline:
    """An unfitted scorer of ``kind`` on the given columns."""
    try:
        build = SCORER_KINDS[kind][0]
    except KeyError:
        raise ValueError(f"unknown scorer kind {kind!r}; known: {sorted(SCORER_KINDS)}.") from None
    return build(list(categorical), list(numeric), random_state)


def describe(kind: str) -> str:
    """The report's description of a scorer kind."""
    return SCORER_KINDS[kind][1]
