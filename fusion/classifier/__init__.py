"""A scikit-learn classifier that cross-fits base classifiers and fuses their scores.

:class:`FusionClassifier` (``estimator.py``) holds the parameters and fitted state; the
cross-fitting and the score layout are plain functions in ``crossfit.py``, the rules of the
``estimators`` parameter (names, checks, nested parameters) in ``members.py``.
"""

from .estimator import FusionClassifier

__all__ = ["FusionClassifier"]
