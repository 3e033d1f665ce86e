"""fusion/classifier/directions.py: the direction of each score given the others."""

import numpy as np
import pytest
from scipy.special import expit

from fusion.classifier.directions import (
    conditional_directions,
    conditional_z,
    own_scale_features,
)


def suppressor_scores(n: int, seed: int):
    """Two correlated logit-scale scores; the label's log-odds are ``2 z1 - z2``: the second
    score is positively related to the label on its own, negatively given the first."""
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.8], [0.8, 1.0]], size=n)
    y = (rng.random(n) < expit(2.0 * z[:, 0] - z[:, 1])).astype(int)
    return z, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_score_that_helps_only_against_the_label_given_the_other_is_reversed(seed):
    z, y = suppressor_scores(4000, seed)
    assert np.corrcoef(z[:, 1], y)[0, 1] > 0.1  # marginally it points the usual way
    np.testing.assert_array_equal(conditional_directions(z, y), [True, False])


@pytest.mark.parametrize("seed", [0, 1])
def test_independent_informative_scores_keep_their_direction(seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(3000, 3))
    y = (rng.random(3000) < expit(z @ np.array([1.0, 0.5, 0.8]))).astype(int)
    assert conditional_directions(z, y).all()


def test_probabilities_and_their_logits_give_the_same_directions():
    z, y = suppressor_scores(3000, 3)
    # Probabilities are taken on the logit scale, raw scores as they are: the same features.
    np.testing.assert_allclose(own_scale_features(expit(z)), own_scale_features(z), atol=1e-8)
    np.testing.assert_array_equal(conditional_directions(expit(z), y), [True, False])


def test_unchanged_by_the_unit_and_offset_of_a_raw_score():
    z, y = suppressor_scores(3000, 4)
    scaled = z * np.array([1000.0, 0.01]) + np.array([-5.0, 3.0])
    np.testing.assert_array_equal(conditional_directions(scaled, y), [True, False])


def test_scaling_the_weights_changes_nothing_and_a_zero_weight_is_no_row():
    z, y = suppressor_scores(1500, 5)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=y.shape[0])
    np.testing.assert_allclose(conditional_z(z, y, 7.0 * w), conditional_z(z, y, w), rtol=1e-6)
    w[:100] = 0.0
    np.testing.assert_allclose(
        conditional_z(z, y, w), conditional_z(z[100:], y[100:], w[100:]), rtol=1e-6
    )


def noise_and_redundant_scores(n: int, seed: int):
    """An informative score, pure noise, and two noisy copies of one signal that both
    carry it (log-odds ``0.75 (c1 + c2)``): the last three have no negative effect."""
    rng = np.random.default_rng(seed)
    informative, noise, common = rng.normal(size=(3, n))
    c1 = common + 0.2 * rng.normal(size=n)
    c2 = common + 0.2 * rng.normal(size=n)
    y = (rng.random(n) < expit(informative + 0.75 * (c1 + c2))).astype(int)
    return expit(np.column_stack([informative, noise, c1, c2])), y


def test_noise_and_redundant_positive_scores_are_never_reversed():
    signs = 0
    for seed in range(40):
        S, y = noise_and_redundant_scores(1000, seed)
        assert conditional_directions(S, y).all(), seed
        signs += int(np.sum(~conditional_directions(S, y, threshold=0.0)))
    # the sign alone reverses the noise about every other time
    assert signs >= 10


def test_the_z_of_a_score_without_information_is_standard_normal():
    z = np.array([conditional_z(*noise_and_redundant_scores(500, seed))[1] for seed in range(200)])
    assert abs(z.mean()) < 0.25 and 0.8 < z.std() < 1.2


def test_saturated_probabilities_stay_finite():
    z, y = suppressor_scores(2000, 6)
    p = expit(3.0 * z)
    p[p > 0.99] = 1.0
    p[p < 0.01] = 0.0
    Z = own_scale_features(p)
    assert np.isfinite(Z).all()
    assert conditional_directions(p, y).shape == (2,)


def test_one_score_is_reversed_only_when_significantly_anti_aligned():
    z, y = suppressor_scores(500, 7)
    np.testing.assert_array_equal(conditional_directions(z[:, :1], y), [True])
    np.testing.assert_array_equal(conditional_directions(-z[:, :1], y), [False])


def test_scores_must_be_two_dimensional():
    with pytest.raises(ValueError, match=r"shape \(n, M\)"):
        conditional_directions(np.zeros((5, 2, 3)), np.zeros(5))
