"""The compiled loops of the class-shared model (fusion/bernstein/multiclass/kernels.py) against
the same sums written in NumPy: the pass's loss and gradient sums, the weighted histogram and
the bins, in float32 and float64, with class biases, rows of zero weight and logits far below
their row's largest."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from fusion.bernstein.basis import evaluate
from fusion.bernstein.multiclass import kernels
from fusion.bernstein.multiclass.model import MemberTerms
from fusion.bernstein.multiclass.pairs import HIST_BINS, histogram
from fusion.bernstein.scale import LOG_TINY
from fusion.ecdf import KnotLookup


def _block(dtype, seed=0, M=3, R=40, C=7, nb=(5, 9, 4)):
    rng = np.random.default_rng(seed)
    Z = rng.normal(-6, 4, size=(M, R, C)) * (1 + 100 * (rng.random((M, R, C)) < 0.05))
    Z = Z.astype(dtype)
    B = np.stack([rng.integers(0, nb[m], size=(R, C)) for m in range(M)]).astype(np.int16)
    index = rng.integers(0, C, R)
    w = rng.uniform(0.2, 3.0, R)
    w[::7] = 0.0
    c = rng.uniform(0.1, 2.0, M)
    G = np.concatenate([np.sort(rng.normal(size=nb[m])) for m in range(M)])
    offsets = np.cumsum([0, *nb[:-1]]).astype(np.intp)
    return Z, B, index, w, c, G, offsets, nb


def _eta(Z, B, c, G, offsets, bias):
    eta = sum(c[m] * Z[m].astype(float) + G[offsets[m] + B[m]] for m in range(Z.shape[0]))
    return eta + (bias if bias.shape[0] else 0.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("biased", [False, True])
def test_one_pass_gives_numpys_losses_and_gradient_sums(dtype, biased):
    Z, B, index, w, c, G, offsets, nb = _block(dtype)
    M, R, C = Z.shape
    bias = np.random.default_rng(1).normal(size=C) if biased else np.zeros(0)
    a, b = 5, 33  # a range of rows inside the block
    E, picked = np.empty((b - a, C)), np.empty(b - a)
    kernels.shifted_logits(Z, B, a, b, index, c, G, offsets, bias, E, picked)
    np.exp(E, out=E)
    zsum, bins = np.zeros(M), np.zeros(sum(nb))
    classes, diag = (np.zeros(C), np.zeros(C)) if biased else (np.zeros(0), np.zeros(0))
    logsum = kernels.gradient_sums(Z, B, a, b, index, w, offsets, E, zsum, bins, classes, diag)

    shifted = _eta(Z, B, c, G, offsets, bias)[a:b]
    shifted -= shifted.max(axis=1, keepdims=True)
    # the softmax floors the other logits, the loss takes the label's own
    eta = np.maximum(shifted, -kernels.SOFTMAX_FLOOR)
    y, wr = index[a:b], w[a:b]
    rows = np.arange(b - a)
    lse = logsumexp(eta, axis=1)
    np.testing.assert_allclose(logsum - picked, lse - shifted[rows, y], rtol=1e-12, atol=1e-12)
    p = np.exp(eta - lse[:, None]) * wr[:, None]
    np.testing.assert_allclose(E, p, rtol=1e-12, atol=1e-300)
    for m in range(M):
        zm = Z[m, a:b].astype(float)
        np.testing.assert_allclose(zsum[m], (p * zm).sum() - wr @ zm[rows, y], rtol=1e-11)
        ref = np.bincount(B[m, a:b].ravel(), weights=p.ravel(), minlength=nb[m])
        ref -= np.bincount(B[m, a:b][rows, y], weights=wr, minlength=nb[m])
        np.testing.assert_allclose(bins[offsets[m] : offsets[m] + nb[m]], ref, atol=1e-12)
    if not biased:  # the biases' sums are skipped
        assert classes.shape == diag.shape == (0,)
        return
    np.testing.assert_allclose(classes, p.sum(0) - np.bincount(y, weights=wr, minlength=C))
    live = wr > 0
    ref_diag = (p[live] * (1 - p[live] / wr[live, None])).sum(0)
    np.testing.assert_allclose(diag, ref_diag, rtol=1e-12, atol=1e-14)


def test_logits_far_below_the_rows_largest_are_raised_to_the_floor():
    Z, B, index, w, c, G, offsets, _ = _block(np.float64)
    Z[0, 0, 1] = -1e6  # far below: its probability is exp(-SOFTMAX_FLOOR), not a subnormal
    E, picked = np.empty((1, Z.shape[2])), np.empty(1)
    kernels.shifted_logits(Z, B, 0, 1, index, c, G, offsets, np.zeros(0), E, picked)
    assert E[0, 1] == -kernels.SOFTMAX_FLOOR
    assert E.max() == 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weighted_histogram_is_numpys_in_double_precision(dtype):
    rng = np.random.default_rng(3)
    raw = rng.normal(-8, 5, size=(200, 30)).astype(dtype)
    z = np.maximum(raw, dtype(-15.0))  # a floor: positions move, weights keep the raw value
    w = rng.uniform(0.5, 2.0, 200)
    lo, hi = float(z.min()), float(z.max())
    out = histogram(z, w, lo, hi, raw)
    k = np.clip((z.astype(float) - lo) * (HIST_BINS / (hi - lo)), 0, HIST_BINS - 1)
    weights = np.exp(raw.astype(float)) * w[:, None]  # float32's exp in double precision
    ref = np.bincount(k.astype(np.int64).ravel(), weights=weights.ravel(), minlength=HIST_BINS)
    np.testing.assert_allclose(out, ref, rtol=1e-14, atol=1e-300)


def _bins(z, w, cuts):
    bins = np.empty(z.shape, dtype=np.int16)
    counts, sums = np.zeros(cuts.shape[0] + 1), np.zeros(cuts.shape[0] + 1)
    kernels.bin_pairs(z, w, cuts, *kernels.bin_lookup(cuts), bins, counts, sums)
    return bins, counts, sums


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bins_are_numpys_searchsorted_and_their_sums_its_bincounts(dtype):
    rng = np.random.default_rng(4)
    z = rng.normal(-8, 5, size=(100, 20)).astype(dtype)
    # cuts spread out and in a tight cluster (many in one cell of the lookup's grid), values
    # on cuts, below the first and above the last
    cuts = np.unique(np.r_[rng.normal(-8, 5, 30), -3.0 + 1e-9 * np.arange(40),
                           z[3, :4].astype(float)])  # fmt: skip
    z[5, :3] = np.array([cuts[0] - 1.0, cuts[-1] + 1.0, -3.0 + 1e-9 * 17]).astype(dtype)
    w = rng.uniform(0.5, 2.0, 100)
    bins, counts, sums = _bins(z, w, cuts)
    ref = np.searchsorted(cuts, z, side="right")
    np.testing.assert_array_equal(bins, ref)
    wz = np.broadcast_to(w[:, None], z.shape).ravel()
    np.testing.assert_allclose(counts, np.bincount(ref.ravel(), weights=wz, minlength=counts.size))
    np.testing.assert_allclose(
        sums, np.bincount(ref.ravel(), weights=(z * w[:, None]).ravel(), minlength=sums.size)
    )


NEXT = np.nextafter(0.5, 1.0)


@pytest.mark.parametrize("cuts", [np.zeros(0), np.array([0.5]), np.array([0.5, NEXT])])
def test_bins_with_no_cut_one_cut_or_two_adjacent_doubles(cuts):
    z = np.array([[-1.0, 0.5, NEXT, 2.0]])
    bins, _, _ = _bins(z, np.ones(1), cuts)
    np.testing.assert_array_equal(bins, np.searchsorted(cuts, z, side="right"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_member_terms_are_the_lookup_and_the_basis(dtype):
    # the compiled c z + g(F(z)) against KnotLookup and basis.evaluate, at points below,
    # on, between and above the knots, and where F is tiny (powers that would go subnormal)
    rng = np.random.default_rng(5)
    knots = np.sort(rng.normal(-10, 6, 300))
    values = np.r_[1e-290, np.sort(rng.uniform(1e-12, 1 - 1e-9, 298)), 1 - 1e-12]
    lookup = KnotLookup(knots, np.sort(values))
    coef = np.r_[0.0, np.cumsum(rng.uniform(0, 1, 12))]
    z = rng.normal(-10, 8, size=(60, 40))
    z[0, :5] = [knots[0] - 5, knots[0], knots[17], knots[-1], knots[-1] + 5]
    z = z.astype(dtype)
    term = MemberTerms(lookup, coef, 0.7)
    assert term.compiled is not None
    eta = np.full(z.shape, 0.25)
    term.add(eta, z)
    zz = z.astype(np.float64)
    ref = 0.25 + 0.7 * zz + evaluate(coef, lookup(zz.ravel()).reshape(-1, 1)).reshape(z.shape)
    np.testing.assert_allclose(eta, ref, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_probability_of_zero_keeps_its_bin_with_a_normal_weight(dtype):
    # log-probabilities at LOG_TINY (a probability of 0; float32 rounds it below): their
    # bin stays occupied, with a weight that is a normal double (never a subnormal)
    raw = np.array([[LOG_TINY, -2.0, -0.2], [LOG_TINY, -1.0, -0.5]], dtype=dtype)
    z = np.maximum(raw, dtype(-6.0))
    out = histogram(z, np.ones(2), -6.0, 0.0, raw)
    assert out[0] > 0 and out[0] >= np.finfo(np.float64).tiny
    assert out[0] < 1e-300
    np.testing.assert_allclose(out.sum(), np.exp(raw[raw > -100].astype(float)).sum())
