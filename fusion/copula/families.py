"""Copula families, one class per family, and the name-level helpers built on them.

Each family is a subclass of :class:`fusion.copula.family.Copula` defined in this file; its
``family`` name registers it, so **adding a family means adding a class here** (its
log-density, mixed derivatives ``_partial``, fits and sampler) and nothing else. The estimator
refers to families by name: ``"clayton"``, or ``"clayton_rot180"`` for a rotation, and
:data:`FAMILIES` (the default candidates), :func:`make`, :func:`log_density`, :func:`sample`
and :func:`n_params` turn names into objects.

Every density is written in closed form with NumPy/SciPy and evaluated in log space, so it
stays finite for pseudo-observations clipped into ``[EPS, 1 - EPS]`` at every parameter inside
the bounds (large dependence parameters make ``u**-theta`` or ``exp(theta)`` overflow when
computed naively).

Why not ``copulae``
    The Gaussian, Student-t, Clayton, Frank and Gumbel densities are the ones ``copulae``
    implements and are cross-checked against it in the tests (it is a test dependency, not a
    runtime one): they agree to 1e-8 under the supported NumPy (2.x), so ``copulae`` is
    correct for them, but it is not used because (i) evaluating them through ``copulae``
    objects costs 0.25-1 ms per call, and the same bounded fits run 15-40x slower through it
    (``benchmarks/bench_copula.py``: a maximum-likelihood fit calls them hundreds of times);
    (ii) ``copulae`` 0.7-0.8 returns NaN for the bivariate Frank copula with a negative
    parameter and its Frank sampler is wrong for M > 2 (pairwise Kendall's tau 0.25 instead of
    0.46 at ``theta = 5``); (iii) it has neither Plackett nor rotations, nor the conditional
    distributions (h-functions) and rectangle probabilities that discrete scores need.

Families and parameters (``params`` dicts hold plain floats / arrays):

=================  =====================  =======================================  ==========
family             params                 bounds used by the fit                   dimension
=================  =====================  =======================================  ==========
independence       ``{}``                 --                                       any M
gaussian           ``corr`` (M, M)        off-diagonal ``|rho| <= 0.999``          any M
student            ``corr``, ``df``       ``|rho| <= 0.999``, ``2 <= df <= 50``    any M
clayton            ``theta``              ``1e-4 <= theta <= 50``                  any M
gumbel             ``theta``              ``1 <= theta <= 50``                     any M
frank              ``theta``              ``-50..50`` (M = 2), ``1e-4..50``        any M
plackett           ``theta``              ``exp(-10) <= theta <= exp(10)``         M = 2
=================  =====================  =======================================  ==========

Clayton and Gumbel also come rotated by 90, 180 or 270 degrees (bivariate; ``_rot180`` is the
survival copula ``c(1 - u)``, ``_rot90``/``_rot270`` reflect one coordinate and model negative
dependence); the default candidates include the 180-degree rotations. Frank, Plackett and the
elliptical families are radially symmetric and reach negative dependence through their
parameter, so they have no rotations. Frank needs ``theta > 0`` when M > 2.

The Archimedean families (Clayton, Gumbel, Frank) share one form for every mixed derivative
``d^K C / du_K = psi^{(|K|)}(sum_m psi^{-1}(u_m)) prod_{k in K} (psi^{-1})'(u_k)`` through their
generator ``psi``; the generator derivatives are those of Hofert, Maechler & McNeil (2012):
Frank's as a sum of positive terms, Gumbel's polynomial coefficients from (alternating)
Stirling-number sums, which agree with ``copulae`` to 1e-13 up to M = 10. The elliptical
families' mixed derivatives are conditional normal or t distribution functions, available for
at most two interval coordinates per row when M > 2 (:meth:`Copula.supports_intervals`).
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.optimize import minimize
from scipy.special import gammaln, ndtr, ndtri, stdtr

from .dependence import RHO_MAX, as_correlation, normal_scores_correlation, tau_correlation
from .family import EPS, Copula, OneParameterCopula, clip_unit, maximize_1d, registry, wsum
from .special import (
    bvn_cdf,
    bvt_cdf,
    gumbel_poly_coefficients,
    log1p_sum_expm1,
    log_neg_expm1,
    logsumexp_rows,
    polylog_log_coefficients,
    student_quantiles,
)

__all__ = [
    "EPS",
    "FAMILIES",
    "KNOWN_FAMILIES",
    "BIVARIATE_ONLY",
    "BOUNDS",
    "IndependenceCopula",
    "GaussianCopula",
    "StudentCopula",
    "ClaytonCopula",
    "GumbelCopula",
    "FrankCopula",
    "PlackettCopula",
    "families_for_dimension",
    "parse",
    "make",
    "n_params",
    "clip_unit",
    "log_density",
    "sample",
    "plackett_cdf",
]

_ATANH_MAX = float(np.arctanh(RHO_MAX))
#: Tolerance on ``log df`` of the Student-t profile likelihood (flat for large df).
_DF_XATOL = 1e-3
#: Objective value standing in for a non-finite negative log-likelihood.
_BAD = 1e300


# ---------------------------------------------------------------------------------------------
# Independence.


class IndependenceCopula(Copula):
    """The independence copula ``C(u) = prod_m u_m``; no parameter (``params == {}``)."""

    family = "independence"

    def n_params(self) -> int:
        return 0

    def _check_params(self, params: dict) -> dict:
        return {}

    def _logpdf(self, U, params):
        return np.zeros(U.shape[0])

    def _partial(self, U, K, params):
        D = [j for j in range(U.shape[1]) if j not in K]
        return np.prod(U[:, D], axis=1)

    def _fit_points(self, U, w):
        return {}, 0.0

    def _fit_intervals(self, lo, hi, w):
        return {}, 0.0

    def supports_intervals(self, n_interval_axes: int) -> bool:
        return True

    def _log_ratio(self, lo, hi, params):
        return np.zeros(lo.shape[0])  # P(rectangle) = its volume

    def _sample(self, n, rng, params):
        return rng.random((n, self.dim))


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


def _corr2(rho: float) -> np.ndarray:
    return np.array([[1.0, rho], [rho, 1.0]])


def _gaussian_logpdf(U: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """``-log|R|/2 - z'(R^{-1} - I)z/2`` with ``z = Phi^{-1}(u)``."""
    Z = ndtri(U)
    L = _chol(corr)
    q = _mahalanobis(Z, L)
    return -np.sum(np.log(np.diag(L))) - 0.5 * (q - np.einsum("ij,ij->i", Z, Z))


def _student_logpdf_from_quantiles(X: np.ndarray, L: np.ndarray, df: float) -> np.ndarray:
    """Student-t copula log-density from the t quantiles ``X`` and the Cholesky factor ``L``."""
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


class _Elliptical(Copula):
    """Shared by the Gaussian and Student-t copulas: correlation ``corr``, conditionals."""

    def _check_params(self, params: dict) -> dict:
        corr = np.asarray(params["corr"], dtype=float)
        if corr.shape != (self.dim, self.dim):
            raise ValueError(
                f"corr must have shape ({self.dim}, {self.dim}) for a {self.dim}-dimensional "
                f"copula, got {corr.shape}."
            )
        return {**params, "corr": corr}

    def supports_intervals(self, n_interval_axes: int) -> bool:
        # conditional distribution functions of at most two variables are available
        return n_interval_axes <= 2

    def _conditional(self, X: np.ndarray, K: tuple[int, ...], corr: np.ndarray):
        """For the axes ``D`` outside ``K``: standardized conditional points given ``X_K``,
        their conditional correlation, and ``L_K`` (the Cholesky factor of ``R_KK``)."""
        M = X.shape[1]
        Kl = list(K)
        D = [j for j in range(M) if j not in K]
        if len(D) > 2:
            raise NotImplementedError(
                f"the {self.family} copula's likelihood with {len(D)} interval coordinates "
                "needs a multivariate distribution function of more than two variables."
            )
        if Kl:
            R_KK = corr[np.ix_(Kl, Kl)]
            B = np.linalg.solve(R_KK, corr[np.ix_(Kl, D)]).T  # R_DK R_KK^{-1}
            mu = np.einsum("ik,dk->id", X[:, Kl], B)
            S = corr[np.ix_(D, D)] - B @ corr[np.ix_(Kl, D)]
            L_K = np.linalg.cholesky(R_KK)
        else:
            mu, S, L_K = np.zeros((X.shape[0], len(D))), corr[np.ix_(D, D)], None
        sd = np.sqrt(np.diag(S))
        with np.errstate(invalid="ignore"):
            Y = (X[:, D] - mu) / sd
        rho = S[0, 1] / (sd[0] * sd[1]) if len(D) == 2 else None
        return Y, rho, L_K

    def _pairwise_gaussian_corr(self, lo: np.ndarray, hi: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Correlation matrix of bivariate Gaussian-copula fits on each pair of axes (the
        polychoric / polyserial correlations when some scores are discrete)."""
        M = lo.shape[1]
        C = np.eye(M)
        for j in range(M):
            for k in range(j + 1, M):
                pair = GaussianCopula(dim=2).fit(lo[:, [j, k]], w, upper=hi[:, [j, k]])
                C[j, k] = C[k, j] = pair.params["corr"][0, 1]
        return as_correlation(C)


class GaussianCopula(_Elliptical):
    """Gaussian copula with correlation matrix ``corr`` (``params = {"corr": R}``).

    Fit: M = 2, maximum likelihood in ``atanh(rho)``. M > 2: the weighted correlation of the
    normal scores ``Phi^{-1}(u)`` (van der Waerden), a standard estimator and, for the
    Gaussian copula with unknown margins, a semiparametrically efficient one (Klaassen &
    Wellner 1997); it is not the likelihood maximizer given the pseudo-observations. With
    intervals (discrete scores) and M > 2: each pair's maximum-likelihood correlation (the
    polychoric / polyserial correlations), made positive definite.
    """

    family = "gaussian"

    def n_params(self) -> int:
        return self.dim * (self.dim - 1) // 2

    def _logpdf(self, U, params):
        return _gaussian_logpdf(U, params["corr"])

    def _partial(self, U, K, params):
        corr = params["corr"]
        Z = ndtri(U)
        Y, rho, _ = self._conditional(Z, K, corr)
        log_c = _gaussian_logpdf(U[:, list(K)], corr[np.ix_(K, K)]) if len(K) >= 2 else 0.0
        prob = ndtr(Y[:, 0]) if rho is None else bvn_cdf(Y[:, 0], Y[:, 1], rho)
        return np.exp(log_c) * prob

    def _fit_points(self, U, w):
        if U.shape[1] > 2:
            R = normal_scores_correlation(U, w)
            return {"corr": R}, wsum(w, _gaussian_logpdf(U, R))
        Z = ndtri(U)
        s2 = Z[:, 0] ** 2 + Z[:, 1] ** 2
        p = Z[:, 0] * Z[:, 1]
        sw, ws2, wp = w.sum(), wsum(w, s2), wsum(w, p)

        def loglik(r: float) -> float:
            rho = np.tanh(r)
            log_om = -2.0 * np.log(np.cosh(r))  # log(1 - rho^2)
            return -0.5 * sw * log_om - (rho * rho * ws2 - 2.0 * rho * wp) / (2.0 * np.exp(log_om))

        r, ll = maximize_1d(loglik, -_ATANH_MAX, _ATANH_MAX)
        return {"corr": _corr2(float(np.tanh(r)))}, ll

    def _fit_intervals(self, lo, hi, w):
        if lo.shape[1] > 2:
            R = self._pairwise_gaussian_corr(lo, hi, w)
            return {"corr": R}, wsum(w, self._log_ratio(lo, hi, {"corr": R}))
        prep = self._prepare(lo, hi)

        def loglik(r: float) -> float:
            return wsum(w, self._evaluate(prep, {"corr": _corr2(float(np.tanh(r)))}))

        r, ll = maximize_1d(loglik, -_ATANH_MAX, _ATANH_MAX)
        return {"corr": _corr2(float(np.tanh(r)))}, ll

    def _sample(self, n, rng, params):
        R = params["corr"]
        return ndtr(rng.multivariate_normal(np.zeros(R.shape[0]), R, size=n))


class StudentCopula(_Elliptical):
    """Student-t copula, ``params = {"corr": R, "df": nu}``.

    Fit: M = 2, the profile likelihood in ``log df`` (grid + Brent), maximized over
    ``atanh(rho)`` for each ``df``. M > 2: ``R`` from the inversion of Kendall's tau,
    ``R_jk = sin(pi tau_jk / 2)`` (valid for every elliptical copula; Demarta & McNeil 2005),
    then the profile likelihood in ``df``. With intervals (discrete scores) and M > 2, ``R`` is
    the pairwise Gaussian estimate of :class:`GaussianCopula` instead (Kendall's tau is biased
    by ties), then ``df`` is profiled.
    """

    family = "student"
    #: Bounds of the degrees of freedom.
    df_bounds = (2.0, 50.0)

    def n_params(self) -> int:
        return self.dim * (self.dim - 1) // 2 + 1

    def _check_params(self, params: dict) -> dict:
        return {**super()._check_params(params), "df": float(params["df"])}

    def _logpdf(self, U, params):
        df = float(params["df"])
        return _student_logpdf_from_quantiles(student_quantiles(U, df), _chol(params["corr"]), df)

    @staticmethod
    def _quantiles(U: np.ndarray, df: float) -> np.ndarray:
        """t quantiles, exactly +-inf at 1 and 0."""
        inner = (U > 0.0) & (U < 1.0)
        X = np.where(U >= 1.0, np.inf, -np.inf)
        X[inner] = student_quantiles(U[inner], df)
        return X

    def _cached_quantiles(self, U: np.ndarray, df: float) -> np.ndarray:
        """:meth:`_quantiles`, remembered for the arrays of a fit (the profile likelihood
        evaluates the same corners at one ``df`` for many correlations)."""
        cache = self.__dict__.setdefault("_quantile_cache", {})
        hit = cache.get((id(U), df))
        if hit is not None and hit[0] is U:
            return hit[1]
        if len(cache) >= 16:
            cache.clear()
        X = self._quantiles(U, df)
        cache[(id(U), df)] = (U, X)
        return X

    def _partial(self, U, K, params):
        corr, df = params["corr"], float(params["df"])
        X = self._cached_quantiles(U, df)
        Y, rho, L_K = self._conditional(X, K, corr)
        k = len(K)
        if k:
            Xk = X[:, list(K)]
            log_c = _student_logpdf_from_quantiles(Xk, L_K, df) if k >= 2 else 0.0
            # given X_K, X_D is t with df + k degrees of freedom and scale sqrt((df + q) / (df + k))
            Y = Y / np.sqrt((df + _mahalanobis(Xk, L_K)) / (df + k))[:, None]
        else:
            log_c = 0.0
        prob = stdtr(df + k, Y[:, 0]) if rho is None else bvt_cdf(Y[:, 0], Y[:, 1], rho, df + k)
        return np.exp(log_c) * prob

    def _log_df_bounds(self) -> tuple[float, float]:
        return float(np.log(self.df_bounds[0])), float(np.log(self.df_bounds[1]))

    def _fit_points(self, U, w):
        M = U.shape[1]
        if M > 2:
            R = tau_correlation(U, w)
            L = np.linalg.cholesky(R)

            def profile(log_df: float) -> float:
                df = float(np.exp(log_df))
                X = student_quantiles(U, df)
                return wsum(w, _student_logpdf_from_quantiles(X, L, df))

            log_df, ll = maximize_1d(profile, *self._log_df_bounds(), n_grid=7, xatol=_DF_XATOL)
            return {"corr": R, "df": float(np.exp(log_df))}, ll

        best_rho: dict[float, float] = {}

        def profile(log_df: float) -> float:
            df = float(np.exp(log_df))
            X = student_quantiles(U, df)
            s2 = X[:, 0] ** 2 + X[:, 1] ** 2
            p = X[:, 0] * X[:, 1]
            const = gammaln(0.5 * (df + 2)) + gammaln(0.5 * df) - 2 * gammaln(0.5 * (df + 1))
            marg = wsum(w, 0.5 * (df + 1) * np.sum(np.log1p(X * X / df), axis=1))
            sw = w.sum()

            def loglik(r: float) -> float:
                rho = np.tanh(r)
                log_om = -2.0 * np.log(np.cosh(r))
                q = (s2 - 2.0 * rho * p) / (df * np.exp(log_om))
                return sw * (const - 0.5 * log_om) - 0.5 * (df + 2) * wsum(w, np.log1p(q)) + marg

            # inner problem, solved ~10 times: a 3-point grid (the sign of rho) before Brent
            r, ll = maximize_1d(loglik, -_ATANH_MAX, _ATANH_MAX, n_grid=3)
            best_rho[log_df] = float(np.tanh(r))
            return ll

        log_df, ll = maximize_1d(profile, *self._log_df_bounds(), n_grid=5, xatol=_DF_XATOL)
        return {"corr": _corr2(best_rho[log_df]), "df": float(np.exp(log_df))}, ll

    def _fit_intervals(self, lo, hi, w):
        prep = self._prepare(lo, hi)
        if lo.shape[1] > 2:
            R = self._pairwise_gaussian_corr(lo, hi, w)

            def profile(log_df: float) -> float:
                return wsum(w, self._evaluate(prep, {"corr": R, "df": float(np.exp(log_df))}))

            log_df, ll = maximize_1d(profile, *self._log_df_bounds(), n_grid=7, xatol=_DF_XATOL)
            return {"corr": R, "df": float(np.exp(log_df))}, ll

        # M = 2: both parameters at once (a profile over df costs ~300 evaluations of t
        # distribution functions; this ~60), started from the Gaussian copula's correlation
        # and the best df of a coarse grid
        r0 = float(np.arctanh(GaussianCopula(dim=2)._fit_intervals(lo, hi, w)[0]["corr"][0, 1]))
        log_df_lo, log_df_hi = self._log_df_bounds()

        def neg(x: np.ndarray) -> float:
            params = {"corr": _corr2(float(np.tanh(x[0]))), "df": float(np.exp(x[1]))}
            v = wsum(w, self._evaluate(prep, params))
            return -v if np.isfinite(v) else _BAD

        starts = [np.array([r0, t]) for t in np.linspace(log_df_lo, log_df_hi, 4)]
        x0 = min(starts, key=neg)
        res = minimize(
            neg,
            x0,
            method="L-BFGS-B",
            bounds=[(-_ATANH_MAX, _ATANH_MAX), (log_df_lo, log_df_hi)],
            options={"ftol": 1e-12, "gtol": 1e-7},
        )
        x = res.x if res.fun <= neg(x0) else x0
        return {"corr": _corr2(float(np.tanh(x[0]))), "df": float(np.exp(x[1]))}, -neg(x)

    def _sample(self, n, rng, params):
        R, df = params["corr"], float(params["df"])
        Z = rng.multivariate_normal(np.zeros(R.shape[0]), R, size=n)
        X = Z / np.sqrt(rng.chisquare(df, size=(n, 1)) / df)
        return stdtr(df, X)


# ---------------------------------------------------------------------------------------------
# Archimedean families: C(u) = psi(sum_m psi^{-1}(u_m)).


class _Archimedean(OneParameterCopula):
    """Mixed derivatives from the generator ``psi``; a family gives, in log space,
    ``psi^{-1}(u)``, ``(-1)^k psi^{(k)}(s)`` and ``-(psi^{-1})'(u)``."""

    def _log_inv_gen(self, U: np.ndarray, theta: float) -> np.ndarray:
        """``log psi^{-1}(u)`` (``-inf`` at ``u = 1``)."""
        raise NotImplementedError

    def _log_gen_deriv(self, k: int, log_s: np.ndarray, theta: float) -> np.ndarray:
        """``log((-1)^k psi^{(k)}(s))`` at ``s = exp(log_s)``."""
        raise NotImplementedError

    def _log_neg_inv_gen_deriv(self, U: np.ndarray, theta: float) -> np.ndarray:
        """``log(-(psi^{-1})'(u))``."""
        raise NotImplementedError

    def _archimedean_partial(self, U: np.ndarray, K: tuple[int, ...], theta: float) -> np.ndarray:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            log_s = logsumexp_rows(self._log_inv_gen(U, theta))
            out = self._log_gen_deriv(len(K), log_s, theta)
            if K:
                out = out + np.sum(self._log_neg_inv_gen_deriv(U[:, list(K)], theta), axis=1)
            return np.exp(np.where(np.isnan(out), -np.inf, out))

    def _partial(self, U, K, params):
        return self._archimedean_partial(U, K, float(params["theta"]))


class ClaytonCopula(_Archimedean):
    """Clayton copula, ``theta > 0``, any M; ``psi(s) = (1 + s)^(-1/theta)``.

    ``c(u) = prod_{k<M}(1 + k theta) prod_m u_m^{-(1+theta)}
    (1 + sum_m (u_m^{-theta} - 1))^{-(M + 1/theta)}``, the last factor in log space without
    overflow. Lower tail dependence; rotate it by 180 degrees for upper tail dependence, by 90
    or 270 for negative dependence.
    """

    family = "clayton"
    rotations = (0, 90, 180, 270)
    default_rotations = (0, 180)
    #: Bounds of ``theta`` (searched on ``log theta``).
    bounds = (1e-4, 50.0)

    def theta_bounds(self):
        return self.bounds

    def _logpdf(self, U, params):
        theta = float(params["theta"])
        M = U.shape[1]
        logU = np.log(U)
        const = float(np.sum(np.log1p(theta * np.arange(M))))
        return (
            const
            - (1.0 + theta) * logU.sum(axis=1)
            - (M + 1.0 / theta) * log1p_sum_expm1(-theta * logU)
        )

    def _log_inv_gen(self, U, theta):
        x = -theta * np.log(U)  # log(u^-theta - 1) = x + log(1 - e^-x)
        return x + log_neg_expm1(x)

    def _log_gen_deriv(self, k, log_s, theta):
        const = float(np.sum(np.log(1.0 / theta + np.arange(k))))
        return const - (1.0 / theta + k) * np.logaddexp(0.0, log_s)

    def _log_neg_inv_gen_deriv(self, U, theta):
        return np.log(theta) - (theta + 1.0) * np.log(U)

    def _sample(self, n, rng, params):
        theta = float(params["theta"])
        V = rng.gamma(1.0 / theta, size=(n, 1))
        E = rng.exponential(size=(n, self.dim))
        return (1.0 + E / V) ** (-1.0 / theta)


class GumbelCopula(_Archimedean):
    """Gumbel copula, ``theta >= 1``, any M; ``psi(s) = exp(-s^(1/theta))``.

    With ``x_m = -log u_m``, ``t = sum_m x_m^theta``, ``s = t^(1/theta)``:
    ``log c = -s - M log t + log P_M(s) + M log theta + sum_m ((theta - 1) log x_m + x_m)``,
    ``P_M(s) = sum_k a_{Mk}(1/theta) s^k`` (for M = 2: ``P = s (theta - 1 + s) / theta^2``,
    used in closed form). Upper tail dependence; rotations as for Clayton.
    """

    family = "gumbel"
    rotations = (0, 90, 180, 270)
    default_rotations = (0, 180)
    #: Bounds of ``theta`` (searched on ``log theta``).
    bounds = (1.0, 50.0)

    def theta_bounds(self):
        return self.bounds

    def _logpdf(self, U, params):
        theta = float(params["theta"])
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
        log_t = logsumexp_rows(theta * logX)
        log_s = log_t / theta
        s = np.exp(log_s)
        with np.errstate(divide="ignore"):
            log_a = np.log(gumbel_poly_coefficients(M, 1.0 / theta))
        log_P = logsumexp_rows(log_a[None, :] + np.arange(1, M + 1)[None, :] * log_s[:, None])
        return -s - M * log_t + log_P + M * np.log(theta) + np.sum((theta - 1.0) * logX + X, axis=1)

    def _log_inv_gen(self, U, theta):
        return theta * np.log(-np.log(U))

    def _log_gen_deriv(self, k, log_s, theta):
        alpha = 1.0 / theta
        out = -np.exp(alpha * log_s)
        if k == 0:
            return out
        log_a = np.log(gumbel_poly_coefficients(k, alpha))
        j = np.arange(1, k + 1)
        poly = logsumexp_rows(log_a[None, :] + j[None, :] * (alpha * log_s)[:, None])
        return out - k * log_s + poly

    def _log_neg_inv_gen_deriv(self, U, theta):
        x = -np.log(U)
        return np.log(theta) + (theta - 1.0) * np.log(x) + x

    def _sample(self, n, rng, params):
        alpha = 1.0 / float(params["theta"])
        E = rng.exponential(size=(n, self.dim))
        if alpha == 1.0:
            return np.exp(-E)
        # positive alpha-stable frailty with Laplace transform exp(-t^alpha) (Kanter 1975)
        W = rng.uniform(0.0, np.pi, size=(n, 1))
        E0 = rng.exponential(size=(n, 1))
        V = (np.sin(alpha * W) / np.sin(W) ** (1.0 / alpha)) * (np.sin((1.0 - alpha) * W) / E0) ** (
            (1.0 - alpha) / alpha
        )
        return np.exp(-((E / V) ** alpha))


class FrankCopula(_Archimedean):
    """Frank copula; ``theta != 0`` for M = 2, ``theta > 0`` for M > 2.

    ``psi(s) = -log(1 - (1 - e^-theta) e^-s) / theta``. For M = 2 and ``theta > 0``,
    ``c = theta (1 - e^-theta) e^{-theta(u+v)} / D^2`` with the denominator written as a sum
    of two non-negative terms, ``D = e^{-theta u}(1 - e^{-theta v}) + e^{-theta v}(1 -
    e^{-theta(1-v)})``, so it never cancels; a negative ``theta`` uses
    ``C_{-theta}(u, v) = u - C_theta(u, 1 - v)``. For M > 2 the density is
    ``theta^{M-1} Li_{-(M-1)}(z) / prod_m (e^{theta u_m} - 1)`` with
    ``z = (1 - e^{-theta})^{1-M} prod_m (1 - e^{-theta u_m})``, the polylogarithm expanded as
    a sum of positive terms in ``x = z / (1 - z)`` (Hofert, Maechler & McNeil 2012).
    """

    family = "frank"
    log_scale = False
    #: Bounds of ``theta`` for M = 2 and for M > 2.
    bounds = (-50.0, 50.0)
    bounds_multivariate = (1e-4, 50.0)

    def theta_bounds(self):
        return self.bounds if self.dim == 2 else self.bounds_multivariate

    def _check_params(self, params: dict) -> dict:
        theta = float(params["theta"])
        if theta < 0 and self.dim > 2:
            raise ValueError(f"the Frank copula needs theta > 0 when M > 2, got {theta}.")
        return {"theta": theta}

    def _logpdf(self, U, params):
        theta = float(params["theta"])
        M = U.shape[1]
        if theta == 0.0:
            return np.zeros(U.shape[0])
        if M == 2:
            u, v = U[:, 0], U[:, 1]
            if theta < 0:
                theta, v = -theta, 1.0 - v
            logD = np.logaddexp(
                -theta * u + log_neg_expm1(theta * v),
                -theta * v + log_neg_expm1(theta * (1.0 - v)),
            )
            return np.log(theta) + log_neg_expm1(theta) - theta * (u + v) - 2.0 * logD
        if theta < 0:
            raise ValueError(f"the Frank copula needs theta > 0 when M > 2, got {theta}.")
        k = M - 1
        log_z = (1 - M) * log_neg_expm1(theta) + np.sum(log_neg_expm1(theta * U), axis=1)
        log_x = log_z - np.log(-np.expm1(log_z))
        coef = polylog_log_coefficients(k)
        log_li = logsumexp_rows(coef[None, :] + np.arange(1, k + 2)[None, :] * log_x[:, None])
        # log(e^y - 1) = y + log(1 - e^-y), exact for every y > 0
        log_expm1 = theta * U + log_neg_expm1(theta * U)
        return k * np.log(theta) + log_li - log_expm1.sum(axis=1)

    def _log_inv_gen(self, U, theta):
        # psi^{-1}(u) = log(1 + e^{-theta u} (1 - e^{-theta (1 - u)}) / (1 - e^{-theta u}))
        ratio = np.exp(-theta * U + log_neg_expm1(theta * (1.0 - U)) - log_neg_expm1(theta * U))
        return np.log(np.log1p(ratio))

    def _log_gen_deriv(self, k, log_s, theta):
        log_z = log_neg_expm1(theta) - np.exp(log_s)
        # 1 - z from log z without cancellation (z is within 1e-17 of 1 for large theta)
        log_1mz = np.log(-np.expm1(log_z))
        if k == 0:
            return np.log(-log_1mz) - np.log(theta)
        log_x = log_z - log_1mz
        coef = polylog_log_coefficients(k - 1)
        log_li = logsumexp_rows(coef[None, :] + np.arange(1, k + 1)[None, :] * log_x[:, None])
        return log_li - np.log(theta)

    def _log_neg_inv_gen_deriv(self, U, theta):
        return np.log(theta) - theta * U - log_neg_expm1(theta * U)

    def _partial(self, U, K, params):
        theta = float(params["theta"])
        if theta == 0.0:
            return IndependenceCopula(self.dim)._partial(U, K, {})
        if theta > 0:
            return self._archimedean_partial(U, K, theta)
        # bivariate, theta < 0: C(u, v) = u - C_{|theta|}(u, 1 - v)
        R = U.copy()
        R[:, 1] = 1.0 - R[:, 1]
        inner = self._archimedean_partial(R, K, -theta)
        if 1 in K:
            return inner
        return (1.0 if 0 in K else U[:, 0]) - inner

    def _sample(self, n, rng, params):
        return self._frank(float(params["theta"]), n, self.dim, rng)

    def _frank(self, theta, n, M, rng):
        if theta < 0:
            U = self._frank(-theta, n, 2, rng)
            U[:, 1] = 1.0 - U[:, 1]
            return U
        # logarithmic-series frailty: P(V = k) proportional to p^k / k with p = 1 - e^-theta
        p = -np.expm1(-theta)
        V = stats.logser.rvs(p, size=(n, 1), random_state=rng)
        E = rng.exponential(size=(n, M))
        return -np.log1p(-p * np.exp(-E / V)) / theta


# ---------------------------------------------------------------------------------------------
# Plackett (bivariate).


def plackett_cdf(u: np.ndarray, v: np.ndarray, theta: float) -> np.ndarray:
    """Plackett copula CDF (Nelsen 2006, eq. 3.3.3); ``u * v`` at ``theta = 1``."""
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    eta = theta - 1.0
    if abs(eta) < 1e-12:
        return u * v
    a = 1.0 + eta * (u + v)
    return (a - np.sqrt(a * a - 4.0 * theta * eta * u * v)) / (2.0 * eta)


class PlackettCopula(OneParameterCopula):
    """Plackett copula, ``theta > 0`` (``theta = 1`` is independence), bivariate.

    ``c = theta (1 + eta s) / Delta^{3/2}`` with ``eta = theta - 1``, ``s = u + v - 2uv`` and
    ``Delta = (1 + eta (u + v))^2 - 4 theta eta u v``, rewritten as
    ``1 + 2 eta s + eta^2 (u - v)^2`` whose terms are all non-negative when ``theta >= 1``.
    The conditional CDF is ``dC/du = 1/2 - (1 + eta (u + v) - 2 theta v) / (2 sqrt(Delta))``.
    """

    family = "plackett"
    bivariate_only = True
    #: Bounds of ``theta`` (searched on ``log theta``).
    bounds = (float(np.exp(-10.0)), float(np.exp(10.0)))

    def theta_bounds(self):
        return self.bounds

    @staticmethod
    def _delta(u, v, eta):
        return 1.0 + 2.0 * eta * (u + v - 2.0 * u * v) + eta * eta * (u - v) ** 2

    def _logpdf(self, U, params):
        theta = float(params["theta"])
        u, v = U[:, 0], U[:, 1]
        eta = theta - 1.0
        s = u + v - 2.0 * u * v
        delta = 1.0 + 2.0 * eta * s + eta * eta * (u - v) ** 2
        return np.log(theta) + np.log1p(eta * s) - 1.5 * np.log(delta)

    def _partial(self, U, K, params):
        theta = float(params["theta"])
        u, v = U[:, 0], U[:, 1]
        if not K:
            return plackett_cdf(u, v, theta)
        eta = theta - 1.0
        a = 1.0 + eta * (u + v)
        other = v if K == (0,) else u
        return np.clip(
            0.5 - (a - 2.0 * theta * other) / (2.0 * np.sqrt(self._delta(u, v, eta))), 0, 1
        )

    def _sample(self, n, rng, params):
        theta = float(params["theta"])
        # conditional inversion (Johnson 1987, via Nelsen 2006 Exercise 3.38)
        u = rng.random(n)
        t = rng.random(n)
        a = t * (1.0 - t)
        b = theta + a * (theta - 1.0) ** 2
        c = 2.0 * a * (u * theta**2 + 1.0 - u) + theta * (1.0 - 2.0 * a)
        d = np.sqrt(theta) * np.sqrt(theta + 4.0 * a * u * (1.0 - u) * (1.0 - theta) ** 2)
        v = (c - (1.0 - 2.0 * t) * d) / (2.0 * b)
        return np.column_stack([u, v])


# ---------------------------------------------------------------------------------------------
# Names.

_CLASSES = registry()

#: Default candidate families (``families="all"``), in the order used to break ties in
#: selection (simplest first).
FAMILIES = tuple(cls.name_for(r) for cls in _CLASSES.values() for r in cls.default_rotations)
#: Every accepted family name (the rotations by 90 and 270 degrees included).
KNOWN_FAMILIES = tuple(cls.name_for(r) for cls in _CLASSES.values() for r in cls.rotations)
#: Families defined only for two scores.
BIVARIATE_ONLY = frozenset(
    cls.name_for(r) for cls in _CLASSES.values() for r in cls.rotations if cls.bivariate_only or r
)
#: Parameter bounds used by the maximum-likelihood fits (see the module table).
BOUNDS = {
    "rho": (-RHO_MAX, RHO_MAX),
    "df": StudentCopula.df_bounds,
    "clayton": ClaytonCopula.bounds,
    "gumbel": GumbelCopula.bounds,
    "frank": FrankCopula.bounds,
    "frank_multivariate": FrankCopula.bounds_multivariate,
    "plackett": PlackettCopula.bounds,
}


def parse(name: str) -> tuple[type[Copula], int]:
    """``"gumbel_rot180"`` -> ``(GumbelCopula, 180)``; a clear ValueError for unknown names."""
    if isinstance(name, str):
        base, sep, rot = name.partition("_rot")
        cls = _CLASSES.get(base)
        if cls is not None and (not sep or (rot.isdigit() and int(rot) in cls.rotations[1:])):
            return cls, int(rot) if sep else 0
    raise ValueError(f"unknown copula family {name!r}; known families: {list(KNOWN_FAMILIES)}.")


def make(name: str, dim: int = 2, params: dict | None = None) -> Copula:
    """The copula object for a family name, dimension and (optional) parameters."""
    cls, rotation = parse(name)
    return cls(dim=dim, rotation=rotation, params=params)


def families_for_dimension(M: int) -> tuple[str, ...]:
    """The default candidate families in ``M`` dimensions, in :data:`FAMILIES` order.

    A single variable's only copula is independence (the uniform density).
    """
    if M == 1:
        return ("independence",)
    return tuple(f for f in FAMILIES if M == 2 or f not in BIVARIATE_ONLY)


def n_params(family: str, M: int) -> int:
    """Number of free parameters of a family in ``M`` dimensions (for AIC)."""
    return make(family, M).n_params()


def log_density(family: str, U: np.ndarray, params: dict) -> np.ndarray:
    """Log-density of ``family`` with ``params`` at rows of ``U`` (clipped into the cube).

    Parameters
    ----------
    family : str
        One of :data:`KNOWN_FAMILIES`.
    U : ndarray of shape (n, M)
        Points of ``[0, 1]^M``; clipped into ``[EPS, 1 - EPS]`` here.
    params : dict
        As stored in ``CopulaFusion.copula_params_`` (see the module table).

    Returns
    -------
    ndarray of shape (n,)
    """
    U = np.asarray(U, dtype=float)
    return make(family, U.shape[1], params).logpdf(U)


def sample(family: str, params: dict, n: int, M: int = 2, random_state=None) -> np.ndarray:
    """Draw ``n`` points of ``[0, 1]^M`` from a copula (for simulations and tests).

    Archimedean families use their frailty (Marshall-Olkin) representation, valid in any
    dimension; Plackett uses conditional inversion.

    Parameters
    ----------
    family : str
        One of :data:`KNOWN_FAMILIES`.
    params : dict
        ``{"corr": R}`` (gaussian), ``{"corr": R, "df": nu}`` (student), ``{"theta": t}``
        (the others), ``{}`` (independence). ``R`` must be ``(M, M)``.
    n : int
    M : int, default=2
        Dimension (ignored for the elliptical families, whose ``corr`` fixes it).
    random_state : int, Generator or None

    Returns
    -------
    ndarray of shape (n, M)
    """
    cls, rotation = parse(family)
    dim = np.shape(params["corr"])[0] if "corr" in params else M
    if (cls.bivariate_only or rotation) and dim != 2:
        raise ValueError(f"the {family} copula is bivariate; got M = {dim}.")
    return cls(dim=dim, rotation=rotation, params=params).sample(n, random_state)
