"""Which classes a model file may name, and which fitted attributes each may carry."""

from __future__ import annotations

import inspect
import re

__all__ = [
    "saveable_classes",
    "class_name",
    "is_top_level",
    "fitted_attributes",
    "declares_fitted_attributes",
    "documented_attributes",
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


def fitted_attributes(cls: type) -> frozenset[str] | None:
    """The fitted attributes a saved ``cls`` may carry, or None when unknown (no check then).

    A class declares its own fitted state as a class attribute ``_fitted_attributes``, a tuple
    of names; the result is the union of the declarations along the MRO (the base classes
    declare theirs, e.g. ``classes_`` and ``ecdf_`` on ``FusionEstimator``). A class that does
    not declare its own still has its names read from its docstrings' ``Attributes`` sections
    (:func:`documented_attributes`), which ``python -OO`` strips (None then).
    """
    if not declares_fitted_attributes(cls):
        return documented_attributes(cls)  # fallback: goes when every saveable class declares
    names: set[str] = set()
    for klass in cls.__mro__:
        declared = vars(klass).get("_fitted_attributes", ())
        if not (isinstance(declared, tuple) and all(isinstance(s, str) for s in declared)):
            raise TypeError(f"{klass.__name__}._fitted_attributes must be a tuple of names.")
        names.update(declared)
    return frozenset(names)


def documented_attributes(cls: type) -> frozenset[str] | None:
    """Fitted-attribute names listed in the numpydoc ``Attributes`` sections along ``cls``'s MRO.

    Returns None when ``cls`` has no docstring (stripped by ``python -OO``).
    """
    if not cls.__dict__.get("__doc__"):
        return None
    names: set[str] = set()
    for klass in cls.__mro__:
        doc = klass.__dict__.get("__doc__")
        if not doc:
            continue
        lines = inspect.cleandoc(doc).splitlines()
        for i in range(len(lines) - 1):
            if lines[i].strip() != "Attributes" or not _is_rule(lines[i + 1]):
                continue
            for j in range(i + 2, len(lines)):
                line = lines[j]
                if j + 1 < len(lines) and _is_rule(lines[j + 1]) and line.strip():
                    break  # next section header
                if line.strip() and not line[0].isspace():
                    head = line.split(" : ")[0]
                    names.update(t.strip() for t in head.split(",") if ATTR_NAME.match(t.strip()))
    return frozenset(names)


def _is_rule(line: str) -> bool:
    s = line.strip()
    return len(s) >= 3 and set(s) == {"-"}
