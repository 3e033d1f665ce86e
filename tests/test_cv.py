"""fusion/_cv.py: content folds, splits from ``cv``, the one-standard-error rule."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import KFold, ShuffleSplit

from fusion._cv import (
    HashFolds,
    content_folds,
    content_keys,
    cv_splits,
    deal_folds,
    edge_matters,
    fold_ids,
    one_se_index,
    one_se_pick,
    paired_se,
    path_settled,
)


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(12, 80),
    k=st.integers(2, 5),
    seed=st.integers(0, 1000),
    ties=st.booleans(),
)
def test_content_folds_are_stratified_order_free_and_keep_equal_rows_together(n, k, seed, ties):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 4 if ties else 10**6, size=(n, 2)).astype(float)
    y = rng.integers(0, 2, n).astype(float)
    fold = content_folds(keys, y, k, random_state=3)
    assert fold.min() >= 0 and fold.max() < k
    # equal rows (content and label) share a fold
    for i in range(n):
        same = np.all(keys == keys[i], axis=1) & (y == y[i])
        assert np.all(fold[same] == fold[i])
    # a permutation of the rows permutes the folds with them
    perm = rng.permutation(n)
    np.testing.assert_array_equal(content_folds(keys[perm], y[perm], k, random_state=3), fold[perm])
    # each class's distinct rows are dealt evenly
    if not ties:
        for c in (0.0, 1.0):
            counts = np.bincount(fold[y == c], minlength=k)
            assert counts.max() - counts.min() <= 1


def test_dealt_folds_do_not_depend_on_the_names_of_the_classes():
    rng = np.random.default_rng(2)
    keys = rng.integers(0, 2**63, size=50, dtype=np.int64).astype(np.uint64)
    y = rng.integers(0, 4, 50)
    fold = deal_folds(keys, y, 3)
    np.testing.assert_array_equal(deal_folds(keys, np.array([2, 0, 3, 1])[y], 3), fold)
    assert np.ptp(np.bincount(fold, minlength=3)) <= 1  # all rows spread evenly too


def test_hash_folds_are_the_content_key_modulo_the_folds():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2))
    y = rng.integers(0, 2, 300).astype(float)
    splits = list(HashFolds(4, random_state=5).split(X, y))
    fold = (content_keys(X, y, 5) % np.uint64(4)).astype(int)
    for f, (train, test) in enumerate(splits):
        np.testing.assert_array_equal(test, np.flatnonzero(fold == f))
        np.testing.assert_array_equal(train, np.flatnonzero(fold != f))
    # inside a fusion estimator the content is the given keys
    by_cv = cv_splits(HashFolds(4, random_state=5), y, 0, keys=X)
    np.testing.assert_array_equal(by_cv[1][1], splits[1][1])


def test_repeating_a_row_gives_the_same_folds_as_doubling_its_weight():
    rng = np.random.default_rng(1)
    keys = rng.normal(size=(30, 2))
    y = rng.integers(0, 2, 30).astype(float)
    fold = content_folds(keys, y, 3, random_state=0)
    rep = np.repeat(np.arange(30), rng.integers(1, 4, 30))
    fold_rep = content_folds(keys[rep], y[rep], 3, random_state=0)
    np.testing.assert_array_equal(fold_rep, fold[rep])


def test_cv_splits_accepts_an_int_a_splitter_and_index_pairs():
    y = np.tile([0.0, 1.0], 20)
    keys = np.arange(40.0)[:, None]
    by_int = cv_splits(4, y, 0, keys=keys)
    assert len(by_int) == 4 and fold_ids(by_int, 40) is not None
    by_splitter = cv_splits(KFold(5), y, None)
    assert len(by_splitter) == 5
    np.testing.assert_array_equal(by_splitter[0][1], np.arange(8))
    pairs = [(np.arange(10, 40), np.arange(10)), (np.arange(0, 30), np.arange(30, 40))]
    given_pairs = cv_splits(pairs, y, None)
    np.testing.assert_array_equal(given_pairs[1][1], np.arange(30, 40))
    assert fold_ids(given_pairs, 40) is None  # not a partition
    shuffled = cv_splits(ShuffleSplit(3, test_size=0.25, random_state=0), y, None)
    assert len(shuffled) == 3 and fold_ids(shuffled, 40) is None


def test_cv_index_pairs_refer_to_the_users_rows_when_zero_weight_rows_are_dropped():
    y = np.tile([0.0, 1.0], 5)  # the 10 kept rows
    kept = np.ones(12, dtype=bool)
    kept[[3, 7]] = False  # user rows 3 and 7 have zero weight
    pairs = [(np.arange(6, 12), np.arange(6)), (np.arange(6), np.arange(6, 12))]
    (tr0, te0), (tr1, te1) = cv_splits(pairs, y, None, kept=kept)
    # user rows 0-5 minus row 3 -> kept positions 0..4; rows 6-11 minus 7 -> 5..9
    np.testing.assert_array_equal(te0, [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(te1, [5, 6, 7, 8, 9])
    np.testing.assert_array_equal(tr0, te1)


@pytest.mark.parametrize(
    ("cv", "match"),
    [
        (1, "at least 2 folds"),
        ([(np.array([True, False]), np.array([0]))], "index arrays, not boolean masks"),
        ([(np.arange(3), np.array([99]))], "outside the 10 rows"),
        ("five", "an int, a scikit-learn splitter"),
        ([(np.arange(10), np.array([], dtype=int))], "no split with rows on both sides"),
    ],
)
def test_bad_cv_values_are_clear_errors(cv, match):
    with pytest.raises(ValueError, match=match):
        cv_splits(cv, np.tile([0.0, 1.0], 5), 0)


def test_paired_se_is_the_standard_error_of_the_mean_difference():
    rng = np.random.default_rng(0)
    held = rng.random((3, 400))
    w = np.ones(400)
    d = held[0] - held[2]
    se = paired_se(held, w, 2)
    assert se[2] == 0.0
    assert se[0] == pytest.approx(np.std(d, ddof=1) / np.sqrt(400), rel=1e-9)
    # integer weights are repeated units: the same excess, and the n_eff of the weights
    w2 = rng.integers(1, 4, 400).astype(float)
    rep = np.repeat(held, w2.astype(int), axis=1)
    assert (held @ w2 / w2.sum())[0] == pytest.approx(rep.mean(1)[0])
    assert paired_se(held, w2, 2)[0] > 0


def test_one_se_rule_takes_the_most_penalized_candidate_within_one_se():
    mean = np.array([1.00, 0.95, 0.90, 0.91])
    se = np.array([0.05, 0.06, 0.0, 0.02])
    assert one_se_pick(mean, se) == 1  # 0.95 - 0.90 <= 0.06; 1.00 - 0.90 > 0.05
    assert one_se_pick(mean, np.zeros(4)) == 2  # no slack: the minimum
    assert one_se_pick(mean, se, preference=lambda i: -i) == 3  # the last within
    assert one_se_pick(mean, se, factor=2.0) == 0
    # from per-unit losses: a clearly worse first candidate is skipped, a tie is taken
    rng = np.random.default_rng(1)
    base = rng.random(500)
    held = np.vstack([base + 0.2, base + 1e-4 * rng.normal(size=500), base])
    assert one_se_index(held, np.ones(500)) == 1


def _path(last_gain_in_adjacent_se: float, seed: int = 0):
    """Held-out losses of 6 candidates along a grid, the last one the edge: candidate ``k``
    moves every unit's loss by ``(2^(5 - k) - 1) 0.02 e_unit`` (neighbours at the flat end
    give nearly the same predictions, distant ones do not, as along a penalty path) and the
    mean by a falling curve whose last step is ``last_gain_in_adjacent_se`` standard errors
    of the neighbours' paired difference."""
    rng = np.random.default_rng(seed)
    n = 4000
    base = rng.exponential(0.5, size=n)
    e = rng.normal(size=n)
    e -= e.mean()
    step = 0.02 * e.std() / np.sqrt(n)  # the paired standard error of the last two
    drop = np.array([0.0, 0.004, 0.006, 0.007, 0.0075, 0.0075 + last_gain_in_adjacent_se * step])
    held = np.stack([base + (2.0 ** (5 - k) - 1) * 0.02 * e - drop[k] for k in range(6)])
    w = np.ones(n)
    return held @ w / n, paired_se(held, w, 5)


def test_a_flat_tail_at_the_edge_does_not_matter():
    # the last step beats its neighbour significantly (1.3 of the neighbours' own standard
    # error, as in issue 28), but by a sliver of what the grid's candidates differ by
    mean, se = _path(1.3)
    assert mean[4] - mean[5] > se[4]
    assert not edge_matters(mean, se, 5, 4)


def test_a_curve_still_falling_at_the_edge_matters():
    mean, se = _path(15.0)
    assert edge_matters(mean, se, 5, 4)


def test_an_edge_no_better_than_its_neighbour_does_not_matter_and_a_missing_one_does():
    mean, se = _path(-2.0)
    assert not edge_matters(mean, se, 5, 4)
    mean[4] = np.nan  # the path stopped before the neighbour
    assert edge_matters(mean, se, 5, 4)


@pytest.mark.parametrize(
    ("mean", "se", "settled"),
    [
        ([1.0, 1.0, 1.0, 1.0], [0.0, 0.01, 0.01, 0.01], False),  # flat: may still fall
        ([1.0, 0.9, 0.95], [0.01, 0.0, 0.01], True),  # a clear rise ends the path at once
        ([1.0, 0.9, 0.902], [0.01, 0.0, 0.001], False),  # two standard errors: wait
        ([1.0, 0.9, 0.902, 0.903], [0.01, 0.0, 0.001, 0.002], True),  # twice beyond one
        ([1.0, 0.9, 0.95, 0.85], [0.01, 0.0, 0.01, 0.01], False),  # a new minimum: go on
        # rises of a few 1e-5 are flat however small their standard errors
        ([1.0, 1.00003, 1.00004], [0.0, 1e-7, 1e-7], False),
        ([0.3, 0.30002, 0.30003], [0.0, 1e-8, 1e-8], False),  # a binary log-loss's scale
        ([0.3, 0.3001, 0.3002], [0.0, 1e-8, 1e-8], True),  # beyond FLAT: a rise
    ],
)
def test_a_penalty_path_settles_on_a_clear_rise_never_on_a_flat_stretch(mean, se, settled):
    assert path_settled(np.array(mean), np.array(se), patience=2) is settled


def test_the_binary_path_stops_where_the_rule_says(monkeypatch):
    from fusion import BernsteinFusion
    from fusion.bernstein.binary import logistic

    calls = []

    def spy(mean, se, patience):
        out = path_settled(mean, se, patience)
        calls.append((np.array(mean), out))
        return out

    monkeypatch.setattr(logistic, "path_settled", spy)
    rng = np.random.default_rng(0)
    S = rng.random((600, 2))
    y = (rng.random(600) < S.mean(axis=1)).astype(int)
    BernsteinFusion().fit(S, y)
    assert calls  # the paths asked the rule
    # a path's losses so far grow by one penalty per call; after "settled" it asks no more
    # (a call that extends those losses would be the same path going on)
    for (a, settled), (b, _) in zip(calls, calls[1:], strict=False):
        extends = b.shape[0] > a.shape[0] and np.array_equal(b[: a.shape[0]], a)
        assert not (settled and extends)
    assert any(settled for _, settled in calls)  # and some path did stop early here


def test_one_se_pick_passes_over_candidates_without_a_finite_mean():
    from fusion._cv import one_se_index, one_se_pick

    assert one_se_pick(np.array([np.nan, 1.0, 0.9]), np.array([0.0, 0.05, 0.0])) == 2
    assert one_se_pick(np.array([np.nan, 1.0, 0.97]), np.array([0.0, 0.05, 0.0])) == 1
    assert one_se_pick(np.array([np.nan, np.inf]), np.zeros(2)) == 0
    held = np.array([[np.nan, 1.0, 1.0], [0.5, 0.6, 0.7], [0.9, 0.9, 0.9]])
    assert one_se_index(held, np.ones(3)) == 1
