"""Shared pieces of the persistence tests: the saveable estimators, small fitted models, and
building model files by hand."""

from __future__ import annotations

import functools
import io
import json
import struct
import zipfile

import numpy as np
import pytest

import fusion
from fusion.persistence import PersistenceError, saveable_classes

from ..reliability._methods import FAST_PARAMS, scores

#: Every estimator a model file may hold (fusion.METHODS and the 1-D calibrators), read at
#: collection time.
SAVEABLE_NAMES = sorted(
    name for name, cls in saveable_classes().items() if issubclass(cls, fusion.FusionEstimator)
)


def make(name: str, **overrides):
    """An unfitted saveable estimator with the fast parameters of the reliability tests."""
    return saveable_classes()[name](**{**FAST_PARAMS.get(name, {}), **overrides})


@functools.cache
def fitted(name):
    # One fit per method for the tests that only read it.
    S, y = scores(80, seed=5)
    return make(name).fit(S, y), S


@functools.cache
def saved_bytes(name) -> bytes:
    buf = io.BytesIO()
    fitted(name)[0].save(buf)
    return buf.getvalue()


def roundtrip(est, tmp_path):
    path = tmp_path / "model.fusion"
    est.save(path)
    return fusion.load(path)


def assert_same(a, b, where="model"):
    """Same value, same type, same dtype, recursively (estimators by their __dict__)."""
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype.kind == "O":
            for i, (x, z) in enumerate(zip(a.ravel(), b.ravel(), strict=True)):
                assert_same(x, z, f"{where}[{i}]")
        else:
            np.testing.assert_array_equal(a, b, err_msg=where, strict=True)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, z) in enumerate(zip(a, b, strict=True)):
            assert_same(x, z, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif hasattr(a, "get_params"):
        public = {k: v for k, v in vars(a).items() if not k.startswith("_")}
        assert_same(public, {k: v for k, v in vars(b).items() if not k.startswith("_")}, where)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), where
    else:
        assert a == b, where


def members(data: bytes) -> tuple[bytes, bytes]:
    """The raw ``meta.json`` and ``arrays.npz`` of a model file."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.read("meta.json"), zf.read("arrays.npz")


def archive(name) -> tuple[dict, dict]:
    """The decoded ``meta.json`` and arrays of a small fitted model of method ``name``."""
    meta_bytes, npz_bytes = members(saved_bytes(name))
    with np.load(io.BytesIO(npz_bytes)) as npz:
        arrays = {k: npz[k] for k in npz.files}
    return json.loads(meta_bytes), arrays


def zip_bytes(files: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for member, data in files.items():
            zf.writestr(member, data)
    return buf.getvalue()


def write(path, meta, arrays, *, meta_text=None, extra=None, allow_pickle=False):
    npz = io.BytesIO()
    np.savez(npz, allow_pickle=allow_pickle, **arrays)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("meta.json", meta_text if meta_text is not None else json.dumps(meta))
        zf.writestr("arrays.npz", npz.getvalue())
        for member, data in (extra or {}).items():
            zf.writestr(member, data)
    return path


def load_fails(path, match):
    with pytest.raises(PersistenceError, match=match):
        fusion.load(path)


_HEADER_FIELDS = {  # name: (offset in the local header, offset in the central header, format)
    "flag_bits": (6, 8, "<H"),
    "CRC": (14, 16, "<I"),
    "compress_type": (8, 10, "<H"),
    "file_size": (22, 24, "<I"),
}


def patch_member(data: bytes, name: str, **fields: int) -> bytes:
    """Overwrite header fields of member ``name`` in its local and its central directory
    header (``flag_bits``, ``compress_type``, ``CRC``, ``file_size``): a file that lies."""
    out = bytearray(data)
    eocd = data.rindex(b"PK\x05\x06")
    entry = struct.unpack_from("<I", data, eocd + 16)[0]
    found = False
    while data[entry : entry + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, entry + 28)
        local = struct.unpack_from("<I", data, entry + 42)[0]
        if data[entry + 46 : entry + 46 + name_len].decode() == name:
            found = True
            for field, value in fields.items():
                local_at, central_at, fmt = _HEADER_FIELDS[field]
                struct.pack_into(fmt, out, local + local_at, value)
                struct.pack_into(fmt, out, entry + central_at, value)
        entry += 46 + name_len + extra_len + comment_len
    assert found, name
    return bytes(out)
