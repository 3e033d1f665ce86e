"""Tests of fusion/mrmic/estimator.py: MRMICFusion end to end."""

import sys
import warnings

import numpy as np
import pytest
from scipy.special import expit

import fusion
from fusion import MRMICFusion
from fusion.mrmic import DEFAULT_RELATIVE_LAM_GRID


def simulate(n, seed, M=2):
    """Two noisy views of a latent z; P(Y = 1 | S) is monotone in S (known truth)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    S = z[:, None] + rng.normal(size=(n, M))
    y = (rng.uniform(size=n) < expit(2 * z)).astype(int)
    return S, y


def test_fit_predict_shapes_and_attributes():
    S, y = simulate(200, 0)
    model = MRMICFusion(lam=1e-3).fit(S, y)
    g = model.train_scores_.shape[0]
    assert model.train_scores_.shape == (g, 2) and model.train_proba_.shape == (g,)
    assert model.lam_ == 1e-3 and model.interpolation_ == "linear"
    assert model.solver_status_ == "solved" and model.n_edges_ > 0
    assert not hasattr(model, "cv_scores_")
    proba = model.predict_proba(S)
    assert proba.shape == (200, 2) and np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_registered_and_exported():
    assert fusion.METHODS["mrmic"] is MRMICFusion and "MRMICFusion" in fusion.__all__
    S, y = simulate(100, 1)
    model = fusion.fit(S, y, method="mrmic", lam=1e-4, interpolation="monotone")
    assert isinstance(model, MRMICFusion) and model.interpolation_ == "monotone"


@pytest.mark.parametrize("interpolation", ["linear", "monotone"])
def test_calibrating_function_reproduces_fitted_values(interpolation):
    S, y = simulate(150, 2)
    model = MRMICFusion(lam=1e-3, interpolation=interpolation).fit(S, y)
    np.testing.assert_allclose(
        model.calibrating_function(model.train_scores_), model.train_proba_, atol=1e-12
    )


@pytest.mark.parametrize("graph", ["dense", "knn"])
def test_fitted_values_monotone_on_every_pair(graph):
    S, y = simulate(250, 3)
    S = np.round(S, 1)  # ties and duplicates
    model = MRMICFusion(lam=1e-3, graph=graph, n_neighbors=5).fit(S, y)
    P, p = model.train_scores_, model.train_proba_
    hi, lo = np.nonzero(np.all(P[:, None] >= P[None], axis=2))
    assert np.all(p[hi] >= p[lo])


def test_monotone_interpolation_is_monotone_in_raw_scores():
    S, y = simulate(200, 4)
    model = MRMICFusion(lam=1e-3, interpolation="monotone").fit(S, y)
    t = np.linspace(-4, 4, 80)
    a, b = np.meshgrid(t, t, indexing="ij")
    f = model.predict_proba(np.column_stack([a.ravel(), b.ravel()]))[:, 1].reshape(a.shape)
    assert np.all(np.diff(f, axis=0) >= 0) and np.all(np.diff(f, axis=1) >= 0)


def test_integer_weights_equal_repeated_rows_with_lam_times_mean_weight():
    # Weights are rescaled to mean 1, so weight 2 on every row is repetition with lam * 2.
    S, y = simulate(120, 5)
    weighted = MRMICFusion(lam=2e-3).fit(S, y, sample_weight=np.full(120, 2.0))
    repeated = MRMICFusion(lam=4e-3).fit(np.vstack([S, S]), np.concatenate([y, y]))
    np.testing.assert_array_equal(weighted.train_scores_, repeated.train_scores_)
    np.testing.assert_allclose(weighted.train_proba_, repeated.train_proba_, atol=1e-6)


@pytest.mark.parametrize("params", [{"lam": 1e-3}, {"cv": 3}])
@pytest.mark.parametrize("factor", [1e-6, 3.0, 1e6])
def test_scaling_weights_changes_nothing(params, factor):
    S, y = simulate(120, 6)
    w = np.random.default_rng(6).uniform(0.5, 2.0, size=120)
    a = MRMICFusion(**params).fit(S, y, sample_weight=w)
    b = MRMICFusion(**params).fit(S, y, sample_weight=factor * w)
    assert a.lam_ == pytest.approx(b.lam_, rel=1e-9)
    np.testing.assert_allclose(a.train_weights_, b.train_weights_, rtol=1e-12)
    np.testing.assert_allclose(a.train_proba_, b.train_proba_, atol=1e-7)
    np.testing.assert_allclose(a.predict_proba(S), b.predict_proba(S), atol=1e-7)


def test_one_overwhelming_weight_fits_its_label():
    # Weight 1e20 on one row: the fit is that row's label everywhere. A CV fold without the
    # row used to get a lam 1e18 times too strong for its weights and OSQP stalled.
    S, y = simulate(120, 18)
    w = np.ones(120)
    w[3] = 1e20
    model = MRMICFusion(cv=3).fit(S, y, sample_weight=w)
    assert model.solver_status_ == "solved"
    np.testing.assert_allclose(model.predict_proba(S)[:, 1], y[3], atol=1e-4)


def _fit_normalized(U, y, w, **params):
    """A fit on points of the unit square (the base drops zero-weight rows before the ECDF
    and maps user index pairs onto the kept rows)."""
    return MRMICFusion(**params).fit(U, y, sample_weight=w)


@pytest.mark.parametrize(
    "params",
    [{"lam": 1e-3}, {"cv": 3}, {"cv": "pairs"}, {"lam": 1e-3, "max_points": 40}],
    ids=["fixed", "cv-int", "cv-pairs", "grouped"],
)
def test_zero_weight_equals_dropping_the_row(params):
    rng = np.random.default_rng(7)
    U = rng.uniform(size=(90, 2))
    y = (rng.uniform(size=90) < U.mean(axis=1)).astype(float)
    w = rng.uniform(0.5, 2.0, size=90)
    w[::7] = 0.0
    keep = w > 0
    if params.get("cv") == "pairs":  # index pairs into all rows, and the same into kept ones
        folds = np.arange(90) % 3
        params = {
            "cv": [(np.flatnonzero(folds != f), np.flatnonzero(folds == f)) for f in range(3)]
        }
        kept_folds = folds[keep]
        dropped_params = {
            "cv": [
                (np.flatnonzero(kept_folds != f), np.flatnonzero(kept_folds == f)) for f in range(3)
            ]
        }
    else:
        dropped_params = params
    with_zeros = _fit_normalized(U, y, w, **params)
    dropped = _fit_normalized(U[keep], y[keep], w[keep], **dropped_params)
    assert with_zeros.lam_ == dropped.lam_
    assert getattr(with_zeros, "cv_scores_", None) == getattr(dropped, "cv_scores_", None)
    np.testing.assert_array_equal(with_zeros.train_scores_, dropped.train_scores_)
    np.testing.assert_array_equal(with_zeros.train_proba_, dropped.train_proba_)


def test_zero_weight_rows_are_dropped():
    S, y = simulate(100, 7)
    w = np.ones(100)
    w[:10] = 0.0
    model = MRMICFusion(lam=1e-3).fit(S, y, sample_weight=w)
    assert model.train_scores_.shape[0] == 90 == model.n_distinct_points_
    np.testing.assert_allclose(model.train_weights_.sum(), 90.0)


def test_cv_chooses_from_the_grid_reproducibly():
    S, y = simulate(150, 8)
    a = MRMICFusion(cv=3, random_state=1).fit(S, y)
    b = MRMICFusion(cv=3, random_state=1).fit(S, y)
    assert len(a.cv_scores_) == len(DEFAULT_RELATIVE_LAM_GRID)
    assert a.lam_ in a.cv_scores_ and a.cv_scores_ == b.cv_scores_
    assert a.cv_scores_[a.lam_] == min(a.cv_scores_.values())
    assert all(isinstance(k, float) and isinstance(v, float) for k, v in a.cv_scores_.items())
    grid = MRMICFusion(lam_grid=[1e-2, 1e-5], cv=3).fit(S, y)
    assert set(grid.cv_scores_) == {1e-5, 1e-2} and grid.lam_ in (1e-5, 1e-2)


def test_recovers_a_known_monotone_truth():
    S, y = simulate(600, 9)
    S_test, _ = simulate(4000, 10)
    # The truth: P(Y = 1 | S) for z ~ N(0, 1), S_m = z + N(0, 1) is expit(2z) averaged over
    # z | S ~ N(mean(S) * 2/3, 1/3); computed by quadrature.
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    mean = S_test.mean(axis=1) * 2 / 3
    truth = expit(2 * (mean[:, None] + np.sqrt(1 / 3) * nodes[None])) @ weights / weights.sum()
    linear = MRMICFusion(interpolation="linear", cv=3).fit(S, y)
    monotone = MRMICFusion(linear.lam_, interpolation="monotone").fit(S, y)
    for model in (linear, monotone):
        err = np.mean(np.abs(model.predict_proba(S_test)[:, 1] - truth))
        assert err < 0.06, (model.interpolation_, err)


def test_one_score_and_identical_columns():
    S, y = simulate(150, 11, M=1)
    one = MRMICFusion(lam=1e-3).fit(S[:, 0], y)
    assert one.predict_proba(np.linspace(-3, 3, 7)).shape == (7, 2)
    # Identical columns put every point on the diagonal, where distances are sqrt(2) times
    # the one-score ones: with lam * sqrt(2) the QP is the one-score QP.
    same = MRMICFusion(lam=1e-3 * np.sqrt(2)).fit(np.column_stack([S[:, 0], 2 * S[:, 0]]), y)
    p = same.predict_proba(np.column_stack([S[:, 0], -S[:, 0]]))[:, 1]
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(same.train_proba_, one.train_proba_, atol=1e-5)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"lam": -1.0}, "lam"),
        ({"lam": "auto"}, "lam"),
        ({"interpolation": "cubic"}, "interpolation"),
        ({"graph": "full"}, "graph"),
        ({"n_neighbors": 0}, "n_neighbors"),
        ({"lam_grid": []}, "lam_grid is empty"),
        ({"lam_grid": [1e-3, -1.0]}, "lam_grid"),
    ],
)
def test_bad_parameters_raise(params, match):
    S, y = simulate(60, 12)
    with pytest.raises(ValueError, match=match):
        MRMICFusion(**params).fit(S, y)


def test_fitted_state_is_plain_data():
    S, y = simulate(80, 13)
    model = MRMICFusion(cv=3, random_state=0).fit(S, y)
    plain = (np.ndarray, float, int, str, dict, np.floating, np.integer, type(None))
    for name, value in vars(model).items():
        if name.endswith("_") and not name.startswith("_") and name != "ecdf_":
            assert isinstance(value, plain), (name, type(value))


def test_default_fit_is_deterministic():
    S, y = simulate(150, 14)
    a, b = MRMICFusion().fit(S, y), MRMICFusion().fit(S, y)
    assert a.random_state == 0 and a.lam_ == b.lam_ and a.cv_scores_ == b.cv_scores_
    np.testing.assert_array_equal(a.train_proba_, b.train_proba_)


def test_cv_accepts_a_splitter_and_index_pairs():
    from sklearn.model_selection import StratifiedKFold

    S, y = simulate(120, 15)
    splitter = StratifiedKFold(3, shuffle=True, random_state=4)
    pairs = list(splitter.split(S, y))
    grid = [1e-4, 1e-2]
    a = MRMICFusion(lam_grid=grid, cv=splitter).fit(S, y)
    b = MRMICFusion(lam_grid=grid, cv=pairs).fit(S, y)
    c = MRMICFusion(lam_grid=grid, cv=iter(pairs)).fit(S, y)  # a one-shot iterator too
    assert a.cv_scores_ == b.cv_scores_ == c.cv_scores_
    with pytest.raises(ValueError, match="no split with rows on both sides"):
        MRMICFusion(cv=[(np.arange(120), np.array([], dtype=int))]).fit(S, y)


def test_verbose_shows_each_solve(capsys, monkeypatch):
    S, y = simulate(80, 16)
    MRMICFusion(lam_grid=[1e-4, 1e-2], cv=2, verbose=True).fit(S, y)
    bar = capsys.readouterr().err
    assert "MRMICFusion" in bar and "5/5" in bar  # tqdm: 2 folds x 2 candidates + final
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # without tqdm: one line per solve
    MRMICFusion(lam_grid=[1e-4, 1e-2], cv=2, verbose=True).fit(S, y)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 5 and lines[-1].startswith("MRMICFusion: 5/5 (final fit")
    MRMICFusion(lam=1e-3).fit(S, y)
    assert capsys.readouterr().err == ""


def test_long_fit_warns_once_with_the_estimate(monkeypatch):
    import fusion._progress as progress

    S, y = simulate(80, 17)
    monkeypatch.setattr(progress, "SLOW_SECONDS", 0.0)
    with pytest.warns(UserWarning, match="estimated to take") as record:
        MRMICFusion(cv=2, max_points=None).fit(S, y)
    assert len([w for w in record if "estimated" in str(w.message)]) == 1
    assert "max_points=500" in str(record[0].message)
    monkeypatch.setattr(progress, "SLOW_SECONDS", 60.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MRMICFusion(cv=2).fit(S, y)
