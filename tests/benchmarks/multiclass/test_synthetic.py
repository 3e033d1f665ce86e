"""Tests of benchmarks/multiclass_lib/synthetic.py: the synthetic ensembles' generator."""

from __future__ import annotations

import numpy as np
import pytest
from multiclass_lib.synthetic import (
    HELDOUT_SETUPS,
    SYNTHETIC_SETUPS,
    Member,
    SyntheticSetup,
    generate,
    member_output,
    member_probabilities,
    speed_setup,
)
from scipy.special import softmax

MEMBERS = (
    Member("hot", 0.5, 0.5, 0.3, ("float32",)),
    Member("forest", 1.0, 0.5, 0.2, ("forest",)),
    Member("smoothed", 1.5, 0.5, 0.2, ("smooth",)),
    Member("logits", 1.0, 0.8, 0.3, ("logits",)),
)
SMALL = SyntheticSetup("small", 20, MEMBERS, (300, 600), 900, (0,), trees=50)


def test_shapes_labels_and_truth():
    ss = generate(SMALL, 0)
    assert ss.S_pool.shape == (600, 4, 20) and ss.S_test.shape == (900, 4, 20)
    assert ss.S_pool.dtype == np.float64  # not every member is float32
    np.testing.assert_array_equal(ss.classes, np.arange(20))
    assert ss.y_pool.min() >= 0 and ss.y_test.max() <= 19
    assert ss.truth_test.shape == (900, 20)
    np.testing.assert_allclose(ss.truth_test.sum(axis=1), 1.0, atol=1e-12)
    # every member's probabilities are distributions (float32 rounding aside)
    np.testing.assert_allclose(ss.S_test.sum(axis=2), 1.0, atol=1e-5)
    # nested fusion samples: the first n rows of the pool
    S, y = ss.fusion_sample(300)
    np.testing.assert_array_equal(S, ss.S_pool[:300])
    np.testing.assert_array_equal(y, ss.y_pool[:300])
    info = ss.info
    assert len(info["scorer_accuracy"]) == 4 and 0.3 < info["truth_accuracy"] < 0.95


def test_labels_are_drawn_from_the_truth():
    setup = SyntheticSetup("many", 5, MEMBERS[:1], (100,), 40_000, (0,))
    ss = generate(setup, 3)
    # calibration of the truth: mean predicted probability of each class = its frequency
    freq = np.bincount(ss.y_test, minlength=5) / ss.y_test.size
    np.testing.assert_allclose(ss.truth_test.mean(axis=0), freq, atol=0.01)
    # the top class of the truth is right as often as its mean top probability says
    top = ss.truth_test.max(axis=1).mean()
    acc = np.mean(ss.truth_test.argmax(axis=1) == ss.y_test)
    assert abs(top - acc) < 0.015
    # the truth beats every (noisy) member in log-loss
    assert ss.info["truth_log_loss"] < min(ss.info["scorer_log_loss"])


def test_distortions():
    ss = generate(SMALL, 1)
    S = ss.S_test
    hot, forest, smoothed = S[:, 0], S[:, 1], S[:, 2]
    # float32 outputs: exactly representable in float32
    np.testing.assert_array_equal(hot.astype(np.float32).astype(float), hot)
    # forest: multiples of 1/50, mostly exact zeros
    np.testing.assert_allclose(forest * 50, np.round(forest * 50), atol=1e-9)
    assert np.mean(forest == 0) > 0.5
    # label smoothing: every probability at least 0.1 / C
    assert smoothed.min() >= 0.1 / 20 - 1e-15
    # the other members have no exact zeros
    assert np.all(hot > 0) and np.all(S[:, 3] > 0)


def test_a_member_that_outputs_logits():
    member = Member("logits", 1.0, 0.0, 0.0, ("logits",))
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(50, 7))
    out = member_output(member, logits, np.random.default_rng(1))
    assert not np.allclose(out.sum(axis=1), 1.0)  # logits, shifted per row
    np.testing.assert_allclose(member_probabilities(member, out), softmax(logits, axis=1))
    with pytest.raises(ValueError, match="logits"):
        Member("bad", output=("logits", "smooth"))
    with pytest.raises(ValueError, match="unknown distortion"):
        Member("bad", output=("blur",))


def test_all_float32_members_give_float32_scores_and_same_seed_same_data():
    setup = speed_setup(30, 2, 200)
    a, b = generate(setup, 0), generate(setup, 0)
    assert a.S_pool.dtype == np.float32 and a.S_test.shape == (0, 2, 30)
    np.testing.assert_array_equal(a.S_pool, b.S_pool)
    np.testing.assert_array_equal(a.y_pool, b.y_pool)
    assert not np.array_equal(generate(setup, 1).S_pool, a.S_pool)


def test_a_tempered_member_without_noise_is_the_truth_at_another_temperature():
    setup = SyntheticSetup(
        "t", 6, (Member("hot", 0.5, 0.0, 0.0),), (10,), 500, (0,), shared_noise=0.0
    )
    ss = generate(setup, 0)
    L = np.log(ss.S_test[:, 0])
    logits_truth = np.log(ss.truth_test)
    # log p_m = 2 * true logits + a constant per row
    d = L - 2 * logits_truth
    np.testing.assert_allclose(d - d.mean(axis=1, keepdims=True), 0.0, atol=1e-8)


def test_the_configured_sets():
    names = [s.name for s in (*SYNTHETIC_SETUPS, *HELDOUT_SETUPS)]
    assert len(set(names)) == len(names)
    assert {s.C for s in SYNTHETIC_SETUPS} == {10, 100, 1000}
    assert all(s.group == "heldout" for s in HELDOUT_SETUPS)
    assert all(s.M in (3, 4) for s in (*SYNTHETIC_SETUPS, *HELDOUT_SETUPS))
    assert not set(HELDOUT_SETUPS[0].seeds) & set(SYNTHETIC_SETUPS[0].seeds)
    for s in (*SYNTHETIC_SETUPS, *HELDOUT_SETUPS):
        assert s.n_test == (10_000 if s.C == 1000 else 20_000)
