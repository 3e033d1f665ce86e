"""Which classes a model file may name, and which fitted attributes each may carry."""

from __future__ import annotations

import re

__all__ = [
    "saveable_classes",
    "class_name",
    "is_top_level",
    "fitted_attributes",
    "declares_fitted_attributes",
]

ATTR_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*_\Z")


def saveable_classes() -> dict[str, type]:
    """Stable name -> class of everything a model file may name (:mod:`fusion._registry`)."""
    from .._registry import saveable_classes as registered

    return registered()


def class_name(cls: type) -> str | None:
    """The stable name of a saveable class, None for any other class (subclasses included)."""
    return next((name for name, c in saveable_classes().items() if c is cls), None)


def is_top_level(cls: type) -> bool:
    """Whether a file may hold ``cls`` as its model (the others only nest inside one)."""
    from .._base import FusionEstimator

    return issubclass(cls, FusionEstimator)


def declares_fitted_attributes(cls: type) -> bool:
    """Whether ``cls`` itself declares ``_fitted_attributes`` (inheriting one does not count)."""
    return "_fitted_attributes" in vars(cls)


def fitted_attributes(cls: type) -> frozenset[str]:
    """The fitted attributes a saved ``cls`` may carry.

    A class declares its own fitted state as a class attribute ``_fitted_attributes``, a tuple
    of names; the result is the union of the declarations along the MRO (the base classes
    declare theirs, e.g. ``classes_`` and ``ecdf_`` on ``FusionEstimator``). Only
    declarations count: a subclass that adds fitted state must declare it.
    """
    names: set[str] = set()
    for klass in cls.__mro__:
        declared = vars(klass).get("_fitted_attributes", ())
        if not (isinstance(declared, tuple) and all(isinstance(s, str) for s in declared)):
            raise TypeError(f"{klass.__name__}._fitted_attributes must be a tuple of names.")
        names.update(declared)
    return frozenset(names)
