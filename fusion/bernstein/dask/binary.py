"""The binary Bernstein models on dask collections: the passes over the blocks that prepare
the data (validation, labels, the ECDF, the directions), the source of the fit's statistics
over the blocks (:class:`DaskRows`: the default model's cell sums, the rank-only model's
least-squares statistics) and the lazy predictions.

Fitting needs only per-column ECDF summaries and sufficient statistics that add over row
blocks, so a dask fit never gathers rows or forms the ``n x P`` design: for the rank-only
model (``base=None``) ``Phi' W Phi``, ``Phi' W y``; for the default model the cell sums of
:mod:`fusion.bernstein.binary.cells` (weights, positives, sums of ``u`` and ``z`` per
occupied cell and fold). Each pass is a ``dask.delayed`` map over the row blocks followed by
a tree reduction (:func:`~fusion.bernstein.dask.collections.tree_reduce`); only the reduced
result reaches the client, where the same fitters as in memory run
(:mod:`fusion.bernstein.binary.semiparametric`, :mod:`fusion.bernstein.binary.rank_only`).
The blocks are computed with dask's current scheduler, i.e. on the cluster of an active
``dask.distributed.Client``.

Passes over the data
--------------------
1. Validation (finite scores, numeric non-negative weights, labels, lengths of ``S``, ``y``
   and ``sample_weight`` blocks) with per-block label counts and weight sums, and one ECDF
   summary per column (:mod:`fusion.ecdf.sketch`). With ``ecdf_knots=None`` the summary
   is the distinct values with their counts, merged exactly: the knots (all distinct training
   values of a column, two floats each) must fit in the client's memory, and reach the
   workers again in pass 3. With an int ``k`` every block sends at most ``8 k`` weighted
   values per column.
2. Only for a sketched column that has more than ``k`` distinct values: exact counts below
   and at each knot (the sketch's values are exact mid-ECDF values at its knots).
3. The sufficient statistics, summed up the tree. Rank-only model: ``LeastSquaresStats`` per
   block (per block and fold for cross-validation, all candidates in the same pass).
   Default model: the cell sums per block (and fold, for cross-validation); they do not
   depend on the degree or the penalty, so one pass serves the whole search.

With the exact ECDF the result equals the in-memory fit on the same statistics up to their
summation order: the rank-only model with a fixed degree, and the default model fitted in
memory on cells (``bins`` an int, or ``"auto"`` from 20,000 rows on). With cross-validation,
every row's fold is its content key modulo the folds (:class:`fusion.bernstein.folds.
FoldRule`), whatever the chunking; an in-memory fit deals the same keys per class instead
(stratified), and sees the dask fit's folds with ``cv=HashFolds(k, random_state=r)``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import numpy as np

from ..._direction import (
    DIRECTION_Z,
    column_label,
    resolve_increasing,
    reverse_scores,
    warn_reversed,
)
from ..._lstsq import LeastSquaresStats
from ..._validation import encode_binary_targets
from ...ecdf import ECDFNormalizer, mid_distribution
from ...ecdf.sketch import (
    CANDIDATE_FACTOR,
    column_summary,
    counts_at_knots,
    knot_candidates,
    max_gap,
    merge_summaries,
    select_knots,
)
from ..binary.cells import CellSums, CellTable, block_sums, cell_edges
from ..binary.data import LogisticData
from ..binary.qp import accumulate_gram
from ..binary.source import GramStats, gram_stats
from ..checks import check_not_constant
from ..folds import FoldRule
from ..scale import OwnScale
from ..structure import Structure
from .collections import (
    block_labels,
    block_scores,
    block_weights,
    dask_modules,
    row_blocks,
    score_array,
    tree_reduce,
    weight_scale,
)

__all__ = ["DaskPrepared", "DaskRows", "prepare", "predict_proba", "predict", "SUMMARY_FACTOR"]

#: Block ECDF summaries keep ``SUMMARY_FACTOR * ecdf_knots`` values per column.
SUMMARY_FACTOR = 8


# ---------------------------------------------------------------------------------------------
# Passes 1 and 2 and the directions (functions of the blocks run on the workers).


def _direction_block(Sb, yb, wb, M: int, ecdf, positive, scale, between) -> np.ndarray:
    """Pass for ``increasing="auto"``: per column the weighted sums of ``u``, ``u^2`` and
    ``u y``, and of ``1, y, y^2, w`` (rows: those sums, columns: the scores)."""
    Sb = np.asarray(Sb, dtype=float).reshape(-1, M)
    y01 = (np.asarray(yb).reshape(-1) == positive).astype(float)
    wb = block_weights(wb, Sb.shape[0], -1, scale)
    U = ecdf.transform(Sb, between=between)
    one = np.ones(M)
    return np.array(
        [wb @ U, wb @ U**2, (wb * y01) @ U, one * wb.sum(), one * (wb @ y01), one * (wb @ wb)]
    )


def _sum_arrays(parts: list) -> np.ndarray:
    return sum(parts[1:], parts[0])


def _anti_alignment(sums: np.ndarray) -> np.ndarray:
    """:func:`fusion._direction.anti_alignment_z` of every column from summed moments."""
    su, su2, suy, W, sy, sw2 = sums
    with np.errstate(invalid="ignore", divide="ignore"):
        mu, my = su / W, sy / W
        vu = su2 - W * mu * mu
        vy = sy - W * my * my  # y^2 = y
        cov = suy - W * mu * my
        r = cov / np.sqrt(vu * vy)
        z = r * np.sqrt(np.maximum(W * W / sw2 - 1.0, 0.0))
    return np.where(np.isfinite(z), z, 0.0)


def _summarize_block(
    Sb,
    yb,
    wb,
    i: int,
    M: int,
    size: int | None,
    scale=None,
    n_cand: int | None = None,
    reverse=None,
) -> dict:
    """Pass 1: validate one block; label counts and weights; ECDF summary per column (of the
    scores with ``reverse = (columns, offsets)`` reversed, when given)."""
    Sb = block_scores(Sb, i, M)
    if reverse is not None:
        Sb = reverse_scores(Sb, *reverse)
    n = Sb.shape[0]
    yb = block_labels(yb, n, i)
    wb = block_weights(wb, n, i, scale)
    labels = {}
    if n:
        try:
            uniq, inv = np.unique(yb, return_inverse=True)
        except TypeError as err:
            raise ValueError(f"y mixes label types that cannot be compared: {err}") from None
        wsum = np.bincount(inv.reshape(-1), weights=wb, minlength=uniq.shape[0])
        labels = {u: float(s) for u, s in zip(uniq.tolist(), wsum, strict=True)}
    # The ECDF is weighted, and a row of zero weight is no row at all (as in memory).
    pos = wb > 0
    Sp, wp = Sb[pos], wb[pos]
    summaries = [column_summary(Sp[:, j], size, wp, n_cand) if wp.size else None for j in range(M)]
    return {"n": n, "labels": labels, "summaries": summaries, "weight": float(wp.sum())}


def _merge_pass1(parts: list[dict], size: int | None) -> dict:
    labels: dict = {}
    for p in parts:
        for k, v in p["labels"].items():
            labels[k] = labels.get(k, 0.0) + v
    M = len(parts[0]["summaries"])
    summaries = []
    for j in range(M):
        col = [p["summaries"][j] for p in parts if p["summaries"][j] is not None]
        summaries.append(merge_summaries(col, size) if col else None)
    return {
        "n": sum(p["n"] for p in parts),
        "labels": labels,
        "summaries": summaries,
        "weight": sum(p["weight"] for p in parts),
    }


def _count_block(Sb, wb, i: int, M: int, knots: dict, scale=None, reverse=None) -> dict:
    """Pass 2: exact weights below and at the knots of the sketched columns."""
    Sb = np.asarray(Sb, dtype=float).reshape(-1, M)
    if reverse is not None:
        Sb = reverse_scores(Sb, *reverse)
    wb = block_weights(wb, Sb.shape[0], i, scale)
    return {j: counts_at_knots(Sb[:, j], q, wb) for j, q in knots.items()}


def _sum_counts(parts: list[dict]) -> dict:
    return {j: tuple(sum(p[j][t] for p in parts) for t in (0, 1)) for j in parts[0]}


def _mid_from_counts(summary) -> np.ndarray:
    upper = np.cumsum(summary.wts)
    return mid_distribution(upper - summary.wts, summary.wts, upper[-1])  # as in memory


def _ecdf_passes(blocks, M: int, n_knots: int | None, scale, reverse=None):
    """Passes 1 and 2: ``(pass-1 result, knots, values, error bound)`` of every column's
    ECDF, exact where the column has at most ``n_knots`` distinct values (or ``n_knots`` is
    None), else the sketch of :func:`fusion.ecdf.sketch.sketch_column` (pass 2 counts the
    rows at its candidates). ``reverse``: ``(columns, offsets)`` to reverse first."""
    dask, _ = dask_modules()
    S_blocks, y_blocks, w_blocks = blocks
    size = None if n_knots is None else SUMMARY_FACTOR * n_knots
    n_cand = None if n_knots is None else CANDIDATE_FACTOR * n_knots
    summarize = dask.delayed(_summarize_block, pure=True)
    parts = [
        summarize(s, yb, wb, i, M, size, scale, n_cand, reverse)
        for i, (s, yb, wb) in enumerate(zip(S_blocks, y_blocks, w_blocks, strict=True))
    ]
    (res,) = dask.compute(tree_reduce(parts, _merge_pass1, size))
    knots, values, pending, bound = [None] * M, [None] * M, {}, 0.0
    for j, summary in enumerate(res["summaries"]):
        exact = n_knots is None or (summary.exact and summary.vals.shape[0] <= n_knots)
        # a sketch's knots are chosen among candidates, as in memory (ecdf.sketch_column)
        q = summary.vals if exact else knot_candidates(summary)
        check_not_constant(q, j)
        knots[j] = q
        if exact:
            values[j] = _mid_from_counts(summary)
        else:
            pending[j] = q
    if pending:
        count = dask.delayed(_count_block, pure=True)
        knots_d = dask.delayed(pending, pure=True)
        (counts,) = dask.compute(
            tree_reduce(
                [
                    count(s, wb, i, M, knots_d, scale, reverse)
                    for i, (s, wb) in enumerate(zip(S_blocks, w_blocks, strict=True))
                ],
                _sum_counts,
            )
        )
        for j, (lt, le) in counts.items():
            knots[j], values[j] = select_knots(pending[j], lt, le, res["weight"], n_knots)
            bound = max(bound, max_gap(values[j]))
    return res, knots, values, bound


def _directions(
    increasing, names, between, blocks, ecdf, knots, positive, scale
) -> tuple[np.ndarray, np.ndarray]:
    """``increasing_`` and ``reversal_offset_`` as in memory (one more pass for "auto")."""
    dask, _ = dask_modules()
    M = len(knots)
    wanted = resolve_increasing(increasing, M)
    offsets = np.array([1.0 if k[0] >= 0.0 and k[-1] <= 1.0 else 0.0 for k in knots])
    increasing = np.array([True if w is None else bool(w) for w in wanted])
    auto = [j for j, w in enumerate(wanted) if w is None]
    if auto:
        f = dask.delayed(_direction_block, pure=True)
        ecdf_d = dask.delayed(ecdf, pure=True)
        parts = [
            f(s, yb, wb, M, ecdf_d, positive, scale, between)
            for s, yb, wb in zip(*blocks, strict=True)
        ]
        (sums,) = dask.compute(tree_reduce(parts, _sum_arrays))
        z = _anti_alignment(sums)
        flagged = [j for j in auto if z[j] < DIRECTION_Z]
        if flagged:
            increasing[flagged] = False
            warn_reversed([column_label(names, j) for j in flagged], [float(z[j]) for j in flagged])
    return increasing, offsets


# ---------------------------------------------------------------------------------------------
# The prepared data.


@dataclass(frozen=True, eq=False)
class DaskPrepared:
    """What the passes before the fit found: the labels, the columns' names, the directions,
    the base rate, the ECDF (its ``ecdf_knots`` and error bound), the number of rows and
    their total canonical weight."""

    classes: np.ndarray
    names: list | None
    increasing: np.ndarray
    offsets: np.ndarray
    base_rate: float
    ecdf: ECDFNormalizer
    n_knots: int | None
    error_bound: float
    n: int
    total_weight: float

    @property
    def n_features(self) -> int:
        return len(self.ecdf.knots_)

    def attributes(self) -> dict:
        """The fitted attributes the preparation gives."""
        named = self.names is not None and all(isinstance(c, str) for c in self.names)
        names = {"feature_names_in_": np.asarray(self.names, dtype=object)} if named else {}
        return {
            "classes_": self.classes,
            "n_features_in_": self.n_features,
            **names,
            "increasing_": self.increasing,
            "reversal_offset_": self.offsets,
            "base_rate_": self.base_rate,
            "ecdf_": self.ecdf,
            "ecdf_knots_": self.n_knots,
            "ecdf_error_bound_": self.error_bound,
        }


def prepare(S, y, sample_weight, *, n_knots: int | None, increasing, between: str):
    """Validate dask scores ``S``, labels ``y`` and weights, and fit the ECDF (``n_knots``:
    a sketch's knots per column, None: exact) and the directions (``increasing``, as the
    estimator's parameter) on the workers. ``between``: the ECDF's form between knots.

    Returns the :class:`DaskPrepared` data and the :class:`DaskRows` source of the fit.
    """
    if y is None:
        raise ValueError(
            "this estimator requires y to be passed, but the target y is None; pass the binary "
            "class label of every row of S."
        )
    S, names = score_array(S)
    M = S.shape[1]
    rows, y_dtype = row_blocks(S, y, sample_weight)
    blocks = tuple(list(b) for b in zip(*rows, strict=True))
    # Pass 0 (weighted fits): the weights' range, to make them canonical as in memory.
    scale = weight_scale(rows)
    # Pass 1 (validation, labels, ECDF summaries) and pass 2 (counts at sketch candidates).
    res, knots, values, bound = _ecdf_passes(blocks, M, n_knots, scale)
    n = res["n"]
    if n < 2:
        raise ValueError(f"at least 2 training rows are needed, got {n} sample.")
    labels = res["labels"]
    keys = list(labels)
    classes, _ = encode_binary_targets(np.asarray(keys, dtype=y_dtype), len(keys))
    total_w = sum(labels.values())
    if not total_w > 0:
        raise ValueError("sample_weight sums to zero; at least one row needs positive weight.")
    for c in classes:
        if not labels[c.item() if hasattr(c, "item") else c] > 0:
            raise ValueError(
                f"sample_weight is zero on every row of class {c!r}; both classes need positive "
                "total weight."
            )
    ecdf = ECDFNormalizer.from_knots(knots, values)
    named = names if names is not None and all(isinstance(c, str) for c in names) else None
    increasing, offsets = _directions(
        increasing, named, between, blocks, ecdf, knots, classes[1], scale
    )
    if not increasing.all():
        # The ECDF refitted on the reversed scores, as in memory: a sketch's knots are the
        # candidates of smallest hash among the column's values, so mirroring the sketch of s
        # would give other knots than the sketch of offset - s (and, on a flat CV curve,
        # another penalty: 9e-3 apart in probability at 200,000 rows).
        reverse = (tuple(int(j) for j in np.flatnonzero(~increasing)), offsets)
        _, knots, values, bound = _ecdf_passes(blocks, M, n_knots, scale, reverse)
        ecdf = ECDFNormalizer.from_knots(knots, values)
    positive = classes[1].item() if hasattr(classes[1], "item") else classes[1]
    prepared = DaskPrepared(
        classes, names, increasing, offsets, float(labels[positive] / total_w), ecdf,
        n_knots, bound, n, float(total_w),
    )  # fmt: skip
    block_prep = _BlockPrep(increasing, offsets, scale, ecdf, between)
    return prepared, DaskRows(blocks, block_prep, classes[1], n)


# ---------------------------------------------------------------------------------------------
# Pass 3: the source of the fit's statistics.


@dataclass(frozen=True, eq=False)
class _BlockPrep:
    """What the workers need to prepare a block as in memory (plain data): the directions,
    the weights' range, the ECDF and its form between knots, and (default model) the scale
    of ``z``."""

    increasing: np.ndarray
    offsets: np.ndarray
    weight_scale: tuple | None
    ecdf: ECDFNormalizer
    between: str
    scale: OwnScale | None = None

    def rows(self, Sb, yb, wb, i: int, positive):
        """The block's normalized scores, scores (directions applied), labels in {0, 1} and
        canonical weights."""
        M = self.increasing.shape[0]
        Sb = np.asarray(Sb, dtype=float).reshape(-1, M)
        if not self.increasing.all():
            Sb = reverse_scores(Sb, np.flatnonzero(~self.increasing), self.offsets)
        y01 = (np.asarray(yb).reshape(-1) == positive).astype(float)
        wb = block_weights(wb, Sb.shape[0], i, self.weight_scale)
        return self.ecdf.transform(Sb, between=self.between), Sb, y01, wb


def _gram_block(Sb, yb, wb, i: int, prep: _BlockPrep, positive, structures, rule):
    """Pass 3 of the rank-only model: the statistics of every candidate ``structures`` of
    one block (per fold, for ``rule``)."""
    U, _, y01, wb = prep.rows(Sb, yb, wb, i, positive)
    if rule is None:
        return [accumulate_gram(U, y01, wb, s) for s in structures]
    cv = rule.n_folds
    fold = rule.hashed(rule.keys(U, y01))
    order = np.argsort(fold, kind="stable")
    bounds = np.searchsorted(fold[order], np.arange(cv + 1))
    Uo, yo, wo = U[order], y01[order], wb[order]
    return [
        [
            accumulate_gram(Uo[a:b], yo[a:b], wo[a:b], s)
            for a, b in zip(bounds[:-1], bounds[1:], strict=True)
        ]
        for s in structures
    ]


def _sum_stats(parts: list[list]) -> list:
    out = []
    for j in range(len(parts[0])):
        vals = [p[j] for p in parts]
        if isinstance(vals[0], LeastSquaresStats):
            out.append(sum(vals[1:], vals[0]))
        else:
            out.append([sum((v[f] for v in vals[1:]), vals[0][f]) for f in range(len(vals[0]))])
    return out


def _cell_block(Sb, yb, wb, i: int, prep: _BlockPrep, positive, edges, rule) -> CellSums:
    """Pass 3 of the default model: the cell sums of one block (per fold, for ``rule``)."""
    U, Sb, y01, wb = prep.rows(Sb, yb, wb, i, positive)
    Z = prep.scale.from_scores(Sb)
    fold = None if rule is None else rule.hashed(rule.keys(U, y01))
    return block_sums(U, Z, y01, wb, edges, fold, 0 if rule is None else rule.n_folds)


def _merge_cells(parts: list[CellSums]) -> CellSums:
    return CellSums.merge(parts)


class DaskRows:
    """The rows of a binary fit as dask blocks: every method is one pass over them, whose
    reduced sums reach the client."""

    def __init__(self, blocks, prep: _BlockPrep, positive, n: int):
        self.blocks, self.prep, self.positive, self.n = blocks, prep, positive, n
        self.M = prep.increasing.shape[0]

    def n_train(self, rule: FoldRule) -> int:
        """Rows of the smallest training fold at most, but for a chance below 1e-6 per
        fold: a hashed fold holds ``Binomial(n, 1 / cv)`` rows, whose standard deviation is
        at most ``sqrt(n) / 2`` (the same bound for any chunking)."""
        cv = rule.check_dask(self.n)
        return max(self.n - (-(-self.n // cv)) - int(np.ceil(2.5 * np.sqrt(self.n))), 1)

    def logistic_data(self, scale: OwnScale, bins: int, rule: FoldRule | None):
        """The default model's data: the cells of ``bins`` cuts per axis, per fold of
        ``rule`` (None: no cross-validation). Returns the data and None (the folds stay on
        the workers)."""
        dask, _ = dask_modules()
        if rule is not None:
            rule.check_dask(self.n)
        edges = cell_edges(*scale.feature_range(self.M), bins)
        prep = dask.delayed(_with_scale(self.prep, scale), pure=True)
        cell = dask.delayed(_cell_block, pure=True)
        parts = [
            cell(s, yb, wb, i, prep, self.positive, edges, rule)
            for i, (s, yb, wb) in enumerate(zip(*self.blocks, strict=True))
        ]
        (sums,) = dask.compute(tree_reduce(parts, _merge_cells))
        data: LogisticData = CellTable(sums, 0 if rule is None else rule.n_folds, self.M).data()
        return data, None

    def gram(self, rule: FoldRule | None, structures: list[Structure]):
        """The rank-only model's statistics of every candidate in ``structures`` (one pass
        for all), per fold of ``rule`` (None: all rows only), as a lookup by structure."""
        dask, _ = dask_modules()
        gram = dask.delayed(_gram_block, pure=True)
        prep = dask.delayed(self.prep, pure=True)
        parts = [
            gram(s, yb, wb, i, prep, self.positive, structures, rule)
            for i, (s, yb, wb) in enumerate(zip(*self.blocks, strict=True))
        ]
        (stats,) = dask.compute(tree_reduce(parts, _sum_stats))
        if rule is None:
            table = {s: (t, []) for s, t in zip(structures, stats, strict=True)}
        else:
            table: dict[Structure, GramStats] = {
                s: gram_stats(f) for s, f in zip(structures, stats, strict=True)
            }
        return table.__getitem__


def _with_scale(prep: _BlockPrep, scale: OwnScale) -> _BlockPrep:
    return _BlockPrep(
        prep.increasing, prep.offsets, prep.weight_scale, prep.ecdf, prep.between, scale
    )


# ---------------------------------------------------------------------------------------------
# Predict.


def _proba_block(Sb, proba, M: int, block_id=None):
    i = block_id[0] if block_id else "?"
    return proba(block_scores(Sb, i, M))


def _label_block(p, classes):
    return classes[(p > 0.5).astype(int)]


def predict_proba(S, proba, n_features: int, feature_names):
    """Lazy ``predict_proba`` of a dask array/DataFrame: a dask array of shape (n, 2), every
    block's from ``proba(scores)`` (the fitted model's, on the validated scores of a block
    of ``n_features`` columns)."""
    dask, da = dask_modules()
    S, names = score_array(S)
    if S.shape[1] != n_features:
        raise ValueError(f"S has {S.shape[1]} columns, expected {n_features}.")
    if names is not None and feature_names is not None and list(names) != list(feature_names):
        raise ValueError(
            f"The feature names should match those that were passed during fit: got {names}, "
            f"expected {list(feature_names)}."
        )
    # One graph key for the model, shipped once per worker rather than once per task.
    model = dask.delayed(proba, pure=False, name=f"bernstein-model-{uuid.uuid4().hex}")
    return da.map_blocks(
        _proba_block, S, model, n_features, dtype=float, chunks=(S.chunks[0], (2,)),
        meta=np.empty((0, 2)),
    )  # fmt: skip


def predict(S, proba, n_features: int, feature_names, classes):
    """Lazy ``predict`` of a dask array/DataFrame: labels at threshold 0.5."""
    p = predict_proba(S, proba, n_features, feature_names)[:, 1]
    return p.map_blocks(_label_block, classes, dtype=classes.dtype)
