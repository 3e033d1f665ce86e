"""The class-shared multi-class model: one monotone fusion for every class, by multinomial
likelihood.

Model
-----
For row ``i`` and class ``k`` with the scorers' log-probabilities ``z_imk`` and their
normalized values ``u_imk`` (:mod:`fusion.bernstein.multiclass.pairs`),

.. math:: \\eta_{ik} = \\sum_m c_m z_{imk} + \\sum_m g_m(u_{imk}), \\qquad
          P(Y = k \\mid s_i) = \\frac{e^{\\eta_{ik}}}{\\sum_j e^{\\eta_{ij}}},

with ``c_m >= 0`` and every ``g_m`` a Bernstein polynomial of degree ``K`` with
non-decreasing coefficients and ``g_m(0) = 0`` (a constant shared by all classes cancels in
the softmax). The same parameters serve every class, so their number, ``M (K + 2)``, does
not grow with ``C``; ``g = 0`` and one scorer is temperature scaling, ``g = 0`` with equal
``c_m`` temperature scaling of the scorers' averaged log-probabilities. Each class's
probability is non-decreasing in every scorer's score for that class: raising ``z_imk``
raises ``eta_ik`` alone.

Fit
---
Weighted mean multinomial log-loss plus ``(lam / 2)`` times the squared first differences
of the coefficients of every ``g_m`` (the penalty of the binary default,
:func:`fusion.bernstein.newton.penalty_matrix`) and a weak ridge on ``c``; ``lam = inf``
keeps ``g = 0``. The binary default's Newton solver with the monotone constraints
(:func:`fusion.bernstein.newton.solve`), this model's source of statistics as its loss
object. The gradient is exact; the Hessian is that of the pairs' features on their bins (a
bin's mean ``z`` and ``u``, :mod:`.pairs`), which costs a few histograms per block of pairs
instead of a ``P x P`` product per pair and only changes the path to the optimum, not the
optimum. Pairs of negligible probability (below :data:`HESSIAN_TINY`) are left out of the
Hessian for the same reason.

Every fold of the cross-validation and the final fit are *problems* over sets of rows; a
*source* (:class:`.source.MemorySource` in memory, the dask source on a cluster)
evaluates the loss, gradient and Hessian of several problems in one pass over its rows, so
that the folds advance together (:func:`fusion.bernstein.newton.solve`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..._cv import path_settled
from ..._solver import SolverError, SolverWarning
from ..._warn import caller_level
from ..newton import BiasDiagonal, Curvature, Problem, solve
from ..structure import Layout

__all__ = [
    "HESSIAN_TINY",
    "Tables",
    "Curvature",
    "BiasDiagonal",
    "DENSE_BIASES",
    "block_stats",
    "block_losses",
    "Problem",
    "cv_path",
    "CV_ROWS",
    "HESSIAN_PAIRS",
    "HESSIAN_ROWS",
    "hessian_share",
]

#: Pairs whose weighted probability is below this are left out of the Hessian.
HESSIAN_TINY = 1e-12
#: Up to this many classes the biases' Hessian is dense (see :class:`Curvature`).
DENSE_BIASES = 64
#: Pairs per run of rows of the compiled passes (a cache-sized buffer of exponentials).
CHUNK_PAIRS = 1 << 15


@dataclass
class Tables:
    """A parameter vector as the per-bin tables a pass over the pairs needs: the weights
    ``c``, every scorer's ``g_m`` on its bins (``G[m][b] = g_m(ubar_b)``) and the classes'
    biases ``b`` (None: the model has none)."""

    c: np.ndarray
    G: list[np.ndarray]
    b: np.ndarray | None = None

    def __post_init__(self):
        # the compiled passes' form: the tables end to end, where each starts, the biases
        # (empty without)
        self.flat = np.concatenate(self.G).astype(np.float64, copy=False)
        self.offsets = np.cumsum([0] + [g.shape[0] for g in self.G[:-1]]).astype(np.intp)
        self.bias = np.zeros(0) if self.b is None else self.b

    @classmethod
    def of(cls, x: np.ndarray, layout: Layout, Phi: Sequence[np.ndarray]) -> Tables:
        """``x = (c, theta)``, or ``(c, theta, b)`` for a model with class biases."""
        P = layout.n_coef
        c, parts = layout.split(x[:P])
        tables = [basis @ t.reshape(-1) for basis, t in zip(Phi, parts, strict=True)]
        b = np.array(x[P:], dtype=float) if x.shape[0] > P else None
        return cls(np.array(c, dtype=float), tables, b)


def block_arrays(Z: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A block's ``z`` as float64 and bins as intp, for the NumPy sums of the Hessian (float32
    scores are stored as float32, bins as int16)."""
    return Z.astype(np.float64, copy=False), B.astype(np.intp, copy=False)


def _kernels():
    # numba's import costs about a second: paid by the first class-shared fit, not by
    # ``import fusion``
    from . import kernels

    return kernels


def _chunks(a: int, b: int, C: int):
    """``(start, stop)`` of runs of rows ``a:b`` holding about :data:`CHUNK_PAIRS` pairs."""
    step = max(1, CHUNK_PAIRS // C)
    return [(s, min(b, s + step)) for s in range(a, b, step)]


def block_losses(Z, B, index, t: Tables, rows: tuple[int, int] | None = None) -> np.ndarray:
    """Every row's log-loss under ``t`` (a block of rows: ``Z``, ``B`` of shape (M, r, C);
    ``rows``: only rows ``a:b`` of it)."""
    k = _kernels()
    a, b = (0, Z.shape[1]) if rows is None else rows
    C = Z.shape[2]
    out = np.empty(b - a)
    buffer, picked = np.empty((min(b - a, max(1, CHUNK_PAIRS // C)), C)), np.empty(b - a)
    for s, e in _chunks(a, b, C):
        E, pk = buffer[: e - s], picked[s - a : e - a]
        k.shifted_logits(Z, B, s, e, index, t.c, t.flat, t.offsets, t.bias, E, pk)
        np.exp(E, out=E)
        out[s - a : e - a] = np.log(E.sum(axis=1)) - pk
    return out


def block_stats(Z, B, index, w, t: Tables, feats, hessian: bool, gradient: bool = True, rows=None):
    """Weighted loss sum, gradient (in ``x``; None without ``gradient``) and, with
    ``hessian``, the :class:`Curvature` of a block of rows (``Z``, ``B`` of shape (M, r, C);
    ``rows``: only rows ``a:b`` of it).

    ``feats[m] = (cols, F)``: the columns of ``x`` that scorer ``m``'s features occupy
    (``c_m``, then ``g_m``'s coefficients) and its bins' feature rows ``F`` (nb_m, K + 2):
    the bin's mean ``z``, then the Bernstein basis at its mean ``u``. With class biases
    (``t.b``) the gradient continues with theirs. Rows of zero weight contribute nothing.
    """
    a, b = (0, Z.shape[1]) if rows is None else rows
    if not (gradient or hessian):
        return float(w[a:b] @ block_losses(Z, B, index, t, (a, b))), None, None
    k = _kernels()
    M, C = Z.shape[0], Z.shape[2]
    zsum, nbin = np.zeros(M), np.zeros(t.flat.shape[0])
    classes, diag = (np.zeros(C), np.zeros(C)) if t.b is not None else (np.zeros(0), np.zeros(0))
    # with the Hessian every row's weighted probabilities are kept, else a chunk's
    p = np.empty((b - a if hessian else min(b - a, max(1, CHUNK_PAIRS // C)), C))
    picked = np.empty(b - a)
    loss = 0.0
    for s, e in _chunks(a, b, C):
        E, pk = (p[s - a : e - a] if hessian else p[: e - s]), picked[s - a : e - a]
        k.shifted_logits(Z, B, s, e, index, t.c, t.flat, t.offsets, t.bias, E, pk)
        np.exp(E, out=E)
        logsum = k.gradient_sums(Z, B, s, e, index, w, t.offsets, E, zsum, nbin, classes, diag)
        loss += float(w[s:e] @ (logsum - pk))
    P = t.c.shape[0] + sum(F.shape[1] - 1 for _, F in feats)
    biased = t.b is not None
    grad = np.zeros(P + (C if biased else 0))
    for m, (cols, F) in enumerate(feats):
        grad[cols[0]] = zsum[m]
        start = t.offsets[m]
        grad[cols[1:]] = F[:, 1:].T @ nbin[start : start + F.shape[0]]
    if biased:
        grad[P:] = classes
    if not hessian:
        if biased and C > DENSE_BIASES:  # the biases' exact curvature costs one reduction
            return loss, grad, BiasDiagonal(diag)
        return loss, grad, None
    Z, B = block_arrays(Z[:, a:b], B[:, a:b])
    index, w = index[a:b], w[a:b]
    r = b - a
    flat = p.ravel()
    # pairs of negligible probability change the Hessian by less than HESSIAN_TINY each
    keep = flat > HESSIAN_TINY
    if np.count_nonzero(keep) < 0.5 * flat.shape[0]:
        sel = np.flatnonzero(keep)
        pw = flat[sel]
        row_ptr = np.searchsorted(sel // C, np.arange(r + 1))
        bins = [B[m].ravel()[sel] for m in range(M)]
        cls = sel % C
    else:
        sel, pw, row_ptr = None, flat, np.arange(0, r * C + 1, C)
        bins = [B[m].ravel() for m in range(M)]
        cls = None
    H = np.zeros((P, P))
    mrow = np.zeros((r, P))
    Hab = np.zeros((P, C)) if biased else None
    if biased:  # the pairs grouped by class, for the per-class sums
        by_class = np.argsort(cls, kind="stable") if sel is not None else None
        class_ptr = (
            np.arange(0, r * C + 1, r)
            if sel is None
            else np.searchsorted(cls[by_class], np.arange(C + 1))
        )
        pw_class = pw.reshape(r, C).T.ravel() if sel is None else pw[by_class]
    for m, (cols, F) in enumerate(feats):
        nb = F.shape[0]
        n_m = np.bincount(bins[m], weights=pw, minlength=nb)
        H[np.ix_(cols, cols)] += F.T @ (n_m[:, None] * F)
        # every row's sum of its pairs' features, as a sparse (row, bin) matrix times F
        mrow[:, cols] += _sparse(pw, bins[m], row_ptr, nb) @ F
        if biased:  # every class's sum of its pairs' features
            b_class = bins[m].reshape(r, C).T.ravel() if sel is None else bins[m][by_class]
            Hab[cols] += (_sparse(pw_class, b_class, class_ptr, nb) @ F).T
        for mm in range(m + 1, M):
            cols2, F2 = feats[mm]
            nb2 = F2.shape[0]
            N = np.bincount(bins[m] * nb2 + bins[mm], weights=pw, minlength=nb * nb2)
            X = F.T @ (N.reshape(nb, nb2) @ F2)
            H[np.ix_(cols, cols2)] += X
            H[np.ix_(cols2, cols)] += X.T
    live = w > 0
    scaled = mrow[live] / w[live, None]
    H -= scaled.T @ mrow[live]
    if not biased:
        return loss, grad, Curvature(H)
    pl = p[live]
    Hab -= scaled.T @ pl
    total = p.sum(axis=0)
    if C <= DENSE_BIASES:
        Hbb = np.diag(total) - (pl / w[live, None]).T @ pl
    else:
        Hbb = total - np.einsum("ij,ij->j", pl, pl / w[live, None])
    return loss, grad, Curvature(H, Hab, Hbb)


def _sparse(values: np.ndarray, columns: np.ndarray, ptr: np.ndarray, width: int):
    """The CSR matrix whose row ``i`` holds ``values[ptr[i]:ptr[i + 1]]`` in ``columns``
    (repeated columns add up when it multiplies)."""
    return sp.csr_matrix((values, columns, ptr), shape=(ptr.shape[0] - 1, width))


#: The key of a problem over every row of the cross-validation (all folds' rows).
CV_ROWS = "cv"
#: The shared Hessian of a cross-validation path and of the final fit is evaluated on a
#: sample of at least this many pairs and at least :data:`HESSIAN_ROWS` rows (all of them
#: where there are fewer; see :func:`hessian_share`).
HESSIAN_PAIRS = 1 << 16
#: A Hessian of too few rows guides the steps of ``(c, theta)`` badly, and they converge
#: linearly: with 2^16 pairs alone (65 rows at C = 1,000) an ImageNet-scale fit (n = 50,000,
#: M = 5) took 13 steps of its final fit and 33 s for the biases' ridge 1e-4; with 500 or
#: 1,000 rows 5 steps and 9 s (the whole fit 117 s -> 74 s). 500 rows cost the mid sizes
#: less (C = 300, n = 3,000: 5.7 s against 5.9 s with 1,000; benchmarks/RESULTS.md). Below
#: about 130 classes the 2^16 pairs are the larger sample, as before.
HESSIAN_ROWS = 500


def hessian_share(rows: float, n_classes: int) -> float:
    """The share of ``rows`` (the cross-validation's, weights of mean 1) whose pairs make the
    shared Hessian: :data:`HESSIAN_PAIRS` pairs and :data:`HESSIAN_ROWS` rows at least."""
    return min(1.0, max(HESSIAN_PAIRS / (rows * n_classes), HESSIAN_ROWS / rows))


#: Along a cross-validation path a fold stops after a full step that predicted at most this
#: decrease of its mean loss.
CV_STOP = 1e-5
#: Along a cross-validation path a fold still running after this many steps with the shared
#: curvature takes steps with its own exact one.
CV_EXACT_AFTER = 12


@dataclass
class SharedPath:
    """Held-out losses of every row along a path of penalties (``held[k, i]``: row ``i``'s
    log-loss at ``settings[k] = (lam, tau)`` under the fit of the folds that did not see
    it), and the folds' solutions."""

    settings: list[tuple[float, float]]
    held: np.ndarray
    w: np.ndarray
    solutions: list[list[np.ndarray]]

    @property
    def mean(self) -> np.ndarray:
        return self.held @ self.w / self.w.sum()


def cv_path(
    source,
    layout: Layout,
    settings: Sequence[tuple[float, float]],
    starts: Sequence[np.ndarray],
    osqp_settings: dict,
    ridge: float,
    patience: int = 2,
    progress=None,
    se_rule=None,
    optional: bool = False,
) -> SharedPath:
    """Held-out log-loss of every row along ``settings``, ``(lam, tau)`` pairs from the
    most to the least penalized, every fold warm started from its previous solution
    (``starts``: one initial ``x`` per fold) and all folds advancing together. The path
    stops early as :func:`fusion.bernstein.binary.logistic.cv_path` does (``se_rule(held, w,
    best)``: the paired standard errors of every candidate's excess over ``best``), and
    with a :class:`~fusion.SolverWarning` at a candidate whose folds the solver cannot fit
    (the candidates before it are compared; a path of no candidate raises the solver's
    error unless ``optional``, a path that may be empty)."""
    problems = [
        Problem(key=f, x=np.array(x, dtype=float), lam=np.inf, total=source.total(f))
        for f, x in zip(source.fold_keys(), starts, strict=True)
    ]
    held, sols, done = [], [], []
    w = source.heldout_weights()
    P, C = layout.n_coef, source.n_classes
    for lam, tau in settings:
        for pb in problems:
            pb.lam, pb.tau = lam, tau
            if np.isfinite(tau) and pb.x.shape[0] == P:
                pb.x, pb.grad = np.concatenate([pb.x, np.zeros(C)]), None
        centre = np.mean([pb.x for pb in problems], axis=0)
        # one Hessian of (a sample of) the cross-validation's rows serves every fold (see
        # fusion.bernstein.newton.solve); it only guides the steps, so a sample of the
        # pairs suffices
        share = hessian_share(source.total(CV_ROWS), C)
        H = source.curvature(centre, share)
        try:
            solve(source, layout, problems, osqp_settings, ridge, hessian=H, stop=CV_STOP,
                  refresh=lambda x, share=share: source.curvature(x, share),
                  exact_after=CV_EXACT_AFTER)  # fmt: skip
        except SolverError as err:
            # the penalties get smaller along the path: a fold of few rows and many absent
            # classes drove its class biases toward -inf, and Newton could not follow
            if not held and not optional:
                raise
            what = f"lam={lam:g}" + (f", bias_penalty={tau:g}" if np.isfinite(tau) else "")
            warnings.warn(
                f"cross-validation of the class-shared model stopped at {what}, which the "
                f"solver could not fit ({str(err).rstrip('.')}); the penalties before it "
                "were compared.",
                SolverWarning,
                stacklevel=caller_level(),
            )
            break
        held.append(source.heldout_losses([(pb.key, pb.x) for pb in problems]))
        sols.append([pb.x.copy() for pb in problems])
        done.append((float(lam), float(tau)))
        if progress is not None:
            progress.step(f"shared lam={lam:g}" + (f" bias={tau:g}" if np.isfinite(tau) else ""))
        if se_rule is not None and _settled(np.array(held), w, se_rule, patience):
            break
    return SharedPath(done, np.array(held).reshape(len(held), w.shape[0]), w, sols)


def _settled(losses: np.ndarray, w: np.ndarray, se_rule, patience: int) -> bool:
    """:func:`fusion._cv.path_settled` of the held-out losses ``(n_settings, n_rows)``
    so far, their standard errors from ``se_rule``."""
    mean = losses @ w / w.sum()
    return path_settled(mean, se_rule(losses, w, int(np.argmin(mean))), patience)
