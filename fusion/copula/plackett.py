"""The Plackett copula family (bivariate; see :mod:`fusion.copula.families`)."""

from __future__ import annotations

import numpy as np

from .family import OneParameterCopula

__all__ = ["PlackettCopula", "plackett_cdf"]


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
