"""Bernstein basis polynomials and the tensor-product design, evaluated in row chunks.

The coefficient tensor ``beta`` has shape ``(K_1 + 1, ..., K_M + 1)`` and is flattened in C
order, so column ``j`` of the tensor design is the row-wise Kronecker product of the per-axis
bases with the first axis varying slowest.

A *structured* model is a sum of such tensors over subsets of the axes ("components", see
:func:`make_components` and :class:`fusion.bernstein.structure.Structure`); its design is
the horizontal concatenation of the components' tensor designs, and its coefficient vector
the concatenation of their flattened tensors.

Bases are built with the polynomial index as the leading (contiguous) axis: each power is a
contiguous vector operation, several times faster than writing strided columns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from scipy.special import comb

__all__ = [
    "bernstein_basis",
    "design_rows",
    "tensor_design",
    "evaluate",
    "row_chunks",
    "DEFAULT_CHUNK_ELEMENTS",
    "STRUCTURES",
    "make_components",
]

#: Model structures of BernsteinFusion (see :func:`make_components`).
STRUCTURES = ("tensor", "additive", "pairwise")

#: Elements (rows x coefficients) of one design chunk: ~16 MB of float64.
DEFAULT_CHUNK_ELEMENTS = 2_000_000

#: Basis values below this are set to zero. Near the ends of [0, 1] high powers underflow
#: towards subnormal numbers, and products of subnormals make BLAS 50x slower; values this
#: small change f by less than 1e-150 since every coefficient lies in [0, 1].
TINY = 1e-150


def _basis_rows(u: np.ndarray, degree: int) -> np.ndarray:
    """Bernstein basis as an array of shape ``(K + 1, n)`` (index-major, contiguous rows)."""
    u = np.asarray(u, dtype=float)
    K = int(degree)
    up = np.empty((K + 1, u.shape[0]))
    vp = np.empty((K + 1, u.shape[0]))
    up[0] = 1.0
    vp[0] = 1.0
    v = 1.0 - u
    # Powers by cumulative products: much faster than scipy.stats.binom.pmf.
    for k in range(1, K + 1):
        np.multiply(up[k - 1], u, out=up[k])
        np.multiply(vp[k - 1], v, out=vp[k])
    up *= vp[::-1]
    up *= comb(K, np.arange(K + 1))[:, None]
    up[up < TINY] = 0.0
    return up


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
        Rows sum to 1 and are non-negative on ``[0, 1]`` (a Fortran-ordered view).
    """
    return _basis_rows(u, degree).T


def design_rows(U: np.ndarray, degrees: Sequence[int]) -> np.ndarray:
    """Transposed tensor design, shape ``(prod(K_m + 1), n)``."""
    n = U.shape[0]
    Phi = _basis_rows(U[:, 0], degrees[0])
    for m in range(1, len(degrees)):
        B = _basis_rows(U[:, m], degrees[m])
        Phi = (Phi[:, None, :] * B[None, :, :]).reshape(-1, n)
        Phi[Phi < TINY] = 0.0
    return Phi


def tensor_design(U: np.ndarray, degrees: Sequence[int]) -> np.ndarray:
    """Tensor-product design ``Phi`` of shape ``(n, prod(K_m + 1))`` for rows of ``U``."""
    return design_rows(U, degrees).T


def row_chunks(
    n: int, n_coef: int, chunk_elements: int = DEFAULT_CHUNK_ELEMENTS
) -> Iterator[slice]:
    """Slices of rows so that one chunk of the design holds about ``chunk_elements`` values."""
    step = max(1, chunk_elements // max(n_coef, 1))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def _evaluate_rows(coef: np.ndarray, U: np.ndarray) -> np.ndarray:
    degrees = [s - 1 for s in coef.shape]
    # T has shape (prod of remaining axes, c); contract the leading axis each time. einsum's
    # own loops: tiny contractions where a threaded BLAS call only adds overhead.
    T = np.einsum("kr,kc->rc", coef.reshape(coef.shape[0], -1), _basis_rows(U[:, 0], degrees[0]))
    for m in range(1, len(degrees)):
        B = _basis_rows(U[:, m], degrees[m])
        T = np.einsum("krc,kc->rc", T.reshape(degrees[m] + 1, -1, U.shape[0]), B)
    return T[0]


def evaluate(
    coef: np.ndarray, U: np.ndarray, chunk_elements: int = DEFAULT_CHUNK_ELEMENTS
) -> np.ndarray:
    """Evaluate the tensor Bernstein polynomial with coefficients ``coef`` at rows of ``U``.

    Contracts one axis at a time (``O(n P)`` work, ``O(chunk * P)`` memory), never forming the
    full design.
    """
    coef = np.asarray(coef, dtype=float)
    out = np.empty(U.shape[0])
    for rows in row_chunks(U.shape[0], coef.size, chunk_elements):
        out[rows] = _evaluate_rows(coef, U[rows])
    return out


# -- structures ------------------------------------------------------------------------------


def make_components(structure: str, M: int) -> tuple[tuple[int, ...], ...]:
    """Axes of each component of a structured model (:class:`fusion.bernstein.structure.
    Structure`).

    ``"tensor"``: one component on all axes. ``"additive"``: one univariate component per
    axis. ``"pairwise"``: one bivariate tensor per pair of axes (a monotone bivariate tensor
    contains monotone univariate functions of either axis, so no separate additive terms);
    with ``M <= 2`` it coincides with ``"tensor"``.
    """
    if structure == "tensor" or (structure == "pairwise" and M <= 2):
        return (tuple(range(M)),)
    if structure == "additive":
        return tuple((m,) for m in range(M))
    if structure == "pairwise":
        return tuple((a, b) for a in range(M) for b in range(a + 1, M))
    raise ValueError(f"structure must be one of {STRUCTURES}, got {structure!r}.")
