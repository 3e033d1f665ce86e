"""Fitting and evaluating the class-shared multi-class model (:mod:`fusion.bernstein.multinomial`)
on scores in memory: the in-memory source of the fit, the penalty's cross-validation and
the model's probabilities."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._cv import edge_matters, one_se_index, paired_se
from .._multiclass import COUPLED_LOGIT_RANGE
from .._solver import one_blas_thread
from .._warn import caller_level
from .basis import bernstein_basis, evaluate
from .logistic import Layout, base_ridge
from .multinomial import (
    CV_ROWS,
    HESSIAN_PAIRS,
    Problem,
    Tables,
    block_arrays,
    block_losses,
    block_stats,
    cv_path,
    newton,
)
from .pairs import BLOCK_PAIRS, MemberAxis, PairBlock, PairData, log_probabilities, trains_on
from .toplabel import Sample, TopLabelFit, choose, reweight, sample_rows

__all__ = [
    "MemorySource",
    "SharedFit",
    "BIAS_GRID",
    "fit_shared",
    "fit_source",
    "block_problem_stats",
    "block_heldout",
    "block_curvature",
    "shared_layout",
    "bin_features",
    "shared_proba",
    "shared_proba_normalized",
    "needs_folds",
    "model_parts",
    "block_heldout_sample",
]


def shared_layout(M: int, degree: int) -> Layout:
    """``x = (c_1..c_M, theta_1, ..., theta_M)``, every ``theta_m`` of length ``degree + 1``
    with its 0-corner pinned at 0."""
    return Layout(M, tuple((int(degree) + 1,) for _ in range(M)), free_constant=False)


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
    ``block`` (see :func:`~fusion.bernstein.pairs.trains_on`). The block is read in
    cache-sized runs of rows, each once for all problems; within a run a problem's rows
    are at most a few contiguous pieces (the segments are stored one after the other)."""
    out = [[0.0, None, None] for _ in requests]
    for start, stop in block.runs():
        pieces = [block.pieces(key, start, stop) for key, _ in requests]
        if not any(pieces):
            continue
        Z, B = block_arrays(block.Z[:, start:stop], block.B[:, start:stop])
        for j, (_, tables) in enumerate(requests):
            for a, b in pieces[j]:
                rows = slice(a - start, b - start)
                loss, g, h = block_stats(
                    Z[:, rows], B[:, rows], block.index[a:b], block.w[a:b], tables, feats,
                    hessian, gradient,
                )  # fmt: skip
                acc = out[j]
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
            _, _, h = block_stats(*block_arrays(Z, B), idx, w, tables, feats, True, False)
            H = h if H is None else H + h
            W += float(w.sum())
    return H, W


def block_heldout(block: PairBlock, requests) -> list[np.ndarray]:
    """Every problem's log-loss on the rows of ``block`` in its test fold (its key)."""
    out = []
    for key, t in requests:
        losses = [block_losses(*block_arrays(Z, B), idx, t) for Z, B, idx, _ in block.blocks(key)]
        out.append(np.concatenate(losses) if losses else np.zeros(0))
    return out


def block_heldout_sample(block: PairBlock, requests, layout: Layout, axes) -> Sample:
    """The held-out fused probabilities of the rows of ``block`` in every problem's test
    fold (its key), under that problem's ``x``, as a :class:`~fusion.bernstein.toplabel.
    Sample`: the model as it predicts (every pair's own ``u``, not its bin's)."""
    parts = []
    for key, x in requests:
        c, coefs, bias = model_parts(x, layout)
        for Z, _, idx, w in block.blocks(key):
            Zr = np.moveaxis(np.asarray(Z, dtype=np.float64), 0, 1)  # (r, M, C)
            U = np.empty_like(Zr)
            for m, axis in enumerate(axes):
                U[:, m] = axis.normalize(Zr[:, m])
            P = shared_proba_normalized(Zr, U, c, coefs, bias)
            parts.append(sample_rows(P, idx, w, np.full(idx.shape[0], key)))
    return Sample.concatenate(parts) if parts else None


def model_parts(x: np.ndarray, layout: Layout) -> tuple[np.ndarray, list, np.ndarray]:
    """``c``, every scorer's ``g_m`` coefficients and the class biases (0 without) of the
    class-shared model's parameter vector ``x``."""
    P = layout.n_coef
    c, parts = layout.split(x[:P])
    bias = x[P:] if x.shape[0] > P else 0.0
    return np.asarray(c, dtype=float), [np.ravel(t) for t in parts], bias


class MemorySource:
    """The class-shared fit's statistics over the pairs of a :class:`PairData`: a problem's
    key is the test fold whose complement it trains on (None: every row)."""

    def __init__(self, data: PairData, layout: Layout, degree: int):
        self.data = data
        self.layout = layout
        self.n_classes = data.C
        self.Phi, self.feats = bin_features(data.axes, degree)
        self.weights = data.segment_weights()
        self.by_class = data.segment_class_weights()

    def fold_keys(self) -> list[int]:
        return list(range(self.data.n_folds))

    def class_weights(self, key) -> np.ndarray:
        """Training weight of every class in the rows of problem ``key``."""
        return sum(v for f, v in self.by_class.items() if trains_on(key, f))

    def total(self, key) -> float:
        return float(sum(v for f, v in self.weights.items() if trains_on(key, f)))

    def _tables(self, requests):
        return [(key, Tables.of(x, self.layout, self.Phi)) for key, x in requests]

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

    def heldout_rows(self) -> np.ndarray:
        """The caller's row of every held-out loss, in the order of :meth:`heldout_losses`."""
        tests = [slice(*self.data.bounds[f]) for f in self.fold_keys()]
        return np.concatenate([self.data.order[rows] for rows in tests])


#: Ridge penalties of the class biases tried by ``bias_penalty="cv"`` after ``inf`` (no
#: biases), largest first; in units of the mean log-loss, like ``lam``.
BIAS_GRID = (1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)


@dataclass
class SharedFit:
    """A fitted class-shared model: the scorers' axes and scales, the degree, ``x`` (``c``,
    ``theta`` and, with biases, ``b``), the penalties, the cross-validation's scores
    (keyed by ``(lam, tau)``) and the final solve's iterations and status."""

    axes: list
    scales: tuple
    degree: int
    x: np.ndarray
    lam: float
    tau: float
    cv_scores: dict | None
    cv_se: dict | None
    n_iter: int
    status: str
    heldout: np.ndarray | None = None  # every row's held-out log-loss at the chosen penalties
    top_label: TopLabelFit | None = None  # the top-label correction (None: not searched)


def fit_shared(
    S: np.ndarray,
    index: np.ndarray,
    w: np.ndarray,
    scales: Sequence[str],
    degree: int,
    lams: Sequence[float],
    taus: Sequence[float],
    fold: np.ndarray | None,
    n_folds: int,
    osqp_settings: dict,
    n_eff: float,
    progress=None,
    top_penalties: Sequence[float] = (np.inf,),
) -> SharedFit:
    """The class-shared model on scores ``S`` (n, M, C) in memory, class indices ``index``
    and weights ``w`` (mean 1): ``lam`` from ``lams``, the class biases' ridge ``tau`` from
    ``taus`` (largest first, ``inf``: no biases) and the top-label correction's penalty from
    ``top_penalties`` (:mod:`fusion.bernstein.toplabel`; ``inf`` alone: none), chosen by
    cross-validation on the test folds ``fold`` (see :func:`needs_folds`)."""
    M = S.shape[1]
    search = needs_folds(lams, taus, top_penalties)
    data = PairData(S, index, w, scales, fold if search else None, n_folds if search else 0)
    source = MemorySource(data, shared_layout(M, degree), degree)
    return fit_source(
        source, data.axes, scales, degree, lams, taus, osqp_settings, n_eff, progress,
        top_penalties,
    )  # fmt: skip


def needs_folds(lams, taus, top_penalties) -> bool:
    """Whether a fit needs cross-validation folds: a penalty to choose, or a top-label
    correction (fitted on held-out probabilities even at a given penalty)."""
    return len(lams) > 1 or len(taus) > 1 or any(np.isfinite(t) for t in top_penalties)


def fit_source(
    source,
    axes: list[MemberAxis],
    scales: Sequence[str],
    degree: int,
    lams: Sequence[float],
    taus: Sequence[float],
    osqp_settings: dict,
    n_eff: float,
    progress=None,
    top_penalties: Sequence[float] = (np.inf,),
) -> SharedFit:
    """The fit on a source of statistics (in memory or on dask): the cross-validated path
    over ``lams`` (without class biases when ``taus`` is a grid), the one-standard-error
    rule toward the largest ``lam``; then, at that ``lam``, the path over the biases'
    ridges ``taus`` with the same rule toward no biases; then the final fit on every row
    from the mean of the chosen penalties' fold solutions; and the top-label correction
    from the held-out probabilities of the chosen penalties' folds."""
    with one_blas_thread():  # small dense algebra only: threads would only spin
        return _fit_source(source, axes, scales, degree, lams, taus, osqp_settings, n_eff,
                           progress, top_penalties)  # fmt: skip


def _fit_source(source, axes, scales, degree, lams, taus, settings, n_eff, progress, tops):
    M = len(axes)
    layout = shared_layout(M, degree)
    ridge = base_ridge(n_eff)
    x0 = np.zeros(layout.n_coef)
    x0[:M] = 1.0 / M  # temperature 1 of the averaged log-probabilities
    lam, tau = float(lams[0]), float(taus[0])
    x_start, cv_scores, cv_se, heldout, chosen_folds = x0, None, None, None, None
    if needs_folds(lams, taus, tops):
        first = taus[0] if len(taus) == 1 else np.inf
        starts = [x0] * len(source.fold_keys())
        path = cv_path(source, layout, [(v, first) for v in lams], starts, settings, ridge,
                       progress=progress, se_rule=paired_se)  # fmt: skip
        pick = one_se_index(path.held, path.w)
        lam, tau = path.settings[pick]
        chosen_folds = path.solutions[pick]
        heldout = path.held[pick]
        done, held = list(path.settings), [path.held]
        if len(lams) > 1 and pick == len(lams) - 1 and _edge_matters(path.held, path.w, pick):
            _warn_edge(f"lam={lam:g}", "lam_grid")
        if len(taus) > 1:
            grid = [(lam, float(t)) for t in taus if np.isfinite(t)]
            bias = cv_path(source, layout, grid, path.solutions[pick], settings, ridge,
                           progress=progress, se_rule=paired_se)  # fmt: skip
            candidates = np.vstack([path.held[pick : pick + 1], bias.held])
            chosen = one_se_index(candidates, path.w)
            if chosen > 0:
                tau = bias.settings[chosen - 1][1]
                chosen_folds = bias.solutions[chosen - 1]
                heldout = bias.held[chosen - 1]
                # (at tau n <= 0.01 a smaller ridge could not fit the data any closer)
                edge = chosen == len(grid) and tau * n_eff > 0.01
                if edge and _edge_matters(candidates, path.w, chosen):
                    _warn_edge(f"bias_penalty={tau:g}", "the bias penalty grid")
            done += bias.settings
            held.append(bias.held)
        x_start = np.mean(chosen_folds, axis=0)
        if len(lams) > 1 or len(taus) > 1:
            losses = np.vstack(held)
            mean = losses @ path.w / path.w.sum()
            se = paired_se(losses, path.w, int(np.argmin(mean)))
            cv_scores = {k: float(v) for k, v in zip(done, mean, strict=True)}
            cv_se = {k: float(v) for k, v in zip(done, se, strict=True)}
    top = None
    if chosen_folds is not None and any(np.isfinite(t) for t in tops):
        sample = source.heldout_sample(list(zip(source.fold_keys(), chosen_folds, strict=True)))
        top = choose(sample, tops)
        if top.heldout is not None:  # the held-out loss of the corrected model
            heldout = top.heldout
        if progress is not None:
            progress.step(f"top-label correction, penalty={top.penalty:g}")
    final = Problem(key=None, x=x_start, lam=lam, total=source.total(None), tau=tau)
    curvature = None
    if chosen_folds is not None:  # steps of one pass each, guided by the folds' curvature
        share = min(1.0, HESSIAN_PAIRS / (source.total(CV_ROWS) * source.n_classes))
        curvature = source.curvature(x_start, share)
    refresh = None if curvature is None else (lambda x: source.curvature(x, share))
    newton(source, layout, [final], settings, ridge, hessian=curvature, refresh=refresh)
    if progress is not None:
        progress.step(f"final fit, lam={lam:g}")
    if heldout is not None and hasattr(source, "heldout_rows"):  # in memory: by row
        by_row = np.full(source.data.n, np.nan)
        by_row[source.heldout_rows()] = heldout
        heldout = by_row
    else:
        heldout = None
    return SharedFit(axes, tuple(scales), int(degree), final.x, float(lam), float(tau),
                     cv_scores, cv_se, final.n_iter, final.status, heldout, top)  # fmt: skip


def _edge_matters(held: np.ndarray, w: np.ndarray, edge: int) -> bool:
    """Whether the pick ``edge`` (the last candidate of ``held``) beats its neighbour by
    enough to warn (:func:`fusion._cv.edge_matters`)."""
    mean = held @ w / w.sum()
    return edge_matters(mean, paired_se(held, w, edge), edge, edge - 1)


def _warn_edge(what: str, grid: str) -> None:
    warnings.warn(
        f"cross-validation picked {what}, the smallest value of {grid}: a smaller penalty "
        "might fit better. Pass a grid that extends further down to check.",
        UserWarning,
        stacklevel=caller_level(),
    )


def _softmax_capped(eta: np.ndarray) -> np.ndarray:
    """Row-wise softmax (in place), every logit first kept within ``COUPLED_LOGIT_RANGE`` of
    its row's largest, so no probability rounds to 0 or 1."""
    top = eta.max(axis=1, keepdims=True)
    np.maximum(eta, top - COUPLED_LOGIT_RANGE, out=eta)
    eta -= top
    np.exp(eta, out=eta)
    eta /= eta.sum(axis=1, keepdims=True)
    return eta


def _eta(Z: np.ndarray, U: np.ndarray, c, coefs, bias) -> np.ndarray:
    """``eta`` (r, C) from the scorers' log-probabilities ``Z`` and normalized values ``U``,
    both (r, M, C), and the class biases."""
    eta = np.zeros((Z.shape[0], Z.shape[2]))
    eta += bias
    for m in range(Z.shape[1]):
        eta += c[m] * Z[:, m]
        eta += evaluate(coefs[m], U[:, m].reshape(-1, 1)).reshape(eta.shape)
    return eta


def shared_proba(S: np.ndarray, scales, floors, lookups, c, coefs, bias, top=None) -> np.ndarray:
    """Class probabilities (n, C) of the class-shared model at scores ``S`` (n, M, C), with
    the top-label correction ``top`` (its ``theta``; None or empty: none)."""
    n, M, C = S.shape
    out = np.empty((n, C))
    step = max(1, BLOCK_PAIRS // C)
    for start in range(0, n, step):
        rows = slice(start, start + step)
        r = S[rows].shape[0]
        Z = np.empty((r, M, C))
        U = np.empty((r, M, C))
        for m in range(M):
            Z[:, m] = log_probabilities(S[rows, m, :], scales[m], floors[m])
            U[:, m] = lookups[m](Z[:, m].ravel()).reshape(r, C)
        out[rows] = _softmax_capped(_eta(Z, U, c, coefs, bias))
        if top is not None:
            out[rows] = reweight(out[rows], top)
    return out


def shared_proba_normalized(Z: np.ndarray, U: np.ndarray, c, coefs, bias, top=None) -> np.ndarray:
    """Class probabilities at log-probabilities ``Z`` and their normalized values ``U``."""
    P = _softmax_capped(_eta(Z, U, c, coefs, bias))
    return P if top is None else reweight(P, top)
