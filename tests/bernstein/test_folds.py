"""The fold rule of the Bernstein models (fusion/bernstein/folds.py)."""

import numpy as np
import pytest
from scipy.special import log_softmax, softmax

from fusion import HashFolds
from fusion._cv import content_keys
from fusion.bernstein.folds import FOLD_FLOOR, FOLD_GRID, OUTSIDE, FoldRule, in_sample, pair_keys
from fusion.bernstein.multiclass.pairs import member_log_probabilities
from fusion.ecdf.sketch import GOLDEN, mix64


def lp(S, scales=None):
    """The scorers' log-probabilities (M, r, C) of multi-class scores ``S`` (r, M, C)."""
    return member_log_probabilities(S, scales or ["probability"] * S.shape[1])


def _rows(n, seed):
    rng = np.random.default_rng(seed)
    U = rng.random((n, 2))
    y = (rng.random(n) < U.mean(1)).astype(float)
    return U, y


def _scores(n=300, M=2, C=5, seed=0):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(n, M, C)) * 2
    return softmax(L, axis=2), rng.integers(0, C, n)


@pytest.mark.parametrize("n", [11, 23, 40])
def test_rows_in_memory_are_stratified_on_small_samples(n):
    U, y = _rows(n, n)
    y[:3] = [0.0, 1.0, 1.0]  # both classes
    fold = FoldRule.of(5, 0).rows(U, y).fold_of
    for c in (0.0, 1.0):
        counts = np.bincount(fold[y == c], minlength=5)
        assert counts.max() - counts.min() <= 1
    counts = np.bincount(fold, minlength=5)
    assert counts.max() - counts.min() <= 1


def test_cells_in_memory_take_the_folds_of_the_rows():
    U, y = _rows(500, 1)
    rule = FoldRule.of(4, 3)
    np.testing.assert_array_equal(rule.cells(U, y).fold_of, rule.rows(U, y).fold_of)


def test_multiclass_rows_in_memory_take_the_folds_of_dask():
    # not dealt per class: the class biases' ridge needs folds whose class frequencies vary
    S, y = _scores(300, C=4, seed=5)
    rule = FoldRule.of(3, 0)
    fold, K = rule.pair_folds(lp(S), y, 1.0)
    assert K == 3
    np.testing.assert_array_equal(fold, rule.pairs(lp(S), y))
    np.testing.assert_array_equal(fold, (pair_keys(lp(S), y, 0) % np.uint64(3)).astype(int))


def test_equal_rows_share_a_fold_and_a_permutation_permutes_the_folds():
    U, y = _rows(300, 2)
    rep = np.repeat(np.arange(300), np.random.default_rng(0).integers(1, 3, 300))
    perm = np.random.default_rng(4).permutation(rep.shape[0])
    rule = FoldRule.of(5, 7)
    fold = rule.rows(U, y).fold_of
    np.testing.assert_array_equal(rule.rows(U[rep][perm], y[rep][perm]).fold_of, fold[rep][perm])
    S, c = _scores(200, seed=3)
    fold, _ = rule.pair_folds(lp(S), c, 1.0)
    got, _ = rule.pair_folds(lp(S[rep[rep < 200]]), c[rep[rep < 200]], 1.0)
    np.testing.assert_array_equal(got, fold[rep[rep < 200]])


def test_the_seed_changes_the_folds_and_is_drawn_once_per_rule():
    U, y = _rows(400, 0)
    assert not np.array_equal(
        FoldRule.of(5, 1).rows(U, y).fold_of, FoldRule.of(5, 2).rows(U, y).fold_of
    )
    rule = FoldRule.of(5, np.random.RandomState(0))
    np.testing.assert_array_equal(rule.rows(U, y).fold_of, rule.rows(U, y).fold_of)
    assert FoldRule.of(5, 3).seed == 3
    # a HashFolds carries its own seed
    assert FoldRule.of(HashFolds(5, random_state=4), 3).seed == 4


def test_dask_folds_are_the_key_modulo_the_folds_whatever_the_blocks():
    U, y = _rows(2000, 3)
    rule = FoldRule.of(5, 7)
    fold = rule.hashed(rule.keys(U, y))
    parts = np.array_split(np.arange(2000), 7)
    blocks = [rule.hashed(rule.keys(U[s], y[s])) for s in parts]
    np.testing.assert_array_equal(np.concatenate(blocks), fold)
    assert np.bincount(fold, minlength=5).min() > 300  # about 400 each
    # an in-memory HashFolds sees them
    same = FoldRule.of(HashFolds(5, random_state=7), 0).rows(U, y).fold_of
    np.testing.assert_array_equal(same, fold)
    S, c = _scores(400, seed=2)
    block = np.concatenate(
        [rule.pairs(lp(S[s]), c[s], 0.5) for s in np.array_split(np.arange(400), 3)]
    )
    hashed, _ = FoldRule.of(HashFolds(5, random_state=7), 0).pair_folds(lp(S), c, 0.5)
    np.testing.assert_array_equal(block, hashed)


def test_the_sample_cut_is_the_same_in_memory_and_on_dask():
    S, c = _scores(2000, seed=8)
    rule = FoldRule.of(5, 0)
    keys = pair_keys(lp(S), c, rule.seed)
    inside = in_sample(keys, 0.3)
    assert 0.25 < inside.mean() < 0.35
    memory, _ = rule.pair_folds(lp(S), c, 0.3)
    dask = rule.pairs(lp(S), c, 0.3)
    np.testing.assert_array_equal(memory == OUTSIDE, ~inside)
    np.testing.assert_array_equal(dask == OUTSIDE, ~inside)
    np.testing.assert_array_equal(memory, dask)


def test_multiclass_keys_depend_only_on_each_row_content():
    S, y = _scores(400, seed=2)
    f = pair_keys(lp(S), y, 0)
    perm = np.random.default_rng(3).permutation(400)
    np.testing.assert_array_equal(pair_keys(lp(S[perm]), y[perm], 0), f[perm])
    halves = np.r_[pair_keys(lp(S[:123]), y[:123], 0), pair_keys(lp(S[123:]), y[123:], 0)]
    np.testing.assert_array_equal(halves, f)
    assert not np.any(pair_keys(lp(S), y, 1) == f)  # the seed matters
    assert not np.any(pair_keys(lp(S), (y + 1) % 5, 0) == f)  # the label is part of the content
    # the order of the class columns does not matter (labels follow their columns)
    order = np.random.default_rng(1).permutation(5)
    np.testing.assert_array_equal(pair_keys(lp(S[:, :, order]), np.argsort(order)[y], 0), f)


def _pair_keys_numpy(Z, index, seed):
    """The keys in NumPy array passes: the reference of the compiled loop."""
    M, r, C = Z.shape
    salt = (np.arange(1, M + 1, dtype=np.uint64) + np.uint64(seed) * np.uint64(M + 1)) * GOLDEN
    h = np.zeros(r, dtype=np.uint64)
    label = np.zeros(r, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for m in range(M):
            z = Z[m].astype(np.float64)
            q = np.rint(np.maximum(z, FOLD_FLOOR) / FOLD_GRID).astype(np.int64).view(np.uint64)
            h += mix64(q ^ salt[m]).sum(axis=1, dtype=np.uint64)
            label = mix64(label ^ q[np.arange(r), index] ^ salt[m])
        return mix64(h ^ label)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", [0, 7, 2**31 - 1])
def test_multiclass_keys_compiled_equal_numpy(dtype, seed):
    rng = np.random.default_rng(seed % 1000)
    Z = (rng.normal(size=(3, 500, 20)) * 20 - 10).astype(dtype)
    Z[0, :10, :5] = -np.inf  # a probability of 0
    Z[1, 5:20] = 0.0
    Z[2, 3, 3] = -0.0  # counts as 0.0
    Z[2, 4, :] = FOLD_FLOOR - FOLD_GRID / 2  # below the floor, and exactly at a half
    index = rng.integers(0, 20, 500)
    keys = pair_keys(Z, index, seed)
    np.testing.assert_array_equal(keys, _pair_keys_numpy(Z, index, seed))
    assert np.unique(keys).size > 490  # no collapse (the equal rows 5..19 may share keys)


def test_multiclass_keys_are_the_same_for_logits_log_probabilities_and_probabilities():
    rng = np.random.default_rng(4)
    L = rng.normal(size=(2_000, 2, 10)) * 4
    y = rng.integers(0, 10, 2_000)
    f = pair_keys(lp(L, ["logit"] * 2), y, 0)
    shifted = L + rng.normal(size=(2_000, 2, 1)) * 50  # a constant added to every row
    np.testing.assert_array_equal(pair_keys(lp(shifted, ["logit"] * 2), y, 0), f)
    logp = log_softmax(L, axis=2)
    np.testing.assert_array_equal(pair_keys(lp(logp, ["logit"] * 2), y, 0), f)
    P = softmax(L, axis=2)
    np.testing.assert_array_equal(pair_keys(lp(P, ["probability"] * 2), y, 0), f)
    mixed = np.stack([L[:, 0], P[:, 1]], axis=1)
    np.testing.assert_array_equal(pair_keys(lp(mixed, ["logit", "probability"]), y, 0), f)


def test_binary_keys_depend_on_the_row_only():
    U, y = _rows(1000, 6)
    U[:10, 0] = 0.0
    k = content_keys(U, y, 2)
    perm = np.random.default_rng(0).permutation(1000)
    np.testing.assert_array_equal(content_keys(U[perm], y[perm], 2), k[perm])
    assert not np.any(content_keys(U, 1 - y, 2) == k)
    np.testing.assert_array_equal(content_keys(np.where(U == 0, -0.0, U), y, 2), k)
