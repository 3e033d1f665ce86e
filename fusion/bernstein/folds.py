"""The folds of every Bernstein model's cross-validation: one :class:`FoldRule` per fit, built
from ``cv`` and ``random_state``, that deals the folds of rows in memory, of cells, of dask
blocks and of the (row, class) pairs of multi-class scores, with one seed.

An int ``cv`` assigns folds by content wherever the data allow it: rows in memory by their
normalized scores and label (:func:`fusion._cv.content_folds`, stratified), cells by a
seeded hash of every row's content (:func:`hash_folds`: the same folds in memory and on
dask), multi-class rows by a hash of their log-probabilities
(:func:`row_folds`). The rank-only model on dask deals
every block's rows per class (:meth:`FoldRule.block_folds`). A splitter or a list of
``(train, test)`` pairs is used as given (fits on cells or pairs need test sets that
partition the rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from .._chunks import by_rows
from .._cv import cv_splits, fold_ids
from ..ecdf.sketch import GOLDEN, mix64
from .scale import log_probabilities

__all__ = ["fold_seed", "hash_folds", "row_folds", "OUTSIDE", "Folds", "FoldRule"]

#: The fold of a row outside the cross-validation's sample (trained on by the final fit only).
OUTSIDE = -2
#: (row, class) pairs per block of multi-class rows hashed at once.
_BLOCK_PAIRS = 1 << 15


def fold_seed(random_state) -> int:
    """An int seed for fold assignments from ``random_state`` (an int is used as is)."""
    rs = random_state
    return int(rs) if isinstance(rs, Integral) else int(check_random_state(rs).randint(2**31))


def hash_folds(U: np.ndarray, y: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """Cross-validation fold of every row from a seeded hash of its normalized scores and
    label.

    The fold of a row depends on nothing but the row (and ``seed``), not on the order or the
    chunking of the rows, so a fit on a dask array and one in memory see the same folds, the
    same cell sums and pick the same penalty. Folds are not stratified exactly, but at the
    sizes where cells are used (tens of thousands of rows and more) their class proportions
    differ by sampling noise only. Identical rows share a fold.
    """

    def folds(U, y):
        with np.errstate(over="ignore"):
            h = np.full(U.shape[0], np.uint64(seed) * GOLDEN + GOLDEN, dtype=np.uint64)
            for col in (*U.T, y):
                h ^= np.ascontiguousarray(col, dtype=np.float64).view(np.uint64)
                h = mix64(h + GOLDEN)
        return (h % np.uint64(n_folds)).astype(np.int64)

    return by_rows(folds, U, y)


#: Log-probabilities below this count as equal, and the others are rounded to multiples of
#: :data:`FOLD_GRID`, in the content that decides a row's fold (:func:`row_folds`).
FOLD_FLOOR = -30.0
FOLD_GRID = 1.0 / 64.0


def row_folds(
    S: np.ndarray,
    index: np.ndarray,
    n_folds: int,
    seed: int,
    sample: float = 1.0,
    scales: Sequence[str] | None = None,
) -> np.ndarray:
    """Fold of every row from a seeded hash of its content (the scorers' log-probabilities
    and its class index); with ``sample < 1``, -2 for the rows outside a sample of about
    that share (drawn by another part of the same hash).

    A row's fold depends on nothing but the row and ``seed``: identical rows share a fold
    (a repeated row is a doubled weight), and neither the order nor the chunking of the rows
    changes it, so a dask fit sees the folds of the in-memory fit. The content hashed is
    every score's log-probability (:func:`log_probabilities`, with ``scales``; default
    probabilities in ``[0, 1]``) clipped at :data:`FOLD_FLOOR` and rounded to
    :data:`FOLD_GRID`: the same for a network's logits, log-probabilities or probabilities
    (their log-probabilities differ by rounding errors, far below the grid) and for a
    constant added to a row of logits; a probability that underflowed to 0 counts as any
    other below ``exp(FOLD_FLOOR)``. The label enters through its class's log-probabilities,
    and the classes through a sum, so the order of the class columns does not matter either.
    """
    r, M, C = S.shape
    if scales is None:
        scales = ["probability"] * M
    out = np.empty(r, dtype=np.int64)
    step = max(1, _BLOCK_PAIRS // max(1, M * C))
    cut = np.uint64(min(int(sample * 2.0**64), 2**64 - 1))
    salt = (np.arange(1, M + 1, dtype=np.uint64) + np.uint64(seed) * np.uint64(M + 1)) * GOLDEN
    with np.errstate(over="ignore"):
        for start in range(0, r, step):
            rows = slice(start, start + step)
            idx = np.asarray(index[rows], dtype=np.intp)
            h = np.zeros(idx.shape[0], dtype=np.uint64)
            label = np.zeros(idx.shape[0], dtype=np.uint64)
            for m in range(M):
                z = log_probabilities(S[rows, m, :], scales[m]).astype(np.float64)
                q = np.rint(np.maximum(z, FOLD_FLOOR) / FOLD_GRID).astype(np.int64).view(np.uint64)
                # a sum over the classes: the same for any order of the columns
                h += mix64(q ^ salt[m]).sum(axis=1, dtype=np.uint64)
                label = mix64(label ^ q[np.arange(idx.shape[0]), idx] ^ salt[m])
            h = mix64(h ^ label)
            fold = (h % np.uint64(n_folds)).astype(np.int64)
            if sample < 1.0:
                fold[mix64(h + GOLDEN) >= cut] = OUTSIDE
            out[rows] = fold
    return out


#: The fold of a row outside the cross-validation's sample (trained on by the final fit only).
OUTSIDE = -2


@dataclass(frozen=True)
class Folds:
    """The folds of a fit in memory: ``(train, test)`` index pairs (None for a fit on cells,
    which only reads ``fold_of``), every row's test fold when the test sets partition the
    rows (else None), and the number of folds."""

    splits: list | None
    fold_of: np.ndarray | None
    n_folds: int

    @property
    def n_train(self) -> int:
        """Rows of the smallest training set."""
        return min(train.shape[0] for train, _ in self.splits)


@dataclass(frozen=True, eq=False)
class FoldRule:
    """How one fit deals its folds: ``cv`` and ``random_state`` of the estimator, the seed
    drawn from it once, and ``kept`` (which of the caller's rows are fitted: user-given
    index pairs refer to the caller's rows)."""

    cv: object
    random_state: object
    seed: int
    kept: np.ndarray | None = None

    @classmethod
    def of(cls, cv, random_state, kept: np.ndarray | None = None) -> FoldRule:
        return cls(cv, random_state, fold_seed(random_state), kept)

    @property
    def is_int(self) -> bool:
        return isinstance(self.cv, Integral) and not isinstance(self.cv, bool)

    def row_splits(self, U: np.ndarray, y: np.ndarray) -> list:
        """``(train, test)`` pairs over rows with normalized scores ``U`` and labels ``y``
        (an int ``cv``: stratified folds by content, :func:`fusion._cv.cv_splits`)."""
        return cv_splits(self.cv, y, self.random_state, kept=self.kept, keys=U)

    def rows(self, U: np.ndarray, y: np.ndarray) -> Folds:
        """The folds of a fit on rows."""
        splits = self.row_splits(U, y)
        return Folds(splits, fold_ids(splits, U.shape[0]), len(splits))

    def cells(self, U: np.ndarray, y: np.ndarray) -> Folds:
        """The folds of a fit on cells: a seeded hash of every row's content for an int
        ``cv`` (the folds of a dask fit), else the given splits, which must partition the
        rows."""
        if self.is_int:
            return Folds(None, hash_folds(U, y, int(self.cv), self.seed), int(self.cv))
        splits = self.row_splits(U, y)
        fold_of = fold_ids(splits, U.shape[0])
        if fold_of is None:
            raise ValueError(
                "a fit on cells (bins) needs cross-validation test sets that partition the "
                "rows, each training set the rest (K-fold); pass such a cv, an int, or "
                "bins=None to fit on the rows."
            )
        return Folds(None, fold_of, len(splits))

    def check_dask(self, n: int) -> int:
        """The number of folds of a dask fit of ``n`` rows (an int ``cv`` only)."""
        if not self.is_int:
            raise ValueError("a dask fit assigns its folds by content: pass an int cv.")
        if n < self.cv:
            raise ValueError(f"cv={self.cv} folds need at least {self.cv} rows, got {n}.")
        return int(self.cv)

    def hashed(self, U: np.ndarray, y: np.ndarray) -> np.ndarray:
        """:func:`hash_folds` of a block of rows (a dask fit on cells)."""
        return hash_folds(U, y, int(self.cv), self.seed)

    def block_folds(self, y01: np.ndarray, block: int) -> np.ndarray:
        """The folds of block ``block`` of a dask rank-only fit: its rows of each class
        shuffled by a generator seeded with ``(seed, block)`` and dealt to the folds in
        turn from a random start (stratified within one row per class and block)."""
        cv = int(self.cv)
        rng = np.random.default_rng([self.seed, block])
        fold = np.empty(y01.shape[0], dtype=np.int64)
        for c in (0.0, 1.0):
            idx = rng.permutation(np.flatnonzero(y01 == c))
            fold[idx] = (np.arange(idx.shape[0]) + rng.integers(cv)) % cv
        return fold

    def pairs(self, S: np.ndarray, index: np.ndarray, scales, sample: float = 1.0) -> np.ndarray:
        """The folds of multi-class rows ``S`` (r, M, C) with class indices ``index``, by a
        seeded hash of their content (:func:`row_folds`; -2 outside a sample of about the
        share ``sample``)."""
        return row_folds(S, index, int(self.cv), self.seed, sample, scales)

    def pair_folds(
        self, S: np.ndarray, index: np.ndarray, scales, sample: float
    ) -> tuple[np.ndarray, int]:
        """Test fold of every fitted multi-class row (-1: in none, -2: outside the
        cross-validation's sample) and the number of folds: by content for an int ``cv``
        (as a dask fit assigns them), else from the given splits, whose test sets must not
        overlap."""
        if self.is_int:
            if S.shape[0] < self.cv:
                raise ValueError(
                    f"cv={self.cv} folds need at least {self.cv} rows, got {S.shape[0]}."
                )
            return self.pairs(S, index, scales, sample), int(self.cv)
        splits = cv_splits(self.cv, index, self.random_state, kept=self.kept)
        fold = np.full(S.shape[0], -1, dtype=np.int64)
        for f, (train, test) in enumerate(splits):
            if np.any(fold[test] >= 0) or train.shape[0] + test.shape[0] != S.shape[0]:
                raise ValueError(
                    "the class-shared multi-class model needs cross-validation splits whose "
                    "test sets do not overlap and whose training sets are the other rows "
                    "(K-fold); pass such a cv or an int."
                )
            fold[test] = f
        return fold, len(splits)
