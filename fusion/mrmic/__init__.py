"""MRMICFusion: manifold-regularized isotonic fusion (Zhong & Kwok 2013) as a sparse QP."""

from .estimator import DEFAULT_MAX_POINTS, DEFAULT_RELATIVE_LAM_GRID, MRMICFusion

__all__ = ["MRMICFusion", "DEFAULT_RELATIVE_LAM_GRID", "DEFAULT_MAX_POINTS"]
