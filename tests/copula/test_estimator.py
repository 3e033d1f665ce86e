import json

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone

import fusion
from fusion import CopulaFusion
from fusion.copula import families as fam
from fusion.copula.families import sample

# Two known class-conditional distributions: copula + marginals in score space.
SKEWED = {
    1: ("clayton", {"theta": 3.0}, [stats.beta(3, 1.5), stats.beta(2.5, 1)]),
    0: ("gumbel_rot180", {"theta": 1.8}, [stats.beta(1.5, 3), stats.beta(1.2, 2)]),
}
GAUSSIAN_MARGINS = {
    1: ("gumbel", {"theta": 2.0}, [stats.norm(1, 1), stats.norm(0.8, 1.2)]),
    0: ("frank", {"theta": -4.0}, [stats.norm(0, 1), stats.norm(0, 1)]),
}
PRIOR = 0.4


def draw(truth, n, seed):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < PRIOR).astype(int)
    S = np.empty((n, 2))
    for label, (family, params, margins) in truth.items():
        rows = y == label
        U = sample(family, params, int(rows.sum()), random_state=rng)
        for m, dist in enumerate(margins):
            S[rows, m] = dist.ppf(U[:, m])
    return S, y


def bayes_posterior(truth, S):
    """The exact P(y = 1 | s) from the true densities."""
    log_joint = []
    for label in (0, 1):
        family, params, margins = truth[label]
        U = np.column_stack([d.cdf(S[:, m]) for m, d in enumerate(margins)])
        lp = np.log(PRIOR if label else 1 - PRIOR) + fam.log_density(family, U, params)
        log_joint.append(lp + sum(d.logpdf(S[:, m]) for m, d in enumerate(margins)))
    return 1.0 / (1.0 + np.exp(log_joint[0] - log_joint[1]))


@pytest.fixture(scope="module")
def skewed_fit():
    S, y = draw(SKEWED, 3000, seed=0)
    return CopulaFusion().fit(S, y), S, y


@pytest.mark.parametrize("truth", [SKEWED, GAUSSIAN_MARGINS], ids=["beta", "normal"])
def test_true_families_selected_and_posterior_close_to_bayes(truth):
    S, y = draw(truth, 3000, seed=1)
    model = CopulaFusion().fit(S, y)
    assert model.copula_families_ == {0: truth[0][0], 1: truth[1][0]}
    S_test, _ = draw(truth, 20_000, seed=2)
    exact = bayes_posterior(truth, S_test)
    p = model.predict_proba(S_test)[:, 1]
    assert np.mean(np.abs(p - exact)) < 0.025
    assert np.sqrt(np.mean((p - exact) ** 2)) < 0.035
    # ignoring the dependence (naive Bayes with the same marginals) is clearly worse
    naive = CopulaFusion(families="independence").fit(S, y).predict_proba(S_test)[:, 1]
    assert np.mean(np.abs(naive - exact)) > 2 * np.mean(np.abs(p - exact))


def test_prior_and_marginal_grids(skewed_fit):
    model, S, y = skewed_fit
    np.testing.assert_allclose(model.class_prior_, [np.mean(y == 0), np.mean(y == 1)])
    G = model.marginal_cdf_.shape[2]
    assert model.marginal_log_pdf_.shape == model.marginal_cdf_.shape == (2, 2, G)
    assert model.bandwidths_.shape == (2, 2) and np.all(model.bandwidths_ > 0)
    np.testing.assert_array_equal(model.marginal_cdf_[:, :, [0, -1]], [[[0, 1]] * 2] * 2)
    # positives score higher: their normalized-score CDF lies below the negatives'
    assert np.all(model.marginal_cdf_[1, :, G // 2] < model.marginal_cdf_[0, :, G // 2])


def test_fitted_copula_attributes_are_consistent_plain_data(skewed_fit):
    model, _, _ = skewed_fit
    for key in (0, 1):
        assert type(key) is int
        best = model.copula_families_[key]
        logliks = model.copula_loglik_[key]
        assert set(logliks) == set(fam.FAMILIES)
        assert best == max(logliks, key=logliks.get)
        assert model.copula_params_[key] == model.copula_candidate_params_[key][best]
    blob = json.dumps(
        {
            "families": model.copula_families_,
            "params": model.copula_candidate_params_,
            "loglik": model.copula_loglik_,
        },
        default=lambda a: a.tolist(),
    )
    assert "clayton" in blob


def test_aic_selection_matches_the_stored_log_likelihoods():
    S, y = draw(GAUSSIAN_MARGINS, 1500, seed=3)
    model = CopulaFusion(selection="aic").fit(S, y)
    for key, logliks in model.copula_loglik_.items():
        aic = {f: 2 * fam.n_params(f, 2) - 2 * ll for f, ll in logliks.items()}
        assert model.copula_families_[key] == min(aic, key=aic.get)


def test_string_labels_become_plain_string_keys():
    S, y = draw(SKEWED, 600, seed=4)
    labels = np.where(y == 1, "spam", "ham")
    model = CopulaFusion(families=["gaussian", "clayton"]).fit(S, labels)
    assert set(model.copula_families_) == {"ham", "spam"}
    assert all(type(k) is str for k in model.copula_loglik_)
    assert set(model.copula_loglik_["spam"]) == {"independence", "gaussian", "clayton"}


def test_no_nan_or_inf_anywhere_even_beyond_the_training_range(skewed_fit):
    model, S, _ = skewed_fit
    extremes = np.array([[-1e300, -1e300], [1e300, 1e300], [-1e300, 1e300], [1e300, -1e300]])
    P = model.predict_proba(np.vstack([extremes, S.min(0) - 5, S.max(0) + 5]))
    assert np.all(np.isfinite(P)) and np.all((P >= 0) & (P <= 1))
    t = np.linspace(0, 1, 41)
    grid = np.array(np.meshgrid(t, t)).reshape(2, -1).T
    assert np.all(np.isfinite(model.calibrating_function(grid)))


@pytest.mark.parametrize("family", fam.FAMILIES)
def test_every_family_is_finite_at_the_corners_with_extreme_dependence(family):
    # two nearly identical scores per class: correlations and thetas run to their bounds
    rng = np.random.default_rng(5)
    y = np.r_[np.zeros(150, int), np.ones(150, int)]
    z = rng.normal(size=300) + 2 * y
    S = np.column_stack([z, z + 1e-7 * rng.normal(size=300)])
    model = CopulaFusion(families=family).fit(S, y)
    corners = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [0.5, 0.0], [1e-12, 1 - 1e-12]])
    assert np.all(np.isfinite(model.calibrating_function(corners)))
    assert np.all(np.isfinite(model.predict_proba(np.array([[-50.0, 50.0], [50.0, -50.0]]))))


def test_three_scores():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 1500)
    R = np.array([[1, 0.5, 0.3], [0.5, 1, 0.4], [0.3, 0.4, 1.0]])
    S = rng.multivariate_normal(np.zeros(3), R, size=1500) + y[:, None]
    model = fusion.fit(S, y, method="copula")
    assert set(model.copula_loglik_[0]) == set(fam.families_for_dimension(3))
    for key in (0, 1):
        # a Student-t with many degrees of freedom is the Gaussian's near twin
        family, params = model.copula_families_[key], model.copula_params_[key]
        assert family == "gaussian" or (family == "student" and params["df"] > 15)
        # within a class the scores are Gaussian: their Pearson correlation is efficient
        np.testing.assert_allclose(params["corr"], np.corrcoef(S[y == key].T), atol=0.02)
    p = model.predict_proba(np.vstack([S[:5], [[1e9, -1e9, 0.0]]]))[:, 1]
    assert np.all(np.isfinite(p))
    # the exact posterior is logistic in the scores here (equal covariances)
    exact = 1 / (1 + np.exp(-(S - 0.5) @ np.linalg.solve(R, np.ones(3))))
    assert np.mean(np.abs(model.predict_proba(S)[:, 1] - exact)) < 0.04


def test_one_score_is_kde_bayes():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 2000)
    s = rng.normal(size=2000) + 1.5 * y
    model = CopulaFusion().fit(s, y)
    assert model.copula_families_ == {0: "independence", 1: "independence"}
    t = np.linspace(-1, 2.5, 50)
    pi1 = np.mean(y)
    exact = (
        pi1
        * stats.norm.pdf(t, 1.5)
        / (pi1 * stats.norm.pdf(t, 1.5) + (1 - pi1) * stats.norm.pdf(t))
    )
    err = np.abs(model.predict_proba(t)[:, 1] - exact)
    assert np.mean(err) < 0.03 and np.max(err) < 0.1
    with pytest.raises(ValueError, match="only copula is independence"):
        CopulaFusion(families=["gumbel"]).fit(s, y)


def test_registered_and_exported():
    assert fusion.METHODS["copula"] is CopulaFusion
    assert fusion.CopulaFusion is CopulaFusion and "CopulaFusion" in fusion.__all__
    S, y = draw(SKEWED, 300, seed=8)
    model = fusion.fit(S, y, method="copula", bandwidth=0.05, selection="aic")
    assert isinstance(model, CopulaFusion)
    np.testing.assert_array_equal(model.bandwidths_, 0.05)


def test_bandwidth_options():
    S, y = draw(SKEWED, 500, seed=9)
    h = {b: CopulaFusion(bandwidth=b).fit(S, y).bandwidths_ for b in ("silverman", "scott", "cv")}
    np.testing.assert_allclose(h["scott"], h["silverman"] * 1.059 / 0.9)
    assert np.all((h["cv"] > 0.005) & (h["cv"] < 0.3))


def _fit_on_normalized(U, y, w, **params):
    """Fit the method's own step on given normalized scores (bypassing the row-counting ECDF)."""
    model = CopulaFusion(**params)
    model.classes_ = np.array([0, 1])
    model._fit_normalized(U, y.astype(float), w.astype(float))
    return model


def test_sample_weight_equals_repeated_rows_with_a_fixed_bandwidth():
    rng = np.random.default_rng(10)
    S, y = draw(GAUSSIAN_MARGINS, 400, seed=10)
    U = fusion.ECDFNormalizer().fit(S).transform(S)
    k = rng.integers(1, 4, 400)
    kw = {"bandwidth": 0.06, "families": ["gaussian", "gumbel", "frank"]}
    a = _fit_on_normalized(U, y, k, **kw)
    b = _fit_on_normalized(np.repeat(U, k, axis=0), np.repeat(y, k), np.ones(k.sum()), **kw)
    assert a.copula_families_ == b.copula_families_
    np.testing.assert_allclose(a.class_prior_, b.class_prior_)
    np.testing.assert_allclose(a.marginal_cdf_, b.marginal_cdf_, atol=1e-12)
    grid = rng.random((200, 2))
    np.testing.assert_allclose(a._calibrate(grid), b._calibrate(grid), atol=1e-6)
    # rows of zero weight change nothing
    c = _fit_on_normalized(
        np.vstack([U, rng.random((30, 2))]),
        np.r_[y, np.ones(30, int)],
        np.r_[k, np.zeros(30)],
        **kw,
    )
    np.testing.assert_allclose(c._calibrate(grid), a._calibrate(grid), atol=1e-12)
    # and through the public API weights are honoured (the ECDF still counts rows)
    w = np.where(y == 1, 3.0, 1.0)
    weighted = CopulaFusion(**kw).fit(S, y, sample_weight=w)
    assert weighted.class_prior_[1] == pytest.approx(3 * y.sum() / (3 * y.sum() + (y == 0).sum()))


def test_invariant_to_increasing_transforms_of_the_scores():
    S, y = draw(GAUSSIAN_MARGINS, 800, seed=13)
    T = np.column_stack([np.exp(S[:, 0]), S[:, 1] ** 3 + S[:, 1]])
    a, b = CopulaFusion().fit(S, y), CopulaFusion().fit(T, y)
    assert a.copula_families_ == b.copula_families_
    np.testing.assert_allclose(a.predict_proba(S), b.predict_proba(T), atol=1e-12)


def test_parameters_are_validated():
    S, y = draw(SKEWED, 200, seed=14)
    with pytest.raises(ValueError, match="selection"):
        CopulaFusion(selection="bic").fit(S, y)
    with pytest.raises(ValueError, match="bandwidth"):
        CopulaFusion(bandwidth=0.0).fit(S, y)
    with pytest.raises(ValueError, match="unknown copula families"):
        CopulaFusion(families=["gaussian", "joe"]).fit(S, y)
    with pytest.raises(ValueError, match="families is empty"):
        CopulaFusion(families=[]).fit(S, y)
    S3 = np.column_stack([S, S[:, 0] + S[:, 1]])
    with pytest.raises(ValueError, match="bivariate"):
        CopulaFusion(families=["plackett", "gaussian"]).fit(S3, y)


def test_a_class_with_a_single_row_is_rejected():
    S, _ = draw(SKEWED, 50, seed=15)
    y = np.r_[np.zeros(49, int), 1]
    with pytest.raises(ValueError, match="at least 2 rows"):
        CopulaFusion().fit(S, y)


def test_clone_keeps_parameters():
    model = CopulaFusion(families=["frank"], selection="aic", bandwidth=0.1)
    assert clone(model).get_params() == model.get_params()
