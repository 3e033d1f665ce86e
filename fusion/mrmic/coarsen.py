"""Grouping many distinct training points into at most ``max_points`` weighted cells.

The cost of the MR-MIC QP grows steeply with the number of distinct points ``g`` (a dense
``g x g`` Laplacian, and the fill-in of OSQP's factorization along the dominance edges), so a
large training set is summarized before the QP: :func:`coarsen_points` splits the points
recursively (a k-d tree grown greedily on the k-means objective, see :func:`cell_labels`)
until there are ``max_points`` cells, and represents each cell by its weighted mean point,
weighted mean target and total weight, exactly as
:func:`fusion.mrmic.graph.merge_points` represents identical rows. A fitted vector that is
constant on each cell has the same data term on the cells as on the points, up to a constant.
"""

from __future__ import annotations

import heapq

import numpy as np

from .graph import merge_points

__all__ = ["coarsen_points", "cell_labels"]


def cell_labels(points: np.ndarray, max_cells: int, weight: np.ndarray | None = None) -> np.ndarray:
    """Cell number (``0 .. k-1``, ``k <= max_cells``) of each point of a k-d split.

    Greedy quantization: the cell with the largest weighted sum of squared distances to its
    mean (the k-means objective) is split next, across the coordinate contributing most to
    it, at the weighted median, until there are ``max_cells`` cells or no cell holds two
    different points. Equal values of the split coordinate are ordered by the other
    coordinates (then by index), so a column of tied points is cut across, not interleaved.
    Deterministic.

    Parameters
    ----------
    points : ndarray of shape (g, M)
    max_cells : int >= 1
    weight : ndarray of shape (g,), optional
        Positive point weights (default: all ones); scaling them changes nothing.

    Returns
    -------
    ndarray of int64, shape (g,)
    """
    points = np.asarray(points, dtype=float)
    g = points.shape[0]
    if max_cells < 1:
        raise ValueError(f"max_cells must be >= 1, got {max_cells}.")
    weight = np.ones(g) if weight is None else np.asarray(weight, dtype=float)
    weight = weight / weight.mean()

    def entry(idx: np.ndarray, counter: int) -> tuple[float, int, np.ndarray, np.ndarray]:
        cell, w = points[idx], weight[idx]
        per_axis = w @ (cell - (w @ cell) / w.sum()) ** 2  # weighted SSE along each axis
        return (-float(per_axis.sum()), counter, idx, per_axis)

    # Heap of (-SSE, tie-break counter, member indices, per-axis SSE).
    heap = [entry(np.arange(g), 0)]
    done: list[np.ndarray] = []
    counter = 1
    while heap and len(heap) + len(done) < max_cells:
        neg_sse, _, idx, per_axis = heapq.heappop(heap)
        if idx.shape[0] < 2 or neg_sse >= 0:
            done.append(idx)  # a single point (or identical points) cannot be split
            continue
        axis = int(np.argmax(per_axis))
        cell = points[idx]
        keys = [cell[:, j] for j in range(cell.shape[1] - 1, -1, -1) if j != axis]
        order = idx[np.lexsort((*keys, cell[:, axis]))]
        mass = np.cumsum(weight[order])
        half = int(np.searchsorted(mass, 0.5 * mass[-1]))
        half = min(max(half, 1), order.shape[0] - 1)  # both halves non-empty
        for part in (order[:half], order[half:]):
            heapq.heappush(heap, entry(part, counter))
            counter += 1
    labels = np.empty(g, dtype=np.int64)
    for k, idx in enumerate(done + [e[2] for e in sorted(heap, key=lambda e: e[1])]):
        labels[idx] = k
    return labels


def coarsen_points(
    points: np.ndarray, target: np.ndarray, weight: np.ndarray, max_points: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge distinct weighted points into at most ``max_points`` cells.

    Parameters
    ----------
    points : ndarray of shape (g, M)
        Distinct points (output of :func:`fusion.mrmic.graph.merge_points`).
    target, weight : ndarray of shape (g,)
        Their targets and positive weights.
    max_points : int or None
        Largest number of points returned; None or ``g <= max_points`` returns the input.

    Returns
    -------
    points, target, weight
        The weighted mean point, weighted mean target and total weight of each cell, in
        lexicographic order of the points (as :func:`merge_points` returns them).
    """
    g = points.shape[0]
    if max_points is None or g <= max_points:
        return points, target, weight
    labels = cell_labels(points, int(max_points), weight)
    k = int(labels.max()) + 1
    cell_weight = np.bincount(labels, weights=weight, minlength=k)
    centroid = (
        np.column_stack([np.bincount(labels, weights=weight * c, minlength=k) for c in points.T])
        / cell_weight[:, None]
    )
    cell_target = np.bincount(labels, weights=weight * target, minlength=k) / cell_weight
    # Two cells can have the same mean only by coincidence; merging them again keeps every
    # returned point distinct (the similarity graph needs distinct points).
    return merge_points(centroid, cell_target, cell_weight)
