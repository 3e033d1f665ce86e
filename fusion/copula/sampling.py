"""Random draws from the copula families (for simulations and the known-truth tests).

Written here rather than taken from ``copulae`` because ``copulae`` 0.8's Frank sampler is
wrong for M > 2 (pairwise Kendall's tau 0.25 instead of 0.46 at ``theta = 5``), and it has no
Plackett or rotated families. Archimedean families use their frailty (Marshall-Olkin)
representation, valid in any dimension; Plackett uses conditional inversion.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.special import ndtr, stdtr

from .families import BIVARIATE_ONLY, FAMILIES

__all__ = ["sample"]


def sample(family: str, params: dict, n: int, M: int = 2, random_state=None) -> np.ndarray:
    """Draw ``n`` points of ``[0, 1]^M`` from a copula.

    Parameters
    ----------
    family : str
        One of :data:`fusion.copula.families.FAMILIES`.
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
    rng = np.random.default_rng(random_state)
    if family not in FAMILIES:
        raise ValueError(f"unknown copula family {family!r}; known families: {list(FAMILIES)}.")
    if family in BIVARIATE_ONLY and M != 2:
        raise ValueError(f"the {family} copula is bivariate; got M = {M}.")
    if family == "independence":
        return rng.random((n, M))
    if family in ("gaussian", "student"):
        R = np.asarray(params["corr"], dtype=float)
        Z = rng.multivariate_normal(np.zeros(R.shape[0]), R, size=n)
        if family == "gaussian":
            return ndtr(Z)
        df = float(params["df"])
        X = Z / np.sqrt(rng.chisquare(df, size=(n, 1)) / df)
        return stdtr(df, X)
    base, _, rotation = family.partition("_rot")
    theta = float(params["theta"])
    U = _ARCHIMEDEAN_SAMPLERS[base](theta, n, M, rng)
    return 1.0 - U if rotation else U


def _clayton(theta: float, n: int, M: int, rng) -> np.ndarray:
    V = rng.gamma(1.0 / theta, size=(n, 1))
    E = rng.exponential(size=(n, M))
    return (1.0 + E / V) ** (-1.0 / theta)


def _gumbel(theta: float, n: int, M: int, rng) -> np.ndarray:
    alpha = 1.0 / theta
    E = rng.exponential(size=(n, M))
    if alpha == 1.0:
        return np.exp(-E)
    # positive alpha-stable frailty with Laplace transform exp(-t^alpha) (Kanter 1975)
    W = rng.uniform(0.0, np.pi, size=(n, 1))
    E0 = rng.exponential(size=(n, 1))
    V = (np.sin(alpha * W) / np.sin(W) ** (1.0 / alpha)) * (np.sin((1.0 - alpha) * W) / E0) ** (
        (1.0 - alpha) / alpha
    )
    return np.exp(-((E / V) ** alpha))


def _frank(theta: float, n: int, M: int, rng) -> np.ndarray:
    if theta < 0:
        if M != 2:
            raise ValueError(f"the Frank copula needs theta > 0 when M > 2, got {theta}.")
        U = _frank(-theta, n, 2, rng)
        U[:, 1] = 1.0 - U[:, 1]
        return U
    # logarithmic-series frailty: P(V = k) proportional to p^k / k with p = 1 - e^-theta
    p = -np.expm1(-theta)
    V = stats.logser.rvs(p, size=(n, 1), random_state=rng)
    E = rng.exponential(size=(n, M))
    return -np.log1p(-p * np.exp(-E / V)) / theta


def _plackett(theta: float, n: int, M: int, rng) -> np.ndarray:
    # conditional inversion (Johnson 1987, via Nelsen 2006 Exercise 3.38)
    u = rng.random(n)
    t = rng.random(n)
    a = t * (1.0 - t)
    b = theta + a * (theta - 1.0) ** 2
    c = 2.0 * a * (u * theta**2 + 1.0 - u) + theta * (1.0 - 2.0 * a)
    d = np.sqrt(theta) * np.sqrt(theta + 4.0 * a * u * (1.0 - u) * (1.0 - theta) ** 2)
    v = (c - (1.0 - 2.0 * t) * d) / (2.0 * b)
    return np.column_stack([u, v])


_ARCHIMEDEAN_SAMPLERS = {
    "clayton": _clayton,
    "gumbel": _gumbel,
    "frank": _frank,
    "plackett": _plackett,
}
