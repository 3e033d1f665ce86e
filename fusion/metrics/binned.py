"""Binned reliability: per-bin observed rate against mean prediction, and the ECE/MCE family.

Binary: :func:`reliability_bins`, :func:`binned_ece`, :func:`binned_mce`. Multi-class:
:func:`top_label_bins` and :func:`top_label_ece` (the confidence ``max_k p_k`` against the
accuracy of the predicted class, Guo et al. 2017) and :func:`classwise_ece` (the binned ECE of
every class column against that class's indicator, averaged over classes; Kull et al. 2019).
"""

from __future__ import annotations

import numpy as np

from ._docs import doc
from ._labels import binary_pair, class_pair, positive_int


def bin_ids(p: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """The bin of every prediction ``p``: ``n_bins`` equal-width bins of [0, 1]
    (``"uniform"``, the last closed at 1) or equal-count runs of the sorted ``p``
    (``"quantile"``)."""
    if strategy == "uniform":
        # [k/B, (k+1)/B), the last bin closed at 1.
        return np.minimum((p * n_bins).astype(np.int64), n_bins - 1)
    if strategy == "quantile":
        # Equal counts: split the sorted order into n_bins nearly equal runs.
        order = np.argsort(p, kind="stable")
        ids = np.empty(p.shape[0], dtype=np.int64)
        ids[order] = (np.arange(p.shape[0]) * n_bins) // p.shape[0]
        return ids
    raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}.")


def _bin_table(target: np.ndarray, p: np.ndarray, n_bins: int, strategy: str):
    ids = bin_ids(p, n_bins, strategy)
    count = np.bincount(ids, minlength=n_bins).astype(float)
    hits = np.bincount(ids, weights=target, minlength=n_bins)
    total = np.bincount(ids, weights=p, minlength=n_bins)
    keep = count > 0
    return hits[keep] / count[keep], total[keep] / count[keep], count[keep]


def _ece(observed, predicted, count) -> float:
    return float(np.sum(np.abs(observed - predicted) * count) / np.sum(count))


@doc
def reliability_bins(
    y, p, n_bins: int = 10, strategy: str = "uniform", *, pos_label=None, labels=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin observed positive rate, mean prediction and count (non-empty bins only).

    Parameters
    ----------
    {binary_y_p}
    n_bins : int, default=10
        Number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        ``"uniform"``: bins ``[k/B, (k+1)/B)``, the last closed. ``"quantile"``: bins of
        equal counts (ties may straddle a boundary so that counts stay equal).
    {binary_labels}

    Returns
    -------
    observed, predicted, count : ndarray
        One entry per non-empty bin, in bin order: the observed positive rate, the mean
        prediction and the number of samples.
    """
    n_bins = positive_int(n_bins, "n_bins")
    y01, p1 = binary_pair(y, p, pos_label=pos_label, labels=labels)
    return _bin_table(y01, p1, n_bins, strategy)


@doc
def binned_ece(
    y,
    p,
    n_bins: int = 10,
    strategy: str = "uniform",
    weighted: bool = True,
    *,
    pos_label=None,
    labels=None,
) -> float:
    """Expected calibration error over bins of the predicted probability (binary).

    Parameters
    ----------
    {binary_y_p}
    {binary_bins}
    weighted : bool, default=True
        True: each bin's ``|observed rate - mean prediction|`` weighted by its share of the
        samples (Naeini & Cooper). False: the plain mean over non-empty bins (Wang, Li &
        Dang, eq. (70)).
    {binary_labels}

    Returns
    -------
    float
        In ``[0, 1]``; 0 when every bin's observed rate equals its mean prediction.
    """
    obs, pred, count = reliability_bins(
        y, p, n_bins=n_bins, strategy=strategy, pos_label=pos_label, labels=labels
    )
    if weighted:
        return _ece(obs, pred, count)
    return float(np.mean(np.abs(obs - pred)))


@doc
def binned_mce(
    y, p, n_bins: int = 10, strategy: str = "uniform", *, pos_label=None, labels=None
) -> float:
    """Maximum calibration error: the largest bin gap over non-empty bins (binary).

    Parameters
    ----------
    {binary_y_p}
    {binary_bins}
    {binary_labels}

    Returns
    -------
    float
        In ``[0, 1]``; at least :func:`binned_ece` with the same bins.
    """
    obs, pred, _ = reliability_bins(
        y, p, n_bins=n_bins, strategy=strategy, pos_label=pos_label, labels=labels
    )
    return float(np.max(np.abs(obs - pred)))


@doc
def top_label_bins(
    y, p, n_bins: int = 15, strategy: str = "uniform", *, labels=None, pos_label=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin accuracy, mean confidence and count of the top-label prediction.

    Each row's confidence is its largest class probability and its prediction the class of
    that column (the first such column on a tie); rows are binned by confidence.

    Parameters
    ----------
    {top_label_args}

    Returns
    -------
    accuracy, confidence, count : ndarray
        One entry per non-empty bin, in bin order: the share of rows whose top label is right,
        their mean confidence and their number.
    """
    n_bins = positive_int(n_bins, "n_bins")
    index, P = class_pair(y, p, labels=labels, pos_label=pos_label)
    top = np.argmax(P, axis=1)
    confidence = P[np.arange(P.shape[0]), top]
    return _bin_table((top == index).astype(float), confidence, n_bins, strategy)


@doc
def top_label_ece(
    y, p, n_bins: int = 15, strategy: str = "uniform", *, labels=None, pos_label=None
) -> float:
    """Top-label expected calibration error (confidence ECE of Guo et al. 2017).

    ``sum_b (n_b / n) |accuracy_b - confidence_b|`` over the bins of
    :func:`top_label_bins` (mass-weighted; 15 equal-width bins by default).

    {top_label_metric}

    Examples
    --------
    >>> from fusion.metrics import top_label_ece
    >>> P = [[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]
    >>> # one bin [0.5, 1]: accuracy 3/4, mean confidence 0.6
    >>> round(top_label_ece(["a", "b", "c", "b"], P, n_bins=2), 4)
    0.15
    """
    return _ece(
        *top_label_bins(y, p, n_bins=n_bins, strategy=strategy, labels=labels, pos_label=pos_label)
    )


@doc
def classwise_ece(
    y, p, n_bins: int = 15, strategy: str = "uniform", *, labels=None, pos_label=None
) -> float:
    """Classwise expected calibration error (Kull et al. 2019).

    For every class ``k``, the mass-weighted binned ECE of column ``k`` against the indicator
    ``y == classes[k]``; then the mean over the ``C`` classes:
    ``(1/C) sum_k sum_b (n_bk / n) |observed_bk - predicted_bk|``.

    {top_label_metric}
    """
    n_bins = positive_int(n_bins, "n_bins")
    index, P = class_pair(y, p, labels=labels, pos_label=pos_label)
    per_class = [
        _ece(*_bin_table((index == k).astype(float), P[:, k], n_bins, strategy))
        for k in range(P.shape[1])
    ]
    return float(np.mean(per_class))
