import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sk_log_loss

from fusion import BernsteinFusion, metrics


def test_brier_and_log_loss_small_case():
    y = np.array([0, 1, 1, 0])
    p = np.array([0.1, 0.8, 0.6, 0.5])
    assert metrics.brier_score(y, p) == pytest.approx((0.01 + 0.04 + 0.16 + 0.25) / 4)
    expected = -np.mean(np.log([0.9, 0.8, 0.6, 0.5]))
    assert metrics.log_loss(y, p) == pytest.approx(expected)
    # predict_proba output and other labels with pos_label
    assert metrics.brier_score(
        np.array(["a", "b", "b", "a"]), np.column_stack([1 - p, p]), pos_label="b"
    ) == pytest.approx(0.115)


def test_binned_ece_hand_computed():
    y = np.array([0, 0, 1, 1, 1, 0])
    p = np.array([0.05, 0.15, 0.15, 0.95, 0.85, 1.0])
    # uniform 2 bins: [0, .5) holds 0.05, 0.15, 0.15 (obs 1/3, mean 0.35/3)
    #                 [.5, 1] holds 0.95, 0.85, 1.0 (obs 2/3, mean 2.8/3)
    g1 = abs(1 / 3 - 0.35 / 3)
    g2 = abs(2 / 3 - 2.8 / 3)
    assert metrics.binned_ece(y, p, n_bins=2) == pytest.approx(0.5 * g1 + 0.5 * g2)
    assert metrics.binned_ece(y, p, n_bins=2, weighted=False) == pytest.approx((g1 + g2) / 2)
    assert metrics.binned_mce(y, p, n_bins=2) == pytest.approx(max(g1, g2))


def test_last_uniform_bin_is_closed():
    obs, pred, count = metrics.reliability_bins([1, 1], [1.0, 0.95], n_bins=10)
    assert count.tolist() == [2.0]


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_bins_agree_with_sklearn_calibration_curve(strategy):
    rng = np.random.default_rng(0)
    p = rng.random(1000)
    y = (rng.random(1000) < p**1.5).astype(int)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy=strategy)
    obs, pred, count = metrics.reliability_bins(y, p, n_bins=10, strategy=strategy)
    np.testing.assert_allclose(obs, prob_true)
    np.testing.assert_allclose(pred, prob_pred)
    if strategy == "quantile":
        assert np.all(count == 100)


def _c_emp_brute(y, p):
    n = len(y)
    cuts = np.concatenate([[-np.inf], np.unique(p)])
    best = 0.0
    for a in cuts:
        for b in cuts:
            if b <= a:
                continue
            sel = (p > a) & (p <= b)
            best = max(best, abs(np.sum(y[sel] - p[sel])))
    return best / n


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 0.9, 1.0])),
        min_size=1,
        max_size=30,
    )
)
def test_calibration_measure_equals_brute_force(rows):
    y = np.array([r[0] for r in rows], dtype=float)
    p = np.array([r[1] for r in rows])
    assert metrics.calibration_measure(y, p) == pytest.approx(_c_emp_brute(y, p), abs=1e-12)


def test_calibration_measure_is_zero_for_perfect_bins():
    y = np.array([1, 0, 1, 1, 0, 0, 0, 0])
    p = np.array([0.5, 0.5, 0.75, 0.75, 0.75, 0.75, 0.0, 0.0])
    # each group of tied predictions has mean label equal to the prediction
    y = np.array([1, 0, 1, 1, 1, 0, 0, 0])
    assert metrics.calibration_measure(y, p) == pytest.approx(0.0)


def test_grid_table_matches_brute_force(scores_2d):
    S, y, _ = scores_2d
    model = BernsteinFusion(degree=3).fit(S, y)
    rng = np.random.default_rng(5)
    S_test = rng.normal(size=(3000, 2))
    y_test = rng.integers(0, 2, size=3000)
    table = metrics.grid_calibration_table(model, S_test, y_test, bins=4, min_count=100)
    U = model.ecdf_.transform(S_test)
    gaps = []
    for i in range(4):
        for j in range(4):
            lo_i, lo_j = i / 4, j / 4
            in_i = (U[:, 0] >= lo_i) & ((U[:, 0] < lo_i + 0.25) | (i == 3))
            in_j = (U[:, 1] >= lo_j) & ((U[:, 1] < lo_j + 0.25) | (j == 3))
            sel = in_i & in_j
            if sel.sum() >= 100:
                f = model.calibrating_function(np.array([[lo_i + 0.125, lo_j + 0.125]]))[0]
                gaps.append(abs(y_test[sel].mean() - f))
    assert table.n_kept == len(gaps) > 0
    assert metrics.grid_ece(model, S_test, y_test, bins=4, min_count=100) == pytest.approx(
        np.mean(gaps)
    )
    assert metrics.grid_mce(model, S_test, y_test, bins=4, min_count=100) == pytest.approx(
        np.max(gaps)
    )
    assert table.count.sum() <= 3000 and np.all(table.count >= 100)


def test_grid_metrics_raise_when_no_cell_qualifies(scores_2d):
    S, y, _ = scores_2d
    model = BernsteinFusion(degree=2).fit(S, y)
    with pytest.raises(ValueError, match="no grid cell"):
        metrics.grid_ece(model, S, y, min_count=10_000)


def test_grid_metrics_use_estimator_labels():
    rng = np.random.default_rng(2)
    S = rng.normal(size=(2000, 2))
    y = np.where(rng.random(2000) < 0.5, "yes", "no")
    model = BernsteinFusion(degree=1).fit(S, y)
    ece_str = metrics.grid_ece(model, S, y, bins=2, min_count=50)
    model01 = BernsteinFusion(degree=1).fit(S, (y == "yes").astype(int))
    assert ece_str == pytest.approx(
        metrics.grid_ece(model01, S, (y == "yes").astype(int), bins=2, min_count=50)
    )
    with pytest.raises(ValueError, match="not seen in fit"):
        metrics.grid_ece(model, S, np.where(y == "yes", "maybe", "no"), bins=2, min_count=50)


@pytest.mark.parametrize(
    "y,p,match",
    [
        ([0, 1], [0.2], "labels"),
        ([0, 2], [0.2, 0.3], "0/1"),
        ([0, 1], [0.2, 1.3], r"\[0, 1\]"),
        ([0, 1], [0.2, np.nan], "non-finite"),
    ],
)
def test_metric_input_errors(y, p, match):
    with pytest.raises(ValueError, match=match):
        metrics.brier_score(y, p)


# -- labels of any kind, multi-class metrics ----------------------------------------------

BINARY_METRICS = [
    metrics.brier_score,
    metrics.log_loss,
    metrics.binned_ece,
    metrics.binned_mce,
    metrics.calibration_measure,
    metrics.top_label_ece,
    metrics.classwise_ece,
]


def _softmax_rows(rng, n, C, scale=1.5):
    z = scale * rng.normal(size=(n, C))
    P = np.exp(z - z.max(1, keepdims=True))
    return P / P.sum(1, keepdims=True)


@pytest.mark.parametrize("metric", BINARY_METRICS)
def test_binary_metrics_accept_string_labels_with_pos_label(metric):
    rng = np.random.default_rng(0)
    p = rng.random(300)
    y01 = (rng.random(300) < p).astype(int)
    words = np.where(y01 == 1, "spam", "ham")
    expected = metric(y01, p)
    assert metric(words, p, pos_label="spam") == pytest.approx(expected, abs=1e-12)
    # predict_proba output: columns follow the sorted labels ("ham" < "spam"), no pos_label.
    assert metric(words, np.column_stack([1 - p, p])) == pytest.approx(expected, abs=1e-12)
    # The negative class named positive flips the problem: same as 1 - y against 1 - p.
    assert metric(words, 1 - p, pos_label="ham") == pytest.approx(metric(1 - y01, 1 - p), abs=1e-12)
    assert metric(y01.astype(bool), p) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("metric", BINARY_METRICS)
def test_binary_metrics_reject_unusable_labels(metric):
    p = np.array([0.2, 0.7, 0.6])
    with pytest.raises(ValueError, match="pos_label"):
        metric(np.array(["a", "b", "b"]), p)  # strings without pos_label
    with pytest.raises(ValueError, match="not one of the labels"):
        metric(np.array(["a", "b", "b"]), p, pos_label="B")
    with pytest.raises(ValueError, match="two labels"):
        metric(np.array(["a", "b", "c"]), p, pos_label="b")


def test_binary_scores_match_sklearn_with_string_labels():
    rng = np.random.default_rng(1)
    p = rng.uniform(0.01, 0.99, 500)
    y = np.where(rng.random(500) < p, "pos", "neg")
    assert metrics.brier_score(y, p, pos_label="pos") == pytest.approx(
        brier_score_loss(y, p, pos_label="pos")
    )
    assert metrics.log_loss(y, np.column_stack([1 - p, p])) == pytest.approx(
        sk_log_loss(y, np.column_stack([1 - p, p]))
    )


@pytest.mark.parametrize("seed", range(3))
def test_multiclass_brier_and_log_loss_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    classes = np.array(["ant", "bee", "cat", "dog"])
    P = _softmax_rows(rng, 400, 4)
    y = classes[[rng.choice(4, p=row) for row in P]]
    # Convention: sum over classes of squared errors, mean over rows; sklearn's [0, 2] range.
    assert metrics.brier_score(y, P) == pytest.approx(brier_score_loss(y, P))
    onehot = (y[:, None] == classes).astype(float)
    assert metrics.brier_score(y, P) == pytest.approx(np.mean(np.sum((P - onehot) ** 2, 1)))
    assert metrics.log_loss(y, P) == pytest.approx(sk_log_loss(y, P))
    # A class absent from y: labels= names the columns, as in scikit-learn.
    keep = y != "bee"
    assert metrics.brier_score(y[keep], P[keep], labels=classes) == pytest.approx(
        brier_score_loss(y[keep], P[keep], labels=classes)
    )
    assert metrics.log_loss(y[keep], P[keep], labels=classes) == pytest.approx(
        sk_log_loss(y[keep], P[keep], labels=classes)
    )


def test_labels_name_the_columns_in_their_order():
    # a fused model fitted with classes= in the networks' order has classes_ in that order;
    # labels=classes_ scores its predict_proba as the same matrix with sorted columns
    rng = np.random.default_rng(5)
    P = _softmax_rows(rng, 400, 4)
    names = np.array(["owl", "cat", "yak", "emu"])  # the columns' order
    y = names[[rng.choice(4, p=row) for row in P]]
    order = np.argsort(names)
    for metric in (metrics.brier_score, metrics.log_loss, metrics.top_label_ece,
                   metrics.classwise_ece, metrics.top_label_smooth_ece):  # fmt: skip
        assert metric(y, P, labels=names) == pytest.approx(metric(y, P[:, order]), abs=1e-12)
    keep = y != "cat"  # a class absent from y, the columns unsorted
    assert metrics.log_loss(y[keep], P[keep], labels=names) == pytest.approx(
        sk_log_loss(y[keep], P[keep][:, order], labels=names[order])
    )


def test_multiclass_metrics_follow_sorted_labels_not_order_of_appearance():
    rng = np.random.default_rng(2)
    P = _softmax_rows(rng, 300, 3)
    codes = np.array([rng.choice(3, p=row) for row in P])
    # Non-contiguous integers and strings whose sorted order is a permutation of the codes.
    for classes in (np.array([3, 10, 42]), np.array(["zebra", "apple", "mango"])):
        order = np.argsort(classes)  # column k of the sorted problem is code order[k]
        y = classes[codes]
        P_sorted = P[:, order]
        for metric in (
            metrics.brier_score,
            metrics.log_loss,
            metrics.top_label_ece,
            metrics.classwise_ece,
        ):
            assert metric(y, P_sorted) == pytest.approx(metric(codes, P), abs=1e-12)


def _ece_brute(target, score, n_bins):
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        sel = (score >= lo) & ((score < hi) | (b == n_bins - 1))
        if sel.any():
            total += sel.sum() / len(score) * abs(target[sel].mean() - score[sel].mean())
    return total


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(3, 6),
    st.integers(1, 20),
    st.sampled_from([0.3, 1.0, 4.0]),
)
def test_top_label_and_classwise_ece_equal_brute_force(seed, C, n_bins, scale):
    rng = np.random.default_rng(seed)
    P = _softmax_rows(rng, 60, C, scale)
    y = rng.integers(0, C, 60)
    y[:C] = np.arange(C)  # every class present
    top = P.argmax(1)
    expected_top = _ece_brute((top == y).astype(float), P.max(1), n_bins)
    assert metrics.top_label_ece(y, P, n_bins=n_bins) == pytest.approx(expected_top, abs=1e-12)
    expected_cw = np.mean([_ece_brute((y == k).astype(float), P[:, k], n_bins) for k in range(C)])
    assert metrics.classwise_ece(y, P, n_bins=n_bins) == pytest.approx(expected_cw, abs=1e-12)


def test_multiclass_ece_hand_case():
    y = np.array(["a", "b", "c", "c"])
    P = np.array(
        [
            [0.9, 0.05, 0.05],  # top a, right, bin [0.5, 1]
            [0.2, 0.7, 0.1],  # top b, right, bin [0.5, 1]
            [0.4, 0.2, 0.4],  # tie a/c -> first column a, wrong, bin [0, 0.5)
            [0.1, 0.3, 0.6],  # top c, right, bin [0.5, 1]
        ]
    )
    # Top label, 2 bins: low bin {0.4} accuracy 0; high bin {0.9, 0.7, 0.6} accuracy 1.
    expected = 0.25 * 0.4 + 0.75 * (1 - (0.9 + 0.7 + 0.6) / 3)
    assert metrics.top_label_ece(y, P, n_bins=2) == pytest.approx(expected)
    acc, conf, count = metrics.top_label_bins(y, P, n_bins=2)
    np.testing.assert_allclose(acc, [0.0, 1.0])
    np.testing.assert_allclose(count, [1, 3])
    # Classwise, 2 bins: class a: low {0.2, 0.4, 0.1} none is a (gap 0.7/3), high {0.9} is a
    # (gap 0.1); class b: all low {0.05, 0.2, 0.3} + high {0.7}; class c: low {0.05, 0.1, 0.4}
    # with one c, high {0.6} is c.
    ece_a = 0.75 * (0.7 / 3) + 0.25 * 0.1
    ece_b = 0.75 * (0.55 / 3) + 0.25 * 0.3
    ece_c = 0.75 * abs(1 / 3 - 0.55 / 3) + 0.25 * 0.4
    assert metrics.classwise_ece(y, P, n_bins=2) == pytest.approx((ece_a + ece_b + ece_c) / 3)


def test_top_label_ece_of_binary_input_uses_both_classes():
    rng = np.random.default_rng(3)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(int)
    two = np.column_stack([1 - p, p])
    assert metrics.top_label_ece(y, p) == pytest.approx(metrics.top_label_ece(y, two))
    acc, conf, _ = metrics.top_label_bins(y, p)
    assert conf.min() >= 0.5  # confidence is max(p, 1 - p)


def test_multiclass_ece_is_small_for_a_calibrated_forecaster():
    # Labels drawn from P itself: P is calibrated, so both ECEs shrink with n; an
    # over-confident version of the same forecasts (temperature 1/3) is far off.
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(20_000, 5))
    P = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    y = (rng.random((20_000, 1)) > np.cumsum(P, 1)).sum(1)
    hot = np.exp(3 * logits) / np.exp(3 * logits).sum(1, keepdims=True)
    assert metrics.top_label_ece(y, P) < 0.015 < 0.1 < metrics.top_label_ece(y, hot)
    assert metrics.classwise_ece(y, P) < 0.01 < 0.03 < metrics.classwise_ece(y, hot)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: metrics.brier_score([0, 1, 2], np.full((3, 4), 0.25)), "labels="),
        (lambda: metrics.brier_score([0, 1, 2], np.full((3, 3), 0.3)), "sum to 1"),
        (
            lambda: metrics.top_label_ece(["b", "a", "c"], np.eye(3), labels=["c", "b", "c"]),
            "distinct",
        ),
        (lambda: metrics.log_loss(["b", "a"], np.eye(2), labels=["b", "a"]), "sorted"),
        (lambda: metrics.classwise_ece([0, 1, 5], np.eye(3), labels=[0, 1, 2]), r"\[5\]"),
        (lambda: metrics.log_loss([0, 1, 2], np.eye(3), labels=[0, 1]), "2 classes"),
        (lambda: metrics.top_label_ece([0, 1, 2], np.eye(3), pos_label=1), "labels= instead"),
        (lambda: metrics.binned_ece([0, 1, 2], np.eye(3)), "binary"),
        (lambda: metrics.top_label_ece([0, 1], [[0.5, 0.5], [1, 0]], n_bins=0), "n_bins"),
        (lambda: metrics.top_label_ece(np.array([0, "a"], dtype=object), np.eye(2)), "one type"),
        (lambda: metrics.brier_score(np.zeros((2, 2)), [0.1, 0.2]), "shape"),
        (lambda: metrics.log_loss([0, 1], [0.1, 0.2], eps=0.7), "eps"),
    ],
)
def test_multiclass_input_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_binary_labels_argument_names_an_absent_class():
    # Only negatives in y: 0/1 labels need nothing, other labels need labels= or pos_label.
    p = np.array([0.1, 0.3])
    assert metrics.brier_score(["no", "no"], np.column_stack([1 - p, p]), labels=["no", "yes"]) == (
        pytest.approx(np.mean(p**2))
    )
    assert metrics.brier_score(["no", "no"], p, labels=["no", "yes"]) == pytest.approx(
        np.mean(p**2)
    )
    assert metrics.brier_score([0, 0], np.column_stack([1 - p, p])) == pytest.approx(np.mean(p**2))
    with pytest.raises(ValueError, match="labels="):
        metrics.brier_score(["no", "no"], np.column_stack([1 - p, p]))


def test_grid_metrics_take_bool_labels_and_refuse_unfitted_estimators(scores_2d):
    S, y, _ = scores_2d
    model = BernsteinFusion(degree=2).fit(S, y.astype(bool))
    model01 = BernsteinFusion(degree=2).fit(S, y)
    assert metrics.grid_ece(model, S, y.astype(bool), bins=2, min_count=20) == pytest.approx(
        metrics.grid_ece(model01, S, y, bins=2, min_count=20)
    )
    with pytest.raises(ValueError, match="bins"):
        metrics.grid_ece(model01, S, y, bins=0)
    with pytest.raises(ValueError, match="fitted|fit"):
        metrics.grid_ece(BernsteinFusion(), S, y)


def test_grid_table_scales_to_many_scores_without_materializing_the_grid():
    # 10**8 cells at M = 8: only occupied cells are counted.
    rng = np.random.default_rng(6)
    S = rng.normal(size=(400, 8))
    y = (S.sum(1) + rng.normal(size=400) > 0).astype(int)
    model = BernsteinFusion(degree=1, structure="additive").fit(S, y)
    table = metrics.grid_calibration_table(model, S, y, bins=10, min_count=1)
    assert table.n_cells_total == 10**8
    assert table.count.sum() == 400 and table.n_nonempty == table.n_kept


def test_docstring_examples_run():
    import doctest

    from fusion.metrics import binned, scores

    for module in (scores, binned):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0


def test_shared_parameter_texts_are_filled_into_every_public_docstring():
    import inspect
    import re

    from fusion import plot

    for module in (metrics, plot):
        for name in module.__all__:
            doc = inspect.getdoc(getattr(module, name)) or ""
            assert not re.search(r"^\s*\{\w+\}\s*$", doc, re.MULTILINE), name
    # The same parameter reads the same wherever it is documented.
    pos_label = "pos_label : optional\n    The positive label when ``y`` is not 0/1 or bool."
    for f in (metrics.binned_ece, metrics.calibration_measure, plot.reliability_bands):
        assert pos_label in inspect.getdoc(f)


def test_fill_doc_indents_each_fragment_like_its_placeholder_and_refuses_unknown_names():
    import inspect

    from fusion.metrics._docs import fill_doc

    def f():
        """Summary.

        Parameters
        ----------
        {x}
        """

    fill_doc({"x": "x : int\n    The x."})(f)
    assert inspect.getdoc(f) == "Summary.\n\nParameters\n----------\nx : int\n    The x."

    def g():
        """Summary.

        {missing}
        """

    with pytest.raises(KeyError, match="missing"):
        fill_doc({})(g)
    g.__doc__ = None  # as under python -OO
    assert fill_doc({})(g).__doc__ is None
