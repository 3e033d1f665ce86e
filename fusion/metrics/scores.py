"""Proper scoring rules: Brier score and log-loss, binary and multi-class."""

from __future__ import annotations

import numpy as np

from ._docs import doc
from ._labels import as_labels, binary_pair, check_probabilities, class_pair


def _is_multiclass(y, p) -> bool:
    p = check_probabilities(p, as_labels(y).shape[0])
    return p.ndim == 2 and p.shape[1] >= 3


@doc
def brier_score(y, p, *, labels=None, pos_label=None) -> float:
    """Brier score: mean squared error of the predicted class probabilities.

    The conventions are scikit-learn's (``brier_score_loss`` with ``scale_by_half="auto"``):

    * binary (``p`` of shape ``(n,)`` or ``(n, 2)``): the mean of ``(p - y)^2`` over rows,
      with ``p`` the positive-class probability and ``y`` in {0, 1}; in ``[0, 1]``;
    * multi-class (``p`` of shape ``(n, C)``, ``C >= 3``): the sum over classes of the
      squared errors against the one-hot label, averaged over rows; in ``[0, 2]``.

    The binary value is half the two-class sum, so it is the multi-class formula divided by
    two when ``C = 2``.

    Parameters
    ----------
    {scoring_args}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Labels that do not match the columns of ``p``, probabilities outside ``[0, 1]``, or
        rows that do not sum to 1.

    Examples
    --------
    >>> from fusion.metrics import brier_score
    >>> round(brier_score(["no", "yes", "yes"], [0.2, 0.9, 0.6], pos_label="yes"), 4)
    0.07
    >>> P = [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.2, 0.2, 0.6]]
    >>> round(brier_score(["a", "b", "c"], P), 4)  # (0.06 + 0.14 + 0.24) / 3
    0.1467
    """
    if _is_multiclass(y, p):
        index, P = class_pair(y, p, labels=labels, pos_label=pos_label)
        P = P.copy()
        P[np.arange(P.shape[0]), index] -= 1.0
        return float(np.mean(np.sum(P**2, axis=1)))
    y01, p1 = binary_pair(y, p, pos_label=pos_label, labels=labels)
    return float(np.mean((p1 - y01) ** 2))


@doc
def log_loss(y, p, *, labels=None, pos_label=None, eps: float = 1e-15) -> float:
    """Mean negative log-likelihood of the labels (natural logarithm).

    Probabilities are clipped into ``[eps, 1 - eps]`` so that a confident mistake costs
    ``-log(eps)`` (about 34.5) instead of infinity. Binary and multi-class as in
    :func:`brier_score`: the multi-class value is ``-mean(log p[i, y_i])``, equal to
    scikit-learn's ``log_loss`` whenever no probability is clipped.

    Parameters
    ----------
    {scoring_args}
    eps : float, default=1e-15
        Clipping bound.

    Returns
    -------
    float
    """
    if not 0 <= eps < 0.5:
        raise ValueError(f"eps must lie in [0, 0.5), got {eps!r}.")
    if _is_multiclass(y, p):
        index, P = class_pair(y, p, labels=labels, pos_label=pos_label)
        picked = np.clip(P[np.arange(P.shape[0]), index], eps, 1 - eps)
        return float(-np.mean(np.log(picked)))
    y01, p1 = binary_pair(y, p, pos_label=pos_label, labels=labels)
    p1 = np.clip(p1, eps, 1 - eps)
    return float(-np.mean(y01 * np.log(p1) + (1 - y01) * np.log1p(-p1)))
