"""Dependence measures behind the elliptical fits: weighted Kendall's tau, the correlation
matrices it and the normal scores give, and the nearest usable correlation matrix."""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from scipy.stats import kendalltau

__all__ = [
    "RHO_MAX",
    "as_correlation",
    "normal_scores_correlation",
    "kendall_tau",
    "tau_correlation",
]

#: Largest absolute correlation used by the elliptical families (their fits' bound).
RHO_MAX = 0.999


def as_correlation(C: np.ndarray) -> np.ndarray:
    """Nearest usable correlation matrix: positive definite, off-diagonals within bounds."""
    C = 0.5 * (C + C.T)
    vals, vecs = np.linalg.eigh(C)
    C = (vecs * np.maximum(vals, 1e-8)) @ vecs.T
    d = np.sqrt(np.diag(C))
    C = C / np.outer(d, d)
    M = C.shape[0]
    off = ~np.eye(M, dtype=bool)
    # shrink towards the identity until the bounds hold (shrinking keeps it positive definite)
    top = np.max(np.abs(C[off])) if M > 1 else 0.0
    if top > RHO_MAX:
        C = np.where(off, C * (RHO_MAX / top), 1.0)
    np.fill_diagonal(C, 1.0)
    return C


def normal_scores_correlation(U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted Pearson correlation of the normal scores ``Phi^{-1}(u)``."""
    Z = ndtri(U)
    w = w / w.sum()
    Zc = Z - np.einsum("i,ij->j", w, Z)
    return as_correlation(np.einsum("i,ij,ik->jk", w, Zc, Zc))


def kendall_tau(x: np.ndarray, y: np.ndarray, w: np.ndarray, chunk: int = 512) -> float:
    """Weighted Kendall's tau-b: pairs weighted by ``w_i w_j``.

    Equal weights give ``scipy.stats.kendalltau`` (tau-b), which is used then
    (``O(n log n)``). Otherwise up to :data:`_PAIRS_MAX` rows the pairs are summed directly in
    row chunks (``O(n^2)`` time, ``O(chunk * n)`` memory), and beyond by a merge-sort count
    (:func:`_weighted_tau_sorted`, ``O(n log^2 n)``; 0.1 s at n = 100,000).
    """
    keep = w > 0
    x, y, w = x[keep], y[keep], w[keep]
    if np.all(w == w[0]):
        tau = kendalltau(x, y).statistic
        return float(tau) if np.isfinite(tau) else 0.0
    if x.shape[0] > _PAIRS_MAX:
        return _weighted_tau_sorted(x, y, w)
    concord = tx = ty = 0.0
    for a in range(0, x.shape[0], chunk):
        sx = np.sign(x[a : a + chunk, None] - x[None, :])
        sy = np.sign(y[a : a + chunk, None] - y[None, :])
        ww = w[a : a + chunk, None] * w[None, :]
        concord += np.sum(ww * sx * sy)
        tx += np.sum(ww * (sx != 0))
        ty += np.sum(ww * (sy != 0))
    if tx == 0 or ty == 0:
        return 0.0
    return float(concord / np.sqrt(tx * ty))


#: Above this many rows the weighted Kendall's tau is counted by merge sort, not pair by pair.
_PAIRS_MAX = 1000


def _group_square_sum(*keys: np.ndarray, w: np.ndarray) -> float:
    """``sum_g W_g^2`` over the groups of rows with equal keys."""
    _, inverse = np.unique(np.column_stack(keys), axis=0, return_inverse=True)
    W = np.bincount(inverse.reshape(-1), w)
    return float(np.sum(W * W))


def _earlier_weights(rank: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each position ``i``: the weight of earlier positions with a smaller rank, and with
    an equal rank.

    Divide and conquer over positions, one vectorized pass per level: at the level of blocks
    of ``2s`` positions, every position in a block's right half counts the positions of the
    left half below it (a sorted search on ``(block, rank)`` keys); every earlier pair is
    counted at exactly one level.
    """
    n = rank.shape[0]
    K = int(rank.max()) + 1
    pos = np.arange(n)
    less, equal = np.zeros(n), np.zeros(n)
    size = 1
    while size < n:
        block = pos // (2 * size)
        right = (pos // size) % 2 == 1
        left = ~right
        keys = block[left] * K + rank[left]
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        cum = np.concatenate([[0.0], np.cumsum(w[left][order])])
        query = block[right] * K + rank[right]
        below = np.searchsorted(keys, query, side="left")
        upto = np.searchsorted(keys, query, side="right")
        start = np.searchsorted(keys, block[right] * K, side="left")
        less[right] += cum[below] - cum[start]
        equal[right] += cum[upto] - cum[below]
        size *= 2
    return less, equal


def _weighted_tau_sorted(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """Weighted tau-b in ``O(n log^2 n)``.

    With rows sorted by ``(x, y)``, the numerator ``sum_{i<j} w_i w_j sgn(dx) sgn(dy)`` is the
    sum over ordered pairs of ``sgn(y_i - y_j)`` (earlier ``j``), minus the pairs tied in
    ``x`` (which that order counts as concordant when their ``y`` differ); the denominators
    count the pairs not tied in each variable.
    """
    xr = np.unique(x, return_inverse=True)[1].reshape(-1)
    yr = np.unique(y, return_inverse=True)[1].reshape(-1)
    order = np.lexsort((yr, xr))
    xr, yr, w = xr[order], yr[order], w[order]
    less, equal = _earlier_weights(yr, w)
    before = np.cumsum(w) - w
    ordered = float(np.sum(w * (2.0 * less + equal - before)))
    total2 = float(w.sum()) ** 2
    sx, sy, sxy = (
        _group_square_sum(xr, w=w),
        _group_square_sum(yr, w=w),
        _group_square_sum(xr, yr, w=w),
    )
    concord = ordered - 0.5 * (sx - sxy)
    tx, ty = 0.5 * (total2 - sx), 0.5 * (total2 - sy)
    if tx <= 0 or ty <= 0:
        return 0.0
    return float(concord / np.sqrt(tx * ty))


def tau_correlation(U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Correlation matrix ``sin(pi tau / 2)`` from pairwise weighted Kendall's tau."""
    M = U.shape[1]
    C = np.eye(M)
    for j in range(M):
        for k in range(j + 1, M):
            C[j, k] = C[k, j] = np.sin(0.5 * np.pi * kendall_tau(U[:, j], U[:, k], w))
    return as_correlation(C)
