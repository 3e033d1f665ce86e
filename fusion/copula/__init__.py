"""CopulaFusion: per-class KDE marginals and a per-class copula chosen by maximum likelihood.

Layout: :mod:`.kde` (boundary-corrected marginals on ``[0, 1]``), :mod:`.families`
(log-densities and bounds), :mod:`.fit` (maximum likelihood and selection),
:mod:`.sampling` (random draws, for simulations) and :mod:`.estimator` (the estimator).
"""

from .estimator import CopulaFusion
from .families import FAMILIES

__all__ = ["CopulaFusion", "FAMILIES"]
