"""CopulaFusion: Bayes' rule with per-class marginals and per-class copulas (Ozdemir 2017)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from numbers import Real

import numpy as np
from scipy.special import expit
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import COMMON_PARAMETERS, FusionEstimator
from .._docs import estimator_doc
from .._progress import SLOW_SECONDS, Progress, warn_if_slow
from .._validation import canonical_weights
from .._warn import caller_level
from . import families as fam
from .family import MAX_INTERVAL_AXES
from .fit import fit_copula, unsupported_families
from .kde import MIN_BANDWIDTH
from .marginals import evaluate, find_atoms, fit_marginals

__all__ = ["CopulaFusion"]

#: A fit estimated to take longer than this many seconds warns first (and shows progress
#: with ``verbose``).
LONG_FIT_SECONDS = SLOW_SECONDS


def _plain(label):
    """A class label as a plain Python scalar or str (JSON-friendly dict key)."""
    return label.item() if isinstance(label, np.generic) else label


@estimator_doc
@dataclass(eq=False, repr=False)
class CopulaFusion(FusionEstimator):
    """Fusion by Bayes' rule with per-class marginals and a copula chosen by likelihood.

    For each class ``l`` the scores are modelled by their marginal distributions and a copula
    (Sklar), so on ECDF-normalized scores ``u``

    .. math:: f(u) = \\frac{\\pi_1 c_1(F_{11}(u_1), \\dots, F_{1M}(u_M)) \\prod_m f_{1m}(u_m)}
              {\\sum_{l \\in \\{0, 1\\}} \\pi_l c_l(F_{l1}(u_1), \\dots) \\prod_m f_{lm}(u_m)},

    computed in log space (Wang & Liu 2020, eqs. (4)-(5); Ozdemir et al. 2017).

    * ``pi_l``: (weighted) class frequencies.
    * ``f_lm``, ``F_lm``: reflection-corrected Gaussian KDE of score ``m`` in class ``l`` on
      ``[0, 1]``, tabulated on a fine grid at fit (see :mod:`fusion.copula.kde` for the
      evaluation and its error). Tied scores of positive probability (a 0/1 or few-valued
      classifier, a score clipped at a bound) are *atoms* with class probabilities instead, and
      the copula enters through the probability of the rectangle they span
      (:mod:`fusion.copula.marginals`); without ties this is exactly the KDE model.
    * ``c_l``: every candidate family is fitted by weighted maximum likelihood on the class's
      pseudo-observations ``F_lm(u_im)``; the one with the highest log-likelihood (or lowest
      AIC) is kept. Independence is always a candidate (the fallback).

    Parameters
    ----------
    families : "all", a family name or a list of names, default="all"
        Candidate copula families. ``"all"`` means ``"gaussian"``, ``"student"``,
        ``"clayton"``, ``"clayton_rot180"``, ``"gumbel"``, ``"gumbel_rot180"``, ``"frank"``,
        ``"plackett"`` and ``"independence"``, those defined for the number of scores (the
        rotations and Plackett are bivariate only; a single score has only the independence
        copula, so the model is then Bayes' rule with KDE class-conditional densities).
        ``"clayton_rot90"``, ``"clayton_rot270"``, ``"gumbel_rot90"`` and ``"gumbel_rot270"``
        (negative dependence) may be named too. The families are the classes of
        :mod:`fusion.copula.families`.
    selection : {"loglik", "aic"}, default="loglik"
        Highest log-likelihood (the paper's criterion) or lowest AIC.
    bandwidth : {"silverman", "scott", "cv"} or float, default="silverman"
        KDE bandwidth on the normalized scale: Silverman's or Scott's rule of thumb (weighted
        when ``sample_weight`` is given), likelihood cross-validation, or a fixed value (at
        least 0.001) for every marginal.
    increasing, missing, ecdf_knots
        Shared by every estimator; see :class:`~fusion.FusionEstimator`.
    random_state : None, int or Generator, default=0
        Unused: the fit is deterministic (no resampling, no random starts, no jittering of
        tied scores). Accepted so that every fusion estimator takes it.
    verbose : bool, default=False
        Show progress (a tqdm bar when tqdm is installed, lines on stderr otherwise) over the
        copula fits of both classes.

    Attributes
    ----------
    class_prior_ : ndarray of shape (2,)
        ``P(Y = classes_[l])``, weighted class frequencies.
    bandwidths_ : ndarray of shape (2, M)
        KDE bandwidth per class and score (on the compressed scale where a score has atoms;
        NaN where a class has no continuous part of that score).
    marginal_log_pdf_ : ndarray of shape (2, M, G)
        Log-density of each class-conditional marginal's continuous part on
        ``np.linspace(0, 1, G)`` (the normalized scale; the compressed scale for a score with
        atoms, see :func:`fusion.copula.marginals.compress`).
    marginal_cdf_ : ndarray of shape (2, M, G)
        CDF of each continuous part on the same grid (0 to 1).
    continuous_mass_ : ndarray of shape (2, M)
        Probability of the continuous part of each marginal (1 without atoms).
    atom_column_ : ndarray of shape (A,)
        Score column of each atom (tied value of positive probability); empty without ties.
    atom_value_ : ndarray of shape (A,)
        Normalized value of each atom.
    atom_interval_ : ndarray of shape (A, 2)
        The ECDF interval each atom occupies on the normalized scale.
    atom_mass_ : ndarray of shape (2, A)
        Class-conditional probability of each atom.
    atom_cdf_ : ndarray of shape (2, A)
        Class-conditional CDF (normalized scale) at the lower end of each atom's interval.
    copula_families_ : dict
        Class label -> selected family name (``"clayton"``, ``"gumbel_rot180"``, ...: the
        family and its rotation, see :func:`fusion.copula.families.parse`).
    copula_params_ : dict
        Class label -> parameters of the selected family: ``{"corr": (M, M) ndarray}``
        (gaussian), ``{"corr": ..., "df": float}`` (student), ``{"theta": float}`` (the
        others), ``{}`` (independence).
    copula_loglik_ : dict
        Class label -> {family -> maximized log-likelihood ratio to independence} for every
        candidate (weights rescaled to sum to the effective sample size; ``-inf`` if not
        finite).
    copula_candidate_params_ : dict
        Class label -> {family -> fitted parameters} for every candidate.
    classes_, ecdf_, n_features_in_, feature_names_in_
        See :class:`fusion._base.FusionEstimator`.

    Notes
    -----
    Class labels used as dict keys are plain Python scalars or strings (``classes_[l]``
    converted with ``.item()``). All fitted state is plain data: the copula objects are
    rebuilt from ``copula_families_`` and ``copula_params_`` at prediction.

    Pseudo-observations are clipped into ``[1e-10, 1 - 1e-10]`` before any copula density is
    evaluated, and the marginal densities are floored (see :mod:`fusion.copula.kde`), so the
    fused probability is finite for every input, including scores beyond the training range
    (the ECDF clamps them to its end values).

    Weights: predictions depend on ``sample_weight`` only through its proportions (priors,
    KDEs and atom masses use normalized weights; bandwidth rules and the atom threshold use
    Kish's effective size; copula likelihoods rescale the weights to sum to it), so
    multiplying every weight by a constant changes nothing beyond rounding.

    Fit time grows with the number of scores: the Student-t copula's profile likelihood and
    (with ``sample_weight``) its weighted Kendall's tau dominate at M = 8; a fit estimated to
    take more than a minute warns first (``UserWarning`` with the estimate).

    Unlike :class:`~fusion.BernsteinFusion`, the fused probability is not guaranteed to be
    non-decreasing in each score.

    {rank_invariance}

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
    _rank_based = True
    _parameter_constraints = {
        "families": [StrOptions(set(fam.KNOWN_FAMILIES) | {"all"}), list, tuple],
        "selection": [StrOptions({"loglik", "aic"})],
        "bandwidth": [
            StrOptions({"silverman", "scott", "cv"}),
            Interval(Real, MIN_BANDWIDTH, None, closed="left"),
        ],
        **COMMON_PARAMETERS,
    }
    _fitted_attributes = (
        "class_prior_",
        "bandwidths_",
        "marginal_log_pdf_",
        "marginal_cdf_",
        "continuous_mass_",
        "atom_column_",
        "atom_value_",
        "atom_interval_",
        "atom_mass_",
        "atom_cdf_",
        "copula_families_",
        "copula_params_",
        "copula_loglik_",
        "copula_candidate_params_",
    )

    families: str | Sequence[str] = "all"
    _: KW_ONLY
    selection: str = "loglik"
    bandwidth: str | float = "silverman"

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
        # proportional weights give bit-identical fits (see canonical_weights)
        sample_weight = canonical_weights(sample_weight)
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

        atoms = find_atoms(U, sample_weight)
        marginals = fit_marginals(U, rows, weights, atoms, self.bandwidth)
        n_atom_columns = np.unique(atoms["column"]).shape[0]
        if n_atom_columns:
            skipped = unsupported_families(candidates, M, n_atom_columns)
            if skipped:
                warnings.warn(
                    f"{n_atom_columns} of the {M} scores take tied values of positive "
                    f"probability; the likelihood of copula families {skipped} is not "
                    f"available with that many such scores (elliptical families: at most 2, "
                    f"others: at most {MAX_INTERVAL_AXES}), so they are left out.",
                    UserWarning,
                    stacklevel=caller_level(),
                )
                candidates = tuple(f for f in candidates if f not in skipped)

        progress = self._progress(rows, weights, candidates, M, n_atom_columns)
        families, params, logliks, candidate_params = {}, {}, {}, {}
        try:
            for c, label in enumerate(self.classes_):
                key = _plain(label)
                lo, hi, _ = evaluate(U[rows[c]], c, marginals, atoms)
                best, cand, ll = fit_copula(
                    lo,
                    weights[c],
                    candidates,
                    self.selection,
                    upper=hi if n_atom_columns else None,
                    progress=progress.step,
                )
                families[key], params[key] = best, cand[best]
                logliks[key], candidate_params[key] = ll, cand
        finally:
            progress.close()

        # fitted state, all at once
        self.class_prior_ = prior / prior.sum()
        self.bandwidths_ = marginals["bandwidths"]
        self.marginal_log_pdf_ = marginals["log_pdf"]
        self.marginal_cdf_ = marginals["cdf"]
        self.continuous_mass_ = marginals["continuous_mass"]
        self.atom_column_ = atoms["column"]
        self.atom_value_ = atoms["value"]
        self.atom_interval_ = atoms["interval"]
        self.atom_mass_ = marginals["atom_mass"]
        self.atom_cdf_ = marginals["atom_cdf"]
        self.copula_families_, self.copula_params_ = families, params
        self.copula_loglik_, self.copula_candidate_params_ = logliks, candidate_params

    def _progress(self, rows, weights, candidates, M, n_atom_columns) -> Progress:
        """Warn before a fit estimated to exceed a minute; a progress reporter for ``verbose``."""
        n_fits = 2 * (len(set(candidates) | {"independence"}))
        seconds = sum(
            estimated_fit_seconds(
                int(r.sum()), M, candidates, bool(np.any(w != w[0])), n_atom_columns
            )
            for r, w in zip(rows, weights, strict=True)
        )
        warn_if_slow(
            seconds,
            f"CopulaFusion fit ({M} scores, {sum(int(r.sum()) for r in rows):,} rows, {n_fits} "
            "copula fits)",
            "Fewer candidate families (families=[...], e.g. without 'student') are faster.",
        )
        return Progress(n_fits, desc="CopulaFusion copula fits", enabled=self.verbose)

    # -- prediction --------------------------------------------------------------------------
    def _marginal_state(self) -> tuple[dict, dict]:
        marginals = {
            "bandwidths": self.bandwidths_,
            "log_pdf": self.marginal_log_pdf_,
            "cdf": self.marginal_cdf_,
            "continuous_mass": self.continuous_mass_,
            "atom_mass": self.atom_mass_,
            "atom_cdf": self.atom_cdf_,
        }
        atoms = {
            "column": self.atom_column_,
            "value": self.atom_value_,
            "interval": self.atom_interval_,
        }
        return marginals, atoms

    def _pseudo_observations(self, c: int, U: np.ndarray):
        """Class ``c``'s pseudo-observations (lower and upper ends) and marginal log-likelihood."""
        marginals, atoms = self._marginal_state()
        return evaluate(U, c, marginals, atoms)

    def _class_log_joint(self, U: np.ndarray) -> np.ndarray:
        """``log pi_l + log c_l(F_l(u)) + sum_m log f_lm(u_m)`` for both classes, (n, 2).

        With atoms, ``c_l`` and ``f_lm`` of the scores at atoms stand for the probability of
        the class's rectangle and the atoms' class probabilities.
        """
        n, M = U.shape
        marginals, atoms = self._marginal_state()
        out = np.empty((n, 2))
        for c, label in enumerate(self.classes_):
            key = _plain(label)
            lo, hi, log_marg = evaluate(U, c, marginals, atoms)
            copula = fam.make(self.copula_families_[key], M, self.copula_params_[key])
            log_cop = copula.log_ratio(lo, hi if atoms["value"].size else None)
            out[:, c] = np.log(self.class_prior_[c]) + log_marg + log_cop
        return out

    def _calibrate(self, U):
        L = self._class_log_joint(U)
        return expit(L[:, 1] - L[:, 0])


# ---------------------------------------------------------------------------------------------
# Cost estimate and progress.

#: Seconds per row of one class for one candidate family's fit on continuous scores, at M = 2
#: and M = 8 (linear in M between and beyond): measured at n = 100,000 on a shared 2-core
#: machine (see benchmarks/RESULTS.md, CopulaFusion "where the time goes").
_COST_PER_ROW = {
    "gaussian": (3.4e-8, 7.2e-7),
    "student": (3.2e-6, 3.1e-5),
    "clayton": (2.5e-6, 5.9e-6),
    "gumbel": (8.3e-7, 1.0e-5),
    "frank": (9.6e-7, 1.4e-5),
    "plackett": (9.3e-8, 9.3e-8),
}
#: Extra factor per row with scores at atoms (interval likelihoods), per interval coordinate.
_COST_INTERVAL_FACTOR = 4.0
#: Seconds per ``n log2(n)^2`` and pair of scores of the weighted Kendall's tau (Student-t
#: with M > 2 and unequal weights).
_COST_WEIGHTED_TAU = 1e-8


def estimated_fit_seconds(
    n: int, M: int, candidates, weighted: bool, n_atom_columns: int = 0
) -> float:
    """A rough estimate (within a factor of ~2-3) of one class's copula fits, in seconds."""
    share = max((M - 2) / 6.0, 0.0)
    factor = _COST_INTERVAL_FACTOR * 2.0 ** (min(n_atom_columns, M) - 1) if n_atom_columns else 1.0
    total = 0.0
    for name in candidates:
        base = name.partition("_rot")[0]
        lo, hi = _COST_PER_ROW.get(base, (0.0, 0.0))
        total += (lo + share * (hi - lo)) * factor * n
        if base == "student" and M > 2 and weighted and n > 1:
            total += _COST_WEIGHTED_TAU * n * np.log2(n) ** 2 * M * (M - 1) / 2
    return total
