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


def _dense_ranks(x: np.ndarray) -> np.ndarray:
    """0, 1, 2, ... by increasing value (ties share a rank)."""
    return np.unique(x, return_inverse=True)[1].reshape(-1)


def _earlier_weights(rank: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each position ``i``: the weight of earlier positions with a smaller rank, and with
    an equal rank.

    Bottom-up merge sort, one vectorized pass per level: the positions are kept sorted by
    ``(block, rank)``; merging a block's two halves (a stable sort of two sorted runs) lets
    every position of the right half count, by a sorted search, the left-half positions below
    it. Every earlier pair is counted at exactly one level.
    """
    n = rank.shape[0]
    K = int(rank.max()) + 1
    perm = np.arange(n)  # sorted by (position // size, rank)
    less, equal = np.zeros(n), np.zeros(n)
    size = 1
    while size < n:
        block = perm // (2 * size)
        keys = block * K + rank[perm]
        order = np.argsort(keys, kind="stable")  # merges two sorted runs per block
        perm, keys, block = perm[order], keys[order], block[order]
        left = (perm // size) % 2 == 0
        cum = np.concatenate([[0.0], np.cumsum(np.where(left, w[perm], 0.0))])
        # in this order a right-half position's smaller-ranked left-half positions run from
        # its block's start to the start of its run of equal keys
        below, upto = _run_bounds(keys)
        start, _ = _run_bounds(block)
        right = np.flatnonzero(~left)
        less[perm[right]] += cum[below[right]] - cum[start[right]]
        equal[perm[right]] += cum[upto[right]] - cum[below[right]]
        size *= 2
    return less, equal


def _run_bounds(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each position of a sorted array: start and end (exclusive) of its run of equals."""
    new = np.concatenate([[True], sorted_keys[1:] != sorted_keys[:-1]])
    starts = np.flatnonzero(new)
    run = np.cumsum(new) - 1
    ends = np.concatenate([starts[1:], [sorted_keys.shape[0]]])
    return starts[run], ends[run]


def _weighted_tau_sorted(x: np.ndarray, y: np.ndarray, w: np.ndarray, ranks=None) -> float:
    """Weighted tau-b in ``O(n log^2 n)`` (``ranks``: the dense ranks of x and y, if known).

    With rows sorted by ``(x, y)``, the numerator ``sum_{i<j} w_i w_j sgn(dx) sgn(dy)`` is the
    sum over ordered pairs of ``sgn(y_i - y_j)`` (earlier ``j``), minus the pairs tied in
    ``x`` (which that order counts as concordant when their ``y`` differ); the denominators
    count the pairs not tied in each variable.
    """
    xr, yr = ranks if ranks is not None else (_dense_ranks(x), _dense_ranks(y))
    order = np.lexsort((yr, xr))
    xr, yr, w = xr[order], yr[order], w[order]
    less, equal = _earlier_weights(yr, w)
    before = np.cumsum(w) - w
    ordered = float(np.sum(w * (2.0 * less + equal - before)))
    Wx, Wy = np.bincount(xr, w), np.bincount(yr, w)
    # rows tied in (x, y) are adjacent in this order
    runs = np.flatnonzero(np.r_[True, (np.diff(xr) != 0) | (np.diff(yr) != 0)])
    Wxy = np.add.reduceat(w, runs)
    sx, sy, sxy = float(Wx @ Wx), float(Wy @ Wy), float(Wxy @ Wxy)
    total2 = float(w.sum()) ** 2
    concord = ordered - 0.5 * (sx - sxy)
    tx, ty = 0.5 * (total2 - sx), 0.5 * (total2 - sy)
    if tx <= 0 or ty <= 0:
        return 0.0
    return float(concord / np.sqrt(tx * ty))


def tau_correlation(U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Correlation matrix ``sin(pi tau / 2)`` from pairwise weighted Kendall's tau."""
    M = U.shape[1]
    keep = w > 0
    U, w = U[keep], w[keep]
    # many rows and unequal weights: rank every column once for the merge-sort tau
    fast = U.shape[0] > _PAIRS_MAX and not np.all(w == w[0])
    ranks = [_dense_ranks(U[:, j]) for j in range(M)] if fast else None
    C = np.eye(M)
    for j in range(M):
        for k in range(j + 1, M):
            if fast:
                tau = _weighted_tau_sorted(U[:, j], U[:, k], w, (ranks[j], ranks[k]))
            else:
                tau = kendall_tau(U[:, j], U[:, k], w)
            C[j, k] = C[k, j] = np.sin(0.5 * np.pi * tau)
    return as_correlation(C)
