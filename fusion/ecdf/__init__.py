"""ECDF normalization: every method's first step, its mid-rank formula and its large-n sketch.

* :mod:`.normalizer` -- :class:`ECDFNormalizer` (weighted mid-distribution function of each
  score column), :func:`mid_distribution` (the formula), :func:`mid_ecdf_knots`.
* :mod:`.lookup` -- evaluating the fitted map between knots, exactly monotone.
* :mod:`.sketch` -- at most ``n_knots`` knots per column, in memory or merged over blocks.
"""

from .lookup import KnotLookup, interp_segments
from .midrank import mid_distribution
from .normalizer import (
    ConstantColumnError,
    ECDFNormalizer,
    mid_ecdf_knots,
    score_columns,
    valid_knots,
)

__all__ = [
    "ECDFNormalizer",
    "ConstantColumnError",
    "mid_ecdf_knots",
    "mid_distribution",
    "score_columns",
    "valid_knots",
    "interp_segments",
    "KnotLookup",
]
