"""Tests of fusion/datasets/_download.py and _convert.py: rebuilding each file from the
UCI originals, offline."""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import zipfile

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from fusion import datasets as ds  # noqa: E402
from fusion.datasets import _registry as reg  # noqa: E402

from ._shared import (  # noqa: E402
    first_rows,
    load_shared,
    serve,
    shared_lines,
    with_content_hash,
)


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
    assert hashlib.sha256(text).hexdigest() == reg.SPECS["adult"].content_sha256
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
    assert list(data.X.columns) == reg.SUSY_COLUMNS[1:]
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


def test_uci_converters_reject_malformed_lines():
    with pytest.raises(ValueError, match="adult.data line 1 has 2 fields"):
        ds.adult_from_uci(b"1, 2\n", b"")
    with pytest.raises(ValueError, match="covtype line 2"):
        ds.covtype_from_uci(b",".join([b"1"] * 55) + b"\n1,2\n")
