"""Tests of fusion/datasets/_locate.py and the loaders' errors: search order, messages."""

from __future__ import annotations

import gzip
import urllib.error
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")

from fusion import datasets as ds  # noqa: E402
from fusion.datasets import _download as dl  # noqa: E402
from fusion.datasets import _registry as reg  # noqa: E402


def tiny_adult(directory: Path, label: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    row = (
        "39,State-gov,77516,Bachelors,13,Never-married,Adm-clerical,Not-in-family,White,Male,"
        f"0,0,40,United-States,{label}"
    )
    text = ",".join(reg.ADULT_COLUMNS) + "\n" + row + "\n"
    (directory / "adult.csv.gz").write_bytes(gzip.compress(text.encode()))


def test_search_order_data_home_then_env_then_cache(isolated, monkeypatch):
    home, env, cache = isolated / "home", isolated / "env", isolated / "cache" / "fusion"
    tiny_adult(cache, "<=50K")
    assert ds.load_adult(return_X_y=True)[1].tolist() == [0]
    tiny_adult(env, ">50K")
    monkeypatch.setenv("FUSION_DATA_DIR", str(env))
    assert ds.load_adult(return_X_y=True)[1].tolist() == [1]
    tiny_adult(home, "<=50K")
    assert ds.load_adult(data_home=home, return_X_y=True)[1].tolist() == [0]
    assert ds.get_data_home() == cache


def test_missing_file_without_download_names_file_and_place(isolated):
    with pytest.raises(ds.DatasetNotFoundError) as info:
        ds.load_dota2(data_home=isolated / "nowhere", download_if_missing=False)
    msg = str(info.value)
    assert "dota2.csv.gz" in msg and "FUSION_DATA_DIR" in msg
    assert "dota2Dataset.zip" in msg and str(isolated / "nowhere") in msg


def test_offline_download_gives_a_clear_error(isolated, monkeypatch):
    def offline(url, timeout):
        raise urllib.error.URLError("Temporary failure in name resolution")

    monkeypatch.setattr(dl, "_urlopen", offline)
    with pytest.raises(ds.DatasetNotFoundError) as info:
        ds.load_covertype()
    msg = str(info.value)
    assert "could not download" in msg and "covtype.data.gz" in msg and "covtype.csv.gz" in msg
    assert not list((isolated / "cache" / "fusion").glob("*.gz"))


def test_wrong_columns_and_labels_are_value_errors(isolated):
    home = isolated / "home"
    tiny_adult(home, "maybe")
    with pytest.raises(ValueError, match="'maybe'"):
        ds.load_adult(data_home=home)
    (home / "adult.csv.gz").write_bytes(gzip.compress(b"a,b\n1,2\n"))
    with pytest.raises(ValueError, match="does not have the adult columns"):
        ds.load_adult(data_home=home)


def test_unknown_name_is_a_value_error():
    with pytest.raises(ValueError, match="unknown data set 'iris'"):
        ds.load("iris")
