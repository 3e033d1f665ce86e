"""BernsteinFusion: monotone fusion with tensor Bernstein polynomials.

Modules: :mod:`.estimator` (the class), :mod:`.logistic` (the default model's penalized
monotone logistic fit), :mod:`.scale` (scores on their own scale), :mod:`.cells` (rows
aggregated into cells), :mod:`.basis` (Bernstein bases and designs), :mod:`.qp` (the
rank-only model's QP and the OSQP step boundary), :mod:`.sketch` (ECDF sketch),
:mod:`.distributed` (dask).
"""

from .estimator import DEFAULT_DEGREE_GRID, DEFAULT_LAM_GRID, BernsteinFusion

__all__ = ["BernsteinFusion", "DEFAULT_DEGREE_GRID", "DEFAULT_LAM_GRID"]
