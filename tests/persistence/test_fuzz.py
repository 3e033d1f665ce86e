"""Damaged model files: ``fusion.load`` raises PersistenceError and nothing else, or loads the
very model that was saved (a change the zip format ignores, e.g. a timestamp).

Single-byte changes and truncations of a whole file (what storage and transfers do; zip's
CRC-32 covers the content, so a file that loads must be the saved model), then of the members
inside a re-packed, CRC-valid archive (what a careless edit or an attacker does).
"""

from __future__ import annotations

import io
import struct
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fusion
from fusion.persistence import PersistenceError

from ._helpers import assert_same, fitted, members, saved_bytes, zip_bytes

pytestmark = pytest.mark.filterwarnings("error")

#: The smallest saveable model: every zip and .npy structure, few bytes of data.
NAME = "platt"


def _load_or_refuse(data: bytes):
    """The loaded model, or None when refused; any other exception fails the test."""
    try:
        return fusion.load(io.BytesIO(data))
    except PersistenceError:
        return None


def _assert_refused_or_same(data: bytes, where: str):
    loaded = _load_or_refuse(data)
    if loaded is not None:
        est, S = fitted(NAME)
        assert_same(est, loaded, where)
        np.testing.assert_array_equal(loaded.predict_proba(S), est.predict_proba(S))


def _repack(meta: bytes, npz: bytes) -> bytes:
    return zip_bytes({"meta.json": meta, "arrays.npz": npz})


def _changed(data: bytes, position: int, xor: int) -> bytes:
    out = bytearray(data)
    out[position] ^= xor
    return bytes(out)


def test_every_byte_of_a_file_inverted_is_refused_or_harmless():
    # The regression: several of these raised NotImplementedError (compression method, zip
    # version, flag bits) from zipfile instead of PersistenceError.
    data = saved_bytes(NAME)
    for i in range(len(data)):
        _assert_refused_or_same(_changed(data, i, 0xFF), f"byte {i} inverted")


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_single_byte_change_of_a_file_is_refused_or_harmless(data):
    raw = saved_bytes(NAME)
    i = data.draw(st.integers(0, len(raw) - 1), label="position")
    xor = data.draw(st.integers(1, 255), label="xor")
    _assert_refused_or_same(_changed(raw, i, xor), f"byte {i} ^ {xor}")


def test_every_truncation_is_refused():
    data = saved_bytes(NAME)
    for n in range(len(data)):
        assert _load_or_refuse(data[:n]) is None, f"truncated to {n} bytes"


def _npz_structure(npz: bytes, n_members: int = 2) -> list[int]:
    """Positions of the zip and .npy headers of the first members of arrays.npz, their central
    directory entries and its end record (every member is laid out alike; the array data is
    covered by its own CRC-32)."""
    positions = []
    with zipfile.ZipFile(io.BytesIO(npz)) as zf:
        for info in zf.infolist()[:n_members]:
            start = info.header_offset
            name_len, extra_len = struct.unpack_from("<HH", npz, start + 26)
            data_start = start + 30 + name_len + extra_len
            header_len = struct.unpack_from("<H", npz, data_start + 8)[0]
            positions += range(start, data_start + 10 + header_len)
    entry = struct.unpack_from("<I", npz, npz.rindex(b"PK\x05\x06") + 16)[0]
    for _ in range(n_members):
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", npz, entry + 28)
        end = entry + 46 + name_len + extra_len + comment_len
        positions += range(entry, end)
        entry = end
    return positions + list(range(npz.rindex(b"PK\x05\x06"), len(npz)))


def test_every_structural_byte_of_arrays_npz_inverted_is_refused_or_harmless():
    meta, npz = members(saved_bytes(NAME))
    positions = _npz_structure(npz)
    assert len(positions) > 400
    for i in positions:
        _assert_refused_or_same(_repack(meta, _changed(npz, i, 0xFF)), f"npz byte {i} inverted")


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_any_single_byte_change_of_arrays_npz_is_refused_or_harmless(data):
    meta, npz = members(saved_bytes(NAME))
    i = data.draw(st.integers(0, len(npz) - 1), label="position")
    xor = data.draw(st.integers(1, 255), label="xor")
    _assert_refused_or_same(_repack(meta, _changed(npz, i, xor)), f"npz byte {i} ^ {xor}")


@pytest.mark.parametrize("name", [NAME, "bernstein"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_single_byte_change_of_meta_json_is_refused_or_loads_within_the_self_check(name, data):
    # Inside a CRC-valid archive a change is an edit, not corruption, and may be harmless (a
    # version string) or below the self-check's tolerance (the 17th digit of a float).
    meta, npz = members(saved_bytes(name))
    i = data.draw(st.integers(0, len(meta) - 1), label="position")
    xor = data.draw(st.integers(1, 255), label="xor")
    loaded = _load_or_refuse(_repack(_changed(meta, i, xor), npz))
    if loaded is not None:
        est, S = fitted(name)
        np.testing.assert_allclose(loaded.predict_proba(S), est.predict_proba(S), atol=1e-8)
