"""The (train, test) splits of MR-MIC's cross-validation over ``lam``.

``cv`` is an int (shuffled folds, stratified when both classes have ``cv`` rows, seeded by
``random_state``), a scikit-learn splitter (anything with ``split``), or an iterable of
``(train, test)`` index pairs, as in scikit-learn's ``cross_validate``.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._base import cv_fold_ids

__all__ = ["cv_splits"]


def cv_splits(
    cv, U: np.ndarray, y: np.ndarray, *, random_state, keep: np.ndarray | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(train, test)`` index pairs into the kept rows ``U[keep]``.

    Parameters
    ----------
    cv : int, None, splitter or iterable of (train, test)
        None means 5 folds. Index pairs refer to all rows of ``U`` (kept or not); rows not
        kept are removed from them. An int or a splitter splits the kept rows only, so a row
        left out by ``keep`` (zero weight) does not change the folds of the others.
    U : ndarray of shape (n, M)
    y : ndarray of shape (n,)
    random_state : int, RandomState or None
        Seed of the shuffled folds when ``cv`` is an int.
    keep : ndarray of bool, shape (n,), optional
        Rows taking part (default: all).

    Returns
    -------
    list of (ndarray of int64, ndarray of int64)

    Raises
    ------
    ValueError
        Fewer rows than folds, an index out of range, or a split with an empty side.
    """
    n = y.shape[0]
    keep = np.ones(n, dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    n_kept = int(keep.sum())
    if cv is None:
        cv = 5
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"cv={cv}: cross-validation needs at least 2 folds.")
        fold_of = cv_fold_ids(y[keep], int(cv), random_state)
        splits = [(np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)) for f in range(cv)]
    elif hasattr(cv, "split"):
        splits = [
            (np.asarray(tr, dtype=np.int64), np.asarray(te, dtype=np.int64))
            for tr, te in cv.split(U[keep], y[keep])
        ]
    else:
        position = np.cumsum(keep) - 1  # index of each kept row among the kept rows
        splits = []
        for k, pair in enumerate(cv):
            try:
                train, test = pair
            except (TypeError, ValueError):
                raise ValueError(
                    f"cv must be an int, a splitter or an iterable of (train, test) index "
                    f"pairs; element {k} is {pair!r}."
                ) from None
            train = _check_indices(train, n, k, "train")
            test = _check_indices(test, n, k, "test")
            splits.append((position[train[keep[train]]], position[test[keep[test]]]))
    if not splits:
        raise ValueError("cv gave no (train, test) split.")
    for k, (train, test) in enumerate(splits):
        if train.size == 0 or test.size == 0:
            side = "training" if train.size == 0 else "test"
            raise ValueError(
                f"cv split {k} has an empty {side} side among the {n_kept} rows with positive "
                "weight; every split needs rows on both sides."
            )
    return splits


def _check_indices(a, n: int, k: int, name: str) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype == bool:
        if a.shape != (n,):
            raise ValueError(f"cv split {k}: boolean {name} mask has shape {a.shape}, not ({n},).")
        return np.flatnonzero(a)
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
        raise ValueError(f"cv split {k}: {name} indices must be a 1-D array of integers.")
    a = a.astype(np.int64)
    if a.size and (a.min() < -n or a.max() >= n):
        raise ValueError(f"cv split {k}: {name} index out of range for {n} rows.")
    return a % n
