"""Tests of benchmarks/multiclass_lib/data.py: stratified splits, scorer outputs, the cache."""

from __future__ import annotations

import numpy as np
import pytest
from multiclass_lib.data import (
    TRAINED_SETUPS,
    Setup,
    build_scores,
    cached_scores,
    score_key,
    split_rows,
    stratified_order,
)


def toy_data(n: int = 900, seed: int = 0):
    """Three Gaussian classes in 4 dimensions with shares 60 / 30 / 10 %."""
    rng = np.random.default_rng(seed)
    y = rng.choice([3, 7, 11], size=n, p=[0.6, 0.3, 0.1])
    centers = {3: 0.0, 7: 1.0, 11: 2.0}
    X = rng.normal(size=(n, 4)) + np.array([centers[c] for c in y])[:, None]
    return X, y


TOY = Setup("toy", "toy", ("gnb", "gnb"), 150, (60, 200), 300, (0,))


def test_every_window_of_the_order_is_stratified():
    rng = np.random.default_rng(1)
    y = rng.choice(5, size=2000, p=[0.5, 0.2, 0.15, 0.1, 0.05])
    order = stratified_order(y, rng)
    np.testing.assert_array_equal(np.sort(order), np.arange(2000))
    share = np.bincount(y) / y.size
    for start in range(0, 2000, 37):
        for length in (20, 100, 501):
            window = y[order[start : start + length]]
            counts = np.bincount(window, minlength=5)
            assert np.all(np.abs(counts - window.size * share) <= 2.0), (start, length, counts)


def test_split_parts_are_disjoint_stratified_and_sized():
    X, y = toy_data()
    train, pool, test = split_rows(y, TOY, np.random.default_rng(0))
    parts = [*train, pool, test]
    assert [p.size for p in parts] == [150, 150, 200, 300]
    joined = np.concatenate(parts)
    assert np.unique(joined).size == joined.size
    for part in (*train, pool[:60], test):  # every class in every part, even the 10 % one
        assert set(y[part]) == {3, 7, 11}


def test_a_setup_larger_than_the_data_is_refused():
    _, y = toy_data(400)
    with pytest.raises(ValueError, match="needs 800 rows"):
        split_rows(y, TOY, np.random.default_rng(0))


def test_scores_are_class_distributions_in_sorted_label_order():
    X, y = toy_data()
    ss = build_scores(TOY, 0, X, y)
    np.testing.assert_array_equal(ss.classes, [3, 7, 11])
    assert ss.S_pool.shape == (200, 2, 3) and ss.S_test.shape == (300, 2, 3)
    np.testing.assert_allclose(ss.S_pool.sum(axis=2), 1.0, atol=1e-12)
    hit = ss.classes[ss.S_test[:, 0].argmax(axis=1)] == ss.y_test
    assert hit.mean() > 0.6  # columns are not permuted
    assert ss.info["scorer_accuracy"][0] == pytest.approx(hit.mean())
    assert ss.truth_test is None


def test_the_cache_returns_the_same_scores_and_rebuilds_a_damaged_file(tmp_path):
    calls = []

    def loader(name):
        calls.append(name)
        return toy_data()

    first, hit1 = cached_scores(TOY, 0, tmp_path, loader)
    second, hit2 = cached_scores(TOY, 0, tmp_path, loader)
    assert (hit1, hit2) == (False, True) and calls == ["toy"]
    np.testing.assert_array_equal(first.S_test, second.S_test)
    (path,) = tmp_path.glob("toy-seed0-*.npz")
    path.write_bytes(b"not a zip file")
    third, hit3 = cached_scores(TOY, 0, tmp_path, loader)
    assert not hit3 and calls == ["toy", "toy"]
    np.testing.assert_array_equal(first.S_pool, third.S_pool)


def test_the_cache_key_ignores_seeds_and_group_and_sees_the_generated_data():
    other = Setup("toy", "toy", ("gnb", "gnb"), 150, (60, 200), 300, (5, 6), group="heldout")
    assert score_key(TOY, 0) == score_key(other, 0) != score_key(TOY, 1)
    names = {s.name: s for s in TRAINED_SETUPS}
    assert names["classif100"].M == 4 and names["covertype"].n_fuse == (500, 2_000, 5_000)
    changed = Setup(**{**names["classif100"].__dict__, "dataset": "digits"})
    assert score_key(changed, 0) != score_key(names["classif100"], 0)
