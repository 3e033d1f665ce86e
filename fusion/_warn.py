"""Warnings attributed to the user's line: the first frame outside the package.

A fixed ``stacklevel`` is right for one call path only: the same grid-edge warning raised
three frames below ``fit`` on one path and five on another reported ``fusion/_base.py`` as
its location. :func:`caller_level` counts the frames at run time instead.
"""

from __future__ import annotations

import inspect
import os

__all__ = ["caller_level"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_level() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` call made in the calling function that
    attributes the warning to the first frame outside the ``fusion`` package (the user's
    call, or the library that called fusion)."""
    frame = inspect.currentframe().f_back  # the function that calls warnings.warn
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level
