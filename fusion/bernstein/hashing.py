"""The content keys of multi-class rows in one compiled pass (:func:`.folds.pair_keys`).

Why compiled: the keys hash every (row, class) pair of every scorer, and NumPy took some
ten array passes for it (a float64 copy, the clip, the rounding, splitmix64's five steps,
the sum): 7 s of an ImageNet-scale fit (50,000 rows, 1,000 classes, 5 scorers), against
0.4 s here. The arithmetic is NumPy's (:func:`fusion.ecdf.sketch.mix64`, wrapping ``uint64``)
step for step, so the keys are bit-identical (tested). Numba is imported by the first fit
that needs it; its compiled code is cached on disk.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..ecdf.sketch import MIX1, MIX2

__all__ = ["pair_key_rows"]

# every operand a uint64: numba promotes uint64 with a signed int to float64
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)


@njit(cache=True, nogil=True, inline="always")
def _mix(h):  # pragma: no cover - compiled
    h ^= h >> _S30
    h *= MIX1
    h ^= h >> _S27
    h *= MIX2
    h ^= h >> _S31
    return h


@njit(cache=True, nogil=True)
def _rounded(z, floor, grid):  # pragma: no cover - compiled
    z = np.float64(z)
    if z < floor:
        z = floor
    return np.uint64(np.int64(np.rint(z / grid)))


@njit(cache=True, nogil=True)
def pair_key_rows(Z, index, salt, floor, grid, out):  # pragma: no cover - compiled
    """``out[i]``, the key of row ``i`` of ``Z`` (M, r, C) with class ``index[i]``: over
    the scorers ``m``, the sum over the classes of ``mix(q ^ salt[m])`` (``q``: the
    log-probability clipped at ``floor``, rounded to multiples of ``grid``, its int64's
    bits) and a chain ``label = mix(label ^ q_label ^ salt[m])``; the key ``mix(sum ^
    label)``."""
    M, r, C = Z.shape
    for i in range(r):
        h = np.uint64(0)
        label = np.uint64(0)
        y = index[i]
        for m in range(M):
            s = salt[m]
            for k in range(C):
                h += _mix(_rounded(Z[m, i, k], floor, grid) ^ s)
            label = _mix(label ^ _rounded(Z[m, i, y], floor, grid) ^ s)
        out[i] = _mix(h ^ label)
