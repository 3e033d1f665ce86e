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
    "label_rank_sums",
    "label_rank_z",
    "reverse_networks",
    "warn_reversed_networks",
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


def label_rank_sums(S: np.ndarray, index: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``(3, M)``: for every network of multi-class scores ``S`` (n, M, C), the weighted sum
    of each row's label rank minus its mean under no information, the sum of the weights
    and of their squares (:func:`label_rank_z` reads them; blocks of rows add up).

    A row's label rank is the number of classes its network scores below the row's label,
    ties counting one half: ``0 .. C - 1``, uniform with mean ``(C - 1) / 2`` when the
    network knows nothing, and the same for logits, log-probabilities or probabilities.
    """
    n, M, C = S.shape
    out = np.zeros((3, M))
    out[1], out[2] = w.sum(), np.dot(w, w)
    step = max(1, (1 << 20) // max(1, C))
    for start in range(0, n, step):
        rows = slice(start, start + step)
        Sb, ib, wb = S[rows], index[rows], w[rows]
        r = np.arange(Sb.shape[0])
        for m in range(M):
            own = Sb[r, m, ib][:, None]
            rank = (Sb[:, m] < own).sum(axis=1) + 0.5 * ((Sb[:, m] == own).sum(axis=1) - 1)
            out[0, m] += np.dot(wb, rank - 0.5 * (C - 1))
    return out


def label_rank_z(sums: np.ndarray, C: int) -> np.ndarray:
    """Every network's z statistic of its label ranks (:func:`label_rank_sums`): their
    weighted sum over its standard deviation under no information, ``sqrt(sum w^2 (C^2 -
    1) / 12)``; approximately standard normal then, negative when the label's score tends to
    be low (the network reads "lower is more likely")."""
    sd = np.sqrt(sums[2] * (C * C - 1) / 12.0)
    return np.where(sd > 0, sums[0] / np.where(sd > 0, sd, 1.0), 0.0)


def reverse_networks(S, increasing: np.ndarray):
    """Multi-class scores ``S`` (n, M, C) with every network whose ``increasing`` is False
    negated (``s -> -s``: its lowest score becomes its highest logit); ``S`` itself when
    none is. Works on dask arrays too (lazily)."""
    increasing = np.asarray(increasing, dtype=bool)
    if increasing.all():
        return S
    sign = np.where(increasing, 1.0, -1.0).astype(S.dtype)
    return S * sign[None, :, None]


def warn_reversed_networks(networks: list[int], z) -> None:
    """One UserWarning naming every network ``increasing="auto"`` reversed."""
    names = ", ".join(f"{m} (z = {v:.1f})" for m, v in zip(networks, z, strict=True))
    warnings.warn(
        f"network(s) {names} score the labelled class significantly lower than the others, "
        "so increasing='auto' reversed them (every score s used as -s); increasing_ records "
        "the decision. Pass increasing=True (or one bool per network) to use the scores as "
        "given, or negate them yourself, to silence this.",
        UserWarning,
        stacklevel=caller_level(),
    )
