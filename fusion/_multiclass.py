"""Multi-class input and the coupling of one-vs-rest fusions into one class distribution.

With ``M`` scorers each giving ``C >= 3`` class scores, a method that supports multi-class
input fits one binary fusion per class ``k`` on the scorers' class-``k`` scores (``S[:, :, k]``)
against ``y == classes_[k]``, giving one-vs-rest probabilities ``p_k``. These are coupled into
one distribution by a softmax of their logits,

.. math:: q_k = \\frac{\\exp(a \\ell_k + b_k)}{\\sum_j \\exp(a \\ell_j + b_j)},
          \\quad \\ell_k = \\mathrm{logit}(p_k), \\quad a \\ge 0,\\; b_0 = 0,

with ``a`` and ``b`` fitted by weighted multinomial maximum likelihood (:func:`fit_coupling`,
a convex problem in ``C`` parameters). Where the method can refit its chosen models without
a search (BernsteinFusion), the coupling is fitted on out-of-fold ``p_k`` (5 folds), not on
the in-sample ones, which are overconfident when a class has few rows
(:meth:`fusion.FusionEstimator._out_of_fold_proba`). Alternatives: coupling on in-sample
probabilities (measured: coupled log-loss 0.46 against 0.29 for temperature scaling with 25
rows per class on digits, benchmarks/bench_multiclass.py); plain renormalization
``p_k / sum_j p_j`` (not used: it has no parameter to correct a joint over- or
under-confidence of the one-vs-rest fits). The rows sum to one, and each ``q_k`` is
non-decreasing in every scorer's class-``k`` score whenever ``p_k`` is (the other logits do
not depend on it, and ``a >= 0``): the monotone guarantee of the binary fusion carries over
to the probability of every class in that class's own scores.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax, logit, softmax

__all__ = [
    "multiclass_scores",
    "check_multiclass_targets",
    "fit_coupling",
    "couple",
    "LOGIT_CLIP",
    "COUPLED_LOGIT_RANGE",
]

#: One-vs-rest probabilities are clipped to ``[e, 1 - e]`` before their logits are coupled,
#: with ``logit(e) = -LOGIT_CLIP``.
LOGIT_CLIP = 30.0

#: Coupled logits are kept within this distance of their row's largest (see :func:`couple`).
COUPLED_LOGIT_RANGE = 34.5


def multiclass_scores(S) -> np.ndarray | None:
    """``S`` as an ``(n, M, C)`` float array if it is multi-class input, else None.

    Multi-class input is a 3-D array ``(n, M, C)`` or a list/tuple of ``M`` 2-D arrays of
    shape ``(n, C)`` (one per scorer). Raises a ValueError for malformed multi-class input.
    """
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
                "give one score per class, in the same (sorted label) order."
            )
        S = np.stack([np.asarray(s) for s in S], axis=1)
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
    return S.astype(float)


def _ndim(S) -> int:
    try:
        return np.asarray(S).ndim
    except (ValueError, TypeError):  # ragged nested lists: reported by the 2-D validation
        return -1


def check_multiclass_targets(y, n: int, C: int) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, index)``: the sorted labels and each row's class index; C must match."""
    from sklearn.utils.validation import column_or_1d

    if y is None:
        raise ValueError("y is required: pass the class label of every row of S.")
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n:
        raise ValueError(f"S has {n} rows but y has {y.shape[0]} labels; they must match.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity; labels must be class values.")
    try:
        classes, index = np.unique(y, return_inverse=True)
    except TypeError as err:
        raise ValueError(f"y mixes label types that cannot be compared: {err}") from None
    if classes.shape[0] != C:
        raise ValueError(
            f"y holds {classes.shape[0]} classes {classes[:10].tolist()} but every scorer gives "
            f"{C} class scores (S has shape (n, M, {C})); the class columns must follow the "
            "sorted labels of y, all of which must occur in the fusion sample."
        )
    return classes, index.reshape(-1)


def _logits(P: np.ndarray) -> np.ndarray:
    e = 1.0 / (1.0 + np.exp(LOGIT_CLIP))
    return logit(np.clip(P, e, 1.0 - e))


def fit_coupling(P: np.ndarray, index: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    """Slope ``a >= 0`` and intercepts ``b`` (``b[0] = 0``) of the softmax coupling.

    Weighted multinomial maximum likelihood of the labels ``index`` given the one-vs-rest
    probabilities ``P`` (n, C); convex, solved by L-BFGS-B with exact gradients.
    """
    L = _logits(P)
    n, C = L.shape
    Y = np.zeros((n, C))
    Y[np.arange(n), index] = 1.0
    w = np.asarray(w, dtype=float) / np.sum(w)

    def loss(theta):
        a, b = theta[0], np.r_[0.0, theta[1:]]
        Z = a * L + b
        logq = log_softmax(Z, axis=1)
        R = w[:, None] * (softmax(Z, axis=1) - Y)  # d loss / d Z
        grad = np.r_[np.sum(R * L), R.sum(axis=0)[1:]]
        return -np.sum(w[:, None] * Y * logq), grad

    prior = np.log(np.maximum(np.bincount(index, weights=w, minlength=C), 1e-12))
    start = np.r_[1.0, prior[1:] - prior[0]]
    bounds = [(0.0, None)] + [(None, None)] * (C - 1)
    res = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 500, "gtol": 1e-10, "ftol": 1e-14})  # fmt: skip
    return float(res.x[0]), np.r_[0.0, res.x[1:]]


def couple(P: np.ndarray, slope: float, intercept: np.ndarray) -> np.ndarray:
    """The coupled class distribution (rows sum to one) from one-vs-rest probabilities.

    Each coupled logit is kept within :data:`COUPLED_LOGIT_RANGE` of its row's largest, so no
    probability rounds to 0 or 1 (the smallest is about ``exp(-34.5) / C``, 1e-15). The
    clipped softmax is still continuous, and ``q_k`` still non-decreasing in ``p_k``: the
    other classes' floors rise with the largest logit, which only lowers their share.
    """
    Z = slope * _logits(P) + intercept
    np.maximum(Z, Z.max(axis=1, keepdims=True) - COUPLED_LOGIT_RANGE, out=Z)
    return softmax(Z, axis=1)
