"""Grid calibration metrics of Wang & Liu (2020, Sec. 5.2) on the ECDF-normalized cube.

The cube ``[0, 1]^M`` of a fitted estimator's normalized scores is split into ``bins^M`` equal
cells; each cell with enough test samples compares its observed positive rate with the
calibrating function at its centre.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._docs import doc
from ._labels import as_labels, class_index, positive_int


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


@doc
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
    {grid_args}

    Returns
    -------
    GridCalibration
        The kept cells, their counts, observed rates and fitted probabilities.

    Raises
    ------
    ValueError
        When no cell has ``min_count`` samples.
    """
    bins = positive_int(bins, "bins")
    min_count = positive_int(min_count, "min_count")
    classes = np.asarray(estimator.classes_) if hasattr(estimator, "classes_") else None
    U = estimator.normalize(S)  # raises NotFittedError on an unfitted estimator
    if classes is None or classes.shape[0] != 2:
        raise ValueError(
            "the grid metrics are binary: they need an estimator fitted on two classes, got "
            f"classes {None if classes is None else classes.tolist()}."
        )
    y = as_labels(y)
    if y.shape[0] != U.shape[0]:
        raise ValueError(f"S has {U.shape[0]} rows but y has {y.shape[0]} labels.")
    try:
        _, index = class_index(y, 2, classes)
    except ValueError:
        raise ValueError(
            f"y holds labels not seen in fit; the estimator's classes are {classes.tolist()} "
            f"and y holds {np.unique(y.astype(str))[:5].tolist()}."
        ) from None
    y01 = (index == 1).astype(float)
    M = U.shape[1]
    # Only non-empty cells are materialized: bins**M can be far beyond memory for large M.
    idx = np.minimum((U * bins).astype(np.int64), bins - 1)
    occupied, inverse, count = np.unique(idx, axis=0, return_inverse=True, return_counts=True)
    pos = np.bincount(inverse.reshape(-1), weights=y01, minlength=occupied.shape[0])
    kept = np.flatnonzero(count >= min_count)
    if kept.size == 0:
        raise ValueError(
            f"no grid cell has at least min_count={min_count} test samples (largest cell has "
            f"{int(count.max())} of {U.shape[0]}); lower min_count or use more test data."
        )
    cells = occupied[kept]
    centres = (cells + 0.5) / bins
    return GridCalibration(
        cells=cells,
        centres=centres,
        count=count[kept],
        observed=pos[kept] / count[kept],
        predicted=estimator.calibrating_function(centres),
        n_cells_total=bins**M,
        n_nonempty=int(occupied.shape[0]),
    )


@doc
def grid_ece(estimator, S, y, bins: int = 10, min_count: int = 1000) -> float:
    """Grid ECE: mean ``|observed - f(centre)|`` over cells with ``>= min_count`` samples.

    {grid_metric}
    """
    return grid_calibration_table(estimator, S, y, bins=bins, min_count=min_count).ece


@doc
def grid_mce(estimator, S, y, bins: int = 10, min_count: int = 1000) -> float:
    """Grid MCE: largest ``|observed - f(centre)|`` over cells with ``>= min_count`` samples.

    {grid_metric}
    """
    return grid_calibration_table(estimator, S, y, bins=bins, min_count=min_count).mce
