"""Which estimator every public name stands for: the methods of :func:`fusion.fit`, and the
stable names under which model files refer to classes (never an import path)."""

from __future__ import annotations

from ._base import FusionEstimator
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

__all__ = ["METHODS", "CALIBRATORS", "ECDF_NAME", "saveable_classes", "method_class"]

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
