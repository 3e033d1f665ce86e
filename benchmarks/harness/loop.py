"""The fit loop both benchmarks share.

Per (setup or scenario, seed) the scorers' outputs are obtained once; then per fusion sample
size every contender is built and fitted on the same fusion rows and scored on the same test
rows. NumPy's global random state is seeded from (name, seed, size) before each contender is
built, identically for every contender, so methods that draw from it (unseeded CV folds) are
reproducible run to run. A failing contender becomes a row with status ``"error"``; the
benchmark goes on.
"""

from __future__ import annotations

import math
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

from fusion.bench._record import record_warnings

__all__ = [
    "FitBar",
    "error_text",
    "fit_seed",
    "timed_fit",
    "seeded_fit",
    "contender_rows",
    "run_cells",
]


class _Named(Protocol):
    name: str


class _Keyed(Protocol):
    key: str


D = TypeVar("D", bound=_Named)
C = TypeVar("C", bound=_Keyed)
S = TypeVar("S")


class FitBar:
    """A tqdm bar on stderr counting fits, or nothing at all when not ``enabled``.

    Parameters
    ----------
    total : int
        Number of fits the run will make.
    enabled : bool
        False reports nothing and needs no tqdm.
    """

    def __init__(self, total: int, enabled: bool = True) -> None:
        self._bar = None
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, unit="fit", dynamic_ncols=True, smoothing=0.05)

    def status(self, text: str) -> None:
        """Show ``text`` after the bar (what is being done)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def step(self) -> None:
        """Count one fit as done."""
        if self._bar is not None:
            self._bar.update(1)

    def close(self) -> None:
        """Close the bar."""
        if self._bar is not None:
            self._bar.close()


def error_text(err: BaseException) -> str:
    """``"Type: message"`` of an exception, at most 300 characters (a CSV cell)."""
    return f"{type(err).__name__}: {err}"[:300]


def fit_seed(name: str, seed: int, n: int) -> int:
    """The seed of NumPy's global state before each fit of ``(name, seed, n)``."""
    return zlib.crc32(f"{name}|{seed}|{n}".encode()) & 0x7FFFFFFF


def timed_fit(
    estimator: Any,
    S_fuse: np.ndarray,
    y_fuse: np.ndarray,
    S_test: np.ndarray,
    row: dict,
    score: Callable[[np.ndarray], dict],
    reset: Iterable[str],
) -> dict:
    """Fit ``estimator`` on the fusion sample, predict the test rows and fill ``row``.

    Parameters
    ----------
    estimator : object
        Unfitted, with ``fit(S, y)`` and ``predict_proba(S)``.
    S_fuse, y_fuse : ndarray
        The fusion sample.
    S_test : ndarray
        The test scores.
    row : dict
        The result row to fill (every column already present).
    score : callable
        ``score(P) -> dict`` of columns from the test predictions ``P`` (floats).
    reset : iterable of str
        Columns set to NaN when anything fails.

    Returns
    -------
    dict
        ``row`` with ``fit_seconds``, ``predict_seconds``, the ``score`` columns and the
        warnings caught (:func:`fusion.bench._record.record_warnings`); on an exception
        ``status="error"`` and ``error`` instead of raising.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            t0 = time.perf_counter()
            estimator.fit(S_fuse, y_fuse)
            row["fit_seconds"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            P = np.asarray(estimator.predict_proba(S_test), dtype=float)
            row["predict_seconds"] = time.perf_counter() - t0
            row.update(score(P))
        except Exception as err:  # a failing method is reported, the benchmark goes on
            row.update(status="error", error=error_text(err))
            row.update(dict.fromkeys(reset, math.nan))
    return record_warnings(row, caught)


def seeded_fit(
    make: Callable[[], Any],
    seed: int,
    evaluate: Callable[[Any], dict],
    empty_row: Callable[[str, str], dict],
) -> dict:
    """Seed NumPy's global state, build an estimator with ``make()`` and ``evaluate`` it;
    a failing ``make()`` gives ``empty_row("error", message)``."""
    # The legacy global state on purpose: what unseeded library code draws from.
    np.random.seed(seed)  # noqa: NPY002
    try:
        estimator = make()
    except Exception as err:  # reported like any failure
        return empty_row("error", error_text(err))
    return evaluate(estimator)


def contender_rows(
    contenders: Sequence[C],
    n: int,
    max_n: Mapping[str, int],
    fit: Callable[[C], dict],
    empty_row: Callable[[str, str], dict],
    bar: FitBar,
    where: str,
) -> list[tuple[C, dict]]:
    """Each contender's result row on one fusion sample of ``n`` rows.

    Parameters
    ----------
    contenders : sequence of contenders
        Each with a ``key`` (the scenario or multi-class benchmark's ``Contender``).
    n : int
        The fusion sample size.
    max_n : mapping
        ``max_n[key]``: the largest sample contender ``key`` is fitted on; larger ones give
        ``empty_row("skipped", reason)``.
    fit : callable
        ``fit(contender) -> row`` for the others.
    empty_row : callable
        ``empty_row(status, error) -> row`` with every column.
    bar : FitBar
    where : str
        The cell, as the progress bar shows it.

    Returns
    -------
    list of (contender, dict)
    """
    out = []
    for c in contenders:
        bar.status(f"{where}: {c.key}")
        limit = max_n.get(c.key)
        if limit is not None and n > limit:
            row = empty_row("skipped", f"not fitted above n_fuse = {limit:,}")
        else:
            row = fit(c)
        out.append((c, row))
        bar.step()
    return out


def run_cells(
    plan: Iterable[tuple[D, int, Sequence[int]]],
    scores: Callable[[D, int], tuple[S, bool]],
    score_row: Callable[[D, S, bool, float], dict],
    cell: Callable[[D, S, int], list[dict]],
    bar: FitBar,
    on_rows: Callable[[list[dict]], None] | None = None,
) -> tuple[list[dict], list[dict]]:
    """The outer loop: scores per (setup or scenario, seed), then the cells of each size.

    Parameters
    ----------
    plan : iterable of (definition, seed, sizes)
        In run order; ``definition.name`` names it in the progress bar.
    scores : callable
        ``scores(definition, seed) -> (score set, whether it came from the cache)``.
    score_row : callable
        ``score_row(definition, score set, hit, seconds) -> row`` describing the scores.
    cell : callable
        ``cell(definition, score set, n) -> fit rows`` of the fusion sample of size ``n``.
    bar : FitBar
        Closed when the loop ends, also on an exception.
    on_rows : callable, optional
        Called with the fit rows of each (cell, seed) as soon as they exist (a long run
        keeps its partial results).

    Returns
    -------
    rows : list of dict
        Every fit row.
    score_rows : list of dict
        One row per (definition, seed).
    """
    rows: list[dict] = []
    score_rows: list[dict] = []
    try:
        for definition, seed, sizes in plan:
            bar.status(f"{definition.name} seed {seed}: scorers")
            t0 = time.perf_counter()
            ss, hit = scores(definition, seed)
            score_rows.append(score_row(definition, ss, hit, time.perf_counter() - t0))
            for n in sizes:
                new = cell(definition, ss, n)
                rows += new
                if on_rows is not None:
                    on_rows(new)
    finally:
        bar.close()
    return rows, score_rows
