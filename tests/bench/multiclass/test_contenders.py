"""Tests of fusion/bench/multiclass/contenders.py: the peers as users fit them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from fusion.bench.multiclass.contenders import (
    PEERS,
    BestSingle,
    SingleScorer,
    StackedLogLR,
    TemperatureAverage,
    fit_temperature,
    resolve,
    scorer_contenders,
)
from fusion.bench.multiclass.speed import simulate_scores


def posterior_sample(n: int, C: int, seed: int):
    rng = np.random.default_rng(seed)
    z = 1.5 * rng.normal(size=(n, C))
    truth = softmax(z, axis=1)
    y = np.minimum((rng.random(n)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1), C - 1)
    return z, y


@pytest.mark.parametrize("factor", [0.5, 2.0, 3.0])
def test_temperature_recovers_a_known_miscalibration(factor):
    z, y = posterior_sample(20_000, 5, seed=int(factor * 10))
    # logits multiplied by `factor`: the calibrating temperature is `factor`
    logp = np.log(softmax(factor * z, axis=1))
    assert fit_temperature(logp, y) == pytest.approx(factor, rel=0.06)


def test_temperature_average_calibrates_each_scorer_then_averages():
    S, y = simulate_scores(6000, C=6, seed=1)
    model = TemperatureAverage().fit(S, y)
    # too hot (x2) and too cold (x0.5) scorers: temperatures near 2 and 0.5
    assert model.temperatures_[0] == pytest.approx(2.0, rel=0.1)
    assert model.temperatures_[1] == pytest.approx(0.5, rel=0.1)
    P = model.predict_proba(S[:5])
    L = np.log(np.clip(S[:5], 1e-6, 1.0))
    expected = np.mean(
        [softmax(L[:, m] / model.temperatures_[m], axis=1) for m in range(3)], axis=0
    )
    np.testing.assert_allclose(P, expected, rtol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)


def test_stacked_lr_uses_the_clipped_log_probabilities_of_every_scorer():
    S, y = simulate_scores(800, C=4, seed=2)
    S[0, 0, 0] = 0.0  # an exact zero is clipped, not -inf
    assert StackedLogLR._features(S)[0, 0] == pytest.approx(np.log(1e-6))
    raw = StackedLogLR(scale=False).fit(S, y)
    assert raw.model_.coef_.shape == (4, 12)
    scaled = StackedLogLR().fit(S, y)
    for model in (raw, scaled):
        P = model.predict_proba(S)
        assert np.all(np.isfinite(P)) and P.shape == (800, 4)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    # standardizing is an affine map of the features: same model class, other penalty
    assert not np.allclose(raw.predict_proba(S), scaled.predict_proba(S))


def test_best_single_picks_the_scorer_of_lowest_fusion_log_loss():
    S, y = simulate_scores(3000, C=5, seed=3)
    # the biased scorer (3) is closer to the truth than the x2 and x0.5 ones here
    losses = [-np.mean(np.log(S[np.arange(3000), m, y])) for m in range(3)]
    model = BestSingle().fit(S, y)
    assert model.scorer_ == int(np.argmin(losses))
    np.testing.assert_array_equal(model.predict_proba(S), S[:, model.scorer_])
    np.testing.assert_array_equal(SingleScorer(1).fit(S, y).predict_proba(S), S[:, 1])


def test_resolve_always_adds_the_peers_and_checks_names():
    keys = [c.key for c in resolve(["enir"], [])]
    assert keys == ["enir", *(p.key for p in PEERS)]
    assert [c.key for c in resolve(None, [])][0] == "default"
    with pytest.raises(ValueError, match="unknown method"):
        resolve(["nope"], [])
    with pytest.raises(ValueError, match="taken by a built-in"):
        resolve(["enir"], ["lr_logp=fusion.bench.multiclass.contenders:StackedLogLR"])
    (cand,) = [
        c
        for c in resolve(["enir"], ["mine=fusion.bench.multiclass.contenders:BestSingle"])
        if c.family == "candidate"
    ]
    assert cand.key == "mine" and isinstance(cand.make(), BestSingle)


def test_raw_scorer_rows_are_named_by_position_and_kind():
    rows = scorer_contenders(("hgb", "rf"))
    assert [c.key for c in rows] == ["scorer1_hgb", "scorer2_rf"]
    assert [c.make().m for c in rows] == [0, 1] and {c.family for c in rows} == {"scorer"}
