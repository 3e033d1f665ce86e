"""Bootstrap intervals of BernsteinFusion's fused probability (``predict_interval``).

Three parts, each a plain function on arrays:

1. **A richer model for the refits** (:func:`interval_basis`). The fitted degree is chosen
   for the point prediction; its approximation bias is of the order of its standard error
   (on ``sigmoid(2 s1 + s2^3)`` at n = 2,000 the fitted additive degree 8 missed the truth
   by 1.3 standard errors in the median), so percentile intervals of refits at that degree
   cover far below nominal. The refits keep the fitted interaction components and add one
   univariate component of twice the fitted degree per score (undersmoothing by the
   degree: the bias then falls to a third of the standard error, the width grows by about
   10 %).

2. **Refits that repeat the penalty choice** (:func:`logistic_refits`, default model). The
   penalty of the richer model is chosen by the same cross-validation as the fit's (its
   held-out log-loss along the ``lam`` grid, one path on the fit's folds), and on every
   resample again, from the held-out losses of that path reweighted by the resample's row
   counts (the minimum, not the one-standard-error rule: undersmoothing by the penalty),
   then the resample is refitted at its own penalty, warm-started at the full data's fit
   at that penalty. A resample of a sample whose cross-validation hesitates between
   logistic regression and a flexible fit gets either, so the interval carries the
   variability of that choice. The rank-only model's refits are the same without the
   linear features (``linear=False``: ``g`` alone on the normalized scores, so they depend
   on the ranks only, like the fit); refits of its own least-squares QP covered less, its
   polynomial's bias near 0 and 1 being outside their spread.

3. **Monotone envelope where the data are silent** (:func:`informed_grid`,
   :func:`monotone_envelope`). The unit cube of the normalized scores is cut into a grid
   of about :data:`ROWS_PER_CELL` training rows per cell. Where a cell holds rows of one
   class only (a saturated corner, or the bulk of a rare-positive problem), the model's
   value there is an extrapolation that every refit shares, and the refits' spread
   understates the uncertainty (there the truth was outside 50-90 % of the percentile
   intervals). In such a cell the bounds are replaced by what monotonicity implies from the
   cells that hold both classes: the upper bound at ``u`` is the smallest upper bound at an
   informed point ``u' >= u`` (1 if there is none), the lower bound the largest lower bound
   at an informed point ``u' <= u`` (0 if none). The true probability is non-decreasing, so
   these bounds hold whenever the informed ones do.

The interval is then the pointwise ``alpha / 2`` and ``1 - alpha / 2`` quantiles of the
refits' probabilities (a percentile interval; it is the same on the logit scale), replaced
by the envelope in uninformed cells, and widened to contain the point prediction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
from scipy.special import expit

from ..._progress import Progress
from .. import newton
from ..folds import Folds
from ..results import BootstrapResult
from ..structure import Layout, Structure
from . import logistic
from .cells import aggregate_cells, cell_edges, cell_index
from .data import LogisticData
from .source import MemoryRows

__all__ = [
    "DEGREE_FACTOR",
    "MAX_DEGREE",
    "ROWS_PER_CELL",
    "interval_basis",
    "resamples",
    "logistic_refits",
    "logistic_bootstrap",
    "rank_only_bootstrap",
    "logistic_proba",
    "informed_grid",
    "grid_cells",
    "monotone_envelope",
    "percentile_bounds",
]

#: The refits' univariate components have this many times the fitted degree ...
DEGREE_FACTOR = 2
#: ... but at most this degree.
MAX_DEGREE = 32
#: Target number of training rows per cell of the grid that decides where the data hold
#: both classes (:func:`informed_grid`). Smaller cells widen more intervals: at 12 rows per
#: cell the coverage of ``sigmoid(2 s1 + s2^3)`` at n = 2,000 rose from 0.84 to 0.88 but
#: the mean width by 11 %; at 50 rows most saturated corners were missed.
ROWS_PER_CELL = 20
#: Elements (rows x columns) of one block of a design or of a prediction matrix.
BLOCK_ELEMENTS = 2_000_000


def interval_basis(fitted: Structure, factor: int = DEGREE_FACTOR) -> Structure:
    """The refits' model: the components of the ``fitted`` structure on two or more axes at
    their fitted degrees, then one univariate component per axis ``m`` of degree
    ``min(factor * degrees[m], MAX_DEGREE)`` (replacing fitted univariate ones). A fitted
    additive model of two or three scores gets a tensor component of half its degree
    (at least 2) as well.

    The univariate components add the resolution along each score where the fitted degree
    is biased, at ``M (2 K + 1)`` more coefficients; the coarse tensor lets the refits show
    an interaction that the fit's one-standard-error choice of the additive structure
    dropped (on ``0.05 + 0.9 Phi(s1) Phi(s2 - 0.3)`` at n = 2,000 the additive refits
    covered the top band 47 % of the time). The first component carries the model's
    constant (the others' 0-corners are pinned).
    """
    axis_degree = {a: k for axes, ds in fitted.components for a, k in zip(axes, ds, strict=True)}
    M = len(axis_degree)
    degrees = [axis_degree[m] for m in range(M)]
    multi = [(axes, ds) for axes, ds in fitted.components if len(axes) > 1]
    if not multi and 2 <= M <= 3:
        multi = [(tuple(range(M)), tuple(max(2, (int(k) + 1) // 2) for k in degrees))]
    uni = [((m,), (min(factor * int(degrees[m]), MAX_DEGREE),)) for m in range(M)]
    return Structure(tuple(multi + uni))


# -- refits ----------------------------------------------------------------------------------------


def resamples(n: int, n_bootstrap: int, seed: int, verbose: bool = False):
    """Row counts of ``n_bootstrap`` multinomial resamples of ``n`` rows, seeded by the fit's
    fold seed (a stream apart from the folds'), with progress."""
    rng = np.random.default_rng([seed, 1])
    with Progress(n_bootstrap, desc="bootstrap", enabled=verbose) as progress:
        for _ in range(n_bootstrap):
            yield rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
            progress.step()


def _heldout_units(source: MemoryRows, Z, edges, folds: Folds) -> dict:
    """For every held-out unit of the cross-validation (a row, or a cell of one fold) in
    their order, the row it is (``unit_rows``, rows), or of every row the unit it falls in
    (``row_unit``, cells)."""
    if edges is None:
        return {"unit_rows": np.concatenate([test for _, test in folds.splits])}
    cells = aggregate_cells(source.U, Z, source.y, source.w, edges, folds.fold_of, folds.n_folds)
    # The units of fold f are its occupied cells in the order of the table's columns (the
    # sorted cell ids); a row's unit is the rank of its cell among them.
    cell, _ = cell_index(source.U, Z, edges)
    ids = np.unique(cell)
    col = np.searchsorted(ids, cell)
    kept = cells.W > 0
    rank = np.cumsum(kept, axis=1) - 1
    offset = np.concatenate([[0], np.cumsum(kept.sum(1))[:-1]])
    row_unit = offset[folds.fold_of] + rank[folds.fold_of, col]
    return {"row_unit": row_unit, "n_units": int(kept.sum())}


def _heldout_weights(units: dict, y, w, counts) -> tuple[np.ndarray, np.ndarray]:
    """Weights of the negatives and positives of every held-out unit in a resample."""
    if "unit_rows" in units:
        r = units["unit_rows"]
        wk = w[r] * counts[r]
        return wk * (1 - y[r]), wk * y[r]
    wk = w * counts
    n = units["n_units"]
    u = units["row_unit"]
    return (
        np.bincount(u, weights=wk * (1 - y), minlength=n),
        np.bincount(u, weights=wk * y, minlength=n),
    )


def logistic_refits(
    source: MemoryRows,
    Z: np.ndarray,
    structure: Structure,
    lams: Sequence[float],
    resamples: Iterable[np.ndarray],
    osqp_settings: dict,
    ridge: float,
    *,
    edges=None,
    folds: Folds | None = None,
    linear: bool = True,
) -> np.ndarray:
    """Refits of the default model's semi-parametric logistic model on ``structure``.

    Parameters
    ----------
    source : MemoryRows
        The fit's rows: normalized scores ``(n, M)``, labels in {0, 1} and weights (mean 1).
    Z : ndarray of shape (n, M)
        Their standardized linear features.
    structure : Structure
        The refits' Bernstein components (:func:`interval_basis`).
    lams : sequence of float
        One penalty (every refit uses it) or the grid to choose from, largest first: then
        cross-validation paths on the richer model, with the linear features and without
        them (``g`` alone, which can level off where a linear term cannot, as a truth that
        stays below 1 or flat over low scores does), give every held-out unit's log-loss at
        every ``lam``, and each resample takes the model and ``lam`` of the lowest held-out
        loss reweighted by its row counts.
    resamples : iterable of ndarray
        Row counts of the resamples (``n`` each).
    osqp_settings : dict
        OSQP settings of the Newton steps.
    ridge : float
        The fit's ridge on the linear coefficients (:func:`fusion.bernstein.binary.logistic.
        base_ridge`).
    edges : tuple, optional
        Cells of the fit (:func:`fusion.bernstein.binary.cells.cell_edges`): the refits then
        run on the cells of each resample; None: on the rows.
    folds : Folds, optional
        The cross-validation's folds (needed when ``lams`` has several values): the splits
        of a fit on rows, every row's fold for cells.
    linear : bool, default=True
        False: ``g`` alone (the linear weights stay 0), the rank-only model's refits.

    Returns
    -------
    coef : ndarray of shape (n_resamples, M + structure.n_coef)
        Every refit's linear coefficients ``c`` then the components' coefficients.
    """
    lams = [float(v) for v in lams]
    y, w = source.y, source.w
    layout = Layout(source.M, structure)
    solver = newton.make_solver(layout, **osqp_settings)
    select = len(lams) > 1
    flags = (True, False)[: 1 + select] if linear else (False,)
    # the folds' cells, and the cells of all rows as one fold (the same as a resample's)
    data = source.units(Z, edges, folds) if select else None
    whole = source.units(Z, edges)
    units = _heldout_units(source, Z, edges, folds) if select else None
    x0 = logistic.initial_x(layout, float(np.dot(w, y) / w.sum()))
    candidates, neg, pos = [], [], []
    for flag in flags:
        path_lams = lams
        if select:
            designs = data.fold_designs(structure, linear=flag)
            path = logistic.cv_path(designs, layout, lams, x0, osqp_settings, ridge=ridge)
            path_lams = [float(v) for v in path.lams]
            neg.append(path.neg)
            pos.append(path.pos)
        # the full data's fit at every penalty: the warm starts of the refits
        full, x = whole.design(structure, linear=flag), x0
        for lam in path_lams:
            x = logistic.newton(full, layout, lam, x, solver, ridge=ridge).x
            candidates.append((flag, lam, x))
    if select:
        neg, pos = np.concatenate(neg), np.concatenate(pos)
    out = []
    for counts in resamples:
        j = 0
        if select:
            wneg, wpos = _heldout_weights(units, y, w, counts)
            j = int(np.argmin(neg @ wneg + pos @ wpos))
        flag, lam, start = candidates[j]
        design = source.units(Z, edges, counts=counts).design(structure, linear=flag)
        out.append(logistic.newton(design, layout, lam, start, solver, ridge=ridge).x)
    return np.array(out).reshape(-1, layout.n_coef)


def logistic_bootstrap(
    plan, source: MemoryRows, result, data: LogisticData, folds: Folds | None
) -> BootstrapResult:
    """The default model's refits (:func:`logistic_refits`) on the richer model of
    :func:`interval_basis` around the fitted candidate (with ``lam = inf`` the result holds
    degree 0: the candidate's structure still sets the refits' resolution), the penalty
    chosen on every resample (``lam="cv"``: the cross-validation of the fit's folds) or the
    given one, with the ridge of the fit's ``data`` (a resample's weights would give
    another) and on its ``folds``."""
    structure = interval_basis(result.candidate)
    Z = source.features(result.scale)
    edges = None
    if plan.bins is not None:
        edges = cell_edges(*result.scale.feature_range(source.M), plan.bins)
    coef = logistic_refits(
        source, Z, structure, plan.lams,
        resamples(source.n, plan.bootstrap, plan.folds.seed, plan.verbose),
        plan.settings, newton.base_ridge(data.n_eff), edges=edges, folds=folds,
    )  # fmt: skip
    return BootstrapResult(coef, structure, informed_grid(source.U, source.y, source.w))


def rank_only_bootstrap(plan, source: MemoryRows, result) -> BootstrapResult:
    """The rank-only model's refits: the default model's refits without its linear
    features (:func:`logistic_refits` with ``linear=False``), a monotone Bernstein ``g`` on
    the normalized scores of the richer basis of :func:`interval_basis`, so the interval,
    like the fit, depends on the scores through their ranks only. Its penalty is chosen on
    every resample from the cross-validation of the finite ``lam`` of
    :func:`~fusion.bernstein.plan.default_lam_grid`; on rows, or on cells of the normalized
    scores beyond the default model's ``bins`` threshold.

    The rank-only fit's own least-squares refits covered the truth less (0.67-0.86 on
    ``sigmoid(2 s1 + s2^3)`` at n = 2,000, ``benchmarks/bench_interval.py``): on the
    probability scale a polynomial's bias near 0 and 1 is not in their spread."""
    from ..plan import default_lam_grid

    n, M = source.n, source.M
    structure = interval_basis(result.structure)
    lams = [v for v in default_lam_grid(n) if np.isfinite(v)]
    edges = None
    if plan.bins is not None:
        edges = cell_edges(np.zeros(M), np.ones(M), plan.bins)
    folds = source.folds(plan.folds, cells=edges is not None)
    coef = logistic_refits(
        source, source.U, structure, lams,
        resamples(n, plan.bootstrap, plan.folds.seed, plan.verbose), plan.settings,
        newton.base_ridge(float(source.w.sum())), edges=edges, folds=folds, linear=False,
    )  # fmt: skip
    return BootstrapResult(coef[:, M:], structure, informed_grid(source.U, source.y, source.w))


def logistic_proba(
    coef: np.ndarray, basis: Structure, U: np.ndarray, Z: np.ndarray | None, cap: float
) -> np.ndarray:
    """Probabilities ``(n, n_refits)`` of the refits ``coef`` at points ``U`` with linear
    features ``Z`` (None: refits without them, the rank-only model's, whose ``coef`` holds
    the components' coefficients only); the linear predictor is capped at ``+-cap``."""
    if Z is None:
        eta = basis.design(U) @ coef.T
    else:
        M = Z.shape[1]
        eta = Z @ coef[:, :M].T + basis.design(U) @ coef[:, M:].T
    return expit(np.clip(eta, -cap, cap, out=eta))


# -- intervals ---------------------------------------------------------------------------------


def percentile_bounds(
    proba: Callable[[slice], np.ndarray], n: int, n_refits: int, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise ``alpha / 2`` and ``1 - alpha / 2`` quantiles of the refits' probabilities;
    ``proba(rows)`` returns them ``(len(rows), n_refits)`` for a slice of ``n`` points,
    evaluated in blocks of bounded memory."""
    lower, upper = np.empty(n), np.empty(n)
    step = max(1, BLOCK_ELEMENTS // max(n_refits, 1))
    for a in range(0, n, step):
        rows = slice(a, min(n, a + step))
        lower[rows], upper[rows] = np.quantile(proba(rows), [alpha / 2, 1 - alpha / 2], axis=1)
    return lower, upper


def grid_cells(U: np.ndarray, G: int) -> np.ndarray:
    """Index ``(n, M)`` of the cell of every point on a grid of ``G`` equal cuts per axis."""
    return np.clip(np.floor(np.asarray(U, dtype=float) * G), 0, G - 1).astype(np.int64)


def informed_grid(
    U: np.ndarray, y: np.ndarray, w: np.ndarray, rows_per_cell: int = ROWS_PER_CELL
) -> np.ndarray:
    """Which cells of a regular grid on the unit cube hold training rows of both classes.

    The grid has ``G = max(1, floor((n / rows_per_cell)^(1 / M)))`` equal cuts per axis,
    about ``rows_per_cell`` rows per cell where the scores are independent (the normalized
    scores are uniform on every axis). Rows of zero weight do not count.

    Returns
    -------
    informed : ndarray of bool, shape (G,) * M
    """
    n, M = U.shape
    G = max(1, int(np.floor((n / rows_per_cell) ** (1.0 / M) + 1e-9)))
    flat = np.ravel_multi_index(grid_cells(U, G).T, (G,) * M)
    kept = w > 0
    pos = np.bincount(flat[kept & (y == 1)], minlength=G**M)
    neg = np.bincount(flat[kept & (y != 1)], minlength=G**M)
    return ((pos > 0) & (neg > 0)).reshape((G,) * M)


def _suffix(a: np.ndarray, op, reverse: bool) -> np.ndarray:
    """Running ``op`` (``np.minimum`` or ``np.maximum``) along every axis, from the far end
    when ``reverse``: the extreme over the orthant above (below) every cell."""
    for axis in range(a.ndim):
        a = _suffix_along(a, op, axis, reverse)
    return a


def _next_informed(informed: np.ndarray, axis: int, up: bool) -> np.ndarray:
    """For every cell, the index along ``axis`` of the nearest informed cell strictly above
    (``up``; G if none) or strictly below (-1 if none) in the same line of cells."""
    G = informed.shape[axis]
    shape = [-1 if a == axis else 1 for a in range(informed.ndim)]
    idx = np.arange(G).reshape(shape)
    if up:  # nearest informed index >= i, then shifted by one cell
        nearest = _suffix_along(np.where(informed, idx, G), np.minimum, axis, reverse=True)
        pad = np.full_like(np.take(nearest, [0], axis=axis), G)
        return np.concatenate([np.take(nearest, np.arange(1, G), axis=axis), pad], axis=axis)
    nearest = _suffix_along(np.where(informed, idx, -1), np.maximum, axis, reverse=False)
    pad = np.full_like(np.take(nearest, [0], axis=axis), -1)
    return np.concatenate([pad, np.take(nearest, np.arange(G - 1), axis=axis)], axis=axis)


def _suffix_along(a: np.ndarray, op, axis: int, reverse: bool) -> np.ndarray:
    if reverse:
        return np.flip(op.accumulate(np.flip(a, axis), axis=axis), axis)
    return op.accumulate(a, axis=axis)


def monotone_envelope(
    U: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    informed: np.ndarray,
    bounds_at: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray]:
    """Replace the bounds at points of uninformed cells by the monotone envelope of the
    bounds at informed points.

    For a point ``u`` in a cell without both classes, the upper bound becomes the smallest
    upper bound at points ``u' >= u`` (componentwise) of informed cells, 1 if there is
    none, and the lower bound the largest lower bound at points ``u' <= u`` of informed
    cells, 0 if none. Candidates: the corners of the informed cells strictly above (below)
    the point's cell, and along every axis the point moved to the nearest informed cell in
    its line of cells. For ``M <= 2`` this is the exact envelope (the bounds at informed
    points being non-decreasing), so the returned bounds are non-decreasing in every
    coordinate; for more axes it is a valid but possibly looser bound.

    Parameters
    ----------
    U : ndarray of shape (n, M)
        Normalized points.
    lower, upper : ndarray of shape (n,)
        The refits' bounds at ``U``.
    informed : ndarray of bool, shape (G,) * M
        :func:`informed_grid`.
    bounds_at : callable
        ``bounds_at(points)`` returns the refits' ``(lower, upper)`` at other points.

    Returns
    -------
    lower, upper : ndarray of shape (n,)
    """
    G, M = informed.shape[0], informed.ndim
    cell = grid_cells(U, G)
    bad = ~informed[tuple(cell.T)]
    if not bad.any():
        return lower, upper
    lower, upper = lower.copy(), upper.copy()
    rows = np.flatnonzero(bad)
    c, u = cell[rows], np.asarray(U, dtype=float)[rows]
    # corners: lower corners of informed cells (for upper bounds), upper corners (for lower)
    cells = np.argwhere(informed)
    hi_node = np.full(informed.shape, np.inf)
    lo_node = np.full(informed.shape, -np.inf)
    if cells.shape[0]:
        lo_at_low, hi_at_low = bounds_at(cells / G)
        lo_at_up, _ = bounds_at((cells + 1) / G)
        hi_node[tuple(cells.T)] = hi_at_low
        lo_node[tuple(cells.T)] = lo_at_up
    above = _suffix(hi_node, np.minimum, reverse=True)  # min over cells >= index
    below = _suffix(lo_node, np.maximum, reverse=False)  # max over cells <= index
    hi = np.full(rows.shape[0], np.inf)
    lo = np.full(rows.shape[0], -np.inf)
    strict_up = np.all(c + 1 < G, axis=1)
    if strict_up.any():
        hi[strict_up] = above[tuple((c[strict_up] + 1).T)]
    strict_down = np.all(c >= 1, axis=1)
    if strict_down.any():
        lo[strict_down] = below[tuple((c[strict_down] - 1).T)]
    # along every axis: the point moved to the nearest informed cell of its line
    for axis in range(M):
        for up in (True, False):
            nxt = _next_informed(informed, axis, up)[tuple(c.T)]
            ok = nxt < G if up else nxt >= 0
            if not ok.any():
                continue
            p = u[ok].copy()
            p[:, axis] = nxt[ok] / G if up else (nxt[ok] + 1) / G
            b_lo, b_hi = bounds_at(p)
            if up:
                hi[ok] = np.minimum(hi[ok], b_hi)
            else:
                lo[ok] = np.maximum(lo[ok], b_lo)
    upper[rows] = np.minimum(hi, 1.0)
    lower[rows] = np.maximum(lo, 0.0)
    return lower, upper
