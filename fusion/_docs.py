"""Docstring fragments written once: a docstring line holding only ``{name}`` is replaced by
the fragment ``name``, indented as that line was (the approach of pandas' ``@doc`` and MNE's
``fill_doc``), so a parameter or attribute that means the same in several places has one
description to keep right."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping
from typing import TypeVar

__all__ = ["fill_doc", "ESTIMATOR_FRAGMENTS", "estimator_doc"]

F = TypeVar("F", bound=Callable)

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>\w+)\}[ \t]*$", re.MULTILINE)


def fill_doc(fragments: Mapping[str, str]) -> Callable[[F], F]:
    """A decorator that puts ``fragments`` into the ``{name}`` lines of a docstring.

    An unknown name raises ``KeyError`` at import, so a misspelt placeholder cannot reach the
    documentation. Docstrings stripped by ``python -OO`` are left as they are (None).
    """

    def fill(match: re.Match) -> str:
        return textwrap.indent(fragments[match["name"]], match["indent"])

    def decorate(func: F) -> F:
        if func.__doc__:
            func.__doc__ = _PLACEHOLDER.sub(fill, func.__doc__)
        return func

    return decorate


#: What the estimators' docstrings share.
ESTIMATOR_FRAGMENTS: dict[str, str] = {
    "shared_parameters": """\
increasing, missing, ecdf_knots, random_state, verbose
    Shared by every estimator; see :class:`~fusion.FusionEstimator`.""",
    "combine_parameter": """\
combine : {"mean", "logistic"}, default="mean"
    Reduction of ``M >= 2`` scores to one (:mod:`fusion.univariate.reduction`).""",
    "rank_invariance": """\
Rank-based: the model sees every score only through its ECDF value, and a score between two
training scores is normalized to the mean of their two values, whatever its distance to
either (``between="step"`` of :meth:`fusion.ECDFNormalizer.transform`). Its value, and
so every prediction, depends only on where each score falls among the training scores: a
strictly increasing transform of a score (logits instead of probabilities, ``exp``, a
cubic), applied to the training and the new scores alike, leaves the predictions unchanged
bit for bit, at new scores as at training ones. The price is that between two adjacent
training values of a score the prediction is constant: a step function of the score, with
steps of about ``1 / n`` on the normalized scale. With an ECDF sketch (``ecdf_knots``; from
100,000 rows with ``"auto"``) the same holds relative to the sketch's knots, see
:mod:`fusion.ecdf.sketch`.""",
    "reduction_attributes": """\
combine_coef_, combine_intercept_, combine_knots_, combine_values_
    The reduction (see :mod:`fusion.univariate.reduction`).
classes_, ecdf_, n_features_in_, feature_names_in_
    See :class:`fusion.FusionEstimator`.""",
}

#: The decorator of the estimators' docstrings.
estimator_doc = fill_doc(ESTIMATOR_FRAGMENTS)
