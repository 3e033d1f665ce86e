"""Tiny end-to-end runs of the multi-class benchmark (the command line, the loop on a
trained toy setup, the speed section at toy sizes) and the command line's usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from multiclass_lib import cli
from multiclass_lib.contenders import resolve
from multiclass_lib.data import Setup
from multiclass_lib.report import markdown, read
from multiclass_lib.runner import RunConfig, run
from multiclass_lib.speed import measure, measure_memory, memory_lines, speed_lines
from threadpoolctl import threadpool_limits

from .test_data import toy_data

pytest.importorskip("pandas")
pytest.importorskip("tqdm")


def test_quick_synthetic_cell_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["--quick", "--setups", "syn10", "--methods", "vector", "--no-speed",
            "--no-progress", "--out", str(out)]  # fmt: skip
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "### Main set: the issue's check" in text and "| `syn10` 1,000 |" in text
    assert "| true posterior |" in text and "| vector scaling |" in text
    assert "Held-out set" not in text  # syn10 is in the main set only
    fits = (out / "fits.csv").read_text()
    methods = {line.split(",")[fits.splitlines()[0].split(",").index("method")]
               for line in fits.splitlines()[1:]}  # fmt: skip
    assert methods == {"member1_hot", "member2_cold", "member3_smoothed", "default", "ts_avg",
                       "vector", "truth"}  # fmt: skip
    check = (out / "check.csv").read_text()
    assert "syn10" in check
    # the saved files rebuild the same report
    assert cli.main(["--report-from", str(out)]) == 0
    assert capsys.readouterr().out == text
    assert markdown(*read(str(out))) == text


def test_a_trained_setup_with_skips(tmp_path):
    setup = Setup("toy", "toy", ("gnb", "rf"), 150, (120, 240), 300, (0, 1))
    config = RunConfig(setups=(setup,), max_n={"vector": 120}, cache_dir=str(tmp_path / "c"))
    with threadpool_limits(limits=1):
        result = run(
            config, resolve(["vector"], []), loader=lambda name: toy_data(1200), progress=False
        )
    # 2 seeds x 2 sizes x (2 members + default + ts_avg + vector); no truth
    assert len(result.rows) == 20 and not any(r["method"] == "truth" for r in result.rows)
    skipped = [r for r in result.rows if r["status"] == "skipped"]
    assert [(r["method"], r["n_fuse"]) for r in skipped] == [("vector", 240)] * 2
    ok = [r for r in result.rows if r["status"] == "ok"]
    assert len(ok) == 18 and all(np.isfinite(r["log_loss"]) for r in ok)
    # labels were mapped to class indices: the default predicts 3 columns
    assert all(r["C"] == 3 for r in result.rows)
    default = [r for r in ok if r["method"] == "default"]
    assert all("lam_" in r["detail"] for r in default)
    text = markdown(result, "cmd")
    assert "| `toy` 240 |" in text and "skipped: not fitted above n_fuse = 120" in text


def test_speed_section_at_toy_sizes():
    sizes = {
        "ts": {"C": 20, "M": 2, "n": 300},
        "lr": {"C": 10, "M": 3, "n": 300},
        "memory": None,
        "scaling": {20: (150, 300)},
    }
    with threadpool_limits(limits=1):  # BLAS threads on a busy machine: slower, not faster
        speed = measure(repeats=1, sizes=sizes)
    assert speed["ts"]["ratio"] > 0 and speed["lr"]["ratio_lr_raw"] > 0
    assert speed["lr"]["ratio_lr_scaled"] > 0 and speed["memory"] is None
    # the n = 300 point of the scaling is the (a) fit itself
    assert [r["n"] for r in speed["scaling"]] == [150, 300]
    assert speed["scaling"][1]["times"] == speed["ts"]["times"]["default"]
    lines = "\n".join(speed_lines(json.loads(json.dumps(speed))))
    assert "(a) vs TS of the average" in lines and "s per million pairs" in lines
    assert "(c) Peak memory" not in lines


def test_peak_memory_in_a_subprocess():
    import fusion

    mem = measure_memory(20, 2, 600)
    assert "error" not in mem, mem
    assert mem["dtype"] == "float32" and mem["input_bytes"] == 600 * 2 * 20 * 4
    assert mem["extra"] >= 0 and mem["ratio"] == mem["extra"] / mem["input_bytes"]
    # the subprocess fitted with the same fusion as this process
    assert mem["fusion"] == str(Path(fusion.__file__).resolve().parent)
    assert mem["predict_seconds"] > 0 and mem["ts_predict_seconds"] > 0
    lines = "\n".join(memory_lines(mem))
    assert "(c) Peak memory of the default fit at C = 20, M = 2, n = 600" in lines
    assert "`predict_proba` on the 600 rows" in lines


def test_usage_errors(capsys):
    for argv, text in (
        (["--setups", "nope"], "unknown setup(s) ['nope']"),
        (["--methods", "nope"], "unknown method(s) ['nope']"),
        (["--max-n", "vector"], "KEY=N"),
        (["--candidate", "x=nowhere"], "module:callable"),
    ):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
        assert info.value.code == 2 and text in capsys.readouterr().err


def test_sets_select_the_held_out_setups():
    args = cli.build_parser().parse_args(["--sets", "heldout"])
    chosen = cli._select(cli.build_parser(), args)
    assert chosen and all(s.group == "heldout" for s in chosen)
    quick = cli._select(cli.build_parser(), cli.build_parser().parse_args(["--quick"]))
    assert {s.name for s in quick} == {"digits", "syn10", "ho_useless100"}
