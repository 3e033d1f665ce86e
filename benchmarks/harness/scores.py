"""Scorer outputs as both benchmarks keep them: a fusion pool and test rows per (setup or
scenario, seed), keyed by what made them and cached on disk as ``.npz`` files.

Training the scorers is the slow, fixed part of a run, so their outputs are stored under a
key that changes whenever anything shaping them does (the definition, the seed, the
benchmark's score-code version, scikit-learn's version); a stale or damaged file is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning

__all__ = ["FusionPool", "fit_scorer", "pool_and_test", "cache_key", "cache_path", "cached"]

T = TypeVar("T")


class FusionPool:
    """Mixin of a score set whose fusion pool ``S_pool``, ``y_pool`` is in random order.

    The fusion sample of size ``n`` is the pool's first ``n`` rows, so the samples of one
    seed are nested.
    """

    S_pool: np.ndarray
    y_pool: np.ndarray

    def fusion_sample(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The first ``n`` rows of the pool: scores and labels.

        Raises
        ------
        ValueError
            If the pool has fewer than ``n`` rows.
        """
        if n > self.S_pool.shape[0]:
            raise ValueError(f"fusion sample of {n} rows from a pool of {self.S_pool.shape[0]}.")
        return self.S_pool[:n], self.y_pool[:n]


def fit_scorer(model: Any, X: Any, y: np.ndarray) -> Any:
    """``model.fit(X, y)`` without its convergence warnings; returns ``model``.

    Scorers are trained with fixed iteration budgets, so an unconverged fit is a property of
    the scorer being benchmarked, not a problem of the run.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    return model


def pool_and_test(S: np.ndarray, y_pool: np.ndarray, y_test: np.ndarray) -> dict[str, np.ndarray]:
    """``S_pool``, ``y_pool``, ``S_test``, ``y_test`` of scores ``S`` of the pool rows
    followed by the test rows (each scorer scores both in one call)."""
    n_pool = y_pool.shape[0]
    return {"S_pool": S[:n_pool], "y_pool": y_pool, "S_test": S[n_pool:], "y_test": y_test}


def cache_key(kind: str, definition: Mapping[str, Any], seed: int, version: int) -> str:
    """Hex digest identifying scores under the current code.

    Parameters
    ----------
    kind : str
        What ``definition`` is (``"setup"``, ``"scenario"``); its key in the hashed payload.
    definition : mapping
        Everything of the setup or scenario that shapes the scores (JSON-serializable;
        other iterables are hashed as lists).
    seed : int
        The seed of the row split and of the scorers.
    version : int
        The benchmark's score-code version.

    Returns
    -------
    str
        SHA-256 hex digest of the canonical JSON of the payload.
    """
    payload = {
        kind: definition,
        "seed": int(seed),
        "version": version,
        "sklearn": sklearn.__version__,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=list).encode()).hexdigest()


def cache_path(cache_dir: str | os.PathLike | None, name: str, seed: int, key: str) -> Path | None:
    """The cache file of ``name``'s scores of ``seed`` under ``key`` (None without a cache)."""
    if cache_dir is None:
        return None
    return Path(cache_dir) / f"{name}-seed{seed}-{key[:16]}.npz"


def cached(
    path: Path | None,
    key: str,
    *,
    arrays: Sequence[str],
    build: Callable[[], T],
    extras: Callable[[T], dict],
    restore: Callable[[dict[str, np.ndarray], dict], T],
) -> tuple[T, bool]:
    """Scores read from ``path`` when it holds them under ``key``, else built (and stored).

    Parameters
    ----------
    path : Path or None
        The cache file (:func:`cache_path`); None neither reads nor writes.
    key : str
        The scores' key (:func:`cache_key`); a file under another key is rebuilt.
    arrays : sequence of str
        Attributes of the scores stored as arrays.
    build : callable
        ``build() -> scores``, called only on a cache miss.
    extras : callable
        ``extras(scores) -> dict``: what else to store, as JSON.
    restore : callable
        ``restore(arrays, extras) -> scores`` from what was stored; a ``KeyError`` counts
        as a damaged file.

    Returns
    -------
    scores : object
    hit : bool
        Whether they came from the cache.
    """
    if path is not None and path.is_file():
        found = _read(path, key, arrays, restore)
        if found is not None:
            return found, True
    scores = build()
    if path is not None:
        stored = {name: getattr(scores, name) for name in arrays}
        _write(path, stored, {**extras(scores), "key": key})
    return scores, False


def _write(path: Path, arrays: dict[str, np.ndarray], info: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written under a name of this process, then renamed: runs sharing a cache never read a
    # half-written file.
    tmp = path.with_name(path.name + f".{os.getpid()}.part")
    with open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays, info=np.array(json.dumps(info)))
    tmp.replace(path)


def _read(
    path: Path,
    key: str,
    arrays: Sequence[str],
    restore: Callable[[dict[str, np.ndarray], dict], T],
) -> T | None:
    try:
        with np.load(path, allow_pickle=False) as z:
            info = json.loads(str(z["info"]))
            if info.get("key") != key:
                return None
            return restore({name: z[name] for name in arrays}, info)
    except (OSError, ValueError, KeyError):  # a damaged file is rebuilt
        return None
