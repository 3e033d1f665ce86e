"""Where the files are: the search order of local copies and the download directory."""

from __future__ import annotations

import os
from pathlib import Path

from ._registry import Spec, spec

__all__ = ["get_data_home", "search_dirs", "find_local_copy", "where_to_put"]


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Directory where :func:`download` stores files.

    ``data_home`` when given, else ``$XDG_CACHE_HOME/fusion`` or ``~/.cache/fusion``.
    """
    if data_home is not None:
        return Path(data_home).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME")
    return (Path(cache) if cache else Path.home() / ".cache").expanduser() / "fusion"


def search_dirs(data_home) -> list[Path]:
    """``data_home``, ``$FUSION_DATA_DIR``, the cache directory: the order files are looked for."""
    dirs = []
    if data_home is not None:
        dirs.append(Path(data_home).expanduser())
    env = os.environ.get("FUSION_DATA_DIR")
    if env:
        dirs.append(Path(env).expanduser())
    dirs.append(get_data_home(None))
    return dirs


def find_local_copy(name: str, data_home=None) -> Path | None:
    """The file :func:`load` would read for ``name``, or None when there is no local copy.

    Looks in ``data_home``, then ``$FUSION_DATA_DIR``, then the cache directory; within a
    directory a UCI-format original (SUSY only) comes before the shared-format file.
    """
    s = spec(name)
    for directory in search_dirs(data_home):
        for fname in (*s.original_names, s.filename):
            path = directory / fname
            if path.is_file():
                return path
    return None


def where_to_put(s: Spec, data_home) -> str:
    """The sentence of a not-found message: which file, which directories, which URLs."""
    dirs = ", ".join(str(d) for d in search_dirs(data_home))
    wanted = " or ".join((*s.original_names, s.filename))
    return (
        f"Put {wanted} into one of: {dirs} (or point FUSION_DATA_DIR or data_home at the "
        f"directory holding it). The original files are at {', '.join(s.urls)}; "
        f"fusion.datasets.download({s.name!r}) fetches and converts them on a connected "
        "machine."
    )
