"""ENIR: BIC-weighted ensemble of the nearly-isotonic fits on the whole path (Naeini & Cooper 2016).

The 1-D scores are sorted and tied scores pooled into weighted groups; the nearly-isotonic
path of the groups' label means (:mod:`fusion.univariate.nearly_isotonic`) gives one model
per breakpoint ``lambda_t > 0`` (the saturated fit at ``lambda = 0`` is excluded, as in the
paper). Each model is a binning: its bins are the runs of equal fitted values. Model ``t``
is scored by

.. math:: \\mathrm{BIC}_t = -2 \\sum_i w_i \\log P_t(y_i) + \\mathrm{df}_t \\log n,

with ``P_t(y_i)`` the model's fitted value of ``i``'s bin clipped to ``[0, 1]`` (for
``y_i = 1``, one minus it for ``y_i = 0``), ``df_t`` the number of bins (distinct fitted
values along the sorted scores: two non-adjacent bins that happen to share a value count
twice, as in the original code's ``get_df_local``) and ``n`` the number of rows (the sum of
the weights: weights are frequency weights). Models are
averaged with weights ``exp(-(BIC_t - BIC_min) / 2)``. The averaged fitted values at the
distinct training scores are stored; a new score is mapped by linear interpolation between
the adjacent training scores, constant beyond the ends, clipped to ``[0, 1]``.

Computing ``BIC_t`` for all ``T`` models naively costs ``O(N T)``. Instead:

* ``sum_blocks [S log(S/W) + (W - S) log(1 - S/W)]`` bounds every model's log-likelihood
  from above (each bin's fitted value is replaced by its maximum-likelihood value, the bin's
  label mean). Bins only change at fusions, so the bound for all ``T`` models follows from
  one cumulative sum over the path's block table, giving a lower bound on every ``BIC_t``.
* Exact BICs are computed in increasing order of that bound until the bound exceeds the
  best exact BIC found by ``BIC_CUTOFF``; every skipped model then has a relative weight
  below ``exp(-BIC_CUTOFF / 2)`` (``2e-22``), so even a million of them move the average by
  less than double-precision rounding. Near the isotonic end, where the best models
  usually lie, a model has few bins and its exact BIC is cheap.
* The average itself is linear in the models: a block alive on breakpoints ``t1..t2``
  contributes ``(S sum_t w_t + drift sum_t w_t lambda_t) / W`` to its points, which prefix
  sums over ``t`` give in ``O(1)``, so the ensemble costs ``O(N + T)`` after the path.

Details of the original ENIR code (Matlab ``build.m``) that are *not* used here:

* its BIC adds ``df log(2 pi)`` to the penalty; this uses the textbook ``df log n``;
* it smooths each bin's value with a beta prior centred on the bin's mean *score*
  (``(p cnt + e_f (1 - c_e)) / (cnt + 1 - c_e)``), which presumes scores that are
  probabilities; here scores are ECDF ranks, so that prior would have no meaning.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import xlogy

from .._docs import estimator_doc
from .nearly_isotonic import NearIsotonicPath, near_isotonic_path, path_fit, pool_ties
from .reduction import UnivariateCalibrator

__all__ = ["BIC_CUTOFF", "ENIRFit", "enir_fit", "path_bic", "ENIRCalibrator"]

#: Models whose BIC exceeds the best by more than this are dropped (relative weight
#: below ``exp(-BIC_CUTOFF / 2)``).
BIC_CUTOFF = 100.0


@dataclass(frozen=True)
class ENIRFit:
    """Result of :func:`enir_fit` (plain arrays).

    Attributes
    ----------
    values : ndarray of shape (K,)
        Averaged fitted value at each group, in ``[0, 1]``.
    lambdas : ndarray of shape (T,)
        All breakpoints of the path.
    model_index : ndarray of int
        Breakpoint numbers (``1..T``) of the models with non-negligible weight.
    model_bic : ndarray
        Their BIC.
    model_weight : ndarray
        Their normalized weights (sum 1).
    """

    values: np.ndarray
    lambdas: np.ndarray
    model_index: np.ndarray
    model_bic: np.ndarray
    model_weight: np.ndarray


def _block_loglik(S: np.ndarray, W: np.ndarray, p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return xlogy(S, p) + xlogy(W - S, 1.0 - p)


def _alive_finder(path: NearIsotonicPath):
    """``alive(t)``: blocks alive at breakpoint ``t`` in time ~ (blocks dying after ``t``)."""
    order = np.argsort(-path.death, kind="stable")
    neg_death = -path.death[order]

    def alive(t: int) -> np.ndarray:
        k = int(np.searchsorted(neg_death, -t, side="left"))  # death > t
        cand = order[:k]
        return cand[path.birth[cand] <= t]

    return alive


def path_bic(path: NearIsotonicPath, n_obs: float, t: int, alive=None) -> float:
    """Exact BIC of the model at breakpoint ``t`` (``0..T``; ``t = 0`` is ``lambda = 0``)."""
    blocks = (alive or _alive_finder(path))(t)
    lam = 0.0 if t == 0 else path.lambdas[t - 1]
    ll = _block_loglik(path.sum[blocks], path.weight[blocks], path.values(blocks, lam)).sum()
    return float(-2.0 * ll + blocks.shape[0] * np.log(n_obs))


def enir_fit(y, sample_weight=None, *, n_obs: float | None = None) -> ENIRFit:
    """ENIR on an ordered sequence of pooled groups.

    Parameters
    ----------
    y : array-like of shape (K,)
        Label mean (in ``[0, 1]``) of each group, groups sorted by score.
    sample_weight : array-like of shape (K,), optional
        Positive total weight of each group (default 1).
    n_obs : float, optional
        ``n`` in the BIC penalty; default ``sum(sample_weight)``.

    Returns
    -------
    ENIRFit
    """
    y = np.asarray(y, dtype=float)
    w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if np.any((y < 0) | (y > 1)):
        raise ValueError("ENIR label means must lie in [0, 1].")
    n_obs = float(w.sum()) if n_obs is None else float(n_obs)
    path = near_isotonic_path(y, w)
    T = path.n_breakpoints
    alive = _alive_finder(path)
    log_n = np.log(n_obs)
    if T == 0:
        # The pooled labels are already isotonic: the path is that single fit.
        return ENIRFit(
            np.clip(path_fit(path, 0.0), 0.0, 1.0),
            path.lambdas,
            np.array([0]),
            np.array([path_bic(path, n_obs, 0, alive)]),
            np.ones(1),
        )

    # Lower bound of every BIC_t from the per-block maximum-likelihood log-likelihood.
    S, W = path.sum, path.weight
    g = _block_loglik(S, W, S / W)
    diff_ll = np.bincount(path.birth, g, T + 2) - np.bincount(path.death, g, T + 2)
    diff_df = np.bincount(path.birth, None, T + 2) - np.bincount(path.death, None, T + 2)
    upper_ll = np.cumsum(diff_ll)[1 : T + 1]
    df = np.rint(np.cumsum(diff_df)[1 : T + 1])
    lower_bic = -2.0 * upper_ll + df * log_n
    lower_bic -= 1e-9 * (np.abs(lower_bic) + 1.0)  # rounding of the cumulative sums

    bic = np.full(T, np.inf)
    best = np.inf
    for t in np.argsort(lower_bic, kind="stable").tolist():
        if lower_bic[t] > best + BIC_CUTOFF:
            break
        bic[t] = path_bic(path, n_obs, t + 1, alive)
        best = min(best, bic[t])
    keep = np.flatnonzero(bic <= best + BIC_CUTOFF)
    weight = np.zeros(T)
    weight[keep] = np.exp(-(bic[keep] - best) / 2.0)

    # Weighted average of the models, block by block with prefix sums over breakpoints.
    cw = np.r_[0.0, np.cumsum(weight)]
    cwl = np.r_[0.0, np.cumsum(weight * path.lambdas)]
    first = np.maximum(path.birth, 1)  # alive on breakpoints first..last
    last = np.minimum(path.death - 1, T)
    live = last >= first
    omega = np.where(live, cw[last] - cw[first - 1], 0.0)
    omega_l = np.where(live, cwl[last] - cwl[first - 1], 0.0)
    contrib = (S * omega + path.drift * omega_l) / W
    K = path.n_points
    acc = np.bincount(path.lo, contrib, K + 1) - np.bincount(path.hi, contrib, K + 1)
    values = np.cumsum(acc)[: path.n_points] / weight.sum()
    total = weight[keep].sum()
    return ENIRFit(
        values=np.clip(values, 0.0, 1.0),
        lambdas=path.lambdas,
        model_index=keep + 1,
        model_bic=bic[keep],
        model_weight=weight[keep] / total,
    )


@estimator_doc
@dataclass(eq=False, repr=False)
class ENIRCalibrator(UnivariateCalibrator):
    """Ensemble of near-isotonic regressions (ENIR; Naeini & Cooper 2016).

    Sorts the (normalized, for ``M >= 2`` combined) 1-D scores, pools ties, computes the
    whole nearly-isotonic solution path in ``O(N log N)`` and averages the fits at every
    breakpoint ``lambda > 0`` with BIC weights; see :mod:`fusion.univariate.enir` for the
    exact score and :mod:`fusion.univariate.nearly_isotonic` for the path. New 1-D scores
    are mapped by linear interpolation between the fitted values at the adjacent training
    scores (constant beyond them); with ``M = 1`` a new score between two training scores
    thus gets the mean of their fitted values (its normalized value is the mean of theirs,
    see Notes). The result is *nearly* monotone: ENIR deliberately allows local decreases
    that the data support.

    Parameters
    ----------
    {combine_parameter}
    {shared_parameters}
        (ENIR has no randomness: ``random_state`` is accepted for a uniform interface.)

    Attributes
    ----------
    knots_ : ndarray of shape (K,)
        Distinct training values of the 1-D score (on ``[0, 1]``).
    knot_values_ : ndarray of shape (K,)
        The ensemble's fitted value at each knot.
    lambdas_ : ndarray of shape (T,)
        Breakpoints of the path (one model each).
    model_lambdas_, model_bic_, model_weights_ : ndarray
        ``lambda``, BIC and normalized weight of the models whose weight is not negligible
        (relative weight above ``exp(-BIC_CUTOFF / 2)``); the others weigh ~0.
    monotone_ : bool
        Always False (ENIR is not monotone by design).
    {reduction_attributes}

    Notes
    -----
    ``sample_weight`` is honoured as frequency weights (a weight of 2 acts as a repeated
    row): tied scores are pooled with their total weight, the path minimizes the weighted
    squared error, and the BIC uses the weighted log-likelihood with ``n = sum(weights)``.
    Rows of zero weight are ignored (their scores are not knots).

    {rank_invariance}
    """

    _rank_based = True
    _parameter_constraints = {**UnivariateCalibrator._parameter_constraints}
    _fitted_attributes = (
        "knots_",
        "knot_values_",
        "lambdas_",
        "model_lambdas_",
        "model_bic_",
        "model_weights_",
    )

    def _fit_1d(self, t, y, sample_weight):
        knots, ybar, weight = pool_ties(t, y, sample_weight)
        ok = weight > 0
        knots, ybar, weight = knots[ok], ybar[ok], weight[ok]
        fit = enir_fit(ybar, weight, n_obs=float(sample_weight.sum()))
        self.knots_ = knots
        self.knot_values_ = fit.values
        self.lambdas_ = fit.lambdas
        idx = fit.model_index
        self.model_lambdas_ = np.r_[0.0, fit.lambdas][idx]  # index 0: the lambda = 0 fit
        self.model_bic_ = fit.model_bic
        self.model_weights_ = fit.model_weight

    def _predict_1d(self, t):
        return np.clip(np.interp(t, self.knots_, self.knot_values_), 0.0, 1.0)
