"""Fitting and evaluating the class-shared multi-class model (:mod:`fusion.bernstein.multinomial`)
on scores in memory: the in-memory source of the fit, the penalty's cross-validation and
the model's probabilities."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._multiclass import COUPLED_LOGIT_RANGE
from .basis import bernstein_basis, evaluate
from .logistic import Layout, base_ridge
from .multinomial import Problem, Tables, block_arrays, block_losses, block_stats, cv_path, newton
from .pairs import BLOCK_PAIRS, MemberAxis, PairData, log_probabilities

__all__ = [
    "MemorySource",
    "SharedFit",
    "fit_shared",
    "shared_layout",
    "bin_features",
    "paired_se",
    "one_se_pick",
    "shared_proba",
    "shared_proba_normalized",
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


class MemorySource:
    """The class-shared fit's statistics over the pairs of a :class:`PairData`: a problem's
    key is the test fold whose complement it trains on (None: every row)."""

    def __init__(self, data: PairData, layout: Layout, degree: int):
        self.data = data
        self.layout = layout
        self.Phi, self.feats = bin_features(data.axes, degree)

    def fold_keys(self) -> list[int]:
        return list(range(self.data.n_folds))

    def total(self, key) -> float:
        return float(sum(self.data.w[a:b].sum() for a, b in self.data.train_slices(key)))

    def stats(self, requests, hessian: bool, gradient: bool = True):
        tables = [Tables.of(x, self.layout, self.Phi) for _, x in requests]
        sets = [self._segments(key) for key, _ in requests]
        out = [[0.0, None, None] for _ in requests]
        # blocks outside, problems inside: a block's pairs are read from the cache by all
        for seg, (rows, Z, B, idx, w) in self.data.segment_blocks():
            if not any(seg in s for s in sets):
                continue
            Z, B = block_arrays(Z, B)
            for j, t in enumerate(tables):
                if seg not in sets[j]:
                    continue
                a, g, h = block_stats(Z, B, idx, w, t, self.feats, hessian, gradient)
                acc = out[j]
                acc[0] += a
                if g is not None:
                    acc[1] = g if acc[1] is None else acc[1] + g
                if h is not None:
                    acc[2] = h if acc[2] is None else acc[2] + h
        return [tuple(a) for a in out]

    def _segments(self, key) -> set:
        """The stored segments (-1: rows never tested; f: fold f's test rows) a problem
        trains on."""
        if key is None or self.data.n_folds == 0:
            return set(range(-1, max(self.data.n_folds, 1)))
        return {-1, *(f for f in range(self.data.n_folds) if f != key)}

    def heldout_weights(self) -> np.ndarray:
        """Weights of the held-out rows, in the order of :meth:`heldout_losses`."""
        return np.concatenate(
            [self.data.w[slice(*self.data.test_slice(f))] for f in self.fold_keys()]
        )

    def heldout_losses(self, requests) -> np.ndarray:
        out = []
        for key, x in requests:
            t = Tables.of(x, self.layout, self.Phi)
            for _, Z, B, idx, _ in self.data.blocks([self.data.test_slice(key)]):
                out.append(block_losses(*block_arrays(Z, B), idx, t))
        return np.concatenate(out)


def paired_se(held: np.ndarray, w: np.ndarray, ref: int) -> np.ndarray:
    """Standard error of every candidate's mean held-out loss minus candidate ``ref``'s, from
    the rows' paired differences (weighted; ``n_eff = (sum w)^2 / sum w^2``)."""
    p = w / w.sum()
    d = held - held[ref]
    mean = d @ p
    var = np.maximum((d**2) @ p - mean**2, 0.0)
    return np.sqrt(var * float(p @ p) / max(1.0 - float(p @ p), 1e-12))


def one_se_pick(held: np.ndarray, w: np.ndarray) -> int:
    """The first (most penalized) candidate whose mean held-out loss exceeds the best one's
    by at most the paired standard error of that excess."""
    mean = held @ w / w.sum()
    best = int(np.argmin(mean))
    se = paired_se(held, w, best)
    return int(np.flatnonzero(mean - mean[best] <= se)[0])


@dataclass
class SharedFit:
    axes: list
    scales: tuple
    degree: int
    x: np.ndarray
    lam: float
    cv_scores: dict | None
    cv_se: dict | None
    n_iter: int
    status: str


def fit_shared(
    S: np.ndarray,
    index: np.ndarray,
    w: np.ndarray,
    scales: Sequence[str],
    degree: int,
    lams: Sequence[float],
    fold: np.ndarray | None,
    n_folds: int,
    osqp_settings: dict,
    n_eff: float,
    progress=None,
) -> SharedFit:
    """The class-shared model on scores ``S`` (n, M, C), class indices ``index`` and weights
    ``w`` (mean 1): ``lam`` chosen from ``lams`` (largest first) by cross-validation on the
    test folds ``fold`` with the one-standard-error rule when there are several."""
    n, M, C = S.shape
    search = len(lams) > 1
    data = PairData(S, index, w, scales, fold if search else None, n_folds if search else 0)
    layout = shared_layout(M, degree)
    source = MemorySource(data, layout, degree)
    ridge = base_ridge(n_eff)
    x0 = np.zeros(layout.n_coef)
    x0[:M] = 1.0 / M
    cv_scores = cv_se = None
    if search:
        path = cv_path(source, layout, lams, x0, osqp_settings, ridge, progress=progress,
                       se_rule=paired_se)  # fmt: skip
        pick = one_se_pick(path.held, path.w)
        mean = path.mean
        se = paired_se(path.held, path.w, int(np.argmin(mean)))
        cv_scores = {float(v): float(m) for v, m in zip(path.lams, mean, strict=True)}
        cv_se = {float(v): float(s) for v, s in zip(path.lams, se, strict=True)}
        lam = float(path.lams[pick])
        x_start = np.mean(path.solutions[pick], axis=0)
        if pick == len(lams) - 1 and len(lams) > 1:
            warnings.warn(
                f"cross-validation picked lam={lam:g}, the smallest value of lam_grid: a "
                "smaller penalty might fit better. Pass a lam_grid that extends further down "
                "to check.",
                UserWarning,
                stacklevel=5,
            )
    else:
        lam, x_start = float(lams[0]), x0
    final = Problem(key=None, x=x_start, lam=lam, total=source.total(None))
    newton(source, layout, [final], osqp_settings, ridge)
    if progress is not None:
        progress.step(f"final fit, lam={lam:g}")
    return SharedFit(data.axes, tuple(scales), int(degree), final.x, lam, cv_scores, cv_se,
                     final.n_iter, final.status)  # fmt: skip


def _softmax_capped(eta: np.ndarray) -> np.ndarray:
    """Row-wise softmax (in place), every logit first kept within ``COUPLED_LOGIT_RANGE`` of
    its row's largest, so no probability rounds to 0 or 1."""
    top = eta.max(axis=1, keepdims=True)
    np.maximum(eta, top - COUPLED_LOGIT_RANGE, out=eta)
    eta -= top
    np.exp(eta, out=eta)
    eta /= eta.sum(axis=1, keepdims=True)
    return eta


def _eta(Z: np.ndarray, U: np.ndarray, c, coefs) -> np.ndarray:
    """``eta`` (r, C) from the scorers' log-probabilities ``Z`` and normalized values ``U``,
    both (r, M, C)."""
    eta = np.zeros((Z.shape[0], Z.shape[2]))
    for m in range(Z.shape[1]):
        eta += c[m] * Z[:, m]
        eta += evaluate(coefs[m], U[:, m].reshape(-1, 1)).reshape(eta.shape)
    return eta


def shared_proba(S: np.ndarray, scales, floors, lookups, c, coefs) -> np.ndarray:
    """Class probabilities (n, C) of the class-shared model at scores ``S`` (n, M, C)."""
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
        out[rows] = _softmax_capped(_eta(Z, U, c, coefs))
    return out


def shared_proba_normalized(Z: np.ndarray, U: np.ndarray, c, coefs) -> np.ndarray:
    """Class probabilities at log-probabilities ``Z`` and their normalized values ``U``."""
    return _softmax_capped(_eta(Z, U, c, coefs))
