"""The copula-family interface: CDFs, conditional CDFs, rotations, the likelihood of intervals,
interval fits, and the bivariate normal / Student-t distribution functions behind them."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from fusion.copula import families as fam
from fusion.copula.family import NARROW, Copula
from fusion.copula.fit import fit_family
from fusion.copula.special import bvn_cdf, bvt_cdf

from ._helpers import equicorrelation

BIVARIATE = [
    ("gaussian", {"corr": equicorrelation(2, 0.6)}),
    ("gaussian", {"corr": equicorrelation(2, -0.4)}),
    ("student", {"corr": equicorrelation(2, 0.5), "df": 3.5}),
    ("clayton", {"theta": 2.0}),
    ("clayton_rot90", {"theta": 2.0}),
    ("clayton_rot180", {"theta": 2.0}),
    ("clayton_rot270", {"theta": 2.0}),
    ("gumbel", {"theta": 1.7}),
    ("gumbel_rot90", {"theta": 1.7}),
    ("gumbel_rot180", {"theta": 1.7}),
    ("gumbel_rot270", {"theta": 1.7}),
    ("frank", {"theta": 5.0}),
    ("frank", {"theta": -5.0}),
    ("plackett", {"theta": 4.0}),
    ("plackett", {"theta": 0.2}),
    ("independence", {}),
]
IDS = [f"{f}-{list(p.values())[-1] if p else ''}" for f, p in BIVARIATE]
_PTS = np.random.default_rng(0).uniform(0.05, 0.95, size=(5, 2))
_EDGES = np.array([0.0, 0.1, 0.35, 0.6, 0.9, 1.0])


def _grid_cells(edges, M):
    """Lower and upper corners of the cells of a tensor grid of [0, 1]^M."""
    lo = np.array(np.meshgrid(*[edges[:-1]] * M, indexing="ij")).reshape(M, -1).T
    hi = np.array(np.meshgrid(*[edges[1:]] * M, indexing="ij")).reshape(M, -1).T
    return lo, hi


@pytest.mark.parametrize("family, params", BIVARIATE, ids=IDS)
def test_cdf_is_the_distribution_function_of_the_density(family, params):
    c = fam.make(family, 2, params)
    # its mixed second difference is the density (central differences, one Richardson step)
    u, v = _PTS.T

    def central(k):
        C = lambda a, b: c.cdf(np.column_stack([a, b]))  # noqa: E731
        return (C(u + k, v + k) - C(u + k, v - k) - C(u - k, v + k) + C(u - k, v - k)) / (4 * k * k)

    numeric = (4.0 * central(5e-4) - central(1e-3)) / 3.0
    np.testing.assert_allclose(numeric, c.pdf(_PTS), rtol=1e-5)
    # and the boundary conditions of a copula
    t = np.linspace(0, 1, 11)
    zeros, ones = np.zeros_like(t), np.ones_like(t)
    np.testing.assert_allclose(c.cdf(np.column_stack([t, zeros])), 0.0, atol=1e-15)
    np.testing.assert_allclose(c.cdf(np.column_stack([zeros, t])), 0.0, atol=1e-15)
    np.testing.assert_allclose(c.cdf(np.column_stack([t, ones])), t, atol=1e-12)
    np.testing.assert_allclose(c.cdf(np.column_stack([ones, t])), t, atol=1e-12)


@pytest.mark.parametrize("family, params", BIVARIATE, ids=IDS)
def test_hfunctions_are_the_partial_derivatives_of_the_cdf(family, params):
    c = fam.make(family, 2, params)
    h = 1e-6
    for axis in (0, 1):
        step = np.zeros(2)
        step[axis] = h
        numeric = (c.cdf(_PTS + step) - c.cdf(_PTS - step)) / (2 * h)
        np.testing.assert_allclose(c.hfunc(_PTS, axis), numeric, atol=1e-8)
    # a conditional CDF: 0 and 1 at the ends of the other coordinate, increasing between
    t = np.linspace(0, 1, 41)
    U = np.column_stack([np.full_like(t, 0.3), t])
    h0 = c.hfunc(U, 0)
    assert h0[0] == 0.0 and h0[-1] == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(h0) >= -1e-12)


@pytest.mark.parametrize("family, params", BIVARIATE, ids=IDS)
def test_rectangle_probabilities_of_a_partition_sum_to_one(family, params):
    c = fam.make(family, 2, params)
    lo, hi = _grid_cells(_EDGES, 2)
    mass = np.exp(c.log_ratio(lo, hi)) * np.prod(hi - lo, axis=1)
    assert mass.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(mass > 0)
    # with one coordinate a point, the other's intervals partition the conditional law
    for u in (0.02, 0.5, 0.97):
        lo1, hi1 = lo[:5].copy(), hi[:5].copy()
        lo1[:, 0] = hi1[:, 0] = u
        lo1[:, 1], hi1[:, 1] = _EDGES[:-1], _EDGES[1:]
        cond = np.exp(c.log_ratio(lo1, hi1)) * (hi1[:, 1] - lo1[:, 1])
        assert cond.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("family, params", BIVARIATE, ids=IDS)
def test_points_narrow_intervals_and_densities_agree(family, params):
    c = fam.make(family, 2, params)
    np.testing.assert_array_equal(c.log_ratio(_PTS, _PTS), c.logpdf(_PTS))
    np.testing.assert_array_equal(c.log_ratio(_PTS), c.logpdf(_PTS))
    # narrow intervals: the exact probability is the midpoint density times the width, to
    # second order in the width
    for width, axes, tol in [(4 * NARROW, [1], 1e-6), (1e-3, [0, 1], 1e-4)]:
        lo, hi = _PTS.copy(), _PTS.copy()
        lo[:, axes] -= width / 2
        hi[:, axes] += width / 2
        np.testing.assert_allclose(c.log_ratio(lo, hi), c.logpdf(_PTS), atol=tol)


@pytest.mark.parametrize("base", ["clayton", "gumbel"])
def test_rotations_reflect_coordinates(base):
    c0 = fam.make(base, 2, {"theta": 2.0})
    for rotation, flip in [(90, [0]), (180, [0, 1]), (270, [1])]:
        c = fam.make(f"{base}_rot{rotation}", 2, {"theta": 2.0})
        assert c.rotation == rotation and c.name == f"{base}_rot{rotation}"
        R = _PTS.copy()
        R[:, flip] = 1.0 - R[:, flip]
        np.testing.assert_allclose(c.logpdf(_PTS), c0.logpdf(R), rtol=1e-13)
        draws = c.sample(3000, random_state=1)
        tau = stats.kendalltau(draws[:, 0], draws[:, 1]).statistic
        assert (tau < -0.3) if rotation in (90, 270) else (tau > 0.3)
    # VineCopula's convention: C_90(u, v) = v - C(1 - u, v), C_270(u, v) = u - C(u, 1 - v)
    u, v = _PTS.T
    np.testing.assert_allclose(
        fam.make(f"{base}_rot90", 2, {"theta": 2.0}).cdf(_PTS),
        v - c0.cdf(np.column_stack([1 - u, v])),
        atol=1e-14,
    )
    np.testing.assert_allclose(
        fam.make(f"{base}_rot270", 2, {"theta": 2.0}).cdf(_PTS),
        u - c0.cdf(np.column_stack([u, 1 - v])),
        atol=1e-14,
    )


THREE = [
    ("gaussian", {"corr": np.array([[1, 0.5, 0.3], [0.5, 1, 0.4], [0.3, 0.4, 1.0]])}),
    ("student", {"corr": np.array([[1, 0.5, 0.3], [0.5, 1, 0.4], [0.3, 0.4, 1.0]]), "df": 4.0}),
    ("clayton", {"theta": 2.0}),
    ("gumbel", {"theta": 1.8}),
    ("frank", {"theta": 4.0}),
]


@pytest.mark.parametrize("family, params", THREE, ids=[t[0] for t in THREE])
def test_three_dimensional_interval_likelihood_is_consistent(family, params):
    c = fam.make(family, 3, params)
    edges = np.array([0.0, 0.2, 0.5, 0.8, 1.0])
    # one coordinate a point: the others' cells partition its conditional law
    lo2, hi2 = _grid_cells(edges, 2)
    for u in (0.05, 0.6):
        lo = np.column_stack([np.full(len(lo2), u), lo2])
        hi = np.column_stack([np.full(len(hi2), u), hi2])
        mass = np.exp(c.log_ratio(lo, hi)) * np.prod(hi2 - lo2, axis=1)
        assert mass.sum() == pytest.approx(1.0, abs=1e-12)

    # two coordinates points: integrating over one of them gives the one-point probability
    def one_point(u):
        lo, hi = np.array([[0.3, u, 0.2]]), np.array([[0.3, u, 0.7]])
        return np.exp(c.log_ratio(lo, hi)[0]) * 0.5

    integral, _ = integrate.quad(one_point, 0.1, 0.6, epsabs=1e-13)
    lo, hi = np.array([[0.3, 0.1, 0.2]]), np.array([[0.3, 0.6, 0.7]])
    assert np.exp(c.log_ratio(lo, hi)[0]) * 0.25 == pytest.approx(integral, abs=1e-12)
    if c.supports_intervals(3):  # the Archimedean families: all three intervals
        lo3, hi3 = _grid_cells(edges, 3)
        mass = np.exp(c.log_ratio(lo3, hi3)) * np.prod(hi3 - lo3, axis=1)
        assert mass.sum() == pytest.approx(1.0, abs=1e-12)
        cdf = c.cdf(np.array([[0.4, 0.7, 0.9]]))[0]
        ref, _ = integrate.quad(
            lambda u: c.hfunc(np.array([[u, 0.7, 0.9]]), 0)[0], 0, 0.4, epsabs=1e-13
        )
        assert cdf == pytest.approx(ref, abs=1e-10)


def test_elliptical_families_support_at_most_two_interval_axes_in_higher_dimensions():
    g = fam.make("gaussian", 3, THREE[0][1])
    assert g.supports_intervals(2) and not g.supports_intervals(3)
    assert fam.make("clayton", 3, {"theta": 1.0}).supports_intervals(3)
    assert fam.make("independence", 3).supports_intervals(30)
    with pytest.raises(NotImplementedError, match="more than two"):
        g.cdf(np.array([[0.3, 0.4, 0.5]]))


def test_bivariate_normal_cdf_matches_scipy():
    rng = np.random.default_rng(0)
    h, k = 2 * rng.normal(size=(2, 30))
    h[:3], k[1], k[4] = 0.0, 0.0, 0.0
    for rho in (-0.95, -0.3, 0.0, 0.6, 0.99):
        mvn = stats.multivariate_normal([0, 0], [[1, rho], [rho, 1]])
        ref = np.array([mvn.cdf([a, b]) for a, b in zip(h, k, strict=True)])
        np.testing.assert_allclose(bvn_cdf(h, k, rho), ref, atol=1e-9)
    inf = np.inf
    np.testing.assert_allclose(
        bvn_cdf(np.array([inf, -inf, 0.3, inf]), np.array([0.3, 1.0, inf, inf]), 0.5),
        [stats.norm.cdf(0.3), 0.0, stats.norm.cdf(0.3), 1.0],
        atol=1e-15,
    )


@pytest.mark.parametrize("df", [2.0, 3.7, 10.0, 50.0, 100.0])
def test_bivariate_t_cdf_matches_numerical_integration(df):
    def ref(a, b, rho):
        # P(T1 <= a, T2 <= b) = int_{-inf}^a f(t) P(T2 <= b | T1 = t) dt
        scale = lambda t: np.sqrt((df + t * t) * (1 - rho * rho) / (df + 1))  # noqa: E731
        cond = lambda t: stats.t.cdf((b - rho * t) / scale(t), df + 1)  # noqa: E731
        return integrate.quad(
            lambda t: stats.t.pdf(t, df) * cond(t), -np.inf, a, epsabs=1e-14, epsrel=1e-13
        )[0]

    for rho in (-0.8, 0.5):
        for a, b in [(0.3, -0.7), (2.0, 1.5), (-3.0, -2.0)]:
            got = bvt_cdf(np.array([a]), np.array([b]), rho, df)[0]
            assert got == pytest.approx(ref(a, b, rho), abs=1e-11)
    # orthant probability, and one infinite argument: Student's t
    assert bvt_cdf(np.zeros(1), np.zeros(1), 0.5, df)[0] == pytest.approx(1 / 3, abs=1e-13)
    assert bvt_cdf(np.array([0.7]), np.array([np.inf]), 0.5, df)[0] == stats.t.cdf(0.7, df)


ONE_PARAMETER = [
    ("clayton", (1e-4, 50.0)),
    ("gumbel_rot180", (1.0, 50.0)),
    ("frank", (-50.0, 50.0)),
    ("plackett", (np.exp(-10), np.exp(10))),
]


def _discrete_pseudo_observations(seed=3):
    """A 4-valued and a continuous coordinate drawn from a Gumbel copula."""
    U = fam.sample("gumbel", {"theta": 1.6}, 600, random_state=seed)
    cuts = np.array([0.0, 0.3, 0.55, 0.8, 1.0])
    k = np.searchsorted(cuts, U[:, 0]) - 1
    lo, hi = U.copy(), U.copy()
    lo[:, 0], hi[:, 0] = cuts[k], cuts[k + 1]
    return lo, hi


@pytest.mark.parametrize("family, bounds", ONE_PARAMETER, ids=[f for f, _ in ONE_PARAMETER])
def test_interval_fit_beats_a_dense_grid(family, bounds):
    lo, hi = _discrete_pseudo_observations()
    w = np.random.default_rng(0).uniform(0.5, 1.5, lo.shape[0])
    params, ll = fit_family(family, lo, w, upper=hi)
    lin = family == "frank"
    space = np.linspace(*bounds, 400) if lin else np.geomspace(*bounds, 400)
    grid = [float(w @ fam.make(family, 2, {"theta": t}).log_ratio(lo, hi)) for t in space]
    assert ll >= max(grid) - 1e-6
    assert ll == pytest.approx(float(w @ fam.make(family, 2, params).log_ratio(lo, hi)), abs=1e-9)


def test_interval_fits_of_the_elliptical_families_beat_a_grid():
    lo, hi = _discrete_pseudo_observations(seed=4)
    w = np.ones(lo.shape[0])
    params, ll = fit_family("gaussian", lo, w, upper=hi)
    rhos = np.linspace(-0.99, 0.99, 397)
    grid = [
        w @ fam.make("gaussian", 2, {"corr": equicorrelation(2, r)}).log_ratio(lo, hi) for r in rhos
    ]
    assert ll >= max(grid) - 1e-6
    params, ll = fit_family("student", lo, w, upper=hi)
    best = max(
        w @ fam.make("student", 2, {"corr": equicorrelation(2, r), "df": df}).log_ratio(lo, hi)
        for df in np.geomspace(2, 50, 12)
        for r in np.linspace(0.0, 0.8, 41)
    )
    assert ll >= best - 1e-6


def test_a_one_parameter_fit_on_two_binary_scores_reproduces_the_cell_frequencies():
    # 2 x 2 table with given margins: one dependence parameter saturates it
    p = np.array([[0.35, 0.15], [0.1, 0.4]])  # P(S1 = i, S2 = j)
    a, b = p.sum(1)[0], p.sum(0)[0]  # P(S1 = 0), P(S2 = 0)
    lo = np.array([[0, 0], [0, b], [a, 0], [a, b]], dtype=float)
    hi = np.array([[a, b], [a, 1], [1, b], [1, 1]], dtype=float)
    w = p.ravel() * 1000
    for family in ("frank", "plackett", "gaussian"):
        fitted = fam.make(family, 2).fit(lo, w, upper=hi)
        cells = np.exp(fitted.log_ratio(lo, hi)) * np.prod(hi - lo, axis=1)
        np.testing.assert_allclose(cells, p.ravel(), atol=1e-4)


def test_families_are_registered_classes_with_one_interface():
    for name in fam.KNOWN_FAMILIES:
        cls, rotation = fam.parse(name)
        assert issubclass(cls, Copula) and cls.name_for(rotation) == name
    assert fam.FAMILIES == (
        "independence",
        "gaussian",
        "student",
        "clayton",
        "clayton_rot180",
        "gumbel",
        "gumbel_rot180",
        "frank",
        "plackett",
    )
    assert set(fam.KNOWN_FAMILIES) - set(fam.FAMILIES) == {
        "clayton_rot90",
        "clayton_rot270",
        "gumbel_rot90",
        "gumbel_rot270",
    }
    assert fam.make("clayton_rot180", 2).n_params() == 1
    with pytest.raises(ValueError, match="unknown copula family"):
        fam.make("frank_rot90")
    with pytest.raises(ValueError, match="unknown copula family"):
        fam.make("clayton_rot45")
    with pytest.raises(ValueError, match="bivariate"):
        fam.make("clayton_rot90", 3)
    with pytest.raises(ValueError, match="no parameters yet"):
        fam.make("gumbel", 2).logpdf(_PTS)
    with pytest.raises(ValueError, match="corr must have shape"):
        fam.make("gaussian", 3, {"corr": equicorrelation(2, 0.5)})


@settings(max_examples=25, deadline=None)
@given(
    M=st.integers(2, 3),
    family_index=st.integers(0, len(fam.KNOWN_FAMILIES) - 1),
    t=st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1)),
    seed=st.integers(0, 1000),
)
def test_interval_likelihood_finite_everywhere_within_bounds(M, family_index, t, seed):
    family = fam.KNOWN_FAMILIES[family_index]
    if family in fam.BIVARIATE_ONLY and M > 2:
        return
    cls, _ = fam.parse(family)
    if family in ("gaussian", "student"):
        rho = (2 * t - 1) * 0.999 if M == 2 else 0.999 * t
        params = {
            "corr": equicorrelation(M, rho),
            **({"df": 2 + 48 * t} if family == "student" else {}),
        }
    elif family == "independence":
        params = {}
    else:
        lo, hi = cls(dim=M).theta_bounds()
        params = {"theta": lo + t * (hi - lo)}
    c = fam.make(family, M, params)
    rng = np.random.default_rng(seed)
    n = 60
    a = rng.random((n, M)) ** rng.choice([1, 5, 40], size=(n, M))
    a = np.where(rng.random((n, M)) < 0.5, a, 1 - a)
    b = np.minimum(a + rng.choice([0, 1e-12, 1e-7, 1e-4, 0.05, 0.5], size=(n, M)), 1.0)
    a[rng.random((n, M)) < 0.1] = 0.0
    b[rng.random((n, M)) < 0.1] = 1.0
    if not c.supports_intervals(M):
        b[:, 0] = a[:, 0]  # at most two interval coordinates
    assert np.all(np.isfinite(c.log_ratio(a, b)))
