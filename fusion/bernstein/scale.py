"""The scores on their own scale: the linear features ``z`` of BernsteinFusion's default
model, and the log-probabilities of multi-class scores (:func:`log_probabilities`).

For a score column with fitted ECDF normalizer ``F`` (knots ``q_1 < ... < q_k`` with values
``h_1 < ... < h_k``, interpolated linearly) the feature is

.. math:: z = \\frac{T(Q(u)) - \\text{shift}}{\\text{scale}}, \\qquad u = F(s),

where ``Q`` is the inverse of ``F`` on ``[h_1, h_k]`` (the same knots with the roles swapped;
``u`` outside that interval is clamped), ``T`` the *base*: ``"logit"``,
``log(s') - log(1 - s')`` with ``s'`` the score clipped to ``[a, b]``, or ``"identity"``.
The clip is ``[1e-6, 1 - 1e-6]`` (:data:`LOGIT_CLIP`), except that a column whose training
scores include exactly 0 (1) is clipped at half its smallest score inside (0, 1) (half-way
from its largest to 1), when that is farther from the edge (:func:`logit_clips`): scores
reported to two decimals, or a forest's vote shares, read 0 as "below 0.01", not as a
logit of -13.8 that pulled the linear fit (3e-3 of test log-loss at 300-1,000 rows).
Properties:

* Inside the training range ``Q(F(s)) = s`` exactly with the exact ECDF (``F`` is linear and
  strictly increasing between knots), so ``z`` is the score itself; outside, ``F`` is clamped
  and ``z`` is *winsorized* at the training minimum or maximum: a new extreme (or infinite)
  score gets the feature of the most extreme training score. With a quantile-sketch ECDF
  (``ecdf_knots``) ``z`` interpolates the score linearly between the sketch's knots.
* ``z`` is a function of ``u`` alone, so the whole model is a function on the unit cube
  (``calibrating_function``) and every prediction path (in memory, dask blocks, a loaded
  model) computes the same thing from ``u``.
* ``z`` is non-decreasing in ``u``, to the last bit (:class:`fusion.ecdf.KnotLookup`).
* ``shift`` and ``scale`` (the median and the interquartile range of ``T(Q(u))`` over the
  training distribution, read off the knots) only condition the fit: the coefficient of
  ``z`` is not penalized, so predictions do not depend on them, nor on the unit of a
  raw score (an identity-base score multiplied by ``a > 0`` gives the same ``z``).

* ``z`` is capped at ``+-Z_CAP`` (100 interquartile ranges from the median): a few extreme
  scores (``1e308``, ``inf``) act as the most extreme moderate value instead of dominating
  (or overflowing) the fit. No realistic score distribution reaches the cap (a logit
  clipped at ``1e-6`` is 14 units from 0; interquartile ranges of logits are 1-5).

``base="auto"`` takes ``"logit"`` for a column whose training values all lie in ``[0, 1]``
(probabilities) and ``"identity"`` otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import log_softmax

from .._chunks import by_rows
from ..ecdf import KnotLookup

__all__ = [
    "BASES",
    "LOGIT_CLIP",
    "Z_CAP",
    "choose_bases",
    "transform_scores",
    "logit_clips",
    "scale_constants",
    "own_scale",
    "scores_scale",
    "knot_range",
    "InverseECDF",
    "OwnScale",
    "LOG_TINY",
    "log_probabilities",
]

#: Bases of the linear features (``None``, the rank-only model, is handled by the estimator).
BASES = ("auto", "logit", "identity")
#: Probabilities are clipped to ``[LOGIT_CLIP, 1 - LOGIT_CLIP]`` before the logit.
LOGIT_CLIP = 1e-6


#: Cap on ``|z|`` (in interquartile ranges from the median).
Z_CAP = 100.0


def choose_bases(base: str, knots: Sequence[np.ndarray]) -> tuple[str, ...]:
    """The base of every column: ``base`` itself, or for ``"auto"`` ``"logit"`` where the
    training values (``knots[j]`` spans them) lie in ``[0, 1]`` and ``"identity"`` elsewhere."""
    if base not in BASES:
        raise ValueError(f"base must be one of {BASES} or None, got {base!r}.")
    if base == "logit":
        for j, k in enumerate(knots):
            if k[0] < 0.0 or k[-1] > 1.0:
                raise ValueError(
                    f"base='logit' takes probabilities, but score column {j} has training "
                    f"values in [{k[0]:g}, {k[-1]:g}], outside [0, 1]. Use base='identity' for "
                    "scores on another scale, or base='auto' to choose per column."
                )
    if base != "auto":
        return (base,) * len(knots)
    return tuple("logit" if k[0] >= 0.0 and k[-1] <= 1.0 else "identity" for k in knots)


def transform_scores(s: np.ndarray, base: str, clip=None) -> np.ndarray:
    """``T(s)`` of the module docstring (non-decreasing in ``s``); ``clip``: the logit's
    ``(a, b)`` (default ``(LOGIT_CLIP, 1 - LOGIT_CLIP)``)."""
    s = np.asarray(s, dtype=float)
    if base == "logit":
        a, b = (LOGIT_CLIP, 1.0 - LOGIT_CLIP) if clip is None else clip
        s = np.clip(s, a, b)
        return np.log(s) - np.log1p(-s)
    return s


def logit_clips(knots: Sequence[np.ndarray]) -> np.ndarray:
    """Every column's logit clip ``(a, b)``, shape ``(M, 2)``, from its training scores (the
    ECDF's knots): ``a = max(LOGIT_CLIP, x / 2)`` with ``x`` the smallest knot inside (0, 1)
    where the smallest knot is at most 0, else ``LOGIT_CLIP``; ``b`` likewise at the top.
    Every knot inside ``[LOGIT_CLIP, 1 - LOGIT_CLIP]`` stays inside ``[a, b]``, and a 0 or 1
    only moves toward its nearest such knot, so distinct scores there keep distinct
    features."""
    out = np.empty((len(knots), 2))
    for j, k in enumerate(knots):
        k = np.asarray(k, dtype=float)
        inside = k[(k > 0.0) & (k < 1.0)]
        a, b = LOGIT_CLIP, 1.0 - LOGIT_CLIP
        if inside.size and k[0] <= 0.0:
            a = max(a, float(inside[0]) / 2.0)
        if inside.size and k[-1] >= 1.0:
            b = min(b, (1.0 + float(inside[-1])) / 2.0)
        out[j] = a, b
    return out


class InverseECDF:
    """``Q_j``: normalized values back to scores, one lookup per column."""

    def __init__(self, knots: Sequence[np.ndarray], values: Sequence[np.ndarray]):
        self.lookups = [
            KnotLookup(np.asarray(v), np.asarray(k)) for k, v in zip(knots, values, strict=False)
        ]

    def column(self, u: np.ndarray, j: int) -> np.ndarray:
        return self.lookups[j](np.asarray(u, dtype=float))


def scale_constants(
    inverse: InverseECDF, bases: Sequence[str], clips: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``shift`` (median) and ``scale`` (interquartile range) of ``T(Q(u))`` per column.

    Quartiles of the training distribution read off the ECDF; where the interquartile range
    is 0 (heavy ties) the full range is used, and 1 when that is 0 too (a column that the
    logit clip made constant: its feature is then 0 and its coefficient has no effect).
    """
    M = len(bases)
    shift, scale = np.zeros(M), np.ones(M)
    probes = np.array([0.25, 0.5, 0.75, 0.0, 1.0])
    for j, base in enumerate(bases):
        t = transform_scores(inverse.column(probes, j), base, _clip(clips, j))
        shift[j] = t[1]
        spread = t[2] - t[0]
        if not spread > 0:
            spread = t[4] - t[3]
        scale[j] = spread if spread > 0 and np.isfinite(spread) else 1.0
    return shift, scale


def knot_range(knots: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Every column's smallest and largest training value (its first and last ECDF knot),
    the winsorization bounds of :func:`scores_scale`."""
    lo = np.array([k[0] for k in knots], dtype=float)
    hi = np.array([k[-1] for k in knots], dtype=float)
    return lo, hi


def scores_scale(
    S: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    bases: Sequence[str],
    shift: np.ndarray,
    scale: np.ndarray,
    clips: np.ndarray | None = None,
) -> np.ndarray:
    """The features ``z`` from the raw scores: ``(T(clip(s, lo, hi)) - shift) / scale``.

    Equal to :func:`own_scale` at ``U = F(S)`` up to rounding: ``Q(F(s)) = s`` inside the
    knots (both maps are linear on the same segments) and the clip is the winsorization.
    """

    def features(S):
        Z = np.empty(S.shape)
        for j, base in enumerate(bases):
            z = transform_scores(np.clip(S[:, j], lo[j], hi[j]), base, _clip(clips, j))
            z -= shift[j]
            z /= scale[j]
            Z[:, j] = np.clip(z, -Z_CAP, Z_CAP)
        return Z

    return by_rows(features, S)


def own_scale(
    U: np.ndarray,
    inverse: InverseECDF,
    bases: Sequence[str],
    shift: np.ndarray,
    scale: np.ndarray,
    out: np.ndarray | None = None,
    clips: np.ndarray | None = None,
) -> np.ndarray:
    """The standardized features ``z`` of every column at normalized points ``U``, ``(n, M)``."""

    def features(U):
        Z = np.empty(U.shape)
        for j, base in enumerate(bases):
            t = transform_scores(inverse.column(U[:, j], j), base, _clip(clips, j))
            z = (t - shift[j]) / scale[j]
            Z[:, j] = np.clip(z, -Z_CAP, Z_CAP)
        return Z

    return by_rows(features, U, out=out)


def _clip(clips: np.ndarray | None, j: int):
    return None if clips is None else (float(clips[j, 0]), float(clips[j, 1]))


@dataclass(frozen=True, eq=False)
class OwnScale:
    """The linear features of a fitted ECDF: every column's base, shift and scale (the
    fitted ``base_``, ``base_shift_``, ``base_scale_``), the ECDF's knots (the
    winsorization bounds) and its inverse ``Q``, or a function that returns it (asked only
    for features at normalized points without their scores), and the logit's clips
    (:func:`logit_clips`; None: :data:`LOGIT_CLIP`, as models saved before them)."""

    bases: tuple[str, ...]
    shift: np.ndarray
    scale: np.ndarray
    knots: Sequence[np.ndarray]
    inverse: InverseECDF | Callable[[], InverseECDF]
    clips: np.ndarray | None = None

    @classmethod
    def fit(cls, base: str, ecdf, inverse: InverseECDF | None = None) -> OwnScale:
        """The bases (:func:`choose_bases`) and standardization (:func:`scale_constants`)
        of the columns of a fitted :class:`~fusion.ecdf.ECDFNormalizer`."""
        if inverse is None:
            inverse = InverseECDF(ecdf.knots_, ecdf.values_)
        bases = choose_bases(base, ecdf.knots_)
        clips = logit_clips(ecdf.knots_)
        shift, scale = scale_constants(inverse, bases, clips)
        return cls(bases, shift, scale, ecdf.knots_, inverse, clips)

    def features(self, U: np.ndarray, S: np.ndarray | None = None) -> np.ndarray:
        """Standardized ``z`` at normalized points ``U``; from the scores ``S`` of the same
        rows when given (the same values up to rounding, without inverting the ECDF; a
        missing score's ``z`` from its ``u``)."""
        if S is None:
            inverse = self.inverse if isinstance(self.inverse, InverseECDF) else self.inverse()
            return own_scale(U, inverse, self.bases, self.shift, self.scale, clips=self.clips)
        Z = self.from_scores(np.asarray(S, dtype=float))
        unknown = np.isnan(Z)
        if unknown.any():  # a missing score's scale is unknown: integrated over its u
            Z[unknown] = self.features(U)[unknown]
        return Z

    def from_scores(self, S: np.ndarray) -> np.ndarray:
        """Standardized ``z`` of the scores ``S`` (:func:`scores_scale`)."""
        lo, hi = knot_range(self.knots)
        return scores_scale(S, lo, hi, self.bases, self.shift, self.scale, self.clips)

    def feature_range(self, M: int) -> tuple[np.ndarray, np.ndarray]:
        """``z`` at the training minimum and maximum of every score (winsorization
        bounds)."""
        return self.features(np.zeros((1, M)))[0], self.features(np.ones((1, M)))[0]


#: ``log`` of the smallest normal double: no log-probability is kept below it.
LOG_TINY = float(np.log(np.finfo(np.float64).tiny))


def log_probabilities(block: np.ndarray, scale: str, floor: float | None = None) -> np.ndarray:
    """``z`` of one scorer's class scores ``block`` (r, C), at or above ``floor`` (default
    :data:`LOG_TINY`), in float32 for float32 input and float64 otherwise.

    Both scales give normalized log-probabilities: ``log(p / sum(p))`` for probabilities
    (negative rounding errors read as 0), the log-softmax ``s - logsumexp(s)`` for logits
    (``-inf`` is a probability of 0), so a network's logits, their log-softmax and their
    softmax give the same ``z`` up to rounding, and so does a constant added to a row of
    logits. A row of probabilities that are all 0 says nothing: it is the uniform
    distribution, as a row of equal logits is (the floor for every class made a network of
    zero logits, read as probabilities, hash to other folds than its log-softmax)."""
    dtype = np.float32 if block.dtype == np.float32 else np.float64
    low = LOG_TINY if floor is None else max(float(floor), LOG_TINY)
    with np.errstate(divide="ignore", invalid="ignore"):
        if scale == "probability":
            p = np.maximum(np.asarray(block, dtype=np.float64), 0.0)
            total = p.sum(axis=1, keepdims=True)
            z = np.log(p)
            z -= np.log(total)
            z[total[:, 0] == 0.0] = -np.log(p.shape[1])
        else:
            z = log_softmax(np.asarray(block, dtype=np.float64), axis=1)
    np.fmax(z, low, out=z)  # -inf (a probability of 0) to the floor
    return z.astype(dtype, copy=False)
