"""Reduction of M normalized scores to one, and the shared base of the 1-D calibrators.

A 1-D calibrator (RPR, ENIR, the baselines) sees a single score. With ``M = 1`` it is the
ECDF-normalized score itself. With ``M >= 2`` the normalized scores ``U`` are first combined
by a linear score ``z = beta' u`` chosen by ``combine``:

``"mean"`` (default)
    ``beta = (1/M, ..., 1/M)``: the mean of the normalized scores. No fitting, and ``z`` is
    non-decreasing in every score.
``"logistic"``
    ``(beta, beta_0)`` are the coefficients of a logistic regression of ``y`` on ``U``
    (scikit-learn ``LogisticRegression`` with its default ``C = 1`` ridge penalty, honouring
    ``sample_weight``): ``z`` is its linear score. Coefficients may come out negative (a score
    that carries no extra information, or one anti-correlated with the label given the
    others); then the fused probability *decreases* in that score, even when the 1-D
    calibrator is monotone. ``monotone_`` reports whether every coefficient is non-negative.

The calibrator is then fitted on ``t = F_z(z)``, the weighted mid-ECDF of the training values
of ``z`` (the same map as :class:`fusion.ECDFNormalizer`). Thus every 1-D calibrator works on
``[0, 1]`` with roughly uniform training points whatever ``M`` and the rule, and the
logistic intercept plays no role. For ``M = 1`` the calibrator sees the normalized score
``u`` itself (``F_z`` would be the identity on the training scores; the stored map is the
identity on ``[0, 1]``).
New points use the same ``beta`` and the same ``F_z`` (linear between training values,
constant beyond them), so the calibrating function is defined on the whole cube. ``F_z``
interpolates on ``z``, which is itself a function of the normalized scores ``U``, so the
calibrators whose ``U`` depends only on the scores' positions among the training scores
(RPR and ENIR, ``FusionEstimator._ecdf_between``) stay invariant under strictly increasing
transforms of a score at every point. Because
``F_z`` is non-decreasing, a monotone 1-D calibrator composed with a combine rule whose
coefficients are non-negative is non-decreasing in every score.

All fitted state is plain arrays (``combine_coef_``, ``combine_intercept_``,
``combine_knots_``, ``combine_values_``).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

import numpy as np
from sklearn.utils._param_validation import StrOptions

from .._base import COMMON_PARAMETERS, FusionEstimator
from ..ecdf import ConstantColumnError, ECDFNormalizer

__all__ = ["COMBINE_RULES", "fit_combine", "combined_score", "UnivariateCalibrator"]

#: Names accepted by the ``combine`` parameter.
COMBINE_RULES = ("mean", "logistic")


def fit_combine(
    U: np.ndarray, y: np.ndarray, sample_weight: np.ndarray, rule: str
) -> tuple[np.ndarray, float]:
    """Coefficients ``beta`` (shape ``(M,)``) and intercept of the linear combined score.

    For ``M = 1`` the score is used as is (``beta = [1]``) whatever the rule.
    """
    M = U.shape[1]
    if M == 1:
        return np.ones(1), 0.0
    if rule == "mean":
        return np.full(M, 1.0 / M), 0.0
    if rule == "logistic":
        from sklearn.linear_model import LogisticRegression

        lr = LogisticRegression(C=1.0, max_iter=1000)
        lr.fit(U, y.astype(int), sample_weight=sample_weight)
        return np.asarray(lr.coef_[0], dtype=float).copy(), float(lr.intercept_[0])
    raise ValueError(f"combine must be one of {COMBINE_RULES}, got {rule!r}.")


def combined_score(U: np.ndarray, coef: np.ndarray, intercept: float = 0.0) -> np.ndarray:
    """The linear combined score ``z = U @ coef + intercept``, reproducible to the last bit.

    The terms of each row are sorted and added one column at a time instead of calling BLAS:
    a row then gets the same ``z`` whatever batch it comes in (BLAS may round a single row
    differently from a block), and rows whose terms are permutations of each other (equal
    means of permuted ranks) tie exactly. Both matter because ``z`` is then ranked: two
    training values one ulp apart are different knots of the ECDF.

    For the same reason ``z`` is rounded to a multiple of ``2^-40`` times the largest
    possible ``|z|`` (a power of two): normalized scores that differ in their last bits (the
    ECDF of rescaled weights, say) then give the same ranks, instead of splitting a tie into
    two knots 1/n apart.
    """
    coef = np.asarray(coef, dtype=float)
    terms = np.sort(np.asarray(U, dtype=float) * coef, axis=1)
    z = terms[:, 0].copy()
    for m in range(1, terms.shape[1]):
        z += terms[:, m]
    z += intercept
    bound = float(np.abs(coef).sum() + abs(intercept))  # |z| on the unit cube
    quantum = 2.0 ** (np.ceil(np.log2(max(bound, 2.0**-100))) - 40)
    return np.round(z / quantum) * quantum


@dataclass(eq=False, repr=False)
class UnivariateCalibrator(FusionEstimator):
    """Base of the 1-D calibrators: combine the scores, normalize, calibrate (not used directly).

    Subclasses implement ``_fit_1d(t, y, sample_weight)`` and ``_predict_1d(t)`` on ``t`` in
    ``[0, 1]`` and list ``"combine"`` among their parameters.
    """

    _allows_1d = True
    _supports_multiclass = True
    _parameter_constraints = {"combine": [StrOptions(set(COMBINE_RULES))], **COMMON_PARAMETERS}
    _fitted_attributes = (
        "combine_coef_",
        "combine_intercept_",
        "combine_knots_",
        "combine_values_",
        "monotone_",
    )

    _: KW_ONLY
    combine: str = "mean"

    def _fit_1d(self, t: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> None:
        raise NotImplementedError

    def _predict_1d(self, t: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _fit_normalized(self, U, y, sample_weight):
        coef, intercept = fit_combine(U, y, sample_weight, self.combine)
        self.combine_coef_ = coef
        self.combine_intercept_ = intercept
        if U.shape[1] == 1:
            # the normalized score itself (its own mid-ECDF would be the identity)
            self.combine_knots_ = np.array([0.0, 1.0])
            self.combine_values_ = np.array([0.0, 1.0])
            t = U[:, 0].copy()
        else:
            z = combined_score(U, coef, intercept)
            # the weighted mid-ECDF of z, read off at the training rows without interpolating
            norm = ECDFNormalizer()
            try:
                t = norm.fit_transform(z, sample_weight=sample_weight)[:, 0]
            except ConstantColumnError:
                raise ValueError(
                    f"the combined score (combine={self.combine!r}, coefficients "
                    f"{coef.tolist()}) is constant on the training rows (every value "
                    f"{z[0]!r}); it carries no ranking information. Try the other rule."
                ) from None
            self.combine_knots_ = norm.knots_[0]
            self.combine_values_ = norm.values_[0]
        self._fit_1d(t, y, sample_weight)
        self.monotone_ = bool(self._fitted_1d_is_monotone() and np.all(coef >= 0))

    def _fitted_1d_is_monotone(self) -> bool:
        """Whether the fitted 1-D calibrating function is non-decreasing."""
        return self._monotone_1d

    def _reduce(self, U: np.ndarray) -> np.ndarray:
        """``t = F_z(beta' u)`` in ``[0, 1]`` for rows of normalized scores."""
        if U.shape[1] == 1:
            return U[:, 0].copy()  # the normalized score itself, as in fit
        z = combined_score(U, self.combine_coef_, self.combine_intercept_)
        return np.interp(z, self.combine_knots_, self.combine_values_)

    def _calibrate(self, U):
        return self._predict_1d(self._reduce(U))

    #: Whether every fitted 1-D calibrating function is non-decreasing (``monotone_``
    #: combines it with the signs of the combine coefficients).
    _monotone_1d = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # combine="mean" assumes that every score increases with P(positive), like a monotone
        # fit (see FusionEstimator.__sklearn_tags__): scikit-learn's accuracy check on blobs
        # where one feature decreases with it cannot be met by design.
        if self.combine == "mean":
            tags.classifier_tags.poor_score = True
        return tags
