"""The scores on their own scale (fusion/bernstein/scale.py): the binary model's features,
multi-class log-probabilities."""

import numpy as np
import pytest
from scipy.special import log_softmax, softmax

from fusion import ECDFNormalizer
from fusion.bernstein.scale import (
    LOG_TINY,
    InverseECDF,
    choose_bases,
    log_probabilities,
    logit_clips,
    own_scale,
    scale_constants,
    scores_scale,
    transform_scores,
)
from fusion.ecdf.sketch import sketch_column


@pytest.mark.parametrize("knots", [None, 40])
def test_inverse_ecdf_returns_the_scores_inside_and_winsorizes_outside(knots):
    rng = np.random.default_rng(0)
    S = np.column_stack([rng.standard_t(3, 2000), rng.random(2000).round(2)])
    if knots is None:
        ecdf = ECDFNormalizer().fit(S)
    else:
        cols = [sketch_column(S[:, j], knots) for j in range(2)]
        ecdf = ECDFNormalizer.from_knots([c[0] for c in cols], [c[1] for c in cols])
    inverse = InverseECDF(ecdf.knots_, ecdf.values_)
    T = np.vstack([S[:300], rng.standard_t(3, (300, 2)) * 3])
    U = ecdf.transform(T)
    lo, hi = S.min(0), S.max(0)
    for j in range(2):
        back = inverse.column(U[:, j], j)
        np.testing.assert_allclose(back, np.clip(T[:, j], lo[j], hi[j]), rtol=1e-12, atol=1e-12)
    bases = ("identity", "identity")
    shift, scale = scale_constants(inverse, bases)
    np.testing.assert_allclose(
        own_scale(U, inverse, bases, shift, scale),
        scores_scale(T, lo, hi, bases, shift, scale),
        atol=1e-11,
    )


def test_choose_bases_and_logit():
    knots = [np.array([0.0, 0.5, 1.0]), np.array([-2.0, 3.0])]
    assert choose_bases("auto", knots) == ("logit", "identity")
    assert choose_bases("identity", knots) == ("identity", "identity")
    with pytest.raises(ValueError, match="column 1"):
        choose_bases("logit", knots)
    z = transform_scores(np.array([0.0, 1e-7, 0.5, 1.0]), "logit")
    np.testing.assert_allclose(z, [np.log(1e-6 / (1 - 1e-6)), z[0], 0.0, -z[0]])


def test_standardization_is_equivariant_to_the_unit():
    rng = np.random.default_rng(1)
    S = rng.normal(size=(500, 1))
    a = ECDFNormalizer().fit(S)
    b = ECDFNormalizer().fit(S * 40 - 3)
    za = own_scale(
        a.transform(S),
        InverseECDF(a.knots_, a.values_),
        ("identity",),
        *scale_constants(InverseECDF(a.knots_, a.values_), ("identity",)),
    )
    inv_b = InverseECDF(b.knots_, b.values_)
    zb = own_scale(
        b.transform(S * 40 - 3), inv_b, ("identity",), *scale_constants(inv_b, ("identity",))
    )
    np.testing.assert_allclose(za, zb, atol=1e-12)


def test_logits_give_the_log_probabilities_of_their_softmax():
    rng = np.random.default_rng(1)
    L = rng.normal(size=(50, 7)) * 3 + rng.normal(size=(50, 1)) * 10  # any row shift
    z = log_probabilities(L, "logit")
    np.testing.assert_allclose(z, log_softmax(L, axis=1), atol=1e-12)
    np.testing.assert_allclose(log_probabilities(softmax(L, axis=1), "probability"), z, atol=1e-9)
    # probabilities are normalized: a row that sums to 0.99 means the same distribution
    np.testing.assert_allclose(
        log_probabilities(0.99 * softmax(L, axis=1), "probability"), z, atol=1e-9
    )


def test_zero_probabilities_become_the_floor_not_minus_infinity():
    p = np.array([[0.0, 0.25, 0.75], [1e-300, 0.5, 0.5]])
    z = log_probabilities(p, "probability")
    assert np.all(np.isfinite(z)) and z[0, 0] == LOG_TINY
    assert log_probabilities(p, "probability", floor=-20.0)[0, 0] == -20.0
    assert log_probabilities(p.astype(np.float32), "probability").dtype == np.float32


def test_a_row_of_zero_probabilities_is_the_uniform_distribution():
    # it says nothing, as equal logits do; both read the same, so a network of zero logits
    # (which "auto" reads as probabilities) gives what its log-softmax gives
    p = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0]])
    z = log_probabilities(p, "probability")
    np.testing.assert_allclose(z[0], log_probabilities(np.zeros((1, 4)), "logit")[0], atol=1e-15)
    assert z[1, 0] == LOG_TINY and z[1, 1] == pytest.approx(np.log(0.5))
    assert np.all(
        log_probabilities(p.astype(np.float32), "probability")[0] == np.float32(-np.log(4))
    )


def test_logit_clips_read_a_rounded_zero_as_below_the_smallest_reported_score():
    grid = np.round(np.linspace(0, 1, 101), 2)  # scores to two decimals, 0 and 1 included
    clips = logit_clips([grid, np.array([0.2, 0.5, 0.7]), np.array([0.0, 1.0]),
                         np.array([0.0, 1e-9, 0.4]), np.array([0.3, 0.97, 1.0])])  # fmt: skip
    np.testing.assert_allclose(clips[0], [0.005, 0.995])
    np.testing.assert_array_equal(clips[1], [1e-6, 1 - 1e-6])  # no 0 or 1: the fixed clip
    np.testing.assert_array_equal(clips[2], [1e-6, 1 - 1e-6])  # nothing inside (0, 1)
    np.testing.assert_array_equal(clips[3], [1e-6, 1 - 1e-6])  # 1e-9 / 2 is below 1e-6
    np.testing.assert_allclose(clips[4], [1e-6, 0.985])
    # distinct training scores keep distinct, increasing features
    for knots, clip in (
        (grid, clips[0]),
        (np.array([0.0, 0.5, 1.0]), logit_clips([[0, 0.5, 1]])[0]),
    ):
        z = transform_scores(knots, "logit", tuple(clip))
        assert np.all(np.diff(z) > 0)
    assert transform_scores(np.array([0.0]), "logit", tuple(clips[0]))[0] == pytest.approx(
        np.log(0.005 / 0.995)
    )


def test_rounded_probabilities_fit_better_with_the_data_clip(monkeypatch):
    # two-decimal probabilities of two scorers (0.2 % of them exactly 0 or 1): the fixed
    # clip read a 0 as a logit of -13.8 and pulled the linear fit
    from scipy.special import expit
    from sklearn.metrics import log_loss

    import fusion
    import fusion.bernstein.scale as scale

    def draw(rng, n):
        z = rng.normal(size=n)
        y = (rng.random(n) < expit(1.5 * z - 0.5)).astype(int)
        S = expit(np.array([2.5, 1.2]) * z[:, None] + rng.normal(size=(n, 2)) * [0.6, 1.2])
        return np.round(S, 2), y

    gains = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        S, y = draw(rng, 1_000)
        St, yt = draw(rng, 20_000)
        assert np.any((S == 0) | (S == 1))
        new = fusion.fit(S, y, lam=np.inf)
        with monkeypatch.context() as m:
            m.setattr(
                scale, "logit_clips", lambda knots: np.tile([1e-6, 1 - 1e-6], (len(knots), 1))
            )
            old = fusion.fit(S, y, lam=np.inf)
        assert new.base_clip_[0, 0] == 0.005 and old.base_clip_[0, 0] == 1e-6
        gains.append(
            log_loss(yt, old.predict_proba(St)[:, 1]) - log_loss(yt, new.predict_proba(St)[:, 1])
        )
    assert min(gains) > 0 and np.mean(gains) > 1e-3, gains


def test_a_model_saved_before_the_data_clip_loads_with_the_fixed_one(tmp_path, monkeypatch):
    import fusion
    import fusion.bernstein.scale as scale

    rng = np.random.default_rng(7)
    z = rng.normal(size=800)
    y = (rng.random(800) < 1 / (1 + np.exp(-2 * z))).astype(int)
    S = np.round(1 / (1 + np.exp(-(np.c_[2 * z, z] + rng.normal(size=(800, 2))))), 2)
    model = fusion.fit(S, y)
    model.save(tmp_path / "new.fusion")
    loaded = fusion.load(tmp_path / "new.fusion")
    np.testing.assert_array_equal(loaded.base_clip_, model.base_clip_)
    np.testing.assert_array_equal(loaded.predict_proba(S), model.predict_proba(S))
    with monkeypatch.context() as m:
        m.setattr(scale, "logit_clips", lambda knots: np.tile([1e-6, 1 - 1e-6], (len(knots), 1)))
        old = fusion.fit(S, y)
    del old.base_clip_  # as written before base_clip_ existed
    old.save(tmp_path / "old.fusion")
    again = fusion.load(tmp_path / "old.fusion")
    assert getattr(again, "base_clip_", None) is None
    np.testing.assert_array_equal(again.predict_proba(S), old.predict_proba(S))
    assert not np.array_equal(again.predict_proba(S), model.predict_proba(S))
