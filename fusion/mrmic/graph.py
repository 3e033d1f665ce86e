"""The two graphs of MR-MIC on the training points, and dominance queries.

* :func:`merge_points` collapses training rows that are identical in every coordinate into
  one weighted point (their similarity ``1 / ||U_i - U_j||`` would be infinite and no strict
  dominance holds between them).
* :func:`dominance_edges` is the transitive reduction (the Hasse diagram) of strict
  coordinate-wise dominance on distinct points: the isotonic constraints of the QP.
* :func:`similarity_matrix` / :func:`laplacian` build the manifold regularizer
  ``L = D - W`` with ``w_ij = 1 / ||U_i - U_j||``, on all pairs ("dense") or on a symmetrized
  k-nearest-neighbour graph ("knn").
* :func:`dominated_max` / :func:`dominating_min` answer "largest value among training points
  below ``u``" and "smallest value among training points above ``u``" for many ``u`` at once;
  they are the monotone interpolation rule and the exact feasibility repair of the QP.

Throughout, ``a`` *strictly dominates* ``b`` when ``a >= b`` in every coordinate and
``a != b``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree
from scipy.spatial.distance import pdist

__all__ = [
    "merge_points",
    "dominance_edges",
    "similarity_matrix",
    "laplacian",
    "dominated_max",
    "dominating_min",
    "CHUNK_ELEMENTS",
]

#: Elements of one work array in the chunked O(n^2) sweeps (~16 MB of float64).
CHUNK_ELEMENTS = 2_000_000


# ---------------------------------------------------------------------------------------------
# Merging identical points.


def merge_points(
    U: np.ndarray, y: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge rows identical in every coordinate; drop rows of zero weight.

    Parameters
    ----------
    U : ndarray of shape (n, M)
    y : ndarray of shape (n,)
        Targets (0/1 labels).
    w : ndarray of shape (n,)
        Non-negative weights.

    Returns
    -------
    points : ndarray of shape (g, M)
        The distinct points carrying positive weight, in lexicographic order.
    target : ndarray of shape (g,)
        Weighted mean of ``y`` over the rows of each point.
    weight : ndarray of shape (g,)
        Sum of ``w`` over the rows of each point.

    Notes
    -----
    A zero-weight row contributes nothing to the data term, so it is dropped as if absent
    (scikit-learn's convention); keeping it would still add a vertex to both graphs.
    """
    keep = w > 0
    U, y, w = U[keep], y[keep], w[keep]
    points, inverse = np.unique(U, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    weight = np.bincount(inverse, weights=w, minlength=points.shape[0])
    target = np.bincount(inverse, weights=w * y, minlength=points.shape[0]) / weight
    return points, np.clip(target, 0.0, 1.0), weight


def _check_distinct_sorted(sorted_points: np.ndarray) -> None:
    if sorted_points.shape[0] > 1 and np.any(np.all(sorted_points[1:] == sorted_points[:-1], 1)):
        raise ValueError("points must be distinct; merge identical rows first (merge_points).")


# ---------------------------------------------------------------------------------------------
# Transitive reduction of strict dominance.


def dominance_edges(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edges ``(hi, lo)`` of the transitive reduction of strict dominance.

    ``points[hi[e]]`` strictly dominates ``points[lo[e]]`` and no third point lies between
    them; every strict dominance pair is a directed path of such edges, so ``p[hi] >= p[lo]``
    on the edges is equivalent to monotonicity on all pairs.

    Parameters
    ----------
    points : ndarray of shape (n, M)
        Distinct points.

    Returns
    -------
    hi, lo : ndarray of int64, shape (n_edges,)

    Raises
    ------
    ValueError
        If two points are identical.

    Notes
    -----
    * ``M = 1``: the consecutive pairs in sorted order.
    * ``M = 2``: a sweep. In lexicographic order the points strictly dominating point ``a``
      are exactly the later points with ``y >= y_a``; its covers are those whose ``y`` is a
      strict running minimum among them. Rows of the resulting ``(n, n)`` record test are
      processed in chunks: ``O(n^2)`` vectorized work, ``O(n)`` memory per row.
    * ``M >= 3``: ``R = D & ~(D @ D)`` with the strict dominance matrix ``D`` (a count in
      float32 BLAS, exact below 2^24 points): ``O(n^3)`` flops in BLAS and ``4 n^2`` bytes.
    """
    points = np.asarray(points, dtype=float)
    n, M = points.shape
    if n < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    order = np.lexsort(points.T[::-1])  # first coordinate slowest
    _check_distinct_sorted(points[order])
    if M == 1:
        return order[1:].astype(np.int64), order[:-1].astype(np.int64)
    if M == 2:
        return _reduction_2d(points, order)
    return _reduction_matmul(points)


def _reduction_2d(points: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = points.shape[0]
    # Integer ranks of y: exact comparisons and half the memory of float64.
    y_rank = np.unique(points[order, 1], return_inverse=True)[1].reshape(-1).astype(np.int32)
    big = np.int32(n + 1)
    step = max(1, CHUNK_ELEMENTS // n)
    his, los = [], []
    for a0 in range(0, n - 1, step):
        a1 = min(n - 1, a0 + step)
        rows = np.arange(a0, a1)
        later = y_rank[a0 + 1 :]  # columns b = a0 + 1 .. n - 1
        b = np.arange(a0 + 1, n)
        above = (b[None, :] > rows[:, None]) & (later[None, :] >= y_rank[rows, None])
        C = np.where(above, later[None, :], big)
        running = np.minimum.accumulate(C, axis=1)
        prev = np.empty_like(running)
        prev[:, 0] = big
        prev[:, 1:] = running[:, :-1]
        r, c = np.nonzero(C < prev)  # C < prev implies C < big, i.e. "above"
        los.append(order[rows[r]])
        his.append(order[b[c]])
    return np.concatenate(his).astype(np.int64), np.concatenate(los).astype(np.int64)


def _strict_dominance_block(points: np.ndarray, rows: slice) -> np.ndarray:
    """Boolean ``D[rows, :]`` with ``D[i, j]`` = point ``i`` strictly dominates point ``j``."""
    P = points[rows]
    ge = np.all(P[:, None, :] >= points[None, :, :], axis=2)
    ne = np.any(P[:, None, :] != points[None, :, :], axis=2)
    return ge & ne


def _reduction_matmul(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, M = points.shape
    step = max(1, CHUNK_ELEMENTS // (n * M))
    D = np.empty((n, n), dtype=np.float32)
    for a in range(0, n, step):
        D[a : a + step] = _strict_dominance_block(points, slice(a, a + step))
    his, los = [], []
    step = max(1, CHUNK_ELEMENTS // n)
    for a in range(0, n, step):
        block = D[a : a + step]
        # (D @ D)[i, j] counts the points strictly between i and j.
        between = block @ D
        r, c = np.nonzero((block > 0) & (between == 0))
        his.append(a + r)
        los.append(c)
    return np.concatenate(his).astype(np.int64), np.concatenate(los).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# Similarity graph and Laplacian.


def similarity_matrix(points: np.ndarray, graph: str = "dense", n_neighbors: int = 10):
    """Symmetric similarity ``W`` with ``w_ij = 1 / ||U_i - U_j||`` and zero diagonal.

    Parameters
    ----------
    points : ndarray of shape (n, M)
        Distinct points (a zero distance raises ``ValueError``).
    graph : {"dense", "knn"}
        "dense": every pair (``n (n - 1)`` stored entries). "knn": the pair ``(i, j)`` is kept
        when ``j`` is among the ``n_neighbors`` nearest points of ``i`` or ``i`` among those
        of ``j`` (symmetrized by union), about ``n * n_neighbors`` to twice that entries.
    n_neighbors : int
        Neighbours per point for "knn"; capped at ``n - 1`` (then equal to "dense").

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n, n)
    """
    points = np.asarray(points, dtype=float)
    n = points.shape[0]
    if graph not in ("dense", "knn"):
        raise ValueError(f"graph must be 'dense' or 'knn', got {graph!r}.")
    if n < 2:
        return sp.csr_matrix((n, n))
    k = int(n_neighbors)
    if graph == "dense" or k >= n - 1:
        dist = pdist(points)
        rows, cols = np.triu_indices(n, k=1)  # pdist's condensed order
    else:
        if k < 1:
            raise ValueError(f"n_neighbors must be >= 1, got {n_neighbors}.")
        dist, idx = cKDTree(points).query(points, k=k + 1)
        rows = np.repeat(np.arange(n), k + 1)
        cols = idx.reshape(-1)
        dist = dist.reshape(-1)
        off = cols != rows  # drop each point's own entry (distance 0)
        rows, cols, dist = rows[off], cols[off], dist[off]
    if np.any(dist <= 0):
        raise ValueError("points must be distinct (zero distance); merge identical rows first.")
    if graph == "dense" or k >= n - 1:  # each unordered pair once: mirror it
        sim = np.concatenate([1.0 / dist, 1.0 / dist])
        return sp.csr_matrix(
            (sim, (np.concatenate([rows, cols]), np.concatenate([cols, rows]))), shape=(n, n)
        )
    W = sp.csr_matrix((1.0 / dist, (rows, cols)), shape=(n, n))
    # Union of the two directions; the weight is symmetric, so the maximum is either one.
    return W.maximum(W.T).tocsr()


def laplacian(W) -> sp.csc_matrix:
    """Graph Laplacian ``L = diag(W 1) - W`` (CSC, every diagonal entry stored).

    ``p' L p = sum_{i<j} w_ij (p_i - p_j)^2`` (each unordered pair once).
    """
    W = sp.csr_matrix(W)
    n = W.shape[0]
    degree = np.asarray(W.sum(axis=1)).reshape(-1)
    diag = sp.coo_matrix((degree, (np.arange(n), np.arange(n))), shape=(n, n))
    # coo -> csc keeps explicit zeros, so an isolated vertex still has its diagonal slot.
    return (diag.tocsc() - W.tocsc()).tocsc()


# ---------------------------------------------------------------------------------------------
# Dominance queries.


def dominated_max(
    points: np.ndarray, values: np.ndarray, queries: np.ndarray, fill: float
) -> np.ndarray:
    """``max{values_i : points_i <= q}`` (coordinate-wise) for each query ``q``, else ``fill``.

    Non-decreasing in ``q`` coordinate-wise for any ``values`` (the set grows with ``q``),
    provided ``fill <= min(values)``.

    Parameters
    ----------
    points : ndarray of shape (n, M)
    values : ndarray of shape (n,)
    queries : ndarray of shape (m, M)
    fill : float
        Value where no training point lies below the query.

    Returns
    -------
    ndarray of shape (m,)

    Notes
    -----
    ``M = 1``: running maximum and binary search, ``O((n + m) log n)``. ``M = 2``: a sweep
    over the distinct first coordinates keeping, for every second-coordinate level, the
    maximum over the points swept so far (``O(n^2)`` vectorized work in the worst case,
    ``O(n)`` memory, plus ``O(m log m)`` for the queries). ``M >= 3``: brute force in chunks,
    ``O(n m M)``.
    """
    points = np.asarray(points, dtype=float)
    values = np.asarray(values, dtype=float)
    queries = np.asarray(queries, dtype=float)
    M = points.shape[1]
    if points.shape[0] == 0:
        return np.full(queries.shape[0], float(fill))
    if M == 1:
        return _dominated_max_1d(points[:, 0], values, queries[:, 0], fill)
    if M == 2:
        return _dominated_max_2d(points, values, queries, fill)
    return _dominated_max_brute(points, values, queries, fill)


def dominating_min(
    points: np.ndarray, values: np.ndarray, queries: np.ndarray, fill: float
) -> np.ndarray:
    """``min{values_i : points_i >= q}`` for each query ``q``, else ``fill`` (see
    :func:`dominated_max`, applied to the reflected problem)."""
    return -dominated_max(
        -np.asarray(points, dtype=float),
        -np.asarray(values, dtype=float),
        -np.asarray(queries, dtype=float),
        -float(fill),
    )


def _dominated_max_1d(x, values, q, fill) -> np.ndarray:
    order = np.argsort(x, kind="stable")
    running = np.maximum.accumulate(values[order])
    pos = np.searchsorted(x[order], q, side="right") - 1
    return np.where(pos >= 0, running[np.maximum(pos, 0)], float(fill))


def _dominated_max_2d(points, values, queries, fill) -> np.ndarray:
    xs, kx = np.unique(points[:, 0], return_inverse=True)
    ys, ly = np.unique(points[:, 1], return_inverse=True)
    kx, ly = kx.reshape(-1), ly.reshape(-1)
    kq = np.searchsorted(xs, queries[:, 0], side="right") - 1
    lq = np.searchsorted(ys, queries[:, 1], side="right") - 1
    out = np.full(queries.shape[0], -np.inf)
    live = np.flatnonzero((kq >= 0) & (lq >= 0))
    live = live[np.argsort(kq[live], kind="stable")]
    K = xs.shape[0]
    q_bounds = np.searchsorted(kq[live], np.arange(K + 1), side="left")
    p_order = np.argsort(kx, kind="stable")
    p_bounds = np.searchsorted(kx[p_order], np.arange(K + 1), side="left")
    # col[l] = max of values over swept points with y-level <= l.
    col = np.full(ys.shape[0], -np.inf)
    for k in range(K):
        for i in p_order[p_bounds[k] : p_bounds[k + 1]]:
            tail = col[ly[i] :]
            np.maximum(tail, values[i], out=tail)
        if q_bounds[k + 1] > q_bounds[k]:
            sel = live[q_bounds[k] : q_bounds[k + 1]]
            out[sel] = col[lq[sel]]
    out[np.isneginf(out)] = float(fill)
    return out


def _dominated_max_brute(points, values, queries, fill) -> np.ndarray:
    n, M = points.shape
    out = np.empty(queries.shape[0])
    step = max(1, CHUNK_ELEMENTS // (n * M))
    for a in range(0, queries.shape[0], step):
        Q = queries[a : a + step]
        below = np.all(points[None, :, :] <= Q[:, None, :], axis=2)
        best = np.where(below, values[None, :], -np.inf).max(axis=1)
        out[a : a + step] = np.where(np.isneginf(best), float(fill), best)
    return out
