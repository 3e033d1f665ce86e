"""The peers a practitioner would use instead of a fusion method, as fusion estimators.

Every peer fits the base class's ECDF normalizer, so the grid metrics (on the normalized
square) evaluate all methods on the same cells:

* :class:`LogisticStacking` -- logistic regression on the scores as a user fits it (stacking):
  on the logits of scores that are probabilities (clipped to ``[1e-6, 1 - 1e-6]``), on the
  scores themselves otherwise; ``scale="u"`` fits it on the ECDF-normalized scores instead
  (a different, weaker model, kept as a separately labelled row). The inverse
  regularization ``C`` is chosen by cross-validated Brier score;
* :class:`IsotonicMean` -- isotonic regression on the mean normalized score;
* :class:`MonotoneLightGBM` -- gradient-boosted trees with a monotone-increasing constraint on
  every score, hyper-parameters by cross-validated grid search (needs ``lightgbm``).

Fitted state is plain data (arrays, floats, a LightGBM model string), as the persistence
contract of the package asks.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegressionCV
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import FusionEstimator
from ..ecdf import ECDFNormalizer

__all__ = [
    "LogisticStacking",
    "IsotonicMean",
    "MonotoneLightGBM",
    "cv_splitter",
    "PROBA_CLIP",
    "probability_columns",
    "logit_features",
]

#: Probabilities are clipped to ``[PROBA_CLIP, 1 - PROBA_CLIP]`` before their logit.
PROBA_CLIP = 1e-6

#: Default grid of :class:`MonotoneLightGBM` (12 candidates).
LIGHTGBM_GRID = {
    "n_estimators": [50, 100, 200],
    "num_leaves": [4, 8],
    "min_child_samples": [10, 30],
}


def cv_splitter(y: np.ndarray, n_folds: int, random_state):
    """Shuffled stratified folds, or plain folds when a class has fewer rows than folds."""
    counts = np.bincount(np.asarray(y).astype(int), minlength=2)
    if counts.min() >= n_folds:
        return StratifiedKFold(n_folds, shuffle=True, random_state=random_state)
    return KFold(n_folds, shuffle=True, random_state=random_state)


def probability_columns(S: np.ndarray) -> np.ndarray:
    """Which columns of training scores are probabilities: every value in ``[0, 1]``."""
    S = np.asarray(S, dtype=float)
    return np.all((S >= 0.0) & (S <= 1.0), axis=0)


def logit_features(S: np.ndarray, logit_columns: np.ndarray) -> np.ndarray:
    """Scores on the scale a user stacks them: ``logit(clip(s, 1e-6, 1 - 1e-6))`` for the
    probability columns, the score itself for the others."""
    X = np.array(S, dtype=float, copy=True)
    cols = np.asarray(logit_columns, dtype=bool)
    if cols.any():
        p = np.clip(X[:, cols], PROBA_CLIP, 1.0 - PROBA_CLIP)
        X[:, cols] = np.log(p) - np.log1p(-p)
    return X


def inverse_ecdf(ecdf: ECDFNormalizer, U: np.ndarray) -> np.ndarray:
    """Raw scores at normalized points: the piecewise-linear inverse of each column's ECDF
    (exact at the training scores, clamped to the training range)."""
    columns = zip(ecdf.knots_, ecdf.values_, strict=True)
    return np.column_stack([np.interp(U[:, j], v, k) for j, (k, v) in enumerate(columns)])


def _unclipped(self, S, U, w) -> np.ndarray:
    """A peer predicts as its users fit it: no ``proba_bounds_`` clipping."""
    return np.array([0.0, 1.0])


class LogisticStacking(FusionEstimator):
    """Logistic regression on the scores (stacking), L2 penalty, ``C`` by CV.

    With ``scale="logit"`` (the default, what a user fits): ``P(Y = 1 | s) = expit(z @ coef_ +
    intercept_)`` with ``z_m = logit(clip(s_m, 1e-6, 1 - 1e-6))`` for a score column whose
    training values all lie in ``[0, 1]`` (a probability) and ``z_m = s_m`` otherwise.
    With ``scale="u"``: the same model on the ECDF-normalized scores ``u`` (the benchmark's
    former "LR stacking", which discards the scores' own scale).
    ``C`` is chosen from ``Cs`` by ``cv``-fold cross-validated Brier score
    (:class:`~sklearn.linear_model.LogisticRegressionCV`). Not monotone by construction: a
    negative coefficient is allowed.

    Parameters
    ----------
    Cs : int or sequence of float, default=10
        Candidate inverse regularization strengths (an int: that many on a log grid).
    scale : {"logit", "u"}, default="logit"
        Features of the regression: the scores on their own (logit) scale, or normalized.
    cv : int, default=5
    random_state : int, RandomState or None
        Shuffling of the folds.

    Attributes
    ----------
    coef_ : ndarray of shape (M,)
    intercept_ : float
    C_ : float
    logit_columns_ : ndarray of bool of shape (M,)
        Columns taken as probabilities and fitted on their logits (all False with
        ``scale="u"``).
    """

    _fit_proba_bounds = _unclipped

    #: As its users fit it: the scores as given (the base's default would reverse an
    #: anti-aligned score first).
    increasing = True

    _parameter_constraints = {
        "Cs": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "scale": [StrOptions({"logit", "u"})],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, Cs=10, *, scale: str = "logit", cv: int = 5, random_state=None):
        self.Cs = Cs
        self.scale = scale
        self.cv = cv
        self.random_state = random_state

    def _fit_scores(self, S, U, y, sample_weight):
        # The logit-scale model is fitted on the scores themselves (the ECDF is still fitted,
        # for the grid metrics and calibrating_function).
        if self.scale == "u":
            self.logit_columns_ = np.zeros(U.shape[1], dtype=bool)
            X = U
        else:
            self.logit_columns_ = probability_columns(S)
            X = logit_features(S, self.logit_columns_)
        model = LogisticRegressionCV(
            Cs=self.Cs,
            l1_ratios=(0.0,),
            cv=cv_splitter(y, self.cv, self.random_state),
            scoring="neg_brier_score",
            max_iter=1000,
            use_legacy_attributes=False,
        ).fit(X, y, sample_weight=sample_weight)
        self.coef_ = np.asarray(model.coef_, dtype=float).reshape(-1).copy()
        self.intercept_ = float(np.ravel(model.intercept_)[0])
        self.C_ = float(np.ravel(model.C_)[0])

    def _linear(self, X):
        return expit(X @ self.coef_ + self.intercept_)

    def _calibrate(self, U):
        if self.scale == "u":
            return self._linear(U)
        return self._linear(logit_features(inverse_ecdf(self.ecdf_, U), self.logit_columns_))

    def _calibrate_scores(self, S, U):
        # On the logit scale from the scores themselves, so scores beyond the training range
        # extrapolate as the regression does.
        if self.scale == "u":
            return self._linear(U)
        return self._linear(logit_features(S, self.logit_columns_))


class IsotonicMean(FusionEstimator):
    """Isotonic regression of the label on the mean of the normalized scores.

    The fitted step function is interpolated linearly between its knots and held constant
    beyond them (:class:`~sklearn.isotonic.IsotonicRegression` with ``out_of_bounds="clip"``),
    so the fused probability is non-decreasing in every score. No hyper-parameter.

    Attributes
    ----------
    x_thresholds_, y_thresholds_ : ndarray
        Knots of the fitted function on the mean normalized score.
    """

    _fit_proba_bounds = _unclipped

    #: As its users fit it: the scores as given (the base's default would reverse an
    #: anti-aligned score first).
    increasing = True

    def __init__(self):  # no parameters (not the base's shared ones either)
        pass

    _allows_1d = True
    _monotone = True

    def _fit_normalized(self, U, y, sample_weight):
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
        iso.fit(U.mean(axis=1), y, sample_weight=sample_weight)
        self.x_thresholds_ = np.asarray(iso.X_thresholds_, dtype=float).copy()
        self.y_thresholds_ = np.asarray(iso.y_thresholds_, dtype=float).copy()

    def _calibrate(self, U):
        return np.interp(U.mean(axis=1), self.x_thresholds_, self.y_thresholds_)


class MonotoneLightGBM(FusionEstimator):
    """LightGBM on the normalized scores, constrained non-decreasing in every score.

    Hyper-parameters by ``cv``-fold grid search on the Brier score, then a refit on all
    rows. Needs the optional ``lightgbm`` package (extra ``bench``).

    Parameters
    ----------
    param_grid : dict, optional
        Grid over :class:`lightgbm.LGBMClassifier` parameters; default
        :data:`LIGHTGBM_GRID`.
    learning_rate : float, default=0.05
    cv : int, default=5
    random_state : int or None
        Seed of the folds and of LightGBM.

    Attributes
    ----------
    best_params_ : dict
        The chosen grid point.
    booster_ : str
        The fitted model as LightGBM's text format (plain data; the booster is rebuilt
        from it for prediction).
    """

    _fit_proba_bounds = _unclipped

    #: As its users fit it: the scores as given (the base's default would reverse an
    #: anti-aligned score first).
    increasing = True

    _allows_1d = True
    _monotone = True
    _parameter_constraints = {
        "param_grid": [dict, None],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, param_grid=None, *, learning_rate: float = 0.05, cv: int = 5, random_state=None
    ):
        self.param_grid = param_grid
        self.learning_rate = learning_rate
        self.cv = cv
        self.random_state = random_state

    def _fit_normalized(self, U, y, sample_weight):
        lightgbm = _import_lightgbm()
        seed = self.random_state if isinstance(self.random_state, Integral) else 0
        base = lightgbm.LGBMClassifier(
            learning_rate=self.learning_rate,
            monotone_constraints=[1] * U.shape[1],
            monotone_constraints_method="advanced",
            random_state=seed,
            deterministic=True,
            force_row_wise=True,
            n_jobs=1,
            verbose=-1,
        )
        search = GridSearchCV(
            base,
            self.param_grid or LIGHTGBM_GRID,
            cv=cv_splitter(y, self.cv, self.random_state),
            scoring="neg_brier_score",
            n_jobs=1,
            refit=True,
        )
        search.fit(U, y.astype(int), sample_weight=sample_weight)
        self.best_params_ = {k: _plain(v) for k, v in search.best_params_.items()}
        self.booster_ = search.best_estimator_.booster_.model_to_string()
        self._booster = None

    def _calibrate(self, U):
        booster = getattr(self, "_booster", None)
        if booster is None:
            booster = _import_lightgbm().Booster(model_str=self.booster_)
            self._booster = booster
        return booster.predict(np.ascontiguousarray(U))


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _import_lightgbm():
    try:
        import lightgbm
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "MonotoneLightGBM needs lightgbm: pip install 'fusion-calibration[bench]'."
        ) from None
    return lightgbm
