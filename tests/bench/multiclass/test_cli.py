"""A tiny end-to-end run of the multi-class benchmark (toy data, fast contenders) and the
command line's usage errors."""

from __future__ import annotations

import numpy as np
import pytest

from fusion.bench.multiclass import cli
from fusion.bench.multiclass.contenders import resolve
from fusion.bench.multiclass.data import Setup
from fusion.bench.multiclass.report import markdown, read, write
from fusion.bench.multiclass.runner import RunConfig, run
from fusion.bench.multiclass.speed import measure, simulate_scores, speed_lines

from .test_data import toy_data

pytest.importorskip("pandas")
pytest.importorskip("tqdm")


def test_end_to_end_on_toy_data(tmp_path):
    setup = Setup("toy", "toy", ("gnb", "rf"), 150, (120, 240), 300, (0, 1))
    config = RunConfig(setups=(setup,), max_n={"platt": 120}, cache_dir=str(tmp_path / "c"))
    result = run(
        config, resolve(["enir", "platt"], []), loader=lambda name: toy_data(1200), progress=False
    )
    # 2 seeds x 2 sizes x (2 scorers + enir + platt + 4 peers)
    assert len(result.rows) == 32
    ok = [r for r in result.rows if r["status"] == "ok"]
    skipped = [r for r in result.rows if r["status"] == "skipped"]
    assert len(skipped) == 2 and all(r["method"] == "platt" and r["n_fuse"] == 240 for r in skipped)
    assert len(ok) == 30 and all(np.isfinite(r["log_loss"]) for r in ok)
    command = "python benchmarks/bench_multiclass.py --toy"
    text = markdown(result, command)
    assert "### `toy`, n_fuse = 240 (2 seeds)" in text and "| enir (one-vs-rest) |" in text
    assert "| scorer 2 (rf), raw |" in text and "`enir (one-vs-rest)` per cell" in text
    paths = write(result, str(tmp_path / "out"), command)
    assert all(p.is_file() for p in paths)
    # the files rebuild the same report
    again, command_again, speed, quick = read(str(tmp_path / "out"), setups=(setup,))
    assert markdown(again, command_again, speed, quick) == text


def test_speed_section_reports_a_ratio_for_each_method():
    S, y = simulate_scores(300, C=4)
    assert S.shape == (300, 3, 4) and set(y) == {0, 1, 2, 3}
    rows = measure(resolve(["enir"], [])[:1], n=300, C=4, repeats=1)
    lines = speed_lines(rows)
    assert rows[0]["ratio_lr_raw"] > 0 and rows[0]["ratio_lr_scaled"] > 0
    assert rows[0]["method"] == "enir"
    assert any(line.startswith("| enir (one-vs-rest) |") for line in lines)


def test_usage_errors(capsys):
    for argv, text in (
        (["--setups", "nope"], "unknown setup(s) ['nope']"),
        (["--methods", "nope"], "unknown method(s) ['nope']"),
        (["--methods", "enir", "--speed-methods", "default"], "--speed-methods ['default']"),
        (["--max-n", "enir"], "KEY=N"),
    ):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
        assert info.value.code == 2 and text in capsys.readouterr().err


def test_speed_only_run_writes_its_report(tmp_path, capsys):
    argv = ["--speed-only", "--methods", "enir", "--speed-methods", "enir", "--speed-n", "300",
            "--speed-classes", "4", "--speed-repeats", "1", "--out", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "### Fit time: 4 classes x 3 scorers x 300 rows" in out
    assert (tmp_path / "speed.json").is_file() and (tmp_path / "report.md").is_file()
