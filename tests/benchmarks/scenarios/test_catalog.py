"""Tests of benchmarks/scenarios_lib/catalog.py: the scenario sets and the row splits."""

from __future__ import annotations

import numpy as np
import pytest
from scenarios_lib import catalog as C

from fusion.datasets import DATASETS


def test_split_rows_gives_disjoint_parts_of_the_requested_sizes():
    spec = (C.ScorerSpec("lr", n_train=300),) * 2
    scen = C.Scenario("t", "adult", "r", spec, (100, 400), 1_100)
    train, pool, test = C.split_rows(2_500, scen, np.random.default_rng(0))
    assert [len(t) for t in train] == [300, 300] and len(pool) == 400 and len(test) == 1_100
    together = np.concatenate([*train, pool, test])
    assert np.unique(together).size == together.size == 2_100


def test_split_rows_shrinks_the_test_set_to_the_rows_left_and_refuses_too_few():
    scen = C.Scenario("t", "adult", "r", (C.ScorerSpec("lr", n_train=300),) * 2, (500,), 10**6)
    assert len(C.split_rows(3_000, scen, np.random.default_rng(0))[2]) == 1_900
    with pytest.raises(ValueError, match="leave 500 test rows"):
        C.split_rows(1_600, scen, np.random.default_rng(0))


def test_the_shipped_sets_cover_what_issue_12_asks_for():
    for scenarios in (C.MAIN, C.HOLDOUT):
        assert {s.dataset for s in scenarios} == set(DATASETS)
        assert {s.M for s in scenarios} >= {2, 3, 4}
        assert len({s.name for s in scenarios}) == len(scenarios)
    roles = " ".join(s.role for s in C.MAIN)
    for role in ("sharp pair", "tied/saturated pair", "weak pair", "rare positives"):
        assert role in roles
    kinds_main = {x.kind for s in C.MAIN for x in s.scorers}
    kinds_holdout = {x.kind for s in C.HOLDOUT for x in s.scorers}
    assert {"et", "svc"} <= kinds_holdout - kinds_main
    assert not set(C.MAIN_SEEDS) & set(C.HOLDOUT_SEEDS)
    assert all(max(s.n_fuse) == 10_000 for s in C.MAIN if s.dataset != "susy")


def test_every_scenario_fits_its_data_set():
    # Row counts of the shared copies (fusion.datasets README); SUSY is the 10,000-row copy.
    rows = {"adult": 48_842, "census": 299_285, "covertype": 581_012, "dota2": 102_944,
            "susy": 10_000}  # fmt: skip
    for s in C.MAIN + C.HOLDOUT:
        train, pool, test = C.split_rows(rows[s.dataset], s, np.random.default_rng(0))
        assert len(test) >= 5_000, s.name


def test_bad_scenarios_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="unknown scorer kind 'xgb'"):
        C.Scenario("t", "adult", "r", (C.ScorerSpec("xgb"), C.ScorerSpec("lr")))
    with pytest.raises(ValueError, match="no feature set 'heroes' for adult"):
        C.Scenario("t", "adult", "r", (C.ScorerSpec("lr", "heroes"), C.ScorerSpec("lr")))
    with pytest.raises(ValueError, match="at least 2 scorers"):
        C.Scenario("t", "adult", "r", (C.ScorerSpec("lr"),))


def test_scorer_notation_gives_kind_features_and_training_rows():
    assert C._scorers("hgb_overfit[work]:3000 knn:5000") == (
        C.ScorerSpec("hgb_overfit", "work", 3_000),
        C.ScorerSpec("knn", "all", 5_000),
    )
    for bad in ("lr[work]", "lr:5k", "lr[work:5000"):
        with pytest.raises(ValueError, match=r"expected kind\[features\]:n_train"):
            C._scorers(bad)


def test_susy_scenarios_take_the_small_sizes_and_the_others_the_defaults():
    for s in C.MAIN + C.HOLDOUT:
        small = s.dataset == "susy"
        assert s.n_fuse == ((500, 2_000) if small else (500, 2_000, 10_000)), s.name
        assert s.n_test == (5_000 if small else 50_000), s.name
