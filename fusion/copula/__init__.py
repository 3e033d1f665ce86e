"""CopulaFusion: per-class KDE marginals and a per-class copula chosen by maximum likelihood.

Layout: :mod:`.family` (what a copula family is: the interface, rotations, the likelihood of
points and intervals), :mod:`.families` (one class per family; the file to edit to add one),
:mod:`.special` and :mod:`.dependence` (the special functions and dependence measures they
use), :mod:`.fit` (fitting every candidate and selection), :mod:`.kde` (boundary-corrected
densities on ``[0, 1]``), :mod:`.marginals` (class-conditional marginals: atoms at tied
scores, KDE elsewhere) and :mod:`.estimator` (the estimator).
"""

from .estimator import CopulaFusion
from .families import FAMILIES, KNOWN_FAMILIES, make

__all__ = ["CopulaFusion", "FAMILIES", "KNOWN_FAMILIES", "make"]
