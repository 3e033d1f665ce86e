"""The (row, class) pairs of the class-shared model (fusion/bernstein/multiclass/pairs.py):
scales, the pooled normalization and the bins."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from fusion.bernstein.folds import FoldRule
from fusion.bernstein.multiclass.pairs import (
    HIST_BINS,
    SHARED_KNOTS,
    PairData,
    ScoreRange,
    detect_scale,
    histogram,
    knots_from_histogram,
    member_log_probabilities,
)
from fusion.bernstein.scale import log_probabilities


def _scores(n=300, M=2, C=5, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(n, M, C)) * 2
    return softmax(L, axis=2).astype(dtype), rng.integers(0, C, n)


def _scale(S, base):
    return detect_scale(ScoreRange.of(S), base)


def _range_numpy(S):
    """One scorer's range in NumPy passes: the reference of the compiled pass."""
    finite = np.isfinite(S)
    vals = S[finite]
    lo = float(vals.min()) if vals.size else np.inf
    hi = float(vals.max()) if vals.size else -np.inf
    with np.errstate(invalid="ignore"):
        dev = float(np.max(np.abs(S.sum(axis=1, dtype=np.float64) - 1.0))) if S.size else 0.0
    flags = bool(np.any(S == -np.inf)), bool(np.any(S == np.inf)), bool(np.isnan(S).any())
    return lo, hi, dev if np.isfinite(dev) else np.inf, *flags


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("case", ["plain", "neg_inf", "pos_inf", "nan", "empty"])
def test_score_ranges_compiled_equal_numpy(dtype, case):
    rng = np.random.default_rng(len(case))
    S = rng.normal(size=(200, 3, 7)) * 5
    if dtype is np.int64:
        S = np.rint(S)
    elif case != "plain":
        S[17, 1, 2] = {"neg_inf": -np.inf, "pos_inf": np.inf, "nan": np.nan}.get(case, 0.0)
    if case == "empty":
        S = S[:0]
    S = S.astype(dtype)
    got = ScoreRange.of_members(S)
    for m in range(3):
        want = _range_numpy(S[:, m, :])
        r = got[m]
        assert (r.lo, r.hi, r.neg_inf, r.pos_inf, r.nan) == (want[0], want[1], *want[3:])
        assert r.sum_dev == pytest.approx(want[2], rel=1e-12) or r.sum_dev == want[2]
        assert ScoreRange.of(S[:, m, :]) == r


def test_scale_is_decided_by_the_range_and_the_row_sums_unless_given():
    P, _ = _scores()
    P = P[:, 0]
    assert _scale(P, "auto") == "probability"
    assert _scale(np.log(P), "auto") == "logit"
    assert _scale(P, "identity") == "logit"  # the user says: these are logits
    with pytest.raises(ValueError, match=r"base='logit' takes class probabilities.*identity"):
        _scale(np.log(P), "logit")
    # one-vs-rest probabilities need not sum to one
    assert _scale(0.5 * P + 0.2, "auto") == "probability"


def test_probabilities_with_negative_values_are_refused():
    P, _ = _scores()
    P = P[:, 0].copy()
    P[0, :2] += [-0.05, 0.05]  # rows still sum to one, one value below 0
    P[0, 0] = -0.01
    P[0, 1] = 1 - P[0, 2:].sum() + 0.01
    with pytest.raises(ValueError, match=r"look like probabilities.*np.clip"):
        _scale(P, "auto")
    Q, _ = _scores()
    Q = Q[:, 0].copy()
    Q[0, 0] -= 1e-9  # a rounding error is a probability of 0
    assert _scale(Q, "auto") == "probability"


def test_minus_infinity_is_a_probability_of_zero():
    P, _ = _scores()
    P = P[:, 0].copy()
    P[:5, 0] = 0.0
    P /= P.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        L = np.log(P)  # -inf where P is 0
    assert _scale(L, "auto") == "logit"
    np.testing.assert_allclose(
        log_probabilities(L, "logit", floor=-40.0), log_probabilities(P, "probability", -40.0),
        atol=1e-12,
    )  # fmt: skip
    for bad, match in ((np.nan, "NaN"), (np.inf, r"\+inf")):
        L2 = L.copy()
        L2[3, 2] = bad
        with pytest.raises(ValueError, match=match):
            _scale(L2, "auto")


def test_normalization_is_strictly_increasing_inside_the_unit_interval():
    S, _ = _scores(2000, M=1, C=50, seed=4)
    z = log_probabilities(S[:, 0], "probability")
    h = histogram(z, np.ones(2000), float(z.min()), float(z.max()))
    assert h.shape == (HIST_BINS,)
    np.testing.assert_allclose(h.sum(), 2000.0)  # every row's probabilities sum to 1
    knots, values = knots_from_histogram(h, float(z.min()), float(z.max()))
    assert knots.shape[0] <= SHARED_KNOTS
    assert np.all(np.diff(knots) > 0) and np.all(np.diff(values) > 0)
    assert 0 < values[0] and values[-1] < 1


def test_the_normalization_weights_each_class_by_the_scorers_probability():
    # half the pairs at probability ~0 (classes never predicted): the weighted distribution
    # puts almost no mass there, so they sit at u ~ 0; under the scorer's own probabilities
    # u is uniform (mean 1/2), however many classes share the rest
    S, y = _scores(1000, M=1, C=20, seed=5)
    S[:, :, 10:] = 1e-9
    S /= S.sum(axis=2, keepdims=True)
    data = PairData(member_log_probabilities(S, ["probability"]), y, np.ones(1000), ["probability"])
    p = S[:, 0]
    u = data.axes[0].normalize(log_probabilities(p, "probability"))
    assert np.max(u[:, 10:]) < 1e-3
    assert abs(np.sum(p * u) / np.sum(p) - 0.5) < 0.01


def test_bins_hold_their_pairs_and_their_mean():
    S, y = _scores(500, M=2, C=8, seed=6, dtype=np.float32)
    Z = member_log_probabilities(S, ["probability"] * 2)
    fold, _ = FoldRule.of(5, 0).pair_folds(Z, y, 1.0)
    data = PairData(Z, y, np.ones(500), ["probability"] * 2, fold, 5)
    assert data.Z.dtype == np.float32 and data.B.dtype == np.int16
    for m, axis in enumerate(data.axes):
        z = data.Z[m].astype(float)
        b = data.B[m]
        edges = np.r_[-np.inf, axis.cuts, np.inf]
        assert np.all(z >= edges[b]) and np.all(z < edges[b + 1])
        for k in np.unique(b)[:20]:
            np.testing.assert_allclose(axis.zbar[k], z[b == k].mean(), rtol=1e-6)
        assert np.all(np.diff(axis.ubar) >= 0)
    # rows are stored fold after fold; every fold's test rows form one slice
    for f in range(5):
        a, c = data.bounds[f]
        np.testing.assert_array_equal(fold[data.order[a:c]], f)
