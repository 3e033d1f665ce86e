"""The mid-distribution formula behind every ECDF value in the package."""

from __future__ import annotations

import numpy as np

__all__ = ["mid_distribution"]


def mid_distribution(below: np.ndarray, at: np.ndarray, total: float) -> np.ndarray:
    """The mid-distribution ``(W{s < q} + W{s <= q}) / (2 W)`` at knots ``q``.

    ``below`` is the weight strictly below each knot, ``at`` the weight at it, ``total`` the
    whole weight: the one formula behind every ECDF value in the package.
    """
    below = np.asarray(below, dtype=float)
    return (below + np.asarray(at, dtype=float) / 2.0) / total
