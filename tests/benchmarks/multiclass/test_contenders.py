"""Tests of benchmarks/multiclass_lib/contenders.py: the peers as users fit them."""

from __future__ import annotations

import numpy as np
import pytest
from multiclass_lib.contenders import (
    FUSION,
    LOG_CLIP,
    PEERS,
    BestSingleTS,
    DirichletLR,
    MemberTemperatureAverage,
    RawMember,
    TemperatureOfAverage,
    VectorScaling,
    _nll,
    average_log_probabilities,
    fit_temperature,
    log_probabilities,
    member_contenders,
    resolve,
)
from scipy.special import softmax


def tempered(n: int, C: int, factors, seed: int, bias=None):
    """Labels from ``softmax(z)`` and members ``softmax(f z + bias)`` for each factor."""
    rng = np.random.default_rng(seed)
    z = 1.5 * rng.normal(size=(n, C))
    truth = softmax(z, axis=1)
    y = np.minimum((rng.random(n)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1), C - 1)
    b = np.zeros(C) if bias is None else bias
    S = np.stack([softmax(f * z + b, axis=1) for f in factors], axis=1)
    return S, y


@pytest.mark.parametrize("factor", [0.5, 2.0, 3.0])
def test_temperature_recovers_a_known_miscalibration(factor):
    S, y = tempered(20_000, 5, [factor], seed=int(factor * 10))
    assert fit_temperature(np.log(S[:, 0]), y) == pytest.approx(factor, rel=0.05)


def test_ts_of_the_average_recovers_the_mean_factor():
    # the averaged log-probabilities are (a + b) / 2 times the true logits, up to a row shift
    S, y = tempered(20_000, 8, [1.0, 3.0], seed=1)
    model = TemperatureOfAverage().fit(S, y)
    assert model.temperature_ == pytest.approx(2.0, rel=0.05)
    P = model.predict_proba(S[:5])
    L = (np.log(S[:5, 0]) + np.log(S[:5, 1])) / 2
    np.testing.assert_allclose(P, softmax(L / model.temperature_, axis=1), rtol=1e-10)


def test_log_probabilities_are_clipped_and_averaged_in_double_precision():
    S = np.array([[[0.0, 1.0], [0.5, 0.5]]], dtype=np.float32)
    L = log_probabilities(S)
    assert L.dtype == np.float64 and L[0, 0, 0] == pytest.approx(np.log(LOG_CLIP))
    np.testing.assert_allclose(
        average_log_probabilities(S), [[(np.log(LOG_CLIP) + np.log(0.5)) / 2, np.log(0.5) / 2]]
    )


def test_member_temperatures_then_average():
    S, y = tempered(10_000, 6, [2.0, 0.5], seed=2)
    model = MemberTemperatureAverage().fit(S, y)
    np.testing.assert_allclose(model.temperatures_, [2.0, 0.5], rtol=0.08)
    expected = np.mean(
        [softmax(np.log(S[:5, m]) / model.temperatures_[m], axis=1) for m in range(2)], axis=0
    )
    np.testing.assert_allclose(model.predict_proba(S[:5]), expected, rtol=1e-10)


def test_vector_scaling_nests_temperature_scaling():
    S, y = tempered(5_000, 6, [2.0, 2.0], seed=3)
    ts = TemperatureOfAverage().fit(S, y)
    vs = VectorScaling().fit(S, y)
    L = average_log_probabilities(S)
    ts_loss = _nll(L / ts.temperature_, y)
    vs_loss = _nll(L * vs.scale_ + vs.bias_, y)
    assert vs_loss <= ts_loss + 1e-12
    # a tempered truth: the per-class scales stay near 1 / T and the biases near 0
    np.testing.assert_allclose(vs.scale_, 1 / ts.temperature_, rtol=0.15)
    assert np.abs(vs.bias_ - vs.bias_.mean()).max() < 0.15
    P = vs.predict_proba(S)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)


def test_vector_scaling_corrects_a_class_bias_temperature_scaling_cannot():
    bias = np.array([1.5, 0, 0, 0, 0])
    S, y = tempered(20_000, 5, [1.0], seed=4, bias=bias)
    S_test, y_test = tempered(20_000, 5, [1.0], seed=5, bias=bias)
    vs = VectorScaling().fit(S, y)
    b = vs.bias_ - vs.bias_[1:].mean()
    assert b[0] == pytest.approx(-1.5, abs=0.15)
    ts = TemperatureOfAverage().fit(S, y)
    idx = np.arange(20_000)
    vs_loss = -np.mean(np.log(vs.predict_proba(S_test)[idx, y_test]))
    ts_loss = -np.mean(np.log(ts.predict_proba(S_test)[idx, y_test]))
    assert vs_loss < ts_loss - 0.02


def test_best_single_after_ts_picks_the_member_closest_to_the_truth():
    rng = np.random.default_rng(60)
    S, y = tempered(5_000, 5, [3.0, 0.5, 1.0], seed=6)
    noisy = softmax(np.log(S[:, 2]) + 2.0 * rng.normal(size=(5_000, 5)), axis=1)
    S = np.stack([noisy, S[:, 1], S[:, 0]], axis=1)  # members 2 and 3 are tempered truths
    model = BestSingleTS().fit(S, y)
    assert model.member_ in (1, 2)
    assert model.losses_[0] > max(model.losses_[1:])
    np.testing.assert_allclose(
        model.predict_proba(S[:3]),
        softmax(np.log(S[:3, model.member_]) / model.temperatures_[model.member_], axis=1),
    )
    # two equally good members after TS: the one with the lower loss is picked, exactly
    assert model.member_ == int(np.argmin(model.losses_))


def test_dirichlet_keeps_every_class_column():
    S, y = tempered(300, 4, [1.0, 2.0], seed=7)
    keep = y != 3  # class 3 absent from the fusion sample
    model = DirichletLR().fit(S[keep], y[keep])
    P = model.predict_proba(S)
    assert P.shape == (300, 4) and np.all(P[:, 3] == 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)


def test_raw_member_and_member_rows():
    S, y = tempered(50, 3, [1.0, 2.0], seed=8)
    np.testing.assert_array_equal(RawMember(1).fit(S, y).predict_proba(S), S[:, 1])
    rows = member_contenders(("hot", "cold"))
    assert [c.key for c in rows] == ["member1_hot", "member2_cold"]
    assert {c.family for c in rows} == {"member"} and rows[1].make().m == 1


def test_skip_rules():
    skip = {c.key: c for c in (*FUSION, *PEERS)}
    assert skip["per_class"].skip_reason(1_000, 3, 10) is None
    assert "C >= 50" in skip["per_class"].skip_reason(1_000, 3, 100)
    assert skip["dirichlet"].skip_reason(2_000, 4, 100) is None  # 8e7 <= 1e8
    assert "time" in skip["dirichlet"].skip_reason(10_000, 4, 100)
    assert "parameters" in skip["dirichlet"].skip_reason(100, 4, 1000)
    assert skip["default"].skip_reason(10**6, 4, 1000) is None


def test_resolve():
    assert [c.key for c in resolve(None, [])] == [
        "default", "per_class", "ts_avg", "ts_members", "vector", "dirichlet", "best_ts"
    ]  # fmt: skip
    assert [c.key for c in resolve(["vector"], [])] == ["default", "ts_avg", "vector"]
    with pytest.raises(ValueError, match="unknown method"):
        resolve(["nope"], [])
    target = "multiclass_lib.contenders:BestSingleTS"
    with pytest.raises(ValueError, match="taken by a built-in"):
        resolve(["vector"], [f"ts_avg={target}"])
    (cand,) = [c for c in resolve(["vector"], [f"mine={target}"]) if c.family == "candidate"]
    assert cand.key == "mine" and isinstance(cand.make(), BestSingleTS)
