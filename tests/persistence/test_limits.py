"""Size limits of ``fusion.load`` (fusion/persistence/_archive.py): oversized, bomb-like and
lying files are refused before their memory is allocated or their data inflated."""

from __future__ import annotations

import io
import json
import tracemalloc
import warnings
import zipfile
import zlib

import numpy as np
import pytest
from numpy.lib import format as npy_format

import fusion
from fusion.persistence import _archive

from ._helpers import archive, fitted, load_fails, members, patch_member, saved_bytes, zip_bytes

pytestmark = pytest.mark.filterwarnings("error")

MiB = 2**20


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _npy_with_header(header: dict, body: bytes, version=(1, 0)) -> bytes:
    buf = io.BytesIO()
    writer = {(1, 0): npy_format.write_array_header_1_0, (2, 0): npy_format.write_array_header_2_0}
    writer[version](buf, header)
    return buf.getvalue() + body


def _model_file(npy_members: dict[str, bytes], meta: dict) -> bytes:
    """A model file whose arrays.npz holds these .npy members (stored, as numpy.savez does)."""
    npz = zip_bytes({f"{k}.npy": v for k, v in npy_members.items()}, zipfile.ZIP_STORED)
    return zip_bytes({"meta.json": json.dumps(meta).encode(), "arrays.npz": npz})


def _with_array_member(name: str, replace) -> tuple[bytes, np.ndarray]:
    """The model file of ``name`` with the .npy bytes of its ``classes_`` array replaced by
    ``replace(array)``; returns the file and the original array."""
    meta, arrays = archive(name)
    key = meta["attributes"]["classes_"]["__ndarray__"]
    members_ = {k: _npy(v) for k, v in arrays.items()}
    members_[key] = replace(arrays[key])
    return _model_file(members_, meta), arrays[key]


def _peak_while_loading(data: bytes, match: str) -> int:
    tracemalloc.start()
    try:
        with pytest.raises(fusion.PersistenceError, match=match):
            fusion.load(io.BytesIO(data))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("count", [10**13, 2**27], ids=["1e13-floats", "1-GiB"])
def test_npy_header_declaring_a_huge_array_is_refused_before_allocating(count):
    data, _ = _with_array_member(
        "platt",
        lambda a: _npy_with_header(
            {"descr": "<f8", "fortran_order": False, "shape": (count,)}, a.tobytes()
        ),
    )
    peak = _peak_while_loading(data, rf"declares {count} elements of float64 .* but 16 bytes")
    assert peak < 8 * MiB


@pytest.mark.parametrize(
    "header, match",
    [
        ({"descr": "<i8", "fortran_order": False, "shape": (3,)}, r"3 elements .* 16 bytes"),
        ({"descr": "<i8", "fortran_order": False, "shape": (1, -2)}, r"negative dimension"),
        ({"descr": "|O", "fortran_order": False, "shape": (2,)}, r"dtype object"),
        ({"descr": [("a", "<i8")], "fortran_order": False, "shape": (2,)}, r"not supported"),
        ({"descr": "|S0", "fortran_order": False, "shape": (10**15,)}, r"not supported"),
    ],
    ids=["short", "negative", "object", "structured", "zero-itemsize"],
)
def test_npy_header_that_does_not_fit_its_data_is_refused(header, match):
    data, _ = _with_array_member("platt", lambda a: _npy_with_header(header, a.tobytes()))
    load_fails(io.BytesIO(data), rf"not a valid pickle-free \.npz: .*{match}")


def test_npy_format_2_and_fortran_order_are_read_like_numpy():
    data, classes = _with_array_member(
        "platt",
        lambda a: _npy_with_header(
            {"descr": a.dtype.str, "fortran_order": False, "shape": a.shape},
            a.tobytes(),
            version=(2, 0),
        ),
    )
    loaded = fusion.load(io.BytesIO(data))
    np.testing.assert_array_equal(loaded.classes_, classes, strict=True)
    data, _ = _with_array_member("platt", lambda a: b"\x93NUMPY\x09\x00" + _npy(a)[8:])
    load_fails(io.BytesIO(data), r"\.npy format version \(9, 0\) is not read")


def test_zip_bomb_is_refused_before_inflating():
    meta, npz = members(saved_bytes("platt"))
    # An honest bomb: 48 MiB of zeros deflate to ~50 kB (ratio ~1000; fusion's files: 1-3).
    honest = zip_bytes({"meta.json": meta, "arrays.npz": npz + bytes(48 * MiB)})
    peak = _peak_while_loading(honest, r"arrays\.npz declares \d+ bytes .* decompression bomb")
    assert peak < 8 * MiB
    # The case: a file of a few kB whose directory declares 3 GiB.
    lying = patch_member(saved_bytes("platt"), "arrays.npz", file_size=3 * 2**30)
    assert len(lying) < 10_000
    load_fails(io.BytesIO(lying), r"declares 3221225472 bytes .* decompression bomb")


def test_member_inflating_beyond_its_declared_size_is_cut_there():
    meta, npz = members(saved_bytes("platt"))
    stream = zip_bytes({"meta.json": meta, "arrays.npz": npz + bytes(64 * MiB)})
    # Declared 1 MiB (within every limit) but the stream goes on for 64 MiB: the CRC-32 of the
    # first MiB does not match.
    bomb = patch_member(stream, "arrays.npz", file_size=MiB)
    assert _peak_while_loading(bomb, r"not a readable fusion model file.*CRC") < 16 * MiB
    # Declared size and CRC-32 of the true arrays.npz: the rest of the stream is never inflated.
    cut = patch_member(stream, "arrays.npz", file_size=len(npz), CRC=zlib.crc32(npz))
    tracemalloc.start()
    try:
        loaded = fusion.load(io.BytesIO(cut))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * MiB
    est, S = fitted("platt")
    np.testing.assert_array_equal(loaded.predict_proba(S), est.predict_proba(S))


def test_compressed_arrays_inside_the_npz_are_refused():
    # numpy.savez_compressed members would be a second, unbounded layer of inflation.
    meta, arrays = archive("platt")
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    data = zip_bytes({"meta.json": json.dumps(meta).encode(), "arrays.npz": buf.getvalue()})
    load_fails(io.BytesIO(data), r"arrays\.npz member a0\.npy uses zip compression method 8")


def test_max_bytes_bounds_the_whole_model():
    data = saved_bytes("platt")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        total = sum(i.file_size for i in zf.infolist())
    with pytest.raises(fusion.PersistenceError, match=r"more than max_bytes=1000\. If you trust"):
        fusion.load(io.BytesIO(data), max_bytes=1000)
    with pytest.raises(fusion.PersistenceError, match=rf"holds {total} bytes"):
        fusion.load(io.BytesIO(data), max_bytes=total - 1)
    est, S = fitted("platt")
    loaded = fusion.load(io.BytesIO(data), max_bytes=total)
    np.testing.assert_array_equal(loaded.predict_proba(S), est.predict_proba(S))


def test_max_bytes_must_be_a_non_negative_integer():
    data = io.BytesIO(saved_bytes("platt"))
    with pytest.raises(TypeError, match="max_bytes must be an integer"):
        fusion.load(data, max_bytes="1GB")
    with pytest.raises(ValueError, match="max_bytes must be non-negative"):
        fusion.load(data, max_bytes=-1)


def test_meta_json_limit(monkeypatch):
    monkeypatch.setattr(_archive, "MAX_META_BYTES", 100)
    load_fails(io.BytesIO(saved_bytes("platt")), r"meta\.json is implausibly large")


@pytest.mark.parametrize(
    "fields, match",
    [
        ({"compress_type": zipfile.ZIP_BZIP2}, r"compression method 12, which fusion never"),
        ({"compress_type": 99}, r"compression method 99"),
        ({"flag_bits": 0x1}, r"encrypted"),
    ],
    ids=["bzip2", "unknown", "encrypted"],
)
def test_zip_features_fusion_never_writes_are_refused(fields, match):
    # These leaked NotImplementedError / RuntimeError from zipfile.
    data = patch_member(saved_bytes("platt"), "meta.json", **fields)
    load_fails(io.BytesIO(data), match)


def test_repeated_and_foreign_members_are_refused():
    meta, npz = members(saved_bytes("platt"))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("meta.json", meta)
            zf.writestr("meta.json", meta)
            zf.writestr("arrays.npz", npz)
    load_fails(io.BytesIO(buf.getvalue()), r"expected exactly the members")
    inner = zip_bytes(
        {"a0.npy": _npy(np.zeros(2)), "../x.npy": _npy(np.zeros(2))}, zipfile.ZIP_STORED
    )
    data = zip_bytes({"meta.json": meta, "arrays.npz": inner})
    load_fails(io.BytesIO(data), r"unexpected member '\.\./x\.npy'")
