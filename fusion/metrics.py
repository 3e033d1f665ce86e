"""Calibration metrics.

* :func:`brier_score` -- mean squared error of the predicted probability.
* :func:`binned_ece`, :func:`binned_mce` -- reliability gaps over bins of the predicted
  probability (uniform or equal-count bins; mass-weighted as in Naeini & Cooper 2016 or
  averaged over non-empty bins as in Wang, Li & Dang 2019, eq. (70)).
* :func:`grid_ece`, :func:`grid_mce`, :func:`grid_calibration_table` -- the grid metrics of
  Wang & Liu (2020, Sec. 5.2) on the ECDF-normalized cube of a fitted fusion estimator.
* :func:`calibration_measure` -- the binning-free empirical calibration measure ``c_emp`` of
  Gao, Parameswaran & Peng (Definition 2), computed exactly in ``O(n log n)``.

Labels ``y`` may be 0/1 or bool, or any two labels with ``pos_label`` naming the positive one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "brier_score",
    "log_loss",
    "binned_ece",
    "binned_mce",
    "reliability_bins",
    "grid_ece",
    "grid_mce",
    "grid_calibration_table",
    "GridCalibration",
    "calibration_measure",
]


def _binary(y, pos_label=None) -> np.ndarray:
    y = np.asarray(y).reshape(-1) if np.ndim(y) else np.asarray([y])
    if pos_label is not None:
        return (y == pos_label).astype(float)
    if y.dtype.kind == "b":
        return y.astype(float)
    if y.dtype.kind in "iuf":
        if y.dtype.kind == "f" and np.isnan(y).any():
            raise ValueError("y contains NaN.")
        if not np.all((y == 0) | (y == 1)):
            raise ValueError(
                f"y must be 0/1 or bool, got values {np.unique(y)[:5].tolist()}; pass "
                "pos_label to name the positive class of other labels."
            )
        return y.astype(float)
    raise ValueError(f"y of dtype {y.dtype} needs pos_label to name the positive class.")


def _proba(p, n: int) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.ndim == 2 and p.shape[1] == 2:
        p = p[:, 1]
    p = p.reshape(-1)
    if p.shape[0] != n:
        raise ValueError(f"y has {n} labels but p has {p.shape[0]} probabilities.")
    if n == 0:
        raise ValueError("empty input: y and p have no rows.")
    if not np.all(np.isfinite(p)):
        raise ValueError("p contains non-finite values.")
    if p.min() < 0 or p.max() > 1:
        raise ValueError(f"p must lie in [0, 1]; got values in [{p.min()}, {p.max()}].")
    return p


def _pair(y, p, pos_label):
    y = _binary(y, pos_label)
    return y, _proba(p, y.shape[0])


def brier_score(y, p, *, pos_label=None) -> float:
    """Mean of ``(p - y)^2``.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels (0/1, bool, or any with ``pos_label``).
    p : array-like of shape (n,) or (n, 2)
        Predicted probability of the positive class (or ``predict_proba`` output).
    pos_label : optional
        The positive label when ``y`` is not 0/1 or bool.
    """
    y, p = _pair(y, p, pos_label)
    return float(np.mean((p - y) ** 2))


def log_loss(y, p, *, pos_label=None, eps: float = 1e-15) -> float:
    """Mean negative log-likelihood, with ``p`` clipped into ``[eps, 1 - eps]``."""
    y, p = _pair(y, p, pos_label)
    p = np.clip(p, eps, 1 - eps)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def _bin_ids(p: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
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


def reliability_bins(
    y, p, n_bins: int = 10, strategy: str = "uniform", *, pos_label=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin observed positive rate, mean prediction and count (non-empty bins only).

    Returns
    -------
    observed, predicted, count : ndarray
        One entry per non-empty bin, in bin order.
    """
    if int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}.")
    y, p = _pair(y, p, pos_label)
    ids = _bin_ids(p, int(n_bins), strategy)
    count = np.bincount(ids, minlength=n_bins).astype(float)
    pos = np.bincount(ids, weights=y, minlength=n_bins)
    tot = np.bincount(ids, weights=p, minlength=n_bins)
    keep = count > 0
    return pos[keep] / count[keep], tot[keep] / count[keep], count[keep]


def binned_ece(
    y, p, n_bins: int = 10, strategy: str = "uniform", weighted: bool = True, *, pos_label=None
) -> float:
    """Expected calibration error over bins of the predicted probability.

    Parameters
    ----------
    y, p : array-like
        Labels and predicted positive-class probabilities.
    n_bins : int
        Number of bins.
    strategy : {"uniform", "quantile"}
        ``"uniform"``: bins ``[k/B, (k+1)/B)``, the last closed. ``"quantile"``: bins of
        equal counts (ties may straddle a boundary so that counts stay equal).
    weighted : bool
        True: each bin's ``|observed rate - mean prediction|`` weighted by its share of the
        samples (Naeini & Cooper). False: the plain mean over non-empty bins (Wang, Li &
        Dang, eq. (70)).
    """
    obs, pred, count = reliability_bins(y, p, n_bins=n_bins, strategy=strategy, pos_label=pos_label)
    gap = np.abs(obs - pred)
    if weighted:
        return float(np.sum(gap * count) / np.sum(count))
    return float(np.mean(gap))


def binned_mce(y, p, n_bins: int = 10, strategy: str = "uniform", *, pos_label=None) -> float:
    """Maximum calibration error: the largest bin gap over non-empty bins."""
    obs, pred, _ = reliability_bins(y, p, n_bins=n_bins, strategy=strategy, pos_label=pos_label)
    return float(np.max(np.abs(obs - pred)))


@dataclass(frozen=True)
class GridCalibration:
    """Per-cell table of the grid calibration metrics.

    Attributes
    ----------
    cells : ndarray of shape (k, M)
        Integer index of each kept cell along each axis.
    centres : ndarray of shape (k, M)
        Cell centres in the normalized cube, ``(index + 1/2) / bins``.
    count : ndarray of shape (k,)
        Test samples in each kept cell.
    observed : ndarray of shape (k,)
        Observed positive rate in each kept cell.
    predicted : ndarray of shape (k,)
        The calibrating function at the cell centre.
    n_cells_total : int
        ``bins ** M``.
    n_nonempty : int
        Cells with at least one test sample.
    """

    cells: np.ndarray
    centres: np.ndarray
    count: np.ndarray
    observed: np.ndarray
    predicted: np.ndarray
    n_cells_total: int
    n_nonempty: int

    @property
    def gap(self) -> np.ndarray:
        """``|observed - predicted|`` per kept cell."""
        return np.abs(self.observed - self.predicted)

    @property
    def n_kept(self) -> int:
        """Number of cells with at least ``min_count`` samples."""
        return int(self.count.shape[0])

    @property
    def ece(self) -> float:
        """Mean absolute gap over kept cells."""
        return float(np.mean(self.gap))

    @property
    def mce(self) -> float:
        """Largest absolute gap over kept cells."""
        return float(np.max(self.gap))


def grid_calibration_table(
    estimator, S, y, bins: int = 10, min_count: int = 1000
) -> GridCalibration:
    """Observed vs. fitted probability on the cells of a uniform grid of the normalized cube.

    ``S`` is normalized with ``estimator.ecdf_``; ``[0, 1]^M`` is split into ``bins^M`` equal
    cells (``[k/B, (k+1)/B)``, the last closed); cells with fewer than ``min_count`` samples
    are dropped; each kept cell's observed positive rate is compared with the calibrating
    function at the cell centre (Wang & Liu 2020, Sec. 5.2).

    Parameters
    ----------
    estimator : fitted fusion estimator
        Needs ``ecdf_``, ``classes_`` and ``calibrating_function``.
    S : array-like of shape (n, M)
        Raw test scores.
    y : array-like of shape (n,)
        Test labels, in the estimator's label space (``classes_[1]`` is positive).
    bins : int
        Cells per axis.
    min_count : int
        Minimum number of test samples for a cell to count.

    Raises
    ------
    ValueError
        When no cell has ``min_count`` samples.
    """
    if int(bins) != bins or bins < 1:
        raise ValueError(f"bins must be a positive integer, got {bins!r}.")
    if int(min_count) != min_count or min_count < 1:
        raise ValueError(f"min_count must be a positive integer, got {min_count!r}.")
    bins = int(bins)
    U = estimator._normalize(S)
    y = np.asarray(y).reshape(-1)
    if y.shape[0] != U.shape[0]:
        raise ValueError(f"S has {U.shape[0]} rows but y has {y.shape[0]} labels.")
    unknown = ~np.isin(y, estimator.classes_)
    if unknown.any():
        raise ValueError(
            f"y holds labels not seen in fit ({y[unknown][:3].tolist()}); the estimator's "
            f"classes are {estimator.classes_.tolist()}."
        )
    y01 = (y == estimator.classes_[1]).astype(float)
    M = U.shape[1]
    idx = np.minimum((U * bins).astype(np.int64), bins - 1)
    flat = np.ravel_multi_index(idx.T, (bins,) * M)
    count = np.bincount(flat, minlength=bins**M)
    pos = np.bincount(flat, weights=y01, minlength=bins**M)
    kept = np.flatnonzero(count >= min_count)
    if kept.size == 0:
        raise ValueError(
            f"no grid cell has at least min_count={min_count} test samples (largest cell has "
            f"{int(count.max())} of {U.shape[0]}); lower min_count or use more test data."
        )
    cells = np.column_stack(np.unravel_index(kept, (bins,) * M))
    centres = (cells + 0.5) / bins
    return GridCalibration(
        cells=cells,
        centres=centres,
        count=count[kept],
        observed=pos[kept] / count[kept],
        predicted=estimator.calibrating_function(centres),
        n_cells_total=bins**M,
        n_nonempty=int(np.count_nonzero(count)),
    )


def grid_ece(estimator, S, y, bins: int = 10, min_count: int = 1000) -> float:
    """Grid ECE: mean ``|observed - f(centre)|`` over cells with ``>= min_count`` samples.

    See :func:`grid_calibration_table` for the parameters.
    """
    return grid_calibration_table(estimator, S, y, bins=bins, min_count=min_count).ece


def grid_mce(estimator, S, y, bins: int = 10, min_count: int = 1000) -> float:
    """Grid MCE: largest ``|observed - f(centre)|`` over cells with ``>= min_count`` samples.

    See :func:`grid_calibration_table` for the parameters.
    """
    return grid_calibration_table(estimator, S, y, bins=bins, min_count=min_count).mce


def calibration_measure(y, p, *, pos_label=None) -> float:
    """Empirical calibration measure ``c_emp`` (Gao, Parameswaran & Peng, Definition 2).

    .. math:: c_{emp} = \\frac{1}{n} \\sup_{p_1 < p_2}
              \\Big| \\sum_i 1\\{p_1 < p_i \\le p_2\\} (y_i - p_i) \\Big|

    Any interval ``(p_1, p_2]`` selects a run of consecutive distinct prediction values, so
    with ``D_k`` the prefix sums of ``y - p`` over the groups of tied predictions in
    increasing order (``D_0 = 0``) the supremum is ``max_k D_k - min_k D_k``: exact, in
    ``O(n log n)`` for the sort.
    """
    y, p = _pair(y, p, pos_label)
    values, inverse = np.unique(p, return_inverse=True)
    group = np.bincount(inverse, weights=y - p, minlength=values.shape[0])
    prefix = np.concatenate([[0.0], np.cumsum(group)])
    return float((prefix.max() - prefix.min()) / y.shape[0])
