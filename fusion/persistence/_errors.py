"""The exceptions of :mod:`fusion.persistence`."""

from __future__ import annotations

__all__ = ["PersistenceError", "BinaryModeError"]


class PersistenceError(ValueError):
    """A model cannot be saved as plain data, or a file is not a valid fusion model file."""


class BinaryModeError(PersistenceError, TypeError):
    """A file object opened in text mode was given: model files are binary.

    Also a ``TypeError``, which is what passing ``str``-only file objects to byte-oriented
    writers raised before this error existed.
    """
