"""Tests of benchmarks/scenarios_lib/contenders.py: the peers as users fit them, candidates."""

from __future__ import annotations

import numpy as np
import pytest
from scenarios_lib import contenders as ct
from scipy.special import expit, logit
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits


def scores(n=400, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    y = (rng.random(n) < expit(z.sum(axis=1))).astype(int)
    S = expit(2 * z)
    S[:3, 0] = 1.0  # saturated probabilities, as overfit scorers give
    return S, y


def peer(key):
    return next(c for c in ct.PEERS if c.key == key)


def test_lr_on_logits_is_logistic_regression_on_clipped_logits():
    S, y = scores()
    p = peer("lr_logit").make().fit(S, y).predict_proba(S)[:, 1]
    Z = logit(np.clip(S, 1e-6, 1 - 1e-6))
    ref = LogisticRegression(max_iter=1000).fit(Z, y).predict_proba(Z)[:, 1]
    np.testing.assert_allclose(p, ref, rtol=1e-6)


def test_logit_scale_leaves_columns_outside_the_unit_interval_as_they_are():
    S, _ = scores()
    raw = np.column_stack([S[:, 0], 5 * S[:, 1] - 1])
    Z = ct.LogitScale().fit(raw).transform(raw)
    np.testing.assert_array_equal(Z[:, 1], raw[:, 1])
    np.testing.assert_allclose(Z[:, 0], logit(np.clip(S[:, 0], 1e-6, 1 - 1e-6)))


def test_isotonic_on_mean_and_monotone_hgb_are_non_decreasing_in_every_score():
    S, y = scores()
    iso = ct.IsotonicOnMean().fit(S, y)
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(S.mean(axis=1), y)
    np.testing.assert_allclose(iso.predict_proba(S)[:, 1], ref.predict(S.mean(axis=1)))
    g = np.linspace(0, 1, 21)
    G = np.column_stack([a.ravel() for a in np.meshgrid(g, g, indexing="ij")])
    with threadpool_limits(limits=1):  # OpenMP threads spin on a busy machine: 0.2 s vs 10 s
        hgb = ct.MonotoneHGB().fit(S, y)
    for model in (iso, hgb):
        f = model.predict_proba(G)[:, 1].reshape(21, 21)
        assert np.all(np.diff(f, axis=0) >= -1e-12) and np.all(np.diff(f, axis=1) >= -1e-12)


def test_every_registered_method_is_a_contender_and_default_comes_first():
    import fusion

    keys = [c.key for c in ct.fusion_contenders()]
    assert keys == ["default", *fusion.METHODS]


def test_resolve_always_adds_the_reference():
    chosen, notes = ct.resolve(["default"], [])
    assert [c.key for c in chosen] == ["lr_logit", "default"] and "reference" in notes[0]
    everything, notes = ct.resolve(None, [])
    assert {"default", "lr_logit", "spline_lr_logit", "hgb_monotone"} <= {c.key for c in everything}
    assert not notes
    with pytest.raises(ValueError, match=r"unknown method\(s\) \['nope'\]"):
        ct.resolve(["nope"], [])


def test_candidate_from_a_module_or_a_file(tmp_path):
    cand = ct.parse_candidate("plainlr=sklearn.linear_model:LogisticRegression")
    assert cand.key == "plainlr" and cand.family == "candidate"
    assert isinstance(cand.make(), LogisticRegression)
    path = tmp_path / "proto.py"
    path.write_text(
        "from sklearn.linear_model import LogisticRegression\n"
        "def make():\n    return LogisticRegression(C=0.5)\n"
    )
    cand = ct.parse_candidate(f"proto={path}:make")
    assert cand.make().C == 0.5
    chosen, _ = ct.resolve(["lr_logit"], [cand])
    assert [c.key for c in chosen] == ["lr_logit", "proto"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("noequals", "NAME=module:callable"),
        ("x=sklearn.linear_model", "module:callable"),
        ("x=sklearn.linear_model:Nope", "has no attribute 'Nope'"),
        ("x=sklearn.preprocessing:StandardScaler", "lacks fit/predict_proba"),
    ],
)
def test_bad_candidates_are_value_errors(text, match):
    with pytest.raises(ValueError, match=match):
        ct.parse_candidate(text)


def test_a_candidate_may_not_shadow_a_built_in():
    cand = ct.parse_candidate("lr_logit=sklearn.linear_model:LogisticRegression")
    with pytest.raises(ValueError, match="taken by a built-in"):
        ct.resolve(None, [cand])
