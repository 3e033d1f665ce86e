"""Tests of fusion/metrics/smooth.py: the smooth ECE of Blasiok & Nakkiran (2023)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusion import metrics
from fusion.metrics import smooth


def exact_smece(f, y, s, points=20_001):
    """The defining integral, term by term: every data point, the reflected kernel with its
    images up to ``4 s + 2`` periods away, a dense trapezoid rule over t (small n only)."""
    t = np.linspace(0.0, 1.0, points)
    K = np.zeros((points, f.size))
    for k in range(-int(2 * s) - 2, int(2 * s) + 3):
        for x in (f - 2 * k, -f - 2 * k):
            K += np.exp(-0.5 * ((t[:, None] - x[None, :]) / s) ** 2)
    g = np.abs(K @ (y - f)) / (f.size * s * np.sqrt(2 * np.pi))
    return float(np.sum((g[1:] + g[:-1]) / 2) * (t[1] - t[0]))


def sample(n, seed, power=1.0):
    rng = np.random.default_rng(seed)
    f = rng.random(n)
    f[:3] = [0.0, 1.0, 0.5]  # the boundaries, where the reflection matters most
    y = (rng.random(n) < f**power).astype(float)
    return f, y


@pytest.mark.parametrize(
    "n, s, seed", [(40, 0.004, 0), (60, 0.03, 1), (60, 0.2, 2), (40, 1.0, 3), (30, 3.0, 4)]
)
def test_fixed_bandwidth_matches_the_defining_integral(n, s, seed):
    f, y = sample(n, seed, power=1.5)
    expected = exact_smece(f, y, s, points=40_001 if s < 0.01 else 4_001)
    assert metrics.smooth_ece(y, f, bandwidth=s) == pytest.approx(expected, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("seed, power", [(0, 1.0), (1, 2.0), (2, 0.5)])
def test_default_is_the_fixed_point(seed, power):
    f, y = sample(2000, seed, power)
    value = metrics.smooth_ece(y, f)
    assert value > smooth.MIN_BANDWIDTH
    # the search runs on a finer grid than one evaluation at that bandwidth: within 1e-4
    assert metrics.smooth_ece(y, f, bandwidth=value) == pytest.approx(value, rel=1e-4)


@pytest.mark.parametrize(
    "c, rate, bandwidth", [(0.3, 0.75, None), (0.9, 0.5, 0.05), (0.0, 0.2, 1.0)]
)
def test_a_constant_prediction_scores_its_gap_at_any_bandwidth(c, rate, bandwidth):
    # every kernel integrates to 1 over [0, 1], so the residuals' mean is all that is left
    y = np.r_[np.ones(int(rate * 20)), np.zeros(20 - int(rate * 20))]
    value = metrics.smooth_ece(y, np.full(20, c), bandwidth=bandwidth)
    assert value == pytest.approx(abs(rate - c), abs=1e-7)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.01, 0.5), st.floats(1.05, 3.0))
def test_smoothing_more_never_raises_the_error(seed, s, factor):
    f, y = sample(150, seed, power=1.7)
    assert (
        metrics.smooth_ece(y, f, bandwidth=s * factor)
        <= metrics.smooth_ece(y, f, bandwidth=s) + 1e-9
    )


def test_mirroring_predictions_and_outcomes_changes_nothing():
    f, y = sample(500, 5, power=2.0)
    assert metrics.smooth_ece(1 - y, 1 - f) == pytest.approx(metrics.smooth_ece(y, f), abs=1e-9)


def test_calibrated_forecasts_score_near_zero_and_miscalibrated_ones_near_their_gap():
    f, y = sample(40_000, 6)
    assert metrics.smooth_ece(y, f) < 0.01
    # E|f^2 - f| = 1/6 for uniform f; smoothing takes a little of it
    f, y = sample(40_000, 7, power=2.0)
    assert 0.14 < metrics.smooth_ece(y, f) < 1 / 6


def test_top_label_version_is_the_binary_one_on_confidence_and_correctness():
    rng = np.random.default_rng(8)
    P = rng.dirichlet(np.full(4, 0.7), size=600)
    y = np.array(["a", "b", "c", "d"])[rng.integers(0, 4, 600)]
    index = np.searchsorted(["a", "b", "c", "d"], y)
    top = P.argmax(axis=1)
    expected = metrics.smooth_ece((top == index).astype(int), P.max(axis=1))
    assert metrics.top_label_smooth_ece(y, P) == pytest.approx(expected, abs=1e-12)
    # a class absent from y: labels= names the columns
    keep = y != "d"
    assert metrics.top_label_smooth_ece(
        y[keep], P[keep], labels=["a", "b", "c", "d"]
    ) == pytest.approx(
        metrics.smooth_ece((top == index)[keep].astype(int), P[keep].max(axis=1)), abs=1e-12
    )


@pytest.mark.parametrize("bandwidth", [0, -0.1, float("nan"), "wide", True])
def test_a_bad_bandwidth_is_refused(bandwidth):
    with pytest.raises(ValueError, match="bandwidth"):
        metrics.smooth_ece([0, 1], [0.2, 0.7], bandwidth=bandwidth)


def test_docstring_examples_run():
    result = doctest.testmod(smooth)
    assert result.failed == 0 and result.attempted > 0
