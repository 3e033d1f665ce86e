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
from ._cv import HashFolds
from ._registry import METHODS, fit
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
    "HashFolds",
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
