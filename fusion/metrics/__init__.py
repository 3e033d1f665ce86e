"""Calibration metrics, binary and multi-class.

* :func:`brier_score`, :func:`log_loss` -- proper scoring rules, binary (positive-class
  probability) or multi-class (``(n, C)`` class probabilities), with scikit-learn's
  conventions.
* :func:`binned_ece`, :func:`binned_mce`, :func:`reliability_bins` -- reliability gaps over
  bins of the predicted probability (uniform or equal-count bins; mass-weighted as in Naeini &
  Cooper 2016 or averaged over non-empty bins as in Wang, Li & Dang 2019, eq. (70)).
* :func:`top_label_ece`, :func:`top_label_bins`, :func:`classwise_ece` -- multi-class
  binned calibration errors (15 equal-width bins by default, mass-weighted).
* :func:`smooth_ece`, :func:`top_label_smooth_ece` -- the binning-free smooth ECE of
  Blasiok & Nakkiran (2023): a reflected-Gaussian kernel smoothing of the reliability
  diagram at its fixed-point bandwidth, binary or on the top-label confidence.
* :func:`grid_ece`, :func:`grid_mce`, :func:`grid_calibration_table` -- the grid metrics of
  Wang & Liu (2020, Sec. 5.2) on the ECDF-normalized cube of a fitted fusion estimator.
* :func:`calibration_measure` -- the binning-free empirical calibration measure ``c_emp`` of
  Gao, Parameswaran & Peng (Definition 2), computed exactly in ``O(n log n)``.

Labels
------
Binary metrics take 0/1 or bool labels, or any two labels with ``pos_label`` naming the
positive one; ``p`` is the positive-class probability of shape ``(n,)`` or ``predict_proba``
output of shape ``(n, 2)`` (then the positive class is ``pos_label``, else the second of the
sorted labels, so string labels need no ``pos_label``). Multi-class metrics take labels of any
hashable, sortable kind and an ``(n, C)`` matrix whose columns follow the *sorted* labels, as
in scikit-learn, unless ``labels=`` names the class of every column in the columns' order
(needed when ``y`` does not hold every class, and for a model fitted with ``classes=`` in
another order: pass its ``classes_``). Every error in the input is a :class:`ValueError`
that says what to pass instead.
"""

from __future__ import annotations

from .binned import (
    binned_ece,
    binned_mce,
    classwise_ece,
    reliability_bins,
    top_label_bins,
    top_label_ece,
)
from .grid import GridCalibration, grid_calibration_table, grid_ece, grid_mce
from .measure import calibration_measure
from .scores import brier_score, log_loss
from .smooth import smooth_ece, top_label_smooth_ece

__all__ = [
    "brier_score",
    "log_loss",
    "binned_ece",
    "binned_mce",
    "reliability_bins",
    "top_label_ece",
    "top_label_bins",
    "classwise_ece",
    "smooth_ece",
    "top_label_smooth_ece",
    "grid_ece",
    "grid_mce",
    "grid_calibration_table",
    "GridCalibration",
    "calibration_measure",
]
