"""What every figure shares: the lazy matplotlib import, a fresh Axes, label handling and the
checks on a fitted estimator."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..metrics._docs import FRAGMENTS, fill_doc

#: Parameters several figures share (beside the metrics' ones in fusion/metrics/_docs.py).
_FIGURE_FRAGMENTS = {
    "diagram_labels": """\
show_counts : bool, default=True
    Marker area proportional to the number of rows in each bin (the legend says so).
min_count : int, default=10
    Bins of fewer rows are drawn as hollow markers, not joined to the curve: on a handful
    of rows a bin's rate swings to 0 or 1 and would dominate the curve (the legend says
    so).
title : str, optional
    Axes title (none by default).
xlabel, ylabel : str
    Axis labels.

Returns
-------
matplotlib Axes""",
    "square_labels": """\
colorbar : bool, default=True
    Add a colorbar for the probability.
title : str, optional
    Axes title; default the estimator's class name.
xlabel, ylabel : str, optional
    Axis labels; default ``"normalized score 1"`` and ``"normalized score 2"`` (or the
    column names the estimator was fitted with).
colorbar_label : str, optional
    Default ``"P(Y = <positive class> | u)"``.""",
}

#: The decorator of the figures' docstrings: ``{name}`` lines become the shared text.
doc = fill_doc({**FRAGMENTS, **_FIGURE_FRAGMENTS})


def pyplot():
    """``matplotlib.pyplot``, imported on first use (matplotlib is the optional ``plot`` extra)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "fusion.plot needs matplotlib: pip install 'fusion-calibration[plot]'."
        ) from None
    return plt


def axes(ax, figsize=(4.5, 4)):
    """``ax``, or the Axes of a new figure.

    A new figure uses the constrained layout, which keeps titles, axis labels, tick labels
    and colorbars inside the figure at any size.
    """
    if ax is not None:
        return ax
    return pyplot().subplots(figsize=figsize, layout="constrained")[1]


def set_labels(ax, *, title=None, xlabel=None, ylabel=None) -> None:
    """Set the labels that are not None (``""`` clears one)."""
    if title is not None:
        ax.set_title(title)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)


def fitted_binary(estimator, *, n_scores: int | None = None, min_scores: int = 1, what: str):
    """Check that ``estimator`` is a fitted binary fusion estimator with the right number of
    scores; return ``(M, positive label)``."""
    for attribute in ("calibrating_function", "normalize"):
        if not callable(getattr(estimator, attribute, None)):
            raise ValueError(
                f"{what} needs a fitted fusion estimator (with calibrating_function), got "
                f"{type(estimator).__name__}."
            )
    check_is_fitted(estimator, "ecdf_")
    classes = np.asarray(estimator.classes_)
    if classes.shape[0] != 2:
        raise ValueError(
            f"{what} draws the probability of the positive class of a binary model; the "
            f"estimator has {classes.shape[0]} classes."
        )
    M = int(estimator.n_features_in_)
    if n_scores is not None and M != n_scores:
        raise ValueError(
            f"{what} draws a function of {n_scores} scores; the estimator was fitted on {M} "
            "score columns."
        )
    if M < min_scores:
        raise ValueError(f"{what} needs at least {min_scores} scores; the estimator has {M}.")
    return M, classes[1]


def score_name(estimator, j: int) -> str:
    """``"score j+1"``, or the column name when the estimator was fitted on a DataFrame."""
    names = getattr(estimator, "feature_names_in_", None)
    return f"score {j + 1}" if names is None else str(names[j])


def positive_int(value, name: str, minimum: int = 1) -> int:
    try:
        ok = not isinstance(value, bool) and int(value) == value and value >= minimum
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)
