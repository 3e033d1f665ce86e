"""Tests of fusion/mrmic/coarsen.py: grouping many points into at most max_points cells."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusion.mrmic.coarsen import cell_labels, coarsen_points
from fusion.mrmic.graph import merge_points


def weighted_points(g, M, seed):
    rng = np.random.default_rng(seed)
    points, target, weight = merge_points(
        rng.uniform(size=(g, M)), rng.integers(0, 2, size=g).astype(float), np.ones(g)
    )
    return points, target, weight * rng.uniform(0.5, 2.0, size=points.shape[0])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 300), st.integers(1, 4), st.integers(1, 80))
def test_cells_partition_the_points_into_at_most_max_cells(seed, g, M, max_cells):
    points = np.random.default_rng(seed).integers(0, 5, size=(g, M)).astype(float)
    labels = cell_labels(points, max_cells)
    k = labels.max() + 1
    assert k <= max_cells
    assert np.all(np.bincount(labels, minlength=k) > 0)  # no empty cell
    distinct = np.unique(points, axis=0).shape[0]
    assert k >= min(max_cells, distinct)  # splits continue while a cell can be split


def test_cells_of_uniform_points_have_similar_sizes_and_are_deterministic():
    points = np.random.default_rng(1).uniform(size=(5000, 3))
    labels = cell_labels(points, 500)
    sizes = np.bincount(labels)
    assert sizes.shape[0] == 500
    assert sizes.max() <= 2.5 * sizes.mean() and sizes.min() >= sizes.mean() / 2.5
    np.testing.assert_array_equal(labels, cell_labels(points, 500))


def test_cells_are_small_around_a_tied_column():
    # 99 % of the points share the first coordinate: the column is cut across (not
    # interleaved by index), and the few other points get cells of their own.
    rng = np.random.default_rng(2)
    tied = rng.uniform(size=2000) < 0.99
    points = np.column_stack([np.where(tied, 0.5, rng.uniform(size=2000)), rng.uniform(size=2000)])
    labels = cell_labels(points, 200)
    for k in range(labels.max() + 1):
        assert np.ptp(points[labels == k], axis=0).max() < 0.05


def test_weights_move_the_cuts_but_scaling_them_does_not():
    rng = np.random.default_rng(3)
    points = rng.uniform(size=(400, 2))
    w = rng.uniform(0.1, 3.0, size=400)
    np.testing.assert_array_equal(cell_labels(points, 50, w), cell_labels(points, 50, 7.0 * w))
    assert not np.array_equal(cell_labels(points, 50, w), cell_labels(points, 50))


def test_coarsening_keeps_totals_and_the_data_term_of_cell_constant_fits():
    points, target, weight = weighted_points(800, 2, 3)
    cells, ctarget, cweight = coarsen_points(points, target, weight, 100)
    assert cells.shape[0] <= 100
    assert np.unique(cells, axis=0).shape[0] == cells.shape[0]  # distinct, as the QP needs
    np.testing.assert_allclose(cweight.sum(), weight.sum())
    np.testing.assert_allclose(cweight @ ctarget, weight @ target)
    np.testing.assert_allclose(cweight @ cells, weight @ points)
    # A fit constant on each cell has the same data term on points and cells, up to a
    # constant independent of the fit. Cells come back sorted: match them by their means.
    labels = cell_labels(points, 100, weight)
    means = np.column_stack([np.bincount(labels, weights=weight * c) for c in points.T])
    means /= np.bincount(labels, weights=weight)[:, None]
    cell_of_label = np.array([np.flatnonzero(np.all(cells == m, axis=1))[0] for m in means])
    rng = np.random.default_rng(4)
    gaps = []
    for _ in range(2):
        p = rng.uniform(size=cells.shape[0])
        p_points = p[cell_of_label[labels]]
        gaps.append(weight @ (target - p_points) ** 2 - cweight @ (ctarget - p) ** 2)
    assert gaps[0] == pytest.approx(gaps[1], abs=1e-9)


def test_no_coarsening_below_the_limit():
    points, target, weight = weighted_points(50, 2, 5)
    for limit in (None, 50, 1000):
        out = coarsen_points(points, target, weight, limit)
        for a, b in zip(out, (points, target, weight), strict=True):
            assert a is b


def test_bad_max_cells():
    with pytest.raises(ValueError, match="max_cells"):
        cell_labels(np.zeros((3, 2)), 0)
