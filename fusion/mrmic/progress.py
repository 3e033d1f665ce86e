"""Progress of a fit's QP solves: a tqdm bar when tqdm is installed, plain lines otherwise."""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


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
