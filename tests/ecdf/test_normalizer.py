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


_INCREASING = {
    "exp": lambda x: np.exp(x / 1e6),
    "cube": lambda x: x**3,
    "affine": lambda x: 3.0 * x - 7.0,
    "arctan": np.arctan,
}


@settings(max_examples=60, deadline=None)
@given(
    train=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=40),
    new=st.lists(st.floats(-2e3, 2e3, allow_nan=False), min_size=1, max_size=40),
    weighted=st.booleans(),
    which=st.sampled_from(sorted(_INCREASING)),
)
def test_step_form_is_invariant_at_new_points(train, new, weighted, which):
    s = np.round(np.asarray(train), 1)  # ties
    if np.unique(s).size < 2:
        return
    g = _INCREASING[which]
    x = np.r_[np.asarray(new), s[::2], -np.inf, np.inf]  # new points, ties with training ones
    # only transforms that keep the order of all points (strictly) in floating point qualify
    both, gboth = np.r_[s, x], g(np.r_[s, x])
    order = np.argsort(both, kind="stable")
    if not np.array_equal(np.diff(both[order]) > 0, np.diff(gboth[order]) > 0):
        return
    w = np.random.default_rng(s.size).random(s.size) + 0.1 if weighted else None
    a = ECDFNormalizer().fit(s, sample_weight=w)
    b = ECDFNormalizer().fit(g(s), sample_weight=w)
    np.testing.assert_array_equal(a.transform(x, between="step"), b.transform(g(x), between="step"))
    # at the training scores the step form is the linear form, bit for bit
    np.testing.assert_array_equal(a.transform(s, between="step"), a.transform(s))


def test_step_form_is_constant_between_adjacent_training_scores():
    norm = ECDFNormalizer().fit(np.array([0.0, 1.0, 3.0]))
    u = norm.transform(np.array([0.001, 0.5, 0.999, 1.0, 1.5, 2.9]), between="step").ravel()
    np.testing.assert_array_equal(u[:3], np.full(3, u[0]))
    np.testing.assert_array_equal(u[4:], np.full(2, u[4]))
    v = norm.values_[0]
    np.testing.assert_array_equal(u[[0, 3, 4]], [(v[0] + v[1]) / 2, v[1], (v[1] + v[2]) / 2])


def test_step_form_of_a_sketch_depends_only_on_the_position_among_its_knots():
    rng = np.random.default_rng(7)
    s = rng.normal(size=5000)
    norm = ECDFNormalizer(n_knots=50)
    U = norm.fit_transform(s, between="step")
    # the training scores between two knots get the gap's value, as transform gives it
    np.testing.assert_array_equal(U, norm.transform(s, between="step"))
    assert np.unique(U).size == 2 * 50 - 1  # the 50 knots' values and the 49 gaps'
    # relative to the knots: the same knots and values moved by g give the same map
    knots, values = norm.knots_[0], norm.values_[0]
    moved = ECDFNormalizer.from_knots([np.exp(knots)], [values])
    x = rng.normal(size=1000) * 2
    np.testing.assert_array_equal(
        norm.transform(x, between="step"), moved.transform(np.exp(x), between="step")
    )


def test_between_must_be_linear_or_step():
    norm = ECDFNormalizer().fit(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="between must be one of"):
        norm.transform(np.array([0.5]), between="nearest")
    with pytest.raises(ValueError, match="between must be one of"):
        ECDFNormalizer().fit_transform(np.array([0.0, 1.0]), between="steps")


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


# -- weights, infinities, extreme values, exact integers ------------------------------------


def test_integer_weights_equal_repeated_rows_bit_for_bit():
    rng = np.random.default_rng(4)
    s = np.round(rng.normal(size=300), 1)  # ties
    k = rng.integers(1, 4, 300)
    a = ECDFNormalizer().fit(np.repeat(s, k))
    b = ECDFNormalizer().fit(s, sample_weight=k.astype(float))
    np.testing.assert_array_equal(a.knots_[0], b.knots_[0])
    np.testing.assert_array_equal(a.values_[0], b.values_[0])
    q = np.linspace(-4, 4, 101)
    np.testing.assert_array_equal(a.transform(q), b.transform(q))


def test_weighted_values_are_the_weighted_mid_distribution():
    s = np.array([1.0, 2.0, 2.0, 5.0])
    w = np.array([1.0, 2.0, 1.0, 4.0])
    norm = ECDFNormalizer().fit(s, sample_weight=w)
    # W = 8: below 1 -> 0, at 1 -> 1; below 2 -> 1, at 2 -> 3; below 5 -> 4, at 5 -> 4
    np.testing.assert_allclose(norm.values_[0], [0.5 / 8, 2.5 / 8, 6.0 / 8])
    for c in (1e-9, 3.0, 1e200):  # the scale of the weights does not matter
        other = ECDFNormalizer().fit(s, sample_weight=c * w)
        np.testing.assert_allclose(other.values_[0], norm.values_[0], rtol=1e-15)


def test_infinite_scores_are_ranked_at_the_ends():
    s = np.array([-np.inf, -1.0, 0.0, 2.0, np.inf, np.inf])
    norm = ECDFNormalizer().fit(s)
    u = norm.transform(s).ravel()
    finite = (
        ECDFNormalizer()
        .fit(np.array([-9.0, -1.0, 0.0, 2.0, 9.0, 9.0]))
        .transform(np.array([-9.0, -1.0, 0.0, 2.0, 9.0, 9.0]))
    )
    np.testing.assert_array_equal(u, finite.ravel())
    # finite queries beyond the finite knots clamp to the nearest finite knot, not to +-inf
    q = norm.transform(np.array([-1e300, 1e300, -np.inf, np.inf])).ravel()
    np.testing.assert_array_equal(q, [u[1], u[3], u[0], u[4]])
    assert np.all(np.diff(norm.transform(np.sort(np.r_[s, -5.0, 7.0])).ravel()) >= 0)


@pytest.mark.parametrize(
    "values",
    [
        [-np.finfo(float).max, -1.0, 0.0, np.finfo(float).max],
        [-1e308, 1e308, 0.5, 1e-300],
        [5e-324, 1e-310, 2e-310, 0.0, -5e-324],  # subnormals
        [np.finfo(float).max, np.finfo(float).max / 2, -np.finfo(float).max],
    ],
)
def test_extreme_scores_rank_correctly_and_interpolate_monotonically(values):
    s = np.asarray(values, dtype=float)
    norm = ECDFNormalizer().fit(s)
    u = norm.transform(s).ravel()
    ranks = (np.argsort(np.argsort(s)) + 0.5) / s.size
    np.testing.assert_allclose(u, ranks, atol=1e-15)
    q = np.sort(np.r_[s, np.linspace(s.min() / 2, s.max() / 2, 50), s / 3, -s])
    v = norm.transform(q).ravel()
    assert np.all(np.isfinite(v)) and np.all(np.diff(v) >= 0)


def test_integers_beyond_two_to_the_53_stay_distinct():
    base = 2**60
    s = np.array([base, base + 1, base + 2, base + 3], dtype=np.int64)
    assert np.unique(s.astype(float)).size == 1  # float64 would merge them
    norm = ECDFNormalizer().fit(s)
    assert norm.knots_[0].dtype == np.int64 and norm.knots_[0].size == 4
    np.testing.assert_array_equal(norm.transform(s).ravel(), [0.125, 0.375, 0.625, 0.875])
    # exact interpolation between integer knots, and no overflow at the int64 ends
    wide = np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max], dtype=np.int64)
    u = ECDFNormalizer().fit(wide).transform(np.array([-(2**62), 2**62], dtype=np.int64))
    np.testing.assert_allclose(u.ravel(), [1 / 6 + 0.5 * (1 / 3), 0.5 + 0.5 * (1 / 3)])


def test_missing_values_are_ignored_by_fit_and_map_to_nan_only_when_allowed():
    s = np.array([[1.0, np.nan], [2.0, 0.5], [3.0, 0.7], [np.nan, 0.1]])
    with pytest.raises(ValueError, match="column 0 holds NaN at row 3.*missing='marginal'"):
        ECDFNormalizer().fit(s)
    norm = ECDFNormalizer(allow_nan=True).fit(s)
    np.testing.assert_allclose(norm.values_[0], [1 / 6, 3 / 6, 5 / 6])
    U = norm.transform(s)
    assert np.isnan(U[0, 1]) and np.isnan(U[3, 0])
    np.testing.assert_array_equal(ECDFNormalizer(allow_nan=True).fit_transform(s), U)


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(st.integers(-(2**62), 2**62), min_size=2, max_size=40, unique=True),
    shift=st.integers(-(2**40), 2**40),
)
def test_ranks_of_large_integers_survive_an_increasing_integer_transform(data, shift):
    s = np.asarray(data, dtype=np.int64)
    u = ECDFNormalizer().fit(s).transform(s)
    t = s // 2 + shift  # strictly increasing on distinct... only if no two merge
    if np.unique(t).size == s.size:
        np.testing.assert_array_equal(ECDFNormalizer().fit(t).transform(t), u)


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(
        st.one_of(
            st.floats(allow_nan=False),  # includes +-inf, subnormals and +-max
            st.sampled_from([0.0, 1.0, -1.0]),
        ),
        min_size=2,
        max_size=40,
    )
)
def test_any_float_column_normalizes_monotonically_inside_the_unit_interval(data):
    s = np.asarray(data, dtype=float)
    if np.unique(s).size < 2:
        return
    norm = ECDFNormalizer().fit(s)
    q = np.sort(np.r_[s, s / 2, -s])
    v = norm.transform(q).ravel()
    assert np.all((v > 0) & (v < 1)) and np.all(np.diff(v) >= 0)
    order = np.argsort(s, kind="stable")
    assert np.all(np.diff(norm.transform(s[order]).ravel()) >= 0)


def test_a_point_rounding_into_the_next_bucket_still_finds_its_segment():
    # The bucket of 0.0 is computed as 18.000000000000004 (its left edge rounds to 1e-13):
    # the search must start one bucket lower, or 0.0 would take the knot 9e-47's value.
    train = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 1000.0, 0.5, 9.168772592256818e-47, -1000.0])
    norm = ECDFNormalizer().fit(train)
    assert norm.transform(np.array([0.0]))[0, 0] == pytest.approx(1.5 / 9)


def test_validate_params_checks_the_parameters_without_data():
    ECDFNormalizer(n_knots=10).validate_params()
    with pytest.raises(ValueError, match="'n_knots' parameter") as from_check:
        ECDFNormalizer(n_knots=1).validate_params()
    with pytest.raises(ValueError) as from_fit:
        ECDFNormalizer(n_knots=1).fit(np.arange(5.0))
    assert str(from_check.value) == str(from_fit.value)
