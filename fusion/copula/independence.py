"""The independence copula: no dependence, no parameter (see :mod:`fusion.copula.families`)."""

from __future__ import annotations

import numpy as np

from .family import Copula

__all__ = ["IndependenceCopula"]


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
