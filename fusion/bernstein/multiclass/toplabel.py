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

That polytope is small: on the CIFAR-100 networks the free minimizer lies far outside it
(its ``D`` falls to 0.2 or below 0 on ``[0, 1/2]``, where the polytope keeps it above 0.75).
:func:`certify` proves a much larger set, the same property without the case bounds: the
derivatives above reduce exactly to three conditions on ``psi`` alone (one of them over
pairs of probabilities), which interval bounds of ``psi`` and ``p psi'`` on :data:`CELLS`
cells of ``[0, 1]`` establish or refute. It is a proof for any number of classes, not a
check on sample rows, and it is sufficient, not necessary.

Measured (benchmarks/bench_networks.py, the CIFAR networks): see benchmarks/RESULTS.md.

Fit
---
Weighted multinomial log-likelihood of the labels under ``P``, on the held-out fused
probabilities of the model's own cross-validation (every row's ``p`` from the fit of the
folds that did not see it: no extra fits, and not the in-sample probabilities, which are
overconfident), plus the penalty. It is convex in ``theta`` (the logits ``log p + psi(p)``
are linear in it). At every penalty two corrections are candidates (:func:`choose`): the
minimizer over the polytope (Newton steps whose QPs carry the constraints), and the
*certified* one, the free minimizer where :func:`certify` proves it (then the minimizer
over every admissible correction), else the point of the segment from the polytope's
minimizer to it that :func:`certify` proves farthest along (bisection); where a certified
one is chosen, the same followed from there along the certified set's edge
(:func:`follow_edge`: the certificate's conditions sampled on a grid as smooth constraints,
the minimizer then proven) is a candidate too, which lowered the CIFAR-100 networks'
top-label ECE further (benchmarks/RESULTS.md, "Following the certified set's edge"). The
polytope's and the certified candidates both stay because neither wins everywhere: the
certified one lowered the top-label ECE of the CIFAR-100 networks well below the
polytope's, and alone it raised that of a strong CIFAR-10 network on every split, where the
polytope's is a useful restraint; so the certified one (and then its edge) is kept only
where its held-out gain exceeds a standard error (benchmarks/RESULTS.md, "A certified
top-label correction"). A row's classes of fused probability below :data:`KEEP` enter to
first order in ``psi`` (their ``psi`` is below ``K max|theta| KEEP``); the label's class
always enters exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import minimize
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
    "CELLS",
    "KINDS",
    "constraints",
    "satisfies",
    "certify",
    "admissible",
    "EDGE_GRID",
    "EDGE_MARGINS",
    "edge_conditions",
    "follow_edge",
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
#: Cells of ``[0, 1]`` on which :func:`certify` encloses ``psi`` and ``D`` (fewer cells prove
#: less: on the CIFAR-100 networks' held-out rows the segment's point fitted with 64 cells
#: was within 3e-4 in log-loss of that with 256; 128 cost 1.5 ms a proof, 256 7 ms).
CELLS = 128
#: Classes of held-out probability below this enter the fit to first order in ``psi``.
KEEP = 1e-3
#: The corrections :func:`choose` tries at every finite penalty, in this order (ties go to
#: the first): the polytope's minimizer and the certified one (benchmarks/RESULTS.md, "A
#: certified top-label correction", compares each alone and both).
KINDS = ("polytope", "certified")
#: Held-out losses within this share of the lowest tie (:func:`choose`).
TIE = 1e-5
#: The QP's bounds are tightened by this share, so that the solver's tolerance stays inside
#: the proven ones (:func:`satisfies` checks the proven ones exactly).
MARGIN = 1e-2

_NEWTON_TOL = 1e-10
_MAX_NEWTON = 100
_ARMIJO = 1e-4
_MAX_HALVINGS = 40
#: What :func:`fit` asks of :func:`certify`'s conditions (they are proven with ``1e-9``).
FIT_SLACK = 1e-6
#: Bisection steps on the segment from the polytope's minimizer to the free one (:func:`fit`).
_SEGMENT_STEPS = 10
#: Steps of the grid of ``[0, 1]`` on which :func:`edge_conditions` samples the certificate's
#: conditions (12 to 32 steps gave the same fitted objective within 4e-4 on the CIFAR-100
#: networks' held-out rows; the conditions' count grows as its cube, and with it the cost).
EDGE_GRID = 24
#: Margins asked of the sampled conditions by :func:`follow_edge`, tried in turn until
#: :func:`certify` proves the minimizer: the grid does not see between its points and the
#: proof's cell bounds are wider than the values. 0.075 was proven on every CIFAR-100 fit
#: tried; 0.05 on one of four, where it gained 4e-4 in the objective, at twice the cost.
EDGE_MARGINS = (0.075, 0.1, 0.15, 0.2)
_EDGE_TOL = 1e-12
_EDGE_ITER = 200
#: Passes over the sample allowed to one margin's run of :func:`follow_edge` (converged runs
#: took 20-50): SLSQP's line search can thrash (one fold of a 10,000-row, 100-class fit spent
#: 1,862 passes, 17 s, in 200 iterations that did not converge). A count, not a clock, so
#: the fit stays deterministic.
_EDGE_PASSES = 150


class _OverBudget(Exception):
    """A run of :func:`follow_edge` used its :data:`_EDGE_PASSES`."""


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


def _farthest(holds, a: np.ndarray, b: np.ndarray, steps: int) -> np.ndarray:
    """``a + t (b - a)`` for the largest ``t`` in ``[0, 1]`` that bisection in ``steps``
    halvings finds ``holds`` at (``holds(a)`` is taken as true)."""
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if holds(a + mid * (b - a)) else (lo, mid)
    return a + lo * (b - a)


def _feasible(theta: np.ndarray) -> np.ndarray:
    """``theta``, or where a rounding error of the solver breaks a proven constraint,
    ``t theta`` for the largest ``t`` found in ``[0, 1]`` that meets them (``theta = 0`` does,
    strictly)."""
    if satisfies(theta):
        return theta
    return _farthest(satisfies, np.zeros_like(theta), theta, 60)


def _elastic(full: np.ndarray) -> np.ndarray:
    """The Bernstein coefficients (degree ``K``) of ``p psi'(p)`` from those of ``psi``
    (``full``, with ``theta_0``): ``p b_{i,K-1}(p) = (i + 1) / K b_{i+1,K}(p)``."""
    K = full.shape[0] - 1
    return np.r_[0.0, np.arange(1, K + 1) * np.diff(full)]


@lru_cache(maxsize=4)
def _cell_maps(K: int, cells: int) -> np.ndarray:
    """``(cells, K + 1, K + 1)``: the Bernstein coefficients on every cell ``[i / cells, (i +
    1) / cells]`` from those on ``[0, 1]``."""
    return np.stack([_sub_interval(K, i / cells, (i + 1) / cells) for i in range(cells)])


def _lower_product(lo: np.ndarray, hi: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The smallest ``x y`` over ``x in [lo, hi]``, ``y in [a, b]`` with ``0 <= a <= b``."""
    return np.where(lo >= 0, lo * a, lo * b)


def certify(theta: np.ndarray, cells: int = CELLS, slack: float = 1e-9) -> bool:
    """Whether interval bounds prove the map ``eta -> P`` of ``theta`` competitive and
    order-keeping, for every number of classes.

    With ``r = e^psi`` and ``D(p) = 1 + p psi'(p)``, ``d log P_k / d eta_k = sum_{l != k}
    p_l r_l [D_k (1 - p_k) + p_k D_l] / Z`` and, for ``j != k``, ``d log P_k / d eta_j`` has
    the sign of ``sum_l p_l r_l (D_l - D_k) - r_j D_j``. Bounding the classes other than
    ``j``, ``k`` (mass ``m = 1 - p_j - p_k``, each at most ``m``) by ``m F(m)``, ``F(m) =
    max_{q <= m} r(q) (D(q) - D_k)``, it suffices that, for all ``p_j + p_k <= 1``:

    * ``D_k (1 - p_k) + p_k D(q) >= 0`` for ``q <= 1 - p_k`` (``P_k`` rises with ``eta_k``;
      at ``q = 1 - p_k`` this also keeps a class above 1/2 above the rest);
    * ``m F(m) <= r_j [D_j (1 - p_j) + p_j D_k]`` (``P_k`` falls as ``eta_j`` rises);
    * ``D > 0`` on ``[0, 1/2]`` (the order of the classes below 1/2 is kept).

    ``psi`` and ``p psi'`` are enclosed on each of ``cells`` cells by their Bernstein
    coefficients there (a polynomial lies between its smallest and largest coefficient on an
    interval), and the three conditions are checked with interval arithmetic over every
    pair of cells, each to hold by ``slack``: a proof, not a sample; it is sufficient,
    never necessary. Fits ask for :data:`FIT_SLACK`, so that a fitted correction is still
    proven where another machine rounds the coefficients differently."""
    theta = np.asarray(theta, dtype=float)
    if not np.all(np.isfinite(theta)):
        return False
    K = theta.shape[0]
    full = np.r_[0.0, theta]
    maps = _cell_maps(K, cells)
    value = maps @ full
    slope = maps @ _elastic(full)  # p psi'(p)
    if np.abs(value).max() > 100.0:  # exp(psi) beyond what a probability can carry
        return False
    r_lo, r_hi = np.exp(value.min(axis=1)), np.exp(value.max(axis=1))
    D_lo, D_hi = 1.0 + slope.min(axis=1), 1.0 + slope.max(axis=1)
    # comparisons written so that a NaN fails them
    if not np.all(D_lo[: cells // 2] > slack):
        return False
    i = np.arange(cells)
    p_lo, p_hi = i / cells, (i + 1) / cells
    row, col = i[:, None], i[None, :]
    # [k, q] (first) and [j, k] (second): D_x (1 - p_x) + p_x D_y over the cells x, y
    mixed = _lower_product(D_lo[:, None], D_hi[:, None], 1 - p_hi[:, None], 1 - p_lo[:, None])
    mixed = mixed + _lower_product(D_lo[None, :], D_hi[None, :], p_lo[:, None], p_hi[:, None])
    if not np.all(mixed[col <= cells - row] >= -slack):
        return False
    diff = D_hi[None, :] - D_lo[:, None]  # [k, q]: the largest D(q) - D_k
    F = np.maximum.accumulate(np.where(diff >= 0, r_hi * diff, r_lo * diff), axis=1)
    last = cells - row - col - 1  # [j, k]: the last cell of q <= m
    Fm = np.where(last >= 0, F[col, np.clip(last, 0, cells - 1)], 0.0)
    m_hi = np.clip(1 - (row + col) / cells, 0.0, 1.0)
    m_lo = np.clip(1 - (row + col + 2) / cells, 0.0, 1.0)
    left = np.where(Fm >= 0, m_hi * Fm, m_lo * Fm)
    right = np.where(mixed >= 0, r_lo[:, None] * mixed, r_hi[:, None] * mixed)
    return bool(np.all((left - right)[row + col <= cells] <= -slack))


def _proven(theta: np.ndarray, slack: float = 1e-9) -> bool:
    """:func:`certify` on :data:`CELLS` cells, tried first on 32 (coarser cells prove less,
    but a quarter of the cost proves most corrections well inside)."""
    return certify(theta, 32, slack) or certify(theta, CELLS, slack)


def admissible(theta: np.ndarray) -> bool:
    """Whether ``theta`` is a correction the model may carry: in the polytope of
    :func:`satisfies` or proven by :func:`certify`."""
    theta = np.asarray(theta, dtype=float)
    return bool(np.all(np.isfinite(theta))) and (satisfies(theta) or _proven(theta))


@lru_cache(maxsize=4)
def _edge_grid(K: int, steps: int) -> tuple:
    """The grid of :func:`edge_conditions`: its points ``p``, the maps from ``theta`` to
    ``psi`` and to ``p psi'`` there, and the index tuples of the three conditions' points."""
    p = np.linspace(0.0, 1.0, steps + 1)
    basis = _bern(p, K)
    value = basis[:, 1:]
    elastic = basis @ np.column_stack([_elastic(np.r_[0.0, e]) for e in np.eye(K)])
    i = np.arange(steps + 1)
    k1, q1 = np.nonzero(i[:, None] + i[None, :] <= steps)  # q <= 1 - p_k
    j2, k2, q2 = np.nonzero(i[:, None, None] + i[None, :, None] + i[None, None, :] <= steps)
    half = np.flatnonzero(p <= 0.5)
    return p, value, elastic, (k1, q1), (j2, k2, q2, 1.0 - p[j2] - p[k2]), half


def edge_conditions(theta: np.ndarray, steps: int = EDGE_GRID) -> tuple[np.ndarray, np.ndarray]:
    """The three conditions of :func:`certify` at the points of a grid of ``[0, 1]`` in
    ``steps`` steps (each non-negative where it holds there), and their Jacobian in
    ``theta``: ``D_k (1 - p_k) + p_k D(q)`` (``q <= 1 - p_k``), ``r_j [D_j (1 - p_j) + p_j
    D_k] - m r(q) (D(q) - D_k)`` (``q <= m = 1 - p_j - p_k``) and ``D`` below 1/2, with ``r
    = e^psi`` and ``D = 1 + p psi'``. Smooth in ``theta``, unlike the proof's maxima over
    cells, and necessary, not sufficient: a point that meets them is checked by
    :func:`certify`."""
    p, V, E, (k1, q1), (j, k, q, m), half = _edge_grid(theta.shape[0], steps)
    D = 1.0 + E @ theta
    r = np.exp(V @ theta)
    first = D[k1] * (1 - p[k1]) + p[k1] * D[q1]
    d_first = E[k1] * (1 - p[k1])[:, None] + p[k1][:, None] * E[q1]
    inner = D[j] * (1 - p[j]) + p[j] * D[k]
    d_inner = E[j] * (1 - p[j])[:, None] + p[j][:, None] * E[k]
    rest = m * r[q] * (D[q] - D[k])
    second = r[j] * inner - rest
    d_second = (r[j] * inner)[:, None] * V[j] + r[j][:, None] * d_inner
    d_second -= rest[:, None] * V[q] + (m * r[q])[:, None] * (E[q] - E[k])
    return np.r_[first, second, D[half]], np.vstack([d_first, d_second, E[half]])


def follow_edge(s: Sample, tau: float, start: np.ndarray, K: int = DEGREE) -> np.ndarray:
    """A certified correction of lower penalized held-out loss than ``start`` (a proven
    point, as the segment's of :func:`fit`), found along the edge of the certified set: the
    objective minimized (SLSQP, to convergence) under :func:`edge_conditions` held with
    each margin of :data:`EDGE_MARGINS` in turn (each run from the last one's end; a run
    that fails, or has not converged after :data:`_EDGE_PASSES` passes, is dropped), the
    first minimizer that :func:`certify` proves (with :data:`FIT_SLACK`), if it is lower
    than ``start``; else ``start``. Every step is smooth in the data and the solver runs to
    its tolerance, so inputs equal up to rounding give equal corrections up to rounding (a
    non-smooth formulation, the conditions' largest violation, ended at points 1e-3 apart:
    benchmarks/RESULTS.md)."""
    objective = _objective(s, tau, K)
    start = np.asarray(start, dtype=float)
    floor = objective(start, False)[0]
    passes = [0]

    def value(t):
        passes[0] += 1
        if passes[0] > _EDGE_PASSES:
            raise _OverBudget
        f, g, _ = objective(t, False)
        return (f, g) if np.isfinite(f) and np.all(np.isfinite(g)) else (np.inf, np.zeros(K))

    last: list = [None, None]  # SLSQP asks for the values and the Jacobian apart

    def conditions(t):
        if last[0] is None or not np.array_equal(last[0], t):
            last[:] = [t.copy(), edge_conditions(t, EDGE_GRID)]
        return last[1]

    x = start
    for margin in EDGE_MARGINS:
        cond = {
            "type": "ineq",
            "fun": lambda t, margin=margin: conditions(t)[0] - margin,
            "jac": lambda t: conditions(t)[1],
        }
        passes[0] = 0
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                res = minimize(value, x, jac=True, method="SLSQP", constraints=[cond],
                               options={"ftol": _EDGE_TOL, "maxiter": _EDGE_ITER})  # fmt: skip
        except (ValueError, np.linalg.LinAlgError, _OverBudget):  # failed: the next margin
            continue
        end = np.asarray(res.x, dtype=float)
        if not np.all(np.isfinite(end)):
            continue
        x = end
        if res.status == 0 and _proven(x, FIT_SLACK):
            return x if objective(x, False)[0] < floor else start
    return start


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


#: What the kernel is given for the Hessian's outputs (``q``, ``G``) when none is wanted.
_NO_ENTRY_WEIGHTS, _NO_ROW_GRADIENTS = np.zeros(0), np.zeros((0, 0))


def _stats(s: Sample, theta: np.ndarray, hessian: bool = True, losses: np.ndarray | None = None):
    """Weighted loss sum, gradient and (with ``hessian``) Hessian in ``theta``, one compiled
    pass (:func:`.kernels.correction_stats`; NumPy's took ten array passes and a sparse
    product, and the edge's runs made it most of a C = 100 fit's time); every row's loss
    into ``losses`` if given."""
    from .kernels import correction_stats  # numba: imported by the first fit that needs it

    K = theta.shape[0]
    grad = np.zeros(K)
    loss = np.empty(s.n) if losses is None else losses
    q, G = (
        (np.empty(s.p.shape[0]), np.empty((s.n, K)))
        if hessian
        else (_NO_ENTRY_WEIGHTS, _NO_ROW_GRADIENTS)
    )
    value = correction_stats(s.indptr, s.logp, s.B, s.label, s.tail, s.tail_B, s.w,
                             np.ascontiguousarray(theta, dtype=np.float64), loss, grad, q,
                             G)  # fmt: skip
    if not hessian:
        return float(value), grad, None
    return float(value), grad, (s.B.T * q) @ s.B - (G.T * s.w) @ G


def _losses(s: Sample, theta: np.ndarray) -> np.ndarray:
    """Every row's log-loss under ``theta``."""
    loss = np.empty(s.n)
    _stats(s, theta, hessian=False, losses=loss)
    return loss


def _objective(s: Sample, tau: float, K: int):
    """The penalized weighted mean held-out log-loss of ``s`` as ``theta -> (value, gradient,
    Hessian)`` (``hessian=False``: None for the Hessian)."""
    W = float(s.w.sum())
    R = tau * _penalty(K)

    def objective(t, hessian=True):
        value, g, H = _stats(s, t, hessian)
        value = value / W + 0.5 * float(t @ R @ t)
        g = g / W + R @ t
        return value, g, None if H is None else H / W + R

    return objective


def _newton(objective, theta: np.ndarray, tau: float, bounded: bool) -> tuple[np.ndarray, bool]:
    """Newton steps from ``theta`` with an Armijo line search; ``bounded``: each step a QP
    under the polytope of :func:`constraints` (``theta`` in it), else free steps. Returns
    the last point and whether the predicted decrease fell below the tolerance there."""
    K = theta.shape[0]
    A, lower, upper = constraints(K, MARGIN)
    f, g, H = objective(theta)
    for _ in range(_MAX_NEWTON):
        H = 0.5 * (H + H.T)
        H[np.arange(K), np.arange(K)] += 1e-10 * (1.0 + np.trace(H) / K)
        d = -np.linalg.solve(H, g)
        step = A @ _range_vars(theta + d) if bounded else None  # a free run has no ranges
        if step is not None and not (np.all(step >= lower) and np.all(step <= upper)):
            x = _range_vars(theta)  # a constraint binds: the step is a QP
            n = x.shape[0]
            Hx = np.zeros((n, n))
            Hx[:K, :K] = H
            Hx[np.arange(n), np.arange(n)] += 1e-9 * (1.0 + np.trace(H) / K)
            Ax = A @ x
            d = solve_small_qp(Hx, np.r_[g, 0.0, 0.0], A, lower - Ax, upper - Ax,
                               problem="top-label correction's Newton step")[:K]  # fmt: skip
        decrease = -(float(g @ d) + 0.5 * float(d @ H @ d))
        if decrease <= _NEWTON_TOL:
            return theta, True
        # the full step is usually taken: its Hessian is computed with its value, so that
        # an accepted step costs one pass over the sample, not two
        t = 1.0
        trial = theta + d
        full = objective(trial)
        if not full[0] <= f + _ARMIJO * float(g @ d):
            full = None
            for _ in range(_MAX_HALVINGS):
                t *= 0.5
                trial = theta + t * d
                ft, _, _ = objective(trial, hessian=False)
                if ft <= f + _ARMIJO * t * float(g @ d):
                    break
            else:
                if decrease <= 1e-7:
                    return theta, True
                raise SolverError(
                    "Newton's line search found no decrease for the top-label correction "
                    f"(tau={tau:g}, predicted decrease {decrease:.2e}).",
                    status="newton: line search failed",
                    solver="newton-osqp" if bounded else "newton",
                )
        theta = trial
        f, g, H = objective(theta) if full is None else full
    return theta, False


def _fit_pair(s: Sample, tau: float, inner_start=None, free_start=None, K: int = DEGREE):
    """``(inner, relaxed, free)`` at ``tau``: the minimizer over the polytope of
    :func:`constraints`, the best point :func:`certify` proves on the segment from it to the
    free minimizer (the free one itself where proven), and the free minimizer (None where
    its Newton steps failed; a warm start for the next penalty)."""
    objective = _objective(s, tau, K)
    begin = np.zeros(K) if inner_start is None else np.asarray(inner_start, dtype=float)
    try:
        # on few rows the free minimizer may lie at infinity (a separating psi): its
        # overflowing trials are rejected by the line search, and the run ends unproven
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            free, converged = _newton(objective, begin if free_start is None else free_start,
                                      tau, bounded=False)  # fmt: skip
    except (SolverError, np.linalg.LinAlgError):
        free, converged = None, False
    if free is not None and not np.all(np.isfinite(free)):
        free, converged = None, False
    if converged and satisfies(free):  # inside the polytope: its minimizer too
        return free, free, free
    inner = _feasible(_newton(objective, _feasible(begin), tau, bounded=True)[0])
    if free is None:
        return inner, inner, None
    if _proven(free, FIT_SLACK):
        return inner, free, free
    best = _farthest(lambda t: _proven(t, FIT_SLACK), inner, free, _SEGMENT_STEPS)
    # the loss is convex and the free minimizer's no higher than the polytope's, so every
    # point of the segment is at least as good: checked only if the free run did not end
    if not converged and objective(best, False)[0] > objective(inner, False)[0]:
        best = inner
    return inner, best, free


def fit(s: Sample, tau: float, start: np.ndarray | None = None, K: int = DEGREE,
        relaxed: bool = True, edge: bool = True) -> np.ndarray:  # fmt: skip
    """``theta`` minimizing the weighted mean held-out log-loss of ``s`` plus ``(tau / 2)
    sum_j (theta_j - theta_{j-1})^2``: over the polytope of :func:`constraints` (Newton
    steps, each a QP), or with ``relaxed`` the minimizer over what :func:`certify` proves:
    the free one where proven, else the point of the segment toward it that
    :func:`certify` proves farthest along and, with ``edge``, from there along the
    certified set's edge (:func:`follow_edge`)."""
    if not np.isfinite(tau):
        return np.zeros(K)
    inner, best, free = _fit_pair(s, tau, start, start, K)
    if not relaxed:
        return inner
    if not edge or (free is not None and best is free):  # the free minimizer, proven
        return best
    return follow_edge(s, tau, best, K)


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
    relaxed: bool = False  # the relaxed correction (certified), not the polytope's
    edge: bool = False  # the certified correction followed along the certified set's edge


def choose(s: Sample, penalties) -> TopLabelFit:
    """The correction of the lowest held-out log-loss (the first of those within
    :data:`TIE` of it) among no correction (a penalty ``inf``) and, for every finite penalty
    of ``penalties`` (largest first), the polytope's correction, unless the best certified
    one (:func:`fit`) is lower by more than the standard error of the difference; each
    fold's fitted on the other folds' rows (warm started down the grid). A certified one
    chosen, the same at its penalty followed along the certified set's edge
    (:func:`follow_edge`, keyed ``(tau, "edge")``) replaces it where lower by more than
    the standard error again. Then that correction of every row."""
    penalties = [float(t) for t in penalties]
    kinds = [kind == "certified" for kind in KINDS]
    candidates = [(t, r) for t in penalties for r in (kinds if np.isfinite(t) else [False])]
    if len(penalties) == 1:
        relax = kinds[-1]
        return TopLabelFit(fit(s, penalties[0], relaxed=relax), penalties[0], None, None,
                           relaxed=relax, edge=relax)  # fmt: skip
    folds = np.unique(s.fold[s.fold >= 0])
    held = np.zeros((len(candidates), s.n))
    segments = {}  # (fold, tau): the certified point and whether it is the free minimizer
    for f in folds:
        test = s.fold == f
        train, check = s.rows(~test), s.rows(test)
        inner = free = None
        fitted = {}
        for k, (tau, relax) in enumerate(candidates):
            if not np.isfinite(tau):
                theta = np.zeros(DEGREE)
            else:
                if tau not in fitted:
                    inner, relaxed, free = _fit_pair(train, tau, inner, free)
                    fitted[tau] = (inner, relaxed)
                    segments[f, tau] = (relaxed, free is not None and relaxed is free)
                theta = fitted[tau][relax]
            held[k, test] = _losses(check, theta)
    mean = held @ s.w / s.w.sum()
    # a candidate with a held-out loss that is not finite (a free minimizer at infinity, on
    # few rows, whose psi overflows on another fold's rows) is never the lowest
    mean[~np.isfinite(held).all(axis=1)] = np.inf
    # the lowest held-out loss, not the one-standard-error rule: the correction has K
    # bounded parameters, and the rule kept none where it lowered the test log-loss and
    # top-label ECE (two of eleven CIFAR splits; none where it raised them). Losses within
    # TIE of the lowest are ties, won by the first candidate (the larger penalty, the
    # polytope): otherwise the rounding of the inputs decides (a network's float32 logits
    # and probabilities picked 1e-5 and 0, whose held-out losses differed by 2e-6, and
    # predictions differed by 5e-5)
    certified = np.array([relax for _, relax in candidates])

    def lowest(mask):
        low = mean[mask].min()
        return int(np.flatnonzero(mask & (mean <= low * (1.0 + TIE)))[0])

    pick = lowest(~certified) if not certified.all() else lowest(certified)
    if certified.any() and not certified[pick]:
        # the certified corrections are a wider family: one is kept only if it beats the
        # polytope's (or none) by more than the standard error of the difference (without
        # this rule, a split of 2,000 rows of 100 classes picked one for a held-out gain of
        # noise and lost 1.2e-3 in test log-loss, benchmarks/RESULTS.md)
        best = lowest(certified)
        if mean[best] < mean[pick] - paired_se(held, s.w, pick)[best]:
            pick = best
    se = paired_se(held, s.w, int(np.argmin(mean)))
    key = [t if not r else (t, "certified") for t, r in candidates]
    scores = {k: float(v) for k, v in zip(key, mean, strict=True)}
    ses = {k: float(v) for k, v in zip(key, se, strict=True)}
    tau, relax = candidates[pick]
    edge, chosen = False, held[pick]
    if relax and not all(segments[f, tau][1] for f in folds):
        # the edge goes further toward the free minimizer, so it may fit noise: on a
        # 2,000-row, 10-class split it raised the held-out and the test loss
        along = np.zeros(s.n)
        for f in folds:
            test = s.fold == f
            theta, free = segments[f, tau]
            if not free:
                theta = follow_edge(s.rows(~test), tau, theta)
            along[test] = _losses(s.rows(test), theta)
        pair = np.vstack([chosen, along])
        means = pair @ s.w / s.w.sum()
        scores[tau, "edge"] = float(means[1])
        ses[tau, "edge"] = float(paired_se(pair, s.w, 0)[1])
        if means[1] < means[0] - ses[tau, "edge"]:
            edge, chosen = True, along
    theta = fit(s, tau, relaxed=relax, edge=edge)
    return TopLabelFit(theta, tau, scores, ses, chosen, relax, edge)
