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
    (``O(n log n)``); otherwise the pairs are summed in row chunks (``O(n^2)`` time,
    ``O(chunk * n)`` memory).
    """
    keep = w > 0
    x, y, w = x[keep], y[keep], w[keep]
    if np.all(w == w[0]):
        tau = kendalltau(x, y).statistic
        return float(tau) if np.isfinite(tau) else 0.0
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


def tau_correlation(U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Correlation matrix ``sin(pi tau / 2)`` from pairwise weighted Kendall's tau."""
    M = U.shape[1]
    C = np.eye(M)
    for j in range(M):
        for k in range(j + 1, M):
            C[j, k] = C[k, j] = np.sin(0.5 * np.pi * kendall_tau(U[:, j], U[:, k], w))
    return as_correlation(C)
