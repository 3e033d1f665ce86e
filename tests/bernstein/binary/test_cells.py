"""Cells of aggregated rows (fusion/bernstein/binary/cells.py)."""

import numpy as np
import pytest

from fusion import BernsteinFusion
from fusion.bernstein.binary.cells import (
    CellSums,
    CellTable,
    block_sums,
    cell_edges,
    cell_index,
)
from fusion.bernstein.folds import FoldRule

from ...conftest import simulate


def _rows(n, seed):
    rng = np.random.default_rng(seed)
    U = rng.random((n, 2))
    Z = np.log(U / (1 - U)) * np.array([1.0, 2.0])
    y = (rng.random(n) < U.mean(1)).astype(float)
    w = rng.uniform(0.5, 2.0, n)
    return U, Z, y, w


def test_cell_index_is_monotone_and_cuts_both_scales():
    U, Z, _, _ = _rows(5000, 0)
    edges = cell_edges(Z.min(0), Z.max(0), 8)
    idx, dims = cell_index(U, Z, edges)
    assert dims == (15, 15)
    a, b = np.divmod(idx, 15)
    order = np.argsort(U[:, 0])
    assert np.all(np.diff(a[order]) >= 0)  # intervals follow the score order
    # each axis interval is narrow in u and in z: at most 1/8 of either range
    for k in np.unique(a):
        rows = a == k
        assert np.ptp(U[rows, 0]) <= 1 / 8 + 1e-12
        assert np.ptp(Z[rows, 0]) <= np.ptp(Z[:, 0]) / 8 + 1e-12


def test_sums_add_over_blocks_in_any_order():
    U, Z, y, w = _rows(3000, 1)
    edges = cell_edges(Z.min(0), Z.max(0), 6)
    fold = FoldRule.of(4, 0).cells(U, y).fold_of
    whole = block_sums(U, Z, y, w, edges, fold, 4)
    parts = [
        block_sums(U[s], Z[s], y[s], w[s], edges, fold[s], 4)
        for s in np.array_split(np.random.default_rng(2).permutation(3000), 5)
    ]
    merged = CellSums.merge(parts)
    np.testing.assert_array_equal(merged.key, whole.key)
    for name in ("W", "V", "W2", "SU", "SZ"):
        np.testing.assert_allclose(getattr(merged, name), getattr(whole, name), rtol=1e-12)
    assert whole.W.sum() == pytest.approx(w.sum())
    table = CellTable(whole, 4, 2)
    data = table.data()
    assert table.W.shape == (4, table.n_cells) and data.base_rate == pytest.approx(
        np.sum(w * y) / w.sum()
    )
    # every fold's training and held-out cells hold all of its rows' weight
    for f, (train, test) in enumerate(data.folds):
        assert test.w.sum() == pytest.approx(w[fold == f].sum())
        assert train.w.sum() + test.w.sum() == pytest.approx(w.sum())


def test_fit_on_cells_is_close_to_the_fit_on_rows():
    S, y, _ = simulate(20_000, seed=5)
    rows = BernsteinFusion(degree=6, lam=1e-3, bins=None).fit(S, y)
    cells = BernsteinFusion(degree=6, lam=1e-3, bins=32).fit(S, y)
    assert rows.n_cells_ is None and 100 < cells.n_cells_ < 20_000
    T, _, _ = simulate(5000, seed=6)
    diff = rows.predict_proba(T)[:, 1] - cells.predict_proba(T)[:, 1]
    assert np.sqrt(np.mean(diff**2)) < 1e-3 and np.max(np.abs(diff)) < 5e-3
