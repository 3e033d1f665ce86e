"""The fold rule of the Bernstein models (fusion/bernstein/folds.py)."""

import numpy as np
from scipy.special import log_softmax, softmax

from fusion.bernstein.folds import FoldRule, hash_folds, row_folds


def _rows(n, seed):
    rng = np.random.default_rng(seed)
    U = rng.random((n, 2))
    y = (rng.random(n) < U.mean(1)).astype(float)
    return U, y


def _scores(n=300, M=2, C=5, seed=0):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(n, M, C)) * 2
    return softmax(L, axis=2), rng.integers(0, C, n)


def test_hash_folds_depend_on_the_row_only():
    U, y = _rows(2000, 3)
    f = hash_folds(U, y, 5, seed=7)
    perm = np.random.default_rng(4).permutation(2000)
    np.testing.assert_array_equal(hash_folds(U[perm], y[perm], 5, seed=7), f[perm])
    assert not np.array_equal(hash_folds(U, y, 5, seed=8), f)
    counts = np.bincount(f, minlength=5)
    assert counts.min() > 300  # about 400 each


def test_blockwise_folds_are_stratified_and_seeded():
    y = (np.random.default_rng(1).random(1003) < 0.3).astype(float)
    rule = FoldRule.of(5, 7)
    fold = rule.block_folds(y, 2)
    for c in (0.0, 1.0):
        counts = np.bincount(fold[y == c], minlength=5)
        assert counts.max() - counts.min() <= 1
    np.testing.assert_array_equal(fold, FoldRule.of(5, 7).block_folds(y, 2))
    assert not np.array_equal(fold, rule.block_folds(y, 3))


def test_the_seed_is_drawn_once_per_rule():
    rule = FoldRule.of(5, np.random.RandomState(0))
    U, y = _rows(500, 0)
    np.testing.assert_array_equal(rule.hashed(U, y), rule.hashed(U, y))
    assert FoldRule.of(5, 3).seed == 3


def test_multiclass_folds_depend_only_on_each_row_content():
    S, y = _scores(400, seed=2)
    f = row_folds(S, y, 5, seed=0)
    assert set(np.unique(f)) == set(range(5))
    perm = np.random.default_rng(3).permutation(400)
    np.testing.assert_array_equal(row_folds(S[perm], y[perm], 5, 0), f[perm])
    halves = np.r_[row_folds(S[:123], y[:123], 5, 0), row_folds(S[123:], y[123:], 5, 0)]
    np.testing.assert_array_equal(halves, f)
    twice = np.concatenate([S, S[:10]])
    g = row_folds(twice, np.r_[y, y[:10]], 5, 0)
    np.testing.assert_array_equal(g[400:], f[:10])  # a repeated row shares its fold
    assert not np.array_equal(row_folds(S, y, 5, seed=1), f)  # the seed matters
    # the label is part of the content
    assert not np.array_equal(row_folds(S, (y + 1) % 5, 5, 0), f)


def test_multiclass_folds_are_the_same_for_logits_log_probabilities_and_probabilities():
    rng = np.random.default_rng(4)
    L = rng.normal(size=(2_000, 2, 10)) * 4
    y = rng.integers(0, 10, 2_000)
    f = row_folds(L, y, 5, 0, scales=["logit"] * 2)
    shifted = L + rng.normal(size=(2_000, 2, 1)) * 50  # a constant added to every row
    np.testing.assert_array_equal(row_folds(shifted, y, 5, 0, scales=["logit"] * 2), f)
    logp = log_softmax(L, axis=2)
    np.testing.assert_array_equal(row_folds(logp, y, 5, 0, scales=["logit"] * 2), f)
    P = softmax(L, axis=2)
    np.testing.assert_array_equal(row_folds(P, y, 5, 0, scales=["probability"] * 2), f)
    mixed = np.stack([L[:, 0], P[:, 1]], axis=1)
    np.testing.assert_array_equal(row_folds(mixed, y, 5, 0, scales=["logit", "probability"]), f)
