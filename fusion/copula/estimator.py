"""CopulaFusion: Bayes' rule with per-class KDE marginals and per-class copulas (Ozdemir 2017)."""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import expit
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import FusionEstimator
from . import families as fam
from .fit import fit_copula
from .kde import (
    MIN_BANDWIDTH,
    grid_position,
    grid_size,
    interpolate,
    reflected_kde,
    select_bandwidth,
)

__all__ = ["CopulaFusion"]


def _plain(label):
    """A class label as a plain Python scalar or str (JSON-friendly dict key)."""
    return label.item() if isinstance(label, np.generic) else label


class CopulaFusion(FusionEstimator):
    """Fusion by Bayes' rule with per-class KDE marginals and a copula chosen by likelihood.

    For each class ``l`` the scores are modelled by their marginal densities and a copula
    (Sklar), so on ECDF-normalized scores ``u``

    .. math:: f(u) = \\frac{\\pi_1 c_1(F_{11}(u_1), \\dots, F_{1M}(u_M)) \\prod_m f_{1m}(u_m)}
              {\\sum_{l \\in \\{0, 1\\}} \\pi_l c_l(F_{l1}(u_1), \\dots) \\prod_m f_{lm}(u_m)},

    computed in log space (Wang & Liu 2020, eqs. (4)-(5); Ozdemir et al. 2017).

    * ``pi_l``: (weighted) class frequencies.
    * ``f_lm``, ``F_lm``: reflection-corrected Gaussian KDE of score ``m`` in class ``l`` on
      ``[0, 1]``, tabulated on a fine grid at fit (see :mod:`fusion.copula.kde` for the
      evaluation and its error).
    * ``c_l``: every candidate family is fitted by maximum likelihood on the class's
      pseudo-observations ``F_lm(u_im)``; the one with the highest log-likelihood (or lowest
      AIC) is kept. Independence is always a candidate (the fallback).

    Parameters
    ----------
    families : "all", a family name or a list of names, default="all"
        Candidate copula families among ``"gaussian"``, ``"student"``, ``"clayton"``,
        ``"clayton_rot180"``, ``"gumbel"``, ``"gumbel_rot180"``, ``"frank"``,
        ``"plackett"``, ``"independence"``. ``"all"`` means every family defined for the
        number of scores (the rotations and Plackett are bivariate only; a single score
        has only the independence copula, so the model is then Bayes' rule with KDE
        class-conditional densities).
    selection : {"loglik", "aic"}, default="loglik"
        Highest log-likelihood (the paper's criterion) or lowest AIC.
    bandwidth : {"silverman", "scott", "cv"} or float, default="silverman"
        KDE bandwidth on the normalized scale: statsmodels' rules of thumb (weighted when
        ``sample_weight`` is given), likelihood cross-validation, or a fixed value (at
        least 0.001) for every marginal.

    Attributes
    ----------
    class_prior_ : ndarray of shape (2,)
        ``P(Y = classes_[l])``, weighted class frequencies.
    bandwidths_ : ndarray of shape (2, M)
        KDE bandwidth per class and score.
    marginal_log_pdf_ : ndarray of shape (2, M, G)
        Log-density of each class-conditional marginal on ``np.linspace(0, 1, G)``.
    marginal_cdf_ : ndarray of shape (2, M, G)
        CDF of each marginal on the same grid (0 to 1).
    copula_families_ : dict
        Class label -> selected family name.
    copula_params_ : dict
        Class label -> parameters of the selected family: ``{"corr": (M, M) ndarray}``
        (gaussian), ``{"corr": ..., "df": float}`` (student), ``{"theta": float}`` (the
        others), ``{}`` (independence).
    copula_loglik_ : dict
        Class label -> {family -> maximized log-likelihood} for every candidate (weights
        rescaled to sum to the effective sample size; ``-inf`` if not finite).
    copula_candidate_params_ : dict
        Class label -> {family -> fitted parameters} for every candidate.
    classes_, ecdf_, n_features_in_, feature_names_in_
        See :class:`fusion._base.FusionEstimator`.

    Notes
    -----
    Class labels used as dict keys are plain Python scalars or strings (``classes_[l]``
    converted with ``.item()``). All fitted state is plain data: predictions only need the
    priors, the marginal grids and the copula parameters.

    Pseudo-observations are clipped into ``[1e-10, 1 - 1e-10]`` before any copula is
    evaluated, and the marginal densities are floored (see :mod:`fusion.copula.kde`), so the
    fused probability is finite for every input, including scores beyond the training range
    (the ECDF clamps them to its end values).

    Unlike :class:`~fusion.BernsteinFusion`, the fused probability is not guaranteed to be
    non-decreasing in each score.

    Examples
    --------
    >>> import numpy as np
    >>> from fusion import CopulaFusion
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 600)
    >>> S = rng.normal(size=(600, 2)) + y[:, None]
    >>> model = CopulaFusion().fit(S, y)
    >>> sorted(model.copula_families_)
    [0, 1]
    """

    # With one score the model is Bayes' rule with KDE class-conditional densities.
    _allows_1d = True
    _parameter_constraints = {
        "families": [StrOptions(set(fam.KNOWN_FAMILIES) | {"all"}), list, tuple],
        "selection": [StrOptions({"loglik", "aic"})],
        "bandwidth": [
            StrOptions({"silverman", "scott", "cv"}),
            Interval(Real, MIN_BANDWIDTH, None, closed="left"),
        ],
    }

    def __init__(self, families="all", *, selection: str = "loglik", bandwidth="silverman"):
        self.families = families
        self.selection = selection
        self.bandwidth = bandwidth

    # -- fitting -----------------------------------------------------------------------------
    def _candidate_families(self, M: int) -> tuple[str, ...]:
        if isinstance(self.families, str) and self.families == "all":
            return fam.families_for_dimension(M)
        names = [self.families] if isinstance(self.families, str) else list(self.families)
        if not names:
            raise ValueError(f"families is empty; pass 'all' or some of {list(fam.FAMILIES)}.")
        unknown = [f for f in names if not isinstance(f, str) or f not in fam.KNOWN_FAMILIES]
        if unknown:
            raise ValueError(
                f"unknown copula families {unknown}; known families: {list(fam.KNOWN_FAMILIES)}."
            )
        if M == 1 and set(names) != {"independence"}:
            raise ValueError(
                "with a single score column the only copula is independence; families "
                f"{[f for f in names if f != 'independence']} do not apply (use 'all')."
            )
        if M > 2:
            bivariate = [f for f in names if f in fam.BIVARIATE_ONLY]
            if bivariate:
                raise ValueError(
                    f"copula families {bivariate} are bivariate but there are {M} score "
                    f"columns; with M > 2 use some of {list(fam.families_for_dimension(M))}."
                )
        return tuple(f for f in fam.KNOWN_FAMILIES if f in names)

    def _fit_normalized(self, U, y, sample_weight):
        n, M = U.shape
        candidates = self._candidate_families(M)
        rows = [(y == label) & (sample_weight > 0) for label in (0.0, 1.0)]
        for label, r in zip(self.classes_, rows, strict=True):
            if r.sum() < 2:
                raise ValueError(
                    f"CopulaFusion needs at least 2 rows (with positive weight) of each class; "
                    f"class {_plain(label)!r} has {int(r.sum())}."
                )
        weights = [sample_weight[r] for r in rows]
        prior = np.array([w.sum() for w in weights])
        self.class_prior_ = prior / prior.sum()

        bandwidths = np.array(
            [
                [select_bandwidth(U[r, m], w, self.bandwidth) for m in range(M)]
                for r, w in zip(rows, weights, strict=True)
            ]
        )
        n_grid = grid_size(float(bandwidths.min()))
        log_pdf = np.empty((2, M, n_grid))
        cdf = np.empty((2, M, n_grid))
        for c in range(2):
            for m in range(M):
                log_pdf[c, m], cdf[c, m] = reflected_kde(
                    U[rows[c], m], weights[c], bandwidths[c, m], n_grid
                )
        self.bandwidths_ = bandwidths
        self.marginal_log_pdf_ = log_pdf
        self.marginal_cdf_ = cdf

        self.copula_families_, self.copula_params_ = {}, {}
        self.copula_loglik_, self.copula_candidate_params_ = {}, {}
        for c, label in enumerate(self.classes_):
            key = _plain(label)
            P = self._pseudo_observations(c, U[rows[c]])
            best, params, logliks = fit_copula(P, weights[c], candidates, self.selection)
            self.copula_families_[key] = best
            self.copula_params_[key] = params[best]
            self.copula_loglik_[key] = logliks
            self.copula_candidate_params_[key] = params

    def _pseudo_observations(self, c: int, U: np.ndarray, positions=None) -> np.ndarray:
        n_grid = self.marginal_cdf_.shape[2]
        P = np.empty_like(U)
        for m in range(U.shape[1]):
            i, frac = positions[m] if positions is not None else grid_position(U[:, m], n_grid)
            P[:, m] = interpolate(self.marginal_cdf_[c, m], i, frac)
        return P

    # -- prediction --------------------------------------------------------------------------
    def _class_log_joint(self, U: np.ndarray) -> np.ndarray:
        """``log pi_l + log c_l(F_l(u)) + sum_m log f_lm(u_m)`` for both classes, (n, 2)."""
        n, M = U.shape
        n_grid = self.marginal_cdf_.shape[2]
        positions = [grid_position(U[:, m], n_grid) for m in range(M)]
        out = np.empty((n, 2))
        for c, label in enumerate(self.classes_):
            key = _plain(label)
            log_marg = np.zeros(n)
            for m, (i, frac) in enumerate(positions):
                log_marg += interpolate(self.marginal_log_pdf_[c, m], i, frac)
            P = self._pseudo_observations(c, U, positions)
            copula = fam.make(self.copula_families_[key], M, self.copula_params_[key])
            log_cop = copula.logpdf(P)
            out[:, c] = np.log(self.class_prior_[c]) + log_marg + log_cop
        return out

    def _calibrate(self, U):
        L = self._class_log_joint(U)
        return expit(L[:, 1] - L[:, 0])
