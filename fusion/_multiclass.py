"""Multi-class input and the coupling of one-vs-rest fusions into one class distribution.

With ``M`` scorers each giving ``C >= 3`` class scores, a method that supports multi-class
input fits one binary fusion per class ``k`` on the scorers' class-``k`` scores (``S[:, :, k]``)
against ``y == classes_[k]``, giving one-vs-rest probabilities ``p_k``. These are coupled into
one distribution by a softmax of their logits,

.. math:: q_k = \\frac{\\exp(a_k \\ell_k + b_k)}{\\sum_j \\exp(a_j \\ell_j + b_j)},
          \\quad \\ell_k = \\mathrm{logit}(p_k), \\quad a_k \\ge 0,\\; b_0 = 0,

with ``a`` and ``b`` fitted by weighted multinomial maximum likelihood with a penalty
``(tau / 2) sum_k (a_k - mean(a))^2`` on the spread of the slopes (:func:`fit_coupling`, a
convex problem in ``2C - 1`` parameters; ``tau = inf``: one temperature for all classes).
Where the method can refit its chosen models without a search (BernsteinFusion), the
coupling is fitted on out-of-fold ``p_k`` (5 folds), not on the in-sample ones, which are
overconfident when a class has few rows (:meth:`fusion.FusionEstimator._out_of_fold_proba`),
and ``tau`` is chosen by cross-validation on the same folds; otherwise ``tau = inf``. Fitted
attributes: ``coupling_slope_`` (``a``, one per class), ``coupling_intercept_`` (``b``) and
``coupling_penalty_`` (``tau``). Alternatives measured on benchmarks/bench_multiclass.py:
coupling on in-sample probabilities (coupled log-loss 0.46 against 0.29 for temperature
scaling with 25 rows per class on digits); one common slope always (top-label ECE 0.013 /
0.009 against 0.009 / 0.006 on Covertype with 2,000 / 5,000 rows); free per-class slopes
always (they diverge on digits with 25 rows per class: log-loss 0.65 against 0.20); plain
renormalization ``p_k / sum_j p_j`` (not used: it has no parameter to correct a joint over-
or under-confidence of the one-vs-rest fits). The rows sum to one, and each ``q_k`` is
non-decreasing in every scorer's class-``k`` score whenever ``p_k`` is (the other logits do
not depend on it, and ``a_k >= 0``): the monotone guarantee of the binary fusion carries over
to the probability of every class in that class's own scores.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax, logit, softmax

from ._cv import one_se_index
from ._tensors import host_arrays

__all__ = [
    "multiclass_scores",
    "single_network_scores",
    "one_network",
    "check_frame_columns",
    "check_multiclass_targets",
    "resolve_classes",
    "column_of",
    "fit_coupling",
    "heldout_coupled_losses",
    "couple",
    "LOGIT_CLIP",
    "COUPLED_LOGIT_RANGE",
    "SPREAD_GRID",
]

#: One-vs-rest probabilities are clipped to ``[e, 1 - e]`` before their logits are coupled,
#: with ``logit(e) = -LOGIT_CLIP``.
LOGIT_CLIP = 30.0

#: Coupled logits are kept within this distance of their row's largest (see :func:`couple`).
COUPLED_LOGIT_RANGE = 34.5


def multiclass_scores(S) -> np.ndarray | None:
    """``S`` as an ``(n, M, C)`` float array if it is multi-class input, else None.

    Multi-class input is a 3-D array ``(n, M, C)`` or a list/tuple of ``M`` 2-D arrays of
    shape ``(n, C)`` (one per scorer). A float32 or float64 array is returned as it is (no
    copy); a list is stacked in its common float precision, integers become float64. Raises
    a ValueError for malformed multi-class input. A deep-learning framework's tensor, or a
    list of them, is taken as it comes: detached, on the host, bfloat16 as float32
    (:func:`fusion._tensors.host_array`).
    """
    S = host_arrays(S)
    if isinstance(S, (list, tuple)) and S and all(getattr(s, "ndim", 0) == 2 for s in S):
        shapes = [np.shape(s) for s in S]
        if len({shape[0] for shape in shapes}) > 1:
            raise ValueError(
                f"the scorers' arrays have different numbers of rows {[s[0] for s in shapes]}; "
                "every scorer must score the same n samples."
            )
        classes = [shape[1] for shape in shapes]
        if len(set(classes)) > 1:
            raise ValueError(
                f"the scorers give different numbers of classes {classes}; every scorer must "
                "give one score per class, in the same column order."
            )
        arrays = [np.asarray(s) for s in S]
        _check_kind(arrays)
        S = np.stack(arrays, axis=1)
    elif getattr(S, "ndim", None) == 3 or (
        not hasattr(S, "columns") and not isinstance(S, np.ndarray) and _ndim(S) == 3
    ):
        S = np.asarray(S)
    else:
        return None
    if S.dtype.kind not in "biuf":
        raise ValueError(f"multi-class scores must be numeric, got dtype {S.dtype}.")
    n, M, C = S.shape
    if C < 2:
        raise ValueError(
            f"multi-class scores have shape (n, M, C) = {S.shape}: C = {C} class column(s). "
            "Pass one score per class (C >= 2; for two classes an (n, M) array of the "
            "positive class's scores also works)."
        )
    if n == 0 or M == 0:
        raise ValueError(f"multi-class scores of shape {S.shape} are empty.")
    if S.dtype not in (np.float32, np.float64):
        S = S.astype(np.float64)
    return S


def single_network_scores(S, y, classes=None) -> tuple[np.ndarray | None, object]:
    """One network's class scores ``S`` (n, C) as multi-class input ``(n, 1, C)`` (or None),
    with the classes of its columns.

    A 2-D array is binary input (one column per scorer) unless the labels say otherwise:
    ``classes`` listing ``C >= 3`` labels, one per column, or ``y`` holding exactly ``C >= 3``
    distinct labels make its columns the class scores of one network (M = 1), so that
    calibrating a single network is ``fusion.fit(logits, y)``. With fewer labels than
    columns the reading is ambiguous (scorers, or a network whose classes are not all in
    the sample): pass ``classes`` or ``S[:, None, :]``. A dask array or anything not 2-D is
    None.

    A DataFrame is read the same way. Where its column names include every label of ``y``,
    they name the classes, in the columns' order: without ``classes`` they are the classes
    (so columns in another order than the sorted labels are not matched to the wrong
    labels); a ``classes`` listing the same names in another order contradicts them and is
    refused. Returns ``(scores, classes)``; ``classes`` is the argument otherwise.
    """
    S = host_arrays(S)
    if callable(getattr(S, "__dask_graph__", None)) or _ndim(S) != 2:
        return None, classes
    names = list(S.columns) if hasattr(S, "columns") else None
    S = np.asarray(S)

    def n_labels() -> int:
        try:
            return np.unique(np.asarray(y).reshape(-1)).shape[0]
        except TypeError:  # labels that do not compare: the binary check explains
            return 0

    if not one_network(S.shape[1], classes, None if y is None else n_labels):
        return None, classes
    if names is not None:
        classes = _column_classes(names, y, classes)
    return multiclass_scores(S[:, None, :]), classes


def one_network(C: int, classes, n_labels) -> bool:
    """Whether ``C`` columns of 2-D scores are one network's class scores (in memory or on
    dask): ``classes`` lists ``C >= 3`` labels, or, without it, ``n_labels()`` (the number
    of distinct labels of ``y``; None: no labels) is ``C >= 3``."""
    if C < 3:
        return False
    if classes is not None:
        return np.size(classes) == C
    return n_labels is not None and n_labels() == C


def _reordered(names: list, labels: list) -> bool:
    """Whether distinct column ``names`` are exactly ``labels`` in another order."""
    return len(set(names)) == len(names) and set(names) == set(labels) and names != labels


def _column_classes(names: list, y, classes):
    """The classes of a DataFrame's columns ``names`` (see :func:`single_network_scores`)."""
    if len(set(names)) != len(names):
        return classes
    if classes is not None:
        given = list(np.asarray(classes).reshape(-1))
        if _reordered(names, given):
            raise ValueError(
                f"classes={given!r} lists the DataFrame's column names in another order than "
                f"its columns {names!r}; classes must give the label of every column in the "
                "columns' order. Pass classes=list(S.columns), or reorder the columns."
            )
        return classes
    try:
        labels = np.unique(np.asarray(y).reshape(-1)).tolist()
    except TypeError:
        return classes
    return names if set(labels) <= set(names) else classes


def check_frame_columns(S, classes) -> None:
    """Refuse a DataFrame of one network's scores whose column names are the model's classes
    in another order (predicting from it would match columns to the wrong classes)."""
    if not hasattr(S, "columns"):
        return
    names, known = list(S.columns), list(np.asarray(classes).reshape(-1))
    if _reordered(names, known):
        raise ValueError(
            f"the DataFrame's columns {names!r} are the model's classes in another order than "
            f"classes_ {known!r}; pass S[model.classes_] (columns in classes_' order)."
        )


def _check_kind(arrays) -> None:
    for a in arrays:
        if a.dtype.kind not in "biuf":
            raise ValueError(f"multi-class scores must be numeric, got dtype {a.dtype}.")


def _ndim(S) -> int:
    try:
        return np.asarray(S).ndim
    except (ValueError, TypeError):  # ragged nested lists: reported by the 2-D validation
        return -1


def check_multiclass_targets(y, n: int, C: int, classes=None) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, index)``: the labels of the ``C`` class columns, in column order, and each
    row's column.

    ``classes`` gives the label of every column, in the scores' column order (the networks'
    output order); it may list labels absent from ``y``. Without it the columns follow the
    sorted labels of ``y`` (as scikit-learn's ``predict_proba`` gives them); when ``y`` holds
    fewer than ``C`` labels, they must be integers ``0 .. C - 1`` including 0 that number
    the columns (labels ``1 .. C`` with one absent, or strings, are ambiguous and refused:
    pass ``classes``). ``y`` must hold at least two labels.
    """
    from sklearn.utils.validation import column_or_1d

    if y is None:
        raise ValueError("y is required: pass the class label of every row of S.")
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n:
        raise ValueError(f"S has {n} rows but y has {y.shape[0]} labels; they must match.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity; labels must be class values.")
    try:
        seen, index = np.unique(y, return_inverse=True)
    except TypeError as err:
        raise ValueError(f"y mixes label types that cannot be compared: {err}") from None
    index = index.reshape(-1)
    if seen.shape[0] < 2:
        raise ValueError(
            f"y holds a single class ({seen[:1].tolist()}): a fusion of class scores needs "
            "rows of at least two classes."
        )
    labels = resolve_classes(seen, C, classes, y.dtype)
    if labels is seen:
        return seen, index
    return labels, column_of(labels, seen)[index]


def column_of(labels: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The position in ``labels`` (the columns' labels, any order) of every value in
    ``values``, all of which are in ``labels``."""
    order = np.argsort(labels, kind="stable")
    return order[np.searchsorted(labels[order], values)]


def resolve_classes(seen: np.ndarray, C: int, classes=None, dtype=None) -> np.ndarray:
    """The labels of the ``C`` class columns in column order, from the distinct labels
    ``seen`` in ``y`` (sorted) and the user's ``classes`` (see
    :func:`check_multiclass_targets`); ``seen`` itself when it is every class."""
    from sklearn.utils.validation import column_or_1d

    if classes is not None:
        labels = column_or_1d(np.asarray(classes))
        if labels.shape[0] != C:
            raise ValueError(
                f"classes holds {labels.shape[0]} labels but every scorer gives {C} class "
                f"scores (S has shape (n, M, {C})); pass one label per class column, in the "
                "columns' order."
            )
        try:
            distinct = np.unique(labels)
            pos = np.minimum(np.searchsorted(distinct, seen), distinct.shape[0] - 1)
            ok = distinct[pos] == seen
        except TypeError as err:
            raise ValueError(f"classes mixes label types that cannot be compared: {err}") from None
        if distinct.shape[0] != C:
            raise ValueError(
                f"classes lists a label more than once ({labels[:10].tolist()}"
                f"{' ...' if C > 10 else ''}); give every class column its own label."
            )
        if not ok.all():
            raise ValueError(
                f"y holds labels {seen[~ok][:10].tolist()} that are not in classes "
                f"{labels[:10].tolist()}{' ...' if C > 10 else ''}."
            )
        return labels
    if seen.shape[0] == C:
        return seen
    dtype = seen.dtype if dtype is None else np.dtype(dtype)
    integral = dtype.kind in "iu" or (dtype.kind == "f" and bool(np.all(seen == np.round(seen))))
    if seen.shape[0] < C and integral and seen[0] == 0 and seen[-1] <= C - 1:
        return np.arange(C).astype(dtype)
    hint = ""
    if seen.shape[0] < C and integral and seen[0] > 0 and seen[-1] <= C:
        hint = (
            f" Labels {seen[0]:g} .. {seen[-1]:g} could number the columns from 0 or from 1, "
            "so they are not read either way."
        )
    raise ValueError(
        f"y holds {seen.shape[0]} classes {seen[:10].tolist()} but every scorer gives {C} "
        f"class scores (S has shape (n, M, {C})).{hint} Say which label each column holds: "
        f"pass classes=[...] with the {C} labels in the columns' order (labels absent from "
        f"the fusion sample included), or use integer labels 0 .. {C - 1} that number the "
        "columns."
    )


def _logits(P: np.ndarray) -> np.ndarray:
    e = 1.0 / (1.0 + np.exp(LOGIT_CLIP))
    return logit(np.clip(P, e, 1.0 - e))


#: Candidate penalties ``tau`` on the spread of the per-class slopes (see
#: :func:`fit_coupling`), largest first; ``inf`` is one common slope.
SPREAD_GRID = (np.inf, 1e-1, 1e-2, 1e-3, 0.0)


def fit_coupling(
    P: np.ndarray, index: np.ndarray, w: np.ndarray, folds: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """Slopes ``a_k >= 0``, intercepts ``b`` (``b[0] = 0``) and the chosen spread penalty.

    Weighted multinomial maximum likelihood of the labels ``index`` given the one-vs-rest
    probabilities ``P`` (n, C), minus ``(tau / 2) sum_k (a_k - mean(a))^2``: ``tau = inf``
    is one slope shared by every class (a temperature), ``tau = 0`` free per-class slopes.
    With ``folds`` (the folds that made ``P`` out-of-fold), ``tau`` is chosen from
    :data:`SPREAD_GRID` by the held-out log-loss on the same folds, with the one-standard-error
    rule toward larger ``tau`` (paired differences of the rows' held-out losses). Per-class
    slopes fit better where the one-vs-rest fits are miscalibrated in different ways
    (Covertype, 2,000-5,000 rows), but free slopes diverge where a class is (almost)
    separated out of fold (25 rows per class on digits). Without ``folds``, one slope.
    A row in no test fold (fold < 0: of zero weight, or outside a sampled cross-validation)
    has no out-of-fold probability in ``P``, and the coupling is fitted without it.
    Convex for every ``tau``; solved by L-BFGS-B with exact gradients.
    """
    w = np.asarray(w, dtype=float)
    if folds is not None:
        inside = np.asarray(folds) >= 0
        P, index, w, folds = P[inside], index[inside], w[inside], np.asarray(folds)[inside]
    L = _logits(P)
    n, C = L.shape
    tau = np.inf
    if folds is not None:
        held = np.empty((len(SPREAD_GRID), n))  # every row's held-out log-loss per tau
        for f in np.unique(folds):
            test = folds == f
            start = None  # warm start down the grid
            for t, candidate in enumerate(SPREAD_GRID):
                a, b = _fit_coupling(L[~test], index[~test], w[~test], candidate, start)
                start = (a, b)
                held[t, test] = -log_softmax(a * L[test] + b, axis=1)[
                    np.arange(int(test.sum())), index[test]
                ]
        tau = SPREAD_GRID[one_se_index(held, w)]
    a, b = _fit_coupling(L, index, w, tau)
    return a, b, float(tau)


def heldout_coupled_losses(
    P: np.ndarray, index: np.ndarray, w: np.ndarray, folds: np.ndarray, tau: float
) -> np.ndarray:
    """Every row's log-loss of the coupled distribution of out-of-fold one-vs-rest
    probabilities ``P``, the coupling of its fold fitted (with the spread penalty ``tau``)
    on the other folds' rows; NaN for rows in no test fold."""
    L = _logits(P)
    out = np.full(P.shape[0], np.nan)
    for f in np.unique(folds[folds >= 0]):
        test = folds == f
        train = (folds >= 0) & (folds != f) & (w > 0)
        a, b = _fit_coupling(L[train], index[train], w[train], tau)
        q = couple(P[test], a, b)
        out[test] = -np.log(q[np.arange(int(test.sum())), index[test]])
    return out


def _fit_coupling(
    L: np.ndarray, index: np.ndarray, w: np.ndarray, tau: float, start=None
) -> tuple[np.ndarray, np.ndarray]:
    n, C = L.shape
    Y = np.zeros((n, C))
    Y[np.arange(n), index] = 1.0
    w = w / np.sum(w)
    common = np.isinf(tau)
    k = 1 if common else C

    def loss(theta):
        a, b = theta[:k], np.r_[0.0, theta[k:]]
        Z = a * L + b
        logq = log_softmax(Z, axis=1)
        R = w[:, None] * (softmax(Z, axis=1) - Y)  # d loss / d Z
        RL = np.sum(R * L, axis=0)
        value = -np.sum(w[:, None] * Y * logq)
        if common:
            return value, np.r_[RL.sum(), R.sum(axis=0)[1:]]
        spread = a - a.mean()
        return (
            value + 0.5 * tau * float(spread @ spread),
            np.r_[RL + tau * spread, R.sum(axis=0)[1:]],
        )

    if start is None:
        prior = np.log(np.maximum(np.bincount(index, weights=w, minlength=C), 1e-12))
        start = np.r_[np.ones(k), prior[1:] - prior[0]]
    else:  # (slopes, intercepts) of a neighbouring tau
        start = np.r_[start[0][:k], start[1][1:]]
    bounds = [(0.0, None)] * k + [(None, None)] * (C - 1)
    res = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 1000, "gtol": 1e-10, "ftol": 1e-14})  # fmt: skip
    a = np.full(C, res.x[0]) if common else res.x[:C].copy()
    return a, np.r_[0.0, res.x[k:]]


def couple(P: np.ndarray, slope, intercept: np.ndarray) -> np.ndarray:
    """The coupled class distribution (rows sum to one) from one-vs-rest probabilities.

    Each coupled logit is kept within :data:`COUPLED_LOGIT_RANGE` of its row's largest, so no
    probability rounds to 0 or 1 (the smallest is about ``exp(-34.5) / C``, 1e-15). The
    clipped softmax is still continuous, and ``q_k`` still non-decreasing in ``p_k``: the
    other classes' floors rise with the largest logit, which only lowers their share.
    """
    Z = slope * _logits(P) + intercept
    np.maximum(Z, Z.max(axis=1, keepdims=True) - COUPLED_LOGIT_RANGE, out=Z)
    return softmax(Z, axis=1)
