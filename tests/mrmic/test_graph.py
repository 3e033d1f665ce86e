"""Tests of fusion/mrmic/graph.py: merging, transitive reduction, similarity, dominance queries."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fusion.mrmic.graph import (
    dominance_edges,
    dominated_max,
    dominating_min,
    laplacian,
    merge_points,
    similarity_matrix,
)


def strict_dominance(points):
    """Brute force: D[i, j] = points[i] strictly dominates points[j]."""
    ge = np.all(points[:, None, :] >= points[None, :, :], axis=2)
    ne = np.any(points[:, None, :] != points[None, :, :], axis=2)
    return ge & ne


def reference_reduction(points):
    """Brute-force Hasse diagram: i > j with no k strictly between (O(n^3), small n)."""
    D = strict_dominance(points)
    between = (D.astype(int) @ D.astype(int)) > 0
    return set(zip(*np.nonzero(D & ~between), strict=True))


def closure(edges, n):
    R = np.zeros((n, n), dtype=bool)
    for h, lo in edges:
        R[h, lo] = True
    for k in range(n):  # Warshall
        R |= R[:, [k]] & R[[k], :]
    return R


def distinct_points(rng, n, M, levels):
    """Points on a coarse grid (many ties per coordinate), duplicates removed."""
    return np.unique(rng.integers(0, levels, size=(n, M)).astype(float) / levels, axis=0)


# -- merge_points -------------------------------------------------------------------------


def test_merge_sums_weights_and_averages_labels():
    U = np.array([[0.1, 0.2], [0.3, 0.4], [0.1, 0.2], [0.1, 0.2], [0.5, 0.5]])
    y = np.array([1.0, 0.0, 0.0, 1.0, 1.0])
    w = np.array([1.0, 2.0, 3.0, 0.5, 0.0])
    points, target, weight = merge_points(U, y, w)
    np.testing.assert_array_equal(points, [[0.1, 0.2], [0.3, 0.4]])  # zero weight dropped
    np.testing.assert_allclose(weight, [4.5, 2.0])
    np.testing.assert_allclose(target, [(1.0 * 1 + 3.0 * 0 + 0.5 * 1) / 4.5, 0.0])


def test_merge_keeps_data_term_up_to_a_constant():
    rng = np.random.default_rng(1)
    U = rng.integers(0, 4, size=(60, 2)) / 4.0
    y = rng.integers(0, 2, size=60).astype(float)
    w = rng.uniform(0.1, 2.0, size=60)
    points, target, weight = merge_points(U, y, w)
    idx = np.unique(U, axis=0, return_inverse=True)[1].reshape(-1)
    p1, p2 = rng.uniform(size=(2, points.shape[0]))
    rows = [np.dot(w, (y - p[idx]) ** 2) for p in (p1, p2)]
    merged = [np.dot(weight, (target - p) ** 2) for p in (p1, p2)]
    assert rows[0] - merged[0] == pytest.approx(rows[1] - merged[1], abs=1e-10)


# -- dominance_edges ----------------------------------------------------------------------


@pytest.mark.parametrize("M", [1, 2, 3])
@pytest.mark.parametrize("levels", [5, 1000])
def test_reduction_matches_brute_force(M, levels):
    rng = np.random.default_rng(M * 100 + levels)
    points = distinct_points(rng, 120, M, levels)
    rng.shuffle(points)
    hi, lo = dominance_edges(points)
    got = set(zip(hi.tolist(), lo.tolist(), strict=True))
    assert len(got) == hi.shape[0]  # no duplicate edges
    assert got == reference_reduction(points)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(2, 40),
    st.integers(2, 3),
    st.integers(2, 8),
)
def test_reduction_closure_is_dominance(seed, n, M, levels):
    points = distinct_points(np.random.default_rng(seed), n, M, levels)
    hi, lo = dominance_edges(points)
    np.testing.assert_array_equal(
        closure(zip(hi, lo, strict=True), points.shape[0]), strict_dominance(points)
    )


def test_reduction_small_chunks_agree(monkeypatch):
    import fusion.mrmic.graph as graph

    rng = np.random.default_rng(3)
    for M in (2, 3):
        points = distinct_points(rng, 150, M, 30)
        full = set(zip(*dominance_edges(points), strict=True))
        monkeypatch.setattr(graph, "CHUNK_ELEMENTS", 500)
        assert set(zip(*dominance_edges(points), strict=True)) == full
        monkeypatch.undo()


def test_reduction_rejects_duplicates():
    with pytest.raises(ValueError, match="distinct"):
        dominance_edges(np.array([[0.1, 0.2], [0.3, 0.1], [0.1, 0.2]]))


def test_reduction_of_antichains_is_complete_bipartite():
    # Two antichains, every lower point below every upper one: n^2 / 4 edges, all needed.
    t = np.linspace(0.0, 0.4, 10)
    low = np.column_stack([t, 0.4 - t])
    high = low + 0.5
    hi, lo = dominance_edges(np.vstack([low, high]))
    assert hi.shape[0] == 100
    assert np.all(hi >= 10) and np.all(lo < 10)


# -- similarity and Laplacian -------------------------------------------------------------


def test_dense_similarity_is_inverse_distance():
    rng = np.random.default_rng(4)
    points = rng.uniform(size=(30, 2))
    W = similarity_matrix(points, "dense").toarray()
    dist = np.linalg.norm(points[:, None] - points[None], axis=2)
    expected = np.where(dist > 0, 1.0 / np.where(dist > 0, dist, 1.0), 0.0)
    np.testing.assert_allclose(W, expected, rtol=1e-12)


def test_knn_similarity_is_symmetrized_neighbour_graph():
    rng = np.random.default_rng(5)
    points = rng.uniform(size=(80, 3))
    k = 4
    W = similarity_matrix(points, "knn", n_neighbors=k)
    dense = similarity_matrix(points, "dense").toarray()
    Wd = W.toarray()
    np.testing.assert_array_equal(Wd, Wd.T)
    nz = Wd > 0
    np.testing.assert_allclose(Wd[nz], dense[nz], rtol=1e-12)
    dist = np.linalg.norm(points[:, None] - points[None], axis=2)
    np.fill_diagonal(dist, np.inf)
    knn = np.argsort(dist, axis=1)[:, :k]
    expected = np.zeros_like(nz)
    expected[np.repeat(np.arange(80), k), knn.ravel()] = True
    np.testing.assert_array_equal(nz, expected | expected.T)
    # with n_neighbors >= n - 1 the graph is the dense one
    np.testing.assert_allclose(similarity_matrix(points, "knn", n_neighbors=200).toarray(), dense)


def test_similarity_rejects_duplicates():
    with pytest.raises(ValueError, match="distinct"):
        similarity_matrix(np.array([[0.1, 0.2], [0.1, 0.2], [0.5, 0.5]]))


def test_laplacian_quadratic_form():
    rng = np.random.default_rng(6)
    points = rng.uniform(size=(25, 2))
    W = similarity_matrix(points, "dense")
    L = laplacian(W)
    assert sp.issparse(L)
    np.testing.assert_allclose(L @ np.ones(25), 0.0, atol=1e-10)
    p = rng.uniform(size=25)
    Wd = W.toarray()
    pairs = sum(Wd[i, j] * (p[i] - p[j]) ** 2 for i in range(25) for j in range(i + 1, 25))
    assert p @ (L @ p) == pytest.approx(pairs, rel=1e-12)


# -- dominance queries --------------------------------------------------------------------


def brute_dominated_max(points, values, queries, fill):
    below = np.all(points[None] <= queries[:, None], axis=2)
    best = np.where(below, values[None], -np.inf).max(axis=1)
    return np.where(np.isneginf(best), fill, best)


@pytest.mark.parametrize("M", [1, 2, 3])
def test_dominated_max_and_min_match_brute_force(M):
    rng = np.random.default_rng(7 + M)
    points = rng.integers(0, 6, size=(40, M)) / 5.0  # ties and duplicates on purpose
    values = rng.uniform(size=40)
    queries = np.vstack([rng.integers(-1, 7, size=(300, M)) / 5.0, rng.uniform(size=(300, M))])
    np.testing.assert_array_equal(
        dominated_max(points, values, queries, fill=-5.0),
        brute_dominated_max(points, values, queries, -5.0),
    )
    np.testing.assert_array_equal(
        dominating_min(points, values, queries, fill=7.0),
        -brute_dominated_max(-points, -values, -queries, -7.0),
    )
