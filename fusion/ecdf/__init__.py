"""ECDF normalization: every method's first step, its mid-rank formula and its large-n sketch.

* :mod:`.normalizer` -- :class:`ECDFNormalizer` (weighted mid-distribution function of each
  score column), :func:`mid_distribution` (the formula), :func:`mid_ecdf_knots`.
* :mod:`.lookup` -- evaluating the fitted map between knots, exactly monotone.
* :mod:`.sketch` -- at most ``n_knots`` knots per column, in memory or merged over blocks.
"""

from . import normalizer
from .lookup import KnotLookup, interp_segments
from .midrank import mid_distribution
from .normalizer import ConstantColumnError as ConstantColumnError
from .normalizer import ECDFNormalizer as ECDFNormalizer
from .normalizer import mid_ecdf_knots as mid_ecdf_knots
from .normalizer import score_columns as score_columns
from .normalizer import valid_knots as valid_knots

__all__ = [*normalizer.__all__, "mid_distribution", "interp_segments", "KnotLookup"]
