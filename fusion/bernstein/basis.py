"""Bernstein basis polynomials and the tensor-product design, evaluated in row chunks.

The coefficient tensor ``beta`` has shape ``(K_1 + 1, ..., K_M + 1)`` and is flattened in C
order, so column ``j`` of the tensor design is the row-wise Kronecker product of the per-axis
bases with the first axis varying slowest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from scipy.special import comb

__all__ = ["bernstein_basis", "tensor_design", "evaluate", "row_chunks", "DEFAULT_CHUNK_ELEMENTS"]

#: Elements (rows x coefficients) of one design chunk: ~16 MB of float64.
DEFAULT_CHUNK_ELEMENTS = 2_000_000

#: Basis values below this are set to zero. Near the ends of [0, 1] high powers underflow
#: towards subnormal numbers, and products of subnormals make BLAS 50x slower; values this
#: small change f by less than 1e-150 since every coefficient lies in [0, 1].
TINY = 1e-150


def bernstein_basis(u: np.ndarray, degree: int) -> np.ndarray:
    """Univariate Bernstein basis ``b_{k,K}(u) = C(K, k) u^k (1 - u)^(K - k)``.

    Parameters
    ----------
    u : ndarray of shape (n,)
        Points of ``[0, 1]``.
    degree : int
        ``K >= 0``.

    Returns
    -------
    B : ndarray of shape (n, K + 1)
        Rows sum to 1 and are non-negative on ``[0, 1]``.
    """
    u = np.asarray(u, dtype=float)
    K = int(degree)
    # Powers by cumulative products: much faster than scipy.stats.binom.pmf.
    up = np.empty((u.shape[0], K + 1))
    vp = np.empty((u.shape[0], K + 1))
    up[:, 0] = 1.0
    vp[:, 0] = 1.0
    v = 1.0 - u
    for k in range(1, K + 1):
        np.multiply(up[:, k - 1], u, out=up[:, k])
        np.multiply(vp[:, k - 1], v, out=vp[:, k])
    B = comb(K, np.arange(K + 1)) * up * vp[:, ::-1]
    B[B < TINY] = 0.0
    return B


def tensor_design(U: np.ndarray, degrees: Sequence[int]) -> np.ndarray:
    """Tensor-product design ``Phi`` of shape ``(n, prod(K_m + 1))`` for rows of ``U``."""
    Phi = bernstein_basis(U[:, 0], degrees[0])
    for m in range(1, len(degrees)):
        B = bernstein_basis(U[:, m], degrees[m])
        Phi = (Phi[:, :, None] * B[:, None, :]).reshape(U.shape[0], -1)
        Phi[Phi < TINY] = 0.0
    return Phi


def row_chunks(
    n: int, n_coef: int, chunk_elements: int = DEFAULT_CHUNK_ELEMENTS
) -> Iterator[slice]:
    """Slices of rows so that one chunk of the design holds about ``chunk_elements`` values."""
    step = max(1, chunk_elements // max(n_coef, 1))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def evaluate(
    coef: np.ndarray, U: np.ndarray, chunk_elements: int = DEFAULT_CHUNK_ELEMENTS
) -> np.ndarray:
    """Evaluate the tensor Bernstein polynomial with coefficients ``coef`` at rows of ``U``.

    Contracts one axis at a time (``O(n P)`` work, ``O(chunk * P)`` memory), never forming the
    full design.
    """
    degrees = [s - 1 for s in coef.shape]
    out = np.empty(U.shape[0])
    for rows in row_chunks(U.shape[0], coef.size, chunk_elements):
        Uc = U[rows]
        # T has shape (c, prod of remaining axes); contract the leading axis each time.
        T = bernstein_basis(Uc[:, 0], degrees[0]) @ coef.reshape(coef.shape[0], -1)
        for m in range(1, len(degrees)):
            B = bernstein_basis(Uc[:, m], degrees[m])
            T = np.einsum("ck,ckr->cr", B, T.reshape(Uc.shape[0], degrees[m] + 1, -1))
        out[rows] = T[:, 0]
    return out
