import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve

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
