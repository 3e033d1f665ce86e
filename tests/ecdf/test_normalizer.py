import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusion.ecdf import ConstantColumnError, ECDFNormalizer, mid_ecdf_knots


def test_mid_ranks_with_ties():
    S = np.array([3.0, 1.0, 2.0, 2.0, 5.0])
    U = ECDFNormalizer().fit(S).transform(S).ravel()
    # sorted: 1, 2, 2, 3, 5 -> mid-ranks 1, 2.5, 2.5, 4, 5 -> (r - 1/2) / n
    np.testing.assert_allclose(U, (np.array([4, 1, 2.5, 2.5, 5]) - 0.5) / 5)


def test_interpolates_between_knots_and_clamps_outside():
    norm = ECDFNormalizer().fit(np.array([[0.0], [1.0], [3.0]]))
    u = norm.transform(np.array([[-10.0], [0.5], [2.0], [99.0]])).ravel()
    v = (np.arange(3) + 0.5) / 3
    np.testing.assert_allclose(u, [v[0], (v[0] + v[1]) / 2, (v[1] + v[2]) / 2, v[2]])


def test_knots_values_strictly_increasing_in_open_unit_interval():
    rng = np.random.default_rng(0)
    col = rng.integers(0, 20, size=200).astype(float)
    knots, values = mid_ecdf_knots(col)
    assert np.all(np.diff(knots) > 0) and np.all(np.diff(values) > 0)
    assert values[0] > 0 and values[-1] < 1


def test_reflection_symmetry():
    rng = np.random.default_rng(1)
    s = rng.normal(size=(101, 2))
    s[:10, 0] = 0.0  # ties
    u = ECDFNormalizer().fit(s).transform(s)
    u_neg = ECDFNormalizer().fit(-s).transform(-s)
    np.testing.assert_allclose(u_neg, 1 - u, atol=1e-15)


def test_constant_column_is_an_error_naming_the_column():
    S = np.column_stack([np.arange(5.0), np.full(5, 2.0)])
    with pytest.raises(ConstantColumnError, match="column 1 is constant"):
        ECDFNormalizer().fit(S)
    assert issubclass(ConstantColumnError, ValueError)


def test_wrong_column_count_at_transform():
    norm = ECDFNormalizer().fit(np.random.default_rng(0).normal(size=(10, 2)))
    with pytest.raises(ValueError, match="2"):
        norm.transform(np.zeros((3, 3)))


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(
        st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False), min_size=2, max_size=60
    ),
    which=st.sampled_from(["exp", "cube", "affine", "arctan"]),
)
def test_invariant_under_strictly_increasing_transforms(data, which):
    s = np.asarray(data)
    if np.unique(s).size < 2:
        return
    g = {
        "exp": lambda x: np.exp(x / 1e6),
        "cube": lambda x: x**3,
        "affine": lambda x: 3.0 * x - 7.0,
        "arctan": np.arctan,
    }[which]
    t = g(s)
    # only transforms that stay strictly increasing in floating point qualify
    order = np.argsort(s, kind="stable")
    if np.any(np.diff(t[order])[np.diff(s[order]) > 0] <= 0):
        return
    u = ECDFNormalizer().fit(s).transform(s)
    v = ECDFNormalizer().fit(t).transform(t)
    np.testing.assert_array_equal(u, v)


@settings(max_examples=40, deadline=None)
@given(
    train=st.lists(st.floats(-100, 100, allow_nan=False), min_size=2, max_size=40),
    query=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=40),
)
def test_transform_is_non_decreasing_and_in_unit_interval(train, query):
    train = np.asarray(train)
    if np.unique(train).size < 2:
        return
    q = np.sort(np.asarray(query))
    u = ECDFNormalizer().fit(train).transform(q).ravel()
    assert np.all(np.diff(u) >= 0)
    assert np.all((u > 0) & (u < 1))


def test_transform_is_exactly_monotone_where_np_interp_rounds_up():
    # np.interp gives 1 ulp above the last value just below the last knot here.
    norm = ECDFNormalizer().fit(np.array([3.4e-205, -1.0, -0.664]))
    u = norm.transform(np.array([0.0, 1.0])).ravel()
    assert u[0] <= u[1]


@settings(max_examples=60, deadline=None)
@given(
    train=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=30),
    query=st.lists(st.floats(-2e3, 2e3, allow_nan=False), min_size=1, max_size=30),
)
def test_transform_agrees_with_np_interp_to_rounding(train, query):
    train = np.asarray(train)
    if np.unique(train).size < 2:
        return
    norm = ECDFNormalizer().fit(train)
    q = np.asarray(query)
    expected = np.interp(q, norm.knots_[0], norm.values_[0])
    np.testing.assert_allclose(norm.transform(q).ravel(), expected, rtol=0, atol=1e-14)
