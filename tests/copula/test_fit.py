import numpy as np
import pytest
from scipy import stats

from fusion.copula import elliptical, special
from fusion.copula import families as fam
from fusion.copula.dependence import kendall_tau, normal_scores_correlation, tau_correlation
from fusion.copula.families import sample
from fusion.copula.fit import fit_copula, fit_family, select_family

from ._helpers import equicorrelation

TRUTHS = [
    ("gaussian", {"corr": equicorrelation(2, 0.8)}),
    ("student", {"corr": equicorrelation(2, 0.6), "df": 3.0}),
    ("clayton", {"theta": 3.0}),
    ("clayton_rot180", {"theta": 3.0}),
    ("gumbel", {"theta": 2.5}),
    ("gumbel_rot180", {"theta": 2.5}),
    ("frank", {"theta": -8.0}),
    ("plackett", {"theta": 20.0}),
]


@pytest.mark.parametrize("family, params", TRUTHS, ids=[t[0] for t in TRUTHS])
def test_true_family_is_selected_and_its_parameters_recovered(family, params):
    U = sample(family, params, 3000, random_state=10)
    best, fitted, logliks = fit_copula(U, np.ones(3000), fam.FAMILIES)
    assert best == family
    assert set(logliks) == set(fam.FAMILIES) and logliks["independence"] == 0.0
    got = fitted[family]
    if "theta" in params:
        assert got["theta"] == pytest.approx(params["theta"], rel=0.12)
    else:
        assert got["corr"][0, 1] == pytest.approx(params["corr"][0, 1], abs=0.03)
    if "df" in params:
        assert 2.0 <= got["df"] < 5.0


@pytest.mark.parametrize(
    "family, lo, hi, scale",
    [
        ("clayton", 1e-4, 50.0, "log"),
        ("gumbel_rot180", 1.0, 50.0, "log"),
        ("frank", -50.0, 50.0, "lin"),
        ("plackett", np.exp(-10), np.exp(10), "log"),
    ],
)
def test_one_parameter_fit_beats_a_dense_grid(family, lo, hi, scale):
    U = sample("gumbel", {"theta": 1.7}, 800, random_state=4)
    w = np.random.default_rng(0).uniform(0.5, 1.5, 800)
    params, ll = fit_family(family, U, w)
    space = np.geomspace(lo, hi, 2000) if scale == "log" else np.linspace(lo, hi, 2000)
    grid_best = max(float(w @ fam.log_density(family, U, {"theta": t})) for t in space)
    assert ll >= grid_best - 1e-6
    assert ll == pytest.approx(float(w @ fam.log_density(family, U, params)), abs=1e-9)


def test_bivariate_gaussian_and_student_fits_beat_a_dense_grid():
    U = sample("student", {"corr": equicorrelation(2, -0.4), "df": 6.0}, 800, random_state=5)
    w = np.ones(800)
    params, ll = fit_family("gaussian", U, w)
    rhos = np.linspace(-0.999, 0.999, 2001)
    grid = [
        float(w @ fam.log_density("gaussian", U, {"corr": equicorrelation(2, r)})) for r in rhos
    ]
    assert ll >= max(grid) - 1e-6
    params, ll = fit_family("student", U, w)
    best = -np.inf
    for df in np.geomspace(2, 50, 40):
        X = special.student_quantile(fam.clip_unit(U), df)
        for r in np.linspace(-0.7, -0.1, 61):
            L = np.linalg.cholesky(equicorrelation(2, r))
            best = max(best, float(w @ elliptical._student_logpdf_from_quantiles(X, L, df)))
    assert ll >= best - 1e-6
    assert ll == pytest.approx(float(w @ fam.log_density("student", U, params)), abs=1e-9)


def test_integer_weights_equal_repeated_rows():
    U = sample("clayton", {"theta": 1.5}, 300, random_state=6)
    k = np.random.default_rng(1).integers(1, 4, 300)
    for family in ("gaussian", "student", "clayton", "frank", "plackett"):
        p_w, ll_w = fit_family(family, U, k.astype(float))
        p_r, ll_r = fit_family(family, np.repeat(U, k, axis=0), np.ones(k.sum()))
        assert ll_w == pytest.approx(ll_r, rel=1e-9)
        for key in p_w:
            np.testing.assert_allclose(p_w[key], p_r[key], rtol=1e-6)


def test_zero_weight_rows_are_ignored():
    U = sample("gumbel", {"theta": 2.0}, 400, random_state=7)
    noise = np.random.default_rng(2).random((100, 2))
    w = np.r_[np.ones(400), np.zeros(100)]
    a = fit_copula(U, np.ones(400), fam.FAMILIES)
    b = fit_copula(np.vstack([U, noise]), w, fam.FAMILIES)
    assert a[0] == b[0] and a[2] == pytest.approx(b[2])


def test_aic_mostly_prefers_independence_for_independent_scores():
    aic, loglik = [], []
    for seed in range(12):
        U = sample("independence", {}, 500, random_state=seed)
        best, _, logliks = fit_copula(U, np.ones(500), fam.FAMILIES, selection="aic")
        aic.append(best)
        loglik.append(select_family(logliks, 2, "loglik"))
        assert max(logliks.values()) < 5.0
    # each one-parameter family beats AIC's penalty with probability ~0.08 under independence;
    # with eight candidates AIC still keeps independence about three times in four
    assert aic.count("independence") >= 6
    # the likelihood criterion always finds some family with a small positive gain
    assert loglik.count("independence") <= 1


def test_select_family_rules():
    ll = {"independence": 0.0, "gaussian": 1.5, "student": 2.0, "clayton": -np.inf}
    assert select_family(ll, 2, "loglik") == "student"
    # AIC: gaussian 2 - 3 = -1, student 4 - 4 = 0, independence 0
    assert select_family(ll, 2, "aic") == "gaussian"
    assert select_family({"independence": 0.0, "frank": 0.0}, 2) == "independence"
    assert select_family({"independence": 0.0, "frank": np.nan}, 2) == "independence"
    with pytest.raises(ValueError, match="selection"):
        select_family(ll, 2, "bic")


def test_weighted_kendall_tau_equals_scipy_on_repeated_rows():
    rng = np.random.default_rng(3)
    x = np.round(rng.random(200), 2)  # ties
    y = np.round(x + 0.3 * rng.random(200), 2)
    k = rng.integers(1, 4, 200)
    ref = stats.kendalltau(np.repeat(x, k), np.repeat(y, k)).statistic
    assert kendall_tau(x, y, k.astype(float), chunk=37) == pytest.approx(ref, abs=1e-12)
    assert kendall_tau(x, y, np.ones(200)) == pytest.approx(stats.kendalltau(x, y).statistic)


def test_multivariate_correlation_estimators_recover_the_truth():
    R = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, -0.2], [0.3, -0.2, 1.0]])
    U = sample("gaussian", {"corr": R}, 4000, random_state=9)
    np.testing.assert_allclose(normal_scores_correlation(U, np.ones(4000)), R, atol=0.04)
    T = sample("student", {"corr": R, "df": 4.0}, 4000, random_state=9)
    np.testing.assert_allclose(tau_correlation(T, np.ones(4000)), R, atol=0.04)
    params, _ = fit_family("student", T, np.ones(4000))
    assert 3.0 < params["df"] < 6.0


@pytest.mark.parametrize(
    "family, params",
    [
        ("clayton", {"theta": 2.0}),
        ("gumbel", {"theta": 2.0}),
        ("frank", {"theta": 6.0}),
        ("student", {"corr": equicorrelation(3, 0.5), "df": 3.0}),
    ],
)
def test_three_scores_select_the_true_family(family, params):
    U = sample(family, params, 2000, M=3, random_state=11)
    best, fitted, logliks = fit_copula(U, np.ones(2000), fam.families_for_dimension(3))
    assert best == family
    assert not set(logliks) & fam.BIVARIATE_ONLY
    if "theta" in params:
        assert fitted[family]["theta"] == pytest.approx(params["theta"], rel=0.12)


def test_bivariate_family_rejected_for_three_scores():
    with pytest.raises(ValueError, match="bivariate"):
        fit_family("gumbel_rot180", np.full((5, 3), 0.5), np.ones(5))


def test_near_perfect_dependence_stays_finite_at_the_bounds():
    t = np.random.default_rng(12).random(500)
    U = np.column_stack([t, np.clip(t + 1e-6, 0, 1)])
    best, fitted, logliks = fit_copula(U, np.ones(500), fam.FAMILIES)
    assert all(np.isfinite(v) for v in logliks.values())
    assert best != "independence"
