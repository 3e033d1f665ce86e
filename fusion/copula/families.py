"""Copula families: log-densities, parameter bounds and the number of free parameters.

Every density here is written in closed form with NumPy/SciPy and evaluated in log space, so
it stays finite for pseudo-observations clipped into ``[EPS, 1 - EPS]`` at every parameter
inside the bounds (large dependence parameters make ``u**-theta`` or ``exp(theta)`` overflow
when computed naively). The formulas for Gaussian, Student-t, Clayton, Frank and Gumbel are
the ones ``copulae`` implements and are cross-checked against it in the tests; they are
re-implemented because (i) evaluating them through ``copulae`` objects costs about 1 ms per
call, which dominates a maximum-likelihood fit that calls them hundreds of times, (ii)
``copulae`` 0.8 returns NaN for the bivariate Frank copula with a negative parameter, and
(iii) ``copulae`` has neither Plackett nor the rotated families.

Families and parameters (``params`` dicts hold plain floats / arrays):

=================  =====================  =======================================  ==========
family             params                 bounds used by the fit                   dimension
=================  =====================  =======================================  ==========
independence       ``{}``                 --                                       any M
gaussian           ``corr`` (M, M)        off-diagonal ``|rho| <= 0.999``          any M
student            ``corr``, ``df``       ``|rho| <= 0.999``, ``2 <= df <= 50``    any M
clayton            ``theta``              ``1e-4 <= theta <= 50``                  any M
clayton_rot180     ``theta``              as clayton                               M = 2
gumbel             ``theta``              ``1 <= theta <= 50``                     any M
gumbel_rot180      ``theta``              as gumbel                                M = 2
frank              ``theta``              ``-50..50`` (M = 2), ``1e-4..50``        any M
plackett           ``theta``              ``exp(-10) <= theta <= exp(10)``         M = 2
=================  =====================  =======================================  ==========

Frank needs ``theta > 0`` when M > 2. The rotated families are the survival copulas:
``c_rot180(u) = c(1 - u)``. The Gumbel and Frank densities for M > 2 use the generator
derivatives of Hofert, Maechler & McNeil (2012): Frank's as a sum of positive terms, Gumbel's
polynomial coefficients from (alternating) Stirling-number sums, which agree with ``copulae``
to 1e-13 up to M = 10 (checked by hand; the tests go to M = 4).
"""

from __future__ import annotations

from functools import cache
from math import factorial

import numpy as np
from scipy.special import betaincinv, gammaln, ndtri, stdtr, stdtrit

__all__ = [
    "EPS",
    "FAMILIES",
    "BIVARIATE_ONLY",
    "BOUNDS",
    "families_for_dimension",
    "n_params",
    "clip_unit",
    "log_density",
    "gaussian_logpdf",
    "student_logpdf",
    "student_quantile",
    "student_quantiles",
    "clayton_logpdf",
    "frank_logpdf",
    "gumbel_logpdf",
    "plackett_logpdf",
    "plackett_cdf",
]

#: Pseudo-observations are clipped into ``[EPS, 1 - EPS]`` before any copula is evaluated:
#: every log-density below is finite there, for every parameter within :data:`BOUNDS`.
EPS = 1e-10

#: All family names, in the order used to break ties in selection (simplest first).
FAMILIES = (
    "independence",
    "gaussian",
    "student",
    "clayton",
    "clayton_rot180",
    "gumbel",
    "gumbel_rot180",
    "frank",
    "plackett",
)

#: Families defined only for two scores.
BIVARIATE_ONLY = frozenset({"clayton_rot180", "gumbel_rot180", "plackett"})

#: Parameter bounds used by the maximum-likelihood fit (see the module table).
BOUNDS = {
    "rho": (-0.999, 0.999),
    "df": (2.0, 50.0),
    "clayton": (1e-4, 50.0),
    "gumbel": (1.0, 50.0),
    "frank": (-50.0, 50.0),
    "frank_multivariate": (1e-4, 50.0),
    "plackett": (float(np.exp(-10.0)), float(np.exp(10.0))),
}


def families_for_dimension(M: int) -> tuple[str, ...]:
    """The candidate families defined in ``M`` dimensions, in :data:`FAMILIES` order.

    A single variable's only copula is independence (the uniform density).
    """
    if M == 1:
        return ("independence",)
    return tuple(f for f in FAMILIES if M == 2 or f not in BIVARIATE_ONLY)


def n_params(family: str, M: int) -> int:
    """Number of free parameters (for AIC)."""
    if family == "independence":
        return 0
    if family == "gaussian":
        return M * (M - 1) // 2
    if family == "student":
        return M * (M - 1) // 2 + 1
    return 1


def clip_unit(U: np.ndarray, eps: float = EPS) -> np.ndarray:
    """Clip pseudo-observations into ``[eps, 1 - eps]``."""
    return np.clip(U, eps, 1.0 - eps)


# ---------------------------------------------------------------------------------------------
# Elliptical families.


def _chol(corr: np.ndarray) -> np.ndarray:
    corr = np.asarray(corr, dtype=float)
    try:
        return np.linalg.cholesky(corr)
    except np.linalg.LinAlgError:
        raise ValueError(f"correlation matrix is not positive definite: {corr.tolist()}") from None


def _mahalanobis(X: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Rows' ``x' R^{-1} x`` given the Cholesky factor ``L`` of ``R``."""
    # M is small: invert the triangular factor once and multiply, with einsum rather than
    # BLAS (a triangular solve over n right-hand sides is far slower, and multithreaded
    # OpenBLAS busy-waits when the cores are shared)
    Y = np.einsum("ik,jk->ij", X, np.linalg.inv(L))
    return np.einsum("ij,ij->i", Y, Y)


def gaussian_logpdf(U: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """Gaussian copula log-density ``-log|R|/2 - z'(R^{-1} - I)z/2`` with ``z = Phi^{-1}(u)``."""
    Z = ndtri(U)
    L = _chol(corr)
    q = _mahalanobis(Z, L)
    return -np.sum(np.log(np.diag(L))) - 0.5 * (q - np.einsum("ij,ij->i", Z, Z))


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


def student_logpdf(U: np.ndarray, corr: np.ndarray, df: float) -> np.ndarray:
    """Student-t copula log-density with correlation ``corr`` and ``df`` degrees of freedom."""
    X = student_quantiles(U, df)
    return _student_logpdf_from_quantiles(X, _chol(corr), df)


def _student_logpdf_from_quantiles(X: np.ndarray, L: np.ndarray, df: float) -> np.ndarray:
    M = X.shape[1]
    const = (
        gammaln(0.5 * (df + M)) + (M - 1) * gammaln(0.5 * df) - M * gammaln(0.5 * (df + 1))
    ) - np.sum(np.log(np.diag(L)))
    q = _mahalanobis(X, L)
    return (
        const
        - 0.5 * (df + M) * np.log1p(q / df)
        + 0.5 * (df + 1) * np.sum(np.log1p(X * X / df), axis=1)
    )


# ---------------------------------------------------------------------------------------------
# Archimedean families (any M, positive dependence), Frank also negative for M = 2.


def _logsumexp_rows(A: np.ndarray) -> np.ndarray:
    """Row-wise ``log(sum(exp(A)))``; ``-inf`` entries allowed (scipy's is ~50x slower here)."""
    top = A.max(axis=1)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(under="ignore"):
        return top + np.log(np.sum(np.exp(A - top[:, None]), axis=1))


def _log1p_sum_expm1(A: np.ndarray) -> np.ndarray:
    """Row-wise ``log(1 + sum_m expm1(a_m))`` for ``a_m >= 0`` without overflow."""
    M = A.shape[1]
    top = A.max(axis=1)
    small = np.log1p(np.sum(np.expm1(np.minimum(A, 30.0)), axis=1))
    with np.errstate(under="ignore"):
        large = top + np.log(np.sum(np.exp(A - top[:, None]), axis=1) - (M - 1) * np.exp(-top))
    return np.where(top > 30.0, large, small)


def clayton_logpdf(U: np.ndarray, theta: float) -> np.ndarray:
    """Clayton copula log-density, ``theta > 0``, any M.

    ``c(u) = prod_{k<M}(1 + k theta) prod_m u_m^{-(1+theta)}
    (1 + sum_m (u_m^{-theta} - 1))^{-(M + 1/theta)}``, the last factor in log space without
    overflow.
    """
    M = U.shape[1]
    logU = np.log(U)
    const = float(np.sum(np.log1p(theta * np.arange(M))))
    return (
        const
        - (1.0 + theta) * logU.sum(axis=1)
        - (M + 1.0 / theta) * _log1p_sum_expm1(-theta * logU)
    )


def _log_neg_expm1(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(-x))`` for ``x > 0``, accurate at both ends (Maechler's log1mexp).

    ``log(-expm1(-x))`` loses ``exp(-x)`` entirely once it is below the double precision of
    1 (``x > 37``), which the M-dimensional Frank density needs; ``log1p(-exp(-x))`` is
    accurate there and ``log(-expm1(-x))`` for ``x < log 2``.
    """
    x = np.asarray(x, dtype=float)
    small = x < np.log(2.0)
    with np.errstate(divide="ignore"):
        return np.where(small, np.log(-np.expm1(-np.where(small, x, 1.0))), np.log1p(-np.exp(-x)))


def frank_logpdf(U: np.ndarray, theta: float) -> np.ndarray:
    """Frank copula log-density; ``theta != 0`` for M = 2, ``theta > 0`` for M > 2.

    For M = 2 and ``theta > 0``,
    ``c = theta (1 - e^-theta) e^{-theta(u+v)} / D^2`` with the denominator written as a sum
    of two non-negative terms, ``D = e^{-theta u}(1 - e^{-theta v}) + e^{-theta v}(1 -
    e^{-theta(1-v)})``, so it never cancels; a negative ``theta`` uses
    ``c_{-theta}(u, v) = c_theta(u, 1 - v)``. For M > 2 the density is
    ``theta^{M-1} Li_{-(M-1)}(z) / prod_m (e^{theta u_m} - 1)`` with
    ``z = (1 - e^{-theta})^{1-M} prod_m (1 - e^{-theta u_m})``, the polylogarithm expanded as
    a sum of positive terms in ``x = z / (1 - z)`` (Hofert, Maechler & McNeil 2012).
    """
    M = U.shape[1]
    if theta == 0.0:
        return np.zeros(U.shape[0])
    if M == 2:
        u, v = U[:, 0], U[:, 1]
        if theta < 0:
            theta, v = -theta, 1.0 - v
        logD = np.logaddexp(
            -theta * u + _log_neg_expm1(theta * v),
            -theta * v + _log_neg_expm1(theta * (1.0 - v)),
        )
        return np.log(theta) + _log_neg_expm1(theta) - theta * (u + v) - 2.0 * logD
    if theta < 0:
        raise ValueError(f"the Frank copula needs theta > 0 when M > 2, got {theta}.")
    k = M - 1
    log_z = (1 - M) * _log_neg_expm1(theta) + np.sum(_log_neg_expm1(theta * U), axis=1)
    log_x = log_z - np.log(-np.expm1(log_z))
    coef = _polylog_log_coefficients(k)
    log_li = _logsumexp_rows(coef[None, :] + np.arange(1, k + 2)[None, :] * log_x[:, None])
    # log(e^y - 1) = y + log(1 - e^-y), exact for every y > 0
    log_expm1 = theta * U + _log_neg_expm1(theta * U)
    return k * np.log(theta) + log_li - log_expm1.sum(axis=1)


@cache
def _stirling2(n: int) -> tuple[tuple[int, ...], ...]:
    """Stirling numbers of the second kind ``S(i, j)`` for ``0 <= i, j <= n`` (exact ints)."""
    S = [[0] * (n + 1) for _ in range(n + 1)]
    S[0][0] = 1
    for i in range(1, n + 1):
        for j in range(1, i + 1):
            S[i][j] = j * S[i - 1][j] + S[i - 1][j - 1]
    return tuple(tuple(r) for r in S)


@cache
def _stirling1(n: int) -> tuple[tuple[int, ...], ...]:
    """Signed Stirling numbers of the first kind ``s(i, j)`` for ``0 <= i, j <= n``."""
    s = [[0] * (n + 1) for _ in range(n + 1)]
    s[0][0] = 1
    for i in range(1, n + 1):
        for j in range(1, i + 1):
            s[i][j] = s[i - 1][j - 1] - (i - 1) * s[i - 1][j]
    return tuple(tuple(r) for r in s)


@cache
def _polylog_log_coefficients(k: int) -> np.ndarray:
    """``log(j! S(k+1, j+1))``, j = 0..k: ``Li_{-k}(z) = sum_j j! S(k+1, j+1) x^{j+1}``."""
    S = _stirling2(k + 1)
    return np.log(np.array([float(factorial(j) * S[k + 1][j + 1]) for j in range(k + 1)]))


def _gumbel_poly_coefficients(M: int, alpha: float) -> np.ndarray:
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


def gumbel_logpdf(U: np.ndarray, theta: float) -> np.ndarray:
    """Gumbel copula log-density, ``theta >= 1``, any M.

    With ``x_m = -log u_m``, ``t = sum_m x_m^theta``, ``s = t^(1/theta)``:
    ``log c = -s - M log t + log P_M(s) + M log theta + sum_m ((theta - 1) log x_m + x_m)``,
    ``P_M(s) = sum_k a_{Mk}(1/theta) s^k`` (for M = 2: ``P = s (theta - 1 + s) / theta^2``,
    used in closed form).
    """
    M = U.shape[1]
    X = -np.log(U)
    logX = np.log(X)
    if M == 2:
        log_t = np.logaddexp(theta * logX[:, 0], theta * logX[:, 1])
        log_s = log_t / theta
        s = np.exp(log_s)
        return (
            -s
            - 2.0 * log_t
            + log_s
            + np.log(theta - 1.0 + s)
            + (theta - 1.0) * (logX[:, 0] + logX[:, 1])
            + X[:, 0]
            + X[:, 1]
        )
    log_t = _logsumexp_rows(theta * logX)
    log_s = log_t / theta
    s = np.exp(log_s)
    with np.errstate(divide="ignore"):
        log_a = np.log(_gumbel_poly_coefficients(M, 1.0 / theta))
    log_P = _logsumexp_rows(log_a[None, :] + np.arange(1, M + 1)[None, :] * log_s[:, None])
    return -s - M * log_t + log_P + M * np.log(theta) + np.sum((theta - 1.0) * logX + X, axis=1)


# ---------------------------------------------------------------------------------------------
# Plackett (bivariate).


def plackett_logpdf(U: np.ndarray, theta: float) -> np.ndarray:
    """Plackett copula log-density, ``theta > 0`` (``theta = 1`` is independence).

    ``c = theta (1 + eta s) / Delta^{3/2}`` with ``eta = theta - 1``, ``s = u + v - 2uv`` and
    ``Delta = (1 + eta (u + v))^2 - 4 theta eta u v``, rewritten as
    ``1 + 2 eta s + eta^2 (u - v)^2`` whose terms are all non-negative when ``theta >= 1``.
    """
    u, v = U[:, 0], U[:, 1]
    eta = theta - 1.0
    s = u + v - 2.0 * u * v
    delta = 1.0 + 2.0 * eta * s + eta * eta * (u - v) ** 2
    return np.log(theta) + np.log1p(eta * s) - 1.5 * np.log(delta)


def plackett_cdf(u: np.ndarray, v: np.ndarray, theta: float) -> np.ndarray:
    """Plackett copula CDF (Nelsen 2006, eq. 3.3.3); ``u * v`` at ``theta = 1``."""
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    eta = theta - 1.0
    if abs(eta) < 1e-12:
        return u * v
    a = 1.0 + eta * (u + v)
    return (a - np.sqrt(a * a - 4.0 * theta * eta * u * v)) / (2.0 * eta)


# ---------------------------------------------------------------------------------------------


def log_density(family: str, U: np.ndarray, params: dict) -> np.ndarray:
    """Log-density of ``family`` with ``params`` at rows of ``U`` (clipped into the cube).

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    U : ndarray of shape (n, M)
        Points of ``[0, 1]^M``; clipped into ``[EPS, 1 - EPS]`` here.
    params : dict
        As stored in ``CopulaFusion.copula_params_`` (see the module table).

    Returns
    -------
    ndarray of shape (n,)
    """
    U = clip_unit(np.asarray(U, dtype=float))
    if family in BIVARIATE_ONLY and U.shape[1] != 2:
        raise ValueError(f"the {family} copula is bivariate; got {U.shape[1]} dimensions.")
    if family == "independence":
        return np.zeros(U.shape[0])
    if family == "gaussian":
        return gaussian_logpdf(U, params["corr"])
    if family == "student":
        return student_logpdf(U, params["corr"], float(params["df"]))
    base, _, rotation = family.partition("_rot")
    if rotation:
        U = 1.0 - U
    theta = float(params["theta"])
    if base == "clayton":
        return clayton_logpdf(U, theta)
    if base == "gumbel":
        return gumbel_logpdf(U, theta)
    if base == "frank":
        return frank_logpdf(U, theta)
    if base == "plackett":
        return plackett_logpdf(U, theta)
    raise ValueError(f"unknown copula family {family!r}; known families: {list(FAMILIES)}.")
