"""Tests of benchmarks/scenarios_lib/cli.py: options, limits, merging earlier runs."""

from __future__ import annotations

import pytest
from scenarios_lib import cli
from scenarios_lib.contenders import DEFAULT_MAX_N

pd = pytest.importorskip("pandas")


def test_max_n_overrides_and_lifts_the_defaults():
    assert cli._max_n([]) == DEFAULT_MAX_N
    assert cli._max_n(["mrmic=2000", "copula=10"]) == {"mrmic": 2000, "copula": 10}
    assert cli._max_n(["mrmic=none"]) == {}
    with pytest.raises(ValueError, match="KEY=N"):
        cli._max_n(["mrmic"])


def test_unknown_scenario_or_method_is_a_usage_error(capsys):
    for argv, text in (
        (["--scenarios", "nope"], "unknown scenario(s) ['nope']"),
        (["--methods", "nope"], "unknown method(s) ['nope']"),
        (["--candidate", "x=sklearn.preprocessing:StandardScaler"], "lacks fit/predict_proba"),
    ):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
        assert info.value.code == 2 and text in capsys.readouterr().err


def test_merge_keeps_other_methods_of_the_same_cells_only():
    here = [dict(scenario="a", seed=0, n_fuse=500, score_key="k", method="lr_logit")]
    previous = pd.DataFrame(
        [
            dict(scenario="a", seed=0, n_fuse=500, score_key="k", method="default", ece=0.1),
            dict(scenario="a", seed=0, n_fuse=500, score_key="k", method="lr_logit", ece=0.2),
            dict(scenario="a", seed=0, n_fuse=500, score_key="OLD", method="default", ece=0.3),
            dict(scenario="a", seed=1, n_fuse=500, score_key="k", method="default", ece=0.4),
        ]
    )
    kept, dropped = cli.merge_rows(here, previous, {"lr_logit"})
    assert [r["ece"] for r in kept] == [0.1] and dropped == 2


def test_merge_leaves_out_old_copies_of_a_method_fitted_now():
    # "bernstein" rows that copied the old default must not come back under their label
    here = [dict(scenario="a", seed=0, n_fuse=500, score_key="k", method="default")]
    previous = pd.DataFrame(
        [
            dict(scenario="a", seed=0, n_fuse=500, score_key="k", method="default", note=""),
            dict(
                scenario="a",
                seed=0,
                n_fuse=500,
                score_key="k",
                method="bernstein",
                note="= default",
            ),
            dict(scenario="a", seed=0, n_fuse=500, score_key="k", method="copula", note=""),
        ]
    )
    kept, dropped = cli.merge_rows(here, previous, {"default"})
    assert [r["method"] for r in kept] == ["copula"] and dropped == 0
