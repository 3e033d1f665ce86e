"""Per-cell grid calibration error of a two-score model as a heatmap."""

from __future__ import annotations

import numpy as np

from ..metrics import grid_calibration_table
from ._common import axes, fitted_binary, positive_int, score_name, set_labels

#: The paper's ``min_count`` (Wang & Liu 2020, Sec. 5.2), kept whenever the data allow it.
PAPER_MIN_COUNT = 1000
#: The values ``min_count=None`` tries after the paper's, largest first.
FALLBACK_MIN_COUNTS = (500, 200, 100, 50, 20, 10)
#: ``min_count=None`` keeps cells that hold at least this share of the test rows together.
MIN_SHARE_SHOWN = 0.5
#: Annotations smaller than this (points) are not drawn by ``annotate="auto"``.
MIN_FONTSIZE = 5.0
#: Widths (in em of DejaVu Sans, matplotlib's default font) of the annotations ``+0.05`` and
#: ``0.05``, with a margin: the font size is chosen so that one fits in 85 % of a cell.
_LABEL_EM = {True: 3.2, False: 2.4}


def choose_min_count(counts, n_rows: int) -> int:
    """The ``min_count`` of :func:`grid_calibration_heatmap` when none is given.

    The paper's 1000 when the cells with at least 1000 test rows hold at least half of the
    ``n_rows`` test rows; otherwise the largest of 500, 200, 100, 50, 20 and 10 for which
    they do.

    Parameters
    ----------
    counts : array-like of int
        Test rows in each non-empty cell.
    n_rows : int
        Test rows in all.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        Even the cells with at least 10 rows hold less than half of the rows: there are too
        few test rows for the grid.
    """
    counts = np.asarray(counts)
    for candidate in (PAPER_MIN_COUNT, *FALLBACK_MIN_COUNTS):
        if counts[counts >= candidate].sum() >= MIN_SHARE_SHOWN * n_rows:
            return candidate
    raise ValueError(
        f"too few test rows ({n_rows}) for the grid: the cells with at least "
        f"{FALLBACK_MIN_COUNTS[-1]} rows hold less than half of them. Pass fewer bins (the "
        "paper uses 10), or min_count= explicitly (each shown cell's observed rate then rests "
        "on that many rows)."
    )


def annotation_fontsize(ax, bins: int, signed: bool) -> float:
    """The largest font size (points, at most 9) at which a cell's value fits in its cell,
    from the Axes' size on its figure (after the figure's layout)."""
    figure = ax.figure
    figure.draw_without_rendering()  # apply the layout and the equal aspect
    box = ax.get_window_extent()
    cell_points = min(box.width, box.height) / bins * 72.0 / figure.dpi
    return float(min(9.0, 0.85 * cell_points / _LABEL_EM[bool(signed)]))


def grid_calibration_heatmap(
    estimator,
    S,
    y,
    *,
    bins: int = 10,
    min_count: int | None = None,
    signed: bool = True,
    annotate: bool | str = "auto",
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
    the mean of the absolute values shown, the grid MCE their maximum; the default title
    states them with the number of cells shown and the ``min_count`` used.

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
    min_count : int, optional
        Minimum number of test samples for a cell to be shown. By default it is chosen from
        the data: the paper's 1000 when the cells with at least 1000 test samples hold at
        least half of the test rows (so that the picture covers where most rows lie);
        otherwise the largest of 500, 200, 100, 50, 20 and 10 for which they do. For
        example 19,000 rows of two independent scorers put about 190 rows in each of the
        100 cells, and give 100. Fewer rows than that raise a ``ValueError`` saying what to
        pass. Pass 1000 to compare with the paper's tables.
    signed : bool, default=True
        True: ``observed - predicted`` (red where the model under-predicts, blue where it
        over-predicts). False: the absolute gap.
    annotate : bool or "auto", default="auto"
        Write each shown cell's value in it, at the largest font size (up to 9 points) at
        which the values do not overlap, given the size of the Axes on its figure and
        ``bins``. ``"auto"`` writes them only when that size is at least 5 points (10 x 10
        cells on the default figure are; 20 x 20 are not), True always, False never.
    ax : matplotlib Axes, optional
        Drawn into a new figure (5.6 x 4.8 inches) when omitted.
    cmap : str, optional
        Default ``"RdBu_r"`` (signed) or ``"Reds"`` (absolute).
    vmax : float, optional
        Colour scale limit; default the largest absolute value shown.
    colorbar : bool, default=True
        Add a colorbar.
    title : str, optional
        Default: the grid ECE and MCE, the number of cells shown and the ``min_count``.
    xlabel, ylabel : str, optional
        Axis labels; default ``"normalized score 1"`` and ``"normalized score 2"``.
    colorbar_label : str, optional
        Default ``"observed - predicted"`` or ``"|observed - predicted|"``.

    Returns
    -------
    matplotlib Axes
    """
    fitted_binary(estimator, n_scores=2, what="grid_calibration_heatmap")
    if annotate not in (True, False, "auto"):
        raise ValueError(f"annotate must be True, False or 'auto', got {annotate!r}.")
    bins = positive_int(bins, "bins")
    if min_count is None:
        every_cell = grid_calibration_table(estimator, S, y, bins=bins, min_count=1)
        n_rows = int(every_cell.count.sum())
        min_count = choose_min_count(every_cell.count, n_rows)
    table = grid_calibration_table(estimator, S, y, bins=bins, min_count=min_count)
    values = table.observed - table.predicted if signed else table.gap
    image_values = np.full((bins, bins), np.nan)
    image_values[table.cells[:, 1], table.cells[:, 0]] = values  # rows are score 2
    if vmax is None:
        vmax = max(float(np.max(np.abs(values))), 1e-3)
    import matplotlib

    colours = matplotlib.colormaps[cmap or ("RdBu_r" if signed else "Reds")]
    colours = colours.with_extremes(bad="0.85")  # the cells with too few samples
    ax = axes(ax, figsize=(5.6, 4.8))  # room for 10 x 10 readable annotations
    image = ax.imshow(
        np.ma.masked_invalid(image_values),
        origin="lower",
        extent=(0.0, 1.0, 0.0, 1.0),
        cmap=colours,
        vmin=-vmax if signed else 0.0,
        vmax=vmax,
        interpolation="nearest",
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
            f"grid ECE {table.ece:.3f}, MCE {table.mce:.3f}\n"
            f"{table.n_kept} cells with at least {min_count} rows"
            if title is None
            else title
        ),
        xlabel=f"normalized {score_name(estimator, 0)}" if xlabel is None else xlabel,
        ylabel=f"normalized {score_name(estimator, 1)}" if ylabel is None else ylabel,
    )
    if annotate:
        fontsize = annotation_fontsize(ax, bins, signed)
        if annotate != "auto" or fontsize >= MIN_FONTSIZE:
            for (i, j), value in zip(table.cells, values, strict=True):
                ax.text(
                    (i + 0.5) / bins,
                    (j + 0.5) / bins,
                    f"{value:+.2f}" if signed else f"{value:.2f}",
                    ha="center",
                    va="center",
                    fontsize=fontsize,
                    color="white" if abs(value) > 0.6 * vmax else "black",
                )
    return ax
