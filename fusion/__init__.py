"""fusion: calibrated, monotone fusion of several classifier scores into one probability.

>>> import fusion
>>> model = fusion.fit(S, y)                 # doctest: +SKIP
>>> p = model.predict_proba(S_new)[:, 1]     # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import types

from . import metrics
from ._base import FusionEstimator
from ._registry import METHODS, method_class
from ._solver import SolverError, SolverWarning
from ._validation import unknown_keywords_message
from ._version import __version__
from .bernstein import BernsteinFusion
from .classifier import FusionClassifier
from .copula import CopulaFusion
from .ecdf import ConstantColumnError, ECDFNormalizer
from .mrmic import MRMICFusion
from .persistence import PersistenceError, load
from .univariate import (
    ENIRCalibrator,
    HistogramBinningCalibrator,
    IsotonicCalibrator,
    PlattCalibrator,
    RPRCalibrator,
)


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
    known = cls._get_param_names()
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


__all__ = [
    "__version__",
    "fit",
    "load",
    "FusionClassifier",
    "METHODS",
    "metrics",
    "plot",
    "datasets",
    "BernsteinFusion",
    "CopulaFusion",
    "MRMICFusion",
    "RPRCalibrator",
    "ENIRCalibrator",
    "PlattCalibrator",
    "IsotonicCalibrator",
    "HistogramBinningCalibrator",
    "ECDFNormalizer",
    "ConstantColumnError",
    "FusionEstimator",
    "SolverError",
    "SolverWarning",
    "PersistenceError",
]

#: Subpackages loaded on first access (PEP 562): ``fusion.plot`` imports matplotlib only when a
#: figure is drawn, and ``fusion.datasets`` is benchmark infrastructure that no method needs.
_LAZY_SUBMODULES = ("plot", "datasets")


def __getattr__(name: str) -> types.ModuleType:
    """``fusion.plot`` and ``fusion.datasets``, imported on first access."""
    if name in _LAZY_SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
