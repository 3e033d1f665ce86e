"""The ``estimators`` parameter of :class:`~fusion.classifier.FusionClassifier`: its two forms,
the names of its members, their checks, and their nested parameters (``name__param``).

Plain functions on the parameter's value, so that the classifier keeps scikit-learn's
composition rules (those of :class:`~sklearn.ensemble.StackingClassifier`: a member is
replaced by name or set to ``"drop"``, its parameters are ``name__param``) without deriving
from scikit-learn's private base classes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sklearn.base import is_classifier

from .crossfit import derive_names

__all__ = ["is_drop", "member_pairs", "check_members", "nested_params", "replace_members"]


def is_drop(estimator) -> bool:
    """Whether a member of ``estimators`` is ``"drop"`` (an estimator is never equal to it)."""
    return isinstance(estimator, str) and estimator == "drop"


def member_pairs(items) -> tuple[list[str], list]:
    """``(names, estimators)`` of an ``estimators`` value: a list of ``(name, estimator)``
    pairs, or of estimators named by :func:`~fusion.classifier.crossfit.derive_names`.

    Raises
    ------
    ValueError
        ``items`` is not a non-empty list or tuple, or mixes the two forms.
    """
    if not isinstance(items, (list, tuple)) or len(items) == 0:
        raise ValueError(
            "estimators must be a non-empty list of (name, estimator) tuples or of "
            f"estimators; got {items!r}."
        )
    is_pair = [
        isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str)
        for item in items
    ]
    if all(is_pair):
        return [name for name, _ in items], [est for _, est in items]
    if not any(is_pair):
        return derive_names(items), list(items)
    raise ValueError(
        "estimators mixes (name, estimator) tuples and bare estimators; give all of them one way."
    )


def check_members(names: Sequence[str], estimators: Sequence, reserved: Iterable[str]) -> None:
    """Refuse members a classifier cannot use: repeated names, names that are parameters of
    the classifier (``reserved``) or hold ``"__"``, all members dropped, and members that are
    classes or not classifiers.

    Raises
    ------
    ValueError, TypeError
        The first problem found, naming the member.
    """
    if len(set(names)) != len(names):
        raise ValueError(
            f"estimator names are not unique: {list(names)!r}; give each estimator its own."
        )
    taken = sorted(set(names) & set(reserved))
    if taken:
        raise ValueError(
            f"estimator names conflict with parameters of the classifier: {taken!r}; rename "
            "the estimators (a name is also the prefix of its parameters, name__param)."
        )
    nested = [name for name in names if "__" in name]
    if nested:
        raise ValueError(
            f"estimator names must not contain '__', which separates a name from its "
            f"parameter in name__param: got {nested!r}."
        )
    if all(is_drop(est) for est in estimators):
        raise ValueError("every estimator is 'drop'; at least one base estimator is needed.")
    for name, est in zip(names, estimators, strict=True):
        if is_drop(est):
            continue
        if isinstance(est, type):
            raise TypeError(
                f"estimator {name!r} is the class {est.__name__}; pass an instance "
                f"({est.__name__}())."
            )
        if not hasattr(est, "fit"):
            raise ValueError(
                f"estimator {name!r} ({type(est).__name__}) has no fit method; pass "
                "scikit-learn classifiers."
            )
        if not is_classifier(est):
            raise ValueError(
                f"estimator {name!r} ({type(est).__name__}) is not a classifier; "
                "FusionClassifier fuses the scores of classifiers."
            )


def nested_params(names: Sequence[str], estimators: Sequence) -> dict:
    """The deep parameters of the members: ``name -> estimator`` and, for every member that
    has parameters, ``name__param -> value`` (its own deep parameters, so a pipeline's steps
    give ``name__step__param``)."""
    out = {}
    for name, estimator in zip(names, estimators, strict=True):
        out[name] = estimator
        if hasattr(estimator, "get_params") and not isinstance(estimator, type):
            for key, value in estimator.get_params(deep=True).items():
                out[f"{name}__{key}"] = value
    return out


def replace_members(names: Sequence[str], estimators: Sequence, replaced: dict) -> list[tuple]:
    """The ``estimators`` value with the members named in ``replaced`` swapped for their new
    value (an estimator or ``"drop"``), as ``(name, estimator)`` pairs: a plain list gains its
    derived names, so that the replacement stays addressable by the same name."""
    return [(name, replaced.get(name, est)) for name, est in zip(names, estimators, strict=True)]
