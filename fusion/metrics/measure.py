"""The binning-free empirical calibration measure of Gao, Parameswaran & Peng."""

from __future__ import annotations

import numpy as np

from ._labels import binary_pair


def calibration_measure(y, p, *, pos_label=None, labels=None) -> float:
    """Empirical calibration measure ``c_emp`` (Gao, Parameswaran & Peng, Definition 2).

    .. math:: c_{emp} = \\frac{1}{n} \\sup_{p_1 < p_2}
              \\Big| \\sum_i 1\\{p_1 < p_i \\le p_2\\} (y_i - p_i) \\Big|

    Any interval ``(p_1, p_2]`` selects a run of consecutive distinct prediction values, so
    with ``D_k`` the prefix sums of ``y - p`` over the groups of tied predictions in
    increasing order (``D_0 = 0``) the supremum is ``max_k D_k - min_k D_k``: exact, in
    ``O(n log n)`` for the sort.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels (0/1, bool, or any two with ``pos_label``).
    p : array-like of shape (n,) or (n, 2)
        Predicted positive-class probabilities (or ``predict_proba`` output).
    pos_label : optional
        The positive label when ``y`` is not 0/1 or bool.
    labels : array-like of shape (2,), optional
        The two sorted classes, when ``y`` holds only one of them.

    Returns
    -------
    float
    """
    y, p = binary_pair(y, p, pos_label=pos_label, labels=labels)
    values, inverse = np.unique(p, return_inverse=True)
    group = np.bincount(inverse, weights=y - p, minlength=values.shape[0])
    prefix = np.concatenate([[0.0], np.cumsum(group)])
    return float((prefix.max() - prefix.min()) / y.shape[0])
