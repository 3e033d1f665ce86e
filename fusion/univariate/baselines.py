"""Classic 1-D calibrators with the fusion interface: Platt scaling, isotonic regression,
histogram binning.

Thin wrappers around scikit-learn, on the same 1-D input as RPR and ENIR (the normalized
score for ``M = 1``, the normalized combined score for ``M >= 2``, see
:mod:`fusion.univariate.reduction`), so that benchmarks compare like with like. Fitted state
is kept as plain arrays and floats; predictions are computed from them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from scipy.special import expit, logit
from sklearn.utils._param_validation import Interval, StrOptions

from .._docs import estimator_doc
from .reduction import UnivariateCalibrator

__all__ = ["PlattCalibrator", "IsotonicCalibrator", "HistogramBinningCalibrator"]


@estimator_doc
@dataclass(eq=False, repr=False)
class PlattCalibrator(UnivariateCalibrator):
    """Platt scaling: a sigmoid of the (normalized) score fitted by maximum likelihood.

    ``p(t) = expit(coef_ * f(t) + intercept_)`` with ``f = logit`` (default) or the identity.
    The normalized score ``t`` is uniform on ``(0, 1)``, so ``logit(t)`` is a score with
    logistic tails, the scale on which a sigmoid link is natural; ``scale="identity"`` fits
    the sigmoid on ``t`` itself. As in Platt (1999) the labels are replaced by the targets
    ``(N_+ + 1) / (N_+ + 2)`` and ``1 / (N_- + 2)`` (weighted counts), which keeps the fit
    finite on separable data; the fit is scikit-learn's unpenalized ``LogisticRegression``
    on the two targets as weighted rows.

    Parameters
    ----------
    scale : {"logit", "identity"}, default="logit"
    {combine_parameter}
    {shared_parameters}

    Attributes
    ----------
    coef_, intercept_ : float
        Slope and intercept of the sigmoid on ``f(t)``.
    monotone_ : bool
        Whether the fitted function is non-decreasing in every score (slope and combine
        coefficients non-negative).
    """

    _parameter_constraints = {
        **UnivariateCalibrator._parameter_constraints,
        "scale": [StrOptions({"logit", "identity"})],
    }
    _fitted_attributes = ("coef_", "intercept_")

    scale: str = "logit"

    def _feature(self, t: np.ndarray) -> np.ndarray:
        if self.scale == "logit":
            # t is a mid-ECDF value, inside (0, 1) on and between training points
            return logit(np.clip(t, 1e-12, 1.0 - 1e-12))
        return t

    def _fit_1d(self, t, y, sample_weight):
        from sklearn.linear_model import LogisticRegression

        pos = float(np.sum(sample_weight * y))
        neg = float(np.sum(sample_weight * (1.0 - y)))
        target = np.where(y > 0.5, (pos + 1.0) / (pos + 2.0), 1.0 / (neg + 2.0))
        x = self._feature(t)[:, None]
        X = np.vstack([x, x])
        labels = np.r_[np.ones_like(t), np.zeros_like(t)].astype(int)
        weights = np.r_[sample_weight * target, sample_weight * (1.0 - target)]
        # Newton's method to machine precision: lbfgs stops at a gradient of 1e-4, which
        # lets rounding-level changes of the input move the fit in the fourth digit.
        lr = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-12, max_iter=100)
        lr.fit(X, labels, sample_weight=weights)
        self.coef_ = float(lr.coef_[0, 0])
        self.intercept_ = float(lr.intercept_[0])

    def _fitted_1d_is_monotone(self) -> bool:
        return self.coef_ >= 0

    def _predict_1d(self, t):
        return expit(self.coef_ * self._feature(t) + self.intercept_)


@estimator_doc
@dataclass(eq=False, repr=False)
class IsotonicCalibrator(UnivariateCalibrator):
    """Isotonic regression (Zadrozny & Elkan 2002) with scikit-learn's PAVA.

    Non-decreasing step fit at the training scores, linearly interpolated in between and
    constant beyond them (scikit-learn's ``IsotonicRegression(out_of_bounds="clip")``
    prediction), bounded to ``[0, 1]``. ``sample_weight`` is honoured.

    Parameters
    ----------
    {combine_parameter}
    {shared_parameters}

    Attributes
    ----------
    knots_, knot_values_ : ndarray
        scikit-learn's ``X_thresholds_`` and ``y_thresholds_``.
    """

    _monotone = True
    _monotone_1d = True
    _parameter_constraints = {**UnivariateCalibrator._parameter_constraints}
    _fitted_attributes = ("knots_", "knot_values_")

    def _fit_1d(self, t, y, sample_weight):
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(t, y, sample_weight=sample_weight)
        self.knots_ = np.asarray(iso.X_thresholds_, dtype=float).copy()
        self.knot_values_ = np.asarray(iso.y_thresholds_, dtype=float).copy()

    def _predict_1d(self, t):
        return np.interp(t, self.knots_, self.knot_values_)


@estimator_doc
@dataclass(eq=False, repr=False)
class HistogramBinningCalibrator(UnivariateCalibrator):
    """Equal-frequency histogram binning (Zadrozny & Elkan 2001).

    Bin edges are the weighted quantiles of the training scores (scikit-learn's
    ``KBinsDiscretizer(strategy="quantile")``, without subsampling); a bin's value is the
    weighted fraction of positives in it. Bins that scikit-learn drops because tied scores
    make them empty are simply absent (``n_bins_`` may be smaller than ``n_bins``).

    Parameters
    ----------
    n_bins : int, default=10
    {combine_parameter}
    {shared_parameters}

    Attributes
    ----------
    bin_edges_ : ndarray of shape (n_bins_ + 1,)
    bin_values_ : ndarray of shape (n_bins_,)
    n_bins_ : int
    """

    _parameter_constraints = {
        **UnivariateCalibrator._parameter_constraints,
        "n_bins": [Interval(Integral, 1, None, closed="left")],
    }
    _fitted_attributes = ("bin_edges_", "bin_values_", "n_bins_")

    n_bins: int = 10

    def _bin_of(self, t: np.ndarray) -> np.ndarray:
        # the rule of KBinsDiscretizer.transform
        return np.searchsorted(self.bin_edges_[1:-1], t, side="right")

    def _fit_1d(self, t, y, sample_weight):
        from sklearn.preprocessing import KBinsDiscretizer

        if self.n_bins == 1:
            edges = np.array([t.min(), t.max()])
        else:
            kb = KBinsDiscretizer(
                n_bins=self.n_bins, encode="ordinal", strategy="quantile", subsample=None
            )
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*[Bb]ins whose width are too small")
                kb.fit(t[:, None], sample_weight=sample_weight)
            edges = np.asarray(kb.bin_edges_[0], dtype=float).copy()
        self.bin_edges_ = edges
        self.n_bins_ = int(edges.shape[0] - 1)
        idx = self._bin_of(t)
        wsum = np.bincount(idx, weights=sample_weight, minlength=self.n_bins_)
        wpos = np.bincount(idx, weights=sample_weight * y, minlength=self.n_bins_)
        overall = float(np.sum(sample_weight * y) / np.sum(sample_weight))
        self.bin_values_ = np.where(wsum > 0, wpos / np.where(wsum > 0, wsum, 1.0), overall)

    def _predict_1d(self, t):
        return self.bin_values_[self._bin_of(t)]
