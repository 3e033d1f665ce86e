"""Figures for fused probabilities: calibrating-function contours and reliability diagrams.

Needs matplotlib (extra ``plot``), imported only when a function is called.

* :func:`contour` -- the fitted calibrating function of a two-score estimator as filled
  contours on the normalized square ``[0, 1]^2`` (the paper's Figure 1(b)-(d)), optionally
  with the training points on top.
* :func:`reliability_diagram` -- observed positive rate against mean predicted probability
  per bin, with the diagonal of perfect calibration.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .metrics import reliability_bins

__all__ = ["contour", "reliability_diagram"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "fusion.plot needs matplotlib: pip install 'fusion-calibration[plot]'."
        ) from None
    return plt


def _axes(ax):
    if ax is not None:
        return ax
    return _pyplot().subplots(figsize=(4.5, 4))[1]


def contour(
    estimator,
    *,
    ax=None,
    resolution: int = 101,
    levels=None,
    points=None,
    cmap: str = "viridis",
    colorbar: bool = True,
    title: str | None = None,
):
    """Filled contours of a fitted two-score estimator's calibrating function.

    Parameters
    ----------
    estimator : fitted fusion estimator with ``n_features_in_ == 2``
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted.
    resolution : int, default=101
        Grid points per axis of ``[0, 1]``.
    levels : int or sequence of float, optional
        Contour levels; default ``0, 0.1, ..., 1``.
    points : tuple (S, y), optional
        Raw scores and labels to overlay, normalized with the estimator's ``ecdf_``
        (for example the training data).
    cmap : str
        Colormap of the filled contours.
    colorbar : bool
        Add a colorbar for the probability.
    title : str, optional
        Axes title; default the estimator's class name.

    Returns
    -------
    matplotlib Axes
    """
    check_is_fitted(estimator, "ecdf_")
    if getattr(estimator, "n_features_in_", None) != 2:
        raise ValueError(
            "contour draws the calibrating function of two scores; the estimator was fitted "
            f"on {getattr(estimator, 'n_features_in_', '?')} score columns."
        )
    if int(resolution) != resolution or resolution < 2:
        raise ValueError(f"resolution must be an integer >= 2, got {resolution!r}.")
    ax = _axes(ax)
    grid = np.linspace(0.0, 1.0, int(resolution))
    u1, u2 = np.meshgrid(grid, grid)
    f = estimator.calibrating_function(np.column_stack([u1.ravel(), u2.ravel()]))
    f = f.reshape(u1.shape)
    if levels is None:
        levels = np.linspace(0.0, 1.0, 11)
    filled = ax.contourf(u1, u2, f, levels=levels, cmap=cmap, vmin=0.0, vmax=1.0)
    lines = ax.contour(u1, u2, f, levels=levels, colors="k", linewidths=0.5)
    ax.clabel(lines, fmt="%.1f", fontsize=7)
    if points is not None:
        S, y = points
        U = estimator._normalize(S)
        y = np.asarray(y).reshape(-1)
        positive = y == estimator.classes_[1]
        ax.scatter(
            U[~positive, 0],
            U[~positive, 1],
            s=6,
            c="white",
            edgecolors="k",
            linewidths=0.3,
            label=f"y = {estimator.classes_[0]}",
        )
        ax.scatter(
            U[positive, 0],
            U[positive, 1],
            s=6,
            c="red",
            edgecolors="k",
            linewidths=0.3,
            label=f"y = {estimator.classes_[1]}",
        )
        ax.legend(loc="upper left", fontsize=7, framealpha=0.8)
    if colorbar:
        ax.figure.colorbar(filled, ax=ax, label="P(Y = 1 | u)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("normalized score 1")
    ax.set_ylabel("normalized score 2")
    ax.set_title(type(estimator).__name__ if title is None else title)
    return ax


def reliability_diagram(
    y,
    p,
    *,
    n_bins: int = 10,
    strategy: str = "uniform",
    ax=None,
    label: str | None = None,
    pos_label=None,
    show_counts: bool = True,
):
    """Observed positive rate against mean predicted probability, per bin.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels (0/1, bool, or any with ``pos_label``).
    p : array-like of shape (n,) or (n, 2)
        Predicted positive-class probabilities (or ``predict_proba`` output).
    n_bins : int, default=10
    strategy : {"uniform", "quantile"}
        Equal-width or equal-count bins (:func:`fusion.metrics.reliability_bins`).
    ax : matplotlib Axes, optional
    label : str, optional
        Legend label of the curve; call again on the same ``ax`` to compare methods.
    pos_label : optional
        The positive label when ``y`` is not 0/1 or bool.
    show_counts : bool
        Marker area proportional to the number of samples in each bin.

    Returns
    -------
    matplotlib Axes
    """
    observed, predicted, count = reliability_bins(
        y, p, n_bins=n_bins, strategy=strategy, pos_label=pos_label
    )
    ax = _axes(ax)
    if not any(line.get_label() == "perfectly calibrated" for line in ax.get_lines()):
        ax.plot([0, 1], [0, 1], ls="--", c="0.5", lw=1, label="perfectly calibrated")
    (line,) = ax.plot(predicted, observed, marker="", lw=1.2, label=label)
    sizes = 10 + 190 * count / count.max() if show_counts else 20
    ax.scatter(predicted, observed, s=sizes, color=line.get_color(), zorder=3)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("mean predicted probability")
    ax.set_ylabel("observed positive rate")
    if label is not None:
        ax.legend(loc="upper left", fontsize=8)
    return ax
