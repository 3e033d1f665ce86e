"""The elliptical copula families, Gaussian and Student-t (see :mod:`fusion.copula.families`):
densities from the normal and t quantiles of the pseudo-observations, mixed derivatives as
conditional normal and t distribution functions."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import gammaln, ndtr, ndtri, stdtr

from .dependence import RHO_MAX, as_correlation, normal_scores_correlation, tau_correlation
from .family import Copula, maximize_1d, wsum
from .special import (
    bvn_cdf,
    bvt_cdf,
    student_quantiles,
)

__all__ = ["GaussianCopula", "StudentCopula"]

_ATANH_MAX = float(np.arctanh(RHO_MAX))
#: Tolerance on ``log df`` of the Student-t profile likelihood (flat for large df).
_DF_XATOL = 1e-3
#: Objective value standing in for a non-finite negative log-likelihood.
_BAD = 1e300


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
