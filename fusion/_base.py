"""The estimator base shared by every fusion method: the path from raw scores to a fitted model.

Every fusion method subclasses :class:`FusionEstimator` and implements two private steps:

``_fit_normalized(U, y, sample_weight)``
    fit on ECDF-normalized scores ``U`` in ``(0, 1)^M`` with ``y`` in ``{0., 1.}`` (1 is the
    positive class, ``classes_[1]``) and positive weights ``sample_weight`` with mean 1 (all
    ones when the user gave none); store fitted attributes ending in ``_``.
``_calibrate(U)``
    the fitted calibrating function at normalized points, a 1-D array.

A method that also needs the scores on their own scale overrides ``_fit_scores(S, U, y, w)``
and ``_calibrate_scores(S, U)`` instead (their defaults call the two steps above).

The base does everything else, in this order at ``fit``: parameter and input validation
(:mod:`fusion._validation`), label encoding, weights (rows of zero weight are dropped, the
others rescaled to mean 1, so that scaling the weights changes nothing and a zero weight
equals no row), the direction of every score (``increasing``), the weighted ECDF (``ecdf_``,
summarized for large ``n`` by ``ecdf_knots``), missing scores (``missing``), and finally the
method's own fit. The fit runs on a fresh copy of the estimator, whose fitted state replaces
this one's all at once at the end: a fit that fails leaves a previously fitted model exactly
as it was.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from numbers import Integral
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._cv import cv_splits
from ._direction import (
    DIRECTION_Z,
    anti_alignment_z,
    column_label,
    resolve_increasing,
    reverse_scores,
    warn_reversed,
)
from ._multiclass import (
    multiclass_scores,
    single_network_scores,
)
from ._per_class import PerClassFusion
from ._solver import one_blas_thread
from ._tensors import host_array
from ._validation import (
    CONSTANT_COLUMN_REMEDY,
    canonical_weights,
    check_layout,
    check_normalized_points,
    check_sample_weight,
    check_scores,
    encode_binary_targets,
    label_repr,
    unknown_keywords_message,
)
from .ecdf import ConstantColumnError, ECDFNormalizer

__all__ = [
    "FusionEstimator",
    "AUTO_SKETCH_ROWS",
    "SKETCH_KNOTS",
    "COMMON_PARAMETERS",
    "register_model_writer",
    "write_model",
    "proba_bounds",
    "SATURATED",
]

#: Probabilities within this of 0 or 1 count as 0 or 1 for ``proba_bounds_`` (64 ulps of 1).
SATURATED = 2.0**-46

#: ``ecdf_knots="auto"`` summarizes the ECDF from this many (positive-weight) rows on.
AUTO_SKETCH_ROWS = 100_000
#: Knots per column of the summary chosen by ``ecdf_knots="auto"``.
SKETCH_KNOTS = 10_000

#: Constraints of the parameters the base handles, for estimators that take them.
COMMON_PARAMETERS: dict = {
    "increasing": ["boolean", StrOptions({"auto"}), "array-like"],
    "missing": [StrOptions({"error", "marginal"})],
    "ecdf_knots": [Interval(Integral, 2, None, closed="left"), None, StrOptions({"auto"})],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


#: Quadrature points for ``missing="marginal"`` never exceed this product over the missing
#: coordinates of a row (256 for one missing score, 32 per axis for two, ...).
_MAX_QUADRATURE = 1024


#: The function that writes model files. The persistence layer sits above the methods and
#: the classifier (it knows the registry of saveable classes and FusionClassifier's base
#: estimators), so it registers itself here when imported (``import fusion`` does) instead
#: of the layers below importing it.
_MODEL_WRITER = None


def register_model_writer(writer) -> None:
    """Install the function ``writer(estimator, path)`` behind :func:`write_model`."""
    global _MODEL_WRITER
    _MODEL_WRITER = writer


def write_model(estimator, path) -> None:
    """Write ``estimator`` to ``path`` with the registered writer (:mod:`fusion.persistence`):
    what :meth:`FusionEstimator.save` and :meth:`fusion.FusionClassifier.save` call."""
    if _MODEL_WRITER is None:  # pragma: no cover - fusion/__init__ registers it
        raise RuntimeError("import fusion (or fusion.persistence) to save models.")
    _MODEL_WRITER(estimator, path)


def _is_state(name: str) -> bool:
    """Fitted state: attributes ending in ``_`` (public or private), not dunders."""
    return name.endswith("_") and not name.startswith("__")


@dataclass(eq=False, repr=False)
class FusionEstimator(PerClassFusion, ClassifierMixin, BaseEstimator):
    """Base class of the fusion estimators (not used directly).

    The parameters below are shared by every estimator (each lists them in its signature).

    Parameters
    ----------
    increasing : bool, "auto" or sequence of bool/"auto", default="auto"
        The direction of each score. True: higher means more positive (``classes_[1]``).
        False: the score is reversed before fitting (a column whose training values lie in
        ``[0, 1]`` is used as ``1 - p``, any other as ``-s``): the same predictions as
        passing the reversed column. ``"auto"``: a score whose rank correlation with the
        label is significantly negative (one-sided p < 0.001) is reversed, with a
        ``UserWarning`` naming it; an insignificantly negative score is used as given. The
        decision is stored in ``increasing_``. For BernsteinFusion's class-shared
        multi-class model it is one direction per network (``False``: every score ``s`` of
        the network used as ``-s``, as for distances or energies), and ``"auto"`` reverses a
        network that scores the labelled class significantly lower than the others
        (its label ranks' z below -3.09, :func:`fusion._direction.label_rank_z`).
    missing : {"error", "marginal"}, default="error"
        NaN scores. ``"error"``: a ``ValueError`` naming the row and column.
        ``"marginal"``: a missing score is integrated out. Prediction averages the
        calibrating function over the missing normalized score, uniform on ``[0, 1]`` (its
        marginal distribution), by the midpoint rule; a row with every score
        missing gets the training base rate. Fitting uses each column's observed values for
        its ECDF; BernsteinFusion fits incomplete rows with the missing score integrated
        out of its design, the other methods fit on the complete rows.
    ecdf_knots : int, None or "auto", default="auto"
        Knots per column of the ECDF: ``None`` the exact ECDF (one knot per distinct
        value), an int at most that many knots (a quantile sketch with exact values at the
        knots; ``ecdf_error_bound_`` bounds its error), ``"auto"`` exact below 100,000
        training rows and 10,000 knots from there on (small models, fast predictions).
    random_state : int, RandomState or None, default=0
        Seeds every random choice of the fit (cross-validation folds); the default makes
        fits reproducible bit for bit. Methods without randomness accept and ignore it.
    verbose : bool or int, default=False
        Progress of long fits (a progress bar when tqdm is installed).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels, sorted; ``classes_[1]`` is the positive class.
    ecdf_ : ECDFNormalizer
        Normalizer fitted on the training scores (reversed where ``increasing_`` is False).
    n_features_in_ : int
        Number of score columns ``M``.
    feature_names_in_ : ndarray of str
        Column names, when ``S`` was a DataFrame with string column names.
    increasing_ : ndarray of bool of shape (M,)
        Whether each score was used as given (True) or reversed (False), see ``increasing``.
    reversal_offset_ : ndarray of shape (M,)
        How a reversed score is reversed: ``s -> offset - s`` with offset 1 for a column whose
        training values all lie in ``[0, 1]`` (a probability ``p`` becomes ``1 - p``) and 0
        otherwise.
    ecdf_knots_ : int or None
        The number of ECDF knots per column actually used (``None``: the exact ECDF).
    ecdf_error_bound_ : float
        Bound on the distance between the ECDF used and the exact one (0 when exact).
    base_rate_ : float
        Weighted share of positives among the training rows.
    proba_bounds_ : ndarray of shape (2,)
        ``[low, high]``: every predicted probability is clipped to this interval inside
        ``(0, 1)``, so that no prediction is exactly 0 or 1 (see :func:`proba_bounds`);
        ``[0.0, 1.0]`` for a model that cannot reach either end.
    """

    #: Whether a 1-D score array (M = 1) is accepted (public as ``accepts_single_score``).
    _allows_1d: ClassVar[bool] = False
    #: Whether ``fit`` honours ``sample_weight``.
    _supports_sample_weight: ClassVar[bool] = True
    #: Whether the fitted calibrating function is guaranteed non-decreasing in every score.
    _monotone: ClassVar[bool] = False
    #: Whether multi-class scores (n, M, C) are fitted (one-vs-rest fusions, coupled).
    _supports_multiclass: ClassVar[bool] = False
    #: Whether ``_fit_scores`` takes rows with missing (NaN) normalized scores itself; else
    #: the base fits on complete rows only (missing="marginal").
    _fits_missing: ClassVar[bool] = False
    #: Whether the model depends on the scores only through their ECDF values, so that it is
    #: invariant under strictly increasing transforms of a score: such a method normalizes
    #: a score between two training scores by its position alone (see ``_ecdf_between``).
    _rank_based: ClassVar[bool] = False
    #: scikit-learn parameter constraints, validated once at ``fit``.
    _parameter_constraints: ClassVar[dict] = {}
    #: Names of the fitted attributes this class adds (persistence saves exactly the union
    #: of these along the class hierarchy).
    _fitted_attributes: ClassVar[tuple[str, ...]] = (
        "classes_",
        "ecdf_",
        "n_features_in_",
        "feature_names_in_",
        "increasing_",
        "reversal_offset_",
        "ecdf_knots_",
        "ecdf_error_bound_",
        "base_rate_",
        "estimators_",
        "n_classes_",
        "coupling_slope_",
        "coupling_intercept_",
        "coupling_penalty_",
        "multiclass_",
        "proba_bounds_",
    )

    def __new__(cls, *args, **kwargs):
        # Python's TypeError for an unknown keyword (raised by the generated __init__) names
        # no alternative; this one names the closest parameter.
        if kwargs:
            known = cls._get_param_names()
            unknown = set(kwargs) - set(known)
            if unknown:
                raise TypeError(unknown_keywords_message(cls.__name__, unknown, known))
        return super().__new__(cls)

    # Parameters: every estimator declares its own as dataclass fields (the generated
    # __init__ only stores them, as scikit-learn requires); these shared ones come last and
    # keyword-only.
    _: KW_ONLY
    increasing: bool | str | Sequence = "auto"
    missing: str = "error"
    ecdf_knots: int | str | None = "auto"
    random_state: int | np.random.RandomState | None = 0
    verbose: bool | int = False

    # -- parameters --------------------------------------------------------------------------
    def validate_params(self) -> None:
        """Check every parameter's type and range, as :meth:`fit` does first.

        Nothing is fitted and no data are needed: the checks are those each class declares
        for its parameters one at a time. What depends on the data (a degree against the
        number of rows, ``increasing`` against the number of scores) is checked by
        :meth:`fit`. :func:`fusion.load` runs this on the parameters of every saved model
        before it restores the fitted state.

        Raises
        ------
        ValueError
            A parameter has a type or value the estimator does not take (scikit-learn's
            ``InvalidParameterError``); the message names the parameter and what it takes.
        """
        self._validate_params()

    @property
    def accepts_single_score(self) -> bool:
        """Whether :meth:`fit` takes a single score (M = 1), as a 1-D array or one column.

        A property of the class, read-only. Every method of :data:`fusion.METHODS` and every
        1-D calibrator takes one score; a subclass that fuses two or more only declares
        False (``fit`` then refuses a single column, and :func:`fusion.load` a model of one).
        """
        return self._allows_1d

    # -- steps a method implements -------------------------------------------------------
    def _fit_normalized(self, U: np.ndarray, y: np.ndarray, sample_weight: np.ndarray):
        raise NotImplementedError

    def _calibrate(self, U: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _fit_scores(self, S: np.ndarray, U: np.ndarray, y: np.ndarray, w: np.ndarray):
        """Fit from the (direction-adjusted) scores ``S`` and their normalized values ``U``."""
        self._fit_normalized(U, y, w)

    def _calibrate_scores(self, S: np.ndarray, U: np.ndarray) -> np.ndarray:
        """The fitted probability at scores ``S`` with normalized values ``U``."""
        return self._calibrate(U)

    def _ecdf_between(self) -> str:
        """How a score between two knots of ``ecdf_`` is normalized (the ``between`` of
        :meth:`~fusion.ecdf.ECDFNormalizer.transform`), derived from the class and its
        parameters so that a saved model needs no record of it.

        ``"step"`` for a rank-based model (``_rank_based``): the value of a new score then
        depends only on where it falls among the training scores (the mean of its two
        neighbours' values), so predictions are invariant under strictly increasing
        transforms of a score at every point, not only at the training scores, and are step
        functions of a score between training values (steps of about ``1 / n``).
        ``"linear"`` otherwise: interpolation on the scores' own scale, continuous.
        """
        return "step" if self._rank_based else "linear"

    def _fit_proba_bounds(self, S: np.ndarray, U: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``proba_bounds_`` from the complete training rows (``w``: canonical weights): by
        :func:`proba_bounds` of the fitted probabilities there (one prediction pass). A
        method whose function cannot reach 0 or 1 returns ``[0.0, 1.0]`` instead."""
        p = np.clip(self._calibrate_scores(S, U), 0.0, 1.0)
        return proba_bounds(p, w)

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, S, y, sample_weight=None, *, classes=None):
        """Fit the calibrating function on training scores.

        Parameters
        ----------
        S : array-like of shape (n, M), or (n, M, C) / a list of M arrays (n, C)
            Scores of the ``M`` classifiers (any strictly increasing scale), or a DataFrame.
            Multi-class: each scorer's ``C`` class scores, the columns in the sorted order
            of the labels (as scikit-learn's ``predict_proba`` gives them) unless
            ``classes`` gives their order, for the methods that support it (see
            :mod:`fusion._multiclass`). One network's class scores may be passed as an
            ``(n, C)`` array when the labels hold ``C >= 3`` classes (or ``classes`` lists
            them): it is then ``S[:, None, :]`` (M = 1); so may a DataFrame, whose column
            names, where they include every label of ``y``, give ``classes`` (the columns'
            order). Tensors of a deep-learning framework
            (also with grad, in bfloat16, on a GPU) are taken as they come
            (:func:`fusion._tensors.host_array`), here and in prediction.
        y : array-like of shape (n,)
            Labels: any two values (the second in sorted order is positive), or up to ``C``
            values for multi-class scores.
        sample_weight : array-like of shape (n,), optional
            Non-negative row weights. Scaling them changes nothing; a zero weight is the same
            as leaving the row out.
        classes : array-like, optional
            Multi-class: the label of every class column, in the scores' column order (the
            order of the networks' outputs), labels absent from ``y`` included (then only
            the methods that share their fit across classes can fit it, see
            :class:`~fusion.BernsteinFusion`); ``classes_`` keeps this order. Without it the
            columns follow the sorted labels, and labels missing from ``y`` must be integers
            ``0 .. C - 1`` that number the columns (0 among them). For binary scores it
            must hold the two labels of ``y``.

        Returns
        -------
        self
        """
        work = self._blank()
        y, sample_weight = host_array(y), host_array(sample_weight)
        S3 = multiclass_scores(S)
        if S3 is None:
            S3, classes = single_network_scores(S, y, classes)
        # The thread count of the fit's dense algebra is decided here, once: its products
        # are small (tens to hundreds of coefficients), so BLAS threads gain nothing and, on
        # a busy machine, spin (a default fit at M = 6, n = 10,000 took 74 s with the
        # default threads and 4.5 s with one at a load of 6-8 on 2 cores). The caller's
        # limits are restored afterwards.
        with one_blas_thread():
            if S3 is None:
                if classes is not None:
                    _check_binary_classes(classes, y)
                work._fit(S, y, sample_weight)
            else:
                work._fit_multiclass(S3, y, sample_weight, classes)
        self._adopt(work)
        return self

    def _blank(self) -> FusionEstimator:
        """A copy with this estimator's parameters and no fitted state."""
        work = copy.copy(self)
        for name in [k for k in vars(work) if _is_state(k)]:
            delattr(work, name)
        return work

    def _adopt(self, work: FusionEstimator) -> None:
        """Replace this estimator's fitted state by ``work``'s in one assignment."""
        state = {k: v for k, v in vars(self).items() if not _is_state(k)}
        state.update((k, v) for k, v in vars(work).items() if _is_state(k))
        self.__dict__ = state

    def _fit(self, S, y, sample_weight):
        """Validation, weights, directions, ECDF, then the method's fit (on ``self``)."""
        self._validate_params()
        missing = getattr(self, "missing", "error")
        check_layout(S, n_labels=len(y) if hasattr(y, "__len__") else None)
        S = check_scores(
            self, S, reset=True, allows_1d=self._allows_1d, allow_nan=missing == "marginal"
        )
        if not self._allows_1d and S.shape[1] < 2:
            raise ValueError(
                # "1 feature(s)" is scikit-learn's wording (check_fit2d_1feature).
                f"{type(self).__name__} fuses M >= 2 scores, got {S.shape[1]} column "
                f"({S.shape[1]} feature(s)); use RPRCalibrator or ENIRCalibrator for a single "
                "score."
            )
        n = S.shape[0]
        if n < 2:
            raise ValueError(f"at least 2 training rows are needed, got {n} sample.")
        self.classes_, y01 = encode_binary_targets(y, n)
        if sample_weight is not None and not self._supports_sample_weight:
            raise ValueError(f"{type(self).__name__} does not support sample_weight.")
        w = check_sample_weight(sample_weight, n)
        for c in (0, 1):
            if not w[y01 == c].sum() > 0:
                raise ValueError(
                    f"sample_weight is zero on every row of class {label_repr(self.classes_[c])}; "
                    "both classes need positive total weight."
                )
        kept = w > 0
        if not kept.all():
            S, y01, w = S[kept], y01[kept], w[kept]
        if sample_weight is not None:  # ones are canonical already
            w = canonical_weights(w)  # proportional weights: identical bits from here on
        self._kept_rows = kept
        if S.shape[0] < 2:
            raise ValueError(
                f"at least 2 training rows with positive sample_weight are needed, got "
                f"{S.shape[0]}."
            )
        self.base_rate_ = float(np.dot(w, y01) / w.sum())
        S, self.ecdf_, U = self._fit_direction(S, y01, w)
        # Methods see weights with mean 1; _weight_unit turns their sums back into canonical
        # weight, in which an integer weight counts as that many rows (a row count).
        self._weight_unit = float(w.mean())
        w = w / self._weight_unit
        # NaN only with missing="marginal" (validated); a row-wise any() over 10^7 x M is slow
        complete = ~np.isnan(U).any(axis=1) if missing == "marginal" else None
        if complete is not None and complete.all():
            complete = None
        try:
            if self._fits_missing or complete is None:
                self._fit_scores(S, U, y01, w)
            else:
                self._kept_rows = _subset_mask(kept, complete)
                self._fit_scores(S[complete], U[complete], y01[complete], w[complete])
            if complete is not None:
                S, U, w = S[complete], U[complete], w[complete]
            self.proba_bounds_ = self._fit_proba_bounds(S, U, w * self._weight_unit)
        finally:
            self.__dict__.pop("_kept_rows", None)
            del self._weight_unit

    def _check_multiclass_support(self) -> None:
        if not self._supports_multiclass:
            supported = sorted(  # concrete estimators: shared bases have subclasses
                c.__name__
                for c in _subclasses(FusionEstimator)
                if c._supports_multiclass and not c.__subclasses__()
            )
            raise ValueError(
                f"{type(self).__name__} fuses binary scores only; multi-class scores (n, M, C) "
                f"are supported by {', '.join(supported)} (fusion.fit(S, y) uses the default "
                "method, BernsteinFusion)."
            )

    def _fit_direction(
        self, S: np.ndarray, y: np.ndarray, w: np.ndarray
    ) -> tuple[np.ndarray, ECDFNormalizer, np.ndarray]:
        """Decide and apply the direction of every score (``increasing``), and fit the
        normalization; return the direction-adjusted ``S``, the ECDF and ``U``.

        ``"auto"`` tests each score on the normalized values of the ECDF the fit needs anyway
        (one ECDF per column, not two); only when a score is reversed is the ECDF refitted
        on the reversed scores.
        """
        M = S.shape[1]
        wanted = resolve_increasing(getattr(self, "increasing", True), M)
        offsets = np.zeros(M)
        if S.dtype.kind == "f":
            for j in range(M):
                col = S[:, j]
                seen = col[~np.isnan(col)]
                if seen.size and seen.min() >= 0.0 and seen.max() <= 1.0:
                    offsets[j] = 1.0
        self.reversal_offset_ = offsets
        self.increasing_ = np.array([True if v is None else bool(v) for v in wanted])
        S = self._apply_direction(S)
        ecdf, U = self._fit_ecdf(S, w)
        flagged, zs = [], []
        for j, want in enumerate(wanted):
            if want is None:
                z = anti_alignment_z(U[:, j], y, w)
                if z < DIRECTION_Z:
                    flagged.append(j)
                    zs.append(z)
        if flagged:
            warn_reversed([self._column_name(j) for j in flagged], zs)
            self.increasing_[flagged] = False
            S = reverse_scores(S, flagged, offsets)
            ecdf, U = self._fit_ecdf(S, w)
        return S, ecdf, U

    def _apply_direction(self, S: np.ndarray) -> np.ndarray:
        """Reverse the scores whose ``increasing_`` is False (``s -> offset - s``)."""
        increasing = getattr(self, "increasing_", None)
        if increasing is None or increasing.all():
            return S
        return reverse_scores(S, np.flatnonzero(~increasing), self.reversal_offset_)

    def _column_name(self, j: int) -> str:
        return column_label(getattr(self, "feature_names_in_", None), j)

    def _fit_ecdf(self, S: np.ndarray, w: np.ndarray) -> tuple[ECDFNormalizer, np.ndarray]:
        """Fit the weighted normalization on the training scores (``ecdf_knots`` decides
        exact vs summarized); return it and the normalized training scores."""
        n_knots = self._ecdf_knots_for(S.shape[0])
        ecdf = ECDFNormalizer(
            n_knots=n_knots, allow_nan=getattr(self, "missing", "error") == "marginal"
        )
        unit = bool(np.all(w == 1.0))
        try:
            U = ecdf.fit_transform(
                S, sample_weight=None if unit else w, between=self._ecdf_between()
            )
        except ConstantColumnError as err:
            raise ConstantColumnError(f"{err} {CONSTANT_COLUMN_REMEDY}") from None
        self.ecdf_knots_ = n_knots
        self.ecdf_error_bound_ = ecdf.error_bound_
        return ecdf, U

    def _ecdf_knots_for(self, n_rows: int) -> int | None:
        knots = getattr(self, "ecdf_knots", None)
        if isinstance(knots, str):  # "auto"
            return SKETCH_KNOTS if n_rows >= AUTO_SKETCH_ROWS else None
        return None if knots is None else int(knots)

    def _cv_splits(self, U: np.ndarray, y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """(train, test) pairs over the rows being fitted (normalized scores ``U``, labels
        ``y``), from ``cv`` and ``random_state``; an int ``cv`` deals the rows to folds by
        their content, per class (see :func:`fusion._cv.content_folds`)."""
        return cv_splits(
            getattr(self, "cv", 5),
            y,
            getattr(self, "random_state", None),
            kept=getattr(self, "_kept_rows", None),
            keys=U,
        )

    # -- prediction --------------------------------------------------------------------------
    def calibrating_function(self, U) -> np.ndarray:
        """The fitted ``f`` at already-normalized points.

        Parameters
        ----------
        U : array-like of shape (n, M)
            Points of ``[0, 1]^M`` (ECDF-normalized, direction-adjusted scores).

        Returns
        -------
        p : ndarray of shape (n,)
            ``P(Y = classes_[1] | U)``, in ``[0, 1]``.
        """
        if self._is_multiclass():
            U = np.asarray(U, dtype=float)
            if U.ndim != 3 or U.shape[1:] != (self.n_features_in_, self.n_classes_):
                raise ValueError(
                    f"normalized points of a multi-class model must have shape (n, "
                    f"{self.n_features_in_}, {self.n_classes_}), got {U.shape}."
                )
            return self._class_distribution_normalized(U)
        check_is_fitted(self, "ecdf_")
        U = check_normalized_points(U, self.n_features_in_)
        return self._checked(self._calibrate(U), U)

    def _checked(self, p, U) -> np.ndarray:
        p = np.asarray(p, dtype=float).reshape(-1)
        if not np.all(np.isfinite(p)):
            # A method bug, not a user error: never hand NaN downstream.
            raise RuntimeError(
                f"{type(self).__name__} produced non-finite probabilities at normalized "
                f"points {U[~np.isfinite(p)][:3].tolist()}; please report this."
            )
        return np.clip(p, *self._proba_bounds())

    def _proba_bounds(self) -> tuple[float, float]:
        """``proba_bounds_``; a model saved before it existed has none and predicts as saved."""
        low, high = self.__dict__.get("proba_bounds_", (0.0, 1.0))
        return low, high

    def _positive_proba(self, S) -> np.ndarray:
        """``P(Y = classes_[1])`` for raw scores (missing scores integrated out)."""
        check_is_fitted(self, "ecdf_")
        S = self._validated_scores(S)
        U = self.ecdf_.transform(S, between=self._ecdf_between())
        missing = np.isnan(U).any(axis=1)
        if not missing.any():
            return self._checked(self._calibrate_scores(S, U), U)
        p = np.empty(U.shape[0])
        if (~missing).any():
            p[~missing] = self._checked(
                self._calibrate_scores(S[~missing], U[~missing]), U[~missing]
            )
        p[missing] = self._integrate_missing(S[missing], U[missing])
        return p

    def predict_proba(self, S) -> np.ndarray:
        """Class probabilities for raw scores.

        Parameters
        ----------
        S : array-like of shape (n, M), or (n, M, C) for a multi-class model
            The scores in the form the model was fitted on: binary, ``M`` columns;
            multi-class, ``(n, M, C)`` (or a list of ``M`` arrays ``(n, C)``; one network's
            ``(n, C)`` for a model fitted on one network), each network's scores on the
            scale it was fitted on (logits, log-probabilities or probabilities).

        Returns
        -------
        proba : ndarray of shape (n, 2), or (n, C)
            Columns follow ``classes_`` (multi-class: the class columns' order, see
            :meth:`fit`); for a binary model the second is ``P(Y = classes_[1])``. Rows sum
            to one.
        """
        check_is_fitted(self, "classes_")
        if self._is_multiclass():
            return self._multiclass_proba(S)
        if multiclass_scores(S) is not None:
            S = self._binary_columns(S)
        p = self._positive_proba(S)
        return np.column_stack([1.0 - p, p])

    def predict(self, S) -> np.ndarray:
        """The most probable label: binary, ``classes_[1]`` where its probability exceeds 0.5
        (the negative class on a tie); multi-class, the class of the largest probability
        (the first column on a tie)."""
        check_is_fitted(self, "classes_")
        if self._is_multiclass():
            return self.classes_[np.argmax(self._multiclass_proba(S), axis=1)]
        if multiclass_scores(S) is not None:
            S = self._binary_columns(S)
        p = self._positive_proba(S)
        return self.classes_[(p > 0.5).astype(int)]

    def _binary_columns(self, S) -> np.ndarray:
        """The positive class's scores of (n, M, 2) input to a binary model."""
        S3 = multiclass_scores(S)
        if S3.shape[2] != 2:
            raise ValueError(
                f"this model fuses binary scores: pass S of shape (n, {self.n_features_in_}), "
                f"got multi-class scores of shape {S3.shape}."
            )
        return S3[:, :, 1]

    def _validated_scores(self, S) -> np.ndarray:
        S = check_scores(
            self,
            S,
            reset=False,
            allows_1d=self._allows_1d,
            allow_nan=getattr(self, "missing", "error") == "marginal",
        )
        return self._apply_direction(S)

    def normalize(self, S) -> np.ndarray:
        """Scores as the normalized points :meth:`calibrating_function` takes.

        Parameters
        ----------
        S : array-like of shape (n, M)
            Scores of a binary model, as :meth:`predict_proba` takes them.

        Returns
        -------
        U : ndarray of shape (n, M)
            The fitted ECDF of every score (``ecdf_``) at ``S``, each score in its fitted
            direction (``increasing_``), in ``(0, 1)`` (NaN where a score is missing).
        """
        check_is_fitted(self, "ecdf_")
        return self.ecdf_.transform(self._validated_scores(S), between=self._ecdf_between())

    def _integrate_missing(self, S: np.ndarray, U: np.ndarray) -> np.ndarray:
        """Probabilities of rows with missing scores: the calibrating function averaged over
        each missing normalized score, uniform on ``[0, 1]`` (its marginal distribution),
        by the midpoint rule; the base rate where every score is missing."""
        out = np.empty(U.shape[0])
        pattern = np.isnan(U)
        keys, inverse = np.unique(pattern, axis=0, return_inverse=True)
        for k, key in enumerate(keys):
            rows = np.flatnonzero(inverse.reshape(-1) == k)
            miss = np.flatnonzero(key)
            if miss.shape[0] == U.shape[1]:
                out[rows] = self.base_rate_
                continue
            nodes, weights = _quadrature(miss.shape[0])
            Q = nodes.shape[0]
            Ux = np.repeat(U[rows], Q, axis=0)
            Ux[:, miss] = np.tile(nodes, (rows.shape[0], 1))
            Sx = np.repeat(S[rows], Q, axis=0).astype(float)
            Sx[:, miss] = np.nan  # the scale of a missing score is unknown: methods use Ux
            p = self._checked(self._calibrate_scores(Sx, Ux), Ux)
            out[rows] = p.reshape(rows.shape[0], Q) @ weights
        return np.clip(out, 0.0, 1.0)

    # -- persistence -------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the fitted model to ``path`` as plain data (no pickle); read it with
        :func:`fusion.load`. Format and guarantees: :mod:`fusion.persistence`.

        A path is written atomically (a unique temporary file in the same directory, then a
        rename), so concurrent saves and readers always see a complete file; a symbolic link
        is followed.

        Parameters
        ----------
        path : str, os.PathLike or binary file object
            Destination.

        Raises
        ------
        fusion.PersistenceError
            Some parameter or fitted attribute is not plain data or not declared (nothing is
            written).
        fusion.persistence.BinaryModeError
            ``path`` is a file object open in text mode.
        OSError
            Writing failed; the message names ``path``.
        """
        write_model(self, path)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        # A monotone fit assumes every score increases with P(positive); scikit-learn's
        # accuracy check uses blobs where one feature decreases with it, which such a fit
        # cannot use by design. poor_score skips only that accuracy threshold.
        tags.classifier_tags.poor_score = self._monotone
        # input_tags.one_d_array stays False even when _allows_1d: to scikit-learn it means
        # "takes only 1-D X" (its checks then feed X[:, 0] everywhere), not "also takes 1-D".
        tags.input_tags.allow_nan = getattr(self, "missing", "error") == "marginal"
        return tags


def proba_bounds(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The interval inside ``(0, 1)`` that a fitted model's probabilities are clipped to.

    ``p``: the model's probabilities at its training rows, ``w``: their canonical weights
    (an integer weight counts as that many rows). A model that predicts exactly 0 on rows of
    total weight ``W0`` (an isotonic block or a bin without positives) claims more than those
    rows show: the add-half (Jeffreys) estimate for ``W0`` rows without a positive is
    ``0.5 / (W0 + 1)``. That is the lower bound, capped at the smallest training probability
    inside ``(0, 1)`` so that the clip moves only the predictions that were 0 (and new points
    below every training prediction) and keeps the order of all others; clipping a
    non-decreasing, continuous function keeps it so. Without a training prediction at 0 the
    bound is ``0.5 / (n + 1)`` for all ``n`` rows, capped the same way; the upper bound
    mirrors it. A prediction within :data:`SATURATED` of 0 or 1 counts as 0 or 1: an average
    of ones (ENIR's models) can round to one ulp below 1.
    """
    n = float(w.sum())
    at0, at1 = p <= SATURATED, p >= 1.0 - SATURATED
    W0, W1 = float(w[at0].sum()), float(w[at1].sum())
    low = 0.5 / ((W0 if W0 > 0 else n) + 1.0)
    high = 1.0 - 0.5 / ((W1 if W1 > 0 else n) + 1.0)
    inside = p[~at0 & ~at1]
    if inside.size:
        low, high = min(low, float(inside.min())), max(high, float(inside.max()))
    return np.array([low, high])


def _check_binary_classes(classes, y) -> None:
    """``classes`` given with binary scores must be the two labels of ``y``."""
    labels = np.unique(np.asarray(classes))
    seen = np.unique(np.asarray(y))
    if labels.shape[0] != 2 or seen.shape != labels.shape or not np.all(seen == labels):
        raise ValueError(
            f"classes={labels.tolist()[:10]} does not match the labels of y "
            f"{seen.tolist()[:10]}: a binary fit needs both of its two classes in y."
        )


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


def _subset_mask(kept: np.ndarray, sub: np.ndarray) -> np.ndarray:
    """The user's rows that are kept and, among the kept ones, selected by ``sub``."""
    out = np.zeros(kept.shape[0], dtype=bool)
    out[np.flatnonzero(kept)[sub]] = True
    return out


def _quadrature(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Midpoint-rule nodes on ``[0, 1]^k`` (``(Q, k)``) and equal weights summing to 1.

    The midpoint rule rather than Gauss-Legendre: calibrating functions may be step functions
    (isotonic, histogram, ENIR), on which it is as good as any rule of as many points, and
    on smooth ones its ``O(1 / q^2)`` error is below 1e-5 for one missing score.
    """
    q = max(2, min(256, int(math.floor(_MAX_QUADRATURE ** (1.0 / k) + 1e-9))))
    x = (np.arange(q) + 0.5) / q
    grids = np.meshgrid(*([x] * k), indexing="ij")
    nodes = np.column_stack([g.reshape(-1) for g in grids])
    return nodes, np.full(nodes.shape[0], 1.0 / nodes.shape[0])
