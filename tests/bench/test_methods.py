"""Tests of fusion/bench/methods.py: discovery through the registry, skips, parameters."""

from __future__ import annotations

import importlib.util

import pytest

import fusion
from fusion import BernsteinFusion
from fusion.bench import methods as bm
from fusion.bench.peers import IsotonicMean, LogisticStacking, MonotoneLightGBM


def test_every_paper_method_comes_from_the_registry():
    keys = {m.key: m for m in bm.METHOD_TABLE}
    for key in ("bernstein", "copula", "mrmic", "rpr", "enir"):
        assert keys[key].registry == key and keys[key].peer is None


def test_unregistered_method_is_skipped_with_a_note(monkeypatch):
    registry = {"bernstein": BernsteinFusion}
    monkeypatch.setattr(fusion, "METHODS", registry)
    runnable, skipped = bm.resolve_methods(["bernstein", "copula", "isotonic"])
    assert [spec.key for spec, _ in runnable] == ["bernstein", "isotonic"]
    assert runnable[0][1] is BernsteinFusion and runnable[1][1] is IsotonicMean
    assert len(skipped) == 1 and "CopulaFusion" in skipped[0] and "'copula'" in skipped[0]


def test_missing_optional_package_is_skipped(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "lightgbm" else real(name)
    )
    runnable, skipped = bm.resolve_methods(["lightgbm", "logistic"])
    assert [spec.key for spec, _ in runnable] == ["logistic"]
    assert "lightgbm" in skipped[0] and "[bench]" in skipped[0]


def test_any_registered_method_can_be_named(monkeypatch):
    monkeypatch.setattr(fusion, "METHODS", {"bernstein": BernsteinFusion, "x": IsotonicMean})
    runnable, skipped = bm.resolve_methods(["x", "x"])
    assert [(s.key, s.label, c) for s, c in runnable] == [("x", "IsotonicMean", IsotonicMean)]
    assert not skipped


def test_logistic_rows_say_which_scale_they_fit_on():
    labels = {m.key: m.label for m in bm.METHOD_TABLE}
    assert labels["logistic"] == "LR stacking (logits)"
    assert labels["logistic_u"] == "LR stacking (u-scale)"


def test_unknown_method_is_a_value_error():
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        bm.resolve_methods(["nope"])


def test_build_sets_random_state_and_quick_grids_only_where_accepted():
    spec = {m.key: m for m in bm.METHOD_TABLE}
    est = bm.build(spec["bernstein_rank"], BernsteinFusion, random_state=7, quick=True)
    assert est.random_state == 7 and tuple(est.degree_grid) == (1, 2, 3, 4, 5)
    assert est.base is None and est.degree == "auto"  # the estimator's own default is kept
    full = bm.build(spec["bernstein_rank"], BernsteinFusion, random_state=7, quick=False)
    assert full.degree_grid is None
    default = bm.build(spec["bernstein"], BernsteinFusion, random_state=7, quick=True)
    assert default.get_params() == BernsteinFusion(random_state=7).get_params()
    iso = bm.build(spec["isotonic"], IsotonicMean, random_state=7, quick=True)
    assert iso.get_params() == {}
    lr = bm.build(spec["logistic"], LogisticStacking, random_state=1, quick=True)
    assert lr.Cs == 5 and lr.random_state == 1 and lr.scale == "logit"
    lr_u = bm.build(spec["logistic_u"], LogisticStacking, random_state=1, quick=False)
    assert lr_u.scale == "u" and lr_u.Cs == 10
    gbm = bm.build(spec["lightgbm"], MonotoneLightGBM, random_state=1, quick=False)
    assert gbm.param_grid is None
    # "combine" is passed to RPR/ENIR only if their estimator takes it.
    rpr = bm.MethodSpec("rpr", "RPR", registry="rpr", params={"combine": "mean"})
    assert bm.build(rpr, IsotonicMean, random_state=0, quick=False).get_params() == {}
