"""Tests of fusion/datasets.py: the shared copies, the UCI formats, search order, errors.

The shared copies live beside the repository (../shared/datasets) or in $FUSION_DATA_DIR;
tests that need them are skipped with the reason when they are absent. Downloads are
exercised offline: the module's single network call (`_urlopen`) is replaced by a fake that
serves files written in the original UCI formats.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import io
import os
import tarfile
import urllib.error
import zipfile
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from fusion import datasets as ds  # noqa: E402

SHARED = Path(
    os.environ.get("FUSION_DATA_DIR") or Path(__file__).resolve().parents[2] / "shared" / "datasets"
)

# name -> (rows, feature columns, positives), from the shared copies' README.
EXPECTED = {
    "adult": (48_842, 14, 11_687),
    "census": (299_285, 40, 18_568),
    "covertype": (581_012, 54, 283_301),
    "dota2": (102_944, 116, 54_284),
    "susy": (10_000, 18, 4_553),
}


def shared(name: str) -> Path:
    path = SHARED / ds._SPECS[name].filename
    if not path.is_file():
        pytest.skip(f"shared copy {path} is absent (set FUSION_DATA_DIR to its directory)")
    return path


def shared_lines(name: str) -> list[str]:
    return gzip.decompress(shared(name).read_bytes()).decode().splitlines()


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No FUSION_DATA_DIR, an empty cache, and a network that must not be used."""
    monkeypatch.delenv("FUSION_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def no_network(url, timeout):
        raise AssertionError(f"unexpected download of {url}")

    monkeypatch.setattr(ds, "_urlopen", no_network)
    return tmp_path


def serve(monkeypatch, files: dict[str, bytes]) -> list[str]:
    """Serve ``files`` (URL basename -> bytes); other URLs fail like a 404. Returns the log."""
    log = []

    def fake(url, timeout):
        log.append(url)
        name = url.rsplit("/", 1)[-1]
        if name not in files:
            raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)
        return io.BytesIO(files[name])

    monkeypatch.setattr(ds, "_urlopen", fake)
    return log


def with_content_hash(monkeypatch, name: str, text: bytes) -> None:
    spec = dataclasses.replace(ds._SPECS[name], content_sha256=hashlib.sha256(text).hexdigest())
    monkeypatch.setitem(ds._SPECS, name, spec)


# -- the shared copies -------------------------------------------------------------------------


@functools.cache
def load_shared(name: str) -> ds.Dataset:
    """Each shared copy is read once per session (Census and Covertype take seconds)."""
    return ds.load(name, data_home=shared(name).parent, download_if_missing=False)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_loader_reads_shared_copy_with_paper_label(name):
    data = load_shared(name)
    n, n_features, n_pos = EXPECTED[name]
    assert data.X.shape == (n, n_features)
    assert data.y.shape == (n,) and set(np.unique(data.y)) == {0, 1}
    assert int(data.y.sum()) == n_pos
    label = ds._SPECS[name].label
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
    spec = ds._SPECS[name]
    assert hashlib.sha256(blob).hexdigest() == spec.file_sha256
    if spec.content_sha256 is not None:
        assert hashlib.sha256(gzip.decompress(blob)).hexdigest() == spec.content_sha256


# -- downloads from the original UCI formats (offline) ----------------------------------------


def adult_originals() -> tuple[bytes, bytes]:
    """adult.data / adult.test exactly as UCI ships them, rebuilt from the shared copy."""
    rows = shared_lines("adult")[1:]
    data = "\n".join(", ".join(r.split(",")) for r in rows[:32_561]) + "\n\n"
    test = (
        "|1x3 Cross validator\n"
        + "\n".join(", ".join(r.split(",")) + "." for r in rows[32_561:])
        + "\n\n"
    )
    return data.encode(), test.encode()


def test_adult_download_reproduces_the_shared_copy(isolated, monkeypatch):
    data, test = adult_originals()
    # The rebuilt originals are byte-identical to UCI's (the download checks their SHA-256).
    log = serve(monkeypatch, {"adult.data": data, "adult.test": test})
    X, y = ds.load_adult(data_home=isolated / "home", return_X_y=True)
    assert [u.rsplit("/", 1)[-1] for u in log] == ["adult.data", "adult.test"]
    written = isolated / "home" / "adult.csv.gz"
    text = gzip.decompress(written.read_bytes())
    assert hashlib.sha256(text).hexdigest() == ds._SPECS["adult"].content_sha256
    pd.testing.assert_frame_equal(X, load_shared("adult").X)
    np.testing.assert_array_equal(y, load_shared("adult").y)


def test_adult_download_rejects_a_changed_original(isolated, monkeypatch):
    data, test = adult_originals()
    serve(
        monkeypatch, {"adult.data": data.replace(b"State-gov", b"State-Gov", 1), "adult.test": test}
    )
    with pytest.raises(ds.DatasetNotFoundError, match="SHA-256"):
        ds.load_adult(data_home=isolated / "home")
    assert not (isolated / "home" / "adult.csv.gz").exists()


def first_rows(name: str, k: int = 4) -> tuple[str, list[str]]:
    lines = shared_lines(name) if name != "census" else None
    if lines is None:  # avoid decompressing all of census for four rows
        with gzip.open(shared(name), "rt") as fh:
            lines = [next(fh).rstrip("\n") for _ in range(k + 1)]
    return lines[0], lines[1 : k + 1]


def test_census_from_uci_gz_pair(isolated, monkeypatch):
    header, rows = first_rows("census")
    # UCI format: ", " separated, with a trailing blank line; train then test.
    original = [", ".join(r.split(",")) for r in rows]
    files = {
        "census-income.data.gz": gzip.compress(("\n".join(original[:2]) + "\n\n").encode()),
        "census-income.test.gz": gzip.compress(("\n".join(original[2:]) + "\n").encode()),
    }
    expected = ("\n".join([header, *rows]) + "\n").encode()
    with_content_hash(monkeypatch, "census", expected)
    serve(monkeypatch, files)
    path = ds.download("census", data_home=isolated / "home")
    assert gzip.decompress(path.read_bytes()) == expected
    data = ds.load_census(data_home=isolated / "home")
    assert data.X.shape == (4, 40)


def test_census_falls_back_to_the_kdd_tarball(isolated, monkeypatch):
    header, rows = first_rows("census")
    original = [", ".join(r.split(",")) for r in rows]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, part in (
            ("census-income.data", original[:3]),
            ("census-income.test", original[3:]),
        ):
            blob = ("\n".join(part) + "\n").encode()
            info = tarfile.TarInfo(f"census/{name}")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    expected = ("\n".join([header, *rows]) + "\n").encode()
    with_content_hash(monkeypatch, "census", expected)
    log = serve(monkeypatch, {"census.tar.gz": buf.getvalue()})
    path = ds.download("census", data_home=isolated / "home")
    assert gzip.decompress(path.read_bytes()) == expected
    assert log[-1].endswith("census.tar.gz")


def test_covertype_from_uci_data_gz(isolated, monkeypatch):
    header, rows = first_rows("covertype")
    expected = ("\n".join([header, *rows]) + "\n").encode()
    with_content_hash(monkeypatch, "covertype", expected)
    serve(monkeypatch, {"covtype.data.gz": gzip.compress(("\n".join(rows) + "\n").encode())})
    X, y = ds.load_covertype(data_home=isolated / "home", return_X_y=True)
    assert X.shape == (4, 54)
    np.testing.assert_array_equal(y, [int(r.split(",")[-1]) == 2 for r in rows])


def test_dota2_from_uci_zip(isolated, monkeypatch):
    header, rows = first_rows("dota2")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("dota2Train.csv", "\r\n".join(rows[:3]) + "\r\n")  # line ends vary
        zf.writestr("dota2Test.csv", rows[3] + "\n")
    expected = ("\n".join([header, *rows]) + "\n").encode()
    with_content_hash(monkeypatch, "dota2", expected)
    serve(monkeypatch, {"dota2Dataset.zip": buf.getvalue()})
    path = ds.download("dota2", data_home=isolated / "home")
    assert gzip.decompress(path.read_bytes()) == expected
    data = ds.load_dota2(data_home=isolated / "home")
    np.testing.assert_array_equal(data.y, [r.split(",")[0] == "1" for r in rows])


def susy_original(n: int = 6) -> tuple[bytes, np.ndarray]:
    """Rows in the UCI SUSY.csv format: no header, label first, %.18e floats."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=(n, 19)).astype(np.float32).astype(float)
    values[:, 0] = [1, 0, 0, 1, 1, 0][:n]
    text = "\n".join(",".join(f"{v:.18e}" for v in row) for row in values) + "\n"
    return text.encode(), values


@pytest.mark.parametrize("fname", ["SUSY.csv", "SUSY.csv.gz"])
def test_susy_reads_the_full_uci_file_unchanged(isolated, fname):
    blob, values = susy_original()
    home = isolated / "home"
    home.mkdir()
    (home / fname).write_bytes(gzip.compress(blob) if fname.endswith(".gz") else blob)
    data = ds.load_susy(data_home=home)
    assert data.path.name == fname
    assert list(data.X.columns) == ds._SUSY_COLUMNS[1:]
    np.testing.assert_array_equal(data.X.to_numpy(), values[:, 1:])
    np.testing.assert_array_equal(data.y, values[:, 0].astype(int))


def test_susy_original_comes_before_the_sample_in_a_directory(isolated):
    home = isolated / "home"
    home.mkdir()
    blob, _ = susy_original()
    (home / "SUSY.csv.gz").write_bytes(gzip.compress(blob))
    (home / "susy.csv.gz").write_bytes(b"not read")
    assert ds.find_local_copy("susy", home).name == "SUSY.csv.gz"


def test_susy_download_keeps_the_uci_file(isolated, monkeypatch):
    blob, values = susy_original()
    serve(monkeypatch, {"SUSY.csv.gz": gzip.compress(blob)})
    data = ds.load_susy(data_home=isolated / "home")
    assert data.path == isolated / "home" / "SUSY.csv.gz"
    np.testing.assert_array_equal(data.y, values[:, 0].astype(int))


# -- search order and errors -------------------------------------------------------------------


def tiny_adult(directory: Path, label: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    row = (
        "39,State-gov,77516,Bachelors,13,Never-married,Adm-clerical,Not-in-family,White,Male,"
        f"0,0,40,United-States,{label}"
    )
    text = ",".join(ds._ADULT_COLUMNS) + "\n" + row + "\n"
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

    monkeypatch.setattr(ds, "_urlopen", offline)
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


def test_uci_converters_reject_malformed_lines():
    with pytest.raises(ValueError, match="adult.data line 1 has 2 fields"):
        ds.adult_from_uci(b"1, 2\n", b"")
    with pytest.raises(ValueError, match="covtype line 2"):
        ds.covtype_from_uci(b",".join([b"1"] * 55) + b"\n1,2\n")
