"""Reliability diagrams: observed frequency against predicted probability, per bin."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils import check_random_state

from ..metrics import reliability_bins, top_label_bins
from ..metrics._labels import binary_pair
from ..metrics.binned import bin_ids
from ._common import axes, doc, positive_int, pyplot, set_labels

_DIAGONAL = "perfectly calibrated"
#: Legend entries that explain the markers (one each per Axes, whatever the curves).
_SIZE_NOTE = "marker area: rows in the bin"
_SPARSE_NOTE = "fewer than {} rows (hollow, not joined)"


def _curve(ax, predicted, observed, count, *, label, show_counts, color=None, min_count=1):
    """The diagonal (once per Axes), the per-bin curve and its markers; returns the line.

    Bins of fewer than ``min_count`` rows get hollow markers off the line: their rates swing
    to 0 or 1 on a handful of rows, and joined to the curve they would dominate it.
    """
    if not any(line.get_label() == _DIAGONAL for line in ax.get_lines()):
        ax.plot([0, 1], [0, 1], ls="--", c="0.5", lw=1, label=_DIAGONAL)
    enough = count >= min_count
    (line,) = ax.plot(
        predicted[enough], observed[enough], marker="", lw=1.2, label=label, color=color
    )
    colour = line.get_color()
    sizes = 10 + 190 * count / count.max() if show_counts else np.full(count.shape, 20.0)
    # clip_on=False: a bin at 0 or 1 shows its whole marker, not half of it
    ax.scatter(
        predicted[enough], observed[enough], s=sizes[enough], color=colour, zorder=3,
        clip_on=False,
    )  # fmt: skip
    if not enough.all():
        ax.scatter(
            predicted[~enough], observed[~enough], s=sizes[~enough], facecolors="none",
            edgecolors=colour, linewidths=1.0, zorder=3, clip_on=False,
        )  # fmt: skip
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    return line


def _marker_notes(ax, show_counts: bool, sparse: bool, min_count: int) -> list:
    """Legend entries saying what the marker sizes and the hollow markers mean: those this
    curve needs and those an earlier curve on the same Axes put in its legend."""
    from matplotlib.lines import Line2D

    previous = ax.get_legend()
    seen = [t.get_text() for t in previous.get_texts()] if previous is not None else []
    texts = [t for t in seen if t == _SIZE_NOTE or t.startswith(_SPARSE_NOTE[:11])]
    if show_counts and _SIZE_NOTE not in texts:
        texts.append(_SIZE_NOTE)
    if sparse and _SPARSE_NOTE.format(min_count) not in texts:
        texts.append(_SPARSE_NOTE.format(min_count))
    grey = "0.45"
    return [
        Line2D([], [], ls="", marker="o", ms=4, color=grey, label=text)
        if text == _SIZE_NOTE
        else Line2D([], [], ls="", marker="o", ms=5, mfc="none", mec=grey, label=text)
        for text in texts
    ]


def _diagram(
    ax, predicted, observed, count, label, show_counts, title, xlabel, ylabel, min_count=1
):
    """A reliability diagram on square axes: the curve, the labels and a legend of the
    labelled curves and of what the markers mean; returns the Axes (a new figure's when
    ``ax`` is None)."""
    ax = axes(ax)
    _curve(
        ax, predicted, observed, count, label=label, show_counts=show_counts,
        min_count=min_count,
    )  # fmt: skip
    ax.set_aspect("equal")
    set_labels(ax, title=title, xlabel=xlabel, ylabel=ylabel)
    notes = _marker_notes(ax, show_counts, bool(np.any(count < min_count)), min_count)
    handles, labels = ax.get_legend_handles_labels()
    keep = [(h, t) for h, t in zip(handles, labels, strict=True) if t != _DIAGONAL]
    keep += [(h, h.get_label()) for h in notes]
    if keep:
        ax.legend(*zip(*keep, strict=True), loc="upper left", fontsize=7)
    return ax


@doc
def reliability_diagram(
    y,
    p,
    *,
    n_bins: int = 10,
    strategy: str = "uniform",
    ax=None,
    label: str | None = None,
    pos_label=None,
    labels=None,
    show_counts: bool = True,
    min_count: int = 10,
    title: str | None = None,
    xlabel: str = "mean predicted probability",
    ylabel: str = "observed positive rate",
):
    """Observed positive rate against mean predicted probability, per bin.

    Parameters
    ----------
    {binary_y_p}
    {binary_bins}
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted; call again on the same ``ax`` to compare
        methods (the diagonal is drawn once).
    label : str, optional
        Legend label of the curve.
    {binary_labels}
    {diagram_labels}
    """
    min_count = positive_int(min_count, "min_count")
    observed, predicted, count = reliability_bins(
        y, p, n_bins=n_bins, strategy=strategy, pos_label=pos_label, labels=labels
    )
    return _diagram(
        ax, predicted, observed, count, label, show_counts, title, xlabel, ylabel, min_count
    )


def _bootstrap_rates(positives, totals, n_boot, confidence, random_state):
    """Percentile band of each bin's positive rate over resamples of the rows.

    Resampling n rows with replacement draws, for the cells (bin, label), counts from
    Multinomial(n, cell shares): the same distribution of every bin's counts as drawing the
    rows themselves, in O(n_boot x bins) instead of O(n_boot x n).
    """
    n = totals.sum()
    cells = np.concatenate([positives, totals - positives])
    draws = check_random_state(random_state).multinomial(n, cells / n, size=n_boot)
    k = positives.shape[0]
    boot_pos, boot_tot = draws[:, :k], draws[:, :k] + draws[:, k:]
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        # A bin empty in every resample (possible only for a bin of one or two rows) has
        # no band; nanquantile warns about it.
        warnings.simplefilter("ignore", RuntimeWarning)
        rates = boot_pos / boot_tot
        lower, upper = np.nanquantile(rates, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
    return lower, upper


@doc
def reliability_bands(
    y,
    p,
    *,
    n_bins: int = 10,
    strategy: str = "uniform",
    n_boot: int = 200,
    confidence: float = 0.9,
    random_state=0,
    pos_label=None,
    labels=None,
    ax=None,
    histogram: bool = True,
    hist_ax=None,
    label: str | None = None,
    show_counts: bool = False,
    title: str | None = None,
    xlabel: str = "mean predicted probability",
    ylabel: str = "observed positive rate",
    hist_ylabel: str = "count",
):
    """Reliability diagram with bootstrap bands and the count histogram underneath.

    The curve is the observed positive rate against the mean prediction per bin (as in
    :func:`reliability_diagram`). The band around it is the central ``confidence`` interval
    of each bin's observed rate over ``n_boot`` bootstrap resamples of the evaluation rows
    (bins fixed by the full sample), so a bin whose band misses the diagonal is miscalibrated
    beyond sampling noise. The histogram below counts the rows per bin: where it is low, the
    curve says little.

    Parameters
    ----------
    {binary_y_p}
    {binary_bins}
    n_boot : int, default=200
        Bootstrap resamples of the rows.
    confidence : float, default=0.9
        Coverage of the band, in ``(0, 1)``.
    random_state : int, RandomState instance or None, default=0
        Seed of the resampling; the default gives the same band on every call.
    {binary_labels}
    ax : matplotlib Axes, optional
        Axes of the diagram; when omitted, a new figure holding the diagram above the
        histogram.
    histogram : bool, default=True
        Draw the count histogram below the diagram.
    hist_ax : matplotlib Axes, optional
        Axes of the histogram; by default one is appended below ``ax`` sharing its x-axis
        (an axes divider's: leave room under ``ax`` in a figure of your own, or pass
        ``hist_ax``). Pass the same one again to overlay several models.
    label : str, optional
        Legend label of the curve.
    show_counts : bool, default=False
        Marker area proportional to the bin counts (the histogram already shows them).
    title : str, optional
        Axes title (none by default).
    xlabel, ylabel : str
        Axis labels (the x label goes under the histogram when there is one).
    hist_ylabel : str, default="count"
        Y label of the histogram.

    Returns
    -------
    matplotlib Axes
        The diagram's Axes (the histogram's is ``hist_ax``, or the figure's last Axes).
    """
    n_bins = positive_int(n_bins, "n_bins")
    n_boot = positive_int(n_boot, "n_boot")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}.")
    y01, p1 = binary_pair(y, p, pos_label=pos_label, labels=labels)
    ids = bin_ids(p1, n_bins, strategy)
    count = np.bincount(ids, minlength=n_bins)
    keep = np.flatnonzero(count)
    totals = count[keep]
    positives = np.bincount(ids, weights=y01, minlength=n_bins)[keep].round().astype(np.int64)
    predicted = np.bincount(ids, weights=p1, minlength=n_bins)[keep] / totals
    observed = positives / totals
    lower, upper = _bootstrap_rates(positives, totals, n_boot, confidence, random_state)

    if ax is None and histogram and hist_ax is None:
        # A new figure of two rows under the constrained layout, which keeps every label
        # inside the figure (it cannot manage an Axes appended by an axes divider).
        _, (ax, hist_ax) = pyplot().subplots(
            2, 1, figsize=(4.5, 5), height_ratios=(3, 1), sharex=True, layout="constrained"
        )
    ax = axes(ax, figsize=(4.5, 5))
    line = _curve(ax, predicted, observed, totals, label=label, show_counts=show_counts)
    ax.fill_between(
        predicted,
        lower,
        upper,
        color=line.get_color(),
        alpha=0.25,
        lw=0,
        label=f"{confidence:.0%} bootstrap band" + (f" ({label})" if label else ""),
    )
    ax.legend(loc="upper left", fontsize=8)
    set_labels(ax, title=title, ylabel=ylabel)
    if not histogram:
        set_labels(ax, xlabel=xlabel)
        return ax
    if hist_ax is None:
        from mpl_toolkits.axes_grid1 import make_axes_locatable

        hist_ax = make_axes_locatable(ax).append_axes("bottom", size="30%", pad=0.1, sharex=ax)
    if strategy == "uniform":
        left, right = keep / n_bins, (keep + 1) / n_bins
    else:  # equal-count bins span the predictions they hold
        left = np.array([p1[ids == b].min() for b in keep])
        right = np.maximum(np.array([p1[ids == b].max() for b in keep]), left + 0.005)
    hist_ax.bar(
        left,
        totals,
        width=right - left,
        align="edge",
        color=line.get_color(),
        alpha=0.6,
        edgecolor="white",
        lw=0.5,
    )
    hist_ax.set_xlim(0, 1)
    ax.tick_params(labelbottom=False)
    set_labels(ax, xlabel="")
    set_labels(hist_ax, xlabel=xlabel, ylabel=hist_ylabel)
    return ax


@doc
def top_label_reliability_diagram(
    y,
    p,
    *,
    n_bins: int = 15,
    strategy: str = "uniform",
    labels=None,
    ax=None,
    label: str | None = None,
    show_counts: bool = True,
    min_count: int = 10,
    title: str | None = None,
    xlabel: str = "confidence (largest class probability)",
    ylabel: str = "accuracy",
):
    """Top-label reliability diagram of multi-class probabilities.

    Per bin of the confidence (each row's largest class probability): the accuracy of the
    predicted class against the mean confidence (:func:`fusion.metrics.top_label_bins`); the
    mass-weighted gap to the diagonal is :func:`fusion.metrics.top_label_ece`.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels of any hashable, sortable kind.
    p : array-like of shape (n, C)
        Class probabilities whose columns follow the sorted labels (rows sum to 1).
    n_bins : int, default=15
        Number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width or equal-count bins of the confidence.
    labels : array-like of shape (C,), optional
        The sorted classes of the columns, when ``y`` does not hold every class.
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted; call again on the same ``ax`` to compare.
    label : str, optional
        Legend label of the curve.
    {diagram_labels}
    """
    if np.ndim(p) != 2:
        raise ValueError(
            f"p must be an (n, C) matrix of class probabilities, got {np.ndim(p)} dimension(s); "
            "for a binary positive-class probability use reliability_diagram."
        )
    min_count = positive_int(min_count, "min_count")
    accuracy, confidence, count = top_label_bins(
        y, p, n_bins=n_bins, strategy=strategy, labels=labels
    )
    return _diagram(
        ax, confidence, accuracy, count, label, show_counts, title, xlabel, ylabel, min_count
    )
