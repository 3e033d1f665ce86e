"""Tests of fusion/mrmic/splits.py: the cv argument (int, splitter, index pairs)."""

import numpy as np
import pytest
from sklearn.model_selection import KFold, StratifiedKFold

from fusion.mrmic.splits import cv_splits


def data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(n, 2)), (rng.uniform(size=n) < 0.4).astype(float)


def as_sets(splits):
    return [(set(tr.tolist()), set(te.tolist())) for tr, te in splits]


def test_int_gives_shuffled_stratified_folds_covering_every_row_once():
    U, y = data()
    splits = cv_splits(4, U, y, random_state=0)
    tests = np.concatenate([te for _, te in splits])
    np.testing.assert_array_equal(np.sort(tests), np.arange(40))
    for train, test in splits:
        assert set(train) | set(test) == set(range(40)) and not set(train) & set(test)
        assert abs(y[test].mean() - y.mean()) < 0.15  # stratified
    assert as_sets(splits) == as_sets(cv_splits(4, U, y, random_state=0))
    assert as_sets(splits) != as_sets(cv_splits(4, U, y, random_state=1))
    assert len(cv_splits(None, U, y, random_state=0)) == 5


def test_splitter_and_its_index_pairs_agree():
    U, y = data()
    splitter = StratifiedKFold(3, shuffle=True, random_state=2)
    pairs = list(splitter.split(U, y))
    assert as_sets(cv_splits(splitter, U, y, random_state=0)) == as_sets(pairs)
    assert as_sets(cv_splits(pairs, U, y, random_state=0)) == as_sets(pairs)
    masks = [(np.isin(np.arange(40), tr), np.isin(np.arange(40), te)) for tr, te in pairs]
    assert as_sets(cv_splits(masks, U, y, random_state=0)) == as_sets(pairs)


def test_rows_left_out_are_removed_and_the_rest_renumbered():
    U, y = data()
    keep = np.ones(40, dtype=bool)
    keep[[0, 5, 17]] = False
    pairs = list(KFold(4).split(U))
    got = cv_splits(pairs, U, y, random_state=0, keep=keep)
    renumber = np.cumsum(keep) - 1
    for (tr, te), (gtr, gte) in zip(pairs, got, strict=True):
        np.testing.assert_array_equal(gtr, renumber[tr[keep[tr]]])
        np.testing.assert_array_equal(gte, renumber[te[keep[te]]])
    # an int splits the kept rows only: the same folds as if the rows were absent
    assert as_sets(cv_splits(3, U, y, random_state=0, keep=keep)) == as_sets(
        cv_splits(3, U[keep], y[keep], random_state=0)
    )


@pytest.mark.parametrize(
    "cv, match",
    [
        (1, "at least 2 folds"),
        ([], "no \\(train, test\\) split"),
        ([(np.arange(10), np.arange(10, 45))], "out of range"),
        ([(np.arange(40), np.array([], dtype=int))], "empty test side"),
        ([(np.arange(20), np.arange(20, 40), 3)], "iterable of \\(train, test\\)"),
        ([(np.linspace(0, 1, 5), np.arange(5, 10))], "integers"),
    ],
)
def test_bad_cv_is_a_clear_error(cv, match):
    U, y = data()
    with pytest.raises(ValueError, match=match):
        cv_splits(cv, U, y, random_state=0)
