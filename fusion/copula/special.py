"""Special functions behind the copula families, written for accuracy in the tails.

Student's t quantile (direct and tabulated), the coefficients of the Archimedean generator
derivatives (Stirling numbers; Hofert, Maechler & McNeil 2012), log-space helpers, and the
bivariate normal and Student-t distribution functions that the interval (discrete-score)
likelihood needs. Functions of arrays only; nothing here knows about copula objects.
"""

from __future__ import annotations

from functools import cache, lru_cache
from math import factorial

import numpy as np
from scipy.special import betaincinv, gammaln, ndtr, owens_t, stdtr, stdtrit

__all__ = [
    "student_quantile",
    "student_quantiles",
    "bvn_cdf",
    "bvt_cdf",
    "log_neg_expm1",
    "logsumexp_rows",
    "log1p_sum_expm1",
    "polylog_log_coefficients",
    "gumbel_poly_coefficients",
]


def student_quantile(u: np.ndarray, df: float) -> np.ndarray:
    """Quantile of Student's t with ``df`` degrees of freedom.

    Through the inverse regularized incomplete beta function, about 4x faster than
    ``scipy.special.stdtrit`` (which dominates the Student-t fit). With ``p = min(u, 1 - u)``,
    ``x^2 = df (1 - b) / b`` where ``b = I^{-1}_{2p}(df/2, 1/2)``; near the median ``1 - b`` is
    computed directly as ``I^{-1}_{1-2p}(1/2, df/2)`` to avoid cancellation. Beyond
    ``p < 1e-12`` (never reached by clipped pseudo-observations) ``stdtrit`` is used.
    """
    u = np.asarray(u, dtype=float)
    p = np.minimum(u, 1.0 - u)
    x = np.empty_like(p)
    tail = p < 0.25
    b = betaincinv(0.5 * df, 0.5, 2.0 * p[tail])
    x[tail] = np.sqrt(df * (1.0 - b) / b)
    c = betaincinv(0.5, 0.5 * df, 1.0 - 2.0 * p[~tail])
    x[~tail] = np.sqrt(df * c / (1.0 - c))
    far = p < 1e-12  # betaincinv loses accuracy there; stdtrit does not (and is rarely needed)
    if np.any(far):
        # stdtrit is unreliable at the extreme (scipy 1.16 gives -1e100 for df = 2 at
        # p = 1e-300, scipy 1.17 +inf for df = 2.7): keep its answer only where its own CDF
        # gives p back; elsewhere use the leading tail term P(T < -x) ~ K x^-df / df with
        # K = G((df+1)/2) df^((df+1)/2) / (sqrt(pi df) G(df/2)), exact to O(x^-2) out there.
        pf = p[far]
        xf = np.abs(stdtrit(df, pf))
        with np.errstate(invalid="ignore", over="ignore"):
            bad = ~(np.abs(stdtr(df, -xf) / pf - 1.0) < 1e-6)
        if np.any(bad):
            log_k = (
                gammaln(0.5 * (df + 1))
                - gammaln(0.5 * df)
                + 0.5 * df * np.log(df)
                - 0.5 * np.log(np.pi)
            )
            xf[bad] = np.exp((log_k - np.log(df) - np.log(pf[bad])) / df)
        x[far] = xf
    return np.where(u < 0.5, -x, x)


#: Above this many values :func:`student_quantiles` interpolates a table.
_TABLE_THRESHOLD = 4096
#: Table nodes in ``logit(u)`` on ``[-_TABLE_LOGIT, 0]`` (mirrored for the upper half).
_TABLE_NODES, _TABLE_LOGIT = 1025, 23.5


def _student_quantile_table(df: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Nodes of ``x(l)``, the t quantile as a function of ``l = logit(u)``, and ``h dx/dl``."""
    ell = np.linspace(-_TABLE_LOGIT, 0.0, _TABLE_NODES)
    h = ell[1] - ell[0]
    # only the lower half is computed: expit(l) is exact there, and x(-l) = -x(l)
    x = student_quantile(np.exp(ell - np.logaddexp(0.0, ell)), df)
    log_pdf = (
        gammaln(0.5 * (df + 1))
        - gammaln(0.5 * df)
        - 0.5 * np.log(df * np.pi)
        - 0.5 * (df + 1) * np.log1p(x * x / df)
    )
    # dx/dl = u (1 - u) / f(x)
    slope = np.exp(-np.logaddexp(0.0, -ell) - np.logaddexp(0.0, ell) - log_pdf) * h
    return x, slope, h


def student_quantiles(u: np.ndarray, df: float) -> np.ndarray:
    """:func:`student_quantile` for many points: cubic Hermite interpolation in ``logit(u)``.

    Exact values (``betaincinv``) and derivatives ``u (1 - u) / f_t(x)`` at 1025 nodes of
    ``logit(u)`` in ``[-23.5, 0]``, mirrored by symmetry; about 20x faster than the direct
    computation over 10^5 points and more (it dominates the Student-t copula). Measured
    ``|x - stdtrit(df, u)| / (1 + |x|)`` below ``1e-10`` for ``u`` in ``[1e-10, 1 - 1e-10]``
    and ``2 <= df <= 50``, like the direct computation (tested); points farther out, and
    arrays of at most 4096 values, are computed directly.
    """
    u = np.asarray(u, dtype=float)
    if u.size <= _TABLE_THRESHOLD:
        return student_quantile(u, df)
    x_nodes, slopes, h = _student_quantile_table(df)
    lower = np.minimum(u, 1.0 - u)  # exact for u >= 1/2 (Sterbenz)
    with np.errstate(divide="ignore"):
        pos = (np.log(lower) - np.log1p(-lower) + _TABLE_LOGIT) / h
    inside = pos >= 0.0
    i = np.minimum(np.where(inside, pos, 0.0).astype(np.intp), _TABLE_NODES - 2)
    t = np.where(inside, pos - i, 0.0)
    a, b, da, db = x_nodes[i], x_nodes[i + 1], slopes[i], slopes[i + 1]
    d = b - a
    x = a + t * (da + t * (3.0 * d - 2.0 * da - db + t * (da + db - 2.0 * d)))
    if not np.all(inside):
        x[~inside] = student_quantile(lower[~inside], df)
    return np.where(u > 0.5, -x, x)


def logsumexp_rows(A: np.ndarray) -> np.ndarray:
    """Row-wise ``log(sum(exp(A)))``; ``-inf`` entries allowed (scipy's is ~50x slower here)."""
    top = A.max(axis=1)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(under="ignore"):
        return top + np.log(np.sum(np.exp(A - top[:, None]), axis=1))


def log1p_sum_expm1(A: np.ndarray) -> np.ndarray:
    """Row-wise ``log(1 + sum_m expm1(a_m))`` for ``a_m >= 0`` without overflow."""
    M = A.shape[1]
    top = A.max(axis=1)
    small = np.log1p(np.sum(np.expm1(np.minimum(A, 30.0)), axis=1))
    with np.errstate(under="ignore"):
        large = top + np.log(np.sum(np.exp(A - top[:, None]), axis=1) - (M - 1) * np.exp(-top))
    return np.where(top > 30.0, large, small)


def log_neg_expm1(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(-x))`` for ``x > 0``, accurate at both ends (Maechler's log1mexp).

    ``log(-expm1(-x))`` loses ``exp(-x)`` entirely once it is below the double precision of
    1 (``x > 37``), which the M-dimensional Frank density needs; ``log1p(-exp(-x))`` is
    accurate there and ``log(-expm1(-x))`` for ``x < log 2``.
    """
    x = np.asarray(x, dtype=float)
    small = x < np.log(2.0)
    with np.errstate(divide="ignore"):
        return np.where(small, np.log(-np.expm1(-np.where(small, x, 1.0))), np.log1p(-np.exp(-x)))


def _triangle(n: int, entry) -> tuple[tuple[int, ...], ...]:
    """The table ``T[i][j]``, ``0 <= i, j <= n``, of a recurrence of the Stirling kind:
    ``T[0][0] = 1``, ``T[i][0] = T[0][j] = 0`` otherwise, and ``T[i][j] = entry(T, i, j)``
    for ``1 <= j <= i`` (zero above the diagonal); exact ints."""
    T = [[0] * (n + 1) for _ in range(n + 1)]
    T[0][0] = 1
    for i in range(1, n + 1):
        for j in range(1, i + 1):
            T[i][j] = entry(T, i, j)
    return tuple(tuple(r) for r in T)


@cache
def _stirling2(n: int) -> tuple[tuple[int, ...], ...]:
    """Stirling numbers of the second kind ``S(i, j)`` for ``0 <= i, j <= n`` (exact ints)."""
    return _triangle(n, lambda S, i, j: j * S[i - 1][j] + S[i - 1][j - 1])


@cache
def _stirling1(n: int) -> tuple[tuple[int, ...], ...]:
    """Signed Stirling numbers of the first kind ``s(i, j)`` for ``0 <= i, j <= n``."""
    return _triangle(n, lambda s, i, j: s[i - 1][j - 1] - (i - 1) * s[i - 1][j])


@cache
def polylog_log_coefficients(k: int) -> np.ndarray:
    """``log(j! S(k+1, j+1))``, j = 0..k: ``Li_{-k}(z) = sum_j j! S(k+1, j+1) x^{j+1}``."""
    S = _stirling2(k + 1)
    return np.log(np.array([float(factorial(j) * S[k + 1][j + 1]) for j in range(k + 1)]))


def gumbel_poly_coefficients(M: int, alpha: float) -> np.ndarray:
    """``a_{Mk}(alpha) = (-1)^{M-k} sum_{j=k}^M alpha^j s(M, j) S(j, k)``, k = 1..M.

    The coefficients of the polynomial in Gumbel's M-th generator derivative (Hofert,
    Maechler & McNeil 2012, Thm. 2); they are non-negative, tiny negative round-off is cut.
    """
    s1, s2 = _stirling1(M), _stirling2(M)
    a = np.empty(M)
    for k in range(1, M + 1):
        total = sum(alpha**j * s1[M][j] * s2[j][k] for j in range(k, M + 1))
        a[k - 1] = (-1) ** (M - k) * total
    return np.maximum(a, 0.0)


# ---------------------------------------------------------------------------------------------
# Bivariate normal and Student-t distribution functions (for interval likelihoods).


def _infinite_limits(h, k, rho, marginal):
    """Broadcast ``h, k, rho`` and fill a bivariate CDF where an argument is infinite: 0 where
    one is ``-inf``, the ``marginal`` CDF of the other where one is ``+inf``.

    Returns ``h, k, rho``, the output array and the mask of the pairs left to compute (both
    arguments finite).
    """
    h, k, rho = np.broadcast_arrays(
        np.asarray(h, dtype=float), np.asarray(k, dtype=float), np.asarray(rho, dtype=float)
    )
    out = np.empty(h.shape)
    lo = (h == -np.inf) | (k == -np.inf)
    h_inf, k_inf = (h == np.inf) & ~lo, (k == np.inf) & ~lo
    out[lo] = 0.0
    out[h_inf] = marginal(k[h_inf])
    only_k = k_inf & ~h_inf
    out[only_k] = marginal(h[only_k])
    return h, k, rho, out, ~(lo | h_inf | k_inf)


def bvn_cdf(h: np.ndarray, k: np.ndarray, rho) -> np.ndarray:
    """``P(Z1 <= h, Z2 <= k)`` for standard bivariate normal ``(Z1, Z2)`` with correlation ``rho``.

    Owen's (1956) formula through ``scipy.special.owens_t``:
    ``Phi2 = (Phi(h) + Phi(k)) / 2 - T(h, a_h) - T(k, a_k) - beta`` with
    ``a_h = (k - rho h) / (h sqrt(1 - rho^2))`` (and symmetrically), ``beta = 1/2`` when ``h k < 0``
    or ``h k = 0 < -(h + k)``, else 0. Deterministic, vectorized, accurate to about 1e-15 in
    absolute terms; ``h`` and ``k`` may be infinite. ``|rho| < 1``.
    """
    h, k, rho, out, fin = _infinite_limits(h, k, rho, ndtr)
    hf, kf, r = h[fin], k[fin], rho[fin]
    s = np.sqrt((1.0 - r) * (1.0 + r))
    both0 = (hf == 0.0) & (kf == 0.0)
    # T(0, a) = arctan(a) / (2 pi): with h = 0 the first term is +-1/4 by the sign of k
    with np.errstate(divide="ignore", invalid="ignore"):
        a_h = (kf - r * hf) / (hf * s)
        a_k = (hf - r * kf) / (kf * s)
    t_h = np.where(hf == 0.0, 0.25 * np.sign(kf), owens_t(hf, np.where(hf == 0.0, 0.0, a_h)))
    t_k = np.where(kf == 0.0, 0.25 * np.sign(hf), owens_t(kf, np.where(kf == 0.0, 0.0, a_k)))
    beta = np.where((hf * kf < 0) | ((hf * kf == 0) & (hf + kf < 0)), 0.5, 0.0)
    val = 0.5 * (ndtr(hf) + ndtr(kf)) - t_h - t_k - beta
    val = np.where(both0, 0.25 + np.arcsin(r) / (2.0 * np.pi), val)
    out[fin] = np.clip(val, 0.0, np.minimum(ndtr(hf), ndtr(kf)))
    return out


@lru_cache(maxsize=64)
def _chi_scale_rule(df: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``r`` and weights for ``E[g(R)]``, ``R = sqrt(W / df)``, ``W ~ chi^2(df)``.

    The trapezoid rule in ``s = log r``, where the integrand is analytic and decays
    exponentially on the left (``e^{df s}``) and doubly exponentially on the right, so the rule
    converges geometrically: step ``min(0.15, sd / 3)`` with ``sd = 1 / sqrt(2 df)`` the width
    of the peak; errors below 1e-12 for ``2 <= df <= 100`` (tested against numerical
    integration).
    """
    step = min(0.15, 1.0 / (3.0 * np.sqrt(2.0 * df)))
    lo, hi = -45.0 / df - 0.5, 0.5 * np.log1p(90.0 / df) + 0.3
    s = np.arange(lo, hi + step, step)
    log_f = (
        np.log(2.0)
        + 0.5 * df * np.log(0.5 * df)
        - gammaln(0.5 * df)
        + df * s
        - 0.5 * df * np.exp(2.0 * s)
    )
    weights = np.exp(log_f) * step
    return np.exp(s), weights / weights.sum()


def bvt_cdf(h: np.ndarray, k: np.ndarray, rho, df: float) -> np.ndarray:
    """``P(T1 <= h, T2 <= k)`` for the standard bivariate Student-t with correlation ``rho``.

    ``T = Z / R`` with ``R = sqrt(W / df)``, so ``P = E[Phi2(h R, k R; rho)]``, an expectation
    over ``R`` computed with :func:`_chi_scale_rule` (60 to 170 nodes). Deterministic; ``h``
    and ``k`` may be infinite (one infinite argument gives Student's t CDF exactly).
    """
    h, k, rho, out, fin = _infinite_limits(h, k, rho, lambda x: stdtr(df, x))
    if np.any(fin):
        r, wts = _chi_scale_rule(float(df))
        hf, kf, rf = h[fin][:, None], k[fin][:, None], rho[fin][:, None]
        vals = bvn_cdf(hf * r[None, :], kf * r[None, :], rf)
        out[fin] = np.einsum("ij,j->i", vals, wts)
    return out
