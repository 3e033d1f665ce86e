"""The folds of every Bernstein model's cross-validation: one :class:`FoldRule` per fit, built
from ``cv`` and ``random_state``, with one seed (:func:`fusion._cv.fold_seed`).

An int ``cv`` gives every row a seeded 64-bit content key: binary rows their normalized scores
and label (:func:`fusion._cv.content_keys`), multi-class rows their rounded log-probabilities
and class (:func:`pair_keys`). The same rule serves rows, cells, dask blocks and the (row,
class) pairs of multi-class scores:

- binary rows and cells in memory: the keys are dealt per class
  (:func:`fusion._cv.deal_folds`), stratified folds also on small samples;
- on dask (cells, the rank-only model's blocks) and for multi-class rows everywhere: a row's
  fold is its key modulo the number of folds, which no block's neighbours and no chunking
  change. An in-memory binary fit given ``cv=HashFolds(k, random_state=r)``
  (:class:`fusion._cv.HashFolds`) sees the folds of a dask fit with ``cv=k`` and
  ``random_state=r``; a multi-class fit sees them with an int ``cv``.

Multi-class rows are not dealt per class: folds with every class's exact share in every
training and test set hide the sampling noise of the class frequencies, which the class
biases of the class-shared model fit and their ridge (``bias_penalty``) must guard against.
Measured (issue 27, benchmarks/RESULTS.md "One fold rule"): dealt per class, the ridge chosen
for a CIFAR-100 ResNet-110 (50 rows per class) fell from 0.01 to 1e-3 on every fold seed
tried, 0.003 worse in test log-loss, and the synthetic C = 1,000 cell lost 0.0024 in log-loss
on all three seeds. The multi-class sample (``sample < 1``) is drawn by another part of the
same key. A splitter or a list of ``(train, test)`` pairs is used as given (fits on cells or
pairs need test sets that partition the rows).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from .._cv import (
    HashFolds,
    content_keys,
    cv_splits,
    deal_folds,
    fold_ids,
    fold_seed,
    splits_from_folds,
)
from .._warn import caller_level
from ..ecdf.sketch import GOLDEN, mix64

__all__ = ["pair_keys", "in_sample", "by_content", "OUTSIDE", "Folds", "FoldRule"]

#: The fold of a row outside the cross-validation's sample (trained on by the final fit only).
OUTSIDE = -2
#: Log-probabilities below this count as equal, and the others are rounded to multiples of
#: :data:`FOLD_GRID`, in the content key of a multi-class row (:func:`pair_keys`).
FOLD_FLOOR = -30.0
FOLD_GRID = 1.0 / 64.0


def pair_keys(Z: np.ndarray, index: np.ndarray, seed: int) -> np.ndarray:
    """The content key (``uint64``) of every multi-class row: a seeded hash of the scorers'
    log-probabilities ``Z`` (M, r, C) and the row's class index.

    A row's key depends on nothing but the row and ``seed``: identical rows share it (a
    repeated row is a doubled weight), and neither the order nor the chunking of the rows
    changes it. The content hashed is every score's log-probability
    (:func:`fusion.bernstein.scale.log_probabilities`, one scorer's in every ``Z[m]``)
    clipped at :data:`FOLD_FLOOR` and rounded to :data:`FOLD_GRID`: the same for a
    network's logits, log-probabilities or probabilities (their log-probabilities differ by
    rounding errors, far below the grid) and for a constant added to a row of logits; a
    probability that underflowed to 0 counts as any other below ``exp(FOLD_FLOOR)``. The
    label enters through its class's log-probabilities, and the classes through a sum, so
    the order of the class columns does not matter either.
    """
    from .hashing import pair_key_rows  # numba: imported by the first fit that needs it

    M, r, C = Z.shape
    out = np.empty(r, dtype=np.uint64)
    salt = (np.arange(1, M + 1, dtype=np.uint64) + np.uint64(seed) * np.uint64(M + 1)) * GOLDEN
    if Z.dtype not in (np.float32, np.float64):
        Z = Z.astype(np.float64)
    pair_key_rows(Z, np.asarray(index, dtype=np.intp), salt, FOLD_FLOOR, FOLD_GRID, out)
    return out


def in_sample(keys: np.ndarray, sample: float) -> np.ndarray:
    """Whether each row with content ``keys`` is in the cross-validation's sample of about
    the share ``sample`` (another part of the key than the fold's, so the folds within the
    sample stay uniform)."""
    if sample >= 1.0:
        return np.ones(keys.shape[0], dtype=bool)
    cut = np.uint64(min(int(sample * 2.0**64), 2**64 - 1))
    with np.errstate(over="ignore"):
        return mix64(keys + GOLDEN) < cut


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


def by_content(cv) -> bool:
    """Whether ``cv`` assigns the folds by content: an int or a ``HashFolds``."""
    return isinstance(cv, HashFolds) or (isinstance(cv, Integral) and not isinstance(cv, bool))


@dataclass(frozen=True, eq=False)
class FoldRule:
    """How one fit deals its folds: ``cv`` and ``random_state`` of the estimator, the seed
    drawn once (from a :class:`~fusion._cv.HashFolds`'s own ``random_state`` when ``cv``
    is one), and ``kept`` (which of the caller's rows are fitted: user-given index pairs
    refer to the caller's rows)."""

    cv: object
    random_state: object
    seed: int
    kept: np.ndarray | None = None

    @classmethod
    def of(cls, cv, random_state, kept: np.ndarray | None = None) -> FoldRule:
        own = cv.random_state if isinstance(cv, HashFolds) else random_state
        return cls(cv, random_state, fold_seed(own), kept)

    @property
    def content_assigned(self) -> bool:
        """Whether the folds are assigned by content (:func:`by_content`)."""
        return by_content(self.cv)

    @property
    def n_folds(self) -> int:
        """The number of folds of a content-assigned ``cv``."""
        return self.cv.n_splits if isinstance(self.cv, HashFolds) else int(self.cv)

    def _check_rows(self, n: int) -> None:
        """Refuse fewer rows than content-assigned folds."""
        if n < self.n_folds:
            raise ValueError(f"cv={self.cv} folds need at least {self.n_folds} rows, got {n}.")

    def _assign(self, keys: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Every binary row's fold in memory from its content key: dealt per class for an
        int ``cv``, the key modulo the folds for a ``HashFolds`` (as on dask)."""
        if isinstance(self.cv, HashFolds):
            return self.hashed(keys)
        return deal_folds(keys, labels, self.n_folds)

    def hashed(self, keys: np.ndarray) -> np.ndarray:
        """The folds of rows with content ``keys`` on dask: the key modulo the folds."""
        return (keys % np.uint64(self.n_folds)).astype(np.int64)

    def keys(self, U: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The content keys of binary rows: normalized scores ``U`` and labels ``y``."""
        return content_keys(U, y, self.seed)

    def row_splits(self, U: np.ndarray, y: np.ndarray) -> list:
        """``(train, test)`` pairs over rows with normalized scores ``U`` and labels ``y``
        (by content for an int ``cv``)."""
        if self.content_assigned:
            self._check_rows(U.shape[0])
            return splits_from_folds(self._assign(self.keys(U, y), y), self.n_folds)
        return cv_splits(self.cv, y, self.random_state, kept=self.kept)

    def rows(self, U: np.ndarray, y: np.ndarray) -> Folds:
        """The folds of a fit on rows or on cells (which only reads ``fold_of``): for cells,
        the given splits must partition the rows."""
        splits = self.row_splits(U, y)
        return Folds(splits, fold_ids(splits, U.shape[0]), len(splits))

    def cells(self, U: np.ndarray, y: np.ndarray) -> Folds:
        """The folds of a fit on cells: those of the rows, whose test sets must partition
        the rows."""
        folds = self.rows(U, y)
        if folds.fold_of is None:
            raise ValueError(
                "a fit on cells (bins) needs cross-validation test sets that partition the "
                "rows, each training set the rest (K-fold); pass such a cv, an int, or "
                "bins=None to fit on the rows."
            )
        return Folds(None, folds.fold_of, folds.n_folds)

    def check_dask(self, n: int) -> int:
        """The number of folds of a dask fit of ``n`` rows (content-assigned folds only)."""
        if not self.content_assigned:
            raise ValueError(
                "a dask fit assigns its folds by content: pass an int cv (or a HashFolds)."
            )
        self._check_rows(n)
        return self.n_folds

    def pairs(self, Z: np.ndarray, index: np.ndarray, sample: float = 1.0) -> np.ndarray:
        """The folds of multi-class rows of log-probabilities ``Z`` (M, r, C) with class
        indices ``index`` (a dask block, or all rows in memory): their :func:`pair_keys`
        modulo the folds (-2, :data:`OUTSIDE`, outside a sample of about the share
        ``sample``)."""
        keys = pair_keys(Z, index, self.seed)
        return self._pair_fold(keys, keys, sample)

    def _pair_fold(self, keys: np.ndarray, dealt: np.ndarray, sample: float) -> np.ndarray:
        """Folds from the ``dealt`` keys, the sample from the content ``keys``."""
        fold = self.hashed(dealt)
        fold[~in_sample(keys, sample)] = OUTSIDE
        return fold

    def _spread_repeats(self, keys: np.ndarray, fold: np.ndarray, sample: float) -> np.ndarray:
        """Folds where some fold holds no row because the rows repeat a few contents (one
        network that gives hard labels: as the key does not depend on the order of the
        classes, every row is one of two contents, its label the network's or not): the
        ``j``-th repeat of a content (in row order) gets its key salted by ``j``, so repeats
        are dealt over the folds; first occurrences keep their folds. Said with a warning; a
        dask fit, which cannot count repeats across blocks, keeps the content folds."""
        order = np.argsort(keys, kind="stable")
        ranked = keys[order]
        starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
        if starts.size == keys.shape[0]:  # no repeat: nothing to spread
            return fold
        repeat = np.empty(keys.shape[0], dtype=np.uint64)
        repeat[order] = (
            np.arange(keys.shape[0]) - np.repeat(starts, np.diff(np.r_[starts, keys.shape[0]]))
        ).astype(np.uint64)
        with np.errstate(over="ignore"):
            dealt = np.where(repeat > 0, mix64(keys ^ mix64(repeat * GOLDEN)), keys)
        warnings.warn(
            f"the rows hold {starts.size} distinct contents (scores and label) for "
            f"{self.n_folds} content-assigned folds, too few to fill them: repeated rows are "
            "dealt to folds by their order of occurrence (as from a network that gives hard "
            "labels).",
            UserWarning,
            stacklevel=caller_level(),
        )
        return self._pair_fold(keys, dealt, sample)

    def pair_folds(self, Z: np.ndarray, index: np.ndarray, sample: float) -> tuple[np.ndarray, int]:
        """Test fold of every multi-class row in memory (log-probabilities ``Z`` (M, r, C);
        -1: in no test fold, -2: outside the cross-validation's sample) and the number of
        folds: for an int ``cv`` those of a dask fit (:meth:`pairs`) unless their repeats
        leave a fold without rows (:meth:`_spread_repeats`; every row the same scores is
        refused), else from the given splits, whose test sets must not overlap."""
        r = Z.shape[1]
        if self.content_assigned:
            self._check_rows(r)
            keys = pair_keys(Z, index, self.seed)
            fold = self._pair_fold(keys, keys, sample)
            if np.unique(fold[fold >= 0]).size < self.n_folds:
                if bool(np.all(Z == Z[:, :1])):
                    raise ValueError(
                        "every row has the same scores: cross-validation cannot compare "
                        "penalties on them (the fit could only follow the labels' "
                        "frequencies). Check the scores, or fix lam, bias_penalty and "
                        "top_label_penalty to fit without cross-validation."
                    )
                fold = self._spread_repeats(keys, fold, sample)
            return fold, self.n_folds
        splits = cv_splits(self.cv, index, self.random_state, kept=self.kept)
        fold = np.full(r, -1, dtype=np.int64)
        for f, (train, test) in enumerate(splits):
            if np.any(fold[test] >= 0) or train.shape[0] + test.shape[0] != r:
                raise ValueError(
                    "the class-shared multi-class model needs cross-validation splits whose "
                    "test sets do not overlap and whose training sets are the other rows "
                    "(K-fold); pass such a cv or an int."
                )
            fold[test] = f
        return fold, len(splits)
