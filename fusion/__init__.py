"""fusion: calibrated, monotone fusion of several classifier scores into one probability.

>>> import fusion
>>> model = fusion.fit(S, y)                 # doctest: +SKIP
>>> p = model.predict_proba(S_new)[:, 1]     # doctest: +SKIP
"""

from __future__ import annotations

from . import metrics
from ._base import FusionEstimator
from ._registry import METHODS, method_class
from ._solver import SolverError, SolverWarning
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


def fit(S, y, method: str = "bernstein", *, sample_weight=None, **params) -> FusionEstimator:
    """Fit a fusion model and return the fitted estimator.

    Parameters
    ----------
    S : array-like of shape (n, M)
        Scores of the M classifiers on the same n samples (any monotone scale).
    y : array-like of shape (n,)
        Binary labels; the second class in sorted order is the positive one.
    method : str, default="bernstein"
        One of :data:`METHODS`.
    sample_weight : array-like of shape (n,), optional
        Row weights, for methods that support them.
    **params
        Constructor parameters of the chosen estimator.

    Returns
    -------
    FusionEstimator
        The fitted estimator; ``predict_proba(S_new)[:, 1]`` is the fused probability.
    """
    estimator = method_class(method)(**params)
    if sample_weight is None:
        return estimator.fit(S, y)
    return estimator.fit(S, y, sample_weight=sample_weight)


__all__ = [
    "__version__",
    "fit",
    "load",
    "FusionClassifier",
    "METHODS",
    "metrics",
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
