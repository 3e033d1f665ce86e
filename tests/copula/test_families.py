import numpy as np
import pytest
from copulae import ClaytonCopula, FrankCopula, GaussianCopula, GumbelCopula, StudentCopula
from copulae.elliptical.student import StudentParams
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import stdtrit
from scipy.stats import t as student_t

from fusion.copula import families as fam
from fusion.copula import special

from ._helpers import equicorrelation


def _copulae_logpdf(family, params, U):
    M = U.shape[1]
    if family == "gaussian":
        c = GaussianCopula(dim=M)
        c.params = params["corr"][np.triu_indices(M, 1)]
    elif family == "student":
        c = StudentCopula(dim=M)
        c.params = StudentParams(params["df"], params["corr"][np.triu_indices(M, 1)])
    else:
        cls = {"clayton": ClaytonCopula, "frank": FrankCopula, "gumbel": GumbelCopula}[family]
        c = cls(dim=M)
        c.params = params["theta"]
    return c.pdf(U, log=True)


@pytest.mark.parametrize("M", [2, 3, 4])
@pytest.mark.parametrize(
    "family, params",
    [
        ("gaussian", {"rho": 0.6}),
        ("gaussian", {"rho": -0.3}),
        ("student", {"rho": 0.5, "df": 3.5}),
        ("student", {"rho": 0.2, "df": 30.0}),
        ("clayton", {"theta": 0.05}),
        ("clayton", {"theta": 4.0}),
        ("frank", {"theta": 0.05}),
        ("frank", {"theta": 7.0}),
        ("gumbel", {"theta": 1.0001}),
        ("gumbel", {"theta": 3.0}),
    ],
)
def test_log_density_matches_copulae(family, params, M):
    params = dict(params)
    if "rho" in params:
        if params["rho"] < 0 and M > 2:
            params = {**params, "rho": 0.4}
        params = {"corr": equicorrelation(M, params.pop("rho")), **params}
    U = np.random.default_rng(M).uniform(0.002, 0.998, size=(400, M))
    ours = fam.log_density(family, U, params)
    ref = _copulae_logpdf(family, params, U)
    # copulae's Student quantiles are stdtrit's; ours go through betaincinv (~1e-10 apart)
    np.testing.assert_allclose(ours, ref, rtol=1e-8, atol=1e-8)


def _frank_cdf(u, v, theta):
    return -np.log1p(np.expm1(-theta * u) * np.expm1(-theta * v) / np.expm1(-theta)) / theta


def _clayton_cdf(u, v, theta):
    return (u**-theta + v**-theta - 1.0) ** (-1.0 / theta)


def _gumbel_cdf(u, v, theta):
    return np.exp(-(((-np.log(u)) ** theta + (-np.log(v)) ** theta) ** (1.0 / theta)))


def _mixed_derivative(C, u, v, h=1e-3):
    """Central difference of d^2 C / du dv with one Richardson step (error O(h^4))."""

    def central(k):
        return (C(u + k, v + k) - C(u + k, v - k) - C(u - k, v + k) + C(u - k, v - k)) / (4 * k * k)

    return (4.0 * central(h / 2) - central(h)) / 3.0


def _assert_close_relative(dens, numeric, rtol=2e-4):
    # relative to the density, with an absolute floor for the finite differences' round-off
    assert np.max(np.abs(dens - numeric) / (dens + 1e-6)) < rtol


_POINTS = np.random.default_rng(7).uniform(0.05, 0.95, size=(200, 2))


@pytest.mark.parametrize("theta", [-20.0, -3.0, -0.01, 0.01, 3.0, 20.0])
def test_frank_density_is_mixed_derivative_of_its_cdf(theta):
    u, v = _POINTS.T
    numeric = _mixed_derivative(lambda a, b: _frank_cdf(a, b, theta), u, v)
    dens = np.exp(fam.log_density("frank", _POINTS, {"theta": theta}))
    _assert_close_relative(dens, numeric)


@pytest.mark.parametrize("theta", [np.exp(-9.0), 0.2, 1.0, 3.0, 40.0, 2000.0])
def test_plackett_density_is_mixed_derivative_of_its_cdf(theta):
    u, v = _POINTS.T
    numeric = _mixed_derivative(lambda a, b: fam.plackett_cdf(a, b, theta), u, v)
    dens = np.exp(fam.log_density("plackett", _POINTS, {"theta": theta}))
    _assert_close_relative(dens, numeric)


@pytest.mark.parametrize("theta", [0.05, 0.5, 1.0, 4.0, 50.0])
def test_plackett_cdf_is_a_copula(theta):
    t = np.linspace(0, 1, 11)
    np.testing.assert_allclose(fam.plackett_cdf(t, np.ones_like(t), theta), t, atol=1e-12)
    np.testing.assert_allclose(fam.plackett_cdf(np.ones_like(t), t, theta), t, atol=1e-12)
    np.testing.assert_allclose(fam.plackett_cdf(t, np.zeros_like(t), theta), 0.0, atol=1e-12)


def _integral(family, params, k=600):
    """Midpoint rule on a k x k grid of [0, 1]^2."""
    t = (np.arange(k) + 0.5) / k
    uu, vv = np.meshgrid(t, t)
    U = np.column_stack([uu.ravel(), vv.ravel()])
    return np.exp(fam.log_density(family, U, params)).mean()


@pytest.mark.parametrize("theta", [0.05, 0.5, 1.0, 4.0, 30.0])
def test_plackett_density_integrates_to_one(theta):
    # bounded and smooth: the midpoint rule is accurate to ~1e-8
    assert _integral("plackett", {"theta": theta}) == pytest.approx(1.0, abs=1e-7)


@pytest.mark.parametrize(
    "family, params",
    [
        ("gaussian", {"corr": equicorrelation(2, 0.5)}),
        ("student", {"corr": equicorrelation(2, -0.4), "df": 5.0}),
        ("clayton", {"theta": 1.0}),
        ("clayton_rot180", {"theta": 1.0}),
        ("gumbel", {"theta": 1.5}),
        ("gumbel_rot180", {"theta": 1.5}),
        ("frank", {"theta": -5.0}),
        ("plackett", {"theta": 6.0}),
    ],
)
def test_bivariate_densities_integrate_to_one(family, params):
    # moderate parameters: the midpoint rule handles the corner singularities to ~2e-4
    assert _integral(family, params) == pytest.approx(1.0, abs=5e-4)


@pytest.mark.parametrize(
    "family, cdf, theta",
    [("clayton", _clayton_cdf, 2.5), ("gumbel", _gumbel_cdf, 2.0)],
)
def test_rotated_density_is_mixed_derivative_of_the_survival_copula(family, cdf, theta):
    u, v = _POINTS.T

    def survival(a, b):
        return a + b - 1.0 + cdf(1.0 - a, 1.0 - b, theta)

    numeric = _mixed_derivative(survival, u, v)
    rotated = np.exp(fam.log_density(family + "_rot180", _POINTS, {"theta": theta}))
    _assert_close_relative(rotated, numeric, rtol=1e-6)
    # and it is the reflection u -> 1 - u of the original density
    np.testing.assert_allclose(
        rotated, np.exp(fam.log_density(family, 1.0 - _POINTS, {"theta": theta})), rtol=1e-12
    )


@pytest.mark.parametrize("family, cdf", [("clayton", _clayton_cdf), ("gumbel", _gumbel_cdf)])
def test_unrotated_archimedean_density_is_mixed_derivative_of_cdf(family, cdf):
    u, v = _POINTS.T
    numeric = _mixed_derivative(lambda a, b: cdf(a, b, 2.5), u, v)
    _assert_close_relative(np.exp(fam.log_density(family, _POINTS, {"theta": 2.5})), numeric, 1e-6)


def test_tabulated_student_quantiles_match_stdtrit():
    rng = np.random.default_rng(1)
    u = np.concatenate(
        [
            rng.random(20_000),
            10 ** rng.uniform(-10, -1, 3000),
            1 - 10 ** rng.uniform(-10, -1, 3000),
            [1e-10, 1 - 1e-10, 0.5, 1e-14, 1 - 1e-14, 1e-300],
        ]
    )
    assert u.size > special._TABLE_THRESHOLD  # the interpolated path
    for df in (2.0, 2.7, 9.0, 50.0):
        ref = stdtrit(df, u)
        q = special.student_quantiles(u, df)
        # stdtrit itself is wrong at u = 1e-300 (scipy 1.16: -1e100 for df = 2; 1.17: +inf for
        # df = 2.7): compare where the reference maps back to u, and check the far tail
        # through the CDF instead.
        with np.errstate(invalid="ignore"):
            sane = np.isfinite(ref) & np.isclose(student_t.cdf(ref, df), u, rtol=1e-6, atol=0)
        err = np.abs(q[sane] - ref[sane]) / (1 + np.abs(ref[sane]))
        assert err.max() < 1e-9
        far = u < 1e-12
        np.testing.assert_allclose(student_t.cdf(q[far], df), u[far], rtol=1e-6)
        assert np.all(np.isfinite(q))


def test_student_log_density_same_through_the_table():
    U = np.random.default_rng(2).random((6000, 2))  # 12000 values: tabulated quantiles
    params = {"corr": equicorrelation(2, 0.7), "df": 3.0}
    chunks = [fam.log_density("student", U[a : a + 1000], params) for a in range(0, 6000, 1000)]
    np.testing.assert_allclose(
        fam.log_density("student", U, params), np.concatenate(chunks), rtol=1e-9, atol=1e-9
    )


def test_student_quantile_matches_stdtrit():
    u = np.concatenate(
        [
            [1e-10, 1e-6, 0.1, 0.2499, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 1 - 1e-10],
            np.random.default_rng(0).random(300),
        ]
    )
    for df in (2.0, 3.7, 10.0, 50.0):
        np.testing.assert_allclose(
            special.student_quantile(u, df), stdtrit(df, u), rtol=1e-9, atol=1e-12
        )


def _params_at(family, M, t):
    """Parameters at position t in [0, 1] of the family's bounds (the bounds included)."""
    if family == "gaussian":
        lo, hi = fam.BOUNDS["rho"]
        return {"corr": equicorrelation(M, lo + t * (hi - lo) if M == 2 else t * hi)}
    if family == "student":
        return {
            "corr": equicorrelation(M, 0.999 * (2 * t - 1) if M == 2 else 0.999 * t),
            "df": 2 + 48 * t,
        }
    if family == "independence":
        return {}
    key = family.split("_rot")[0]
    if key == "frank" and M > 2:
        key = "frank_multivariate"
    lo, hi = fam.BOUNDS[key]
    if key in ("frank", "frank_multivariate"):
        return {"theta": lo + t * (hi - lo)}
    return {"theta": float(np.exp(np.log(lo) + t * (np.log(hi) - np.log(lo))))}


@settings(max_examples=60, deadline=None)
@given(
    M=st.integers(2, 4),
    family_index=st.integers(0, len(fam.FAMILIES) - 1),
    t=st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1)),
    seed=st.integers(0, 1000),
)
def test_log_density_finite_everywhere_within_bounds(M, family_index, t, seed):
    family = fam.FAMILIES[family_index]
    if family in fam.BIVARIATE_ONLY and M > 2:
        return
    rng = np.random.default_rng(seed)
    corners = np.array(np.meshgrid(*[[0.0, 1e-300, 0.5, 1.0 - 1e-17, 1.0]] * M)).reshape(M, -1).T
    U = np.vstack([corners, rng.random((50, M)), rng.random((20, M)) ** 40])
    out = fam.log_density(family, U, _params_at(family, M, t))
    assert out.shape == (U.shape[0],)
    assert np.all(np.isfinite(out))


def test_bivariate_family_rejects_more_dimensions():
    with pytest.raises(ValueError, match="bivariate"):
        fam.log_density("plackett", np.full((3, 3), 0.5), {"theta": 2.0})
    with pytest.raises(ValueError, match="unknown copula family"):
        fam.log_density("joe", np.full((3, 2), 0.5), {"theta": 2.0})


def test_families_for_dimension_and_parameter_counts():
    assert fam.families_for_dimension(2) == fam.FAMILIES
    assert set(fam.families_for_dimension(3)) == set(fam.FAMILIES) - fam.BIVARIATE_ONLY
    assert fam.n_params("gaussian", 4) == 6 and fam.n_params("student", 4) == 7
    assert fam.n_params("independence", 3) == 0 and fam.n_params("plackett", 2) == 1
