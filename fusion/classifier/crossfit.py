"""Cross-fitting: out-of-fold scores of scikit-learn classifiers, and their refits.

Plain functions on estimators and arrays; :class:`~fusion.classifier.FusionClassifier`
validates its parameters and calls these. The folds are materialized once by the caller and
passed as a list of ``(train, test)`` index pairs, so every base estimator sees the same
partition and the work is reproducible whatever splitter produced it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import numpy as np
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import cross_val_predict

__all__ = [
    "RESPONSE_METHODS",
    "derive_names",
    "response_method",
    "score_columns",
    "stack_scores",
    "out_of_fold_output",
    "fit_one",
]

#: What ``stack_method="auto"`` tries, in order (as :class:`~sklearn.ensemble.StackingClassifier`
#: without its last resort ``predict``: labels are not scores).
RESPONSE_METHODS = ("predict_proba", "decision_function")


def derive_names(estimators: Sequence) -> list[str]:
    """Names for a plain list of estimators, as :func:`sklearn.pipeline.make_pipeline` makes
    them: the lower-cased class name, with ``-1``, ``-2``, ... on repeated names."""
    names = [type(est).__name__.lower() for est in estimators]
    repeated = {name for name, count in Counter(names).items() if count > 1}
    seen: Counter = Counter()
    out = []
    for name in names:
        if name in repeated:
            seen[name] += 1
            name = f"{name}-{seen[name]}"
        out.append(name)
    return out


def response_method(name: str, estimator, stack_method: str) -> str:
    """The method that gives ``estimator``'s score: ``stack_method``, or for ``"auto"`` the
    first of :data:`RESPONSE_METHODS` the estimator has."""
    candidates = RESPONSE_METHODS if stack_method == "auto" else (stack_method,)
    for method in candidates:
        # hasattr respects available_if (SVC(probability=False) has no predict_proba).
        if hasattr(estimator, method):
            return method
    wanted = " nor ".join(candidates) if stack_method == "auto" else stack_method
    raise ValueError(
        f"estimator {name!r} ({type(estimator).__name__}) has no {wanted}; FusionClassifier "
        "needs a score per row from each base estimator. "
        + (
            "Use a classifier with predict_proba or decision_function, or wrap it (e.g. "
            "CalibratedClassifierCV) to give it one."
            if stack_method == "auto"
            else "Use stack_method='auto' to take whichever of predict_proba and "
            "decision_function it has."
        )
    )


def score_columns(output, method: str, n_classes: int, name: str) -> np.ndarray:
    """One base estimator's score from its ``predict_proba``/``decision_function`` output.

    Binary: the positive class's probability (column 1) or the decision function, shape
    ``(n,)``. Multi-class: all ``C`` columns, shape ``(n, C)``.
    """
    out = np.asarray(output, dtype=float)
    if n_classes == 2:
        if method == "predict_proba":
            if out.ndim != 2 or out.shape[1] != 2:
                raise ValueError(
                    f"estimator {name!r}: predict_proba returned shape {out.shape}, expected "
                    "(n, 2) for a binary target."
                )
            return out[:, 1]
        if out.ndim == 2 and out.shape[1] == 1:
            out = out[:, 0]
        if out.ndim != 1:
            raise ValueError(
                f"estimator {name!r}: {method} returned shape {out.shape}, expected (n,) for "
                "a binary target."
            )
        return out
    if out.ndim != 2 or out.shape[1] != n_classes:
        raise ValueError(
            f"estimator {name!r}: {method} returned shape {out.shape}, expected (n, "
            f"{n_classes}): one score per class (an SVC with decision_function_shape='ovo' "
            "gives one per pair of classes; use 'ovr')."
        )
    return out


def stack_scores(columns: list[np.ndarray]) -> np.ndarray:
    """The fusion input: ``(n, M)`` from M binary scores, ``(n, M, C)`` from M ``(n, C)``
    multi-class scores (the layout of :func:`fusion.fit`)."""
    return np.stack(columns, axis=1)


def fit_one(estimator, X, y, fit_params: dict):
    """Fit ``estimator`` in place and return it (the unit of parallel work)."""
    return estimator.fit(X, y, **fit_params)


def out_of_fold_output(
    name: str,
    estimator,
    X,
    y,
    *,
    method: str,
    splits: list[tuple[np.ndarray, np.ndarray]] | None,
    fit_params: dict,
    n_jobs: int | None,
    verbose: int,
) -> np.ndarray:
    """``estimator``'s ``method`` output on every row of ``X``, from a model that did not see
    the row.

    A clone is fitted on each training fold of ``splits`` and scores that fold's test rows
    (:func:`~sklearn.model_selection.cross_val_predict`). With ``splits=None`` (prefit) or a
    :class:`~sklearn.frozen.FrozenEstimator` nothing is fitted: the given model scores every
    row, and keeping its training data apart is the caller's job.
    """
    start = time.perf_counter()
    if splits is None or isinstance(estimator, FrozenEstimator):
        output = getattr(estimator, method)(X)
        how = "prefit, not refitted"
    else:
        output = cross_val_predict(
            clone(estimator),
            X,
            y,
            cv=splits,
            method=method,
            n_jobs=n_jobs,
            params=fit_params,
            verbose=max(verbose - 1, 0),
        )
        how = f"{len(splits)} folds"
    if verbose:
        elapsed = time.perf_counter() - start
        print(f"[FusionClassifier] out-of-fold {method} of {name!r} ({how}): {elapsed:.2f} s")
    return output
