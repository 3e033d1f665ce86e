"""The direction of every score: ``increasing`` resolved per column, the rank statistic that
flags an anti-aligned score (``increasing="auto"``), its warning, and the reversal."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from ._warn import caller_level

__all__ = [
    "DIRECTION_Z",
    "resolve_increasing",
    "reverse_scores",
    "anti_alignment_z",
    "column_label",
    "warn_reversed",
]

#: A score whose rank correlation with the label has a z statistic below this (one-sided
#: p < 0.001) is reversed by ``increasing="auto"``.
DIRECTION_Z = -3.09


def reverse_scores(S: np.ndarray, columns, offsets: np.ndarray) -> np.ndarray:
    """A copy of ``S`` with ``columns`` reversed: ``s -> offset - s`` (integers: ``~s``)."""
    S = S.copy()
    for j in columns:
        if S.dtype.kind in "iu":  # exact reversal of integers beyond 2**53
            S[:, j] = ~S[:, j]
        else:
            S[:, j] = offsets[j] - S[:, j]
    return S


def resolve_increasing(increasing, M: int) -> list:
    """Per-score direction: True (as given), False (reversed) or None (decide from the data).

    ``increasing`` is True, False, ``"auto"``, or a sequence of M bools or ``"auto"``.
    """
    if isinstance(increasing, str):
        if increasing != "auto":
            raise ValueError(f"increasing must be True, False or 'auto', got {increasing!r}.")
        return [None] * M
    if isinstance(increasing, (bool, np.bool_)):
        return [bool(increasing)] * M
    if isinstance(increasing, Sequence) or isinstance(increasing, np.ndarray):
        values = list(increasing)
        if len(values) != M:
            raise ValueError(
                f"increasing has {len(values)} entries but there are {M} score columns; pass "
                "one bool (or 'auto') per column."
            )
        out = []
        for j, v in enumerate(values):
            if isinstance(v, str) and v == "auto":
                out.append(None)
            elif isinstance(v, (bool, np.bool_)):
                out.append(bool(v))
            else:
                raise ValueError(
                    f"increasing[{j}] must be a bool or 'auto', got {v!r} of type "
                    f"{type(v).__name__}."
                )
        return out
    raise ValueError(
        f"increasing must be True, False, 'auto' or a sequence of those, got {increasing!r}."
    )


def anti_alignment_z(u: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """z statistic of the weighted rank correlation between a score and the label.

    ``u`` are the score's mid-ranks on ``(0, 1)`` (its ECDF values), so this is the
    point-biserial correlation of ranks with ``y`` (the Mann-Whitney statistic in another
    form) times ``sqrt(n_eff - 1)`` with Kish's effective sample size; under independence it
    is approximately standard normal. Negative: the score tends to be lower for positives.
    """
    seen = ~np.isnan(u)
    if not seen.all():
        u, y, w = u[seen], y[seen], w[seen]
    W = w.sum()
    if u.shape[0] < 3 or not W > 0:
        return 0.0
    unit = bool(np.all(w == 1.0))  # unweighted: dot products without the weights
    y = np.asarray(y, dtype=float)
    if unit:
        mu, my = u.sum() / W, y.sum() / W
    else:
        mu, my = np.dot(w, u) / W, np.dot(w, y) / W
    du, dy = u - mu, y - my
    wdu, wdy = (du, dy) if unit else (w * du, w * dy)
    su, sy = np.dot(wdu, du), np.dot(wdy, dy)
    if not (su > 0 and sy > 0):
        return 0.0
    r = float(np.dot(wdu, dy) / np.sqrt(su * sy))
    n_eff = W if unit else W * W / np.dot(w, w)
    return r * float(np.sqrt(max(n_eff - 1.0, 0.0)))


def column_label(names, j: int) -> str:
    """How messages name score column ``j``: its name (``names``, the fitted
    ``feature_names_in_``) quoted, else its index."""
    return repr(str(names[j])) if names is not None else str(j)


def warn_reversed(columns: list, z: list[float]) -> None:
    """One UserWarning naming every score ``increasing="auto"`` reversed."""
    names = ", ".join(f"{c} (z = {v:.1f})" for c, v in zip(columns, z, strict=True))
    warnings.warn(
        f"score column(s) {names} decrease significantly with P(y = positive class), so "
        "increasing='auto' reversed them (a probability column p is used as 1 - p, any other "
        "score s as -s); increasing_ records the decision. Pass increasing=True (or one bool "
        "per column) to use the scores as given, or reverse them yourself, to silence this.",
        UserWarning,
        stacklevel=caller_level(),
    )
