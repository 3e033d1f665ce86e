"""Maximum-likelihood fit of each copula family and selection among them.

All fits maximize the weighted log-likelihood ``sum_i w_i log c(u_i)`` on pseudo-observations
clipped into ``[EPS, 1 - EPS]``, with the weights rescaled to sum to Kish's effective size
``n_eff = (sum w)^2 / sum w^2`` (so that they are all 1 without ``sample_weight``, and AIC's
penalty is on the scale of the data).

Estimators
    * One-parameter families (Clayton, Gumbel, Frank, Plackett and the rotations): bounded
      Brent on a transformed scale (``log theta``; ``theta`` itself for Frank), started from
      the best point of a coarse grid over the whole interval so that Brent works inside the
      bracket of the global maximum.
    * Gaussian, M = 2: the same for ``atanh(rho)``. M > 2: the weighted correlation of the
      normal scores ``Phi^{-1}(u)`` (van der Waerden), a standard estimator and, for the
      Gaussian copula with unknown margins, a semiparametrically efficient one (Klaassen &
      Wellner 1997); it is not the likelihood maximizer given the pseudo-observations.
    * Student-t, M = 2: the profile likelihood in ``log df`` (grid + Brent), maximized over
      ``atanh(rho)`` for each ``df``. M > 2: ``R`` from the inversion of Kendall's tau,
      ``R_jk = sin(pi tau_jk / 2)`` (valid for every elliptical copula; Demarta & McNeil
      2005), then the profile likelihood in ``df``.
    * Independence has no parameter and log-likelihood 0; it is always a candidate, the
      fallback when no family improves on it.

Selection: the highest log-likelihood (``"loglik"``, as in the paper) or the lowest
``AIC = 2 k - 2 loglik`` (``"aic"``); ties go to the family listed first in
:data:`~fusion.copula.families.FAMILIES` (independence first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import gammaln, ndtri
from scipy.stats import kendalltau

from . import families as fam

__all__ = [
    "fit_family",
    "fit_copula",
    "select_family",
    "kendall_tau",
    "tau_correlation",
    "normal_scores_correlation",
]

_RHO_MAX = fam.BOUNDS["rho"][1]
_ATANH_MAX = float(np.arctanh(_RHO_MAX))
_LOG_DF = (float(np.log(fam.BOUNDS["df"][0])), float(np.log(fam.BOUNDS["df"][1])))
#: Objective value standing in for a non-finite negative log-likelihood.
_BAD = 1e300


def _wsum(w: np.ndarray, v: np.ndarray) -> float:
    """``sum(w * v)`` without BLAS.

    ``w @ v`` goes to OpenBLAS, whose threads busy-wait when the cores are shared: measured
    6x slower fits at n = 20,000 on a loaded 2-core machine. The likelihoods here are summed
    hundreds of times per fit, so they stay on plain NumPy loops.
    """
    return float(np.einsum("i,i->", w, v))


def _maximize_1d(
    loglik: Callable[[float], float], lo: float, hi: float, n_grid: int = 9, xatol: float = 1e-5
) -> tuple[float, float]:
    """Maximize a scalar function on ``[lo, hi]``: coarse grid, then bounded Brent.

    Returns ``(argmax, max)``; the grid point is kept if Brent does not improve on it.
    ``n_grid < 3`` skips the grid (for objectives known to be unimodal).
    """

    def neg(t: float) -> float:
        v = loglik(t)
        return -v if np.isfinite(v) else _BAD

    if n_grid < 3:
        res = minimize_scalar(neg, bounds=(lo, hi), method="bounded", options={"xatol": xatol})
        return float(res.x), -float(res.fun)
    grid = np.linspace(lo, hi, n_grid)
    values = np.array([neg(t) for t in grid])
    k = int(np.argmin(values))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, n_grid - 1)]
    res = minimize_scalar(neg, bounds=(a, b), method="bounded", options={"xatol": xatol})
    if res.fun <= values[k]:
        return float(res.x), -float(res.fun)
    return float(grid[k]), -float(values[k])


def _corr2(rho: float) -> np.ndarray:
    return np.array([[1.0, rho], [rho, 1.0]])


def _as_correlation(C: np.ndarray) -> np.ndarray:
    """Nearest usable correlation matrix: positive definite, off-diagonals within bounds."""
    C = 0.5 * (C + C.T)
    vals, vecs = np.linalg.eigh(C)
    C = (vecs * np.maximum(vals, 1e-8)) @ vecs.T
    d = np.sqrt(np.diag(C))
    C = C / np.outer(d, d)
    M = C.shape[0]
    off = ~np.eye(M, dtype=bool)
    # shrink towards the identity until the bounds hold (shrinking keeps it positive definite)
    top = np.max(np.abs(C[off])) if M > 1 else 0.0
    if top > _RHO_MAX:
        C = np.where(off, C * (_RHO_MAX / top), 1.0)
    np.fill_diagonal(C, 1.0)
    return C


def normal_scores_correlation(U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted Pearson correlation of the normal scores ``Phi^{-1}(u)``."""
    Z = ndtri(U)
    w = w / w.sum()
    Zc = Z - np.einsum("i,ij->j", w, Z)
    return _as_correlation(np.einsum("i,ij,ik->jk", w, Zc, Zc))


def kendall_tau(x: np.ndarray, y: np.ndarray, w: np.ndarray, chunk: int = 512) -> float:
    """Weighted Kendall's tau-b: pairs weighted by ``w_i w_j``.

    Equal weights give ``scipy.stats.kendalltau`` (tau-b), which is used then
    (``O(n log n)``); otherwise the pairs are summed in row chunks (``O(n^2)`` time,
    ``O(chunk * n)`` memory).
    """
    keep = w > 0
    x, y, w = x[keep], y[keep], w[keep]
    if np.all(w == w[0]):
        tau = kendalltau(x, y).statistic
        return float(tau) if np.isfinite(tau) else 0.0
    concord = tx = ty = 0.0
    for a in range(0, x.shape[0], chunk):
        sx = np.sign(x[a : a + chunk, None] - x[None, :])
        sy = np.sign(y[a : a + chunk, None] - y[None, :])
        ww = w[a : a + chunk, None] * w[None, :]
        concord += np.sum(ww * sx * sy)
        tx += np.sum(ww * (sx != 0))
        ty += np.sum(ww * (sy != 0))
    if tx == 0 or ty == 0:
        return 0.0
    return float(concord / np.sqrt(tx * ty))


def tau_correlation(U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Correlation matrix ``sin(pi tau / 2)`` from pairwise weighted Kendall's tau."""
    M = U.shape[1]
    C = np.eye(M)
    for j in range(M):
        for k in range(j + 1, M):
            C[j, k] = C[k, j] = np.sin(0.5 * np.pi * kendall_tau(U[:, j], U[:, k], w))
    return _as_correlation(C)


# ---------------------------------------------------------------------------------------------
# Per-family fits; U is clipped, w rescaled. Each returns (params, loglik).


def _fit_gaussian(U: np.ndarray, w: np.ndarray) -> tuple[dict, float]:
    if U.shape[1] > 2:
        R = normal_scores_correlation(U, w)
        return {"corr": R}, _wsum(w, fam.gaussian_logpdf(U, R))
    Z = ndtri(U)
    s2 = Z[:, 0] ** 2 + Z[:, 1] ** 2
    p = Z[:, 0] * Z[:, 1]
    sw, ws2, wp = w.sum(), _wsum(w, s2), _wsum(w, p)

    def loglik(r: float) -> float:
        rho = np.tanh(r)
        log_om = -2.0 * np.log(np.cosh(r))  # log(1 - rho^2)
        return -0.5 * sw * log_om - (rho * rho * ws2 - 2.0 * rho * wp) / (2.0 * np.exp(log_om))

    r, ll = _maximize_1d(loglik, -_ATANH_MAX, _ATANH_MAX)
    return {"corr": _corr2(float(np.tanh(r)))}, ll


def _fit_student(U: np.ndarray, w: np.ndarray) -> tuple[dict, float]:
    M = U.shape[1]
    if M > 2:
        R = tau_correlation(U, w)
        L = np.linalg.cholesky(R)

        def profile(log_df: float) -> float:
            df = float(np.exp(log_df))
            X = fam.student_quantiles(U, df)
            return _wsum(w, fam._student_logpdf_from_quantiles(X, L, df))

        log_df, ll = _maximize_1d(profile, *_LOG_DF, n_grid=7, xatol=1e-3)
        return {"corr": R, "df": float(np.exp(log_df))}, ll

    best_rho: dict[float, float] = {}

    def profile(log_df: float) -> float:
        df = float(np.exp(log_df))
        X = fam.student_quantiles(U, df)
        s2 = X[:, 0] ** 2 + X[:, 1] ** 2
        p = X[:, 0] * X[:, 1]
        const = gammaln(0.5 * (df + 2)) + gammaln(0.5 * df) - 2 * gammaln(0.5 * (df + 1))
        marg = _wsum(w, 0.5 * (df + 1) * np.sum(np.log1p(X * X / df), axis=1))
        sw = w.sum()

        def loglik(r: float) -> float:
            rho = np.tanh(r)
            log_om = -2.0 * np.log(np.cosh(r))
            q = (s2 - 2.0 * rho * p) / (df * np.exp(log_om))
            return sw * (const - 0.5 * log_om) - 0.5 * (df + 2) * _wsum(w, np.log1p(q)) + marg

        # inner problem, solved ~10 times: a 3-point grid (the sign of rho) before Brent
        r, ll = _maximize_1d(loglik, -_ATANH_MAX, _ATANH_MAX, n_grid=3)
        best_rho[log_df] = float(np.tanh(r))
        return ll

    log_df, ll = _maximize_1d(profile, *_LOG_DF, n_grid=5, xatol=1e-3)
    return {"corr": _corr2(best_rho[log_df]), "df": float(np.exp(log_df))}, ll


def _one_parameter(base: str, M: int) -> tuple[Callable, float, float, Callable]:
    """(log-density, lower, upper, transform to theta) of a one-parameter family."""
    if base == "clayton":
        lo, hi = fam.BOUNDS["clayton"]
        return fam.clayton_logpdf, np.log(lo), np.log(hi), np.exp
    if base == "gumbel":
        lo, hi = fam.BOUNDS["gumbel"]
        return fam.gumbel_logpdf, np.log(lo), np.log(hi), np.exp
    if base == "plackett":
        lo, hi = fam.BOUNDS["plackett"]
        return fam.plackett_logpdf, np.log(lo), np.log(hi), np.exp
    if base == "frank":
        lo, hi = fam.BOUNDS["frank" if M == 2 else "frank_multivariate"]
        return fam.frank_logpdf, lo, hi, float
    raise ValueError(f"unknown copula family {base!r}; known families: {list(fam.FAMILIES)}.")


def fit_family(family: str, U: np.ndarray, w: np.ndarray) -> tuple[dict, float]:
    """Maximum-likelihood fit of one family.

    Parameters
    ----------
    family : str
        One of :data:`~fusion.copula.families.FAMILIES`.
    U : ndarray of shape (n, M)
        Pseudo-observations in ``[0, 1]`` (clipped into ``[EPS, 1 - EPS]`` here).
    w : ndarray of shape (n,)
        Non-negative weights (used as given: rescale them before if needed).

    Returns
    -------
    params : dict
        See :mod:`fusion.copula.families`.
    loglik : float
        ``sum_i w_i log c(u_i)`` at ``params``.
    """
    U = fam.clip_unit(np.asarray(U, dtype=float))
    w = np.asarray(w, dtype=float)
    M = U.shape[1]
    if family in fam.BIVARIATE_ONLY and M != 2:
        raise ValueError(f"the {family} copula is bivariate; got {M} dimensions.")
    if family == "independence":
        return {}, 0.0
    if family == "gaussian":
        return _fit_gaussian(U, w)
    if family == "student":
        return _fit_student(U, w)
    base, _, rotation = family.partition("_rot")
    if rotation:
        U = 1.0 - U
    logpdf, lo, hi, to_theta = _one_parameter(base, M)
    t, ll = _maximize_1d(lambda t: _wsum(w, logpdf(U, to_theta(t))), lo, hi)
    return {"theta": float(to_theta(t))}, ll


def select_family(logliks: dict[str, float], dimension: int, selection: str = "loglik") -> str:
    """The winning family: highest log-likelihood or lowest AIC; ties to the earlier family.

    Non-finite log-likelihoods never win; independence (log-likelihood 0) is the fallback.
    """
    order = [f for f in fam.FAMILIES if f in logliks]

    def score(f: str) -> float:
        ll = logliks[f]
        if not np.isfinite(ll):
            return -np.inf
        if selection == "aic":
            return -(2.0 * fam.n_params(f, dimension) - 2.0 * ll)
        if selection == "loglik":
            return ll
        raise ValueError(f"selection must be 'loglik' or 'aic', got {selection!r}.")

    best = "independence" if "independence" in logliks else order[0]
    for f in order:
        if score(f) > score(best):
            best = f
    return best


def fit_copula(
    U: np.ndarray, w: np.ndarray, families: Sequence[str], selection: str = "loglik"
) -> tuple[str, dict[str, dict], dict[str, float]]:
    """Fit every candidate family (independence always included) and select one.

    Parameters
    ----------
    U : ndarray of shape (n, M)
        Pseudo-observations of one class.
    w : ndarray of shape (n,)
        Non-negative weights, not all zero; rescaled here to sum to ``n_eff``.
    families : sequence of str
        Candidates (must be defined in ``M`` dimensions).
    selection : {"loglik", "aic"}

    Returns
    -------
    family : str
        The selected family.
    params : dict
        Family name -> fitted parameters, for every candidate.
    loglik : dict
        Family name -> maximized log-likelihood (``-inf`` if it was not finite).
    """
    w = np.asarray(w, dtype=float)
    w = w * (w.sum() / np.sum(w * w))  # sums to (sum w)^2 / sum w^2
    keep = w > 0
    U, w = np.asarray(U, dtype=float)[keep], w[keep]
    candidates = ["independence"] + [f for f in families if f != "independence"]
    params: dict[str, dict] = {}
    logliks: dict[str, float] = {}
    for family in candidates:
        p, ll = fit_family(family, U, w)
        params[family] = p
        logliks[family] = float(ll) if np.isfinite(ll) else -np.inf
    return select_family(logliks, U.shape[1], selection), params, logliks
