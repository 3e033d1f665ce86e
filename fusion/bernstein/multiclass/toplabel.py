"""The top-label correction of the class-shared multi-class model: a class-shared reweighting
of the fused class distribution, chosen by cross-validation.

Model
-----
With ``p_ik`` the class-shared model's probability of class ``k`` for row ``i``
(:mod:`fusion.bernstein.multiclass.multinomial`), the corrected distribution is

.. math:: P_{ik} = \\frac{R(p_{ik})}{\\sum_j R(p_{ij})}, \\qquad R(p) = p\\, e^{\\psi(p)},
          \\qquad \\psi(p) = \\sum_{j=1}^{K} \\theta_j\\, b_{j,K}(p),

a Bernstein polynomial of degree ``K`` (:data:`DEGREE`) with ``psi(0) = 0``: every class is
reweighted by the same function of its own fused probability, so the correction is
continuous (no top label is singled out: at a tie the tied classes are treated alike) and
its parameters do not grow with ``C``. On a row with a confident top class and a tail of
small ones it is the top-versus-all correction of Le Coz et al. (2024) and Gupta & Ramdas
(2022): the top class's log-odds move by ``psi(p_top)`` and the other classes share the
rest in proportion; below ``p = 1/2`` it also lifts or lowers a moderately confident top
against the classes of small probability (the under-confidence of fused networks there).
``theta = 0`` is no correction, today's model, and the penalty ``(tau / 2) sum_j
(theta_j - theta_{j-1})^2`` (``tau = inf``: none) is chosen by cross-validation
(:func:`choose`), no correction among the candidates.

Guarantees
----------
Constraints linear in ``theta`` (:func:`constraints`; :data:`DELTA`, :data:`SLOPE`) make the
map ``eta -> P`` from the fused logits *competitive*: ``P_k`` never falls when ``eta_k``
rises or another ``eta_j`` falls. As the class-shared model's ``eta_k`` is non-decreasing in
every network's score for class ``k`` and its ``eta_j`` non-increasing in it, each class's
probability stays non-decreasing in every network's score for that class. The order of the
classes in a row is kept (``R`` is increasing), so the top label and the accuracy do not
change; rows sum to one, and no probability is 0 or 1 (``R > 0``; the logits are capped as
the model's). With ``D(p) = 1 + p psi'(p)`` (the elasticity of ``R``) and ``A = [0, 1/2]``,
``B = [1/2, 1]`` (at most one class of a row lies in ``B``), the constraints are

* ``|D - 1| <= DELTA`` on ``A``; on ``B``, ``D <= 1 + DELTA`` and ``p (1 - p) psi'(p) >=
  -SLOPE`` (the log-odds of a confident top class may shrink, by at most ``SLOPE`` per unit
  of log-odds);
* ``max psi - min_A psi <= log((1 - DELTA) / (2 DELTA))`` and ``max_A psi - min_A psi <=
  log((1 - DELTA) / (DELTA / 2 + SLOPE))``;
* ``psi(p) >= max_A psi + log(2 DELTA (1 - p) / (1 - SLOPE - DELTA))`` on ``B``.

The derivative of ``log P_k`` in ``eta_k`` is ``sum_{j != k} R(p_j) [D_k (1 - p_k) + p_k
D_j] / Z``, non-negative when ``SLOPE + DELTA <= 1`` in each of the cases (both classes in
``A``; one in ``B``). That in ``eta_i`` (``i != k``) is ``p_i (E - R'(p_i) / Z)`` up to a
positive factor, with ``E = sum_j p_j e^{psi(p_j)} (D_j - D_k) / Z``; bounding ``E`` by the
mass outside ``{i, k}`` and the ranges of ``D`` and ``psi`` case by case (``i``, ``k`` in
``A``, the top class elsewhere; ``k`` the top class; ``i`` the top class) gives exactly the
three range conditions above (``tests/bernstein/test_toplabel.py`` checks the signs on
random and adversarial rows). Each is imposed on the Bernstein coefficients of ``psi``,
``p psi'``, ``p (1 - p) psi'`` over :data:`PIECES` sub-intervals of each half (a polynomial
lies between its smallest and largest Bernstein coefficients on an interval), which is
sufficient; the solution is then checked against them exactly and, where the solver left a
rounding error, scaled toward ``theta = 0`` (strictly inside) until it holds.

Measured (benchmarks/bench_networks.py, the CIFAR networks): see benchmarks/RESULTS.md.

Fit
---
Weighted multinomial log-likelihood of the labels under ``P``, on the held-out fused
probabilities of the model's own cross-validation (every row's ``p`` from the fit of the
folds that did not see it: no extra fits, and not the in-sample probabilities, which are
overconfident), plus the penalty. It is convex in ``theta`` (the logits ``log p + psi(p)``
are linear in it), solved by Newton steps whose QPs (OSQP) carry the constraints. A row's
classes of fused probability below :data:`KEEP` enter to first order in ``psi`` (their
``psi`` is below ``K max|theta| KEEP``); the label's class always enters exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from scipy.special import comb

from ..._cv import paired_se
from ..._multiclass import COUPLED_LOGIT_RANGE
from ..._solver import SolverError, solve_small_qp
from ..basis import bernstein_basis

__all__ = [
    "DEGREE",
    "DELTA",
    "SLOPE",
    "PIECES",
    "KEEP",
    "constraints",
    "satisfies",
    "psi",
    "reweight",
    "Sample",
    "sample_rows",
    "fit",
    "TopLabelFit",
    "choose",
]

#: Degree ``K`` of ``psi``.
DEGREE = 6
#: Bound on ``|D - 1|`` below ``p = 1/2`` (and on ``D - 1`` above). The proof needs
#: ``DELTA < 1/3`` and ``DELTA / 2 + SLOPE < 1 - DELTA``; the range bounds shrink as either
#: grows. 0.25 / 0.25 against 0.15 / 0.3, 0.2 / 0.2, 0.25 / 0.15 and 0.2 / 0.4 on the CIFAR
#: networks (benchmarks/bench_toplabel_bounds.py, 15 splits): mean log-loss 0.7536 against
#: 0.7535-0.7549, mean top-label ECE 0.0196 against 0.0195-0.0208.
DELTA = 0.25
#: Bound on the shrinking of a confident top class's log-odds, per unit of log-odds.
SLOPE = 0.25
#: Sub-intervals of each half of ``[0, 1]`` on which the constraints hold coefficient-wise.
PIECES = 4
#: Classes of held-out probability below this enter the fit to first order in ``psi``.
KEEP = 1e-3
#: Held-out losses within this share of the lowest tie (:func:`choose`).
TIE = 1e-5
#: The QP's bounds are tightened by this share, so that the solver's tolerance stays inside
#: the proven ones (:func:`satisfies` checks the proven ones exactly).
MARGIN = 1e-2

_NEWTON_TOL = 1e-10
_MAX_NEWTON = 100
_ARMIJO = 1e-4
_MAX_HALVINGS = 40


def _bern(p: np.ndarray, K: int) -> np.ndarray:
    return np.asarray(bernstein_basis(np.asarray(p, dtype=float), K))


@lru_cache(maxsize=8)
def _sub_interval(K: int, a: float, b: float) -> np.ndarray:
    """``(K + 1, K + 1)``: the Bernstein coefficients of ``psi`` on ``[a, b]`` (a polynomial
    in ``q in [0, 1]``, ``p = a + (b - a) q``) from its coefficients on ``[0, 1]``: exact
    for polynomials of degree ``K`` (interpolation at ``K + 1`` points)."""
    q = 0.5 - 0.5 * np.cos(np.pi * (np.arange(K + 1) + 0.5) / (K + 1))
    return np.linalg.solve(_bern(q, K), _bern(a + (b - a) * q, K))


@lru_cache(maxsize=16)
def _times(power: tuple[float, ...], K: int) -> np.ndarray:
    """The Bernstein coefficients (degree ``K + d``) of ``c(q) f(q)`` from those of ``f``
    (degree ``K``), for the polynomial ``c(q) = sum_i power[i] q^i`` of degree ``d``."""
    d = len(power) - 1
    q = 0.5 - 0.5 * np.cos(np.pi * (np.arange(K + d + 1) + 0.5) / (K + d + 1))
    c = np.polynomial.polynomial.polyval(q, power)
    return np.linalg.solve(_bern(q, K + d), c[:, None] * _bern(q, K))


def _derivative(K: int) -> np.ndarray:
    """``(K, K + 1)``: coefficients of ``f'`` (degree ``K - 1``) from those of ``f``."""
    out = np.zeros((K, K + 1))
    out[np.arange(K), np.arange(K)] = -K
    out[np.arange(K), np.arange(1, K + 1)] = K
    return out


@lru_cache(maxsize=8)
def _blocks(K: int, pieces: int) -> tuple:
    """For every sub-interval ``[a, b]``: its half (``"A"`` or ``"B"``), ``a``, and the maps
    from ``theta`` (with ``theta_0 = 0``, length ``K``) to the coefficients of ``psi``, of
    ``p psi'(p)`` and of ``p (1 - p) psi'(p)`` there."""
    lift = np.zeros((K + 1, K))
    lift[1:] = np.eye(K)
    out = []
    for half, lo in (("A", 0.0), ("B", 0.5)):
        for a in lo + 0.5 * np.arange(pieces) / pieces:
            b = a + 0.5 / pieces
            value = _sub_interval(K, float(a), float(b)) @ lift
            slope = _derivative(K) @ value  # d psi / d q, with d/dp = d/dq / (b - a)
            h = b - a
            elastic = _times((a / h, 1.0), K - 1) @ slope  # p psi'(p)
            odds = _times((a * (1 - a) / h, 1 - 2 * a, -h), K - 1) @ slope  # p (1 - p) psi'
            out.append((half, float(a), value, elastic, odds))
    return tuple(out)


@lru_cache(maxsize=8)
def constraints(K: int = DEGREE, margin: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, lower, upper)``: ``lower <= A x <= upper`` on ``x = (theta_1, ..., theta_K, m,
    M)``, with ``m``, ``M`` the smallest and largest value of ``psi`` on ``[0, 1/2]`` (bounds
    of its coefficients there). The bounds are those of the module docstring, tightened by
    ``margin`` (a share)."""
    keep = 1.0 - margin
    delta, slope = DELTA * keep, SLOPE * keep
    V1 = np.log((1 - DELTA) / (2 * DELTA)) * keep
    V2 = np.log((1 - DELTA) / (DELTA / 2 + SLOPE)) * keep
    n = K + 2
    low_m = np.zeros(n)
    low_m[K] = 1.0
    top_m = np.zeros(n)
    top_m[K + 1] = 1.0
    rows, lower, upper = [], [], []

    def add(R, lo, hi):
        R = np.atleast_2d(R)
        rows.append(R)
        lower.append(np.full(R.shape[0], lo))
        upper.append(np.full(R.shape[0], hi))

    for half, a, value, elastic, odds in _blocks(K, PIECES):
        V = np.hstack([value, np.zeros((value.shape[0], 2))])
        E = np.hstack([elastic, np.zeros((elastic.shape[0], 2))])
        if half == "A":
            add(E, -delta, delta)
            add(V - low_m, 0.0, np.inf)
            add(top_m - V, 0.0, np.inf)
        else:
            add(E, -np.inf, delta)
            add(np.hstack([odds, np.zeros((odds.shape[0], 2))]), -slope, np.inf)
            floor = np.log(2 * DELTA * (1 - a) / (1 - SLOPE - DELTA)) * keep
            add(V - top_m, floor, np.inf)
        add(V - low_m, -np.inf, V1)
    add(top_m - low_m, -np.inf, V2)
    return np.vstack(rows), np.concatenate(lower), np.concatenate(upper)


def _range_vars(theta: np.ndarray) -> np.ndarray:
    """``(theta, m, M)`` with ``m``, ``M`` the exact bounds of ``psi``'s coefficients on the
    sub-intervals of ``[0, 1/2]``."""
    K = theta.shape[0]
    values = np.concatenate([v @ theta for h, _, v, _, _ in _blocks(K, PIECES) if h == "A"])
    return np.r_[theta, values.min(), values.max()]


def satisfies(theta: np.ndarray) -> bool:
    """Whether ``theta`` meets the proven constraints (the module docstring's, without the
    margin), evaluated on the coefficients directly."""
    K = theta.shape[0]
    V1 = np.log((1 - DELTA) / (2 * DELTA))
    V2 = np.log((1 - DELTA) / (DELTA / 2 + SLOPE))
    ok = True
    values = {"A": [], "B": []}
    for half, a, value, elastic, odds in _blocks(K, PIECES):
        v, e = value @ theta, elastic @ theta
        values[half].append((a, v))
        ok &= bool(np.all(e <= DELTA))
        if half == "A":
            ok &= bool(np.all(e >= -DELTA))
        else:
            ok &= bool(np.all(odds @ theta >= -SLOPE))
    low = min(v.min() for _, v in values["A"])
    high = max(v.max() for _, v in values["A"])
    top = max(v.max() for _, v in values["A"] + values["B"])
    ok &= top - low <= V1 and high - low <= V2
    for a, v in values["B"]:
        ok &= bool(np.all(v - high >= np.log(2 * DELTA * (1 - a) / (1 - SLOPE - DELTA))))
    return ok


def _feasible(theta: np.ndarray) -> np.ndarray:
    """``theta``, or where a rounding error of the solver breaks a proven constraint,
    ``t theta`` for the largest ``t`` found in ``[0, 1]`` that meets them (``theta = 0`` does,
    strictly)."""
    if satisfies(theta):
        return theta
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if satisfies(mid * theta) else (lo, mid)
    return lo * theta


def psi(p: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``psi(p)`` for ``theta = (theta_1, ..., theta_K)`` (``theta_0 = 0``), any shape."""
    p = np.asarray(p, dtype=float)
    K = theta.shape[0]
    return (_bern(p.reshape(-1), K)[:, 1:] @ theta).reshape(p.shape)


def reweight(P: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The corrected distribution (n, C) of a fused distribution ``P`` (n, C); ``theta``
    empty or all 0: ``P`` itself. Logits are kept within ``COUPLED_LOGIT_RANGE`` of the row's
    largest, as the model's, so no probability rounds to 0 or 1."""
    if theta.size == 0 or not np.any(theta):
        return P
    out = np.empty_like(P)
    step = max(1, (1 << 15) // max(1, P.shape[1]))
    K = theta.shape[0]
    binom = comb(K, np.arange(K + 1))
    for start in range(0, P.shape[0], step):
        p = P[start : start + step]
        with np.errstate(divide="ignore"):
            eta = np.log(p)
        q = 1.0 - p
        for j in range(1, K + 1):
            eta += theta[j - 1] * binom[j] * p**j * q ** (K - j)
        top = eta.max(axis=1, keepdims=True)
        np.maximum(eta, top - COUPLED_LOGIT_RANGE, out=eta)
        eta -= top
        np.exp(eta, out=eta)
        eta /= eta.sum(axis=1, keepdims=True)
        out[start : start + step] = eta
    return out


@dataclass
class Sample:
    """Held-out fused probabilities of ``n`` rows, sparse: every row's classes of
    probability at least :data:`KEEP` and its label's class (``indptr``, ``p``, their
    basis ``B`` (nnz, K) without ``b_0``, the label's entry ``label``), the rest as its mass
    ``tail`` and ``tail_B`` (n, K), the sum of ``p b_k(p)`` over it; the rows' weights and
    test folds."""

    indptr: np.ndarray
    p: np.ndarray
    B: np.ndarray
    label: np.ndarray
    tail: np.ndarray
    tail_B: np.ndarray
    w: np.ndarray
    fold: np.ndarray

    def __post_init__(self):
        self.logp = np.log(np.maximum(self.p, 1e-300))
        self.length = np.diff(self.indptr)
        self.starts = self.indptr[:-1]

    @property
    def n(self) -> int:
        return self.w.shape[0]

    @classmethod
    def concatenate(cls, parts: list[Sample]) -> Sample:
        parts = [s for s in parts if s.n]
        if not parts:
            raise ValueError("the top-label correction needs held-out rows; none were given.")
        offsets = np.cumsum([0] + [s.p.shape[0] for s in parts])
        indptr = np.concatenate(
            [parts[0].indptr[:1]] + [s.indptr[1:] + o for s, o in zip(parts, offsets, strict=False)]
        )
        return cls(
            indptr,
            np.concatenate([s.p for s in parts]),
            np.vstack([s.B for s in parts]),
            np.concatenate([s.label + o for s, o in zip(parts, offsets, strict=False)]),
            np.concatenate([s.tail for s in parts]),
            np.vstack([s.tail_B for s in parts]),
            np.concatenate([s.w for s in parts]),
            np.concatenate([s.fold for s in parts]),
        )

    def rows(self, mask: np.ndarray) -> Sample:
        """The sample of the rows where ``mask`` holds."""
        idx = np.flatnonzero(mask)
        starts, stops = self.indptr[idx], self.indptr[idx + 1]
        counts = stops - starts
        take = np.repeat(starts - np.r_[0, np.cumsum(counts)[:-1]], counts) + np.arange(
            counts.sum()
        )
        indptr = np.r_[0, np.cumsum(counts)]
        label = indptr[:-1] + (self.label[idx] - starts)
        return Sample(indptr, self.p[take], self.B[take], label, self.tail[idx],
                      self.tail_B[idx], self.w[idx], self.fold[idx])  # fmt: skip


def sample_rows(P: np.ndarray, index: np.ndarray, w: np.ndarray, fold: np.ndarray,
                K: int = DEGREE) -> Sample:  # fmt: skip
    """The :class:`Sample` of held-out fused probabilities ``P`` (r, C) of rows with class
    indices ``index``, weights ``w`` and test folds ``fold``."""
    P = np.asarray(P, dtype=float)
    r = P.shape[0]
    kept = P >= KEEP
    kept[np.arange(r), index] = True
    rows, cols = np.nonzero(kept)
    p = P[rows, cols]
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=r))]
    label = indptr[:-1] + np.cumsum(kept, axis=1)[np.arange(r), index] - 1
    tail_p = np.where(kept, 0.0, P)
    tail = tail_p.sum(axis=1)
    tail_B = np.zeros((r, K))
    if np.any(tail > 0):
        for chunk in range(0, r, max(1, (1 << 16) // max(1, P.shape[1]))):
            sl = slice(chunk, chunk + max(1, (1 << 16) // max(1, P.shape[1])))
            T = tail_p[sl]
            tail_B[sl] = np.einsum("rc,rck->rk", T, _bern(T.ravel(), K)[:, 1:].reshape(*T.shape, K))
    B = _bern(p, K)[:, 1:]
    return Sample(indptr, p, np.ascontiguousarray(B), label, tail, tail_B,
                  np.asarray(w, dtype=float), np.asarray(fold))  # fmt: skip


def _penalty(K: int) -> np.ndarray:
    D = np.eye(K) - np.eye(K, k=-1)  # theta_j - theta_{j-1}, theta_0 = 0
    return D.T @ D


def _terms(s: Sample, theta: np.ndarray):
    """Every row's log-loss under ``theta``, with what the derivatives need: the kept
    entries' ``exp(E - top)``, every row's ``top`` (its largest ``E``) and normalizer ``Z``
    (relative to ``exp(top)``)."""
    E = s.B @ theta
    E += s.logp
    top = np.maximum.reduceat(E, s.starts)  # every row holds its label's entry
    e = np.exp(E - np.repeat(top, s.length))
    scale = np.exp(-top)
    Z = np.add.reduceat(e, s.starts) + (s.tail + s.tail_B @ theta) * scale
    return np.log(Z) + top - E[s.label], e, scale, Z


def _stats(s: Sample, theta: np.ndarray, hessian: bool = True):
    """Weighted loss sum, gradient and (with ``hessian``) Hessian in ``theta``."""
    loss, e, scale, Z = _terms(s, theta)
    rows = sp.csr_matrix((e, np.arange(e.shape[0]), s.indptr), shape=(s.n, e.shape[0]))
    G = rows @ s.B
    G += s.tail_B * scale[:, None]
    G /= Z[:, None]
    value = float(s.w @ loss)
    grad = s.w @ (G - s.B[s.label])
    if not hessian:
        return value, grad, None
    q = np.repeat(s.w / Z, s.length) * e
    H = (s.B.T * q) @ s.B - (G.T * s.w) @ G
    return value, grad, H


def fit(s: Sample, tau: float, start: np.ndarray | None = None, K: int = DEGREE) -> np.ndarray:
    """``theta`` minimizing the weighted mean held-out log-loss of ``s`` plus ``(tau / 2)
    sum_j (theta_j - theta_{j-1})^2`` under the constraints (Newton steps, each a QP)."""
    if not np.isfinite(tau):
        return np.zeros(K)
    W = float(s.w.sum())
    R = tau * _penalty(K)
    A, lower, upper = constraints(K, MARGIN)
    theta = np.zeros(K) if start is None else _feasible(np.asarray(start, dtype=float))

    def objective(t, hessian=True):
        value, g, H = _stats(s, t, hessian)
        value = value / W + 0.5 * float(t @ R @ t)
        g = g / W + R @ t
        return value, g, None if H is None else H / W + R

    f, g, H = objective(theta)
    for _ in range(_MAX_NEWTON):
        H = 0.5 * (H + H.T)
        H[np.arange(K), np.arange(K)] += 1e-10 * (1.0 + np.trace(H) / K)
        d = -np.linalg.solve(H, g)
        x = _range_vars(theta + d)
        if not (np.all(A @ x >= lower) and np.all(A @ x <= upper)):  # a constraint binds
            x = _range_vars(theta)
            n = x.shape[0]
            Hx = np.zeros((n, n))
            Hx[:K, :K] = H
            Hx[np.arange(n), np.arange(n)] += 1e-9 * (1.0 + np.trace(H) / K)
            Ax = A @ x
            d = solve_small_qp(Hx, np.r_[g, 0.0, 0.0], A, lower - Ax, upper - Ax,
                               problem="top-label correction's Newton step")[:K]  # fmt: skip
        decrease = -(float(g @ d) + 0.5 * float(d @ H @ d))
        if decrease <= _NEWTON_TOL:
            break
        t = 1.0
        for _ in range(_MAX_HALVINGS):
            trial = theta + t * d
            ft, _, _ = objective(trial, hessian=False)
            if ft <= f + _ARMIJO * t * float(g @ d):
                break
            t *= 0.5
        else:
            if decrease <= 1e-7:
                break
            raise SolverError(
                "Newton's line search found no decrease for the top-label correction "
                f"(tau={tau:g}, predicted decrease {decrease:.2e}).",
                status="newton: line search failed",
                solver="newton-osqp",
            )
        theta = trial
        f, g, H = objective(theta)
    return _feasible(theta)


@dataclass(frozen=True)
class TopLabelFit:
    """The chosen correction: ``theta`` (``theta_1 .. theta_K``; zeros: none), its penalty
    (``inf``: none) and the cross-validation's mean held-out log-loss and standard error
    for every penalty tried (None without a search)."""

    theta: np.ndarray
    penalty: float
    cv_scores: dict | None
    cv_se: dict | None
    heldout: np.ndarray | None = None  # every row's held-out log-loss at the penalty


def choose(s: Sample, penalties) -> TopLabelFit:
    """The penalty from ``penalties`` (largest first; ``inf``: no correction) of the lowest
    held-out log-loss of the corrected held-out probabilities (the largest of those within
    :data:`TIE` of it), each fold's correction
    fitted on the other folds' rows (warm started down the grid); then the correction of
    every row at that penalty."""
    penalties = [float(t) for t in penalties]
    if len(penalties) == 1:
        return TopLabelFit(fit(s, penalties[0]), penalties[0], None, None)
    folds = np.unique(s.fold[s.fold >= 0])
    held = np.zeros((len(penalties), s.n))
    for f in folds:
        test = s.fold == f
        train, check = s.rows(~test), s.rows(test)
        theta = None
        for k, tau in enumerate(penalties):
            theta = fit(train, tau, theta)
            held[k, test] = _terms(check, theta)[0]
    mean = held @ s.w / s.w.sum()
    # the lowest held-out loss, not the one-standard-error rule: the correction has K
    # bounded parameters, and the rule kept none where it lowered the test log-loss and
    # top-label ECE (two of eleven CIFAR splits; none where it raised them). Losses within
    # TIE of the lowest are ties, won by the largest penalty: otherwise the rounding of the
    # inputs decides (a network's float32 logits and probabilities picked 1e-5 and 0, whose
    # held-out losses differed by 2e-6, and predictions differed by 5e-5)
    pick = int(np.flatnonzero(mean <= mean.min() * (1.0 + TIE))[0])
    se = paired_se(held, s.w, int(np.argmin(mean)))
    scores = {t: float(v) for t, v in zip(penalties, mean, strict=True)}
    ses = {t: float(v) for t, v in zip(penalties, se, strict=True)}
    return TopLabelFit(fit(s, penalties[pick]), penalties[pick], scores, ses, held[pick])
