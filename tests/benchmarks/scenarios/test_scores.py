"""Tests of benchmarks/scenarios_lib/scores.py: scorer outputs, the cache and its keys."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scenarios_lib import scores as sc
from scenarios_lib.catalog import ScorerSpec
from sklearn.metrics import roc_auc_score

from ._toy import TOY, CountingLoader

pytest.importorskip("pandas")


def test_key_depends_on_the_scenario_the_seed_and_the_code_version(monkeypatch):
    key = sc.score_key(TOY, 0)
    assert key == sc.score_key(TOY, 0) and len(key) == 64
    assert sc.score_key(TOY, 1) != key
    bigger = dataclasses.replace(TOY, scorers=(ScorerSpec("lr", n_train=301), TOY.scorers[1]))
    assert sc.score_key(bigger, 0) != key
    assert sc.score_key(dataclasses.replace(TOY, n_test=999), 0) != key
    monkeypatch.setattr(sc, "SCORES_VERSION", sc.SCORES_VERSION + 1)
    assert sc.score_key(TOY, 0) != key


def test_build_scores_gives_probabilities_of_held_out_rows():
    loader = CountingLoader()
    ss = sc.build_scores(TOY, 0, loader("toy"))
    assert ss.S_pool.shape == (300, 2) and ss.S_test.shape == (1_000, 2)
    assert np.all((ss.S_pool >= 0) & (ss.S_pool <= 1))
    assert ss.scorer_auc[0] == pytest.approx(roc_auc_score(ss.y_test, ss.S_test[:, 0]))
    assert min(ss.scorer_auc) > 0.7
    S, y = ss.fusion_sample(100)
    assert np.array_equal(S, ss.S_pool[:100]) and np.array_equal(y, ss.y_pool[:100])
    with pytest.raises(ValueError, match="pool of 300"):
        ss.fusion_sample(301)


def test_cache_round_trip_skips_the_data_and_the_scorers(tmp_path):
    loader = CountingLoader()
    first, hit = sc.cached_scores(TOY, 3, tmp_path, loader)
    assert not hit and loader.calls == 1 and len(list(tmp_path.glob("toy-seed3-*.npz"))) == 1
    again, hit = sc.cached_scores(TOY, 3, tmp_path, loader)
    assert hit and loader.calls == 1
    for name in ("S_pool", "y_pool", "S_test", "y_test"):
        np.testing.assert_array_equal(getattr(again, name), getattr(first, name))
    assert again.scorer_auc == first.scorer_auc and again.key == first.key


def test_a_damaged_cache_file_is_rebuilt(tmp_path):
    loader = CountingLoader()
    sc.cached_scores(TOY, 0, tmp_path, loader)
    (path,) = tmp_path.glob("*.npz")
    path.write_bytes(b"not an npz")
    ss, hit = sc.cached_scores(TOY, 0, tmp_path, loader)
    assert not hit and loader.calls == 2 and ss.S_test.shape == (1_000, 2)
