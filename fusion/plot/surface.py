"""The fitted calibrating function itself: contours and a heatmap over the normalized square
(two scores), and one-dimensional slices (any number of scores)."""

from __future__ import annotations

import numpy as np

from ._common import axes, doc, fitted_binary, positive_int, score_name, set_labels


def _surface(estimator, resolution: int):
    grid = np.linspace(0.0, 1.0, positive_int(resolution, "resolution", minimum=2))
    u1, u2 = np.meshgrid(grid, grid)
    f = estimator.calibrating_function(np.column_stack([u1.ravel(), u2.ravel()]))
    return u1, u2, f.reshape(u1.shape)


#: At most this many points are drawn by :func:`contour` (a fixed random subset beyond):
#: more cover the contours they are drawn on without showing more.
_CONTOUR_POINTS = 2000


def _inner_points(lines) -> list[tuple[float, float]]:
    """For every level of a contour set on the unit square, the point of its line farthest
    from the frame: where its label is placed (the default placement put labels on the
    frame, where lines meet it)."""
    points = []
    for segments in lines.allsegs:
        vertices = [v for v in segments if len(v)]
        if not vertices:
            continue
        v = np.concatenate(vertices)
        inside = np.minimum(np.minimum(v[:, 0], 1 - v[:, 0]), np.minimum(v[:, 1], 1 - v[:, 1]))
        points.append(tuple(v[int(np.argmax(inside))]))
    return points


def _halo(width: float = 2.5, colour: str = "white"):
    """A stroke around a line or a text, so it reads on any background."""
    from matplotlib import patheffects

    return [patheffects.withStroke(linewidth=width, foreground=colour)]


def _legend_below(ax, handles, labels, *, title=None, ncol=None):
    """A legend under the Axes, outside the plotted square (the constrained layout makes
    room for it): it covers no point and no contour."""
    legend = ax.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.13),
        ncol=len(handles) if ncol is None else ncol,
        fontsize=7,
        title=title,
        title_fontsize=7,
        frameon=False,
        handlelength=2.5,
        columnspacing=1.2,
    )
    return legend


def _square_labels(ax, estimator, title, xlabel, ylabel):
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    set_labels(
        ax,
        title=type(estimator).__name__ if title is None else title,
        xlabel=f"normalized {score_name(estimator, 0)}" if xlabel is None else xlabel,
        ylabel=f"normalized {score_name(estimator, 1)}" if ylabel is None else ylabel,
    )


@doc
def contour(
    estimator,
    *,
    ax=None,
    resolution: int = 101,
    levels=None,
    points=None,
    max_points: int = _CONTOUR_POINTS,
    cmap: str = "viridis",
    colorbar: bool = True,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    colorbar_label: str | None = None,
):
    """Filled contours of a fitted two-score estimator's calibrating function.

    Parameters
    ----------
    estimator : fitted fusion estimator with ``n_features_in_ == 2``
        Binary model whose calibrating function is drawn.
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted.
    resolution : int, default=101
        Grid points per axis of ``[0, 1]``.
    levels : int or sequence of float, optional
        Contour levels; default ``0, 0.1, ..., 1``.
    points : tuple (S, y), optional
        Raw scores and labels to overlay, normalized with the estimator's ``ecdf_``
        (for example the training data). They are drawn under the contour lines and their
        labels, with the legend below the square; beyond ``max_points`` rows a fixed
        random subset of that many is drawn (the legend says how many).
    max_points : int, default=2000
        The most points drawn.
    cmap : str, default="viridis"
        Colormap of the filled contours.
    {square_labels}

    Returns
    -------
    matplotlib Axes
    """
    _, positive = fitted_binary(estimator, n_scores=2, what="contour")
    u1, u2, f = _surface(estimator, resolution)
    ax = axes(ax)
    if levels is None:
        levels = np.linspace(0.0, 1.0, 11)
    filled = ax.contourf(u1, u2, f, levels=levels, cmap=cmap, vmin=0.0, vmax=1.0)
    # the lines and their labels above the points (zorder), each label with a halo
    lines = ax.contour(u1, u2, f, levels=levels, colors="k", linewidths=0.5, zorder=3)
    for text in ax.clabel(lines, fmt="%.1f", fontsize=7, manual=_inner_points(lines)):
        text.set_zorder(4)
        text.set_path_effects(_halo(2.0))
    if points is not None:
        S, y = points
        U = estimator.normalize(S)
        y = np.asarray(y).reshape(-1)
        if y.shape[0] != U.shape[0]:
            raise ValueError(f"points: S has {U.shape[0]} rows but y has {y.shape[0]} labels.")
        max_points = positive_int(max_points, "max_points")
        n = U.shape[0]
        shown = np.arange(n)
        if n > max_points:
            shown = np.sort(np.random.default_rng(0).choice(n, max_points, replace=False))
        U, y = U[shown], y[shown]
        is_positive = y == positive
        handles = []
        for mask, colour, name in (
            (~is_positive, "white", estimator.classes_[0]),
            (is_positive, "red", positive),
        ):
            handles.append(
                ax.scatter(
                    U[mask, 0],
                    U[mask, 1],
                    s=6 if shown.size <= 1000 else 3,
                    c=colour,
                    edgecolors="k",
                    linewidths=0.3,
                    zorder=2,
                    label=f"y = {name}",
                )
            )
        note = None if shown.size == n else f"{shown.size:,} of {n:,} points (random)"
        _legend_below(ax, handles, [h.get_label() for h in handles], title=note)
    if colorbar:
        label = f"P(Y = {positive} | u)" if colorbar_label is None else colorbar_label
        ax.figure.colorbar(filled, ax=ax, label=label)
    _square_labels(ax, estimator, title, xlabel, ylabel)
    return ax


#: Points used for the density estimate; a random subset beyond (the contours of 5,000 points
#: are as readable as those of millions, and the estimate costs points x grid).
_DENSITY_POINTS = 5000


def density_regions(
    U: np.ndarray, masses, size: int = 60, *, max_points: int = _DENSITY_POINTS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The densest regions of normalized points that hold given shares of them.

    The points ``U`` of the normalized square are mapped to their normal scores
    ``z = Phi^-1(u)``, where a Gaussian kernel density estimate ``q`` (Scott's bandwidth) is
    smooth and has no edges to leak over. The region of mass ``m`` is the highest-density
    region ``{q >= t_m}``, with ``t_m`` the ``(1 - m)``-quantile of ``q`` at the points
    themselves (Hyndman 1996), so that it holds the share ``m`` of the points. The regions of
    increasing masses are super-level sets of one function at decreasing thresholds, hence
    nested; as shapes on the square they are the same sets in ``u``: mapping ``z`` back by
    ``Phi`` moves no point across a boundary.

    Densest is meant in normal scores, not on the square itself: on the square every score is
    uniform, so two independent scorers have a flat density there whose level sets are noise,
    and correlated ones have a density that diverges at two corners. In normal scores both
    are unimodal, and the regions are filled shapes around the bulk of the points.

    Parameters
    ----------
    U : ndarray of shape (n, 2)
        Normalized points in ``[0, 1]^2`` (values at 0 or 1 are moved half a rank inside).
    masses : sequence of float
        Shares in ``(0, 1)``.
    size : int, default=60
        Grid points per axis of the square at which ``q`` is evaluated.
    max_points : int, default=5000
        The estimate uses a fixed random subset of this many points when there are more.

    Returns
    -------
    grid : ndarray of shape (size,)
        Cell centres ``(k + 1/2) / size`` of each axis of the square.
    density : ndarray of shape (size, size)
        ``q(Phi^-1(u_1), Phi^-1(u_2))`` on the grid (rows: the second coordinate).
    levels : ndarray of shape (len(masses),)
        The threshold ``t_m`` of each mass, in the order of ``masses`` (larger masses give
        lower thresholds).
    """
    from scipy.stats import gaussian_kde, norm

    U = np.asarray(U, dtype=float)
    n = U.shape[0]
    if U.ndim != 2 or U.shape[1] != 2:
        raise ValueError(f"the density needs points of shape (n, 2), got {U.shape}.")
    if n < 3:
        raise ValueError(f"the density needs at least 3 points, got {n}.")
    if n > max_points:
        U = U[np.random.default_rng(0).choice(n, max_points, replace=False)]
    edge = 0.5 / max(n, 2)
    Z = norm.ppf(np.clip(U, edge, 1.0 - edge)).T
    try:
        kde = gaussian_kde(Z)
    except np.linalg.LinAlgError:
        raise ValueError(
            "the density of the scores is degenerate (the two normalized scores lie on a "
            "line); use density='points'."
        ) from None
    grid = (np.arange(size) + 0.5) / size
    g1, g2 = np.meshgrid(norm.ppf(grid), norm.ppf(grid))
    density = kde(np.vstack([g1.ravel(), g2.ravel()])).reshape(g1.shape)
    levels = np.quantile(kde(Z), 1.0 - np.asarray(masses, dtype=float))
    return grid, density, levels


#: Line styles of the density outlines, from the densest region outwards.
_REGION_STYLES = ("-", "--", ":", "-.")


def _density_contours(ax, U: np.ndarray, masses: np.ndarray, size: int) -> None:
    """The nested regions of :func:`density_regions`, lightly filled (the more mass, the
    fainter) and outlined, one line style per region (white with a dark halo, readable on
    any colour of the heatmap), explained by a legend under the square: labels on the
    lines themselves sat on the frame, where the outer regions run."""
    from matplotlib.lines import Line2D

    grid, dens, levels = density_regions(U, masses, size)
    order = np.argsort(levels)  # increasing thresholds: decreasing masses
    levels, masses = levels[order], masses[order]
    keep = np.concatenate([[True], np.diff(levels) > 0])
    levels, masses = levels[keep], masses[keep]
    top = max(float(dens.max()), float(levels[-1])) * 1.01 + 1e-300
    shades = [(1.0, 1.0, 1.0, 0.06 * (k + 1)) for k in range(levels.size)]
    ax.contourf(grid, grid, dens, levels=[*levels, top], colors=shades, antialiased=True)
    # from the densest (highest threshold) outwards: solid, dashed, dotted, ...
    styles = [_REGION_STYLES[min(k, 3)] for k in range(levels.size)][::-1]
    halo = _halo(2.0, "0.25")
    lines = ax.contour(
        grid, grid, dens, levels=levels, colors="white", linewidths=1.0, linestyles=styles
    )
    lines.set_path_effects(halo)
    handles = [
        Line2D([], [], color="white", lw=1.0, ls=style, path_effects=halo) for style in styles[::-1]
    ]
    labels = [f"{m:.0%}" for m in masses[::-1]]
    _legend_below(
        ax,
        handles,
        labels,
        title="white lines: the densest regions\nholding this share of the scores",
    )


@doc
def fused_surface(
    estimator,
    scores=None,
    *,
    ax=None,
    resolution: int = 101,
    density: str | None = "contour",
    density_grid: int = 60,
    density_masses=(0.5, 0.8, 0.95),
    cmap: str = "viridis",
    colorbar: bool = True,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    colorbar_label: str | None = None,
):
    """Heatmap of the fused probability over the normalized square, with the data's density.

    The diagram of Wang & Liu (2020, Figure 1) in one panel: the calibrating function ``f`` of
    a two-score model as an image over ``[0, 1]^2`` (the ECDF-normalized scores) and, on top,
    where the given scores (typically the training scores) lie. On the normalized square each
    score is uniform, so the density shows how the scorers agree: mass near the diagonal
    means correlated scorers, and ``f`` far from the mass is extrapolated.

    Parameters
    ----------
    estimator : fitted fusion estimator with ``n_features_in_ == 2``
        Binary model whose calibrating function is drawn.
    scores : array-like of shape (n, 2), optional
        Raw scores whose density is drawn (normalized with the estimator's ``ecdf_``).
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted.
    resolution : int, default=101
        Pixels per axis of the heatmap.
    density : {"contour", "points"} or None, default="contour"
        ``"contour"``: nested, lightly filled regions, the densest ones that hold
        ``density_masses`` of the points, outlined in white (one line style per region,
        explained by a legend under the square) (densest
        for a Gaussian kernel density estimate on the normal scores ``Phi^-1(u)``, from at
        most 5,000 of the points; ``fusion.plot.surface.density_regions``). ``"points"``: the
        points themselves. None: no overlay.
    density_grid : int, default=60
        Grid points per axis of the density estimate for ``density="contour"``.
    density_masses : sequence of float, default=(0.5, 0.8, 0.95)
        Shares of the points enclosed by the density contours, in ``(0, 1)``.
    cmap : str, default="viridis"
        Colormap of the heatmap (probabilities 0 to 1).
    {square_labels}

    Returns
    -------
    matplotlib Axes

    See Also
    --------
    contour : the same function as labelled contour lines.
    """
    _, positive = fitted_binary(estimator, n_scores=2, what="fused_surface")
    if density not in ("contour", "points", None):
        raise ValueError(f"density must be 'contour', 'points' or None, got {density!r}.")
    masses = np.sort(np.asarray(density_masses, dtype=float).reshape(-1))
    if masses.size == 0 or masses[0] <= 0 or masses[-1] >= 1:
        raise ValueError(f"density_masses must lie in (0, 1), got {density_masses!r}.")
    density_grid = positive_int(density_grid, "density_grid", minimum=2)
    U = None
    if scores is not None:
        U = estimator.normalize(scores)
    elif density is not None and density != "contour":
        raise ValueError("density='points' needs scores= (for example the training scores).")
    _, _, f = _surface(estimator, resolution)
    ax = axes(ax)
    image = ax.imshow(
        f,
        origin="lower",
        extent=(0.0, 1.0, 0.0, 1.0),
        vmin=0.0,
        vmax=1.0,
        cmap=cmap,
        interpolation="bilinear",
    )
    if U is not None and density == "points":
        ax.scatter(U[:, 0], U[:, 1], s=7, c="white", edgecolors="k", linewidths=0.3, alpha=0.8)
    elif U is not None and density == "contour":
        _density_contours(ax, U, masses, density_grid)
    if colorbar:
        label = f"P(Y = {positive} | u)" if colorbar_label is None else colorbar_label
        ax.figure.colorbar(image, ax=ax, label=label)
    _square_labels(ax, estimator, title, xlabel, ylabel)
    return ax


def slices(
    estimator,
    *,
    vary: int = 0,
    at=(0.1, 0.5, 0.9),
    ax=None,
    resolution: int = 101,
    cmap: str = "viridis",
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    legend_title: str | None = None,
):
    """The fused probability along one score, the other scores held at chosen quantiles.

    For ``M >= 3`` scores the calibrating function cannot be drawn whole; each curve here is
    ``f`` along the normalized score ``vary`` (its quantile, from 0 to 1) with every other
    score fixed. Because the scores are ECDF-normalized, fixing a normalized score at ``q``
    fixes the raw score at its training ``q``-quantile. A monotone method gives curves that
    rise from left to right and are ordered by the fixed quantiles.

    Parameters
    ----------
    estimator : fitted fusion estimator
        Binary model with any number ``M >= 2`` of scores.
    vary : int, default=0
        Index of the score along the x-axis.
    at : sequence, default=(0.1, 0.5, 0.9)
        One curve per entry: a number ``q`` in ``[0, 1]`` holds every other score at its
        ``q``-quantile; a sequence of ``M - 1`` numbers gives the other scores' quantiles in
        column order.
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted.
    resolution : int, default=101
        Points per curve.
    cmap : str, default="viridis"
        Colormap the curve colours are taken from, in the order of ``at``.
    title : str, optional
        Axes title; default the estimator's class name.
    xlabel : str, optional
        Default ``"quantile of score <vary + 1> (normalized score)"``.
    ylabel : str, optional
        Default ``"P(Y = <positive class> | u)"``.
    legend_title : str, optional
        Default ``"other scores at quantile"``.

    Returns
    -------
    matplotlib Axes
    """
    M, positive = fitted_binary(estimator, min_scores=2, what="slices")
    if isinstance(vary, bool) or not isinstance(vary, (int, np.integer)) or not 0 <= vary < M:
        raise ValueError(f"vary must be a score index in [0, {M - 1}], got {vary!r}.")
    settings = list(at) if np.ndim(at) else [at]
    if not settings:
        raise ValueError("at is empty: give at least one quantile setting.")
    others = [j for j in range(M) if j != vary]
    fixed = []
    for setting in settings:
        values = np.asarray(setting, dtype=float).reshape(-1)
        if values.size == 1:
            values = np.repeat(values, M - 1)
        if values.size != M - 1 or not np.all((values >= 0) & (values <= 1)):
            raise ValueError(
                f"each entry of at must be a quantile in [0, 1] or {M - 1} of them (one per "
                f"other score), got {setting!r}."
            )
        fixed.append(values)
    grid = np.linspace(0.0, 1.0, positive_int(resolution, "resolution", minimum=2))
    ax = axes(ax)
    import matplotlib

    colours = matplotlib.colormaps[cmap]
    for k, (setting, values) in enumerate(zip(settings, fixed, strict=True)):
        U = np.empty((grid.size, M))
        U[:, vary] = grid
        U[:, others] = values
        label = (
            f"{float(values[0]):.2f}"
            if np.ndim(setting) == 0
            else ", ".join(
                f"{score_name(estimator, j)}: {v:.2f}" for j, v in zip(others, values, strict=True)
            )
        )
        shade = 0.5 if len(settings) == 1 else 0.1 + 0.8 * k / (len(settings) - 1)
        ax.plot(grid, estimator.calibrating_function(U), color=colours(shade), label=label)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(
        title="other scores at quantile" if legend_title is None else legend_title,
        fontsize=8,
        title_fontsize=8,
    )
    set_labels(
        ax,
        title=type(estimator).__name__ if title is None else title,
        xlabel=(
            f"quantile of {score_name(estimator, vary)} (normalized score)"
            if xlabel is None
            else xlabel
        ),
        ylabel=f"P(Y = {positive} | u)" if ylabel is None else ylabel,
    )
    return ax
