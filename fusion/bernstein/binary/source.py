"""The source of a binary fit in memory: the prepared rows, which give the default model its
:class:`~fusion.bernstein.binary.data.LogisticData` (rows or cells) and the rank-only
model its least-squares statistics. :mod:`fusion.bernstein.dask.binary` is the same source
over dask blocks."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._lstsq import LeastSquaresStats
from ..folds import FoldRule, Folds
from ..scale import OwnScale
from ..structure import Structure
from .cells import aggregate_cells, cell_edges
from .data import LogisticData, row_data
from .qp import accumulate_gram

__all__ = ["MemoryRows", "GramStats", "gram_stats"]


#: A candidate's least-squares statistics: those of all rows, and every fold's
#: ``(train, test)`` pair (empty without cross-validation).
GramStats = tuple[LeastSquaresStats, list[tuple[LeastSquaresStats, LeastSquaresStats]]]


def gram_stats(folds: list[LeastSquaresStats]) -> GramStats:
    """:data:`GramStats` from every fold's statistics (K-fold: a training fold is the total
    minus the fold)."""
    total = folds[0]
    for f in folds[1:]:
        total = total + f
    return total, [(total - f, f) for f in folds]


class MemoryRows:
    """The rows of a binary fit in memory: normalized scores ``U``, the scores ``S`` (the
    directions applied), labels ``y`` in {0, 1} and weights ``w`` of mean 1, whose canonical
    weight is ``unit`` times theirs."""

    def __init__(self, U, S, y, w, unit: float = 1.0):
        self.U, self.S, self.y, self.w, self.unit = U, S, y, w, unit
        self.n, self.M = U.shape
        self._features = None
        self._folds = {}

    def features(self, scale: OwnScale) -> np.ndarray:
        """The standardized linear features ``z`` of the rows (computed once)."""
        if self._features is None or self._features[0] is not scale:
            self._features = (scale, scale.features(self.U, self.S))
        return self._features[1]

    def folds(self, rule: FoldRule, cells: bool) -> Folds:
        """The cross-validation's folds of a fit on the rows or on cells (dealt once)."""
        key = (id(rule), cells)
        if key not in self._folds:
            folds = rule.cells(self.U, self.y) if cells else rule.rows(self.U, self.y)
            self._folds[key] = (rule, folds)  # the rule kept alive: its id stays its own
        return self._folds[key][1]

    def units(self, Z, edges=None, folds: Folds | None = None, counts=None) -> LogisticData:
        """The rows with linear features ``Z``, or their cells (``edges``, see
        :func:`~fusion.bernstein.binary.cells.cell_edges`), with ``folds`` (None: no
        cross-validation); ``counts``: a resample's row counts."""
        # a resample's weights: w * counts, and its positives' (w * counts) * y, the same
        # bits as (w * y) * counts for labels in {0, 1}
        w = self.w if counts is None else self.w * counts
        if edges is None:
            splits = None if folds is None else folds.splits
            return row_data(self.U, Z, self.y, w, splits, self.unit)
        fold_of, n_folds = (None, 0) if folds is None else (folds.fold_of, folds.n_folds)
        return aggregate_cells(self.U, Z, self.y, w, edges, fold_of, n_folds).data(self.unit)

    def logistic_data(self, scale: OwnScale, bins: int | None, rule: FoldRule | None):
        """The default model's data: the rows, or their cells (``bins`` cuts per axis),
        with the folds of ``rule`` (None: no cross-validation). Returns the data and the
        folds."""
        Z = self.features(scale)
        folds = None if rule is None else self.folds(rule, cells=bins is not None)
        edges = None if bins is None else cell_edges(*scale.feature_range(self.M), bins)
        return self.units(Z, edges, folds), folds

    def n_train(self, rule: FoldRule) -> int:
        """Rows of the smallest training fold of the rank-only model's cross-validation."""
        return self.folds(rule, cells=False).n_train

    def gram(self, rule: FoldRule | None, structures) -> Callable[[Structure], GramStats]:
        """The rank-only model's statistics of every candidate in ``structures``, as a lookup
        by structure (computed when asked, one candidate at a time: only one candidate's
        statistics are held), with the folds of ``rule`` (None: all rows only)."""
        U, y, w = self.U, self.y, self.w
        if rule is None:
            return lambda structure: (accumulate_gram(U, y, w, structure), [])
        folds = self.folds(rule, cells=False)
        if folds.fold_of is not None:  # K-fold: every training fold's statistics are total - fold
            order = np.argsort(folds.fold_of, kind="stable")
            bounds = np.searchsorted(folds.fold_of[order], np.arange(folds.n_folds + 1))
            Uo, yo, wo = U[order], y[order], w[order]

            def stats(structure):
                return gram_stats(
                    [
                        accumulate_gram(Uo[a:b], yo[a:b], wo[a:b], structure)
                        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
                    ]
                )

            return stats

        def stats(structure):
            def gram(rows):
                return accumulate_gram(U[rows], y[rows], w[rows], structure)

            pairs = [(gram(train), gram(test)) for train, test in folds.splits]
            return gram(np.arange(self.n)), pairs

        return stats
