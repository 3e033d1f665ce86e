"""The class-shared multi-class model's statistics over blocks of (row, class) pairs (losses,
gradients, Hessians and held-out losses of several problems in one pass), and its source in
memory; :mod:`fusion.bernstein.dask.shared` is the same source over dask blocks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..basis import bernstein_basis
from ..structure import Layout, Structure
from .model import MemberTerms, shared_proba_terms
from .multinomial import Tables, block_losses, block_stats
from .pairs import MemberAxis, PairBlock, PairData, trains_on
from .toplabel import Sample, sample_rows

__all__ = [
    "shared_layout",
    "bin_features",
    "block_problem_stats",
    "block_curvature",
    "block_heldout",
    "block_heldout_sample",
    "model_parts",
    "MemorySource",
]


def shared_layout(M: int, degree: int) -> Layout:
    """``x = (c_1..c_M, theta_1, ..., theta_M)``, every ``theta_m`` of length ``degree + 1``
    with its 0-corner pinned at 0."""
    structure = Structure.of((int(degree),) * M, tuple((m,) for m in range(M)))
    return Layout(M, structure, free_constant=False)


def bin_features(axes: Sequence[MemberAxis], degree: int) -> tuple[list, list]:
    """``Phi[m]`` (the basis at every bin's mean ``u``) and ``feats[m] = (cols, F)`` (the
    columns of ``x`` scorer ``m``'s features occupy and every bin's feature row: mean ``z``,
    then ``Phi[m]``) of each scorer."""
    M = len(axes)
    K1 = int(degree) + 1
    Phi, feats = [], []
    for m, axis in enumerate(axes):
        basis = np.ascontiguousarray(bernstein_basis(axis.ubar, degree))
        cols = np.r_[m, M + m * K1 + np.arange(K1)]
        Phi.append(basis)
        feats.append((cols, np.column_stack([axis.zbar, basis])))
    return Phi, feats


def block_problem_stats(block: PairBlock, requests, feats, hessian: bool, gradient: bool):
    """``[loss, grad, H]`` of every problem ``(key, tables)`` over its training rows in
    ``block`` (see :func:`~.pairs.trains_on`): a problem's rows are a few contiguous pieces
    (the segments are stored one after the other), each one compiled pass; with ``hessian``
    in cache-sized runs (its sums keep every pair's probability)."""
    out = [[0.0, None, None] for _ in requests]
    n = block.w.shape[0]
    spans = block.runs() if hessian else [(0, n)]
    for (key, tables), acc in zip(requests, out, strict=True):
        for start, stop in spans:
            for a, b in block.pieces(key, start, stop):
                loss, g, h = block_stats(
                    block.Z, block.B, block.index, block.w, tables, feats, hessian, gradient,
                    rows=(a, b),
                )  # fmt: skip
                acc[0] += loss
                if g is not None:
                    acc[1] = g if acc[1] is None else acc[1] + g
                if h is not None:
                    acc[2] = h if acc[2] is None else acc[2] + h
    return out


def block_curvature(block: PairBlock, tables: Tables, feats, share: float):
    """The Hessian at ``tables`` over a share of the block's cross-validation rows (the
    first ``share`` of every segment's rows) and their weight."""
    H, W = None, 0.0
    for seg, (a, b) in block.bounds.items():
        if not trains_on("cv", seg) or b <= a:
            continue
        end = a + max(1, int(np.ceil(share * (b - a))))
        for Z, B, idx, w in block.blocks(seg, end):
            _, _, h = block_stats(Z, B, idx, w, tables, feats, True, False)
            H = h if H is None else H + h
            W += float(w.sum())
    return H, W


def block_heldout(block: PairBlock, requests) -> list[np.ndarray]:
    """Every problem's log-loss on the rows of ``block`` in its test fold (its key)."""
    out = []
    for key, t in requests:
        a, b = block.bounds[key]
        out.append(block_losses(block.Z, block.B, block.index, t, (a, b)))
    return out


def block_heldout_sample(block: PairBlock, requests, layout: Layout, axes) -> Sample:
    """The held-out fused probabilities of the rows of ``block`` in every problem's test
    fold (its key), under that problem's ``x``, as a :class:`~.toplabel.Sample`: the model
    as it predicts (every pair's own ``u``, not its bin's)."""
    parts = []
    for key, x in requests:
        c, coefs, bias = model_parts(x, layout)
        terms = [MemberTerms(axis.lookup, coefs[m], c[m]) for m, axis in enumerate(axes)]
        for Z, _, idx, w in block.blocks(key):
            P = shared_proba_terms(list(Z), terms, bias)
            parts.append(sample_rows(P, idx, w, np.full(idx.shape[0], key)))
    return Sample.concatenate(parts) if parts else None


def model_parts(x: np.ndarray, layout: Layout) -> tuple[np.ndarray, list, np.ndarray]:
    """``c``, every scorer's ``g_m`` coefficients and the class biases (0 without) of the
    class-shared model's parameter vector ``x``."""
    P = layout.n_coef
    c, parts = layout.split(x[:P])
    bias = x[P:] if x.shape[0] > P else 0.0
    return np.asarray(c, dtype=float), [np.ravel(t) for t in parts], bias


class FoldTotals:
    """What every source of the class-shared fit derives from its folds' weights
    (``weights``, ``by_class``: test fold -> total and per-class weight), its ``layout`` and
    its bins ``Phi``: a problem's training weights and its coefficient tables."""

    name = "class-shared multi-class"

    def class_weights(self, key) -> np.ndarray:
        """Training weight of every class in the rows of problem ``key``."""
        return sum(v for f, v in self.by_class.items() if trains_on(key, f))

    def total(self, key) -> float:
        return float(sum(v for f, v in self.weights.items() if trains_on(key, f)))

    def _tables(self, requests):
        return [(key, Tables.of(x, self.layout, self.Phi)) for key, x in requests]


class MemorySource(FoldTotals):
    """The class-shared fit's statistics over the pairs of a :class:`PairData`: a problem's
    key is the test fold whose complement it trains on (None: every row). The
    loss object of :func:`fusion.bernstein.newton.solve`."""

    def __init__(self, data: PairData, layout: Layout, degree: int):
        self.data = data
        self.layout = layout
        self.n_classes = data.C
        self.Phi, self.feats = bin_features(data.axes, degree)
        self.weights = data.segment_weights()
        self.by_class = data.segment_class_weights()

    def fold_keys(self) -> list[int]:
        return list(range(self.data.n_folds))

    def stats(self, requests, hessian: bool, gradient: bool = True):
        out = block_problem_stats(self.data, self._tables(requests), self.feats, hessian, gradient)
        return [tuple(a) for a in out]

    def curvature(self, x: np.ndarray, share: float):
        """The mean loss's curvature at ``x`` over a share of the cross-validation's rows."""
        H, W = block_curvature(self.data, Tables.of(x, self.layout, self.Phi), self.feats, share)
        return H / W

    def heldout_weights(self) -> np.ndarray:
        """Weights of the held-out rows, in the order of :meth:`heldout_losses`."""
        return np.concatenate([self.data.w[slice(*self.data.bounds[f])] for f in self.fold_keys()])

    def heldout_losses(self, requests) -> np.ndarray:
        return np.concatenate(block_heldout(self.data, self._tables(requests)))

    def heldout_sample(self, requests) -> Sample:
        """Every held-out row's fused probabilities under its fold's ``x``
        (:func:`block_heldout_sample`)."""
        return block_heldout_sample(self.data, requests, self.layout, self.data.axes)

    def by_row(self, heldout: np.ndarray) -> np.ndarray:
        """Held-out values in the order of :meth:`heldout_losses` by the caller's row (NaN
        for a row outside the cross-validation)."""
        tests = [slice(*self.data.bounds[f]) for f in self.fold_keys()]
        out = np.full(self.data.n, np.nan)
        out[np.concatenate([self.data.order[rows] for rows in tests])] = heldout
        return out
