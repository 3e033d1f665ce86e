"""The (row, class) pairs of multi-class scores: the data of the class-shared model.

With ``M`` scorers giving ``C`` class scores each, the class-shared model (:mod:`.multinomial`)
treats every (row ``i``, class ``k``) pair alike: its features are the scorers'
log-probabilities ``z_imk`` of class ``k`` and their normalized values ``u_imk``. This module
turns the scores into those features and holds them for the fit.

Log-probabilities
-----------------
A scorer's scores are probabilities (every training value in ``[0, 1]``) or logits; the
estimator's ``base`` says which (``"auto"`` decides by the range). Probabilities give
``z = log p``, logits their log-softmax ``z = s - logsumexp(s)`` over the row's classes (the
same distribution; a row's shift does not change a softmax, and it makes the values of
different rows comparable). Every ``z`` is kept at or above the scorer's *floor*: ``log``
of half the smallest positive probability seen in training (and never below ``log`` of the
smallest normal double, :data:`LOG_TINY`), so a probability of exactly 0 (a random forest's
class without a vote, an underflowed softmax) is below every positive one, as it should be
(a forest's one vote in a hundred, 0.01, stays apart from none), and finite; a new, smaller
value at prediction is winsorized to the same floor. (With the smallest positive value as
the floor, a forest of 100 trees on 100 classes put none and one vote at the same ``z``:
log-loss 0.8717 against 0.8682 on make_classification's 100 classes, benchmarks/multiclass.)

Normalization
-------------
``u = F_m(z)`` where ``F_m`` is the distribution function of scorer ``m``'s pooled values
``z_imk`` over all pairs, each weighted by the row's weight times the scorer's own
probability ``exp(z_imk)``: the distribution of the scorer's log-probability of a class drawn
from its own prediction (the true class's, if the scorer were calibrated). Unweighted,
``F_m`` would spend its resolution where the pairs are, on the ``C - 1`` classes of almost
zero probability in every row: with 1,000 classes a row's top class sits at ``u > 0.999``,
where a Bernstein polynomial of degree 8 is flat. ``F_m`` is computed from a weighted
histogram of :data:`HIST_BINS` equal-width bins over the scorer's training range (additive
over blocks of rows, so a dask fit gets the same), as the mid-ECDF of the bins' centres,
then summarized by at most :data:`SHARED_KNOTS` knots (a piecewise-linear, strictly
increasing map into ``(0, 1)``).

Bins
----
The fit (:mod:`.multinomial`) needs, per Newton step, second moments of the pairs' features.
It computes them on bins: every scorer's axis is cut at the ``QUANTILE_CUTS - 1`` interior
quantiles of ``F_m`` and at ``SCALE_CUTS - 1`` equally spaced
values of ``z`` (fine where the pairs are dense in ``u`` and where they are spread out in
``z``), and a bin carries its mean ``z`` and ``u`` (as :mod:`fusion.bernstein.binary.cells` does for
binary rows). The loss and its gradient use every pair's own ``z``; the correction ``g`` is
evaluated at the bins' mean ``u`` during the fit and at the pair's own ``u`` afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...ecdf import ECDFNormalizer, KnotLookup
from ..folds import OUTSIDE
from ..scale import LOG_TINY, log_probabilities

__all__ = [
    "HIST_BINS",
    "WEIGHT_FLOOR",
    "SHARED_KNOTS",
    "QUANTILE_CUTS",
    "SCALE_CUTS",
    "BLOCK_PAIRS",
    "SCALES",
    "SUM_TOLERANCE",
    "ScoreRange",
    "detect_scale",
    "member_scales",
    "trains_on",
    "MemberAxis",
    "member_log_probabilities",
    "axis_ranges",
    "merge_ranges",
    "axis_histograms",
    "make_axes",
    "finish_axes",
    "normalizer",
    "PairBlock",
    "PairData",
]

#: Equal-width bins of the weighted histogram behind ``F_m``.
HIST_BINS = 1 << 14
#: Log-probabilities weigh at least ``exp`` of this in the histogram (a normal double).
WEIGHT_FLOOR = LOG_TINY + 1.0
#: Knots of ``F_m`` at most.
SHARED_KNOTS = 2048
#: Quantile cuts and equally spaced ``z`` cuts of a scorer's axis (bins of the fit).
QUANTILE_CUTS = 128
SCALE_CUTS = 128
#: Pairs per block of rows in the fit's passes (cache-sized temporaries).
BLOCK_PAIRS = 1 << 15
#: Scales of multi-class scores.
SCALES = ("probability", "logit")


#: A scorer's rows "sum to one" (probabilities) when every row sum is within this of 1.
SUM_TOLERANCE = 1e-2
#: Negative probabilities down to this are rounding errors (read as 0); below, refused.
NEGATIVE_ROUNDING = 1e-6


@dataclass(frozen=True)
class ScoreRange:
    """What :func:`detect_scale` needs of one scorer's class scores: the smallest and
    largest value over the finite ones, whether any is ``-inf``, ``+inf`` or NaN, and the
    largest distance of a row's sum from 1. Mergeable over blocks (:meth:`merge`)."""

    lo: float
    hi: float
    sum_dev: float
    neg_inf: bool = False
    pos_inf: bool = False
    nan: bool = False

    @classmethod
    def of(cls, S: np.ndarray) -> ScoreRange:
        """The range of ``S`` (r, C), one scorer's rows."""
        S = np.asarray(S)
        return cls.of_members(S[:, None, :])[0]

    @classmethod
    def of_members(cls, S: np.ndarray) -> list[ScoreRange]:
        """Every scorer's range of ``S`` (r, M, C), in one compiled pass over the scores
        (NumPy took some ten passes, a masked copy among them: 2.5 s of an ImageNet-scale
        fit)."""
        from . import kernels  # numba: imported by the first fit that needs it

        S = np.asarray(S)
        if S.dtype not in (np.float32, np.float64):
            S = S.astype(np.float64)
        M = S.shape[1]
        out = np.array([[np.inf] * M, [-np.inf] * M, [0.0] * M])
        flags = np.zeros((3, M), dtype=bool)
        kernels.score_ranges(S, out, flags)
        return [
            cls(float(out[0, m]), float(out[1, m]), float(out[2, m]), *map(bool, flags[:, m]))
            for m in range(M)
        ]

    @staticmethod
    def merge(parts: Sequence[ScoreRange]) -> ScoreRange:
        return ScoreRange(
            min(p.lo for p in parts), max(p.hi for p in parts), max(p.sum_dev for p in parts),
            any(p.neg_inf for p in parts), any(p.pos_inf for p in parts),
            any(p.nan for p in parts),
        )  # fmt: skip


def detect_scale(rng: ScoreRange, base: str, member: int = 0) -> str:
    """``"probability"`` or ``"logit"`` for one scorer's class scores, from their
    :class:`ScoreRange` and the estimator's ``base``.

    ``"logit"`` says the scores are probabilities (their logarithms are the features),
    ``"identity"`` that they are logits or log-probabilities, ``"auto"`` decides: scores in
    ``[0, 1]`` are probabilities (one-vs-rest ones too: every row is normalized), anything
    else logits. Logits, their log-softmax (log-probabilities) and their softmax then give
    the same features (:func:`log_probabilities`); logits that happen to lie within
    ``[0, 1]`` everywhere need ``base="identity"``. Raises a ValueError for NaN,
    ``+inf``, and for rows that sum to one (within :data:`SUM_TOLERANCE`) but hold negative
    values (probabilities with errors: read as logits they would mean something else).
    """
    where = f"scorer {member}'s class scores"
    if rng.nan:
        raise ValueError(
            f"{where} hold NaN: the class-shared model needs every class score. For missing "
            "scores use missing='marginal' with multiclass='per-class'."
        )
    if rng.pos_inf:
        raise ValueError(
            f"{where} hold +inf; pass finite logits (or probabilities, or log-probabilities, "
            "where -inf stands for a probability of 0)."
        )
    if not np.isfinite(rng.lo):
        raise ValueError(f"{where} are all -inf: a scorer must give some class a probability.")
    sums_to_one = rng.sum_dev <= SUM_TOLERANCE and not rng.neg_inf
    inside = rng.lo >= -NEGATIVE_ROUNDING and rng.hi <= 1.0 + NEGATIVE_ROUNDING
    if base == "identity":
        return "logit"
    if sums_to_one and rng.hi <= 1.0 + SUM_TOLERANCE and not inside:
        raise ValueError(
            f"{where} look like probabilities (every row sums to one) but range over "
            f"[{rng.lo:g}, {rng.hi:g}]. Clip them to [0, 1] if these are rounding errors "
            "(np.clip(S, 0, 1)), or pass base='identity' if they are logits."
        )
    if base == "logit" and not inside:
        raise ValueError(
            f"base='logit' takes class probabilities, but {where} lie in [{rng.lo:g}, "
            f"{rng.hi:g}]. Pass base='identity' for logits, or base='auto' to decide by the "
            "range."
        )
    return "probability" if inside else "logit"


def member_scales(S: np.ndarray, base: str) -> list[str]:
    """Every scorer's scale of scores ``S`` (n, M, C), ``"probability"`` or ``"logit"``
    (:func:`detect_scale`; raises for NaN, ``+inf`` or probabilities with negative values)."""
    ranges = ScoreRange.of_members(S)
    if any(r.nan or r.pos_inf for r in ranges):
        i, m, k = (int(v[0]) for v in np.nonzero(np.isnan(S) | (S == np.inf)))
        raise ValueError(
            f"S[{i}, {m}, {k}] is {S[i, m, k]}: the class-shared model needs every class "
            "score (logits, log-probabilities where -inf is a probability of 0, or "
            "probabilities). For missing scores use missing='marginal' with "
            "multiclass='per-class'."
        )
    return [detect_scale(rng, base, m) for m, rng in enumerate(ranges)]


def trains_on(key, segment: int) -> bool:
    """Whether problem ``key`` trains on the rows of ``segment``: the final fit (None) on
    every row, the cross-validation's rows (``"cv"``) on all but those outside its sample,
    fold ``f`` on those but its own test rows."""
    if key is None:
        return True
    if segment == OUTSIDE:
        return False
    return key == "cv" or segment != key


@dataclass
class MemberAxis:
    """One scorer's normalization and bins: ``F_m`` (knots and values), the floor and range
    of its log-probabilities, the cuts of its bins and every bin's mean ``z`` and ``u``."""

    floor: float
    lo: float
    hi: float
    knots: np.ndarray
    values: np.ndarray
    cuts: np.ndarray
    zbar: np.ndarray | None = None
    ubar: np.ndarray | None = None
    _lookup: KnotLookup | None = field(default=None, repr=False, compare=False)

    @property
    def n_bins(self) -> int:
        return self.cuts.shape[0] + 1

    @property
    def lookup(self) -> KnotLookup:
        """``F_m`` as a lookup (built once)."""
        if self._lookup is None:
            self._lookup = KnotLookup(self.knots, self.values)
        return self._lookup

    def normalize(self, z: np.ndarray) -> np.ndarray:
        return self.lookup(np.asarray(z, dtype=np.float64).ravel()).reshape(np.shape(z))


def histogram(
    z: np.ndarray, w: np.ndarray, lo: float, hi: float, raw: np.ndarray | None = None
) -> np.ndarray:
    """Weighted histogram of one scorer's ``z`` (r, C) over :data:`HIST_BINS` bins of
    ``[lo, hi]``, each pair weighted by its row's weight ``w`` (r,) times the scorer's
    probability ``exp(raw)`` (``raw``: its log-probabilities before the floor; default
    ``z``): a class the scorer gives probability 0 weighs nothing, wherever its floor
    puts it (``exp`` of :data:`WEIGHT_FLOOR`, 6e-308, which keeps its bin occupied)."""
    from . import kernels  # numba: imported by the first fit that needs it

    span = hi - lo
    out = np.zeros(HIST_BINS)
    z = np.asarray(z)
    raw = z if raw is None else np.asarray(raw)
    # double, vectorized; raised to WEIGHT_FLOOR: a probability of 0 is LOG_TINY, which
    # float32 rounds below it, and exp's subnormal results (and sums of them) cost 100 times
    # more (a forest's member, 96 % zeros at 1,000 classes: 1.4 s of 1.6 s per 5,000 rows)
    p = np.exp(np.maximum(raw, WEIGHT_FLOOR), dtype=np.float64)
    kernels.weighted_histogram(z, p, np.asarray(w, dtype=np.float64), float(lo),
                               HIST_BINS / span if span > 0 else 0.0, out)  # fmt: skip
    return out


def knots_from_histogram(h: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """``F_m`` from its weighted histogram: the mid-ECDF of the occupied bins' centres,
    summarized by at most :data:`SHARED_KNOTS` knots (the first and last centres and those
    nearest to evenly spaced levels in between)."""
    total = float(h.sum())
    occupied = np.flatnonzero(h > 0)
    if occupied.shape[0] == 0 or not total > 0:
        raise ValueError("a scorer gives no positive probability to any class.")
    width = (hi - lo) / HIST_BINS if hi > lo else 1.0
    centres = lo + (occupied + 0.5) * width
    mass = h[occupied] / total
    values = np.cumsum(mass) - 0.5 * mass
    if occupied.shape[0] == 1:  # one value: a map of two knots around it
        return np.array([centres[0] - 0.5, centres[0] + 0.5]), np.array([0.25, 0.75])
    if occupied.shape[0] > SHARED_KNOTS:
        levels = np.linspace(values[0], values[-1], SHARED_KNOTS)
        pick = np.unique(np.clip(np.searchsorted(values, levels), 0, values.shape[0] - 1))
        pick = np.unique(np.r_[0, pick, values.shape[0] - 1])
        centres, values = centres[pick], values[pick]
    return centres, values


def _cuts(knots: np.ndarray, values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Interior quantile cuts of ``F_m`` and equally spaced ``z`` cuts, merged."""
    levels = np.arange(1, QUANTILE_CUTS) / QUANTILE_CUTS
    quantile = np.interp(levels, values, knots)
    scale = lo + (hi - lo) * np.arange(1, SCALE_CUTS) / SCALE_CUTS
    cuts = np.unique(np.r_[quantile, scale])
    return cuts[(cuts > lo) & (cuts < hi)]


def member_log_probabilities(S: np.ndarray, scales: Sequence[str]) -> np.ndarray:
    """``(M, r, C)``: every scorer's log-probabilities of the rows of ``S`` (r, M, C)
    (:func:`log_probabilities`, at or above :data:`LOG_TINY`; float32 for float32 scores),
    computed once for the axes' ranges, their histograms and the pairs' storage
    (:meth:`PairBlock.build` takes this array over)."""
    r, M, C = S.shape
    Z = np.empty((M, r, C), dtype=np.float32 if S.dtype == np.float32 else np.float64)
    step = max(1, BLOCK_PAIRS // max(1, C))
    for m in range(M):
        for start in range(0, r, step):
            rows = slice(start, start + step)
            Z[m, rows] = log_probabilities(S[rows, m, :], scales[m])
    return Z


def axis_ranges(Z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``(3, M)``: every scorer's smallest finite log-probability (its floor), smallest and
    largest log-probability over the rows of positive weight of ``Z`` (M, r, C),
    :func:`member_log_probabilities`; ``inf`` / ``-inf`` where there are none. Merged over
    blocks by :func:`merge_ranges`."""
    M = Z.shape[0]
    out = np.array([[np.inf] * M, [np.inf] * M, [-np.inf] * M])
    rows = w > 0
    if not rows.any():
        return out
    for m in range(M):
        z = Z[m] if rows.all() else Z[m, rows]
        out[0, m] = float(np.min(z, where=z > LOG_TINY, initial=np.inf))
        out[1, m] = float(z.min())
        out[2, m] = float(z.max())
    return out


def merge_ranges(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The ranges of all blocks (:func:`axis_ranges`), with the floor in place: at least
    :data:`LOG_TINY`, and the smallest value never below it."""
    parts = np.stack(parts)
    floor = parts[:, 0].min(axis=0) - np.log(2.0)
    floor = np.where(np.isfinite(floor), np.maximum(floor, LOG_TINY), LOG_TINY)
    lo = np.maximum(parts[:, 1].min(axis=0), floor)
    hi = parts[:, 2].max(axis=0)
    return np.array([floor, lo, hi])


def axis_histograms(Z: np.ndarray, w: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """``(M, HIST_BINS)``: every scorer's weighted histogram (:func:`histogram`) over the
    rows of ``Z`` (M, r, C), :func:`member_log_probabilities`; added over blocks."""
    M = Z.shape[0]
    out = np.zeros((M, HIST_BINS))
    step = max(1, BLOCK_PAIRS // Z.shape[2])
    for m in range(M):
        for start in range(0, Z.shape[1], step):
            rows = slice(start, start + step)
            raw = Z[m, rows]
            z = np.maximum(raw, ranges[0, m])
            out[m] += histogram(z, w[rows], ranges[1, m], ranges[2, m], raw)
    return out


def make_axes(ranges: np.ndarray, hists: np.ndarray) -> list[MemberAxis]:
    """Every scorer's :class:`MemberAxis` (without the bins' means, see :func:`finish_axes`)
    from the merged ranges and histograms."""
    axes = []
    for m in range(ranges.shape[1]):
        floor, lo, hi = (float(v) for v in ranges[:, m])
        knots, values = knots_from_histogram(hists[m], lo, hi)
        axes.append(MemberAxis(floor, lo, hi, knots, values, _cuts(knots, values, lo, hi)))
    return axes


def finish_axes(axes: list[MemberAxis], counts: np.ndarray, sums: np.ndarray) -> None:
    """Every bin's mean ``z`` (its pairs' mean, weighted by their rows' weights; an empty
    bin's midpoint) and its ``u = F_m(mean z)``, from the bins' weights ``counts`` and
    weighted sums of ``z`` (added over blocks, see :meth:`PairBlock.build`)."""
    for m, axis in enumerate(axes):
        count, total = counts[m, : axis.n_bins], sums[m, : axis.n_bins]
        edges = np.r_[axis.lo, axis.cuts, axis.hi]
        mid = 0.5 * (edges[:-1] + edges[1:])
        with np.errstate(invalid="ignore", divide="ignore"):
            zbar = np.where(count > 0, total / np.where(count > 0, count, 1.0), mid)
        axis.zbar = zbar
        axis.ubar = axis.normalize(zbar)


def normalizer(axes: Sequence[MemberAxis]) -> ECDFNormalizer:
    """The scorers' ``F_m`` as one fitted :class:`~fusion.ecdf.ECDFNormalizer` (column
    ``m``: scorer ``m``'s log-probabilities)."""
    return ECDFNormalizer.from_knots([a.knots for a in axes], [a.values for a in axes])


class PairBlock:
    """Rows of training pairs, stored fold after fold: ``z`` (M, r, C) in the scores'
    precision (float32 stays float32), bins (M, r, C) int16, class indices and weights.

    ``fold`` (r,) gives every row's test fold (-1: in no test set; -2, :data:`OUTSIDE`:
    outside the cross-validation's sample; None: no folds). Segment ``f`` holds the rows of
    fold ``f``; which segments a problem reads is :func:`trains_on`. The in-memory fit holds
    all rows in one block; a dask fit one block per chunk of rows.
    """

    @classmethod
    def build(cls, Z, index, w, fold, n_folds: int, axes) -> PairBlock:
        """The block of rows of log-probabilities ``Z`` (M, r, C),
        :func:`member_log_probabilities`, with every scorer's bin weights and weighted sums
        of ``z`` over it (:meth:`bin_sums`). ``Z`` becomes the block's storage: its rows
        are put in the order of their folds and raised to every scorer's floor in place."""
        from . import kernels  # numba: imported by the first fit that needs it

        self = cls()
        M, r, C = Z.shape
        self.M, self.C, self.n_folds = M, C, int(n_folds)
        fold = np.full(r, -1, dtype=np.int64) if fold is None else np.asarray(fold)
        self.order = np.argsort(fold, kind="stable")
        starts = np.searchsorted(fold[self.order], np.arange(OUTSIDE, self.n_folds + 1))
        self.bounds = {
            f: (int(starts[f - OUTSIDE]), int(starts[f - OUTSIDE + 1]))
            for f in range(OUTSIDE, n_folds)
        }
        self.index = np.asarray(index)[self.order]
        self.w = np.asarray(w, dtype=float)[self.order]
        moved = not np.array_equal(self.order, np.arange(r))
        for m, axis in enumerate(axes):  # one scorer's rows at a time: a temporary of 1 / M
            if moved:
                Z[m] = Z[m][self.order]
            np.maximum(Z[m], axis.floor, out=Z[m])
        self.Z = Z
        self.B = np.empty((M, r, C), dtype=np.int16)
        width = max(a.n_bins for a in axes)
        counts, sums = np.zeros((M, width)), np.zeros((M, width))
        self.rows = max(1, BLOCK_PAIRS // C)
        for m, axis in enumerate(axes):
            lookup = kernels.bin_lookup(axis.cuts)
            for start in range(0, r, self.rows):
                rows = slice(start, start + self.rows)
                kernels.bin_pairs(Z[m, rows], self.w[rows], axis.cuts, *lookup, self.B[m, rows],
                                  counts[m], sums[m])  # fmt: skip
        self.counts, self.sums = counts, sums
        return self

    def bin_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Every scorer's bin weights and weighted sums of ``z`` over the block (for
        :func:`finish_axes`)."""
        return self.counts, self.sums

    def segment_weights(self) -> dict[int, float]:
        """Total weight of every segment."""
        return {f: float(self.w[a:b].sum()) for f, (a, b) in self.bounds.items()}

    def segment_class_weights(self) -> dict[int, np.ndarray]:
        """Weight of every class in every segment."""
        return {
            f: np.bincount(self.index[a:b], weights=self.w[a:b], minlength=self.C)
            for f, (a, b) in self.bounds.items()
        }

    def runs(self):
        """``(start, stop)`` of cache-sized runs of the stored rows."""
        n = self.w.shape[0]
        return [(a, min(n, a + self.rows)) for a in range(0, n, self.rows)]

    def pieces(self, key, start: int, stop: int) -> list[tuple[int, int]]:
        """The stored rows in ``[start, stop)`` that problem ``key`` trains on, as
        contiguous ``(a, b)`` ranges (neighbouring segments merged)."""
        out = []
        for seg, (a, b) in self.bounds.items():  # in stored order
            a, b = max(a, start), min(b, stop)
            if a >= b or not trains_on(key, seg):
                continue
            if out and out[-1][1] == a:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
        return out

    def blocks(self, segment: int, end: int | None = None):
        """``(Z, B, index, w)`` of cache-sized runs of the segment's rows (up to the stored
        row ``end``)."""
        a, b = self.bounds[segment]
        b = b if end is None else min(b, end)
        for start in range(a, b, self.rows):
            rows = slice(start, min(b, start + self.rows))
            yield self.Z[:, rows], self.B[:, rows], self.index[rows], self.w[rows]


class PairData(PairBlock):
    """All training pairs in memory, from their log-probabilities ``Z`` (M, n, C)
    (:func:`member_log_probabilities`, taken over as the storage): the scorers' axes fitted
    on them, and one :class:`PairBlock`."""

    def __init__(self, Z, index, w, scales, fold=None, n_folds: int = 0):
        w = np.asarray(w, dtype=float)
        self.scales = tuple(scales)
        ranges = merge_ranges([axis_ranges(Z, w)])
        self.axes = make_axes(ranges, axis_histograms(Z, w, ranges))
        block = PairBlock.build(Z, index, w, fold, n_folds, self.axes)
        self.__dict__.update(vars(block))
        finish_axes(self.axes, *block.bin_sums())
        self.n = Z.shape[1]
