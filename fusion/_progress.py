"""Progress of long fits: a progress bar with ``verbose`` (tqdm when installed), and one
warning before a fit estimated to take more than a minute."""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Iterable, Iterator
from typing import TypeVar

from ._warn import caller_level

__all__ = ["Progress", "progress", "warn_if_slow", "SLOW_SECONDS"]

T = TypeVar("T")

#: A fit estimated to take longer than this many seconds warns once before it starts.
SLOW_SECONDS = 60.0


def progress(
    items: Iterable[T], *, total: int | None = None, desc: str = "", verbose=False
) -> Iterator[T]:
    """``items``, reporting progress when ``verbose`` is truthy.

    A tqdm bar on stderr when tqdm is installed (the ``bench`` extra), plain lines otherwise
    ("desc: 3/10"). Nothing is printed when ``verbose`` is falsy.
    """
    if not verbose:
        yield from items
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the bench extra
        tqdm = None
    if tqdm is not None:
        yield from tqdm(items, total=total, desc=desc, leave=False, file=sys.stderr)
        return
    for i, item in enumerate(items, 1):  # pragma: no cover - without tqdm
        yield item
        print(f"{desc}: {i}/{total if total is not None else '?'}", file=sys.stderr)


class Progress:
    """Counts ``total`` steps; silent unless ``enabled``.

    Parameters
    ----------
    total : int
    desc : str
        Shown before the count.
    enabled : bool
        False: every method is a no-op.

    Notes
    -----
    Uses ``tqdm.auto.tqdm`` (on stderr) when tqdm can be imported; otherwise prints one line
    per step to stderr: ``desc: step/total (message), elapsed s``.
    """

    def __init__(self, total: int, *, desc: str, enabled: bool):
        self.total = int(total)
        self.desc = desc
        self.enabled = bool(enabled)
        self._done = 0
        self._start = time.perf_counter()
        self._bar = None
        if self.enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=self.total, desc=desc, unit="solve", file=sys.stderr)

    def step(self, message: str = "") -> None:
        """Record one finished step."""
        if not self.enabled:
            return
        self._done += 1
        if self._bar is not None:
            if message:
                self._bar.set_postfix_str(message, refresh=False)
            self._bar.update(1)
        else:
            elapsed = time.perf_counter() - self._start
            note = f" ({message})" if message else ""
            print(
                f"{self.desc}: {self._done}/{self.total}{note}, {elapsed:.1f} s",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        """Finish the bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def warn_if_slow(seconds: float, what: str, advice: str) -> None:
    """One ``UserWarning`` when ``what`` is estimated to take more than :data:`SLOW_SECONDS`.

    ``seconds`` is the caller's estimate (stated as such in the message); ``advice`` says what
    would make it faster.
    """
    if seconds > SLOW_SECONDS:
        warnings.warn(
            f"{what} is estimated to take about {seconds / 60:.0f} minute(s) "
            f"({seconds:.0f} s). {advice} Pass verbose=True to follow its progress.",
            UserWarning,
            stacklevel=caller_level(),
        )
