"""Tests of fusion/mrmic/interpolate.py: the linear and the monotone extension rules."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import Delaunay

from fusion.mrmic.interpolate import affine_frame, linear_interpolate, monotone_interpolate
from fusion.mrmic.qp import repair_monotone


def grid(m, M=2, lo=0.0, hi=1.0):
    axes = np.meshgrid(*[np.linspace(lo, hi, m)] * M, indexing="ij")
    return np.column_stack([a.ravel() for a in axes]), axes[0].shape


def monotone_values(points, rng):
    """A random function that is monotone on the points (repair of random values)."""
    raw = points @ rng.uniform(0.2, 1.0, size=points.shape[1]) + rng.normal(
        scale=0.3, size=points.shape[0]
    )
    return repair_monotone(points, (raw - raw.min()) / (np.ptp(raw) + 1e-12))


# -- linear --------------------------------------------------------------------------------


@pytest.mark.parametrize("M", [1, 2, 3])
def test_linear_reproduces_training_values(M):
    rng = np.random.default_rng(M)
    points = np.unique(rng.uniform(size=(200, M)), axis=0)
    values = rng.uniform(size=points.shape[0])
    np.testing.assert_allclose(linear_interpolate(points, values, points), values, atol=1e-12)


def test_linear_is_exact_for_affine_functions_inside_the_hull():
    rng = np.random.default_rng(20)
    points = rng.uniform(size=(150, 2))
    a, b = np.array([0.3, -0.7]), 0.2
    queries = rng.uniform(size=(2000, 2))
    inside = Delaunay(points).find_simplex(queries) >= 0
    out = linear_interpolate(points, points @ a + b, queries)
    np.testing.assert_allclose(out[inside], queries[inside] @ a + b, atol=1e-12)


def test_linear_uses_nearest_value_outside_the_hull():
    rng = np.random.default_rng(21)
    points = 0.25 + 0.5 * rng.uniform(size=(100, 2))
    values = rng.uniform(size=100)
    queries = rng.uniform(size=(3000, 2))
    outside = Delaunay(points).find_simplex(queries) < 0
    assert outside.sum() > 100
    nearest = np.argmin(np.linalg.norm(queries[outside, None] - points[None], axis=2), axis=1)
    out = linear_interpolate(points, values, queries)
    np.testing.assert_array_equal(out[outside], values[nearest])


def test_one_dimension_is_numpy_interp():
    rng = np.random.default_rng(22)
    x = np.unique(rng.uniform(size=50))
    v = np.cumsum(rng.uniform(size=50))
    q = np.linspace(-0.2, 1.2, 400)
    np.testing.assert_allclose(
        linear_interpolate(x[:, None], v, q[:, None]), np.interp(q, x, v), atol=1e-14
    )


def test_collinear_points_interpolate_along_their_line():
    # Two identical score columns: every normalized point lies on the diagonal.
    t = np.sort(np.random.default_rng(23).uniform(size=40))
    points = np.column_stack([t, t])
    values = t**2
    s = np.linspace(0, 1, 101)
    queries = np.column_stack([s, s])
    out = linear_interpolate(points, values, queries)
    np.testing.assert_allclose(out, np.interp(s, t, values), atol=1e-12)
    # off the line: the orthogonal projection onto it (u1 + u2) / 2
    off = np.column_stack([s, np.clip(s + 0.1, 0, 1)])
    proj = off.mean(axis=1)
    np.testing.assert_allclose(
        linear_interpolate(points, values, off), np.interp(proj, t, values), atol=1e-12
    )


def test_degenerate_sets_do_not_crash():
    q = grid(5, M=3)[0]
    line = np.column_stack([np.linspace(0, 1, 5)] * 3)
    plane = np.column_stack([np.repeat([0.1, 0.5, 0.9], 3), np.tile([0.2, 0.4, 0.8], 3)])
    plane = np.column_stack([plane, plane.sum(axis=1) / 2])  # 9 points on a plane in 3-D
    for points in (line, plane, line[:1], line[:2]):
        out = linear_interpolate(points, np.linspace(0, 1, points.shape[0]), q)
        assert out.shape == (q.shape[0],) and np.all(np.isfinite(out))
    assert affine_frame(plane)[1].shape[0] == 2


# -- monotone ------------------------------------------------------------------------------


def assert_monotone_on_grid(f, shape):
    F = f.reshape(shape)
    for axis in range(F.ndim):
        assert np.all(np.diff(F, axis=axis) >= 0), f"decreases along axis {axis}"


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 60), st.sampled_from([1, 2, 3]))
def test_monotone_rule_is_monotone_on_a_dense_grid(seed, n, M):
    rng = np.random.default_rng(seed)
    points = np.unique(np.round(rng.uniform(size=(n, M)), 2), axis=0)
    values = monotone_values(points, rng)
    Q, shape = grid({1: 400, 2: 60, 3: 16}[M], M=M, lo=-0.05, hi=1.05)
    assert_monotone_on_grid(monotone_interpolate(points, values, Q), shape)


def test_monotone_rule_is_monotone_even_for_non_monotone_values():
    rng = np.random.default_rng(24)
    points = rng.uniform(size=(80, 2))
    values = rng.uniform(size=80)  # no order at all
    Q, shape = grid(120)
    assert_monotone_on_grid(monotone_interpolate(points, values, Q), shape)


def test_monotone_rule_reproduces_training_values_and_uses_extremes_outside():
    rng = np.random.default_rng(25)
    points = 0.2 + 0.6 * rng.uniform(size=(100, 2))
    values = monotone_values(points, rng)
    np.testing.assert_array_equal(monotone_interpolate(points, values, points), values)
    # Below every training point all of them dominate: lo falls back to min(values) and
    # hi = min(values); symmetrically above all of them.
    corner = monotone_interpolate(points, values, np.array([[0.0, 0.0], [1.0, 1.0]]))
    np.testing.assert_array_equal(corner, [values.min(), values.max()])


def test_monotone_rule_lies_between_neighbouring_fitted_values():
    points = np.array([[0.2, 0.2], [0.8, 0.8]])
    values = np.array([0.1, 0.9])
    queries = np.array([[0.5, 0.5], [0.9, 0.9], [0.1, 0.1], [0.1, 0.5], [0.5, 0.9]])
    # (0.1, 0.5): nothing below (lo = min = 0.1), point 1 above; (0.5, 0.9): point 0 below,
    # nothing above (hi = max = 0.9).
    np.testing.assert_allclose(
        monotone_interpolate(points, values, queries), [0.5, 0.9, 0.1, 0.5, 0.5]
    )


def test_linear_rule_can_decrease_between_monotone_training_values():
    # The paper's criticism: monotone at the training points, not in between. A and B are
    # incomparable; the triangle (C, A, B) tilts down along the first axis.
    points = np.array([[0.0, 0.0], [0.1, 1.0], [1.0, 0.1], [1.0, 1.0]])
    values = np.array([0.0, 1.0, 0.0, 1.0])
    Q, shape = grid(50)
    F = linear_interpolate(points, values, Q).reshape(shape)
    assert np.any(np.diff(F, axis=0) < -1e-3)
    assert_monotone_on_grid(monotone_interpolate(points, values, Q), shape)
