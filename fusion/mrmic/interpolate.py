"""Extending the fitted training values of MR-MIC to any point of ``[0, 1]^M``.

The QP only gives ``p_i`` at the training points ``U_i``. Two rules extend it:

``"linear"`` (:func:`linear_interpolate`, the paper's choice)
    Piecewise-linear interpolation over the Delaunay triangulation of the training points
    (:class:`scipy.interpolate.LinearNDInterpolator`). Outside their convex hull the value of
    the nearest training point (Euclidean) is used. Reproduces ``p_i`` at ``U_i``; not
    monotone in general (a triangle can tilt against the order).

    The rule is linear in the fitted values: :func:`linear_weights` returns, for each
    query, the training points it uses and their weights (barycentric coordinates), so one
    triangulation serves every candidate ``lam`` of the cross-validation.

    Degenerate point sets, where no triangulation exists, follow a fixed path: the points
    are expressed in coordinates of their affine hull (principal axes of the centred points,
    rank decided by the singular values), and queries are projected orthogonally onto it.
    In one dimension (``M = 1``, or collinear points such as two identical score columns)
    this is :func:`numpy.interp` along the line, constant beyond the end points (which is
    the nearest-fitted-value rule along the line); in ``2 <= d < M`` dimensions a Delaunay
    interpolation in the hull; a single point gives a constant. If Qhull still fails
    (numerically flat sets), the nearest fitted value is used everywhere, with a warning.

    The triangulation has ``O(g^{ceil(d/2)})`` simplices in the worst case and, for points
    spread in ``d`` dimensions, some 2, 7, 30, 200 and 1,600 per point for ``d`` = 2..6:
    :func:`linear_weights` for 2,000 queries took 0.13, 1.0 and 9.3 s for ``d`` = 4, 5, 6 at
    ``g = 500`` (``benchmarks/bench_mrmic.py --tables triangulation``; see
    :data:`LINEAR_MAX_DIMENSION`).

``"monotone"`` (:func:`monotone_interpolate`)
    ``f(u) = (lo(u) + hi(u)) / 2`` with ``lo(u) = max{p_i : U_i <= u}`` and
    ``hi(u) = min{p_i : U_i >= u}``; where no training point lies below ``u``, ``lo(u)`` is
    the smallest fitted value ``min_i p_i``, and where none lies above, ``hi(u)`` is the
    largest ``max_i p_i``. ``lo`` and ``hi`` are non-decreasing in every coordinate, so ``f``
    is; when ``p`` is monotone on the training points ``lo <= f <= hi`` and ``f(U_i) = p_i``.
    Using the extreme fitted values rather than 0 and 1 keeps ``f`` from collapsing towards
    0 or 1 just outside the training range. ``f`` is piecewise constant.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.spatial import Delaunay, QhullError, cKDTree

from .._solver import one_blas_thread
from .._warn import caller_level
from .graph import dominated_max, dominating_min

__all__ = [
    "linear_interpolate",
    "linear_weights",
    "apply_weights",
    "monotone_interpolate",
    "affine_frame",
    "LINEAR_MAX_DIMENSION",
]

#: Largest number of scores for which ``interpolation="auto"`` picks the linear rule. With
#: correlated scores normalized to ranks, the linear rule for 2,000 queries took 0.13 s
#: (M = 4), 1.0 s (M = 5) and 9.3 s (M = 6) on 500 training points, and 2.3 s for M = 5 on
#: 1,000 (``benchmarks/bench_mrmic.py --tables triangulation``), once per fold and per
#: ``predict_proba`` call; the simplex count grows 6- to 8-fold per further dimension.
LINEAR_MAX_DIMENSION = 4


def monotone_interpolate(points: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The coordinate-wise monotone extension ``(lo + hi) / 2`` (see the module docstring).

    Parameters
    ----------
    points : ndarray of shape (n, M)
    values : ndarray of shape (n,)
    queries : ndarray of shape (m, M)

    Returns
    -------
    ndarray of shape (m,)
    """
    values = np.asarray(values, dtype=float)
    lo = dominated_max(points, values, queries, fill=float(values.min()))
    hi = dominating_min(points, values, queries, fill=float(values.max()))
    return 0.5 * (lo + hi)


def affine_frame(points: np.ndarray, rtol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Centre and orthonormal basis (rows) of the affine hull of ``points``.

    The dimension is the number of singular values of the centred points above
    ``rtol * max(1, largest)``.
    """
    center = points.mean(axis=0)
    if points.shape[0] < 2:
        return center, np.zeros((0, points.shape[1]))
    _, s, Vt = np.linalg.svd(points - center, full_matrices=False)
    rank = int(np.sum(s > rtol * max(1.0, s[0])))
    return center, Vt[:rank]


def apply_weights(vertices: np.ndarray, weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``sum_k weights[:, k] * values[vertices[:, k]]``: the rule for one set of values."""
    return np.einsum("ij,ij->i", weights, np.asarray(values, dtype=float)[vertices])


def linear_interpolate(points: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Delaunay-linear interpolation, nearest fitted value outside the convex hull.

    Parameters
    ----------
    points : ndarray of shape (n, M)
        Distinct training points.
    values : ndarray of shape (n,)
    queries : ndarray of shape (m, M)

    Returns
    -------
    ndarray of shape (m,)
    """
    return apply_weights(*linear_weights(points, queries), values)


def linear_weights(points: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The linear rule at ``queries`` as ``(vertices, weights)`` (see :func:`apply_weights`).

    Parameters
    ----------
    points : ndarray of shape (n, M)
        Distinct training points.
    queries : ndarray of shape (m, M)

    Returns
    -------
    vertices : ndarray of int64, shape (m, k)
        Indices into ``points`` (``k = d + 1`` for a ``d``-dimensional hull).
    weights : ndarray of shape (m, k)
        Non-negative (up to rounding), summing to 1 in each row.
    """
    points = np.asarray(points, dtype=float)
    queries = np.asarray(queries, dtype=float)
    n, M = points.shape
    m = queries.shape[0]
    if n == 1:
        return np.zeros((m, 1), dtype=np.int64), np.ones((m, 1))
    if M == 1:
        Z, Zq = points, queries
    else:
        center, basis = affine_frame(points)
        if basis.shape[0] == M:
            Z, Zq = points, queries  # full-dimensional: no projection, no rounding
        else:
            Z, Zq = (points - center) @ basis.T, (queries - center) @ basis.T
    d = Z.shape[1]
    if d == 0:  # numerically a single point: the mean value
        return np.tile(np.arange(n), (m, 1)), np.full((m, n), 1.0 / n)
    if d == 1:
        return _interp_weights(Z[:, 0], Zq[:, 0])
    try:
        tri = Delaunay(Z)
        # scipy builds the barycentric transforms with one tiny LAPACK call per simplex.
        with one_blas_thread():
            transform = tri.transform
    except QhullError as err:  # numerically flat despite the rank test
        warnings.warn(
            f"Delaunay triangulation of the {n} training points failed ({err!s:.80}); "
            "using the nearest fitted value everywhere.",
            UserWarning,
            stacklevel=caller_level(),
        )
        return _nearest_weights(Z, Zq, d + 1)
    simplex = tri.find_simplex(Zq)
    inside = simplex >= 0
    vertices = np.empty((m, d + 1), dtype=np.int64)
    weights = np.empty((m, d + 1))
    T = transform[simplex[inside]]
    b = np.einsum("ijk,ik->ij", T[:, :d, :], Zq[inside] - T[:, d, :])
    vertices[inside] = tri.simplices[simplex[inside]]
    weights[inside] = np.column_stack([b, 1.0 - b.sum(axis=1)])
    if not inside.all():
        vertices[~inside], weights[~inside] = _nearest_weights(Z, Zq[~inside], d + 1)
    return vertices, weights


def _nearest_weights(Z: np.ndarray, Zq: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The nearest training point with weight 1, padded to ``k`` columns."""
    nearest = cKDTree(Z).query(Zq)[1].astype(np.int64)
    weights = np.zeros((Zq.shape[0], k))
    weights[:, 0] = 1.0
    return np.repeat(nearest[:, None], k, axis=1), weights


def _interp_weights(x: np.ndarray, xq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`numpy.interp` along a line as weights: linear between neighbours, constant
    beyond the end points."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    j = np.clip(np.searchsorted(xs, xq, side="right") - 1, 0, xs.shape[0] - 2)
    t = np.clip((xq - xs[j]) / (xs[j + 1] - xs[j]), 0.0, 1.0)
    return np.column_stack([order[j], order[j + 1]]), np.column_stack([1.0 - t, t])
