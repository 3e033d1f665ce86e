"""The class-shared multi-class model on dask arrays: the in-memory fit, with its statistics
summed over chunks of rows on the workers.

The scores stay on the workers. Every chunk of rows becomes a :class:`~fusion.bernstein.
multiclass.pairs.PairBlock` kept in the workers' memory (``dask.persist``), built with the
scorers' axes that the passes before it fitted from mergeable summaries (ranges, then
weighted histograms: :func:`~fusion.bernstein.multiclass.pairs.axis_ranges`,
:func:`~fusion.bernstein.multiclass.pairs.axis_histograms`); the folds of the
cross-validation are every row's content key modulo the folds (:meth:`fusion.bernstein.
folds.FoldRule.pairs`), whatever the chunking. The fit itself (:func:`fusion.bernstein.
multiclass.shared.fit_source`) runs on the client against :class:`DaskSource`,
whose every call is one pass over the blocks returning the problems' losses, gradients and
Hessians (a few kB per block). So a dask fit follows the in-memory fit (the same folds) step
for step; only the order of floating-point additions differs.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np

from ..._direction import label_rank_sums, reverse_networks
from ..._multiclass import column_of, resolve_classes
from ..multiclass.multinomial import Tables
from ..multiclass.pairs import (
    PairBlock,
    ScoreRange,
    axis_histograms,
    axis_ranges,
    detect_scale,
    finish_axes,
    make_axes,
    member_log_probabilities,
    merge_ranges,
)
from ..multiclass.shared import fit_source
from ..multiclass.source import (
    FoldTotals,
    bin_features,
    block_curvature,
    block_heldout,
    block_heldout_sample,
    block_problem_stats,
    shared_layout,
)
from ..multiclass.toplabel import Sample
from ..plan import SharedPlan
from ..results import SharedResult
from .collections import (
    block_labels,
    block_weights,
    dask_modules,
    row_blocks,
    tree_reduce,
    weight_scale,
)

__all__ = ["DaskSource", "fit", "predict_proba"]


def _scores(S):
    """``S`` as one dask array (n, M, C) chunked along the rows only."""
    _, da = dask_modules()
    if isinstance(S, (list, tuple)):
        shapes = [s.shape for s in S]
        if any(len(s) != 2 for s in shapes) or len({s[1] for s in shapes}) > 1:
            raise ValueError(
                f"multi-class dask scores must be M arrays of shape (n, C) with one C, got "
                f"shapes {shapes}."
            )
        S = da.stack([s.rechunk({1: -1}) for s in S], axis=1)
    if S.dtype.kind not in "biuf":
        raise ValueError(f"multi-class scores must be numeric, got dtype {S.dtype}.")
    if S.dtype not in (np.float32, np.float64):
        S = S.astype(np.float64)
    if S.shape[2] < 3:
        raise ValueError(
            f"multi-class dask scores need C >= 3 class columns, got shape {S.shape}; for two "
            "classes pass the second class's scores, an (n, M) array."
        )
    return S.rechunk({1: -1, 2: -1})


# ---------------------------------------------------------------------------------------------
# Block functions (run on the workers).


def _checked(Sb, yb, wb, i: int, scale):
    Sb = np.asarray(Sb)
    n = Sb.shape[0]
    bad = np.isnan(Sb) | (Sb == np.inf)
    if bad.any():
        r, m, k = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(
            f"S[{r}, {m}, {k}] of block {i} is {Sb[r, m, k]}: the class-shared model needs "
            "every class score (logits, log-probabilities where -inf is a probability of 0, "
            "or probabilities)."
        )
    yb = block_labels(yb, n, i)
    wb = block_weights(wb, n, i, scale)
    return Sb, yb, wb


def _summary(Sb, yb, wb, i: int, scale) -> dict:
    """Pass 1: the block's distinct labels, kept rows, weight and every scorer's
    :class:`~fusion.bernstein.multiclass.pairs.ScoreRange`."""
    Sb, yb, wb = _checked(Sb, yb, wb, i, scale)
    kept = wb > 0
    Sk = Sb[kept]
    ranges = ScoreRange.of_members(Sk)
    return {"labels": np.unique(yb[kept]), "n": int(kept.sum()), "w": float(wb.sum()),
            "ranges": ranges}  # fmt: skip


def _merge_summaries(parts: list[dict]) -> dict:
    return {
        "labels": np.unique(np.concatenate([p["labels"] for p in parts])),
        "n": sum(p["n"] for p in parts),
        "w": sum(p["w"] for p in parts),
        "ranges": [ScoreRange.merge(r) for r in zip(*[p["ranges"] for p in parts], strict=True)],
    }


def _kept(Sb, yb, wb, i, scale, labels):
    Sb, yb, wb = _checked(Sb, yb, wb, i, scale)
    kept = wb > 0
    Sb, yb, wb = Sb[kept], yb[kept], wb[kept]
    index = column_of(labels, yb)
    return Sb, index, wb


def _ranges(Sb, yb, wb, i, scale, labels, scales):
    """Pass 2: every scorer's log-probability range, and its label ranks' sums
    (:func:`fusion._direction.label_rank_sums`, for the networks' directions)."""
    Sb, index, wb = _kept(Sb, yb, wb, i, scale, labels)
    return axis_ranges(member_log_probabilities(Sb, scales), wb), label_rank_sums(Sb, index, wb)


def _histograms(Sb, yb, wb, i, scale, labels, scales, ranges, mean_w):
    Sb, _, wb = _kept(Sb, yb, wb, i, scale, labels)
    return axis_histograms(member_log_probabilities(Sb, scales), wb / mean_w, ranges)


def _build(Sb, yb, wb, i, scale, labels, scales, axes, mean_w, rule, n_folds, sample):
    Sb, index, wb = _kept(Sb, yb, wb, i, scale, labels)
    Z = member_log_probabilities(Sb, scales)
    fold = rule.pairs(Z, index, sample) if n_folds else None
    return PairBlock.build(Z, index, wb / mean_w, fold, n_folds, axes)


def _bin_sums(block: PairBlock):
    return block.bin_sums()


def _segment_weights(block: PairBlock) -> tuple[dict, dict]:
    return block.segment_weights(), block.segment_class_weights()


def _heldout_weights(block: PairBlock, folds: Sequence[int]) -> list[np.ndarray]:
    return [block.w[slice(*block.bounds[f])] for f in folds]


def _sum_stats(parts: list[list]) -> list:
    out = [[0.0, None, None] for _ in parts[0]]
    for part in parts:
        for acc, (a, g, h) in zip(out, part, strict=True):
            acc[0] += a
            if g is not None:
                acc[1] = g if acc[1] is None else acc[1] + g
            if h is not None:
                acc[2] = h if acc[2] is None else acc[2] + h
    return out


class DaskSource(FoldTotals):
    """The statistics of :class:`fusion.bernstein.multiclass.source.MemorySource` over blocks
    kept on the workers: one ``dask.compute`` per call, tree-reduced."""

    def __init__(self, blocks: list, layout, degree: int, axes, n_folds: int, C: int):
        dask, _ = dask_modules()
        self.blocks = blocks
        self.layout = layout
        self.n_folds = n_folds
        self.n_classes = C
        self.axes = axes
        self.Phi, self.feats = bin_features(axes, degree)
        parts = dask.compute(*[dask.delayed(_segment_weights)(b) for b in blocks])
        self.weights, self.by_class = {}, {}
        for weights, by_class in parts:
            for f, v in weights.items():
                self.weights[f] = self.weights.get(f, 0.0) + v
                self.by_class[f] = self.by_class.get(f, 0.0) + by_class[f]

    def fold_keys(self) -> list[int]:
        return list(range(self.n_folds))

    def stats(self, requests, hessian: bool, gradient: bool = True):
        dask, _ = dask_modules()
        tables = dask.delayed(self._tables(requests), pure=True)
        feats = dask.delayed(self.feats, pure=True)
        f = dask.delayed(block_problem_stats, pure=True)
        parts = [f(b, tables, feats, hessian, gradient) for b in self.blocks]
        (out,) = dask.compute(tree_reduce(parts, _sum_stats))
        return [tuple(a) for a in out]

    def curvature(self, x: np.ndarray, share: float):
        """The mean loss's curvature at ``x`` over a share of the cross-validation's rows."""
        dask, _ = dask_modules()
        tables = dask.delayed(Tables.of(x, self.layout, self.Phi), pure=True)
        feats = dask.delayed(self.feats, pure=True)
        f = dask.delayed(block_curvature, pure=True)
        parts = dask.compute(*[f(b, tables, feats, share) for b in self.blocks])
        parts = [p for p in parts if p[0] is not None]
        H = parts[0][0]
        for part in parts[1:]:
            H = H + part[0]
        return H / sum(p[1] for p in parts)

    def heldout_weights(self) -> np.ndarray:
        dask, _ = dask_modules()
        folds = self.fold_keys()
        parts = dask.compute(*[dask.delayed(_heldout_weights)(b, folds) for b in self.blocks])
        return np.concatenate([p[j] for j in range(len(folds)) for p in parts])

    def heldout_sample(self, requests):
        """Every held-out row's fused probabilities under its fold's ``x``, in the order of
        :meth:`heldout_losses` (fold after fold, block after block)."""
        dask, _ = dask_modules()
        f = dask.delayed(block_heldout_sample, pure=True)
        parts = dask.compute(
            *[f(b, [req], self.layout, self.axes) for req in requests for b in self.blocks]
        )
        return Sample.concatenate([p for p in parts if p is not None])

    def heldout_losses(self, requests) -> np.ndarray:
        dask, _ = dask_modules()
        tables = dask.delayed(self._tables(requests), pure=True)
        parts = dask.compute(*[dask.delayed(block_heldout)(b, tables) for b in self.blocks])
        return np.concatenate([p[j] for j in range(len(requests)) for p in parts])


def fit(
    S, y, sample_weight, classes, base: str, plan_for, directions
) -> tuple[SharedResult, np.ndarray, np.ndarray]:
    """The class-shared model on dask scores ``S`` (n, M, C) (or M arrays (n, C)), labels
    ``y`` and weights, the scores' scale read by ``base``: ``plan_for(n, M, C)`` gives the
    :class:`~fusion.bernstein.plan.SharedPlan` for ``n`` rows of positive weight, and
    ``directions(M, C, rank_sums)`` every network's direction, ``rank_sums()`` giving the
    label ranks' sums of the second pass (a network not increasing is negated, and the
    passes start again). Returns the :class:`~fusion.bernstein.results.SharedResult`, the
    class labels and the directions."""
    dask, _ = dask_modules()
    if y is None:
        raise ValueError("y is required: pass the class label of every row of S.")
    S = _scores(S)
    _, M, C = S.shape
    rows, y_dtype = row_blocks(S, y, sample_weight)
    scale = weight_scale(rows)  # the weights' range, to make them canonical as in memory

    summary = dask.delayed(_summary, pure=True)
    (info,) = dask.compute(
        tree_reduce(
            [summary(Sb, yb, wb, i, scale) for i, (Sb, yb, wb) in enumerate(rows)], _merge_summaries
        )  # fmt: skip
    )
    n = info["n"]
    if n < 2:
        raise ValueError(
            f"at least 2 training rows with positive sample_weight are needed, got {n}."
        )
    labels = resolve_classes(info["labels"], C, classes, y_dtype)
    scales = [detect_scale(info["ranges"][m], base, m) for m in range(M)]
    mean_w = info["w"] / n
    plan: SharedPlan = plan_for(n, M, C)
    n_folds = plan.folds.check_dask(n) if plan.searches else 0

    common = (scale, labels, scales)
    f = dask.delayed(_ranges, pure=True)
    parts = dask.compute(*[f(*r, i, *common) for i, r in enumerate(rows)])
    increasing = directions(M, C, lambda: sum(p[1] for p in parts))
    if not increasing.all():  # negated networks: their ranges and scales are read again
        fixed = increasing.copy()
        result, labels, _ = fit(reverse_networks(S, fixed), y, sample_weight, classes, base,
                                plan_for, lambda *_: np.ones_like(fixed))  # fmt: skip
        return result, labels, fixed
    ranges = merge_ranges([p[0] for p in parts])
    f = dask.delayed(_histograms, pure=True)
    parts = [f(*r, i, *common, ranges, mean_w) for i, r in enumerate(rows)]
    (hists,) = dask.compute(tree_reduce(parts, _add))
    axes = make_axes(ranges, hists)
    f = dask.delayed(_build, pure=True)
    built = [
        f(*r, i, *common, axes, mean_w, plan.folds, n_folds, plan.sample)
        for i, r in enumerate(rows)
    ]
    blocks = list(dask.persist(*built))
    sums = dask.compute(*[dask.delayed(_bin_sums)(b) for b in blocks])
    finish_axes(axes, sum(s[0] for s in sums), sum(s[1] for s in sums))
    # the blocks' bins were cut with the axes before their means were known: only the means
    # (zbar, ubar) were added since, and they are read on the client (bin_features)
    source = DaskSource(blocks, shared_layout(M, plan.degree), plan.degree, axes, n_folds, C)
    return fit_source(source, plan, axes, scales, info["w"]), labels, increasing


def _add(parts):
    return sum(parts[1:], parts[0])


def _proba_block(Sb, proba):
    return proba(np.asarray(Sb))


def predict_proba(S, proba, M: int, C: int):
    """Lazy class probabilities (n, C) for dask scores ``S``, every block's from
    ``proba(scores)`` (the fitted model's, for ``M`` scorers of ``C`` classes)."""
    dask, da = dask_modules()
    S = _scores(S)
    if S.shape[1:] != (M, C):
        raise ValueError(
            f"this model fuses {M} scorers of {C} classes: pass S of shape (n, {M}, {C}), got "
            f"{S.shape}."
        )
    model = dask.delayed(proba, pure=False, name=f"bernstein-model-{uuid.uuid4().hex}")
    return da.map_blocks(_proba_block, S, model, dtype=float, drop_axis=2,
                         chunks=(S.chunks[0], (C,)), meta=np.empty((0, C)))  # fmt: skip
