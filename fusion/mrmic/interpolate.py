"""Extending the fitted training values of MR-MIC to any point of ``[0, 1]^M``.

The QP only gives ``p_i`` at the training points ``U_i``. Two rules extend it:

``"linear"`` (:func:`linear_interpolate`, the paper's choice)
    Piecewise-linear interpolation over the Delaunay triangulation of the training points
    (:class:`scipy.interpolate.LinearNDInterpolator`). Outside their convex hull the value of
    the nearest training point (Euclidean) is used. Reproduces ``p_i`` at ``U_i``; not
    monotone in general (a triangle can tilt against the order).

    Degenerate point sets, where no triangulation exists, follow a fixed path: the points
    are expressed in coordinates of their affine hull (principal axes of the centred points,
    rank decided by the singular values), and queries are projected orthogonally onto it.
    In one dimension (``M = 1``, or collinear points such as two identical score columns)
    this is :func:`numpy.interp` along the line, constant beyond the end points (which is
    the nearest-fitted-value rule along the line); in ``2 <= d < M`` dimensions a Delaunay
    interpolation in the hull; a single point gives a constant. If Qhull still fails
    (numerically flat sets), the nearest fitted value is used everywhere, with a warning.

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
from scipy.interpolate import LinearNDInterpolator
from scipy.spatial import Delaunay, QhullError, cKDTree

from .._base import one_blas_thread
from .graph import dominated_max, dominating_min

__all__ = ["linear_interpolate", "monotone_interpolate", "affine_frame"]


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
    points = np.asarray(points, dtype=float)
    values = np.asarray(values, dtype=float)
    queries = np.asarray(queries, dtype=float)
    n, M = points.shape
    if n == 1:
        return np.full(queries.shape[0], values[0])
    if M == 1:
        Z, Zq = points, queries
    else:
        center, basis = affine_frame(points)
        if basis.shape[0] == M:
            Z, Zq = points, queries  # full-dimensional: no projection, no rounding
        else:
            Z, Zq = (points - center) @ basis.T, (queries - center) @ basis.T
    d = Z.shape[1]
    if d == 0:
        return np.full(queries.shape[0], values.mean())
    if d == 1:
        order = np.argsort(Z[:, 0], kind="stable")
        return np.interp(Zq[:, 0], Z[order, 0], values[order])
    try:
        tri = Delaunay(Z)
    except QhullError as err:  # numerically flat despite the rank test
        warnings.warn(
            f"Delaunay triangulation of the {n} training points failed ({err!s:.80}); "
            "using the nearest fitted value everywhere.",
            UserWarning,
            stacklevel=2,
        )
        return values[cKDTree(Z).query(Zq)[1]]
    # scipy builds barycentric transforms with one tiny LAPACK call per simplex.
    with one_blas_thread():
        out = LinearNDInterpolator(tri, values, fill_value=np.nan)(Zq)
    outside = np.isnan(out)
    if outside.any():
        out[outside] = values[cKDTree(Z).query(Zq[outside])[1]]
    return out
