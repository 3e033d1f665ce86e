"""Parameter descriptions that several metrics share, written once (:mod:`fusion._docs`).

The figures of :mod:`fusion.plot` use the same fragments for the same parameters.
"""

from __future__ import annotations

from .._docs import fill_doc

__all__ = ["FRAGMENTS", "doc"]

#: Fragments by name (numpydoc text without indentation).
FRAGMENTS: dict[str, str] = {
    "binary_y_p": """\
y : array-like of shape (n,)
    Labels (0/1, bool, or any two with ``pos_label``).
p : array-like of shape (n,) or (n, 2)
    Predicted positive-class probabilities (or ``predict_proba`` output).""",
    "binary_bins": """\
n_bins : int, default=10
    Number of bins.
strategy : {"uniform", "quantile"}, default="uniform"
    Equal-width or equal-count bins (see :func:`fusion.metrics.reliability_bins`).""",
    "binary_labels": """\
pos_label : optional
    The positive label when ``y`` is not 0/1 or bool.
labels : array-like of shape (2,), optional
    The two sorted classes, when ``y`` holds only one of them.""",
    "top_label_y_p": """\
y : array-like of shape (n,)
    Labels of any hashable, sortable kind.
p : array-like of shape (n, C) or (n,)
    Class probabilities whose columns follow the sorted labels or ``labels`` (rows sum to
    1), or a binary positive-class probability.""",
    "top_label_labels": """\
labels : array-like of shape (C,), optional
    The class of every column, in the columns' order (any order for ``C >= 3``, sorted for
    two), when ``y`` does not hold every class or the columns do not follow the sorted
    labels (pass a fused model's ``classes_``).
pos_label : optional
    The positive label, for a binary ``p`` of shape ``(n,)`` with labels other than 0/1.""",
    "scoring_args": """\
y : array-like of shape (n,)
    Labels of any hashable, sortable kind.
p : array-like of shape (n,) or (n, C)
    Positive-class probability, or class probabilities whose columns follow the sorted
    labels or ``labels`` (``predict_proba`` output); rows of an ``(n, C)`` matrix must sum
    to 1.
labels : array-like of shape (C,), optional
    The class of every column of ``p``, in the columns' order (any order for ``C >= 3``,
    sorted for two), when ``y`` does not hold every class or the columns do not follow the
    sorted labels (pass a fused model's ``classes_``).
pos_label : optional
    The positive label of a binary problem, when ``y`` is not 0/1 or bool.""",
    "grid_args": """\
estimator : fitted fusion estimator
    Binary model with ``ecdf_``, ``classes_`` and ``calibrating_function``.
S : array-like of shape (n, M)
    Raw test scores.
y : array-like of shape (n,)
    Test labels, in the estimator's label space (``classes_[1]`` is positive).
bins : int, default=10
    Cells per axis.
min_count : int, default=1000
    Minimum number of test samples for a cell to count.""",
}


def _sections(arguments: str, see_also: str = "") -> str:
    """The Parameters and Returns sections of a metric returning a float (and See Also)."""
    text = f"Parameters\n----------\n{FRAGMENTS[arguments]}\n\nReturns\n-------\nfloat"
    return text + (f"\n\nSee Also\n--------\n{see_also}" if see_also else "")


FRAGMENTS["top_label_args"] = (
    FRAGMENTS["top_label_y_p"]
    + """
n_bins : int, default=15
    Number of bins.
strategy : {"uniform", "quantile"}, default="uniform"
    Equal-width bins of ``[0, 1]`` or equal-count (equal-mass) bins.
"""
    + FRAGMENTS["top_label_labels"]
)
FRAGMENTS["top_label_metric"] = _sections("top_label_args")
FRAGMENTS["grid_metric"] = _sections("grid_args", "grid_calibration_table : the per-cell values.")


#: The decorator of the metrics' docstrings.
doc = fill_doc(FRAGMENTS)
