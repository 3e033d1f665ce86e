import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusion import BernsteinFusion, ECDFNormalizer
from fusion.ecdf import mid_ecdf_knots
from fusion.ecdf.sketch import (
    CANDIDATE_FACTOR,
    KnotLookup,
    column_summary,
    counts_at_knots,
    hash_candidates,
    interp_segments,
    knot_candidates,
    max_gap,
    merge_summaries,
    mid_values,
    select_knots,
    sketch_column,
)

from ..conftest import simulate


def _sup_error(knots, values, x):
    """sup_t |H(t) - G(t)| over the training values, midpoints between them and beyond."""
    ek, ev = mid_ecdf_knots(x)
    pts = np.concatenate([ek, (ek[:-1] + ek[1:]) / 2, [ek[0] - 1, ek[-1] + 1]])
    return np.max(np.abs(np.interp(pts, knots, values) - np.interp(pts, ek, ev)))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(50, 3000),
    k=st.integers(2, 200),
    ties=st.integers(0, 3),
    seed=st.integers(0, 10_000),
)
def test_in_memory_sketch_is_within_its_bound(n, k, ties, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_t(2, size=n)
    if ties:  # rounding makes ties; an atom makes one heavy value
        x = np.round(x, ties)
        x[: n // 5] = 0.0
    knots, values, exact = sketch_column(x, k)
    assert knots.shape[0] <= max(k, 1) and np.all(np.diff(knots) > 0)
    assert knots[0] == x.min() and knots[-1] == x.max()
    assert _sup_error(knots, values, x) <= (0.0 if exact else max_gap(values)) + 1e-12
    if exact:  # few distinct values: the exact mid-ECDF itself
        ek, ev = mid_ecdf_knots(x)
        np.testing.assert_array_equal(knots, ek)
        np.testing.assert_allclose(values, ev, rtol=0, atol=1e-15)
    else:  # the a-priori bound of the module docstring: level spacing + candidate gap
        distinct = np.unique(x)
        cand = np.unique(np.r_[x.min(), hash_candidates(distinct, CANDIDATE_FACTOR * k), x.max()])
        lt = np.searchsorted(np.sort(x), cand, "left")
        le = np.searchsorted(np.sort(x), cand, "right")
        gap = np.max(np.diff(mid_values(lt, le, n)))
        assert max_gap(values) <= 1 / (k - 1) + gap + 1e-12


def test_sketch_of_blocks_equals_the_in_memory_sketch_bit_for_bit():
    # what a dask fit does: block summaries with candidates, merged up a tree, exact counts
    # at the candidates summed over the blocks, then the same knot selection
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_t(3, size=30_000), np.round(rng.normal(size=5_000), 1)])
    k = 60
    knots, values, exact = sketch_column(x, k)
    assert not exact
    for sizes in ([35_000], [10_000, 10_000, 15_000], [1_000] * 35, [250] * 140):
        blocks = np.split(x, np.cumsum(sizes)[:-1])
        parts = [column_summary(b, 8 * k, None, CANDIDATE_FACTOR * k) for b in blocks]
        merged = merge_summaries(
            [merge_summaries(parts[i : i + 8], 8 * k) for i in range(0, len(parts), 8)], 8 * k
        )
        cand = knot_candidates(merged)
        counts = [counts_at_knots(b, cand) for b in blocks]
        lt = np.sum([c[0] for c in counts], axis=0)
        le = np.sum([c[1] for c in counts], axis=0)
        qk, qv = select_knots(cand, lt, le, float(x.shape[0]), k)
        np.testing.assert_array_equal(qk, knots)
        np.testing.assert_array_equal(qv, values)


def test_hash_candidates_are_a_sample_of_the_distinct_values_that_ignores_order():
    x = np.unique(np.random.default_rng(8).normal(size=5_000))
    c = hash_candidates(x, 500)
    assert c.shape[0] == 500 and np.all(np.isin(c, x)) and np.all(np.diff(c) > 0)
    halves = np.unique(np.r_[hash_candidates(x[::2], 500), hash_candidates(x[1::2], 500)])
    np.testing.assert_array_equal(hash_candidates(halves, 500), c)
    # spread over the whole range: every tenth of the values holds some candidates
    assert np.all(np.bincount(np.searchsorted(x, c) * 10 // x.shape[0], minlength=10) > 20)
    np.testing.assert_array_equal(hash_candidates(x[:100], 500), x[:100])


def test_values_at_knots_are_the_exact_mid_ecdf():
    x = np.random.default_rng(0).normal(size=5000).round(2)
    knots, values, exact = sketch_column(x, 50)
    assert not exact
    G = ECDFNormalizer().fit(x[:, None])
    np.testing.assert_allclose(values, G.transform(knots[:, None])[:, 0], rtol=0, atol=1e-15)


def test_counts_at_knots_match_brute_force():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 30, size=2000).astype(float)
    q = np.array([-1.0, 0.0, 3.0, 3.5, 17.0, 29.0, 40.0])
    lt, le = counts_at_knots(x, q)
    np.testing.assert_array_equal(lt, [(x < v).sum() for v in q])
    np.testing.assert_array_equal(le, [(x <= v).sum() for v in q])
    np.testing.assert_allclose(mid_values(lt, le, x.shape[0]), (lt + le) / 4000)


def test_exact_summaries_merge_to_value_counts():
    rng = np.random.default_rng(2)
    blocks = [rng.integers(0, 100, size=s).astype(float) for s in (10, 500, 77, 1)]
    merged = merge_summaries([column_summary(b, None) for b in blocks], None)
    vals, counts = np.unique(np.concatenate(blocks), return_counts=True)
    assert merged.exact
    np.testing.assert_array_equal(merged.vals, vals)
    np.testing.assert_array_equal(merged.wts, counts)


def test_compressed_summaries_keep_ranks_and_extremes():
    rng = np.random.default_rng(3)
    blocks = [rng.normal(size=4000) * (1 + i) for i in range(9)]
    size = 400
    level = [column_summary(b, size) for b in blocks]
    merged = merge_summaries(
        [merge_summaries(level[:8], size), merge_summaries(level[8:], size)], size
    )
    x = np.sort(np.concatenate(blocks))
    assert not merged.exact and merged.vals.shape[0] <= size
    assert merged.lo == x[0] and merged.hi == x[-1]
    assert merged.wts.sum() == pytest.approx(x.shape[0])
    # rank of every summary value within 3 compressions' error (1 / size each)
    cw = np.cumsum(merged.wts) - merged.wts / 2
    true = (np.searchsorted(x, merged.vals, "left") + np.searchsorted(x, merged.vals, "right")) / 2
    assert np.max(np.abs(cw - true)) / x.shape[0] <= 3 / size


def test_in_memory_ecdf_knots_option():
    S, y, _ = simulate(4000, seed=4)
    exact = BernsteinFusion(base=None, degree=3).fit(S, y)
    sk = BernsteinFusion(base=None, degree=3, ecdf_knots=300).fit(S, y)
    assert exact.ecdf_knots_ is None and exact.ecdf_error_bound_ == 0.0
    assert sk.ecdf_knots_ == 300 and 0 < sk.ecdf_error_bound_ <= 1 / 299 + 1 / 4000
    assert all(k.shape[0] <= 300 for k in sk.ecdf_.knots_)
    # scores move by at most the bound in the cube; with |df/du_m| <= K, twice M K bound
    diff = np.abs(sk.predict_proba(S)[:, 1] - exact.predict_proba(S)[:, 1])
    assert diff.max() <= 2 * 2 * 3 * sk.ecdf_error_bound_
    # enough knots for every distinct value: the exact ECDF
    same = BernsteinFusion(base=None, degree=3, ecdf_knots=10_000).fit(S, y)
    assert same.ecdf_error_bound_ == 0.0
    np.testing.assert_allclose(same.coef_, exact.coef_, atol=1e-9)
    with pytest.raises(ValueError, match="constant"):
        BernsteinFusion(degree=2, ecdf_knots=10).fit(np.column_stack([S[:, 0], 0 * S[:, 1]]), y)
    with pytest.raises(ValueError, match="ecdf_knots"):
        BernsteinFusion(ecdf_knots=1).fit(S, y)


def test_from_knots_validates():
    with pytest.raises(ValueError, match="strictly increasing"):
        ECDFNormalizer.from_knots([np.array([0.0, 0.0])], [np.array([0.2, 0.4])])
    with pytest.raises(ValueError, match="one knots and one values"):
        ECDFNormalizer.from_knots([np.array([0.0, 1.0])], [])
    norm = ECDFNormalizer.from_knots([[0.0, 1.0]], [[0.25, 0.75]])
    np.testing.assert_allclose(norm.transform([[0.5], [2.0]]).ravel(), [0.5, 0.75])


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(2, 3000),
    tail=st.sampled_from([0.5, 2.0, 50.0]),
    seed=st.integers(0, 10_000),
)
def test_knot_lookup_equals_np_interp(k, tail, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_t(tail, size=4000)
    knots, values, _ = sketch_column(x, k)
    if knots.shape[0] < 2:
        return
    # training values, knots themselves, points between and far outside
    pts = np.concatenate([x, knots, rng.standard_t(tail, size=2000) * 3, [-1.7e308, 1.7e308]])
    np.testing.assert_allclose(
        KnotLookup(knots, values)(pts), np.interp(pts, knots, values), rtol=0, atol=1e-15
    )


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(2, 3000),
    tail=st.sampled_from([0.5, 2.0, 50.0]),
    seed=st.integers(0, 10_000),
    inverse=st.booleans(),
)
def test_knot_lookup_is_interp_segments_bit_for_bit(k, tail, seed, inverse):
    # the lookup reads each segment's differences from arrays made once; interp_segments
    # computes them per point: the same operations, so the same bits (also for the integer
    # values of an inverse ECDF, and for NaN and infinite queries)
    rng = np.random.default_rng(seed)
    x = rng.standard_t(tail, size=4000)
    knots, values, _ = sketch_column(x, k)
    if knots.shape[0] < 2:
        return
    if inverse:  # u -> integer scores
        knots, values = values, np.round(knots * 1000).astype(np.int64)
        pts = np.concatenate([rng.random(3000), knots, [-0.5, 1.5, np.inf, -np.inf]])
    else:
        pts = np.concatenate([x, knots, rng.standard_t(tail, size=2000) * 3])
        pts = np.concatenate([pts, [-1.7e308, 1.7e308, np.inf, -np.inf, np.nan]])
    lookup = KnotLookup(knots, values)
    segment = np.searchsorted(knots, pts, side="right") - 1
    expected = interp_segments(pts, segment, knots, values)
    finite = ~np.isnan(pts)
    got = lookup(pts)
    np.testing.assert_array_equal(got[finite], expected[finite])
    assert np.isnan(got[~finite]).all()


def test_knot_lookup_in_chunks_equals_one_pass():
    from fusion._chunks import CHUNK

    rng = np.random.default_rng(7)
    x = rng.standard_t(3, size=3 * CHUNK + 17)
    knots, values, _ = sketch_column(x, 1000)
    lookup = KnotLookup(knots, values)
    x[::1000] = np.nan
    got, whole = lookup(x), lookup._call(x)
    np.testing.assert_array_equal(got, whole)
