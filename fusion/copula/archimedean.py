"""The Archimedean copula families, Clayton, Gumbel and Frank (see
:mod:`fusion.copula.families`): every mixed derivative from the generator's derivatives
(Hofert, Maechler & McNeil 2012)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from .dependence import RHO_MAX
from .family import OneParameterCopula
from .independence import IndependenceCopula
from .special import (
    gumbel_poly_coefficients,
    log1p_sum_expm1,
    log_neg_expm1,
    logsumexp_rows,
    polylog_log_coefficients,
)

__all__ = ["ClaytonCopula", "GumbelCopula", "FrankCopula"]

_ATANH_MAX = float(np.arctanh(RHO_MAX))
#: Tolerance on ``log df`` of the Student-t profile likelihood (flat for large df).
_DF_XATOL = 1e-3
#: Objective value standing in for a non-finite negative log-likelihood.
_BAD = 1e300


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
