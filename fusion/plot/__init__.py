"""Figures of fused probabilities. Each function draws into a matplotlib Axes (a new figure
when ``ax`` is omitted) and returns it; titles and axis labels are parameters.

Needs matplotlib (extra ``plot``), imported only when a function is called.

The fitted calibrating function (binary models):

* :func:`fused_surface` -- heatmap of the fused probability over the normalized square
  ``[0, 1]^2`` with the density of the training scores (the papers' Figure 1 in one panel).
* :func:`contour` -- the same function as labelled filled contours, optionally with the
  labelled training points on top (Figure 1(b)-(d)).
* :func:`slices` -- for any number of scores: the fused probability along one score with
  the others held at chosen quantiles.

Calibration on test data:

* :func:`reliability_diagram` -- observed positive rate against mean predicted probability
  per bin, with the diagonal of perfect calibration.
* :func:`reliability_bands` -- the same with bootstrap bands and the count histogram
  underneath.
* :func:`grid_calibration_heatmap` -- per-cell grid calibration error of a two-score model
  (:func:`fusion.metrics.grid_calibration_table`).
* :func:`top_label_reliability_diagram` -- accuracy against confidence of multi-class
  probabilities ``(n, C)``.
"""

from __future__ import annotations

from .grid import grid_calibration_heatmap
from .reliability import reliability_bands, reliability_diagram, top_label_reliability_diagram
from .surface import contour, fused_surface, slices

__all__ = [
    "fused_surface",
    "contour",
    "slices",
    "reliability_diagram",
    "reliability_bands",
    "grid_calibration_heatmap",
    "top_label_reliability_diagram",
]
