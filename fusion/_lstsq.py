"""Weighted least-squares sufficient statistics, shared by the methods that fit by least squares.

For a design ``Phi`` (rows ``phi_i``), labels ``y`` and weights ``w``, the statistics
``G = Phi' W Phi``, ``b = Phi' W y``, ``yy = y' W y`` and ``sw = sum(w)`` determine the
weighted squared error of every coefficient vector. They add over row blocks, so
cross-validation needs one pass: per-fold statistics, training statistics as "total minus
fold", and held-out errors from the fold's statistics without evaluating the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LeastSquaresStats", "heldout_sse"]


@dataclass
class LeastSquaresStats:
    """``G = Phi'W Phi`` (P x P), ``b = Phi'W y``, ``yy = y'W y``, ``sw = sum(w)``.

    Instances add and subtract (fold statistics). For a polynomial design ordered by degree,
    the statistics of a lower degree are the leading blocks (:meth:`truncate`).
    """

    G: np.ndarray
    b: np.ndarray
    yy: float
    sw: float

    @classmethod
    def from_design(cls, Phi: np.ndarray, y: np.ndarray, w: np.ndarray) -> LeastSquaresStats:
        """Statistics of the rows of a dense design ``Phi`` (n x P)."""
        wPhi = Phi * w[:, None]
        return cls(wPhi.T @ Phi, wPhi.T @ y, float(np.dot(w, y * y)), float(w.sum()))

    def __add__(self, other: LeastSquaresStats) -> LeastSquaresStats:
        return type(self)(
            self.G + other.G, self.b + other.b, self.yy + other.yy, self.sw + other.sw
        )

    def __sub__(self, other: LeastSquaresStats) -> LeastSquaresStats:
        return type(self)(
            self.G - other.G, self.b - other.b, self.yy - other.yy, self.sw - other.sw
        )

    def truncate(self, k: int) -> LeastSquaresStats:
        """The statistics of the first ``k`` columns of the design."""
        return type(self)(self.G[:k, :k], self.b[:k], self.yy, self.sw)


def heldout_sse(stats: LeastSquaresStats, coef: np.ndarray) -> float:
    """``sum_i w_i (phi_i' coef - y_i)^2`` over the rows behind ``stats``."""
    x = np.asarray(coef, dtype=float).reshape(-1)
    return float(x @ stats.G @ x - 2.0 * stats.b @ x + stats.yy)
