import json

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

import fusion
from fusion import CopulaFusion
from fusion.copula import families as fam
from fusion.copula.families import sample
from fusion.metrics import binned_ece

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


# -- discrete and tied scores ----------------------------------------------------------------


def _latent_scores(n, seed, kind):
    """Class-conditional bivariate normal latent scores, observed binary or 5-valued."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < PRIOR).astype(int)
    Z = np.empty((n, 2))
    for label, mu, rho in ((0, (0.0, 0.0), 0.5), (1, (1.0, 0.8), 0.3)):
        rows = y == label
        Z[rows] = rng.multivariate_normal(mu, [[1, rho], [rho, 1]], size=int(rows.sum()))
    if kind == "binary":
        return (Z > 0.5).astype(float), y
    return np.column_stack([np.searchsorted([-0.6, 0.0, 0.5, 1.1], Z[:, 0]), Z[:, 1]]), y


def _five_valued_truth(S):
    """Exact P(y = 1 | s) for the 5-valued + continuous simulation."""
    edges = np.r_[-np.inf, -0.6, 0.0, 0.5, 1.1, np.inf]
    k = S[:, 0].astype(int)
    log_joint = []
    for label, mu, rho in ((0, (0.0, 0.0), 0.5), (1, (1.0, 0.8), 0.3)):
        z2 = S[:, 1] - mu[1]
        m, sd = mu[0] + rho * z2, np.sqrt(1 - rho * rho)
        cell = stats.norm.cdf((edges[k + 1] - m) / sd) - stats.norm.cdf((edges[k] - m) / sd)
        log_joint.append(
            np.log(PRIOR if label else 1 - PRIOR) + stats.norm.logpdf(z2) + np.log(cell)
        )
    return 1.0 / (1.0 + np.exp(log_joint[0] - log_joint[1]))


def test_two_binary_scorers_give_the_cell_frequencies():
    # Four cells, and per class two margins plus one dependence parameter: the model is
    # saturated, so the fused probability of each cell is its training frequency of
    # positives. Continuous KDE marginals gave ECE 29 % here (copula parameters at their
    # bounds on four piles of tied pseudo-observations).
    S, y = _latent_scores(2000, 0, "binary")
    model = CopulaFusion().fit(S, y)
    assert model.atom_column_.tolist() == [0, 0, 1, 1]
    cells = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)
    freq = [y[(S == c).all(axis=1)].mean() for c in cells]
    np.testing.assert_allclose(model.predict_proba(cells)[:, 1], freq, atol=2e-3)
    S_test, y_test = _latent_scores(20_000, 1, "binary")
    assert binned_ece(y_test, model.predict_proba(S_test)[:, 1]) < 0.05


def test_five_valued_and_continuous_scorers_are_calibrated():
    S, y = _latent_scores(2000, 2, "five")
    model = CopulaFusion().fit(S, y)
    assert set(model.atom_column_.tolist()) == {0} and model.atom_value_.shape == (5,)
    S_test, y_test = _latent_scores(20_000, 3, "five")
    p = model.predict_proba(S_test)[:, 1]
    exact = _five_valued_truth(S_test)
    lr = LogisticRegression().fit(S, y).predict_proba(S_test)[:, 1]
    assert np.mean(np.abs(p - exact)) < min(0.035, np.mean(np.abs(lr - exact)))
    assert binned_ece(y_test, p) < 0.025


def test_three_binary_scorers_leave_out_the_elliptical_families():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 1500)
    Z = rng.multivariate_normal(np.zeros(3), 0.4 + 0.6 * np.eye(3), size=1500) + y[:, None]
    S = (Z > 0.5).astype(float)
    with pytest.warns(UserWarning, match=r"\['gaussian', 'student'\]"):
        model = CopulaFusion().fit(S, y)
    assert "gaussian" not in model.copula_loglik_[0]
    # the exact posterior of each of the 8 cells: the latent scores are equicorrelated
    # normals, independent given a common factor (Gauss-Hermite over it)
    cells = np.array(np.meshgrid([0, 1], [0, 1], [0, 1])).reshape(3, -1).T.astype(float)
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    weights = weights / weights.sum()

    def cell_prob(mean):
        t = (0.5 - mean - np.sqrt(0.4) * nodes[:, None]) / np.sqrt(0.6)
        up = stats.norm.sf(t)
        return np.array([weights @ np.prod(np.where(c == 1, up, 1 - up), axis=1) for c in cells])

    prior = y.mean()
    exact = prior * cell_prob(1.0) / (prior * cell_prob(1.0) + (1 - prior) * cell_prob(0.0))
    # 8 cells, 7 free probabilities per class, 3 + 1 parameters: close, not saturated
    err = np.abs(model.predict_proba(cells)[:, 1] - exact)
    lr = LogisticRegression().fit(S, y).predict_proba(cells)[:, 1]
    assert err.max() < 0.08 and err.mean() < np.abs(lr - exact).mean() + 0.015


def test_unseen_values_of_a_discrete_score_get_the_continuous_extension():
    S, y = _latent_scores(1000, 5, "binary")
    model = CopulaFusion().fit(S, y)
    p = model.predict_proba(np.array([[0.5, 0.0], [0.5, 1.0], [-3.0, 7.0]]))[:, 1]
    assert np.all(np.isfinite(p)) and np.all((p > 0) & (p < 1))


def test_rotated_by_90_degrees_fits_negative_lower_upper_dependence():
    U = sample("clayton_rot90", {"theta": 3.0}, 1500, random_state=6)
    y = np.r_[np.zeros(750, int), np.ones(750, int)]
    S = stats.norm.ppf(U) + y[:, None]
    model = CopulaFusion(families=["clayton", "clayton_rot90", "clayton_rot270"]).fit(S, y)
    assert model.copula_families_ == {0: "clayton_rot90", 1: "clayton_rot90"}


# -- weights, random_state, progress ---------------------------------------------------------


@pytest.mark.parametrize("kind", ["continuous", "binary", "five", "three"])
def test_predictions_do_not_change_when_all_weights_are_scaled(kind):
    rng = np.random.default_rng(7)
    if kind == "continuous":
        S, y = draw(GAUSSIAN_MARGINS, 500, seed=7)
    elif kind == "three":
        y = rng.integers(0, 2, 500)
        S = rng.normal(size=(500, 3)) + y[:, None] + rng.normal(size=(500, 1))
    else:
        S, y = _latent_scores(500, 7, kind)
    w = rng.exponential(size=y.shape[0])
    reference = CopulaFusion().fit(S, y, sample_weight=w).predict_proba(S)
    for scaled in (3.7 * w, w / y.shape[0], 1e-9 * w, 1e9 * w):
        got = CopulaFusion().fit(S, y, sample_weight=scaled).predict_proba(S)
        np.testing.assert_allclose(got, reference, rtol=0, atol=1e-10)
    # equal weights of any size are no weights
    plain = CopulaFusion().fit(S, y).predict_proba(S)
    np.testing.assert_allclose(
        CopulaFusion().fit(S, y, sample_weight=np.full(y.shape[0], 0.01)).predict_proba(S),
        plain,
        rtol=0,
        atol=1e-10,
    )


def test_random_state_is_accepted_and_changes_nothing():
    S, y = draw(SKEWED, 400, seed=8)
    p = CopulaFusion().fit(S, y).predict_proba(S)
    for rs in (0, 123, np.random.RandomState(1)):
        np.testing.assert_array_equal(CopulaFusion(random_state=rs).fit(S, y).predict_proba(S), p)


def test_verbose_reports_every_copula_fit(capsys):
    S, y = draw(SKEWED, 300, seed=9)
    CopulaFusion(families=["gaussian", "frank"], verbose=True).fit(S, y)
    err = capsys.readouterr().err
    assert "CopulaFusion" in err and "6/6" in err  # (independence + 2 families) x 2 classes
    CopulaFusion(families=["gaussian", "frank"]).fit(S, y)
    assert capsys.readouterr().err == ""


def test_a_fit_estimated_to_take_long_warns_once_with_the_estimate(monkeypatch):
    import fusion._progress
    from fusion.copula import estimator

    S, y = draw(SKEWED, 300, seed=10)
    monkeypatch.setattr(fusion._progress, "SLOW_SECONDS", 0.0)
    with pytest.warns(UserWarning, match="estimated to take about") as record:
        CopulaFusion().fit(S, y)
    assert len([r for r in record if "estimated" in str(r.message)]) == 1
    # the estimate grows with n and M, and with the weighted Kendall's tau
    est = estimator.estimated_fit_seconds
    fams = fam.families_for_dimension(8)
    assert est(10_000, 8, fams, False) > est(1_000, 8, fams, False) > est(1_000, 2, fams, False)
    assert est(100_000, 8, fams, True) > 2 * est(100_000, 8, fams, False)
    assert est(10**6, 8, fams, False) > estimator.LONG_FIT_SECONDS


def test_save_and_load_with_atoms(tmp_path):
    S, y = _latent_scores(600, 11, "five")
    model = CopulaFusion().fit(S, y)
    path = tmp_path / "copula.fusion"
    model.save(path)
    loaded = fusion.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(S), model.predict_proba(S))
    np.testing.assert_array_equal(loaded.atom_interval_, model.atom_interval_)
