"""BernsteinFusion: tensor Bernstein polynomial with coordinate-wise monotone coefficients."""

from .estimator import DEFAULT_DEGREE_GRID, BernsteinFusion

__all__ = ["BernsteinFusion", "DEFAULT_DEGREE_GRID"]
