"""Discrete-aware marginals: ECDF intervals of tied values, atoms, the compressed scale and the
class-conditional distributions built from them."""

import numpy as np
import pytest

from fusion.copula import marginals as mg
from fusion.ecdf import ECDFNormalizer


def _normalized(column):
    return ECDFNormalizer().fit_transform(np.asarray(column, dtype=float)[:, None])[:, 0]


def test_tie_intervals_recover_each_value_share_from_the_mid_ecdf():
    rng = np.random.default_rng(0)
    s = np.r_[rng.integers(0, 5, 300), rng.normal(size=50)]
    values, lower, upper, counts = mg.tie_intervals(_normalized(s))
    np.testing.assert_allclose(upper - lower, counts / s.shape[0], atol=1e-12)
    np.testing.assert_allclose(0.5 * (lower + upper), values, atol=1e-12)
    assert lower[0] == 0.0 and upper[-1] == pytest.approx(1.0, abs=1e-12)
    # a weighted mid-ECDF (as the base will compute) gives the weight shares instead
    w = rng.uniform(0.5, 2.0, s.shape[0])
    uniq, inv = np.unique(s, return_inverse=True)
    W = np.bincount(inv, w) / w.sum()
    u = (np.cumsum(W) - W / 2)[inv]
    _, lower, upper, _ = mg.tie_intervals(u)
    np.testing.assert_allclose(upper - lower, W, atol=1e-12)


def test_values_that_are_not_a_mid_ecdf_give_no_intervals():
    assert mg.tie_intervals(np.array([0.1, 0.2, 0.9])) is None


def test_atoms_are_the_wide_tie_groups():
    rng = np.random.default_rng(1)
    n = 1000
    binary = rng.integers(0, 2, n).astype(float)
    rounded = np.round(rng.normal(size=n), 2)  # ~300 values: ties, none wide
    inflated = np.where(rng.random(n) < 0.3, 0.0, rng.random(n))  # one atom at 0
    U = np.column_stack([_normalized(c) for c in (binary, rounded, inflated)])
    atoms = mg.find_atoms(U, np.ones(n))
    assert atoms["column"].tolist() == [0, 0, 2]
    assert mg.atom_threshold(n) == pytest.approx(0.9 / np.sqrt(12) * n**-0.2)
    widths = atoms["interval"][:, 1] - atoms["interval"][:, 0]
    assert np.all(widths >= mg.atom_threshold(n))
    # the threshold uses the effective size of the weights, not the row count
    w = np.r_[np.full(10, 1.0), np.full(n - 10, 1e-9)]
    few = mg.find_atoms(U, w)
    assert set(few["column"].tolist()) <= {0, 2}
    # weights scaled by a constant leave the atoms as they are
    for key in ("column", "value", "interval"):
        np.testing.assert_array_equal(mg.find_atoms(U, 7.0 * w)[key], few[key])


def test_compress_cuts_out_the_atoms_and_is_monotone():
    interval = np.array([[0.1, 0.3], [0.6, 0.7]])
    u = np.linspace(0, 1, 101)
    t = mg.compress(u, interval)
    assert np.all(np.diff(t) >= 0) and t[0] == 0 and t[-1] == pytest.approx(1.0)
    np.testing.assert_allclose(
        mg.compress(np.array([0.05, 0.2, 0.45, 0.65, 0.85]), interval),
        [
            0.05 / 0.7,
            0.1 / 0.7,
            0.25 / 0.7,
            0.4 / 0.7,
            0.55 / 0.7,
        ],
    )
    # atoms covering [0, 1] leave no continuous part
    np.testing.assert_array_equal(mg.compress(u, np.array([[0.0, 0.4], [0.4, 1.0]])), 0.0)


def _fit(U, y, w=None, bandwidth="silverman"):
    w = np.ones(U.shape[0]) if w is None else w
    rows = [y == 0, y == 1]
    atoms = mg.find_atoms(U, w)
    return mg.fit_marginals(U, rows, [w[r] for r in rows], atoms, bandwidth), atoms


def test_binary_column_gets_class_frequencies_and_cell_intervals():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 800)
    s = (rng.random(800) < np.where(y == 1, 0.7, 0.2)).astype(float)
    U = _normalized(s)[:, None]
    fitted, atoms = _fit(U, y)
    assert atoms["column"].tolist() == [0, 0]
    for c in (0, 1):
        freq = np.array([np.mean(s[y == c] == 0), np.mean(s[y == c] == 1)])
        np.testing.assert_allclose(fitted["atom_mass"][c], freq, atol=1e-8)
        assert fitted["continuous_mass"][c, 0] == 0.0
        lo, hi, log_marg = mg.evaluate(U[y == c], c, fitted, atoms)
        # the class's pseudo-observation of a 0 is [0, P(S = 0 | c)], of a 1 the rest
        zero = s[y == c] == 0
        np.testing.assert_allclose(lo[zero, 0], 0.0, atol=1e-12)
        np.testing.assert_allclose(hi[zero, 0], freq[0], atol=1e-8)
        np.testing.assert_allclose(hi[~zero, 0], 1.0, atol=1e-12)
        np.testing.assert_allclose(np.exp(log_marg[zero]), freq[0], atol=1e-8)
    assert np.all(np.isnan(fitted["bandwidths"]))


def test_mixed_column_is_a_distribution_with_atoms_and_a_density():
    rng = np.random.default_rng(3)
    n = 1500
    y = rng.integers(0, 2, n)
    s = np.where(rng.random(n) < np.where(y == 1, 0.15, 0.45), 0.0, rng.beta(2, 2 - y, n))
    U = _normalized(s)[:, None]
    fitted, atoms = _fit(U, y)
    assert atoms["column"].tolist() == [0]
    a, b = atoms["interval"][0]
    grid = np.linspace(0, 1, 20001)
    for c in (0, 1):
        q = fitted["atom_mass"][c, 0]
        assert q == pytest.approx(np.mean(s[y == c] == 0), abs=1e-8)
        lo, hi, log_f = mg.evaluate(grid[:, None], c, fitted, atoms)
        F = lo[:, 0]
        assert np.all(np.diff(F) >= -1e-12)  # a CDF, continuous across the atom's ends
        # the density (plateau q / width on the atom's interval) integrates to one
        f = np.exp(log_f)
        assert np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(grid)) == pytest.approx(1.0, abs=2e-3)
        inside = (grid > a) & (grid < b)
        np.testing.assert_allclose(f[inside], q / (b - a), rtol=1e-9)
        # and the CDF is its integral
        running = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(grid))])
        np.testing.assert_allclose(F, running, atol=2e-3)
        # at the atom's value itself: the interval of the atom's class mass
        lo, hi, log_q = mg.evaluate(np.array([[atoms["value"][0]]]), c, fitted, atoms)
        assert hi[0, 0] - lo[0, 0] == pytest.approx(q, abs=1e-12)
        assert np.exp(log_q[0]) == pytest.approx(q)


def test_columns_without_ties_are_the_plain_kde():
    from fusion.copula.kde import grid_position, interpolate, reflected_kde, select_bandwidth

    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 300)
    U = _normalized(rng.normal(size=300) + y)[:, None]
    fitted, atoms = _fit(U, y)
    assert atoms["value"].size == 0
    h = select_bandwidth(U[y == 1, 0], np.ones(int(y.sum())), "silverman")
    G = fitted["cdf"].shape[2]
    log_pdf, cdf = reflected_kde(U[y == 1, 0], np.ones(int(y.sum())), h, G)
    np.testing.assert_array_equal(fitted["log_pdf"][1, 0], log_pdf)
    lo, hi, log_marg = mg.evaluate(U, 1, fitted, atoms)
    i, frac = grid_position(U[:, 0], G)
    np.testing.assert_array_equal(lo[:, 0], interpolate(cdf, i, frac))
    np.testing.assert_array_equal(lo, hi)
    np.testing.assert_array_equal(log_marg, interpolate(log_pdf, i, frac))
