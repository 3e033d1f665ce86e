"""1-D calibrators (RPR, ENIR and classic baselines) and their reduction of M >= 2 scores.

* :class:`RPRCalibrator` -- monotone polynomial regression with an exact SDP certificate
  (Wang, Li & Dang 2019), in :mod:`fusion.univariate.rpr`.
* :class:`ENIRCalibrator` -- BIC-weighted ensemble of nearly-isotonic fits (Naeini & Cooper
  2016), in :mod:`fusion.univariate.enir` on the path of
  :mod:`fusion.univariate.nearly_isotonic`.
* :class:`PlattCalibrator`, :class:`IsotonicCalibrator`, :class:`HistogramBinningCalibrator`
  -- scikit-learn baselines with the same interface, in :mod:`fusion.univariate.baselines`.

All accept ``M = 1`` score or reduce ``M >= 2`` scores first with ``combine``
(:mod:`fusion.univariate.reduction`).
"""

from .baselines import HistogramBinningCalibrator, IsotonicCalibrator, PlattCalibrator
from .enir import ENIRCalibrator
from .reduction import COMBINE_RULES
from .rpr import RPRCalibrator

__all__ = [
    "RPRCalibrator",
    "ENIRCalibrator",
    "PlattCalibrator",
    "IsotonicCalibrator",
    "HistogramBinningCalibrator",
    "COMBINE_RULES",
]
