"""Which estimator every public name stands for: the methods of :func:`fusion.fit` (defined
here, so that :class:`~fusion.FusionClassifier` fits its fusion without importing the package
root), and the stable names under which model files refer to classes (never an import path)."""

from __future__ import annotations

from ._base import FusionEstimator
from ._validation import param_names, unknown_keywords_message
from .bernstein import BernsteinFusion
from .copula import CopulaFusion
from .ecdf import ECDFNormalizer
from .mrmic import MRMICFusion
from .univariate import (
    ENIRCalibrator,
    HistogramBinningCalibrator,
    IsotonicCalibrator,
    PlattCalibrator,
    RPRCalibrator,
)

__all__ = ["METHODS", "CALIBRATORS", "ECDF_NAME", "saveable_classes", "method_class", "fit"]

#: Registered methods of :func:`fusion.fit`: name -> estimator class.
METHODS: dict[str, type[FusionEstimator]] = {
    "bernstein": BernsteinFusion,
    "copula": CopulaFusion,
    "mrmic": MRMICFusion,
    "rpr": RPRCalibrator,
    "enir": ENIRCalibrator,
}

#: Public estimators that :func:`fusion.fit` does not offer as methods (1-D baselines).
CALIBRATORS: dict[str, type[FusionEstimator]] = {
    "platt": PlattCalibrator,
    "isotonic": IsotonicCalibrator,
    "histogram": HistogramBinningCalibrator,
}

#: The name of :class:`~fusion.ecdf.ECDFNormalizer`, saved only inside a model (``ecdf_``).
ECDF_NAME = "ecdf"


def saveable_classes() -> dict[str, type]:
    """Stable name -> class of everything a model file may name. The names are written into
    files, so they never change."""
    return {**METHODS, **CALIBRATORS, ECDF_NAME: ECDFNormalizer}


def method_class(method: str) -> type[FusionEstimator]:
    """The estimator class of a method name, or a ValueError listing the known ones."""
    try:
        return METHODS[method]
    except (KeyError, TypeError):
        raise ValueError(f"unknown method {method!r}; known methods: {sorted(METHODS)}.") from None


def fit(
    S, y, method: str = "bernstein", *, sample_weight=None, classes=None, **params
) -> FusionEstimator:
    """Fit a fusion model and return the fitted estimator.

    Parameters
    ----------
    S : array-like of shape (n, M), or (n, M, C) / a list of M arrays of shape (n, C)
        Scores of the M classifiers on the same n samples (any monotone scale). Multi-class:
        each classifier's C class probabilities or logits (as ``predict_proba`` or a
        network's last layer gives them), columns in the sorted order of the labels. A
        framework's tensors are taken as they come (PyTorch, also with grad, in bfloat16
        or on a GPU; CuPy; JAX): converted to NumPy on the host without importing the
        framework.
    y : array-like of shape (n,)
        Labels: two values (the second in sorted order is the positive one), or up to C
        values for multi-class scores.
    method : str, default="bernstein"
        One of :data:`METHODS`.
    sample_weight : array-like of shape (n,), optional
        Row weights, for methods that support them.
    classes : array-like, optional
        Every class label, when some class of multi-class scores does not occur in ``y``
        (integer labels ``0 .. C - 1`` need none).
    **params
        Constructor parameters of the chosen estimator.

    Returns
    -------
    FusionEstimator
        The fitted estimator. Binary: ``predict_proba(S_new)[:, 1]`` is the fused
        probability of the positive class. Multi-class: ``predict_proba(S_new)`` is an
        ``(n, C)`` array of class probabilities (columns in ``classes_`` order, rows summing
        to one); the default model is one monotone fusion shared by every class
        (:class:`BernsteinFusion`, ``multiclass``).
    """
    cls = method_class(method)
    known = param_names(cls)
    unknown = set(params) - set(known)
    if unknown:
        raise TypeError(
            unknown_keywords_message(
                f"fusion.fit(method={method!r}) for {cls.__name__}",
                unknown,
                [*known, "sample_weight", "classes"],
            )
        )
    estimator = cls(**params)
    fit_params = {}
    if sample_weight is not None:
        fit_params["sample_weight"] = sample_weight
    if classes is not None:
        fit_params["classes"] = classes
    return estimator.fit(S, y, **fit_params)
