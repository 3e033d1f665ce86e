"""The two errors of the data-set loaders."""

from __future__ import annotations

__all__ = ["DatasetNotFoundError", "DatasetDownloadError"]


class DatasetNotFoundError(FileNotFoundError):
    """No local copy of a data set, and downloading was not allowed or not possible."""


class DatasetDownloadError(OSError):
    """A file could not be fetched from the UCI archive (offline, moved, or bad checksum)."""
