"""Helpers shared by the copula tests."""

from __future__ import annotations

import numpy as np


def equicorrelation(M: int, rho: float) -> np.ndarray:
    """The M x M correlation matrix with every off-diagonal entry ``rho``."""
    R = np.full((M, M), rho)
    np.fill_diagonal(R, 1.0)
    return R
