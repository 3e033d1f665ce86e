"""The data of a penalized logistic fit: its units (rows, or cells of rows at their means),
over all rows and per fold of the cross-validation.

A fit sums its log-loss over *units*: every unit has normalized scores ``u``, linear
features ``z``, a weight ``w``, the weight of its positives ``v`` and the sum of its rows'
squared weights ``w2``. A row is a unit of its own (``v = w y``); a cell of the scores
(:mod:`fusion.bernstein.binary.cells`) is the unit of its rows, at their weighted mean
``u`` and ``z``. :class:`LogisticData` holds the units of all rows and, per fold, those of
its training rows and of its held-out rows: the default model's fit, its cross-validation
and the bootstrap refits read nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..structure import Structure
from .logistic import Design

__all__ = ["Units", "LogisticData", "row_data"]


@dataclass(frozen=True)
class Units:
    """Rows, or cells of rows: normalized scores ``U`` (k, M), linear features ``Z`` (k, L),
    weights ``w``, weights of the positives ``v`` and sums of squared row weights ``w2``."""

    U: np.ndarray
    Z: np.ndarray
    w: np.ndarray
    v: np.ndarray
    w2: np.ndarray

    def take(self, rows) -> Units:
        return Units(self.U[rows], self.Z[rows], self.w[rows], self.v[rows], self.w2[rows])

    def design(self, structure: Structure, linear: bool = True) -> Design:
        """The fit's design ``X = [Z, Phi]`` (``Z = 0`` unless ``linear``)."""
        Z = self.Z if linear else np.zeros_like(self.Z)
        X = np.concatenate([Z, structure.design(self.U)], axis=1)
        return Design(X, self.w, self.v, self.w2)


@dataclass(frozen=True)
class LogisticData:
    """The units of all rows (``full``) and of every fold's training and held-out rows
    (``folds``, empty without cross-validation); the weighted base rate and the total
    canonical weight ``n_eff`` (the ridge's row count) of the rows; the tie group of every
    held-out unit (rows with identical scores; None for cells, which count rows) in the
    order of the folds' held-out units; and the number of cells (None: rows)."""

    full: Units
    folds: tuple[tuple[Units, Units], ...]
    base_rate: float
    n_eff: float
    groups: np.ndarray | None = None
    n_cells: int | None = None

    @property
    def n_features(self) -> int:
        return self.full.U.shape[1]

    def design(self, structure: Structure, linear: bool = True) -> Design:
        return self.full.design(structure, linear)

    def fold_designs(self, structure: Structure, linear: bool = True) -> list:
        """``(train, test)`` designs of every fold."""
        return [
            (tr.design(structure, linear), te.design(structure, linear)) for tr, te in self.folds
        ]


def row_data(U, Z, y, w, splits=None, unit: float = 1.0) -> LogisticData:
    """The rows themselves as units (``splits``: the cross-validation's ``(train, test)``
    row indices, or None). ``unit``: the canonical weight of a weight of 1 (the rows'
    weights have mean 1 in memory)."""
    full = Units(U, Z, w, w * y, w**2)
    folds, groups = (), None
    if splits:
        folds = tuple((full.take(train), full.take(test)) for train, test in splits)
        _, group = np.unique(U, axis=0, return_inverse=True)
        group = group.reshape(-1)
        groups = np.concatenate([group[test] for _, test in splits])
    base_rate = float(full.v.sum() / full.w.sum())
    return LogisticData(full, folds, base_rate, float(w.sum()) * unit, groups)
