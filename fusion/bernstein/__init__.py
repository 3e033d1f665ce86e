"""BernsteinFusion: monotone fusion with tensor Bernstein polynomials.

Modules: :mod:`.estimator` (the class), :mod:`.plan` (what a fit tries and how it chooses),
:mod:`.folds` (the fold rule), :mod:`.structure` and :mod:`.basis` (Bernstein components and
bases), :mod:`.scale` (scores on their own scale), :mod:`.results` (the fitters' results),
:mod:`.binary` (the default and rank-only models), :mod:`.multiclass` (the class-shared
model), :mod:`.dask` (dask collections).
"""

from .estimator import DEFAULT_DEGREE_GRID, DEFAULT_LAM_GRID, BernsteinFusion

__all__ = ["BernsteinFusion", "DEFAULT_DEGREE_GRID", "DEFAULT_LAM_GRID"]
