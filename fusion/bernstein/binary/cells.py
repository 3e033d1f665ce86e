"""Fine cells of the scores: the units of the default model's fit from 20,000 rows on and on
dask, and their sums, which add over blocks of rows.

Cells
-----
Every score axis ``m`` is cut at the ``bins - 1`` interior quantiles ``u_m = k / bins`` and at
``bins - 1`` equally spaced values of the standardized feature ``z_m`` over its training
range. ``z_m`` is non-decreasing in ``u_m``, so the two sets of cuts interleave into one
partition of the axis into at most ``2 bins - 1`` intervals, each narrow in both ``u`` (where
the data are) and ``z`` (in the tails, where a quantile bin of a logit spans many units);
the index of a row's interval is the number of cuts of either kind below it. A *cell* is a
tuple of intervals, one per axis; only occupied cells are kept. Per cell and fold the fit
needs the total weight ``W``, the weight of the positives ``V`` and the weighted sums of
``u`` and ``z`` (for their means): additive over rows and over blocks of rows, so they are
also the sufficient statistic of a distributed fit (:mod:`fusion.bernstein.dask.binary`),
computed in one pass.

The fit then treats every cell as ``W`` rows at the cell's mean ``(u, z)`` with ``V``
positives: exact for the linear part ``c'z`` on average, and for ``g`` and the log-loss up
to second-order terms in the spread of ``u`` and ``eta`` within a cell, so the error falls
with the square of the cell width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._chunks import by_rows
from .data import LogisticData, Units

__all__ = [
    "cell_edges",
    "cell_index",
    "CellSums",
    "block_sums",
    "CellTable",
    "aggregate_cells",
]


def cell_edges(z_lo: np.ndarray, z_hi: np.ndarray, bins: int) -> tuple[int, np.ndarray, np.ndarray]:
    """The cuts of every axis: ``bins`` and the range of ``z`` per axis (equal spacing)."""
    return int(bins), np.asarray(z_lo, dtype=float), np.asarray(z_hi, dtype=float)


def _count_cuts(x: np.ndarray, lo: float, hi: float, bins: int) -> np.ndarray:
    """Number of the interior cuts ``lo + (hi - lo) k / bins`` (k = 1 .. bins - 1) at or below
    each ``x``, by arithmetic (non-decreasing in ``x``)."""
    span = hi - lo
    if not span > 0:
        return np.zeros(x.shape[0], dtype=np.int64)
    k = x - lo
    k *= bins / span
    np.floor(k, out=k)
    np.clip(k, 0, bins - 1, out=k)
    return k.astype(np.int64)


def cell_index(U: np.ndarray, Z: np.ndarray, edges) -> tuple[np.ndarray, tuple[int, ...]]:
    """Flat cell index of every row, and the number of intervals per axis."""
    bins, z_lo, z_hi = edges
    dims = (2 * bins - 1,) * U.shape[1]

    def index(U, Z):
        idx = np.zeros(U.shape[0], dtype=np.int64)
        for m in range(U.shape[1]):
            k = _count_cuts(U[:, m], 0.0, 1.0, bins)
            k += _count_cuts(Z[:, m], z_lo[m], z_hi[m], bins)
            idx *= dims[m]
            idx += k
        return idx

    return by_rows(index, U, Z), dims


#: Up to this many possible (cell, fold) keys the sums are dense bincounts (no sort).
DENSE_KEYS = 1 << 22


@dataclass
class CellSums:
    """Sums over the rows of every occupied (cell, fold): sparse, sorted by ``key``.

    ``key = cell * n_folds + fold``; ``W``, ``V``, ``W2`` of shape (k,), ``SU``, ``SZ`` of
    shape (k, M): weights, weighted positives, squared weights (for the standard errors of
    the cross-validation), weighted sums of ``u`` and ``z``.
    """

    key: np.ndarray
    W: np.ndarray
    V: np.ndarray
    W2: np.ndarray
    SU: np.ndarray
    SZ: np.ndarray

    @staticmethod
    def merge(parts: list[CellSums]) -> CellSums:
        """Sum of several blocks' sums (equal keys add)."""
        key = np.concatenate([p.key for p in parts])
        uniq, inv = np.unique(key, return_inverse=True)
        k = uniq.shape[0]

        def add(vals):
            if vals.ndim == 1:
                return np.bincount(inv, weights=vals, minlength=k)
            return np.stack(
                [np.bincount(inv, weights=vals[:, m], minlength=k) for m in range(vals.shape[1])],
                axis=1,
            )

        return CellSums(
            uniq,
            add(np.concatenate([p.W for p in parts])),
            add(np.concatenate([p.V for p in parts])),
            add(np.concatenate([p.W2 for p in parts])),
            add(np.concatenate([p.SU for p in parts])),
            add(np.concatenate([p.SZ for p in parts])),
        )


def block_sums(
    U: np.ndarray,
    Z: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    edges,
    fold: np.ndarray | None,
    n_folds: int,
) -> CellSums:
    """:class:`CellSums` of a block of rows (``fold`` None: one fold)."""
    cell, dims = cell_index(U, Z, edges)
    F = max(n_folds, 1)
    key = cell * F + (fold if fold is not None else 0)
    n_keys = int(np.prod(dims, dtype=float)) * F
    if n_keys <= DENSE_KEYS:
        inv, k = key, n_keys
    else:
        uniq, inv = np.unique(key, return_inverse=True)
        k = uniq.shape[0]

    def add(vals):
        return np.bincount(inv, weights=vals, minlength=k)

    # unit weights (an unweighted fit): the same sums without multiplying by 1, bit for bit
    unit = bool(np.all(w == 1.0))
    M = U.shape[1]
    W = np.bincount(inv, minlength=k).astype(float) if unit else add(w)
    keep = np.flatnonzero(W > 0) if n_keys <= DENSE_KEYS else slice(None)
    SU = np.empty((W[keep].shape[0], M))
    SZ = np.empty_like(SU)
    for m in range(M):
        SU[:, m] = add(U[:, m] if unit else w * U[:, m])[keep]
        SZ[:, m] = add(Z[:, m] if unit else w * Z[:, m])[keep]
    keys = keep.astype(np.int64) if n_keys <= DENSE_KEYS else uniq
    V = add(y if unit else w * y)[keep]
    W2 = W[keep].copy() if unit else add(w * w)[keep]
    return CellSums(keys, W[keep], V, W2, SU, SZ)


class CellTable:
    """The sums of every occupied cell per fold, arranged as ``(fold, cell)`` tables (from
    merged :class:`CellSums`): ``W``, ``V``, ``W2`` of shape ``(F, k)``, ``SU``, ``SZ`` of
    shape ``(F, k, M)``, the cells in the order of their ids."""

    def __init__(self, sums: CellSums, n_folds: int, M: int):
        F = max(n_folds, 1)
        cell, fold = np.divmod(sums.key, F)
        uniq, inv = np.unique(cell, return_inverse=True)
        k = uniq.shape[0]
        self.W = np.zeros((F, k))
        self.V = np.zeros((F, k))
        self.W2 = np.zeros((F, k))
        self.SU = np.zeros((F, k, M))
        self.SZ = np.zeros((F, k, M))
        self.W[fold, inv] = sums.W
        self.V[fold, inv] = sums.V
        self.W2[fold, inv] = sums.W2
        self.SU[fold, inv] = sums.SU
        self.SZ[fold, inv] = sums.SZ
        self.n_folds = n_folds
        self.n_cells = int(k)

    def pooled(self, folds: np.ndarray) -> Units:
        """The cells of the rows of ``folds``, each at its rows' mean ``(u, z)`` (cells
        without such rows dropped)."""
        W = self.W[folds].sum(0)
        keep = W > 0
        W = W[keep]
        U = self.SU[folds].sum(0)[keep] / W[:, None]
        Z = self.SZ[folds].sum(0)[keep] / W[:, None]
        np.clip(U, 0.0, 1.0, out=U)  # sums of u in [0, 1] divided by their weight
        V = self.V[folds].sum(0)[keep]
        return Units(U, Z, W, V, self.W2[folds].sum(0)[keep])

    def data(self, unit: float = 1.0) -> LogisticData:
        """The :class:`~fusion.bernstein.binary.data.LogisticData` of the cells (``unit``:
        the canonical weight of a weight of 1)."""
        full = self.pooled(np.arange(self.W.shape[0]))
        folds = []
        for f in range(self.n_folds):
            others = np.array([g for g in range(self.n_folds) if g != f])
            folds.append((self.pooled(others), self.pooled(np.array([f]))))
        base_rate = float(self.V.sum() / self.W.sum())
        return LogisticData(
            full, tuple(folds), base_rate, float(self.W.sum()) * unit, None, self.n_cells
        )


def aggregate_cells(U, Z, y, w, edges, fold_of, n_folds: int) -> CellTable:
    """The :class:`CellTable` of rows in memory (the same cells as a dask fit's)."""
    sums = block_sums(U, Z, y, w, edges, fold_of, n_folds)
    return CellTable(sums, n_folds, U.shape[1])
