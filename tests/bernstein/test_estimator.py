import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

import fusion
from fusion import BernsteinFusion
from fusion._lstsq import heldout_sse
from fusion.bernstein.basis import tensor_design
from fusion.bernstein.binary.qp import MonotoneQP, accumulate_gram
from fusion.bernstein.structure import Structure

from ..conftest import product_truth, simulate


def _grid(M, k):
    axes = np.meshgrid(*[np.linspace(0, 1, k)] * M, indexing="ij")
    return np.stack([a.ravel() for a in axes], axis=1), (k,) * M


@settings(max_examples=25, deadline=None)
@given(
    M=st.integers(1, 3),
    degree=st.integers(1, 4),
    n=st.integers(40, 300),
    seed=st.integers(0, 10_000),
    noise=st.booleans(),
)
def test_monotone_and_bounded_on_dense_grid(M, degree, n, seed, noise):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n, M))
    # labels unrelated to (noise) or decreasing in the scores stress the constraints
    y = rng.integers(0, 2, n) if noise else (S.sum(1) < rng.normal(size=n)).astype(int)
    if np.unique(y).size < 2 or (degree + 1) ** M > n:
        return
    # the tensor (structure="auto" chooses among structures from M = 3 on); the scores as
    # given, or increasing="auto" would reverse decreasing ones and no constraint would bind
    model = BernsteinFusion(base=None, degree=degree, structure="tensor", increasing=True)
    model.fit(S, y)
    for axis in range(M):
        assert np.all(np.diff(model.coef_, axis=axis) >= 0)
    k = {1: 400, 2: 60, 3: 16}[M]
    G, shape = _grid(M, k)
    f = model.calibrating_function(G).reshape(shape)
    assert f.min() >= 0 and f.max() <= 1
    for axis in range(M):
        assert np.all(np.diff(f, axis=axis) >= -1e-12)


def _l2_errors(make, seeds=(3, 3, 3)):
    """Mean RMS error against the truth, and logistic stacking's, at n = 500, 4000, 32,000
    (the mean over the first ``seeds[i]`` simulations of each)."""
    S_test, _, p_test = simulate(20_000, seed=99)
    errors, lr_errors = [], []
    for n, n_seeds in zip((500, 4000, 32_000), seeds, strict=True):
        errs, lr_errs = [], []
        for seed in range(n_seeds):
            S, y, _ = simulate(n, seed=seed)
            model = make(seed).fit(S, y)
            errs.append(np.sqrt(np.mean((model.predict_proba(S_test)[:, 1] - p_test) ** 2)))
            lr = LogisticRegression().fit(S, y)
            lr_errs.append(np.sqrt(np.mean((lr.predict_proba(S_test)[:, 1] - p_test) ** 2)))
        errors.append(np.mean(errs))
        lr_errors.append(np.mean(lr_errs))
    return np.array(errors), np.array(lr_errors)


def test_default_model_l2_error_falls_with_n_and_halves_logistic_stacking():
    # one simulation at 32,000 rows (two thirds of the time of three): its error is 0.20-0.29
    # of logistic stacking's over seeds 0-2, against the bound 0.5. At 4,000 rows the mean
    # RMS error over seeds 0-5 is 0.0215 (0.0228 with the folds before issue 27) against
    # logistic stacking's 0.041 over seeds 0-2: about half, by seed noise on either side
    errors, lr_errors = _l2_errors(lambda seed: BernsteinFusion(random_state=seed), (3, 3, 1))
    assert errors[0] > errors[1] > errors[2]
    # n = 500: the one-standard-error rule keeps (close to) logistic stacking
    assert errors[0] < 1.05 * lr_errors[0]
    # beyond, the logistic stack's error plateaus at its misspecification bias
    assert errors[1] < 0.6 * lr_errors[1] and errors[2] < 0.5 * lr_errors[2]


def test_rank_only_l2_error_falls_with_n_and_beats_logistic_stack():
    errors, lr_errors = _l2_errors(lambda seed: BernsteinFusion(base=None, random_state=seed))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.5 * errors[0]
    assert errors[1] < lr_errors[1] and errors[2] < 0.7 * lr_errors[2]


def test_predictions_at_training_points_invariant_under_increasing_transforms(scores_2d):
    S, y, _ = scores_2d
    T = np.column_stack([np.exp(S[:, 0]), S[:, 1] ** 3 + 5 * S[:, 1]])
    a = BernsteinFusion(base=None, random_state=0).fit(S, y)
    b = BernsteinFusion(base=None, random_state=0).fit(T, y)
    assert a.degree_ == b.degree_
    np.testing.assert_allclose(a.predict_proba(S), b.predict_proba(T), atol=1e-12)


def test_cv_scores_are_heldout_brier_and_best_is_chosen(scores_2d):
    S, y, _ = scores_2d
    from sklearn.model_selection import StratifiedKFold

    splitter = StratifiedKFold(4, shuffle=True, random_state=0)
    model = BernsteinFusion(base=None, degree_grid=[1, 2, (2, 3), 4], cv=splitter).fit(S, y)
    assert list(model.cv_scores_) == [(1, 1), (2, 2), (2, 3), (4, 4)]
    assert model.degree_ == min(model.cv_scores_, key=model.cv_scores_.get)
    assert model.coef_.shape == tuple(k + 1 for k in model.degree_)
    # recompute one held-out score the slow way: refit per fold on the design
    U = model.ecdf_.transform(S)
    yy = (y == model.classes_[1]).astype(float)
    sse = 0.0
    for tr, te in splitter.split(U, yy):
        fold = BernsteinFusion(degree=2)
        fold.ecdf_ = model.ecdf_
        stats = accumulate_gram(U[tr], yy[tr], np.ones(len(tr)), Structure.named("tensor", (2, 2)))

        beta, _ = MonotoneQP((3, 3), eps_abs=1e-7, eps_rel=1e-7, max_iter=20000).solve(stats)
        sse += np.sum((tensor_design(U[te], (2, 2)) @ beta.ravel() - yy[te]) ** 2)
    # CV solves run at OSQP tolerance CV_EPS = 1e-5 (the reference above at 1e-7), so the
    # held-out Brier scores agree to about that relative precision.
    assert model.cv_scores_[(2, 2)] == pytest.approx(sse / len(y), rel=1e-4)


def test_rank_only_degree_edge_warns_only_when_it_clearly_wins():

    S, y, _ = simulate(2000, seed=5)
    with pytest.warns(UserWarning, match="largest candidate of degree_grid"):
        BernsteinFusion(base=None, degree_grid=[1, 2]).fit(S, y)  # 2 beats 1 by 6 se
    S, y, _ = simulate(2000, seed=13)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = BernsteinFusion(base=None, degree_grid=range(2, 9)).fit(S, y)
    # the last degree scored lowest, 3.7e-5 below the next best (a data set where that
    # happens with the folds of cv=5, random_state=0)
    scores = model.cv_scores_
    assert model.degree_ == (8, 8)
    assert sorted(scores.values())[1] - scores[(8, 8)] < 1e-4


def test_sample_weight_equals_row_repetition(scores_2d):
    S, y, _ = scores_2d
    w = np.random.default_rng(0).integers(1, 4, size=len(y))
    a = BernsteinFusion(base=None, degree=3).fit(S, y, sample_weight=w)
    rep = np.repeat(np.arange(len(y)), w)
    b = BernsteinFusion(base=None, degree=3)
    b.fit(S[rep], y[rep])
    # the ECDF is unweighted, so compare the QP on identical normalized points
    U = a.ecdf_.transform(S)
    tensor = Structure.named("tensor", (3, 3))
    stats_w = accumulate_gram(U, (y == 1).astype(float), w.astype(float), tensor)
    stats_r = accumulate_gram(U[rep], (y[rep] == 1).astype(float), np.ones(len(rep)), tensor)
    np.testing.assert_allclose(stats_w.G, stats_r.G)
    assert heldout_sse(stats_w, a.coef_) == pytest.approx(heldout_sse(stats_r, a.coef_))


@pytest.fixture(scope="module")
def degree_3_on_0_1():
    """The degree-3 default model on ``scores_2d``'s data with labels 0 and 1."""
    S, y, _ = simulate(600, seed=1)
    return BernsteinFusion(degree=3).fit(S, y)


@pytest.mark.parametrize("labels", [(0, 1), (-1, 1), (False, True), ("neg", "pos"), (2.0, 7.0)])
def test_any_two_labels_second_is_positive(labels, scores_2d, degree_3_on_0_1):
    S, y, _ = scores_2d
    lab = np.array(labels, dtype=object if isinstance(labels[0], str) else None)[y]
    model = BernsteinFusion(degree=3).fit(S, lab)
    ref = degree_3_on_0_1
    assert list(model.classes_) == list(labels)
    np.testing.assert_allclose(model.predict_proba(S), ref.predict_proba(S))
    assert set(model.predict(S)) <= set(labels)


def test_one_dimensional_scores_are_accepted(scores_2d):
    S, y, _ = scores_2d
    model = BernsteinFusion(degree=6, lam=1e-2).fit(S[:, 0], y)
    assert model.coef_.shape == (7,)
    p = model.predict_proba(S[:, 0])[:, 1]
    assert np.all(np.diff(p[np.argsort(S[:, 0])]) >= -1e-12)


def test_dataframe_feature_names(scores_2d):
    pd = pytest.importorskip("pandas")
    S, y, _ = scores_2d
    df = pd.DataFrame(S, columns=["net_a", "net_b"])
    model = BernsteinFusion(degree=2).fit(df, y)
    assert list(model.feature_names_in_) == ["net_a", "net_b"]
    plain = BernsteinFusion(degree=2).fit(S, y)
    np.testing.assert_allclose(model.predict_proba(df), plain.predict_proba(S))
    with pytest.warns(UserWarning, match="feature names"):
        model.predict_proba(df[["net_b", "net_a"]].to_numpy())


def test_size_limits_are_clear_errors(scores_2d):
    S, y, _ = scores_2d
    with pytest.raises(ValueError, match="max_coefficients"):
        BernsteinFusion(degree=80, max_coefficients=1000).fit(S, y)
    with pytest.raises(ValueError, match="training rows"):
        BernsteinFusion(base=None, degree=5).fit(S[:30], y[:30])
    with pytest.raises(ValueError, match="entries but there are 2"):
        BernsteinFusion(degree=(2, 3, 4)).fit(S, y)


def test_fit_function_and_registry(scores_2d):
    S, y, _ = scores_2d
    model = fusion.fit(S, y, degree=2, lam=1e-2)
    assert isinstance(model, BernsteinFusion) and model.degree_ == (2, 2)
    with pytest.raises(ValueError, match="known methods"):
        fusion.fit(S, y, method="nope")
    assert clone(model).get_params()["degree"] == 2


@pytest.mark.parametrize("base", ["auto", None])
def test_truth_recovered_in_the_large_sample_limit(base):
    S, y, p = simulate(60_000, seed=5)
    model = BernsteinFusion(base=base, degree=6).fit(S, y)
    err = np.sqrt(np.mean((model.predict_proba(S)[:, 1] - p) ** 2))
    assert err < 0.02
    assert product_truth(np.zeros((1, 2)))[0] == pytest.approx(
        model.predict_proba(np.zeros((1, 2)))[0, 1], abs=0.03
    )
