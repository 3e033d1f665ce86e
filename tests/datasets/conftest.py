"""The `isolated` fixture: no FUSION_DATA_DIR, an empty cache, no network."""

from __future__ import annotations

import pytest

from fusion.datasets import _download as dl


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No FUSION_DATA_DIR, an empty cache, and a network that must not be used."""
    monkeypatch.delenv("FUSION_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def no_network(url, timeout):
        raise AssertionError(f"unexpected download of {url}")

    monkeypatch.setattr(dl, "_urlopen", no_network)
    return tmp_path
