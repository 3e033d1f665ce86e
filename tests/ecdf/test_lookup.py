"""KnotLookup's step form (``step=True``): a point's value from its position among the knots.

The linear form is tested against ``np.interp`` and ``interp_segments`` in test_sketch.py.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusion.ecdf import KnotLookup, mid_ecdf_knots


def _by_position(knots, values, x):
    """The step form written out point by point: a knot's value at a knot, the mean of the
    two neighbouring values strictly between knots, the end values beyond them."""
    out = np.empty(x.shape[0])
    for i, t in enumerate(x):
        j = int(np.searchsorted(knots, t, side="left"))
        if np.isnan(t):
            out[i] = np.nan
        elif j < knots.shape[0] and knots[j] == t:
            out[i] = values[j]
        elif j == 0:
            out[i] = values[0]
        elif j == knots.shape[0]:
            out[i] = values[-1]
        else:
            out[i] = (values[j - 1] + values[j]) * 0.5
    return out


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 300),
    tail=st.sampled_from(["normal", "heavy", "ties", "infinite"]),
)
def test_step_form_is_the_value_by_position(seed, n, tail):
    # "heavy" tails make the bucket index give up (binary search); the others use it
    rng = np.random.default_rng(seed)
    s = {
        "normal": lambda: rng.normal(size=n),
        "heavy": lambda: rng.standard_cauchy(size=n) ** 3,
        "ties": lambda: rng.integers(0, 6, size=n).astype(float),
        "infinite": lambda: np.r_[rng.normal(size=n), -np.inf, np.inf],
    }[tail]()
    if np.unique(s).size < 2:
        return
    knots, values = mid_ecdf_knots(s)
    finite = knots[np.isfinite(knots)]
    x = np.r_[
        s,
        (finite[1:] + finite[:-1]) / 2,
        rng.normal(size=100) * rng.choice([0.01, 1.0, 100.0]),
        [-np.inf, np.inf, np.nan, -1e308, 1e308],
    ]
    got = KnotLookup(knots, values, step=True)(x)
    np.testing.assert_array_equal(got, _by_position(knots, values, x))
    # at the knots the two forms agree bit for bit
    np.testing.assert_array_equal(
        KnotLookup(knots, values, step=True)(knots), KnotLookup(knots, values)(knots)
    )


def test_step_form_gives_i_over_n_in_the_ith_gap_of_distinct_unweighted_scores():
    s = np.array([0.0, 1.0, 3.0, 7.0])
    knots, values = mid_ecdf_knots(s)
    lookup = KnotLookup(knots, values, step=True)
    # (i - 1/2) / n at the i-th score, i / n strictly between the i-th and the next: the
    # mid-distribution function of the gap itself; clamped beyond the ends
    x = np.array([-5.0, 0.0, 0.2, 0.9, 1.0, 2.0, 6.99, 7.0, 50.0])
    np.testing.assert_allclose(
        lookup(x), [1 / 8, 1 / 8, 1 / 4, 1 / 4, 3 / 8, 1 / 2, 3 / 4, 7 / 8, 7 / 8], rtol=1e-15
    )


def test_step_form_with_infinite_knots_puts_finite_points_in_the_end_gaps():
    knots, values = mid_ecdf_knots(np.array([-np.inf, 0.0, 1.0, np.inf]))
    got = KnotLookup(knots, values, step=True)(np.array([-np.inf, -1e300, 0.5, 1e300, np.inf]))
    np.testing.assert_allclose(got, [1 / 8, 1 / 4, 1 / 2, 3 / 4, 7 / 8], rtol=1e-15)
    # only the two infinities were seen: every finite point lies between them
    knots, values = mid_ecdf_knots(np.array([-np.inf, np.inf]))
    got = KnotLookup(knots, values, step=True)(np.array([-np.inf, 3.0, np.inf]))
    np.testing.assert_allclose(got, [1 / 4, 1 / 2, 3 / 4], rtol=1e-15)


def test_step_form_is_exact_for_integer_knots_beyond_two_to_the_53():
    base = 2**60
    knots = np.array([base, base + 2, base + 4], dtype=np.int64)
    values = np.array([1 / 6, 1 / 2, 5 / 6])
    x = np.array([base - 1, base, base + 1, base + 3, base + 4, base + 9], dtype=np.int64)
    got = KnotLookup(knots, values, step=True)(x)
    gap = (values[:-1] + values[1:]) * 0.5
    np.testing.assert_array_equal(got, [values[0], values[0], gap[0], gap[1], values[2], values[2]])


@pytest.mark.parametrize("step", [False, True])
def test_one_finite_knot_between_infinities(step):
    knots = np.array([-np.inf, 0.0, np.inf])
    values = np.array([0.25, 0.5, 0.75])
    got = KnotLookup(knots, values, step=step)(np.array([-np.inf, -1.0, 0.0, 1.0, np.inf]))
    middle = [0.375, 0.5, 0.625] if step else [0.5, 0.5, 0.5]
    np.testing.assert_array_equal(got, [0.25, *middle, 0.75])
