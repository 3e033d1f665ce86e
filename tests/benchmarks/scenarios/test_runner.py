"""Tests of benchmarks/scenarios_lib/runner.py and tables.py: a tiny run end to end."""

from __future__ import annotations

import numpy as np
import pytest
from scenarios_lib import contenders as ct
from scenarios_lib import runner as R
from scenarios_lib import tables
from scenarios_lib.scores import cached_scores

from fusion import metrics

from ._toy import TOY, CountingLoader

pd = pytest.importorskip("pandas")


class Broken:
    def fit(self, S, y):
        raise RuntimeError("prototype exploded")

    def predict_proba(self, S):  # pragma: no cover - never reached
        raise AssertionError


def contenders():
    chosen, _ = ct.resolve(["default", "bernstein", "lr_logit", "isotonic_mean"], [])
    return [*chosen, ct.Contender("broken", "broken (candidate)", Broken, "candidate")]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    config = R.RunConfig(
        scenarios=(TOY,), seeds=(0, 1), max_n={"isotonic_mean": 100}, cache_dir=str(cache)
    )
    loader = CountingLoader()
    result = R.run(config, contenders(), loader=loader, progress=False)
    return result, config, loader


def test_every_contender_runs_on_every_cell_and_seed(tiny):
    result, _, loader = tiny
    assert loader.calls == 1  # the data set is read once for both seeds
    fits = pd.DataFrame(result.rows)
    assert len(fits) == 2 * 2 * 5  # sizes x seeds x contenders
    status = fits.groupby(["method", "n_fuse"])["status"].agg(set).to_dict()
    assert status["isotonic_mean", 100] == {"ok"} and status["isotonic_mean", 300] == {"skipped"}
    assert status["broken", 100] == {"error"}
    assert "prototype exploded" in fits.loc[fits["method"] == "broken", "error"].iloc[0]
    assert (fits.loc[fits["status"] == "ok", "fit_seconds"] > 0).all()
    # The degrees the default's CV chose are recorded (edge-of-grid choices show up here).
    assert fits.loc[fits["method"] == "default", "selected"].str.startswith("degree_=").all()


def test_metrics_are_those_of_the_package_on_the_test_rows(tiny):
    result, config, loader = tiny
    ss, hit = cached_scores(TOY, 1, config.cache_dir, loader)
    assert hit
    S, y = ss.fusion_sample(300)
    model = ct.PEERS[0].make().fit(S, y)
    p = model.predict_proba(ss.S_test)[:, 1]
    fits = pd.DataFrame(result.rows)
    row = fits[(fits["method"] == "lr_logit") & (fits["seed"] == 1) & (fits["n_fuse"] == 300)]
    assert row["brier"].item() == pytest.approx(metrics.brier_score(ss.y_test, p))
    assert row["log_loss"].item() == pytest.approx(metrics.log_loss(ss.y_test, p))
    assert row["ece"].item() == pytest.approx(metrics.binned_ece(ss.y_test, p, n_bins=15))


def test_registered_method_equal_to_the_default_is_fitted_once(tiny):
    result, _, _ = tiny
    assert any("`bernstein` builds the same estimator" in n for n in result.notes)
    fits = pd.DataFrame(result.rows).set_index(["method", "seed", "n_fuse"])
    np.testing.assert_array_equal(
        fits.loc["bernstein", ["brier", "ece"]].to_numpy(),
        fits.loc["default", ["brier", "ece"]].to_numpy(),
    )


def test_a_rerun_reads_the_cache_and_repeats_the_numbers(tiny):
    result, config, _ = tiny
    loader = CountingLoader()
    again = R.run(config, contenders()[:3], loader=loader, progress=False)
    assert loader.calls == 0 and all(s["cached"] for s in again.scores)
    first = pd.DataFrame(result.rows).set_index(["method", "seed", "n_fuse"])
    second = pd.DataFrame(again.rows).set_index(["method", "seed", "n_fuse"])
    pd.testing.assert_frame_equal(
        second[["brier", "log_loss", "ece"]], first.loc[second.index, ["brier", "log_loss", "ece"]]
    )


def test_report_has_the_summary_and_per_metric_tables(tiny, tmp_path):
    result, _, _ = tiny
    md = tables.markdown(result, "python benchmarks/bench_scorers.py --x")
    assert "| `toy` | toy | test pair | 2 |" in md
    assert "| method | cells | Brier W / B |" in md
    assert "| `toy` 300 | " in md and "skip" in md
    assert "broken (candidate) failed in 4 fit(s): RuntimeError: prototype exploded" in md
    assert "15 equal-width bins" in md
    assert "fusion.fit default against LR on logits, per cell" in md
    assert "broken (candidate) against LR on logits, per cell" in md  # candidates get one too
    paths = tables.write(result, tmp_path / "out", "python benchmarks/bench_scorers.py --x")
    assert [p.name for p in paths] == [
        "report.md", "fits.csv", "cells.csv", "summary.csv", "scores.csv", "run.json"
    ]  # fmt: skip
    assert len(pd.read_csv(paths[1])) == len(result.rows)


def test_report_rebuilt_from_the_written_files_is_the_same(tiny, tmp_path, monkeypatch):
    result, _, _ = tiny
    from scenarios_lib import catalog

    # read() finds scenarios by name in the shipped sets; make the toy one of them.
    monkeypatch.setattr(tables, "MAIN", (*catalog.MAIN, TOY))
    tables.write(result, tmp_path / "out", "cmd")
    again, command = tables.read(tmp_path / "out")
    assert command == "cmd"
    assert tables.markdown(again, command) == tables.markdown(result, "cmd")
