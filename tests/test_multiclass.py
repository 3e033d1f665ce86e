"""Multi-class fusion (fusion/_multiclass.py and the base's multi-class path): input forms,
labels, the coupled distribution, monotonicity in each class's own scores, persistence, and
bad input. The known-truth comparison for the default method is in
tests/bernstein/test_multiclass_truth.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import softmax

import fusion
from fusion._multiclass import couple, fit_coupling

FAST = {"enir": {}, "rpr": {"degree": 4, "lam": np.inf}}


def simulate(n: int, C: int = 4, M: int = 3, seed: int = 0):
    """Scorers that miscalibrate a known multinomial posterior: too hot, too cold, biased."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, C))
    logits = 1.5 * X
    truth = softmax(logits, axis=1)
    y = (rng.random(n)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1)
    bias = np.zeros(C)
    bias[0] = 1.0
    scorers = [softmax(2.0 * logits, 1), softmax(0.5 * logits, 1), softmax(logits + bias, 1)]
    return np.stack(scorers[:M], axis=1), y, truth


@pytest.mark.parametrize("method", sorted(FAST))
def test_rows_are_distributions_over_the_sorted_labels(method):
    S, y, _ = simulate(600)
    labels = np.array(["ant", "bee", "cat", "dog"])[y]  # strings, sorted as given
    model = fusion.fit(S, labels, method=method, **FAST[method])
    assert model.n_classes_ == 4 and list(model.classes_) == ["ant", "bee", "cat", "dog"]
    p = model.predict_proba(S)
    assert p.shape == (600, 4) and np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_array_equal(model.predict(S), model.classes_[np.argmax(p, axis=1)])
    # the same scores as a list of M arrays of shape (n, C)
    q = model.predict_proba([S[:, m] for m in range(3)])
    np.testing.assert_array_equal(p, q)


def test_non_contiguous_integer_labels_map_to_the_columns_in_sorted_order():
    S, y, _ = simulate(500, seed=1)
    labels = np.array([10, -3, 7, 42])[y]  # sorted: -3, 7, 10, 42
    order = np.argsort([10, -3, 7, 42])
    model = fusion.fit(S[:, :, order], labels, method="enir")
    np.testing.assert_array_equal(model.classes_, [-3, 7, 10, 42])
    ref = fusion.fit(S[:, :, order], np.argsort(order)[y], method="enir")
    np.testing.assert_array_equal(
        model.predict_proba(S[:, :, order]), ref.predict_proba(S[:, :, order])
    )


def test_each_class_probability_rises_with_its_own_scores():
    S, y, _ = simulate(800, seed=2)
    model = fusion.fit(S, y, method="rpr", **FAST["rpr"])
    rng = np.random.default_rng(3)
    base = S[rng.integers(0, 800, 40)]
    grid = np.linspace(0.001, 0.999, 60)
    for k in range(4):
        for m in range(3):
            X = np.repeat(base, grid.size, axis=0)
            X[:, m, k] = np.tile(grid, base.shape[0])
            p = model.predict_proba(X)[:, k].reshape(base.shape[0], grid.size)
            assert np.all(np.diff(p, axis=1) >= -1e-12), (k, m)


def test_two_class_scores_fit_the_binary_model_of_the_second_class():
    S, y, _ = simulate(400, C=2, seed=4)
    a = fusion.fit(S, y, method="enir")
    b = fusion.fit(S[:, :, 1], y, method="enir")
    np.testing.assert_array_equal(a.predict_proba(S), b.predict_proba(S[:, :, 1]))


def test_coupling_recovers_a_known_slope_and_intercepts():
    rng = np.random.default_rng(5)
    n, C = 20_000, 3
    P = rng.uniform(0.05, 0.95, size=(n, C))
    q = couple(P, 1.7, np.array([0.0, 0.4, -0.3]))
    index = (rng.random(n)[:, None] > np.cumsum(q, axis=1)).sum(axis=1)
    slope, intercept, tau = fit_coupling(P, index, np.ones(n))
    assert tau == np.inf  # no folds: one common slope
    np.testing.assert_allclose(slope, 1.7, atol=0.1)
    np.testing.assert_allclose(intercept, [0.0, 0.4, -0.3], atol=0.08)
    # with folds, cross-validation keeps the common slope (one-standard-error rule)
    m = 8_000
    slope, _, _ = fit_coupling(P[:m], index[:m], np.ones(m))
    slope_cv, _, tau_cv = fit_coupling(P[:m], index[:m], np.ones(m), np.arange(m) % 5)
    assert tau_cv == np.inf
    np.testing.assert_array_equal(slope_cv, slope)


def test_coupling_recovers_per_class_slopes_when_the_classes_need_them():
    rng = np.random.default_rng(8)
    n, C = 8_000, 3
    P = rng.uniform(0.02, 0.98, size=(n, C))
    truth = np.array([0.5, 1.5, 3.0])
    q = couple(P, truth, np.array([0.0, 0.2, -0.2]))
    index = (rng.random(n)[:, None] > np.cumsum(q, axis=1)).sum(axis=1)
    slope, _, tau = fit_coupling(P, index, np.ones(n), np.arange(n) % 5)
    assert tau < 0.1
    np.testing.assert_allclose(slope, truth, rtol=0.1)
    common, _, _ = fit_coupling(P, index, np.ones(n))
    assert np.ptp(common) == 0


def test_multiclass_models_save_and_load_bit_for_bit(tmp_path):
    S, y, _ = simulate(500, seed=6)
    model = fusion.fit(S, np.array(["a", "b", "c", "d"])[y], method="rpr", **FAST["rpr"])
    model.save(tmp_path / "m.fusion")
    loaded = fusion.load(tmp_path / "m.fusion")
    np.testing.assert_array_equal(loaded.classes_, model.classes_)
    np.testing.assert_array_equal(loaded.predict_proba(S), model.predict_proba(S))


@pytest.mark.parametrize("method", ["bernstein", "rpr"])
def test_one_direction_per_network_for_every_class(method):
    # a network scoring the labelled class low (negated): one decision, one warning, and
    # every class's fusion reads it reversed
    S, y, _ = simulate(1_500, seed=8)
    flipped = S * np.array([1.0, -1.0, 1.0])[None, :, None]
    kw = {"multiclass": "per-class"} if method == "bernstein" else FAST[method]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = fusion.fit(flipped, y, method=method, **kw)
    reversed_ = [w for w in caught if "increasing" in str(w.message)]
    assert len(reversed_) == 1 and "network(s) 1" in str(reversed_[0].message)
    for est in model.estimators_:
        np.testing.assert_array_equal(est.increasing_, [True, False, True])
    told = fusion.fit(flipped, y, method=method, increasing=[True, False, True], **kw)
    np.testing.assert_array_equal(told.predict_proba(flipped), model.predict_proba(flipped))


@pytest.mark.parametrize("method", ["bernstein", "rpr"])
def test_a_model_with_classes_in_column_order_saves_and_loads(method, tmp_path):
    # classes= in the networks' column order (not sorted): classes_ keeps it through a file
    S, y, _ = simulate(500, seed=7)
    names = np.array(["dog", "ant", "yak", "cat"])
    kw = FAST.get(method, {})
    model = fusion.fit(S, names[y], classes=names, method=method, **kw)
    np.testing.assert_array_equal(model.classes_, names)
    model.save(tmp_path / "m.fusion")
    loaded = fusion.load(tmp_path / "m.fusion")
    np.testing.assert_array_equal(loaded.classes_, names)
    np.testing.assert_array_equal(loaded.predict_proba(S), model.predict_proba(S))
    np.testing.assert_array_equal(loaded.predict(S), model.predict(S))


@pytest.mark.parametrize(
    ("make_input", "match"),
    [
        (lambda S, y: (S[:, :, :1], y), r"C = 1 class column"),
        (
            lambda S, y: (S, np.array(["a", "b", "c", "d"])[np.minimum(y, 2)]),
            r"y holds 3 classes .* gives 4 class scores.*classes=",
        ),
        (lambda S, y: (S, np.minimum(y, 2)), r"classes \[3\] do not occur in the fusion sample"),
        (lambda S, y: ([S[:, 0], S[:, 1, :3]], y), r"different numbers of classes \[4, 3\]"),
        (
            lambda S, y: (S[:, :, 0], y),
            r"pass each scorer's 4 class scores: S of shape \(n, M, 4\)",
        ),
    ],
    ids=["one-class-column", "label-count", "unseen-class", "ragged-classes", "two-dimensional"],
)
def test_bad_multiclass_input_is_a_clear_error(make_input, match):
    S, y, _ = simulate(200, seed=7)
    S_bad, y_bad = make_input(S, y)
    with pytest.raises(ValueError, match=match):
        fusion.fit(S_bad, y_bad, method="enir")


@pytest.mark.parametrize("method", ["copula", "mrmic"])
def test_binary_only_methods_name_the_methods_that_take_multiclass_scores(method):
    S, y, _ = simulate(200, seed=8)
    with pytest.raises(ValueError, match=r"binary scores only.*BernsteinFusion.*RPRCalibrator"):
        fusion.fit(S, y, method=method)


def test_a_binary_model_refuses_multiclass_scores_and_vice_versa():
    S, y, _ = simulate(300, seed=9)
    multi = fusion.fit(S, y, method="enir")
    with pytest.raises(ValueError, match=r"pass S of shape \(n, 3, 4\)"):
        multi.predict_proba(S[:, :, 0])
    binary = fusion.fit(S[:, :, 0], (y == 0).astype(int), method="enir")
    with pytest.raises(ValueError, match=r"fuses binary scores.*\(n, 3\)"):
        binary.predict_proba(S)


def test_coupled_probabilities_never_round_to_zero_or_one():
    # one-vs-rest probabilities at the clip: the raw softmax would give 1e-26 and exactly 1
    P = np.array([[1 - 1e-13, 1e-13, 1e-13], [0.5, 0.5, 0.5], [1e-13, 0.3, 1 - 1e-13]])
    q = couple(P, 2.0, np.zeros(3))
    assert np.all((q > 0) & (q < 1))
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
    # still non-decreasing in each class's own probability, through the clipped region
    grid = np.linspace(1e-13, 1 - 1e-13, 400)
    rows = np.column_stack([grid, np.full(400, 1e-13), np.full(400, 0.5)])
    assert np.all(np.diff(couple(rows, 2.0, np.zeros(3))[:, 0]) >= 0)


def test_coupling_ignores_rows_in_no_test_fold():
    # rows of fold -1 (zero weight) or -2 (outside a sampled cross-validation) have no
    # out-of-fold probability: NaN there must neither leak into the choice of the spread
    # penalty nor into the fit (it once picked from NaN held-out means: IndexError, or a
    # choice that changed from one refit to the next with the memory np.empty returned)
    rng = np.random.default_rng(11)
    n, C = 600, 4
    P = rng.uniform(0.05, 0.95, size=(n, C))
    index = (rng.random(n)[:, None] > np.cumsum(couple(P, 1.3, np.zeros(C)), axis=1)).sum(1)
    folds = np.arange(n) % 5
    w = rng.exponential(size=n)
    clean = fit_coupling(P, index, w, folds)
    outside = rng.random(n) < 0.2
    P_out, folds_out = P.copy(), folds.copy()
    P_out[outside] = np.nan
    folds_out[outside] = np.where(rng.random(outside.sum()) < 0.5, -1, -2)
    got = fit_coupling(P_out, index, w, folds_out)
    ref = fit_coupling(P[~outside], index[~outside], w[~outside], folds[~outside])
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.all(np.isfinite(got[0])) and np.all(np.isfinite(got[1]))
    assert not np.array_equal(clean[1], got[1])  # the rows did count when inside
