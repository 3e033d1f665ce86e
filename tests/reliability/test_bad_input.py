"""Bad input, for every registered method: a ValueError that names the problem, never NaN.

Every test runs with warnings turned into errors, so a NumPy RuntimeWarning (or any other
warning) on the way to the error fails the test, as does an IndexError or TypeError.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

import fusion

from ._methods import METHOD_NAMES, OVERPARAMETRIZED, make, scores

pytestmark = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.parametrize("name", METHOD_NAMES),
]


def _raises(name, S, y, match, **fit_kw):
    with pytest.raises(ValueError, match=match):
        make(name).fit(S, y, **fit_kw)


def _assert_probabilities(p, n):
    assert p.shape == (n, 2)
    assert np.all(np.isfinite(p))
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


# -- scores at fit time --------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_scores(name, bad):
    S, y = scores(60)
    S[7, 1] = bad
    if np.isnan(bad):  # a missing score: an error unless missing="marginal"
        _raises(name, S, y, r"NaN at row 7, column 1.*missing='marginal'")
        return
    # +-inf (a saturated logit) is ranked at the end: the same fit as the column's extreme.
    T = S.copy()
    T[7, 1] = S[:, 1].max() + 1.0 if bad > 0 else S[:, 1].min() - 1.0
    p = make(name).fit(S, y).predict_proba(S)
    np.testing.assert_allclose(p, make(name).fit(T, y).predict_proba(T), atol=1e-12)


@pytest.mark.parametrize("shape", [(), (60, 2, 2, 1)])
def test_wrong_number_of_dimensions(name, shape):
    S = np.arange(int(np.prod(shape)), dtype=float).reshape(shape)
    _raises(name, S, np.arange(60) % 2, rf"2-D.*got {len(shape)} dimensions")


def test_three_dimensional_scores_are_multiclass_scores(name):
    # (n, M, C) is multi-class input (issue 13): one class column is an error, and methods
    # without multi-class support say which ones have it.
    S = np.arange(120, dtype=float).reshape(60, 2, 1)
    _raises(name, S, np.arange(60) % 2, r"\(n, M, C\) = \(60, 2, 1\): C = 1 class column")
    S = np.random.default_rng(0).random((60, 2, 3))
    y = np.arange(60) % 3
    if make(name)._supports_multiclass:
        assert make(name).fit(S, y).predict_proba(S).shape == (60, 3)
    else:
        _raises(name, S, y, r"binary scores only.*supported by BernsteinFusion")


def test_one_dimensional_scores(name):
    S, y = scores(60)
    est = make(name)
    if est.accepts_single_score:  # documented: a 1-D array is one score column
        assert est.fit(S[:, 0], y).n_features_in_ == 1
    else:
        _raises(name, S[:, 0], y, r"2-D of shape \(n, M\).*1-D array of length 60")


def test_single_column_for_multiscore_method(name):
    S, y = scores(60)
    if make(name).accepts_single_score:
        pytest.skip("the method accepts a single score column")
    _raises(name, S[:, :1], y, r"M >= 2 scores, got 1 column \(1 feature\(s\)\)")


def test_empty_rows(name):
    _raises(name, np.empty((0, 2)), np.empty(0), r"S is empty \(0 rows\)")


def test_empty_columns(name):
    _raises(name, np.empty((10, 0)), np.arange(10) % 2, r"S has no columns")


def test_single_row(name):
    _raises(name, [[0.1, 0.2]], [1], r"at least 2 training rows are needed, got 1 sample")


def test_length_mismatch(name):
    S, y = scores(60)
    _raises(name, S, y[:-1], r"S has 60 rows but y has 59 labels")


def test_sparse_scores(name):
    S, y = scores(60)
    _raises(name, sp.csr_matrix(S), y, r"sparse input is not supported")


def test_ragged_lists(name):
    _raises(name, [[0.1, 0.2], [0.3]], [0, 1], r"rectangular")


def test_non_numeric_scores_list(name):
    S, y = scores(20)
    rows = S.tolist()
    rows[4][1] = "high"
    _raises(name, rows, y, r"score column 1 holds a non-numeric value 'high' at row 4")


def test_non_numeric_scores_object_array(name):
    S, y = scores(20)
    S = S.astype(object)
    S[3, 0] = {"not": "a score"}
    _raises(name, S, y, r"score column 0 holds a non-numeric value .* at row 3")


def test_non_numeric_scores_dataframe(name):
    S, y = scores(20)
    df = pd.DataFrame({"a": S[:, 0], "b": np.where(S[:, 1] > 0.5, "high", "low")})
    _raises(name, df, y, r"score column 'b' has non-numeric dtype")


@pytest.mark.parametrize("kind", ["array", "object", "dataframe"])
def test_numbers_as_text_are_told_to_convert(name, kind):
    S, y = scores(20)
    text = S.astype(str)
    S = {"array": text, "object": text.astype(object), "dataframe": pd.DataFrame(text)}[kind]
    _raises(name, S, y, r"as text.*astype\(float\)")


def test_scores_as_one_sequence_per_scorer_are_told_to_stack(name):
    S, y = scores(60)
    for columns in ([list(S[:, 0]), list(S[:, 1])], (S[:, 0], S[:, 1])):
        _raises(name, columns, y, r"2 sequences of 60 values.*np\.column_stack\(S\)")
    columns = [pd.Series(S[:, 0]), pd.Series(S[:, 1])]
    _raises(name, columns, y, r"2 sequences of 60 values.*np\.column_stack\(S\)")


def test_a_generator_or_a_dict_of_scores_is_explained(name):
    S, y = scores(20)
    _raises(name, (row for row in S), y, r"iterator \(generator\).*np\.array\(list\(S\)\)")
    _raises(name, {"a": S[:, 0], "b": S[:, 1]}, y, r"dict of 2 entries.*pd\.DataFrame\(S\)")


def test_complex_scores(name):
    S, y = scores(20)
    _raises(name, S + 1j, y, r"Complex data not supported")


def test_constant_column(name):
    S, y = scores(60)
    S[:, 1] = 0.25
    with pytest.raises(fusion.ConstantColumnError, match=r"score column 1 is constant.*Drop"):
        make(name).fit(S, y)


# -- labels --------------------------------------------------------------------------------------


def test_missing_labels(name):
    S, y = scores(60)
    _raises(name, S, None, r"requires y to be passed")


def test_one_class(name):
    S, _ = scores(60)
    _raises(name, S, np.ones(60), r"y holds a single class \(1.0\)")


def test_three_classes(name):
    S, y = scores(60)
    y = y.copy()
    y[:3] = 2
    _raises(name, S, y, r"Only binary classification is supported.*found 3")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_label(name, bad):
    S, y = scores(60)
    y = y.astype(float)
    y[11] = bad
    _raises(name, S, y, rf"y contains {'NaN' if np.isnan(bad) else 'inf'} at row 11")


def test_missing_object_label(name):
    S, y = scores(60)
    y = np.where(y == 1, "pos", "neg").astype(object)
    y[5] = None
    _raises(name, S, y, r"y contains a missing label \(None\) at row 5")


def test_continuous_labels(name):
    S, _ = scores(60)
    _raises(name, S, np.linspace(0, 1, 60), r"y looks continuous")


def test_incomparable_labels(name):
    S, y = scores(60)
    y = y.astype(object)
    y[0] = "a"
    _raises(name, S, y, r"y mixes label types")


def test_complex_labels(name):
    S, y = scores(60)
    _raises(name, S, y + 1j, r"Complex data not supported")


# -- sample weights ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "weights, match",
    [
        (lambda n: -np.ones(n), r"non-negative; found -1.0 at row 0"),
        (lambda n: np.r_[np.nan, np.ones(n - 1)], r"finite; found NaN at row 0"),
        (lambda n: np.ones(n - 1), r"sample_weight must have shape \(60,\)"),
        (lambda n: np.zeros(n), r"sums to zero"),
        (lambda n: np.array(["a"] * n), r"must be numeric"),
    ],
    ids=["negative", "nan", "length", "all-zero", "strings"],
)
def test_bad_sample_weight(name, weights, match):
    S, y = scores(60)
    if not make(name)._supports_sample_weight:
        match = r"does not support sample_weight"
    _raises(name, S, y, match, sample_weight=weights(60))


def test_sample_weight_removing_a_class(name):
    S, y = scores(60)
    if not make(name)._supports_sample_weight:
        pytest.skip("the method takes no sample_weight")
    _raises(name, S, y, r"sample_weight is zero on every row of class 1", sample_weight=1.0 - y)


# -- data that are unusual but legitimate, or too small for the model ----------------------------


def test_duplicated_rows_fit(name):
    # Repeated rows are ordinary data (ties, repeated measurements): they must fit.
    S, y = scores(40)
    S2, y2 = np.vstack([S, S, S[:10]]), np.concatenate([y, y, y[:10]])
    est = make(name).fit(S2, y2)
    p = est.predict_proba(S2)
    _assert_probabilities(p, len(y2))
    np.testing.assert_array_equal(p[:40], p[40:80])


def test_heavily_tied_scores_fit(name):
    S, y = scores(80)
    S = np.round(S, 0)  # a handful of distinct values per column
    p = make(name).fit(S, y).predict_proba(S)
    _assert_probabilities(p, 80)


def test_fewer_samples_than_coefficients(name):
    S, y = scores(12)
    if name in OVERPARAMETRIZED:
        params, fragment = OVERPARAMETRIZED[name]
        with pytest.raises(ValueError, match=fragment):
            make(name, **params).fit(S, y)
        return
    try:
        est = make(name).fit(S, y)
    except ValueError as err:
        assert str(err), "the error must say what is wrong"
        return
    _assert_probabilities(est.predict_proba(S), 12)


# -- at predict time -----------------------------------------------------------------------------


@functools.cache
def _fitted(name):
    # One fit per method for all predict-time tests (they must not modify it).
    S, y = scores(80, seed=3)
    return make(name).fit(S, y), S


@pytest.fixture
def fitted(name):
    return _fitted(name)


def test_failed_refit_leaves_the_previous_model(name):
    # The fit runs on a copy whose state is adopted only at the end: a failed refit never
    # puts the new fit's ECDF next to the old fit's parameters, nor loses the old model.
    S, y = scores(60)
    est = make(name).fit(S, y)
    before = est.predict_proba(S)
    state = dict(vars(est))
    T = S.copy()
    T[:, 1] = 0.5
    with pytest.raises(ValueError, match=r"constant"):
        est.fit(T, y)
    assert vars(est).keys() == state.keys()
    assert all(vars(est)[k] is v for k, v in state.items())
    np.testing.assert_array_equal(est.predict_proba(S), before)


def test_predict_before_fit(name):
    with pytest.raises(NotFittedError, match=r"not fitted"):
        make(name).predict_proba(np.ones((3, 2)))


@pytest.mark.parametrize("n_cols", [1, 3])
def test_predict_wrong_number_of_columns(fitted, n_cols):
    est, S = fitted
    X = np.ones((5, n_cols))
    with pytest.raises(ValueError, match=rf"X has {n_cols} features.*expecting 2 features"):
        est.predict_proba(X)


def test_predict_one_dimensional(fitted):
    est, S = fitted
    with pytest.raises(ValueError, match=r"Reshape your data"):
        est.predict_proba(S[0])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_predict_nonfinite_scores(fitted, bad):
    est, S = fitted
    X = S[:5].copy()
    X[2, 0] = bad
    if np.isnan(bad):
        for method in (est.predict_proba, est.predict):
            with pytest.raises(ValueError, match=r"NaN at row 2, column 0"):
                method(X)
        return
    # +-inf predicts as the most extreme score: the ECDF clamps beyond the training range.
    Y = X.copy()
    Y[2, 0] = 1e300 if bad > 0 else -1e300
    np.testing.assert_array_equal(est.predict_proba(X), est.predict_proba(Y))


def test_predict_non_numeric_scores(fitted):
    est, S = fitted
    X = S[:3].astype(object)
    X[1, 1] = "x"
    with pytest.raises(ValueError, match=r"score column 1 holds a non-numeric value 'x' at row 1"):
        est.predict_proba(X)


def test_predict_one_sequence_per_scorer_is_told_to_stack(fitted):
    est, S = fitted
    with pytest.raises(ValueError, match=r"2 sequences of 5 values.*np\.column_stack\(S\)"):
        est.predict_proba([list(S[:5, 0]), list(S[:5, 1])])


def test_predict_extreme_scores(fitted):
    est, S = fitted
    big = np.finfo(float).max
    X = np.array(
        [[big, big], [-big, -big], [big, -big], [-big, big], [1e300, 0.0], [-1e-300, 1e200]]
    )
    p = est.predict_proba(X)
    _assert_probabilities(p, X.shape[0])
    # Beyond the training range the ECDF clamps: the same as at the training extremes.
    lo, hi = S.min(axis=0), S.max(axis=0)
    corners = np.array([hi, lo, [hi[0], lo[1]], [lo[0], hi[1]]])
    np.testing.assert_array_equal(p[:4], est.predict_proba(corners))


def test_calibrating_function_outside_cube(fitted):
    est, _ = fitted
    with pytest.raises(ValueError, match=r"normalized points must lie in \[0, 1\]"):
        est.calibrating_function(np.array([[0.5, 1.5]]))
    with pytest.raises(ValueError, match=r"normalized points must be finite; found NaN"):
        est.calibrating_function(np.array([[0.5, np.nan]]))
