"""BernsteinFusion's class-shared multi-class model (multiclass="shared", the default for
multi-class scores): known truths, invariants, input forms, unseen classes, weights,
persistence and bad input."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax, softmax

import fusion
from fusion import BernsteinFusion


def ensemble(n, C=6, seed=0, smooth=False, n_test=0):
    """Three members with different temperatures and noise around a known posterior; with
    ``smooth`` the second is label-smoothed (a distortion no temperature removes)."""
    rng = np.random.default_rng(seed)
    N = n + n_test
    L = 1.6 * rng.normal(size=(N, C))
    truth = softmax(L, axis=1)
    y = (rng.random(N)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1).clip(0, C - 1)
    members = []
    for temp, noise in ((0.5, 1.0), (0.7, 0.2), (1.0, 1.0)):
        p = softmax((L + noise * rng.normal(size=(N, C))) / temp, axis=1)
        members.append(p)
    if smooth:  # the best member, label-smoothed
        members[1] = 0.7 * members[1] + 0.3 / C
    S = np.stack(members, axis=1)
    return S[:n], y[:n], S[n:], y[n:], truth[n:]


def log_loss(P, y):
    return float(-np.mean(np.log(P[np.arange(y.shape[0]), y])))


def labels_of(rng, L):
    """A label per row of logits ``L`` drawn from ``softmax(L)``."""
    C = L.shape[1]
    return (rng.random(L.shape[0])[:, None] > np.cumsum(softmax(L, 1), 1)).sum(1).clip(0, C - 1)


def temperature_of_average(S, y, St):
    A = np.log(S).mean(axis=1)
    rows = np.arange(y.shape[0])
    res = minimize_scalar(
        lambda t: -np.mean(log_softmax(A * np.exp(-t), 1)[rows, y]),
        bounds=(-4, 4),
        method="bounded",
    )
    return softmax(np.log(St).mean(axis=1) * np.exp(-res.x), axis=1)


@pytest.fixture(scope="module")
def reference():
    """One ensemble and its default fit, shared by the tests that compare other fits (other
    input forms, row orders, a refit) with it; they do not modify it."""
    S, y, St, *_ = ensemble(1_500, C=8, seed=22, n_test=300)
    return S, y, St, fusion.fit(S, y)


def test_recovers_the_weights_of_a_known_class_shared_truth():
    # the truth is in the model: softmax(0.8 z_1 + 0.3 z_2) of two scorers' log-probabilities
    rng = np.random.default_rng(0)
    n, C = 20_000, 5
    S = softmax(rng.normal(size=(n, 2, C)) * 1.5, axis=2)
    truth = softmax(0.8 * np.log(S[:, 0]) + 0.3 * np.log(S[:, 1]), axis=1)
    y = (rng.random(n)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1).clip(0, C - 1)
    model = BernsteinFusion(lam=np.inf).fit(S, y)
    np.testing.assert_allclose(model.base_coef_, [0.8, 0.3], atol=0.05)
    assert model.multiclass_ == "shared" and np.all(model.coef_ == 0)


def test_monotone_correction_earns_its_place_on_a_label_smoothed_member():
    S, y, St, yt, truth = ensemble(4_000, seed=1, smooth=True, n_test=20_000)
    linear = BernsteinFusion(lam=np.inf).fit(S, y)
    model = fusion.fit(S, y)
    assert np.isfinite(model.lam_) and np.any(model.coef_ > 0)
    assert log_loss(model.predict_proba(St), yt) < log_loss(linear.predict_proba(St), yt) - 0.01


@pytest.mark.parametrize("seed", [2, 3])
def test_never_behind_temperature_scaling_of_the_average(seed):
    S, y, St, yt, truth = ensemble(3_000, C=8, seed=seed, n_test=20_000)
    ours = log_loss(fusion.fit(S, y).predict_proba(St), yt)
    assert ours <= log_loss(temperature_of_average(S, y, St), yt) + 0.002
    assert ours < min(log_loss(St[:, m], yt) for m in range(3))


def test_each_class_probability_rises_with_its_own_scores_and_rows_are_distributions():
    S, y, *_ = ensemble(1_500, C=4, seed=4, smooth=True)
    model = BernsteinFusion(lam=1e-4).fit(S, y)  # a fixed, flexible penalty
    assert np.any(model.coef_ > 0)
    rng = np.random.default_rng(5)
    base = S[rng.integers(0, 1_500, 30)]
    grid = np.linspace(1e-6, 1 - 1e-6, 80)
    for k in range(4):
        for m in range(3):
            X = np.repeat(base, grid.size, axis=0)
            X[:, m, k] = np.tile(grid, base.shape[0])
            p = model.predict_proba(X)
            assert np.all((p > 0) & (p < 1))
            np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
            own = p[:, k].reshape(base.shape[0], grid.size)
            assert np.all(np.diff(own, axis=1) >= -1e-12), (k, m)


def test_extreme_scores_never_give_probabilities_of_zero_or_one():
    S, y, *_ = ensemble(800, C=4, seed=6)
    model = fusion.fit(S, y)
    X = np.full((3, 3, 4), 1e-300)
    X[0, :, 0] = 1.0  # every scorer certain of class 0
    X[1] = 0.25
    X[2, 0, 1], X[2, 1, 2], X[2, 2, 3] = 1.0, 1.0, 1.0
    p = model.predict_proba(X)
    assert np.all((p > 0) & (p < 1)) and np.all(np.isfinite(p))


def test_permuting_the_classes_permutes_the_probabilities():
    S, y, St, *_ = ensemble(1_000, C=5, seed=7, n_test=300)
    perm = np.array([3, 0, 4, 1, 2])
    a = BernsteinFusion(lam=1e-3, bias_penalty=1e-2).fit(S, y)
    b = BernsteinFusion(lam=1e-3, bias_penalty=1e-2).fit(S[:, :, perm], np.argsort(perm)[y])
    np.testing.assert_allclose(b.class_bias_, a.class_bias_[perm], atol=1e-7)
    np.testing.assert_allclose(
        b.predict_proba(St[:, :, perm]), a.predict_proba(St)[:, perm], atol=1e-7
    )


def test_row_order_and_refits_are_bit_identical(reference):
    S, y, St, a = reference
    perm = np.random.default_rng(9).permutation(S.shape[0])
    b = fusion.fit(S[perm], y[perm])
    assert a.lam_ == b.lam_
    np.testing.assert_array_equal(a.predict_proba(St), fusion.fit(S, y).predict_proba(St))
    np.testing.assert_allclose(a.predict_proba(St), b.predict_proba(St), rtol=0, atol=1e-10)


def test_weights_follow_scikit_learn():
    S, y, St, *_ = ensemble(900, C=4, seed=10, n_test=200)
    w = np.random.default_rng(11).integers(0, 3, 900).astype(float)
    a = fusion.fit(S, y, sample_weight=w)
    np.testing.assert_array_equal(fusion.fit(S, y, sample_weight=7.5 * w).predict_proba(St),
                                  a.predict_proba(St))  # fmt: skip
    kept = w > 0
    b = fusion.fit(S[kept], y[kept], sample_weight=w[kept])
    np.testing.assert_array_equal(b.predict_proba(St), a.predict_proba(St))
    # an integer weight is that many copies of the row (the folds follow the content)
    rep = np.repeat(np.arange(900), w.astype(int))
    c = fusion.fit(S[rep], y[rep])
    assert c.lam_ == a.lam_
    np.testing.assert_allclose(c.predict_proba(St), a.predict_proba(St), atol=1e-7)


def test_float32_and_lists_give_the_same_model(reference):
    # (logits: test_logits_log_probabilities_and_probabilities_are_one_input)
    S, y, St, ref = reference
    # float32 scores are used in float32, no precision is lost beyond the input's own
    f32 = fusion.fit(S.astype(np.float32), y)
    wide = fusion.fit(S.astype(np.float32).astype(np.float64), y)
    np.testing.assert_allclose(f32.predict_proba(St), wide.predict_proba(St), atol=1e-6)
    listed = fusion.fit([S[:, m] for m in range(3)], y)
    np.testing.assert_array_equal(listed.predict_proba(St), ref.predict_proba(St))


def test_exact_zeros_of_a_scorer_are_finite():
    S, y, St, *_ = ensemble(1_000, C=6, seed=14, n_test=300)
    S[:, 2][S[:, 2] < 0.05] = 0.0  # a forest-like scorer: many exact zeros, some on the label
    S[:, 2] /= S[:, 2].sum(axis=1, keepdims=True)
    model = fusion.fit(S, y)
    assert model.logp_floor_[2] == pytest.approx(np.log(S[:, 2][S[:, 2] > 0].min() / 2))
    St = St.copy()
    St[:, 2] = np.where(St[:, 2] < 0.05, 0.0, St[:, 2])
    p = model.predict_proba(St)
    assert np.all((p > 0) & (p < 1))


def test_classes_absent_from_the_fusion_sample_get_probabilities():
    S, y, St, *_ = ensemble(1_500, C=6, seed=15, n_test=500)
    keep = y != 4
    names = np.array(list("abcdef"))
    with pytest.raises(ValueError, match=r"y holds 5 classes.*classes=\["):
        fusion.fit(S[keep], names[y[keep]])
    model = fusion.fit(S[keep], names[y[keep]], classes=names)
    assert list(model.classes_) == list("abcdef") and model.n_classes_ == 6
    by_index = fusion.fit(S[keep], y[keep])  # integers 0 .. C - 1 number the columns
    np.testing.assert_array_equal(by_index.classes_, np.arange(6))
    np.testing.assert_array_equal(by_index.predict_proba(St), model.predict_proba(St))
    p = model.predict_proba(St)[:, 4]
    assert np.all(p > 0)
    # the unseen class is predicted where the scorers say so
    assert np.corrcoef(p, St[:, :, 4].mean(axis=1))[0, 1] > 0.9
    with pytest.raises(ValueError, match=r"classes \['e'\] do not occur in the fusion sample"):
        BernsteinFusion(multiclass="per-class").fit(S[keep], names[y[keep]], classes=names)
    with pytest.raises(ValueError, match=r"labels \['z'\] that are not in classes"):
        fusion.fit(S, np.where(y == 0, "z", names[y]), classes=names)


@pytest.mark.parametrize("seed", [3, 6])
def test_few_rows_of_many_absent_classes_end_the_bias_path_not_the_fit(seed):
    # 30 rows, 120 classes, most absent: along the class biases' path a fold's biases head
    # for -inf and Newton cannot follow at the smaller ridges. The path stops there with a
    # SolverWarning (it used to raise), the penalties before it are compared
    rng = np.random.default_rng(seed)
    n, C = 30, 120
    signal = rng.normal(size=(n, C))
    y = (signal * 3 + rng.gumbel(size=(n, C))).argmax(axis=1)
    L = np.stack(
        [(rng.uniform(0.2, 2) * signal * 3 + rng.normal(size=(n, C))) * 3.0 for _ in range(4)],
        axis=1,
    )
    S = softmax(L, axis=-1)
    with pytest.warns(fusion.SolverWarning, match="stopped at lam=inf, bias_penalty="):
        model = fusion.fit(S, y, classes=np.arange(C))
    tried = {k[-1] for k in model.cv_scores_}
    assert model.bias_penalty_ in tried and min(t for t in tried if t > 0) > 1e-5
    P = model.predict_proba(S)
    assert np.all(P > 0) and np.all(P < 1) and np.allclose(P.sum(axis=1), 1.0)


def test_networks_that_say_nothing_are_refused_with_what_to_do():
    # every row the same scores: content folds put every row in one fold, and the fit
    # divided by a fold's empty training weight (ZeroDivisionError); now a ValueError that
    # says why and how to fit anyway
    rng = np.random.default_rng(5)
    y = rng.integers(0, 20, 600)
    S = np.zeros((600, 2, 20))
    with pytest.raises(ValueError, match=r"every row has the same scores.*fix lam"):
        fusion.fit(S, y)
    model = BernsteinFusion(lam=np.inf, bias_penalty=1.0, top_label_penalty=np.inf).fit(S, y)
    P = model.predict_proba(S[:5])
    np.testing.assert_allclose(P, P[:1].repeat(5, axis=0))
    # the biases follow the class frequencies
    assert np.corrcoef(P[0], np.bincount(y, minlength=20))[0, 1] > 0.9


def test_logits_log_probabilities_and_probabilities_are_one_input(reference):
    S, y, St, ref = reference  # the probabilities
    rng = np.random.default_rng(22)
    logits = np.log(S) + rng.normal(size=(S.shape[0], 3, 1)) * 20  # any constant per row
    forms = {  # (fitted on, predicted on, each scorer's base)
        "logits": (logits, np.log(St) + 5.0, ("identity",) * 3),
        "log-probabilities": (np.log(S), np.log(St), ("identity",) * 3),
        "probabilities and logits": (
            np.stack([S[:, 0], logits[:, 1], S[:, 2]], 1),
            np.stack([St[:, 0], np.log(St[:, 1]), St[:, 2]], 1),
            ("logit", "identity", "logit"),
        ),
    }
    assert ref.base_ == ("logit",) * 3
    P = ref.predict_proba(St)
    for name, (fit_on, predict_on, base) in forms.items():
        model = fusion.fit(fit_on, y)
        assert model.base_ == base, name
        assert (model.lam_, model.bias_penalty_) == (ref.lam_, ref.bias_penalty_), name
        np.testing.assert_allclose(model.base_coef_, ref.base_coef_, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(model.predict_proba(predict_on), P, atol=1e-6, err_msg=name)


def test_one_network_is_a_two_dimensional_array_of_its_class_scores():
    S, y, St, *_ = ensemble(1_500, C=6, seed=23, n_test=300)
    logits = np.log(S[:, 1])
    model = fusion.fit(logits, y)  # (n, C) with six labels: one network's class scores
    assert (model.n_features_in_, model.n_classes_) == (1, 6)
    three_d = fusion.fit(logits[:, None, :], y)
    np.testing.assert_array_equal(model.predict_proba(np.log(St[:, 1])),
                                  three_d.predict_proba(np.log(St[:, 1:2])))  # fmt: skip
    np.testing.assert_allclose(model.predict_proba(np.log(St[:, 1])).sum(axis=1), 1.0)
    with pytest.raises(ValueError, match=r"Only binary classification.*one network's"):
        fusion.fit(logits[:, :4], y)  # four columns, six labels
    keep = y < 5  # five labels of six columns: the columns' labels must be given
    with pytest.raises(ValueError, match=r"Only binary classification.*classes="):
        fusion.fit(logits[keep], y[keep])
    partial = fusion.fit(logits[keep], y[keep], classes=np.arange(6))
    assert (partial.n_features_in_, partial.n_classes_) == (1, 6)


def test_one_network_as_a_dataframe_whose_columns_name_the_classes():
    pd = pytest.importorskip("pandas")
    S, y, St, yt, _ = ensemble(1_500, C=5, seed=26, n_test=300)
    names = np.array(["cat", "dog", "emu", "owl", "yak"])
    order = [3, 0, 4, 1, 2]  # the network's column order, not the sorted labels'
    logits, test = np.log(S[:, 1][:, order]), np.log(St[:, 1][:, order])
    frame = pd.DataFrame(logits, columns=names[order])
    model = fusion.fit(frame, names[y])
    assert list(model.classes_) == list(names[order])  # the columns' names, in their order
    ref = fusion.fit(logits, names[y], classes=names[order])
    P = model.predict_proba(pd.DataFrame(test, columns=names[order]))
    np.testing.assert_array_equal(P, ref.predict_proba(test))
    # every class's probability is the one of its named column: accuracy is the network's
    assert np.mean(model.predict(test) == names[yt]) == np.mean(np.argmax(St[:, 1], 1) == yt)
    with pytest.raises(ValueError, match=r"another order than classes_"):
        model.predict_proba(pd.DataFrame(test, columns=names[order])[sorted(names)])
    with pytest.raises(ValueError, match=r"in another order than its columns"):
        fusion.fit(frame, names[y], classes=sorted(names))
    # columns not named by the labels: the sorted labels, as for an array
    plain = fusion.fit(pd.DataFrame(np.log(S[:, 1])), y)
    np.testing.assert_array_equal(plain.classes_, np.arange(5))
    np.testing.assert_array_equal(
        plain.predict_proba(np.log(St[:, 1])),
        fusion.fit(np.log(S[:, 1]), y).predict_proba(np.log(St[:, 1])),
    )


def test_a_network_that_reads_lower_as_more_likely_is_reversed(tmp_path):
    # distances or energies: the class of the lowest score is the likely one
    S, y, St, *_ = ensemble(1_500, C=5, seed=27, n_test=300)
    L, Lt = np.log(S), np.log(St)
    ref = fusion.fit(L, y)
    flipped, flipped_t = (
        L * np.array([1, -1, 1])[None, :, None],
        Lt * np.array([1, -1, 1])[None, :, None],
    )
    with pytest.warns(UserWarning, match=r"network\(s\) 1 \(z = -\d+"):
        auto = fusion.fit(flipped, y)
    np.testing.assert_array_equal(auto.increasing_, [True, False, True])
    np.testing.assert_array_equal(auto.predict_proba(flipped_t), ref.predict_proba(Lt))
    told = fusion.fit(flipped, y, increasing=[True, False, True])  # no warning when told
    np.testing.assert_array_equal(told.predict_proba(flipped_t), ref.predict_proba(Lt))
    every = fusion.fit(-L, y, increasing=False)
    np.testing.assert_array_equal(every.increasing_, [False] * 3)
    np.testing.assert_array_equal(every.predict_proba(-Lt), ref.predict_proba(Lt))
    np.testing.assert_array_equal(ref.increasing_, [True] * 3)  # aligned networks stay
    kept = fusion.fit(flipped, y, increasing=True)  # as given: the network gets no weight
    assert kept.base_coef_[1] < 1e-6 < kept.base_coef_[0]
    auto.save(tmp_path / "m.fusion")
    loaded = fusion.load(tmp_path / "m.fusion")
    np.testing.assert_array_equal(loaded.increasing_, auto.increasing_)
    np.testing.assert_array_equal(loaded.predict_proba(flipped_t), auto.predict_proba(flipped_t))


def test_top_label_correction_earns_its_place_and_nests_the_model():
    # one network whose calibrated distribution is its softmax reweighted by a known feasible
    # correction (a top-versus-all distortion no temperature removes); the member's own g is
    # held at 0 (lam=inf) so that only the correction can follow it
    from fusion.bernstein.multiclass import toplabel

    rng = np.random.default_rng(24)
    n, C = 6_000, 10
    theta = toplabel._feasible(np.array([1.5, 1.5, 1.0, 0.0, -1.5, -2.5]))
    L = rng.normal(size=(n + 20_000, C)) * 2.5
    truth = toplabel.reweight(softmax(L, axis=1), theta)
    y = (rng.random(n + 20_000)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1).clip(0, C - 1)
    kw = {"lam": np.inf, "bias_penalty": np.inf}
    model = BernsteinFusion(**kw).fit(L[:n], y[:n])
    plain = BernsteinFusion(**kw, top_label_penalty=np.inf).fit(L[:n], y[:n])
    assert np.isfinite(model.top_label_penalty_) and np.any(model.top_label_coef_)
    assert plain.top_label_penalty_ == np.inf and not np.any(plain.top_label_coef_)
    assert plain.top_label_kind_ == "none" and model.top_label_kind_ != "none"
    assert model.top_label_cv_scores_[np.inf] > min(model.top_label_cv_scores_.values())
    grid = np.linspace(0.02, 0.98, 25)
    np.testing.assert_allclose(
        toplabel.psi(grid, model.top_label_coef_[1:]), toplabel.psi(grid, theta), atol=0.3
    )
    P, Q = model.predict_proba(L[n:]), plain.predict_proba(L[n:])
    best = log_loss(truth[n:], y[n:])
    assert log_loss(P, y[n:]) - best < 0.3 * (log_loss(Q, y[n:]) - best)
    ece = fusion.metrics.top_label_ece
    assert ece(y[n:], P) < ece(y[n:], Q)
    # the correction is the last step: the uncorrected model reweighted
    np.testing.assert_allclose(P, toplabel.reweight(Q, model.top_label_coef_[1:]), atol=1e-6)


def test_a_certified_correction_is_chosen_when_the_truth_needs_it_and_is_saved(tmp_path):
    # the truth reweights by a psi outside the polytope (a strong lift of small
    # probabilities): cross-validation keeps the certified correction, which the polytope's
    # cannot follow; the model saves, loads and predicts as fitted
    from fusion.bernstein.multiclass import toplabel

    rng = np.random.default_rng(31)
    n, C = 6_000, 10
    theta = 0.6 * np.array([0.935, 0.632, 0.088, -0.396, -0.671, -0.595])
    assert toplabel.certify(theta) and not toplabel.satisfies(theta)
    L = rng.normal(size=(n + 20_000, C)) * 2.5
    truth = toplabel.reweight(softmax(L, axis=1), theta)
    y = (rng.random(n + 20_000)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1).clip(0, C - 1)
    model = BernsteinFusion(lam=np.inf, bias_penalty=np.inf).fit(L[:n], y[:n])
    scores = model.top_label_cv_scores_
    chosen = (model.top_label_penalty_, "certified")
    edge = scores.get((model.top_label_penalty_, "edge"), np.inf)
    assert chosen in scores and min(scores[chosen], edge) == min(scores.values())
    # the kind names the candidate whose score was kept
    kept = chosen if model.top_label_kind_ == "certified" else (chosen[0], "edge")
    assert model.top_label_kind_ in ("certified", "edge") and kept in scores
    assert model.top_label_kind_ == "certified" or edge < scores[chosen]
    coef = model.top_label_coef_[1:]
    assert toplabel.admissible(coef) and not toplabel.satisfies(coef)
    polytope = min(v for k, v in scores.items() if not isinstance(k, tuple))
    assert scores[chosen] < polytope
    P = model.predict_proba(L[n:])
    assert np.abs(P - truth[n:]).max() < 0.03
    plain = BernsteinFusion(lam=np.inf, bias_penalty=np.inf, top_label_penalty=np.inf)
    Q = plain.fit(L[:n], y[:n]).predict_proba(L[n:])
    assert np.abs(P - truth[n:]).mean() < 0.5 * np.abs(Q - truth[n:]).mean()
    model.save(tmp_path / "m.fusion")
    loaded = fusion.load(tmp_path / "m.fusion")
    np.testing.assert_array_equal(loaded.predict_proba(L[n:]), P)
    assert loaded.top_label_kind_ == model.top_label_kind_


def test_a_model_saved_without_the_correction_predicts_as_saved(tmp_path):
    S, y, St, *_ = ensemble(800, C=5, seed=25, n_test=200)
    model = fusion.fit(S, y)
    model.save(tmp_path / "m.fusion")
    loaded = fusion.load(tmp_path / "m.fusion")
    np.testing.assert_array_equal(loaded.top_label_coef_, model.top_label_coef_)
    np.testing.assert_array_equal(loaded.predict_proba(St), model.predict_proba(St))
    old = BernsteinFusion(top_label_penalty=np.inf).fit(S, y)
    expected = old.predict_proba(St)
    for name in ("top_label_coef_", "top_label_penalty_", "top_label_kind_",
                 "top_label_cv_scores_", "top_label_cv_se_"):  # fmt: skip
        delattr(old, name)  # as a model fitted before the correction existed
    np.testing.assert_array_equal(old.predict_proba(St), expected)
    broken = copy.deepcopy(model)
    broken.top_label_coef_ = np.r_[0.0, np.full(toplabel_degree(), 9.0)]
    with pytest.raises(ValueError, match=r"top_label_coef_ must be"):
        broken.predict_proba(St)


def toplabel_degree() -> int:
    from fusion.bernstein.multiclass.toplabel import DEGREE

    return DEGREE


def test_classes_give_the_column_order():
    S, y, St, *_ = ensemble(1_500, C=5, seed=21, n_test=400)
    names = np.array(["cat", "dog", "ant", "emu", "bee"])  # column k holds names[k]
    model = fusion.fit(S, names[y], classes=names)
    np.testing.assert_array_equal(model.classes_, names)  # the columns' order, not sorted
    assert np.mean(model.predict(St) == names[St.argmax(axis=2)[:, 0]]) > 0.5
    perm = np.array([3, 0, 4, 1, 2])
    permuted = fusion.fit(S[:, :, perm], names[y], classes=names[perm])
    np.testing.assert_array_equal(permuted.classes_, names[perm])
    np.testing.assert_allclose(
        permuted.predict_proba(St[:, :, perm]), model.predict_proba(St)[:, perm], atol=1e-6
    )
    np.testing.assert_array_equal(permuted.predict(St[:, :, perm]), model.predict(St))
    with pytest.raises(ValueError, match=r"classes lists a label more than once"):
        fusion.fit(S, names[y], classes=["cat", "cat", "ant", "emu", "bee"])
    with pytest.raises(ValueError, match=r"single class"):
        fusion.fit(S, np.zeros(S.shape[0], int), classes=np.arange(5))
    with pytest.raises(ValueError, match=r"could number the columns from 0 or from 1"):
        fusion.fit(S[y != 4], y[y != 4] + 1)  # labels 1 .. 4 of five columns
    with pytest.raises(ValueError, match=r"n_bootstrap=50.*binary"):
        BernsteinFusion(n_bootstrap=50).fit(S, y)
    with pytest.raises(ValueError, match=r"class-shared multi-class model has no bootstrap"):
        model.predict_interval(St)


def test_saves_and_loads_bit_for_bit(tmp_path):
    S, y, St, *_ = ensemble(800, C=4, seed=16, n_test=200)
    model = fusion.fit(S, np.array(["w", "x", "y", "z"])[y])
    model.save(tmp_path / "m.fusion")
    loaded = fusion.load(tmp_path / "m.fusion")
    assert loaded.multiclass_ == "shared"
    np.testing.assert_array_equal(loaded.predict_proba(St), model.predict_proba(St))
    np.testing.assert_array_equal(loaded.predict(St), model.predict(St))


def test_the_smallest_lam_warns_only_if_a_smaller_one_fits_better():
    # the label-smoothed member needs a flexible correction: its best lam is about 1e-5
    S, y, *_ = ensemble(3000, C=5, seed=3, smooth=True)
    kw = {"top_label_penalty": np.inf}
    with pytest.warns(UserWarning, match="lam=1, the smallest value of lam_grid"):
        BernsteinFusion(lam_grid=[10.0, 1.0], **kw).fit(S, y)
    # 1e-6 beats 1e-3 clearly, but one decade further down fits no better: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = BernsteinFusion(lam_grid=[1e-3, 1e-6], **kw).fit(S, y)
    assert model.lam_ == 1e-6
    at = {k[2]: v for k, v in model.cv_scores_.items() if not np.isfinite(k[3])}
    assert at[1e-6] < at[1e-3] - 5e-3


def test_per_class_model_is_still_available():
    S, y, St, *_ = ensemble(400, C=3, seed=17, n_test=100)
    model = BernsteinFusion(multiclass="per-class", lam=1e-3, degree=3).fit(S, y)
    assert model.multiclass_ == "per-class" and len(model.estimators_) == 3
    np.testing.assert_allclose(model.predict_proba(St).sum(axis=1), 1.0, atol=1e-9)
    assert BernsteinFusion(base=None, degree=2).fit(S, y).multiclass_ == "per-class"  # rank-only


def test_a_failed_fit_leaves_the_fitted_model_as_it_was():
    S, y, St, *_ = ensemble(600, C=4, seed=18, n_test=100)
    model = fusion.fit(S, y)
    before = model.predict_proba(St)
    bad = S.copy()
    bad[3, 1, 2] = np.nan
    with pytest.raises(ValueError, match=r"S\[3, 1, 2\] is nan.*missing='marginal'"):
        model.fit(bad, y)
    np.testing.assert_array_equal(model.predict_proba(St), before)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"base": None, "multiclass": "shared"}, r"rank-only model \(base=None\) fits"),
        ({"degree": "cv"}, r"degree='cv' is not available for the class-shared"),
        ({"degree": (3, 4, 5)}, r"one degree for every scorer"),
        ({"base": "logit"}, None),
    ],
)
def test_parameters_the_shared_model_cannot_take_are_clear_errors(params, match):
    S, y, *_ = ensemble(300, C=4, seed=19)
    if match is None:  # base='logit' needs probabilities: logits are refused
        with pytest.raises(ValueError, match=r"base='logit' takes class probabilities"):
            BernsteinFusion(**params).fit(np.log(S), y)
        return
    with pytest.raises(ValueError, match=match):
        BernsteinFusion(**params).fit(S, y)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(12, 60),
    C=st.integers(3, 7),
    M=st.integers(1, 3),
    seed=st.integers(0, 10_000),
    logits=st.booleans(),
)
def test_any_small_input_gives_monotone_distributions(n, C, M, seed, logits):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(n, M, C)) * rng.uniform(0.1, 8)
    S = L if logits else softmax(L, axis=2)
    y = rng.integers(0, C, n)
    # two folds (the penalties' cross-validations are most of the time of a fit this small)
    model = BernsteinFusion(cv=2).fit(S, y, classes=np.arange(C))
    p = model.predict_proba(S)
    assert np.all((p > 0) & (p < 1)) and np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    X = np.repeat(S[:1], 20, axis=0)
    X[:, 0, 0] = (
        np.linspace(S[0, 0, 0] - 3, S[0, 0, 0] + 3, 20) if logits else np.linspace(0, 1, 20)
    )
    assert np.all(np.diff(model.predict_proba(X)[:, 0]) >= -1e-12)


def test_auto_keeps_the_per_class_model_where_cross_validation_prefers_it(monkeypatch):
    # class-specific temperatures (class 0 sharp, class 1 flat in the first scorer, the
    # reverse in the second): one slope per class can follow them, one shared weight not
    import fusion.bernstein.plan as est

    monkeypatch.setattr(est, "AUTO_PER_CLASS_ROWS", 300)
    rng = np.random.default_rng(20)
    n, C = 2_000, 3
    L = 1.2 * rng.normal(size=(n + 10_000, C))
    y = labels_of(rng, L)
    A = (L + 0.3 * rng.normal(size=L.shape)) * [5.0, 0.2, 1.0]
    B = (L + 0.8 * rng.normal(size=L.shape)) * [0.2, 4.0, 1.0]
    S = np.stack([softmax(A, 1), softmax(B, 1)], axis=1)
    # (without the top-label correction, which brings the shared model within one standard
    # error of the per-class one here: the choice between them is what is tested)
    kw = {"degree": 4, "top_label_penalty": np.inf}
    model = BernsteinFusion(**kw).fit(S[:n], y[:n])
    cv = model.multiclass_cv_
    assert set(cv) == {"shared", "per-class", "se"}
    want = "per-class" if cv["per-class"] + cv["se"] < cv["shared"] else "shared"
    assert model.multiclass_ == want == "per-class"
    shared = BernsteinFusion(**kw, multiclass="shared").fit(S[:n], y[:n])
    assert log_loss(model.predict_proba(S[n:]), y[n:]) < log_loss(
        shared.predict_proba(S[n:]), y[n:]
    )
    # below the rows the per-class model needs, auto is the shared model alone
    monkeypatch.setattr(est, "AUTO_PER_CLASS_ROWS", 10_000)
    small = BernsteinFusion(**kw).fit(S[:n], y[:n])
    assert small.multiclass_ == "shared" and "multiclass_cv_" not in vars(small)
    np.testing.assert_array_equal(small.predict_proba(S[n:]), shared.predict_proba(S[n:]))


def test_auto_keeps_the_shared_model_when_the_per_class_one_cannot_be_fitted(monkeypatch):
    # a network constant in a class: the per-class model refuses it (a constant score
    # column), the shared model takes it in its stride; auto used to fail the whole fit
    import fusion.bernstein.plan as est

    monkeypatch.setattr(est, "AUTO_PER_CLASS_ROWS", 300)
    rng = np.random.default_rng(21)
    n, C = 3_000, 3
    L = 1.5 * rng.normal(size=(n, C))
    y = labels_of(rng, L)
    S = np.stack([softmax(L + 0.5 * rng.normal(size=L.shape), 1), np.full((n, C), 1 / C)], 1)
    with pytest.warns(
        UserWarning, match=r"kept the class-shared model.*score column 1 is constant"
    ):
        model = fusion.fit(S, y)
    shared = BernsteinFusion(multiclass="shared").fit(S, y)
    assert model.multiclass_ == "shared" and "multiclass_cv_" not in vars(model)
    np.testing.assert_array_equal(model.predict_proba(S[:100]), shared.predict_proba(S[:100]))


def test_auto_counts_rows_not_weight_for_the_per_class_comparison():
    # one tiny weight once made every other row count as thousands (weights were scaled
    # by their smallest): 150 rows were sent to the per-class comparison
    from fusion.bernstein.plan import multiclass_model

    rng = np.random.default_rng(22)
    n, C = 150, 3
    S = softmax(rng.normal(size=(n, 2, C)), axis=2)
    index = np.arange(n) % C
    w = rng.exponential(size=n)
    w[0] = 1e-6
    assert multiclass_model(BernsteinFusion(), S, index, w) == "shared"
    assert multiclass_model(BernsteinFusion(), S, index, w * 1e9) == "shared"


def test_auto_with_zero_weights_refits_bit_identically(monkeypatch):
    # rows of zero weight are in no test fold; the per-class candidate's coupling once
    # read their (never written) out-of-fold probabilities from np.empty's memory
    import fusion.bernstein.plan as est

    monkeypatch.setattr(est, "AUTO_PER_CLASS_ROWS", 100)
    rng = np.random.default_rng(23)
    n, C = 900, 3
    L = 1.5 * rng.normal(size=(n, C))
    y = labels_of(rng, L)
    A, B = (L + rng.normal(size=(2, n, C))) * [[[2.0, 0.5, 1.0]], [[0.5, 2.0, 1.0]]]
    S = np.stack([softmax(A, 1), softmax(B, 1)], axis=1)
    w = rng.exponential(size=n) * (rng.random(n) > 0.2)
    kw = {"degree": 3, "top_label_penalty": np.inf}
    first = BernsteinFusion(**kw).fit(S, y, sample_weight=w)
    assert "multiclass_cv_" in vars(first)
    empty = np.empty

    def poisoned(shape, dtype=float, **kwargs):  # memory np.empty may hand out: NaN
        out = empty(shape, dtype=dtype, **kwargs)
        if out.dtype.kind == "f":
            out.fill(np.nan)
        return out

    monkeypatch.setattr(np, "empty", poisoned)
    again = BernsteinFusion(**kw).fit(S, y, sample_weight=w)
    monkeypatch.setattr(np, "empty", empty)
    assert first.multiclass_cv_ == again.multiclass_cv_
    np.testing.assert_array_equal(first.predict_proba(S), again.predict_proba(S))
    # and the zero-weight rows are no rows
    kept = w > 0
    alone = BernsteinFusion(**kw).fit(S[kept], y[kept], sample_weight=w[kept])
    np.testing.assert_allclose(alone.predict_proba(S), first.predict_proba(S), atol=1e-12)


def test_a_network_of_hard_labels_is_fitted_with_its_repeats_spread_over_the_folds():
    # one-hot rows: content keys sum over the classes, so every row is one of two contents
    # (its label's score 1 or 0) and the content folds left some fold without rows (the
    # fit was refused). Repeats are now dealt over the folds in row order, with a warning;
    # the fit recovers P(label | predicted class), the hard network's confusion matrix.
    rng = np.random.default_rng(24)
    n, C = 4_000, 8
    y = rng.integers(0, C, n)
    right = rng.random(n) < np.linspace(0.5, 0.9, C)[y]  # per-class accuracy
    pred = np.where(right, y, (y + rng.integers(1, C, n)) % C)
    with pytest.warns(UserWarning, match=r"2 distinct contents.*order of occurrence"):
        model = fusion.fit(np.eye(C)[pred], y)
    assert model.n_classes_ == C
    P = model.predict_proba(np.eye(C))
    empirical = np.array([np.bincount(y[pred == k], minlength=C) / (pred == k).sum()
                          for k in range(C)])  # fmt: skip
    accuracy = (pred == y).mean()  # the one-parameter model: the accuracy on the diagonal
    pooled = np.full((C, C), (1 - accuracy) / (C - 1))
    np.fill_diagonal(pooled, accuracy)

    def loss(Q):
        return -np.mean(np.log(Q[pred, y]))

    # between the pooled accuracy and the confusion matrix's maximum likelihood (a
    # class-shared model with per-class biases cannot reach the latter)
    assert loss(empirical) < loss(P) < loss(pooled) - 0.005
    assert loss(P) < loss(empirical) + 0.035
    assert np.all(P > 0) and np.all(P < 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(fusion.fit(np.eye(C)[pred], y).predict_proba(np.eye(C)), P)
    # folds of rows that do not repeat are those of the content keys, as before
    from fusion.bernstein.folds import FoldRule, pair_keys

    rule = FoldRule.of(5, 0, np.ones(n, dtype=bool))
    Z = rng.normal(size=(2, n, C))
    fold, k = rule.pair_folds(Z, y, 1.0)
    np.testing.assert_array_equal(fold, pair_keys(Z, y, rule.seed) % np.uint64(5))
