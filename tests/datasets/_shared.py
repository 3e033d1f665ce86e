"""Helpers of the data-set tests: the shared copies and a fake network.

The shared copies live beside the repository (../shared/datasets) or in $FUSION_DATA_DIR;
tests that need them are skipped with the reason when they are absent. Downloads are
exercised offline: the loaders' single network call (`_download._urlopen`) is replaced by a
fake that serves files written in the original UCI formats.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import io
import os
import urllib.error
from pathlib import Path

import pytest

from fusion import datasets as ds
from fusion.datasets import _download as dl
from fusion.datasets import _registry as reg

SHARED = Path(
    os.environ.get("FUSION_DATA_DIR") or Path(__file__).resolve().parents[3] / "shared" / "datasets"
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
    path = SHARED / reg.SPECS[name].filename
    if not path.is_file():
        pytest.skip(f"shared copy {path} is absent (set FUSION_DATA_DIR to its directory)")
    return path


def shared_lines(name: str) -> list[str]:
    return gzip.decompress(shared(name).read_bytes()).decode().splitlines()


def serve(monkeypatch, files: dict[str, bytes]) -> list[str]:
    """Serve ``files`` (URL basename -> bytes); other URLs fail like a 404. Returns the log."""
    log = []

    def fake(url, timeout):
        log.append(url)
        name = url.rsplit("/", 1)[-1]
        if name not in files:
            raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)
        return io.BytesIO(files[name])

    monkeypatch.setattr(dl, "_urlopen", fake)
    return log


def with_content_hash(monkeypatch, name: str, text: bytes) -> None:
    spec = dataclasses.replace(reg.SPECS[name], content_sha256=hashlib.sha256(text).hexdigest())
    monkeypatch.setitem(reg.SPECS, name, spec)


@functools.cache
def load_shared(name: str) -> ds.Dataset:
    """Each shared copy is read once per session (Census and Covertype take seconds)."""
    return ds.load(name, data_home=shared(name).parent, download_if_missing=False)


def first_rows(name: str, k: int = 4) -> tuple[str, list[str]]:
    lines = shared_lines(name) if name != "census" else None
    if lines is None:  # avoid decompressing all of census for four rows
        with gzip.open(shared(name), "rt") as fh:
            lines = [next(fh).rstrip("\n") for _ in range(k + 1)]
    return lines[0], lines[1 : k + 1]
