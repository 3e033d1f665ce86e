"""ECDF knots from a quantile sketch, and the mergeable block summaries behind it.

The exact mid-ECDF of a column of ``n`` scores (:func:`fusion.ecdf.mid_ecdf_knots`) has one
knot per distinct value: up to ``n`` knots, which is what a model trained on 10^7 rows would
store and search at every prediction. A *sketch* keeps at most ``n_knots`` of them.

Construction
------------
1. Candidates: the ``CANDIDATE_FACTOR * n_knots`` distinct values of smallest hash
   (:func:`hash_candidates`, a uniform sample of the distinct values that depends only on
   the values), plus the column's minimum and maximum. A distributed fit gets the same set:
   every block sends its own smallest-hash values, and the smallest of their union are the
   smallest of the whole column, whatever the chunking.
2. Exact counts below and up to every candidate (in memory from the sorted column; on a
   distributed array from one more pass over the blocks, :func:`counts_at_knots`), hence the
   exact mid-ECDF ``(W{s < q} + W{s <= q}) / (2 W)`` at every candidate.
3. Knots: the minimum, the maximum, and for ``n_knots - 2`` evenly spaced interior levels of
   the mid-ECDF the candidate whose exact value is nearest (:func:`select_knots`), with those
   exact values. Steps 2 and 3 are the same code in both settings, so an in-memory fit and a
   dask fit of the same unweighted rows get the same knots and values bit for bit (the
   weighted counts may differ in the last bits by the order of the additions).

A block's summary (:class:`Summary`, merged pairwise up a tree) still carries the distinct
values while there are few, to detect an exact column, and the minimum and maximum.

Error bound
-----------
Let ``G`` be the exact normalizer (the mid-ECDF interpolated between distinct training
values) and ``H`` the sketch (the same function interpolated between the knots
``q_1 < ... < q_k`` with exact values ``h_l = G(q_l)``). Both are non-decreasing, so for
``t`` in ``[q_l, q_{l+1}]`` both lie in ``[h_l, h_{l+1}]``; below ``q_1`` (the minimum) and
above ``q_k`` (the maximum) both are constant and equal. Hence, for every real ``t``,

.. math:: |H(t) - G(t)| \\le \\Delta = \\max_l (h_{l+1} - h_l),

which :func:`max_gap` computes from the fitted values (0 when the sketch kept every distinct
value, since then ``H = G``). A level is missed by at most half the largest gap between
consecutive candidates' values, so ``Delta <= 1 / (k - 1) + g_max`` where ``g_max`` is that
gap: for ``m = 16 k`` candidates drawn from ``n`` distinct values without ties, about
``log(m) / m`` (1e-4 + 7e-5 at ``k = 10,000``). A value repeated in more than a fraction
``1 / k`` of the rows widens the gap next to it by up to its share: ``Delta`` is what the
fitted sketch guarantees either way, and ``BernsteinFusion.ecdf_error_bound_`` reports it.
The bound holds as well for the step form between knots (``between="step"`` of
:meth:`~fusion.ecdf.ECDFNormalizer.transform`, the rank-based methods'), with ``H`` and ``G``
both in that form: ``H`` is then the mean ``(h_l + h_{l+1}) / 2`` on ``(q_l, q_{l+1})``,
which lies in ``[h_l, h_{l+1}]`` as ``G`` does.

Rank invariance with a sketch
-----------------------------
With the step form, every score's normalized value, a training score between two knots
included, depends only on its position among the knots. What holds for the rank-based
methods (``FusionEstimator._ecdf_between``):

* a fitted model's predictions are constant between two adjacent knots of a score, and
  transforming a score's knots and the new scores by the same strictly increasing map
  changes none of them;
* fits on ``S`` and on ``g(S)`` (``g`` strictly increasing) are identical bit for bit when
  every column has at most ``n_knots`` distinct values (the sketch keeps them all). Beyond
  that the knots are candidates drawn by a hash of the values' bits, which ``g`` changes, so
  the two sketches may keep knots at other ranks: each normalized value is then within
  ``Delta`` of the exact step-form value (which is invariant), so the two fits' normalized
  values differ by at most the sum of their ``Delta`` (about ``2 / (k - 1)``). A dask fit
  uses the same knots as the in-memory fit, so the same holds for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._chunks import by_rows
from .lookup import KnotLookup, interp_segments  # noqa: F401  (re-exported)
from .midrank import mid_distribution

__all__ = [
    "Summary",
    "column_summary",
    "merge_summaries",
    "hash_candidates",
    "knot_candidates",
    "select_knots",
    "CANDIDATE_FACTOR",
    "GOLDEN",
    "MIX1",
    "MIX2",
    "mix64",
    "counts_at_knots",
    "mid_values",
    "sketch_column",
    "max_gap",
]


@dataclass
class Summary:
    """Weighted summary of one score column: sorted distinct ``vals`` with weights ``wts``.

    ``exact`` is True while no compression happened (``wts`` are then the exact counts of
    the distinct values); ``lo``/``hi`` are the exact minimum and maximum, kept apart
    because compression may drop them.
    """

    vals: np.ndarray
    wts: np.ndarray
    lo: float
    hi: float
    exact: bool
    cand: np.ndarray | None = None  # the distinct values of smallest hash (hash_candidates)
    n_cand: int | None = None  # how many candidates to keep


def _runs(xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values and counts of a sorted array (np.unique without re-sorting)."""
    start = np.flatnonzero(np.concatenate([[True], xs[1:] != xs[:-1]]))
    counts = np.diff(np.append(start, xs.shape[0]))
    return xs[start], counts


def _collapse(vals: np.ndarray, wts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort by value and add the weights of equal values."""
    order = np.argsort(vals, kind="stable")  # timsort: near-linear on concatenated sorted runs
    vals, wts = vals[order], wts[order]
    start = np.flatnonzero(np.concatenate([[True], vals[1:] != vals[:-1]]))
    return vals[start], np.add.reduceat(wts, start)


def _compress(vals: np.ndarray, wts: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``size`` values at evenly spaced weighted ranks, each carrying ``W / size``.

    Every row's rank moves by at most ``W / size``, so one compression costs at most
    ``1 / size`` in normalized rank.
    """
    cw = np.cumsum(wts)
    W = cw[-1]
    targets = (np.arange(size) + 0.5) * (W / size)
    idx = np.minimum(np.searchsorted(cw, targets, side="left"), vals.shape[0] - 1)
    return _collapse(vals[idx], np.full(size, W / size))


def column_summary(
    x: np.ndarray, size: int | None, w: np.ndarray | None = None, n_cand: int | None = None
) -> Summary:
    """Summary of one block's column; exact (distinct values and weights) if it fits ``size``.

    ``size=None`` never compresses (the exact ECDF: memory grows with the distinct values).
    ``w``: row weights (default: counts). ``n_cand``: also keep the block's ``n_cand``
    knot candidates (:func:`hash_candidates`).
    """
    x = np.asarray(x, dtype=float)
    if w is None:
        xs = np.sort(x)
        vals, counts = _runs(xs)
        wts = counts.astype(float)
    else:
        order = np.argsort(x, kind="stable")
        xs = x[order]
        vals, wts = _collapse(xs, np.asarray(w, dtype=float)[order])
    cand = None if n_cand is None else hash_candidates(vals, n_cand)
    exact = size is None or vals.shape[0] <= size
    if not exact:
        vals, wts = _compress(vals, wts, size)
    return Summary(vals, wts, float(xs[0]), float(xs[-1]), exact, cand, n_cand)


def merge_summaries(summaries: list[Summary], size: int | None) -> Summary:
    """Merge block summaries (adds weights of equal values; compresses beyond ``size``)."""
    vals, wts = _collapse(
        np.concatenate([s.vals for s in summaries]), np.concatenate([s.wts for s in summaries])
    )
    exact = all(s.exact for s in summaries)
    if size is not None and vals.shape[0] > size:
        vals, wts = _compress(vals, wts, size)
        exact = False
    cand, n_cand = None, summaries[0].n_cand
    if n_cand is not None:
        cand = hash_candidates(np.unique(np.concatenate([s.cand for s in summaries])), n_cand)
    lo, hi = min(s.lo for s in summaries), max(s.hi for s in summaries)
    return Summary(vals, wts, lo, hi, exact, cand, n_cand)


#: Knot candidates per knot of a sketch: the sketch picks its knots among
#: ``CANDIDATE_FACTOR * n_knots`` distinct values (:func:`hash_candidates`).
CANDIDATE_FACTOR = 16


#: splitmix64's increment and the multipliers of its output function (:func:`mix64`; also
#: the compiled content keys, fusion/bernstein/hashing.py).
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)


def mix64(h: np.ndarray) -> np.ndarray:
    """splitmix64's output function of ``uint64`` values (wrapping arithmetic), in place.

    Also the content keys of the folds (:func:`fusion._cv.content_keys`)."""
    with np.errstate(over="ignore"):
        h ^= h >> np.uint64(30)
        h *= MIX1
        h ^= h >> np.uint64(27)
        h *= MIX2
        h ^= h >> np.uint64(31)
    return h


def _hash(values: np.ndarray) -> np.ndarray:
    """A 64-bit hash of every value (splitmix64 of its bits; -0.0 hashes as 0.0)."""
    return by_rows(_hash_block, np.asarray(values))


def _hash_block(v: np.ndarray) -> np.ndarray:
    bits = (v + 0.0 if v.dtype.kind == "f" else v).astype(v.dtype).view(np.uint64)
    with np.errstate(over="ignore"):
        bits += GOLDEN  # a copy of the values (astype), so in place is safe
    return mix64(bits)


def hash_candidates(distinct: np.ndarray, n_cand: int) -> np.ndarray:
    """The ``n_cand`` values of ``distinct`` (sorted, distinct) with the smallest hash, sorted.

    A uniform random sample of the distinct values that depends on nothing but the values:
    the candidates of a union of blocks are the ``n_cand`` smallest-hash values among the
    blocks' candidates, so a dask fit (any chunking) and an in-memory fit of the same column
    get the same candidates, the same exact counts at them and the same knots.
    """
    return distinct[_candidate_index(distinct, n_cand)]


def _candidate_index(distinct: np.ndarray, n_cand: int) -> np.ndarray:
    """Positions in ``distinct`` of :func:`hash_candidates`, increasing."""
    if distinct.shape[0] <= n_cand:
        return np.arange(distinct.shape[0])
    return np.sort(np.argpartition(_hash(distinct), n_cand - 1)[:n_cand])


def knot_candidates(summary: Summary) -> np.ndarray:
    """The (merged) summary's candidates with the column's minimum and maximum."""
    return np.unique(np.concatenate([[summary.lo], summary.cand, [summary.hi]]))


def select_knots(
    cand: np.ndarray, lt: np.ndarray, le: np.ndarray, total: float, n_knots: int
) -> tuple[np.ndarray, np.ndarray]:
    """Knots and values of a sketch from candidates and the exact weights below / up to each.

    Keeps the first and last candidate (the minimum and maximum) and, for each of
    ``n_knots - 2`` evenly spaced interior mid-ECDF levels, the candidate whose exact value is
    nearest. With ``m`` candidates drawn uniformly from the distinct values, a level is
    missed by at most the largest gap between candidates' values (about ``log(m) / m``).
    """
    values = mid_values(lt, le, total)
    targets = np.linspace(values[0], values[-1], n_knots)[1:-1]
    right = np.clip(np.searchsorted(values, targets), 1, values.shape[0] - 1)
    left = right - 1
    pick = np.where(targets - values[left] <= values[right] - targets, left, right)
    idx = np.unique(np.concatenate([[0], pick, [values.shape[0] - 1]]))
    return cand[idx], values[idx]


def counts_at_knots(
    x: np.ndarray, knots: np.ndarray, w: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(W{x < q}, W{x <= q})`` for every knot ``q`` (one pass, O(n log k)).

    Counts (int64) without weights ``w``, weight sums (float) with them.
    """
    k = knots.shape[0]
    right = np.searchsorted(knots, x, side="right")  # knots <= x
    # knots < x: one fewer where x equals a knot
    left = right - ((right > 0) & (knots[np.maximum(right - 1, 0)] == x))
    lt = np.cumsum(np.bincount(right, weights=w, minlength=k + 1))[:k]
    le = np.cumsum(np.bincount(left, weights=w, minlength=k + 1))[:k]
    return lt, le


def mid_values(lt: np.ndarray, le: np.ndarray, n: float) -> np.ndarray:
    """Mid-ECDF values ``(W{s < q} + W{s <= q}) / (2 W)`` from the weights below and up to
    each knot (:func:`~fusion.ecdf.mid_distribution` in the form the counting passes give)."""
    lt = np.asarray(lt, dtype=float)
    return mid_distribution(lt, np.asarray(le, dtype=float) - lt, n)


def sketch_column(
    x: np.ndarray, n_knots: int, w: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, bool]:
    """In-memory sketch of one column: knots at evenly spaced weighted ranks, exact values.

    Returns ``(knots, values, exact)``; ``exact`` is True when the column has at most
    ``n_knots`` distinct values, which are then all kept (the exact mid-ECDF).
    """
    x = np.asarray(x)
    if w is None:
        # the values alone: a plain sort is ~20x faster than a stable argsort at 1e6 rows
        xs, ws = np.sort(x), None
    else:
        order = np.argsort(x, kind="stable")
        xs, ws = x[order], np.asarray(w, dtype=float)[order]
    new_run = xs[1:] != xs[:-1]
    if xs.shape[0] > n_knots and new_run.all():
        # no ties (continuous scores): every row is its own run, so the runs' arrays (three
        # of n integers at 10^7 rows) are the identity and need not be built
        start = end = None
        distinct = xs
    else:
        start = np.flatnonzero(np.concatenate([[True], new_run]))  # runs of equal values
        end = np.append(start[1:], xs.shape[0])
        if start.shape[0] <= n_knots:
            if ws is None:
                weight = (end - start).astype(float)
            else:
                weight = np.add.reduceat(ws, start)
            values = mid_distribution(np.cumsum(weight) - weight, weight, weight.sum())
            return xs[start], values, True
        distinct = xs[start]
    pick = _candidate_index(distinct, CANDIDATE_FACTOR * n_knots)
    # with the minimum and the maximum (pick is increasing)
    if pick[0] > 0:
        pick = np.r_[0, pick]
    if pick[-1] < distinct.shape[0] - 1:
        pick = np.r_[pick, distinct.shape[0] - 1]
    if start is None:
        cand, lo, hi = distinct[pick], pick, pick + 1  # rows below / up to each
    else:
        cand, lo, hi = xs[start[pick]], start[pick], end[pick]
    if ws is None:
        knots, values = select_knots(cand, lo, hi, xs.shape[0], n_knots)
        return knots, values, False
    cw = np.cumsum(ws)
    below = np.where(lo > 0, cw[np.maximum(lo - 1, 0)], 0.0)
    knots, values = select_knots(cand, below, cw[hi - 1], cw[-1], n_knots)
    return knots, values, False


def max_gap(values: np.ndarray) -> float:
    """``max_l (h_{l+1} - h_l)``: the sketch's bound on ``sup_t |H(t) - G(t)|``."""
    return float(np.max(np.diff(values)))
