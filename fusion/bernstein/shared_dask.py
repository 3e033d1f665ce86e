"""The class-shared multi-class model on dask arrays: the in-memory fit, with its statistics
summed over chunks of rows on the workers.

The scores stay on the workers. Every chunk of rows becomes a :class:`~fusion.bernstein.
pairs.PairBlock` kept in the workers' memory (``dask.persist``), built with the scorers'
axes that the passes before it fitted from mergeable summaries (ranges, then weighted
histograms: :func:`~fusion.bernstein.pairs.axis_ranges`, :func:`~fusion.bernstein.pairs.
axis_histograms`); the folds of the cross-validation are assigned by every row's content
(:func:`~fusion.bernstein.pairs.row_folds`), as in memory. The fit itself
(:func:`fusion.bernstein.shared.fit_source`) runs on the client against :class:`DaskSource`,
whose every call is one pass over the blocks returning the problems' losses, gradients and
Hessians (a few kB per block). So a dask fit follows the in-memory fit step for step; only
the order of floating-point additions differs.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .._multiclass import column_of, resolve_classes
from .distributed import _align, _block_labels, _block_weights, _dask, _tree_reduce
from .multinomial import Tables
from .pairs import (
    PairBlock,
    ScoreRange,
    axis_histograms,
    axis_ranges,
    detect_scale,
    finish_axes,
    make_axes,
    merge_ranges,
    row_folds,
    trains_on,
)
from .shared import (
    bin_features,
    block_curvature,
    block_heldout,
    block_heldout_sample,
    block_problem_stats,
    fit_source,
    needs_folds,
    shared_layout,
)
from .toplabel import Sample

__all__ = ["is_multiclass_dask", "DaskPlan", "DaskSource", "fit_shared_dask", "proba_dask"]


def is_dask(x) -> bool:
    """Whether ``x`` is a dask collection (its protocol, checked without importing dask)."""
    return x is not None and callable(getattr(x, "__dask_graph__", None))


def is_multiclass_dask(S) -> bool:
    """Whether ``S`` is multi-class dask input: a 3-D dask array (n, M, C) or a list of
    2-D dask arrays (n, C)."""
    if isinstance(S, (list, tuple)):
        return bool(S) and all(is_dask(s) for s in S)
    return is_dask(S) and getattr(S, "ndim", 0) == 3


def _scores(S):
    """``S`` as one dask array (n, M, C) chunked along the rows only."""
    _, da = _dask()
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


@dataclass
class DaskPlan:
    """What the estimator decides for a dask fit: the scale of the scores (``base``), the
    folds (an int ``cv`` and its seed), the degree and penalty grid for ``n`` rows, the
    solver settings and whether to show progress."""

    base: str
    cv: int
    seed: int
    degree_for: Callable[[int, int], int]
    lams_for: Callable[[int], list]
    taus: list
    top_penalties: list
    cv_sample: Callable[[int, int], float]
    osqp_settings: dict
    progress: Callable[[int], object]


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
    yb = _block_labels(yb, n, i)
    wb = _block_weights(wb, n, i, scale)
    return Sb, yb, wb


def _summary(Sb, yb, wb, i: int, scale) -> dict:
    """Pass 1: the block's distinct labels, kept rows, weight and every scorer's
    :class:`~fusion.bernstein.pairs.ScoreRange`."""
    Sb, yb, wb = _checked(Sb, yb, wb, i, scale)
    kept = wb > 0
    Sk = Sb[kept]
    ranges = [ScoreRange.of(Sk[:, m, :]) for m in range(Sb.shape[1])]
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
    Sb, _, wb = _kept(Sb, yb, wb, i, scale, labels)
    return axis_ranges(Sb, wb, scales)


def _histograms(Sb, yb, wb, i, scale, labels, scales, ranges, mean_w):
    Sb, _, wb = _kept(Sb, yb, wb, i, scale, labels)
    return axis_histograms(Sb, wb / mean_w, scales, ranges)


def _build(Sb, yb, wb, i, scale, labels, scales, axes, mean_w, n_folds, seed, sample):
    Sb, index, wb = _kept(Sb, yb, wb, i, scale, labels)
    fold = row_folds(Sb, index, n_folds, seed, sample, scales) if n_folds else None
    return PairBlock.build(Sb, index, wb / mean_w, fold, n_folds, axes, scales)


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


class DaskSource:
    """The statistics of :class:`fusion.bernstein.shared.MemorySource` over blocks kept on
    the workers: one ``dask.compute`` per call, tree-reduced."""

    def __init__(self, blocks: list, layout, degree: int, axes, n_folds: int, C: int):
        dask, _ = _dask()
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

    def class_weights(self, key) -> np.ndarray:
        """Training weight of every class in the rows of problem ``key``."""
        return sum(v for f, v in self.by_class.items() if trains_on(key, f))

    def total(self, key) -> float:
        return float(sum(v for f, v in self.weights.items() if trains_on(key, f)))

    def _tables(self, requests):
        return [(key, Tables.of(x, self.layout, self.Phi)) for key, x in requests]

    def stats(self, requests, hessian: bool, gradient: bool = True):
        dask, _ = _dask()
        tables = dask.delayed(self._tables(requests), pure=True)
        feats = dask.delayed(self.feats, pure=True)
        f = dask.delayed(block_problem_stats, pure=True)
        parts = [f(b, tables, feats, hessian, gradient) for b in self.blocks]
        (out,) = dask.compute(_tree_reduce(parts, _sum_stats))
        return [tuple(a) for a in out]

    def curvature(self, x: np.ndarray, share: float):
        """The mean loss's curvature at ``x`` over a share of the cross-validation's rows."""
        dask, _ = _dask()
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
        dask, _ = _dask()
        folds = self.fold_keys()
        parts = dask.compute(*[dask.delayed(_heldout_weights)(b, folds) for b in self.blocks])
        return np.concatenate([p[j] for j in range(len(folds)) for p in parts])

    def heldout_sample(self, requests):
        """Every held-out row's fused probabilities under its fold's ``x``, in the order of
        :meth:`heldout_losses` (fold after fold, block after block)."""
        dask, _ = _dask()
        f = dask.delayed(block_heldout_sample, pure=True)
        parts = dask.compute(
            *[f(b, [req], self.layout, self.axes) for req in requests for b in self.blocks]
        )
        return Sample.concatenate([p for p in parts if p is not None])

    def heldout_losses(self, requests) -> np.ndarray:
        dask, _ = _dask()
        tables = dask.delayed(self._tables(requests), pure=True)
        parts = dask.compute(*[dask.delayed(block_heldout)(b, tables) for b in self.blocks])
        return np.concatenate([p[j] for j in range(len(requests)) for p in parts])


def fit_shared_dask(S, y, sample_weight, classes, plan: DaskPlan):
    """The class-shared model on dask scores ``S`` (n, M, C) (or M arrays (n, C)), labels
    ``y`` and weights: ``(fit, classes, M, C)`` with ``fit`` a
    :class:`~fusion.bernstein.shared.SharedFit`."""
    dask, _ = _dask()
    if y is None:
        raise ValueError("y is required: pass the class label of every row of S.")
    S = _scores(S)
    _, M, C = S.shape
    S, ya = _align(S, y, "y")
    S, wa = _align(S, sample_weight, "sample_weight")
    S_blocks = list(S.to_delayed().ravel())
    y_blocks = list(ya.to_delayed().ravel())
    w_blocks = list(wa.to_delayed().ravel()) if wa is not None else [None] * len(S_blocks)
    rows = list(zip(S_blocks, y_blocks, w_blocks, strict=True))

    scale = None
    if wa is not None:  # the weights' range, to make them canonical as in memory
        from .distributed import _merge_ranges, _weight_range

        rng = dask.delayed(_weight_range, pure=True)
        (scale,) = dask.compute(
            _tree_reduce([rng(wb, i) for i, wb in enumerate(w_blocks)], _merge_ranges)
        )
        if not scale[1] > 0:
            raise ValueError("sample_weight sums to zero; at least one row needs positive weight.")

    summary = dask.delayed(_summary, pure=True)
    (info,) = dask.compute(
        _tree_reduce(
            [summary(Sb, yb, wb, i, scale) for i, (Sb, yb, wb) in enumerate(rows)], _merge_summaries
        )  # fmt: skip
    )
    n = info["n"]
    if n < 2:
        raise ValueError(
            f"at least 2 training rows with positive sample_weight are needed, got {n}."
        )
    labels = resolve_classes(info["labels"], C, classes, ya.dtype)
    scales = [detect_scale(info["ranges"][m], plan.base, m) for m in range(M)]
    mean_w = info["w"] / n
    degree = plan.degree_for(M, n)
    lams = plan.lams_for(n)
    n_folds = int(plan.cv) if needs_folds(lams, plan.taus, plan.top_penalties) else 0

    common = (scale, labels, scales)
    f = dask.delayed(_ranges, pure=True)
    ranges = merge_ranges(dask.compute(*[f(*r, i, *common) for i, r in enumerate(rows)]))
    f = dask.delayed(_histograms, pure=True)
    parts = [f(*r, i, *common, ranges, mean_w) for i, r in enumerate(rows)]
    (hists,) = dask.compute(_tree_reduce(parts, _add))
    axes = make_axes(ranges, hists)
    f = dask.delayed(_build, pure=True)
    sample = plan.cv_sample(n, C)
    built = [
        f(*r, i, *common, axes, mean_w, n_folds, plan.seed, sample) for i, r in enumerate(rows)
    ]
    blocks = list(dask.persist(*built))
    sums = dask.compute(*[dask.delayed(_bin_sums)(b) for b in blocks])
    finish_axes(axes, sum(s[0] for s in sums), sum(s[1] for s in sums))
    # the blocks' bins were cut with the axes before their means were known: only the means
    # (zbar, ubar) were added since, and they are read on the client (bin_features)
    source = DaskSource(blocks, shared_layout(M, degree), degree, axes, n_folds, C)
    progress = plan.progress(len(lams), len(plan.taus), plan.top_penalties)
    fit = fit_source(
        source, axes, scales, degree, lams, plan.taus, plan.osqp_settings, info["w"], progress,
        plan.top_penalties,
    )  # fmt: skip
    progress.close()
    return fit, labels, M, C


def _add(parts):
    return sum(parts[1:], parts[0])


def _proba_block(Sb, model):
    return model._class_distribution(np.asarray(Sb))


def proba_dask(est, S):
    """Lazy class probabilities (n, C) of a fitted multi-class model for dask scores."""
    dask, da = _dask()
    S = _scores(S)
    if S.shape[1:] != (est.n_features_in_, est.n_classes_):
        raise ValueError(
            f"this model fuses {est.n_features_in_} scorers of {est.n_classes_} classes: pass "
            f"S of shape (n, {est.n_features_in_}, {est.n_classes_}), got {S.shape}."
        )
    model = dask.delayed(est, pure=False, name=f"bernstein-model-{uuid.uuid4().hex}")
    C = est.n_classes_
    return da.map_blocks(_proba_block, S, model, dtype=float, drop_axis=2,
                         chunks=(S.chunks[0], (C,)), meta=np.empty((0, C)))  # fmt: skip
