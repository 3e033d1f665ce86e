"""Tests of ``python -m fusion.bench`` (fusion/bench/cli.py)."""

from __future__ import annotations

import os
import urllib.error
from pathlib import Path

import pytest

from fusion import datasets as ds
from fusion.bench import cli
from fusion.datasets import _download as dl

pytest.importorskip("pandas")
pytest.importorskip("tqdm")

SHARED = Path(
    os.environ.get("FUSION_DATA_DIR") or Path(__file__).resolve().parents[3] / "shared" / "datasets"
)


def test_quick_run_on_the_shared_susy_copy(tmp_path, monkeypatch, capsys):
    if not (SHARED / "susy.csv.gz").is_file():
        pytest.skip(f"shared SUSY copy absent from {SHARED} (set FUSION_DATA_DIR)")
    monkeypatch.setenv("FUSION_DATA_DIR", str(SHARED))
    argv = [
        "--datasets",
        "susy",
        "--quick",
        "--methods",
        "bernstein",
        "isotonic",
        "--out",
        str(tmp_path / "out"),
        "--seed",
        "1",
    ]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "| Metric | Method | SUSY† |" in out and "BernsteinFusion" in out
    assert (tmp_path / "out" / "table.md").read_text() == out
    csv = (tmp_path / "out" / "rounds.csv").read_text().splitlines()
    assert len(csv) == 1 + 2  # header + one round x two methods


def test_missing_data_exits_with_the_reason(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("FUSION_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def offline(url, timeout):
        raise urllib.error.URLError("offline")

    monkeypatch.setattr(dl, "_urlopen", offline)
    code = cli.main(["--datasets", "dota2", "--methods", "isotonic", "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "dota2.csv.gz" in err and "FUSION_DATA_DIR" in err


def test_unknown_method_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--methods", "nope"])
    assert info.value.code == 2 and "unknown method 'nope'" in capsys.readouterr().err


def test_flags_and_defaults():
    args = cli.build_parser().parse_args([])
    assert args.datasets == list(ds.DATASETS) and args.rounds is None and args.seed == 0
    assert args.min_count == 1000 and not args.quick and args.out == "bench-out"
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--rounds", "0"])
