"""Per-cell grid calibration error of a two-score model as a heatmap."""

from __future__ import annotations

import numpy as np

from ..metrics import grid_calibration_table
from ._common import axes, fitted_binary, score_name, set_labels


def grid_calibration_heatmap(
    estimator,
    S,
    y,
    *,
    bins: int = 10,
    min_count: int = 1000,
    signed: bool = True,
    annotate: bool = True,
    ax=None,
    cmap: str | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    colorbar_label: str | None = None,
):
    """Observed minus fitted probability on every cell of the grid (Wang & Liu 2020, Sec. 5.2).

    The cells and values are those of :func:`fusion.metrics.grid_calibration_table`: test
    scores normalized with the estimator's ``ecdf_``, ``[0, 1]^2`` cut into ``bins x bins``
    cells, each cell with at least ``min_count`` test samples compared with the calibrating
    function at its centre. Cells with fewer samples are left blank (grey). The grid ECE is
    the mean of the absolute values shown, the grid MCE their maximum.

    Parameters
    ----------
    estimator : fitted fusion estimator with ``n_features_in_ == 2``
        Binary model to evaluate.
    S : array-like of shape (n, 2)
        Raw test scores.
    y : array-like of shape (n,)
        Test labels, in the estimator's label space.
    bins : int, default=10
        Cells per axis.
    min_count : int, default=1000
        Minimum number of test samples for a cell to be shown.
    signed : bool, default=True
        True: ``observed - predicted`` (red where the model under-predicts, blue where it
        over-predicts). False: the absolute gap.
    annotate : bool, default=True
        Write each shown cell's value in it.
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted.
    cmap : str, optional
        Default ``"RdBu_r"`` (signed) or ``"Reds"`` (absolute).
    vmax : float, optional
        Colour scale limit; default the largest absolute value shown.
    colorbar : bool, default=True
        Add a colorbar.
    title : str, optional
        Default: the grid ECE and MCE and the number of cells shown.
    xlabel, ylabel : str, optional
        Axis labels; default ``"normalized score 1"`` and ``"normalized score 2"``.
    colorbar_label : str, optional
        Default ``"observed - predicted"`` or ``"|observed - predicted|"``.

    Returns
    -------
    matplotlib Axes
    """
    fitted_binary(estimator, n_scores=2, what="grid_calibration_heatmap")
    table = grid_calibration_table(estimator, S, y, bins=bins, min_count=min_count)
    bins = int(bins)
    values = table.observed - table.predicted if signed else table.gap
    image_values = np.full((bins, bins), np.nan)
    image_values[table.cells[:, 1], table.cells[:, 0]] = values  # rows are score 2
    if vmax is None:
        vmax = max(float(np.max(np.abs(values))), 1e-3)
    import matplotlib

    colours = matplotlib.colormaps[cmap or ("RdBu_r" if signed else "Reds")]
    colours = colours.with_extremes(bad="0.85")  # the cells with too few samples
    ax = axes(ax)
    image = ax.imshow(
        np.ma.masked_invalid(image_values),
        origin="lower",
        extent=(0.0, 1.0, 0.0, 1.0),
        cmap=colours,
        vmin=-vmax if signed else 0.0,
        vmax=vmax,
        interpolation="nearest",
    )
    if annotate:
        for (i, j), value in zip(table.cells, values, strict=True):
            ax.text(
                (i + 0.5) / bins,
                (j + 0.5) / bins,
                f"{value:+.2f}" if signed else f"{value:.2f}",
                ha="center",
                va="center",
                fontsize=max(4, min(8, 80 // bins)),
                color="white" if abs(value) > 0.6 * vmax else "black",
            )
    if colorbar:
        default = "observed - predicted" if signed else "|observed - predicted|"
        ax.figure.colorbar(
            image, ax=ax, label=default if colorbar_label is None else colorbar_label
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    set_labels(
        ax,
        title=(
            f"grid ECE {table.ece:.3f}, MCE {table.mce:.3f} ({table.n_kept} cells)"
            if title is None
            else title
        ),
        xlabel=f"normalized {score_name(estimator, 0)}" if xlabel is None else xlabel,
        ylabel=f"normalized {score_name(estimator, 1)}" if ylabel is None else ylabel,
    )
    return ax
