"""Shared estimator base: input validation, the ECDF step, ``predict_proba``, solver boundary.

Every fusion method subclasses :class:`FusionEstimator` and implements two private steps:

``_fit_normalized(U, y, sample_weight)``
    fit on ECDF-normalized scores ``U`` in ``(0, 1)^M`` with ``y`` in ``{0., 1.}`` (1 is the
    positive class, ``classes_[1]``) and weights ``sample_weight`` (all ones when the user
    gave none); store fitted attributes ending in ``_``.
``_calibrate(U)``
    the fitted calibrating function at normalized points, a 1-D array.

The base does everything else: validation with messages that name the problem, the class
labels, ``n_features_in_``/``feature_names_in_``, the fitted :class:`~fusion.ecdf.ECDFNormalizer`
in ``ecdf_``, ``predict_proba``/``predict`` and ``calibrating_function``.
"""

from __future__ import annotations

import numbers
import warnings
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .ecdf import ECDFNormalizer

__all__ = [
    "FusionEstimator",
    "SolverError",
    "SolverWarning",
    "QPSolver",
    "check_normalized_points",
    "cv_fold_ids",
    "one_blas_thread",
]


class SolverError(RuntimeError):
    """A numerical solver stopped without a usable solution.

    Attributes
    ----------
    status : str
        The solver's own status string (e.g. ``"maximum iterations reached"``).
    solver : str
        Which solver reported it.
    """

    def __init__(self, message: str, *, status: str, solver: str):
        super().__init__(message)
        self.status = status
        self.solver = solver


class SolverWarning(UserWarning):
    """A solver returned a solution flagged as inaccurate; the result is used but suspect."""


# ---------------------------------------------------------------------------------------------
# Solver boundary: every OSQP call in the package goes through here.


class QPSolver:
    """One OSQP problem ``min 0.5 x'Px + q'x  s.t.  lower <= Ax <= upper``, solved repeatedly.

    The constraints are fixed; ``P`` (same sparsity pattern every time) and ``q`` may change
    between calls, which then reuse OSQP's workspace and warm-start from the last solution
    (cross-validation folds, regularization paths).

    Parameters
    ----------
    A : scipy.sparse matrix
    lower, upper : ndarray
    problem : str
        Name of the problem, used in messages.
    **settings
        OSQP settings; ``verbose`` defaults to False.

    Attributes
    ----------
    last_iterations : int
        OSQP's iteration count of the most recent :meth:`solve` (0 before the first), also
        when that solve raised :class:`SolverError`; estimators report it as ``n_iter_``.

    Notes
    -----
    Callers in this package leave OSQP's solution polishing off: in OSQP 1.x it prints a line
    to stdout on every solve with an empty active set whatever ``verbose`` says (osqp issue
    #785), and it can accept a polished point far outside the tolerances (osqp issue #790).
    Tight ``eps_abs``/``eps_rel`` plus an exact projection onto the feasible set are used
    instead.
    """

    def __init__(self, A, lower, upper, *, problem: str, **settings: Any):
        self.A = sp.csc_matrix(A)
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.problem = problem
        self.settings = {"verbose": False, **settings}
        self._solver = None
        self.last_iterations = 0

    def solve(self, P: sp.csc_matrix, q: np.ndarray) -> tuple[np.ndarray, str]:
        """Solve with this ``P`` (upper triangle, CSC) and ``q``.

        Returns
        -------
        x : ndarray
        status : str
            ``"solved"``, or ``"solved inaccurate"`` with a :class:`SolverWarning`.

        Raises
        ------
        SolverError
            Any other OSQP status (iteration or time limit, infeasible, non-convex, ...).
        """
        import osqp

        if self._solver is None:
            self._solver = osqp.OSQP()
            self._solver.setup(P, q, self.A, self.lower, self.upper, **self.settings)
        else:
            self._solver.update(Px=P.data, q=q)
        result = self._solver.solve(raise_error=False)
        self.last_iterations = int(result.info.iter)
        status = str(result.info.status)
        finite = result.x is not None and bool(np.all(np.isfinite(result.x)))
        if status == "solved" and finite:
            return np.asarray(result.x, dtype=float), status
        if status == "solved inaccurate" and finite:
            warnings.warn(
                f"OSQP returned '{status}' for the {self.problem} after {result.info.iter} "
                f"iterations (primal residual {result.info.prim_res:.2e}); the solution is used "
                "after projection onto the feasible set. Raise max_iter to silence this.",
                SolverWarning,
                stacklevel=3,
            )
            return np.asarray(result.x, dtype=float), status
        raise SolverError(
            f"OSQP could not solve the {self.problem}: status '{status}' after "
            f"{result.info.iter} iterations.",
            status=status,
            solver="osqp",
        )


# ---------------------------------------------------------------------------------------------
# Validation helpers.


def _first_nonfinite(A: np.ndarray) -> str:
    idx = np.argwhere(~np.isfinite(A))[0]
    where = f"row {idx[0]}, column {idx[1]}" if A.ndim == 2 else f"row {idx[0]}"
    v = A[tuple(idx)]
    # "NaN"/"inf" spelled as scikit-learn's messages do (its checks match on them).
    return f"{'NaN' if np.isnan(v) else v} at {where}"


@lru_cache(maxsize=1)
def _threadpools():
    from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn

    return ThreadpoolController()


def one_blas_thread():
    """Context limiting BLAS/LAPACK to one thread (the controller is built once).

    For many small BLAS calls (skinny Gram updates, one tiny LAPACK call per Delaunay
    simplex) threads gain nothing, and multithreaded OpenBLAS busy-waits when the cores are
    shared: measured 5-25x slower fits on a loaded 2-core machine.
    """
    return _threadpools().limit(limits=1, user_api="blas")


def cv_fold_ids(y: np.ndarray, n_folds: int, random_state) -> np.ndarray:
    """Fold number (0..n_folds-1) of each row for a method's internal cross-validation.

    A shuffled stratified split when both classes have ``n_folds`` rows, a shuffled plain
    split otherwise. Shuffled rather than systematic folds on purpose: dealing rows sorted by
    score to the folds in turn made held-out Brier scores favour the largest model in RPR's
    simulations, with worse L2 error to the truth.
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    n = y.shape[0]
    if n < n_folds:
        raise ValueError(f"cv={n_folds} folds need at least {n_folds} rows, got {n}.")
    counts = np.bincount(y.astype(int), minlength=2)
    splitter = (
        StratifiedKFold(n_folds, shuffle=True, random_state=random_state)
        if counts.min() >= n_folds
        else KFold(n_folds, shuffle=True, random_state=random_state)
    )
    fold_of = np.empty(n, dtype=np.int64)
    for f, (_, test) in enumerate(splitter.split(np.zeros(n), y)):
        fold_of[test] = f
    return fold_of


def check_normalized_points(U, n_features: int) -> np.ndarray:
    """Validate points of the normalized cube ``[0, 1]^M`` and return them as (n, M) floats."""
    U = np.asarray(U, dtype=float)
    if U.ndim == 1 and n_features == 1:
        U = U[:, None]
    if U.ndim == 1 and U.shape[0] == n_features:
        U = U[None, :]
    if U.ndim != 2 or U.shape[1] != n_features:
        raise ValueError(f"normalized points must have shape (n, {n_features}), got {np.shape(U)}.")
    if not np.all(np.isfinite(U)):
        raise ValueError(f"normalized points must be finite; found {_first_nonfinite(U)}.")
    tol = 1e-12
    if U.size and (U.min() < -tol or U.max() > 1 + tol):
        raise ValueError(
            f"normalized points must lie in [0, 1]; got values in [{U.min()}, {U.max()}]. "
            "Use predict_proba for raw scores."
        )
    return np.clip(U, 0.0, 1.0)


def _check_numeric_columns(S) -> None:
    """Name the first non-numeric score column instead of numpy's 'could not convert'."""
    if hasattr(S, "dtypes"):  # DataFrame
        for name, dtype in zip(S.columns, S.dtypes, strict=True):
            if getattr(dtype, "kind", "O") not in "biuf":
                raise ValueError(
                    f"score column {name!r} has non-numeric dtype {dtype}; scores must be numbers."
                )
        return
    arr = np.asarray(S)
    if arr.dtype.kind in "biuf":
        return
    if arr.dtype.kind == "c":
        raise ValueError("Complex data not supported: scores must be real numbers.")
    flat = arr.reshape(arr.shape[0], -1) if arr.ndim >= 1 and arr.size else arr
    if flat.ndim == 2:
        for j in range(flat.shape[1]):
            for i, v in enumerate(flat[:, j]):
                if isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
                    raise ValueError(
                        f"Complex data not supported: score column {j} holds {v!r} at row {i}."
                    )
                if isinstance(v, bool) or not isinstance(v, numbers.Real):
                    raise ValueError(
                        f"score column {j} holds a non-numeric value {v!r} at row {i}; "
                        "scores must be numbers."
                    )


def _as_array(S) -> np.ndarray:
    """``S`` as an ndarray; mixed lists keep their Python objects for the non-numeric check."""
    try:
        arr = np.asarray(S)
        if arr.dtype.kind in "US" and not isinstance(S, np.ndarray):
            # np.asarray turns [[1, "a"]] into strings; keep the objects to name the culprit.
            arr = np.asarray(S, dtype=object)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"S must be a rectangular (n, M) array of scores: {err}") from None
    return arr


def _label(v) -> str:
    """A class label for messages: ``1``, ``'pos'``, not numpy's ``np.int64(1)``."""
    return repr(v.item() if isinstance(v, np.generic) else v)


def _encode_targets(y, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(classes, y01)`` for exactly two classes; the second class is positive."""
    if y is None:
        # Wording of scikit-learn's own message, which its conformance checks look for.
        raise ValueError(
            "this estimator requires y to be passed, but the target y is None; pass the binary "
            "class label of every row of S."
        )
    if sp.issparse(y):
        raise ValueError("y must be a dense 1-D array of labels; sparse input is not supported.")
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n:
        raise ValueError(f"S has {n} rows but y has {y.shape[0]} labels; they must match.")
    if y.dtype.kind == "c":
        raise ValueError("Complex data not supported: y must hold class labels.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"y contains {_first_nonfinite(y)}; labels must be class values.")
    if y.dtype.kind == "O":
        for i, v in enumerate(y):
            if v is None or (isinstance(v, float) and np.isnan(v)):
                raise ValueError(f"y contains a missing label ({v!r}) at row {i}.")
    if y.dtype.kind in "biu" and y.shape[0]:
        # Numeric labels: two passes instead of np.unique's sort (the largest cost of
        # validation at 1e7 rows). Anything but exactly two values takes the general path.
        lo, hi = y.min(), y.max()
        is_hi = y == hi
        if lo != hi and np.count_nonzero(is_hi | (y == lo)) == y.shape[0]:
            return np.array([lo, hi], dtype=y.dtype), is_hi.astype(float)
    try:
        classes, y_idx = np.unique(y, return_inverse=True)
    except TypeError as err:
        raise ValueError(f"y mixes label types that cannot be compared: {err}") from None
    # Before counting classes: a continuous target has many "classes", and the message should
    # say what is actually wrong.
    if y.dtype.kind == "f" and type_of_target(y) == "continuous":
        shown = classes[:5].tolist() + (["..."] if classes.shape[0] > 5 else [])
        raise ValueError(f"y looks continuous (values {shown}); pass class labels such as 0/1.")
    if classes.shape[0] == 1:
        raise ValueError(
            f"y holds a single class ({_label(classes[0])}); binary fusion needs rows of both "
            "classes."
        )
    if classes.shape[0] != 2:
        shown = list(classes[:5]) + (["..."] if classes.shape[0] > 5 else [])
        # "Only binary classification is supported." is scikit-learn's wording for
        # binary-only classifiers (checked by check_classifier_not_supporting_multiclass).
        raise ValueError(
            "Only binary classification is supported. y must hold exactly two classes; "
            f"found {classes.shape[0]}: {shown}."
        )
    return classes, y_idx.astype(float)


def _check_weights(sample_weight, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight)
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.dtype.kind not in "biuf":
        raise ValueError(f"sample_weight must be numeric, got dtype {w.dtype}.")
    w = w.astype(float)
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"sample_weight must have shape ({n},), got {w.shape}.")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"sample_weight must be finite; found {_first_nonfinite(w)}.")
    if np.any(w < 0):
        i = int(np.flatnonzero(w < 0)[0])
        raise ValueError(f"sample_weight must be non-negative; found {w[i]} at row {i}.")
    if not w.sum() > 0:
        raise ValueError("sample_weight sums to zero; at least one row needs positive weight.")
    return w


# ---------------------------------------------------------------------------------------------


class FusionEstimator(ClassifierMixin, BaseEstimator):
    """Base class of the fusion estimators (not used directly).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels, sorted; ``classes_[1]`` is the positive class.
    ecdf_ : ECDFNormalizer
        Normalizer fitted on the training scores.
    n_features_in_ : int
        Number of score columns ``M``.
    feature_names_in_ : ndarray of str
        Column names, when ``S`` was a DataFrame with string column names.
    """

    #: Whether a 1-D score array (M = 1) is accepted.
    _allows_1d: ClassVar[bool] = False
    #: Whether ``fit`` honours ``sample_weight``.
    _supports_sample_weight: ClassVar[bool] = True
    #: Whether the fitted calibrating function is guaranteed non-decreasing in every score.
    _monotone: ClassVar[bool] = False
    #: scikit-learn parameter constraints, validated once at ``fit``.
    _parameter_constraints: ClassVar[dict] = {}
    #: Fitted attributes set by the base (a subclass declares only its own; persistence
    #: takes the union along the MRO).
    _fitted_attributes: ClassVar[tuple[str, ...]] = (
        "classes_",
        "ecdf_",
        "n_features_in_",
        "feature_names_in_",
    )

    # -- steps a method implements -------------------------------------------------------
    def _fit_normalized(self, U: np.ndarray, y: np.ndarray, sample_weight: np.ndarray):
        raise NotImplementedError

    def _calibrate(self, U: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # -- public API ------------------------------------------------------------------------
    def fit(self, S, y, sample_weight=None):
        """Fit the calibrating function on training scores.

        Parameters
        ----------
        S : array-like of shape (n, M)
            Scores of the ``M`` classifiers (any strictly increasing scale), or a DataFrame.
        y : array-like of shape (n,)
            Binary labels of any two values; the second in sorted order is positive.
        sample_weight : array-like of shape (n,), optional
            Non-negative row weights.

        Returns
        -------
        self
        """
        try:
            U, y01, w = self._validate_fit_input(S, y, sample_weight)
            self._fit_normalized(U, y01, w)
        except BaseException:
            # A failed (re)fit must leave an unfitted estimator (NotFittedError on predict),
            # never this fit's new ecdf_ next to the previous fit's coefficients.
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)
            raise
        return self

    def calibrating_function(self, U) -> np.ndarray:
        """The fitted ``f`` at already-normalized points.

        Parameters
        ----------
        U : array-like of shape (n, M)
            Points of ``[0, 1]^M`` (ECDF-normalized scores).

        Returns
        -------
        p : ndarray of shape (n,)
            ``P(Y = classes_[1] | U)``, in ``[0, 1]``.
        """
        check_is_fitted(self, "ecdf_")
        U = check_normalized_points(U, self.n_features_in_)
        p = np.asarray(self._calibrate(U), dtype=float).reshape(-1)
        if not np.all(np.isfinite(p)):
            # A method bug, not a user error: never hand NaN downstream.
            raise RuntimeError(
                f"{type(self).__name__} produced non-finite probabilities at normalized "
                f"points {U[~np.isfinite(p)][:3].tolist()}; please report this."
            )
        return np.clip(p, 0.0, 1.0)

    def predict_proba(self, S) -> np.ndarray:
        """Class probabilities for raw scores.

        Parameters
        ----------
        S : array-like of shape (n, M)

        Returns
        -------
        proba : ndarray of shape (n, 2)
            Columns follow ``classes_``; the second is ``P(Y = classes_[1])``.
        """
        p = self.calibrating_function(self._normalize(S))
        return np.column_stack([1.0 - p, p])

    def predict(self, S) -> np.ndarray:
        """Labels at threshold 0.5 (the negative class on an exact tie)."""
        p = self.predict_proba(S)[:, 1]
        return self.classes_[(p > 0.5).astype(int)]

    def save(self, path) -> None:
        """Write the fitted model to ``path`` as plain data (no pickle); read it with
        :func:`fusion.load`. Format and guarantees: :mod:`fusion.persistence`.

        Raises
        ------
        fusion.PersistenceError
            Some parameter or fitted attribute is not plain data (nothing is written).
        """
        from .persistence import save  # persistence imports the METHODS registry

        save(self, path)

    # -- validation ------------------------------------------------------------------------
    def _validate_scores(self, S, *, reset: bool) -> np.ndarray:
        if S is None:
            raise ValueError("S is required: pass an (n, M) array of scores.")
        if sp.issparse(S):
            raise ValueError("sparse input is not supported: S must be a dense (n, M) array.")
        if not hasattr(S, "columns"):  # keep DataFrames whole for feature_names_in_
            S = _as_array(S)
            if S.ndim == 1:
                if not (self._allows_1d and (reset or self.n_features_in_ == 1)):
                    # "Reshape your data" is scikit-learn's wording (check_fit2d_predict1d).
                    raise ValueError(
                        f"S must be 2-D of shape (n, M), got a 1-D array of length "
                        f"{S.shape[0]}. Reshape your data with S.reshape(1, -1) if it holds a "
                        + (
                            "single sample, or S.reshape(-1, 1) if it holds a single score."
                            if self._allows_1d
                            else f"single sample; {type(self).__name__} fuses M >= 2 scores."
                        )
                    )
                S = S[:, None]
            if S.ndim != 2:
                raise ValueError(f"S must be a 2-D array of shape (n, M), got {S.ndim} dimensions.")
        if np.shape(S)[0] == 0:
            raise ValueError("S is empty (0 rows); at least one row of scores is needed.")
        if np.shape(S)[1] == 0:
            raise ValueError(
                f"S has no columns: 0 feature(s) (shape={np.shape(S)}) while a minimum of 1 is "
                "required."
            )
        _check_numeric_columns(S)
        S = validate_data(
            self, S, reset=reset, dtype=np.float64, ensure_all_finite=False, ensure_2d=True
        )
        if not np.all(np.isfinite(S)):
            raise ValueError(f"S must hold finite scores; found {_first_nonfinite(S)}.")
        if not reset and S.shape[1] != self.n_features_in_:  # validate_data already raises
            raise ValueError(f"S has {S.shape[1]} columns, expected {self.n_features_in_}.")
        return S

    def _validate_fit_input(self, S, y, sample_weight):
        self._validate_params()
        S = self._validate_scores(S, reset=True)
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
        self.classes_, y01 = _encode_targets(y, n)
        if sample_weight is not None and not self._supports_sample_weight:
            raise ValueError(f"{type(self).__name__} does not support sample_weight.")
        w = _check_weights(sample_weight, n)
        for c in (0, 1):
            if not w[y01 == c].sum() > 0:
                raise ValueError(
                    f"sample_weight is zero on every row of class {_label(self.classes_[c])}; both "
                    "classes need positive total weight."
                )
        self.ecdf_, U = self._fit_ecdf(S)
        return U, y01, w

    def _fit_ecdf(self, S: np.ndarray) -> tuple[ECDFNormalizer, np.ndarray]:
        """Fit the normalization on validated training scores; return it and the normalized
        training scores. A method overrides this to normalize differently (BernsteinFusion's
        ``ecdf_knots`` sketch)."""
        ecdf = ECDFNormalizer()
        return ecdf, ecdf.fit_transform(S)

    def _normalize(self, S) -> np.ndarray:
        check_is_fitted(self, "ecdf_")
        return self.ecdf_.transform(self._validate_scores(S, reset=False))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        # A monotone fit assumes every score increases with P(positive); scikit-learn's
        # accuracy check uses blobs where one feature decreases with it, which such a fit
        # cannot use by design. poor_score skips only that accuracy threshold.
        tags.classifier_tags.poor_score = self._monotone
        # input_tags.one_d_array stays False even when _allows_1d: to scikit-learn it means
        # "takes only 1-D X" (its checks then feed X[:, 0] everywhere), not "also takes 1-D".
        return tags
