"""fusion/classifier/directions.py: the direction of each score given the others."""

import numpy as np
import pytest
from scipy.special import expit

from fusion.classifier.directions import conditional_directions, own_scale_features


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


def test_weights_count_as_repeated_rows():
    z, y = suppressor_scores(1500, 5)
    w = np.random.default_rng(0).integers(1, 4, size=y.shape[0])
    repeated = np.repeat(np.arange(y.shape[0]), w)
    np.testing.assert_array_equal(
        conditional_directions(z, y, w.astype(float)),
        conditional_directions(z[repeated], y[repeated]),
    )


def test_saturated_probabilities_stay_finite():
    z, y = suppressor_scores(2000, 6)
    p = expit(3.0 * z)
    p[p > 0.99] = 1.0
    p[p < 0.01] = 0.0
    Z = own_scale_features(p)
    assert np.isfinite(Z).all()
    assert conditional_directions(p, y).shape == (2,)


def test_one_score_gets_the_sign_of_its_association():
    z, y = suppressor_scores(500, 7)
    np.testing.assert_array_equal(conditional_directions(z[:, :1], y), [True])
    np.testing.assert_array_equal(conditional_directions(-z[:, :1], y), [False])


def test_scores_must_be_two_dimensional():
    with pytest.raises(ValueError, match=r"shape \(n, M\)"):
        conditional_directions(np.zeros((5, 2, 3)), np.zeros(5))
