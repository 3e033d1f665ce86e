"""Conversions and checks of BernsteinFusion's parameters and inputs that the plans and the
in-memory and dask sources share: degrees from a parameter, and a constant column."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._validation import CONSTANT_COLUMN_REMEDY
from ..ecdf import ConstantColumnError

__all__ = ["check_not_constant", "as_degrees"]


def check_not_constant(knots: np.ndarray, j: int) -> None:
    """A :class:`~fusion.ecdf.ConstantColumnError` for column ``j`` if its ECDF knots (its
    distinct values) hold a single value."""
    if knots.shape[0] < 2:
        raise ConstantColumnError(
            f"score column {j} is constant (every value equals {float(knots[0]):g}); a "
            "constant score carries no ranking information and cannot be calibrated. "
            + CONSTANT_COLUMN_REMEDY
        )


def as_degrees(value, M: int, what: str) -> tuple[int, ...]:
    if isinstance(value, (Integral, np.integer)) and not isinstance(value, bool):
        degrees = (int(value),) * M
    else:
        try:
            degrees = tuple(int(v) for v in value)
            ok = all(float(v) == int(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(
                f"{what} must be an int or a sequence of ints, got {value!r}."
            ) from None
        if not ok:
            raise ValueError(f"{what} must hold integers, got {value!r}.")
        if len(degrees) != M:
            raise ValueError(
                f"{what} {value!r} has {len(degrees)} entries but there are {M} score columns."
            )
    if any(k < 0 for k in degrees):
        raise ValueError(f"{what} must be non-negative, got {value!r}.")
    return degrees
