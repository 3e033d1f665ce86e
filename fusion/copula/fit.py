"""Fitting every candidate copula family to one class's pseudo-observations, and selection.

All fits maximize the weighted log-likelihood ``sum_i w_i log c(u_i)`` on pseudo-observations
clipped into ``[EPS, 1 - EPS]`` (or, for discrete scores, the likelihood of intervals: see
:meth:`fusion.copula.family.Copula.log_ratio`), with the weights rescaled to sum to Kish's
effective size ``n_eff = (sum w)^2 / sum w^2`` (so that they are all 1 without
``sample_weight``, AIC's penalty is on the scale of the data, and multiplying every weight by
a constant changes nothing). Each family's estimator is described in its class
(:mod:`fusion.copula.families`). One-parameter families are fitted by bounded Brent on a
transformed scale (``log theta``; ``theta`` itself for Frank), started from the best point of
a coarse grid over the whole interval so that Brent works inside the bracket of the global
maximum. Independence has no parameter and log-likelihood 0; it is always a candidate, the
fallback when no family improves on it.

Selection: the highest log-likelihood (``"loglik"``, as in the paper) or the lowest
``AIC = 2 k - 2 loglik`` (``"aic"``); ties go to the family listed first in
:data:`~fusion.copula.families.FAMILIES` (independence first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .._validation import canonical_weights
from . import families as fam
from .family import NARROW

__all__ = ["fit_family", "fit_copula", "select_family", "unsupported_families"]


def fit_family(
    family: str, U: np.ndarray, w: np.ndarray, upper: np.ndarray | None = None
) -> tuple[dict, float]:
    """Maximum-likelihood fit of one family.

    Parameters
    ----------
    family : str
        One of :data:`~fusion.copula.families.KNOWN_FAMILIES`.
    U : ndarray of shape (n, M)
        Pseudo-observations in ``[0, 1]`` (clipped into ``[EPS, 1 - EPS]`` here), or the lower
        ends of intervals.
    w : ndarray of shape (n,)
        Non-negative weights (used as given: rescale them before if needed).
    upper : ndarray of shape (n, M), optional
        Upper ends of intervals (discrete scores); None when every coordinate is a point.

    Returns
    -------
    params : dict
        See :mod:`fusion.copula.families`.
    loglik : float
        ``sum_i w_i log c(u_i)`` at ``params`` (log-likelihood ratio to independence).
    """
    U = np.asarray(U, dtype=float)
    copula = fam.make(family, U.shape[1]).fit(U, np.asarray(w, dtype=float), upper=upper)
    return copula.params, copula.loglik


def select_family(logliks: dict[str, float], dimension: int, selection: str = "loglik") -> str:
    """The winning family: highest log-likelihood or lowest AIC; ties to the earlier family.

    Non-finite log-likelihoods never win; independence (log-likelihood 0) is the fallback.
    """
    order = [f for f in fam.KNOWN_FAMILIES if f in logliks]

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


def unsupported_families(families: Sequence[str], M: int, n_interval_axes: int) -> list[str]:
    """The families whose likelihood is not available with this many interval coordinates."""
    return [f for f in families if not fam.make(f, M).supports_intervals(n_interval_axes)]


def fit_copula(
    U: np.ndarray,
    w: np.ndarray,
    families: Sequence[str],
    selection: str = "loglik",
    upper: np.ndarray | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, dict], dict[str, float]]:
    """Fit every candidate family (independence always included) and select one.

    Parameters
    ----------
    U : ndarray of shape (n, M)
        Pseudo-observations of one class (lower ends of intervals when ``upper`` is given).
    w : ndarray of shape (n,)
        Non-negative weights, not all zero; rescaled here to sum to ``n_eff``.
    families : sequence of str
        Candidates (must be defined in ``M`` dimensions).
    selection : {"loglik", "aic"}
    upper : ndarray of shape (n, M), optional
        Upper ends of intervals (discrete scores). Rows with an interval coordinate that are
        identical are merged (weights added) before fitting.
    progress : callable, optional
        Called with each family's name after it is fitted.

    Returns
    -------
    family : str
        The selected family.
    params : dict
        Family name -> fitted parameters, for every candidate.
    loglik : dict
        Family name -> maximized log-likelihood (``-inf`` if it was not finite).
    """
    w = canonical_weights(w)  # bit-identical for proportional weights
    w = w * (w.sum() / np.sum(w * w))  # sums to (sum w)^2 / sum w^2
    keep = w > 0
    U, w = np.asarray(U, dtype=float)[keep], w[keep]
    if upper is not None:
        upper = np.asarray(upper, dtype=float)[keep]
        U, upper, w = _merge_interval_rows(U, upper, w)
    candidates = ["independence"] + [f for f in families if f != "independence"]
    params: dict[str, dict] = {}
    logliks: dict[str, float] = {}
    for family in candidates:
        p, ll = fit_family(family, U, w, upper)
        params[family] = p
        logliks[family] = float(ll) if np.isfinite(ll) else -np.inf
        if progress is not None:
            progress(family)
    return select_family(logliks, U.shape[1], selection), params, logliks


def _merge_interval_rows(lo: np.ndarray, hi: np.ndarray, w: np.ndarray):
    """Merge identical rows that hold an interval coordinate (weights add); point rows, the
    continuous scores, are kept as they are and first."""
    interval = np.any(hi - lo > NARROW, axis=1)
    if not interval.any():
        return lo, None, w
    points = ~interval
    keys = np.hstack([lo[interval], hi[interval]])
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    merged_w = np.bincount(inverse.reshape(-1), w[interval], minlength=unique.shape[0])
    M = lo.shape[1]
    return (
        np.vstack([lo[points], unique[:, :M]]),
        np.vstack([hi[points], unique[:, M:]]),
        np.concatenate([w[points], merged_w]),
    )
