"""Tests of fusion/datasets/_load.py on the shared copies: shapes, labels, targets."""

from __future__ import annotations

import gzip
import hashlib
import inspect

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from fusion import datasets as ds  # noqa: E402
from fusion.datasets import _registry as reg  # noqa: E402

from ._shared import (  # noqa: E402
    EXPECTED,
    load_shared,
    shared,
)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_loader_reads_shared_copy_with_paper_label(name):
    data = load_shared(name)
    n, n_features, n_pos = EXPECTED[name]
    assert data.X.shape == (n, n_features)
    assert data.y.shape == (n,) and set(np.unique(data.y)) == {0, 1}
    assert int(data.y.sum()) == n_pos
    label = reg.SPECS[name].label
    assert label not in data.X.columns
    for col in data.X.columns:
        is_cat = isinstance(data.X[col].dtype, pd.CategoricalDtype)
        assert is_cat == (col in data.categorical), col
        if not is_cat:
            assert data.X[col].dtype.kind in "iuf", col


def test_census_instance_weight_is_not_a_feature():
    data = load_shared("census")
    assert "instance_weight" not in data.X.columns
    assert data.sample_weight is not None and data.sample_weight.shape == data.y.shape
    assert np.all(data.sample_weight > 0)
    # Nominal codes stored as integers are categorical, continuous ones are not.
    assert "detailed_industry_recode" in data.categorical and "year" in data.categorical
    assert "age" not in data.categorical and "weeks_worked_in_year" not in data.categorical


@pytest.mark.parametrize("name", list(EXPECTED))
def test_shared_files_match_registered_checksums(name):
    blob = shared(name).read_bytes()
    spec = reg.SPECS[name]
    assert hashlib.sha256(blob).hexdigest() == spec.file_sha256
    if spec.content_sha256 is not None:
        assert hashlib.sha256(gzip.decompress(blob)).hexdigest() == spec.content_sha256


# -- target="multiclass" -----------------------------------------------------------------------


def tiny_covertype(directory, codes) -> None:
    """A covtype.csv.gz whose rows share one feature row and carry the given Cover_Type."""
    directory.mkdir(parents=True, exist_ok=True)
    features = ",".join(["2596", "51", "3", "258", "0", "510", "221", "232", "148", "6279"])
    features += "," + ",".join(["1", "0", "0", "0"] + ["0"] * 40)
    rows = [f"{features},{c}" for c in codes]
    text = ",".join(reg.COVTYPE_COLUMNS) + "\n" + "\n".join(rows) + "\n"
    (directory / "covtype.csv.gz").write_bytes(gzip.compress(text.encode()))


def test_covertype_multiclass_target_is_the_original_cover_type(isolated):
    codes = [5, 2, 7, 1, 3, 6, 4, 2]
    tiny_covertype(isolated / "home", codes)
    data = ds.load("covertype", data_home=isolated / "home", target="multiclass")
    assert data.y.dtype == np.int64 and data.y.tolist() == codes
    assert data.target == "multiclass" and "7 Krummholz" in data.positive
    binary = ds.load_covertype(data_home=isolated / "home")
    assert binary.target == "binary" and binary.y.tolist() == [int(c == 2) for c in codes]
    pd.testing.assert_frame_equal(data.X, binary.X)
    X, y = ds.load_covertype(data_home=isolated / "home", return_X_y=True, target="multiclass")
    assert y.tolist() == codes and X.shape == (len(codes), 54)


def test_covertype_multiclass_rejects_an_unknown_cover_type(isolated):
    tiny_covertype(isolated / "home", [1, 8])
    with pytest.raises(ValueError, match="'8' at data row 2; expected a cover type code 1..7"):
        ds.load("covertype", data_home=isolated / "home", target="multiclass")


@pytest.mark.parametrize("name", ["adult", "census", "dota2", "susy"])
def test_multiclass_target_of_a_binary_set_names_the_sets_that_have_one(isolated, name):
    # Refused before any file is looked for (isolated: no copy, no network).
    with pytest.raises(
        ValueError, match=rf"the {name} data have only a binary target.*'covertype'"
    ):
        ds.load(name, target="multiclass")


def test_unknown_target_is_a_value_error(isolated):
    with pytest.raises(ValueError, match=r"target must be one of \['binary', 'multiclass'\]"):
        ds.load("covertype", target="ordinal")


def test_binary_loaders_are_load_with_the_name_bound(isolated, monkeypatch):
    calls = []
    monkeypatch.setattr(ds._load, "load", lambda name, **kw: calls.append((name, kw)))
    for name in ("adult", "census", "dota2", "susy"):
        loader = getattr(ds, f"load_{name}")
        assert loader.__name__ == loader.__qualname__ == f"load_{name}"
        assert list(inspect.signature(loader).parameters) == [
            "data_home",
            "download_if_missing",
            "return_X_y",
        ]
        loader(data_home=isolated, return_X_y=True)
        with pytest.raises(TypeError):
            loader(target="multiclass")  # only Covertype has another target
    options = {"data_home": isolated, "download_if_missing": True, "return_X_y": True}
    assert calls == [(name, options) for name in ("adult", "census", "dota2", "susy")]
