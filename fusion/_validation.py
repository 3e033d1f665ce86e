"""Input validation shared by every estimator: scores, labels, weights (the directions of the
scores are in :mod:`fusion._direction`, cross-validation in :mod:`fusion._cv`).

Messages name the problem (row, column, value) and what to do about it; the wording of a
few follows scikit-learn's where its conformance checks look for it.
"""

from __future__ import annotations

import difflib
import inspect
import numbers
from collections.abc import Iterator, Mapping

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d, validate_data

from ._tensors import host_arrays

__all__ = [
    "first_nonfinite",
    "unknown_keywords_message",
    "param_names",
    "CONSTANT_COLUMN_REMEDY",
    "check_layout",
    "check_scores",
    "check_normalized_points",
    "encode_binary_targets",
    "check_sample_weight",
    "canonical_weights",
    "label_repr",
]


def first_nonfinite(A: np.ndarray) -> str:
    """``"NaN at row i, column j"`` for the first non-finite entry of ``A``."""
    idx = np.argwhere(~np.isfinite(A))[0]
    where = f"row {idx[0]}, column {idx[1]}" if A.ndim == 2 else f"row {idx[0]}"
    v = A[tuple(idx)]
    # "NaN"/"inf" spelled as scikit-learn's messages do (its checks match on them).
    return f"{'NaN' if np.isnan(v) else v} at {where}"


def label_repr(v) -> str:
    """A class label for messages: ``1``, ``'pos'``, not numpy's ``np.int64(1)``."""
    return repr(v.item() if isinstance(v, np.generic) else v)


def param_names(cls: type) -> list[str]:
    """The sorted parameter names of an estimator class (the keywords of its ``__init__``),
    as :meth:`sklearn.base.BaseEstimator.get_params` lists them."""
    params = inspect.signature(cls.__init__).parameters.values()
    return sorted(p.name for p in params if p.name != "self" and p.kind != p.VAR_KEYWORD)


def unknown_keywords_message(owner: str, unknown, known) -> str:
    """``"<owner> got an unexpected keyword argument 'degre'; did you mean 'degree'? ..."``:
    Python's wording, the closest known names (:func:`difflib.get_close_matches`) and the
    list of the known ones."""
    unknown, known = sorted(unknown), sorted(known)
    parts = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    plural = "s" if len(unknown) > 1 else ""
    return (
        f"{owner} got {'an ' if not plural else ''}unexpected keyword argument{plural} "
        f"{', '.join(parts)}; its parameters are {', '.join(known)}."
    )


#: What to do about a constant score column (appended to :class:`~fusion.ConstantColumnError`).
CONSTANT_COLUMN_REMEDY = (
    "Drop the column from S (a scorer that gives every row the same value adds nothing to "
    "the fusion), or check that it holds that scorer's scores: a column of labels, of a "
    "default value, or of scores rounded or clipped to one value is constant."
)


# ---------------------------------------------------------------------------------------------
# Scores.


def _is_number_text(v) -> bool:
    if not isinstance(v, (str, bytes)):
        return False
    try:
        float(v)
    except ValueError:
        return False
    return True


_TEXT_HINT = (
    "scores must be numbers: convert the text first, e.g. S.astype(float) (a DataFrame: "
    "df.astype(float) or pd.to_numeric)."
)


def _check_numeric_columns(S) -> None:
    """Name the first non-numeric score column instead of numpy's 'could not convert'."""
    if hasattr(S, "dtypes"):  # DataFrame
        for name, dtype in zip(S.columns, S.dtypes, strict=True):
            if getattr(dtype, "kind", "O") not in "biuf":
                values = S[name].to_numpy()
                first = next((v for v in values if not isinstance(v, numbers.Real)), None)
                if _is_number_text(first):
                    raise ValueError(
                        f"score column {name!r} holds numbers as text ({first!r}, dtype "
                        f"{dtype}); {_TEXT_HINT}"
                    )
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
                if _is_number_text(v):
                    raise ValueError(
                        f"score column {j} holds a number as text, {str(v)!r} at row {i}; "
                        + _TEXT_HINT
                    )
                if isinstance(v, bool) or not isinstance(v, numbers.Real):
                    raise ValueError(
                        f"score column {j} holds a non-numeric value {v!r} at row {i}; "
                        "scores must be numbers."
                    )


def _column_lengths(S) -> list[int] | None:
    """The lengths of the items of a list or tuple ``S`` when every item is a 1-D sequence
    (a list, tuple, 1-D array or pandas Series) and they all have the same length."""
    if not isinstance(S, (list, tuple)) or not S:
        return None
    lengths = []
    for item in S:
        if isinstance(item, (str, bytes)) or not hasattr(item, "__len__"):
            return None
        ndim = getattr(item, "ndim", None)
        if ndim is not None and ndim != 1:
            return None
        if ndim is None and len(item) and isinstance(item[0], (list, tuple)):
            return None
        lengths.append(len(item))
    return lengths if len(set(lengths)) == 1 else None


def check_layout(S, *, n_labels: int | None = None, n_features: int | None = None) -> None:
    """Explain input that numpy would misread as scores before it is: a generator, a
    mapping, or a list of one sequence per scorer (read as rows, not columns) whose length
    contradicts the labels (``n_labels``, at fit) or the model's number of scores
    (``n_features``, at prediction)."""
    if sp.issparse(S):
        return  # a dok matrix is a dict: check_scores refuses sparse input
    if isinstance(S, Mapping):
        raise ValueError(
            f"S is a {type(S).__name__} of {len(S)} entries; scores must be an (n, M) array: "
            "pass pd.DataFrame(S) (one column per key) or np.column_stack(list(S.values()))."
        )
    if isinstance(S, Iterator):
        raise ValueError(
            f"S is an iterator ({type(S).__name__}); scores must be an (n, M) array: pass "
            "np.array(list(S)) for rows of scores, or np.column_stack(list(S)) for one "
            "sequence per scorer."
        )
    if not isinstance(S, (list, tuple)):
        return
    k = len(S)
    if not ((n_labels is not None and k != n_labels) or k == n_features):
        return  # as many rows as labels, or not the model's number of scorers: rows
    lengths = _column_lengths(S)
    if lengths is None:
        return
    length = lengths[0]
    read = f"S is a {type(S).__name__} of {k} sequences of {length} values, read as {k} rows"
    fix = "If each sequence holds one scorer's scores, stack them as columns: np.column_stack(S)."
    if n_labels is not None and length == n_labels and k != n_labels:
        raise ValueError(f"{read} of {length} scores, but y has {n_labels} labels. {fix}")
    if n_features is not None and k == n_features and length != n_features:
        raise ValueError(
            f"{read} of {length} scores each, but the model fuses {n_features} scores per "
            f"row. {fix}"
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


def check_scores(
    estimator,
    S,
    *,
    reset: bool,
    allows_1d: bool,
    allow_nan: bool,
) -> np.ndarray:
    """Validate an ``(n, M)`` score matrix; sets ``n_features_in_``/``feature_names_in_`` on
    ``estimator`` when ``reset``.

    A deep-learning framework's tensor (PyTorch, CuPy, JAX, ..., or a list of them) is
    taken as it comes (:func:`fusion._tensors.host_array`). Returns float64 scores, except
    that an integer matrix with values beyond ``2**53`` in
    magnitude stays integer (float64 would merge distinct values; the ECDF ranks them
    exactly). ``+-inf`` is accepted (the ECDF ranks it at the ends); NaN only with
    ``allow_nan`` (a missing score).
    """
    name = type(estimator).__name__
    S = host_arrays(S)  # a framework's tensors (grad, bfloat16, on a device) as NumPy
    if S is None:
        raise ValueError("S is required: pass an (n, M) array of scores.")
    check_layout(S, n_features=None if reset else getattr(estimator, "n_features_in_", None))
    if sp.issparse(S):
        raise ValueError("sparse input is not supported: S must be a dense (n, M) array.")
    if not hasattr(S, "columns"):  # keep DataFrames whole for feature_names_in_
        S = _as_array(S)
        if S.ndim == 1:
            if not (allows_1d and (reset or estimator.n_features_in_ == 1)):
                # "Reshape your data" is scikit-learn's wording (check_fit2d_predict1d).
                raise ValueError(
                    f"S must be 2-D of shape (n, M), got a 1-D array of length "
                    f"{S.shape[0]}. Reshape your data with S.reshape(1, -1) if it holds a "
                    + (
                        "single sample, or S.reshape(-1, 1) if it holds a single score."
                        if allows_1d
                        else f"single sample; {name} fuses M >= 2 scores."
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
    S = validate_data(estimator, S, reset=reset, dtype=None, ensure_all_finite=False)
    if S.dtype.kind in "iu":
        if S.size and (S.max() > 2**53 or S.min() < -(2**53)):
            S = S.astype(np.uint64 if S.dtype.kind == "u" else np.int64)
        else:
            S = S.astype(np.float64)
    else:
        S = S.astype(np.float64, copy=False)
        nan = np.isnan(S)
        if not allow_nan and nan.any():
            i, j = np.argwhere(nan)[0]
            raise ValueError(
                f"S must hold scores, found NaN at row {i}, column {j}. Pass missing='marginal' "
                "to fit and predict rows with missing scores by integrating them out."
            )
    if not reset and S.shape[1] != estimator.n_features_in_:  # validate_data already raises
        raise ValueError(f"S has {S.shape[1]} columns, expected {estimator.n_features_in_}.")
    return S


def check_normalized_points(U, n_features: int, allow_nan: bool = False) -> np.ndarray:
    """Validate points of the normalized cube ``[0, 1]^M`` and return them as (n, M) floats."""
    U = np.asarray(U, dtype=float)
    if U.ndim == 1 and n_features == 1:
        U = U[:, None]
    if U.ndim == 1 and U.shape[0] == n_features:
        U = U[None, :]
    if U.ndim != 2 or U.shape[1] != n_features:
        raise ValueError(f"normalized points must have shape (n, {n_features}), got {np.shape(U)}.")
    bad = ~np.isfinite(U)
    if allow_nan:
        bad &= ~np.isnan(U)
    if bad.any():
        raise ValueError(f"normalized points must be finite; found {first_nonfinite(U)}.")
    tol = 1e-12
    seen = U[~np.isnan(U)] if allow_nan else U
    if seen.size and (seen.min() < -tol or seen.max() > 1 + tol):
        raise ValueError(
            f"normalized points must lie in [0, 1]; got values in [{seen.min()}, {seen.max()}]. "
            "Use predict_proba for raw scores."
        )
    return np.clip(U, 0.0, 1.0)


# ---------------------------------------------------------------------------------------------
# Labels and weights.


def encode_binary_targets(y, n: int) -> tuple[np.ndarray, np.ndarray]:
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
        raise ValueError(f"y contains {first_nonfinite(y)}; labels must be class values.")
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
            f"y holds a single class ({label_repr(classes[0])}); binary fusion needs rows of "
            "both classes."
        )
    if classes.shape[0] != 2:
        shown = list(classes[:5]) + (["..."] if classes.shape[0] > 5 else [])
        # "Only binary classification is supported." is scikit-learn's wording for
        # binary-only classifiers (checked by check_classifier_not_supporting_multiclass).
        raise ValueError(
            "Only binary classification is supported. y must hold exactly two classes; "
            f"found {classes.shape[0]}: {shown}. For {classes.shape[0]} classes pass each "
            f"scorer's {classes.shape[0]} class scores: S of shape (n, M, "
            f"{classes.shape[0]}), or a list of M arrays of shape (n, {classes.shape[0]}); "
            f"one network's class scores may also be an (n, C) array with one column per "
            f"class (classes=[...] names them when some do not occur in y)."
        )
    return classes, y_idx.astype(float)


def check_sample_weight(sample_weight, n: int) -> np.ndarray:
    """Validated non-negative finite weights as float64 (all ones when None).

    Raises a ValueError for weights that are negative, non-finite, all zero, or whose sum
    overflows (no finite rescaling of them exists).
    """
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
        raise ValueError(f"sample_weight must be finite; found {first_nonfinite(w)}.")
    if np.any(w < 0):
        i = int(np.flatnonzero(w < 0)[0])
        raise ValueError(f"sample_weight must be non-negative; found {w[i]} at row {i}.")
    with np.errstate(over="ignore"):
        total = float(w.sum())
    if not np.isfinite(total):
        raise ValueError(
            "sample_weight sums to infinity (the weights overflow float64); divide them by a "
            "constant: predictions do not depend on the scale of the weights."
        )
    if not total > 0:
        raise ValueError("sample_weight sums to zero; at least one row needs positive weight.")
    return w


#: Significant bits kept of the rescaled weights (see :func:`canonical_weights`).
_WEIGHT_BITS = 24


def canonical_weights(
    w: np.ndarray, low: float | None = None, high: float | None = None
) -> np.ndarray:
    """Weights divided by their smallest positive value and rounded to 24 significant bits.

    Every statistic of a fit depends on the weights only through their proportions, but
    ``c * w`` and ``w`` give results a few units in the last place apart, and a search on a
    flat objective (the Student-t copula's degrees of freedom above ~30, ``bandwidth="cv"``)
    can stop 1e-4 apart on such inputs. Dividing by the smallest weight and rounding to 24
    bits (relative precision 6e-8, far below any meaningful weight) makes proportional weight
    vectors identical bit for bit, except for the rare weight within a few ulps of a rounding
    boundary. Equal weights become exactly 1 and small integer weights stay exactly
    themselves, so unweighted and frequency-weighted fits are unchanged.

    ``low`` and ``high``: the smallest positive and the largest weight of the whole data,
    for a block of it (a dask fit transforms every block as the in-memory fit would).
    """
    w = np.asarray(w, dtype=float)
    positive = w > 0
    low = np.min(w[positive]) if low is None else low
    high = np.max(w) if high is None else high
    with np.errstate(over="ignore"):
        scaled = np.where(positive, w / low, 0.0)
        if not np.isfinite(high / low):  # a dynamic range beyond the float range
            scaled = np.where(positive, w / high, 0.0)
    mantissa, exponent = np.frexp(scaled)
    return np.ldexp(np.round(np.ldexp(mantissa, _WEIGHT_BITS)), exponent - _WEIGHT_BITS)


# ---------------------------------------------------------------------------------------------
# Score direction.
