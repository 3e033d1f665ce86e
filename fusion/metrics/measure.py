"""The binning-free empirical calibration measure of Gao, Parameswaran & Peng."""

from __future__ import annotations

import numpy as np

from ._docs import doc
from ._labels import binary_pair


@doc
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
    {binary_y_p}
    {binary_labels}

    Returns
    -------
    float
    """
    y, p = binary_pair(y, p, pos_label=pos_label, labels=labels)
    values, inverse = np.unique(p, return_inverse=True)
    group = np.bincount(inverse, weights=y - p, minlength=values.shape[0])
    prefix = np.concatenate([[0.0], np.cumsum(group)])
    return float((prefix.max() - prefix.min()) / y.shape[0])
