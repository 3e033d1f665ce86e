"""FusionClassifier: cross-fitting, prefit estimators, scikit-learn conventions, errors."""

import re
import warnings

import joblib
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_classification
from sklearn.dummy import DummyClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    StratifiedKFold,
    cross_val_predict,
    cross_val_score,
)
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

import fusion
from fusion import FusionClassifier
from fusion._base import FusionEstimator
from fusion.classifier.crossfit import derive_names


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=300, n_features=6, n_informative=4, random_state=0, flip_y=0.1
    )
    return X, y


def two_bases():
    return [("lr", LogisticRegression()), ("nb", GaussianNB())]


def manual_oof(estimator, X, y, splits, **fit_params):
    """Positive-class probability of each row from a clone fitted without that row."""
    out = np.empty(X.shape[0])
    for train, test in splits:
        params = {k: v[train] for k, v in fit_params.items()}
        model = clone(estimator).fit(X[train], y[train], **params)
        out[test] = model.predict_proba(X[test])[:, 1]
    return out


# ---------------------------------------------------------------------------------------------
# Test doubles.


class LabelOnly(ClassifierMixin, BaseEstimator):
    """A classifier with predict but no score."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


class MeanSoftmaxFusion(ClassifierMixin, BaseEstimator):
    """Multi-class fusion double for the (n, M, C) interface of issue 13: the softmax of the
    scorers' mean score. It keeps its training input to show what FusionClassifier sent."""

    def __init__(self, temperature=1.0):
        self.temperature = temperature

    def fit(self, S, y, sample_weight=None):
        S = np.asarray(S, dtype=float)
        assert S.ndim == 3, S.shape
        self.classes_ = np.unique(y)
        assert S.shape[2] == self.classes_.shape[0]
        self.S_fit_ = S
        self.sample_weight_ = sample_weight
        return self

    def predict_proba(self, S):
        z = np.asarray(S, dtype=float).mean(axis=1) / self.temperature
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)


class MeanRankFusion(FusionEstimator):
    """A binary-only fusion method: the mean normalized score (monotone, not calibrated)."""

    def _fit_normalized(self, U, y, sample_weight):
        self.fitted_ = True

    def _calibrate(self, U):
        return U.mean(axis=1)


@pytest.fixture
def doubles(monkeypatch):
    monkeypatch.setitem(fusion.METHODS, "mean_softmax", MeanSoftmaxFusion)
    monkeypatch.setitem(fusion.METHODS, "mean_rank", MeanRankFusion)


# ---------------------------------------------------------------------------------------------
# Cross-fitting.


def test_out_of_fold_scores_come_from_models_that_did_not_see_the_row(data):
    X, y = data
    splits = list(StratifiedKFold(4, shuffle=True, random_state=3).split(X, y))
    clf = FusionClassifier(two_bases(), cv=splits, passthrough_scores=True, degree=2)
    out = clf.fit_transform(X, y)
    for j, (_, est) in enumerate(two_bases()):
        np.testing.assert_allclose(out[:, 1 + j], manual_oof(est, X, y, splits), rtol=1e-12)
    # The fusion was fitted on exactly these scores.
    np.testing.assert_allclose(out[:, 0], clf.fusion_.predict_proba(out[:, 1:])[:, 1])
    # transform() scores with the refitted models, which differ from the fold models.
    refit = clf.transform(X)
    np.testing.assert_allclose(refit[:, 1], clf.estimators_[0].predict_proba(X)[:, 1])
    assert not np.allclose(refit[:, 1:], out[:, 1:])


def test_memorizing_base_estimators_do_not_leak_into_the_fusion():
    # Labels independent of X: a model that memorizes its training rows has no information,
    # and out-of-fold scores show that; in-sample scores would equal the labels.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = rng.integers(0, 2, size=400)
    X_new = rng.normal(size=(2000, 3))
    bases = [("knn", KNeighborsClassifier(1)), ("tree", DecisionTreeClassifier(random_state=0))]
    clf = FusionClassifier(bases, degree=2).fit(X, y)
    p = clf.predict_proba(X)[:, 1]
    assert np.abs(p - y.mean()).max() < 0.15
    assert np.abs(clf.predict_proba(X_new)[:, 1] - y.mean()).max() < 0.15

    # The leaking version: the fusion fitted on the refitted models' in-sample scores.
    S_in = np.column_stack([est.predict_proba(X)[:, 1] for est in clf.estimators_])
    leaky = fusion.fit(S_in, y, degree=2)
    p_leaky = leaky.predict_proba(S_in)[:, 1]
    assert np.abs(p_leaky - y).max() < 0.2  # it "learned" the training labels
    y_new = rng.integers(0, 2, size=2000)
    S_new = np.column_stack([est.predict_proba(X_new)[:, 1] for est in clf.estimators_])
    ll_ours = fusion.metrics.log_loss(y_new, clf.predict_proba(X_new)[:, 1])
    ll_leaky = fusion.metrics.log_loss(y_new, leaky.predict_proba(S_new)[:, 1])
    assert ll_ours < np.log(2) + 0.03 < ll_leaky


def test_same_folds_for_every_estimator_and_int_cv_is_shuffled_stratified(data):
    X, y = data
    clf = FusionClassifier(two_bases(), cv=5, random_state=7, passthrough_scores=True, degree=2)
    out = clf.fit_transform(X, y)
    splits = list(StratifiedKFold(5, shuffle=True, random_state=7).split(X, y))
    np.testing.assert_allclose(out[:, 1], manual_oof(LogisticRegression(), X, y, splits))
    np.testing.assert_allclose(out[:, 2], manual_oof(GaussianNB(), X, y, splits))


def test_splitter_object_as_cv(data):
    X, y = data
    cv = KFold(3, shuffle=True, random_state=1)
    out = FusionClassifier(two_bases(), cv=cv, passthrough_scores=True, degree=2).fit_transform(
        X, y
    )
    np.testing.assert_allclose(out[:, 1], manual_oof(LogisticRegression(), X, y, cv.split(X)))


def test_predict_proba_is_the_fusion_of_the_refitted_scores(data):
    X, y = data
    clf = FusionClassifier(two_bases(), degree=3).fit(X, y)
    S = np.column_stack([est.predict_proba(X)[:, 1] for est in clf.estimators_])
    np.testing.assert_array_equal(clf.predict_proba(X), clf.fusion_.predict_proba(S))
    np.testing.assert_array_equal(
        clf.predict(X), clf.classes_[(clf.predict_proba(X)[:, 1] > 0.5).astype(int)]
    )
    assert clf.stack_method_ == ["predict_proba", "predict_proba"]
    assert isinstance(clf.fusion_, fusion.BernsteinFusion) and clf.fusion_.degree == 3
    assert set(clf.named_estimators_) == {"lr", "nb"}
    assert clf.named_estimators_["lr"] is clf.estimators_[0]


def test_decision_function_scores(data):
    X, y = data
    bases = [("svc", SVC(kernel="linear")), ("lr", LogisticRegression())]
    clf = FusionClassifier(bases, stack_method="auto", passthrough_scores=True, degree=2)
    clf.fit(X, y)
    assert clf.stack_method_ == ["decision_function", "predict_proba"]
    np.testing.assert_allclose(clf.transform(X)[:, 1], clf.estimators_[0].decision_function(X))
    clf.set_params(stack_method="decision_function").fit(X, y)
    assert clf.stack_method_ == ["decision_function", "decision_function"]


# ---------------------------------------------------------------------------------------------
# Prefit estimators.


def test_frozen_estimator_is_used_as_fitted_and_never_refitted(data):
    X, y = data
    lr = LogisticRegression().fit(X[:150], y[:150])
    coef = lr.coef_
    frozen = FrozenEstimator(lr)
    clf = FusionClassifier(
        [("old", frozen), ("nb", GaussianNB())], passthrough_scores=True, degree=2
    )
    out = clf.fit_transform(X[150:], y[150:])
    assert lr.coef_ is coef  # not refitted (a fit assigns a new array)
    assert clf.estimators_[0] is frozen
    # Its scores are the fitted model's on every row; the other base is cross-fitted.
    np.testing.assert_array_equal(out[:, 1], lr.predict_proba(X[150:])[:, 1])
    splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X[150:], y[150:]))
    np.testing.assert_allclose(out[:, 2], manual_oof(GaussianNB(), X[150:], y[150:], splits))
    assert clone(clf).get_params()["old"] is frozen


def test_cv_prefit_uses_the_given_models_on_the_given_rows(data):
    X, y = data
    lr = LogisticRegression().fit(X[:150], y[:150])
    nb = GaussianNB().fit(X[:150], y[:150])
    lr_coef, nb_theta = lr.coef_, nb.theta_
    clf = FusionClassifier([("lr", lr), ("nb", nb)], cv="prefit", degree=2).fit(X[150:], y[150:])
    assert clf.estimators_[0] is lr and clf.estimators_[1] is nb
    assert lr.coef_ is lr_coef and nb.theta_ is nb_theta
    S = np.column_stack([lr.predict_proba(X[150:])[:, 1], nb.predict_proba(X[150:])[:, 1]])
    reference = fusion.fit(S, y[150:], degree=2, random_state=0)
    np.testing.assert_allclose(clf.predict_proba(X[150:]), reference.predict_proba(S))


def test_prefit_errors(data):
    X, y = data
    with pytest.raises(ValueError, match="'lr' is prefit but not fitted"):
        FusionClassifier(two_bases(), cv="prefit").fit(X, y)
    with pytest.raises(ValueError, match="'lr' is frozen but not fitted"):
        FusionClassifier([("lr", FrozenEstimator(LogisticRegression())), ("nb", GaussianNB())]).fit(
            X, y
        )
    other = LogisticRegression().fit(X, np.where(y == 1, "b", "a"))
    with pytest.raises(ValueError, match=r"'lr' knows the classes \['a', 'b'\], but y holds"):
        FusionClassifier([("lr", FrozenEstimator(other)), ("nb", GaussianNB())]).fit(X, y)


# ---------------------------------------------------------------------------------------------
# scikit-learn conventions.


def test_get_params_set_params_and_clone(data):
    clf = FusionClassifier(two_bases(), degree=3, cv=4)
    shallow = clf.get_params(deep=False)
    assert shallow["degree"] == 3 and shallow["cv"] == 4 and shallow["method"] == "bernstein"
    deep = clf.get_params()
    assert deep["lr__C"] == 1.0 and isinstance(deep["nb"], GaussianNB)

    twin = clone(clf)
    assert twin.get_params(deep=False)["degree"] == 3
    twin.set_params(degree=5, lr__C=0.1, nb__var_smoothing=1e-3, cv=3)
    assert twin.get_params()["degree"] == 5 and twin.estimators[0][1].C == 0.1
    assert twin.get_params()["nb__var_smoothing"] == 1e-3 and twin.cv == 3
    assert clf.get_params()["degree"] == 3 and clf.estimators[0][1].C == 1.0  # untouched

    twin.set_params(nb="drop")
    X, y = data
    twin.set_params(method="rpr")  # a single remaining score: a 1-D method
    twin.set_params(degree=2).fit(X, y)
    assert [n for n, _ in twin.estimators] == ["lr", "nb"] and len(twin.estimators_) == 1
    assert twin.named_estimators_["nb"] == "drop"


def test_fusion_parameters_are_checked_against_the_method():
    clf = FusionClassifier(two_bases())
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['no_such'\].*BernsteinFusion"):
        clf.set_params(no_such=1)
    with pytest.raises(ValueError, match="CopulaFusion takes"):
        clf.set_params(method="copula", degree=3)
    clf.set_params(method="copula", bandwidth="scott")
    assert clf.get_params()["bandwidth"] == "scott"


def test_plain_list_of_estimators_gets_derived_names(data):
    X, y = data
    bases = [LogisticRegression(), LogisticRegression(C=0.1), GaussianNB()]
    assert derive_names(bases) == ["logisticregression-1", "logisticregression-2", "gaussiannb"]
    clf = FusionClassifier(bases, degree=2)
    assert clf.get_params()["logisticregression-2__C"] == 0.1
    clf.set_params(**{"logisticregression-1__C": 5.0})
    assert bases[0].C == 5.0
    clf.set_params(gaussiannb="drop")  # replacing by name turns the list into pairs
    assert clf.estimators[2] == ("gaussiannb", "drop")
    clf.fit(X, y)
    assert list(clf.named_estimators_) == [
        "logisticregression-1",
        "logisticregression-2",
        "gaussiannb",
    ]


def test_grid_search_over_a_fusion_parameter_and_a_base_parameter(data):
    X, y = data
    grid = GridSearchCV(
        FusionClassifier(two_bases(), cv=3, lam=1e-2),  # a fixed penalty: nine fits
        {"degree": [1, 3], "lr__C": [0.01, 1.0]},
        cv=2,
        scoring="neg_log_loss",
    ).fit(X, y)
    assert len(grid.cv_results_["params"]) == 4
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))
    best = grid.best_estimator_
    assert best.fusion_.degree == grid.best_params_["degree"]
    assert best.estimators_[0].C == grid.best_params_["lr__C"]
    # The parameters reached the fits: the four settings do not all score the same.
    assert np.unique(np.round(grid.cv_results_["mean_test_score"], 10)).size > 1


def test_in_a_pipeline_and_cross_val_score(data):
    X, y = data
    pipe = Pipeline(
        [("scale", StandardScaler()), ("fuse", FusionClassifier(two_bases(), degree=2))]
    )
    scores = cross_val_score(pipe, X, y, cv=3, scoring="neg_log_loss")
    reference = cross_val_score(
        make_pipeline(StandardScaler(), LogisticRegression()), X, y, cv=3, scoring="neg_log_loss"
    )
    assert scores.shape == (3,) and np.all(-scores < -reference + 0.05)
    proba = pipe.fit(X, y).predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # As an intermediate step: the next step is trained on the out-of-fold columns.
    step = FusionClassifier(two_bases(), degree=2, passthrough_scores=True)
    chain = Pipeline([("fuse", step), ("lr", LogisticRegression())]).fit(X, y)
    Z = clone(step).fit_transform(X, y)
    reference = LogisticRegression().fit(Z, y)
    np.testing.assert_allclose(chain[-1].coef_, reference.coef_)


def test_transform_columns_and_names(data):
    X, y = data
    clf = FusionClassifier(two_bases(), degree=2).fit(X, y)
    np.testing.assert_array_equal(clf.transform(X), clf.predict_proba(X)[:, 1:])
    assert list(clf.get_feature_names_out()) == ["fused"]
    clf.set_params(passthrough_scores=True).fit(X, y)
    Z = clf.transform(X)
    assert Z.shape == (X.shape[0], 3)
    np.testing.assert_allclose(Z[:, 2], clf.estimators_[1].predict_proba(X)[:, 1])
    assert list(clf.get_feature_names_out()) == ["fused", "lr", "nb"]


def test_deterministic_by_default(data):
    X, y = data
    # The base estimators keep their own random_state: the tree is given one.
    bases = [
        ("lr", LogisticRegression()),
        ("tree", DecisionTreeClassifier(max_depth=3, random_state=0)),
    ]
    a = FusionClassifier(bases, passthrough_scores=True)
    b = FusionClassifier(bases, passthrough_scores=True)
    out_of_fold = a.fit_transform(X, y)
    np.testing.assert_array_equal(out_of_fold, b.fit_transform(X, y))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    c = FusionClassifier(bases, passthrough_scores=True, random_state=1)
    assert not np.array_equal(c.fit_transform(X, y), out_of_fold)


def test_n_jobs_gives_the_same_fit(data):
    X, y = data
    a = FusionClassifier(two_bases(), degree=2).fit(X, y)
    # Threads: the same joblib code path without starting worker processes in the test.
    with joblib.parallel_backend("threading"):
        b = FusionClassifier(two_bases(), degree=2, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_string_labels(data):
    X, y = data
    labels = np.array(["spam", "ham"])[y]  # "spam" is y == 0; sorted, "spam" is positive
    clf = FusionClassifier(two_bases(), degree=2, lam=1e-2).fit(X, labels)
    np.testing.assert_array_equal(clf.classes_, ["ham", "spam"])
    assert set(clf.predict(X)) == {"ham", "spam"}
    p_spam = clf.predict_proba(X)[:, 1]
    assert p_spam[labels == "spam"].mean() > p_spam[labels == "ham"].mean() + 0.2
    # Swapping which class is positive mirrors the fit.
    by_int = FusionClassifier(two_bases(), degree=2, lam=1e-2).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), by_int.predict_proba(X)[:, ::-1], atol=1e-6)


def test_dataframe_feature_names(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    clf = FusionClassifier(two_bases(), degree=2).fit(df, y)
    assert clf.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(clf.feature_names_in_, df.columns)
    with pytest.raises(ValueError, match="feature names"):
        clf.predict_proba(df.rename(columns={"f0": "other"}))


def test_sample_weight_goes_to_the_bases_that_take_it_and_to_the_fusion(data):
    X, y = data
    w = np.random.default_rng(1).uniform(0.2, 3.0, size=y.shape[0])
    bases = [("lr", LogisticRegression()), ("knn", KNeighborsClassifier(15))]
    clf = FusionClassifier(bases, passthrough_scores=True, degree=2)
    with pytest.warns(UserWarning, match=r"\['knn'\] do not take sample_weight"):
        out = clf.fit_transform(X, y, sample_weight=w)
    splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    np.testing.assert_allclose(
        out[:, 1], manual_oof(LogisticRegression(), X, y, splits, sample_weight=w), rtol=1e-10
    )
    np.testing.assert_allclose(out[:, 2], manual_oof(KNeighborsClassifier(15), X, y, splits))
    reference = fusion.fit(out[:, 1:], y, degree=2, random_state=0, sample_weight=w)
    np.testing.assert_allclose(out[:, 0], reference.predict_proba(out[:, 1:])[:, 1])
    unweighted = FusionClassifier(bases, passthrough_scores=True, degree=2).fit_transform(X, y)
    assert not np.allclose(unweighted[:, 1], out[:, 1])
    np.testing.assert_allclose(
        LogisticRegression().fit(X, y, sample_weight=w).coef_, clf.estimators_[0].coef_
    )


def test_verbose_reports_each_estimator(data, capsys):
    X, y = data
    FusionClassifier(two_bases(), degree=2, verbose=1).fit(X, y)
    printed = capsys.readouterr().out
    assert "'lr' (5 folds)" in printed and "'nb' (5 folds)" in printed


# ---------------------------------------------------------------------------------------------
# Multi-class routing (the fusion methods gain (n, M, C) input with issue 13).


def test_multiclass_scores_reach_the_fusion_as_n_m_c(doubles):
    X, y = make_classification(
        n_samples=240, n_features=6, n_informative=4, n_classes=3, random_state=0
    )
    labels = np.array(["a", "b", "c"])[y]
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, labels))
    clf = FusionClassifier(two_bases(), method="mean_softmax", cv=splits, temperature=0.5)
    Z = clf.set_params(passthrough_scores=True).fit_transform(X, labels)
    S = clf.fusion_.S_fit_
    assert S.shape == (240, 2, 3)
    for j, (_, est) in enumerate(two_bases()):
        expected = cross_val_predict(est, X, labels, cv=splits, method="predict_proba")
        np.testing.assert_allclose(S[:, j, :], expected, rtol=1e-12)
    assert clf.fusion_.temperature == 0.5
    proba = clf.predict_proba(X)
    assert proba.shape == (240, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(clf.predict(X)) <= {"a", "b", "c"}
    assert Z.shape == (240, 3 + 2 * 3)
    np.testing.assert_allclose(Z[:, 3:6], S[:, 0, :])
    assert list(clf.get_feature_names_out())[:5] == [
        "fused_a",
        "fused_b",
        "fused_c",
        "lr_a",
        "lr_b",
    ]


def test_multiclass_constant_base_is_named(doubles):
    X, y = make_classification(n_samples=150, n_informative=4, n_classes=3, random_state=0)
    # Fitted class priors: every column constant, the columns different.
    prior = FrozenEstimator(DummyClassifier(strategy="prior").fit(X, y))
    bases = [("lr", LogisticRegression()), ("prior", prior)]
    with pytest.raises(fusion.ConstantColumnError, match="'prior' gave every row the same"):
        FusionClassifier(bases, method="mean_softmax", cv=KFold(3)).fit(X, y)


def test_multiclass_with_a_binary_only_method_says_so(doubles):
    X, y = make_classification(n_samples=150, n_informative=4, n_classes=3, random_state=0)
    clf = FusionClassifier(two_bases(), method="mean_rank")
    with pytest.raises(
        ValueError, match=r"Only binary classification.*\(n, M, C\) = \(150, 2, 3\)"
    ):
        clf.fit(X, y)


def test_default_method_fuses_multiclass_scores():
    X, y = make_classification(n_samples=300, n_informative=4, n_classes=3, random_state=0)
    clf = FusionClassifier(two_bases()).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    assert (clf.predict(X) == y).mean() > 0.6


# ---------------------------------------------------------------------------------------------
# Bad input.


@pytest.mark.parametrize(
    "estimators, error, match",
    [
        ([], ValueError, "non-empty list"),
        ([("lr", LogisticRegression()), GaussianNB()], ValueError, "mixes"),
        ([("a", LogisticRegression()), ("a", GaussianNB())], ValueError, "not unique"),
        ([("cv", LogisticRegression()), ("nb", GaussianNB())], ValueError, "conflict"),
        ([("lr", LogisticRegression), ("nb", GaussianNB())], TypeError, "pass an instance"),
        ([("lr", Ridge()), ("nb", GaussianNB())], ValueError, "'lr' .Ridge. is not a classifier"),
        ([("lr", "drop")], ValueError, "every estimator is 'drop'"),
        (
            [("lab", LabelOnly()), ("nb", GaussianNB())],
            ValueError,
            "'lab' .LabelOnly. has no predict_proba nor decision_function",
        ),
    ],
)
def test_bad_estimators(data, estimators, error, match):
    X, y = data
    with pytest.raises(error, match=match):
        FusionClassifier(estimators).fit(X, y)


def test_bad_method_and_parameters_fail_before_any_base_fit(data):
    X, y = data
    lr = LogisticRegression()
    with pytest.raises(ValueError, match=r"unknown fusion method 'nope'; known methods: \["):
        FusionClassifier([("lr", lr), ("nb", GaussianNB())], method="nope").fit(X, y)
    with pytest.raises(ValueError, match=re.escape("unknown parameter(s) ['degre']")):
        FusionClassifier([("lr", lr), ("nb", GaussianNB())], degre=3).fit(X, y)
    assert not hasattr(lr, "coef_")


def test_other_bad_input(data):
    X, y = data
    with pytest.raises(ValueError, match="has no predict_proba;.*Use stack_method='auto'"):
        FusionClassifier([("svc", SVC()), ("nb", GaussianNB())], stack_method="predict_proba").fit(
            X, y
        )
    with pytest.raises(ValueError, match="stack_method"):
        FusionClassifier(two_bases(), stack_method="predict").fit(X, y)
    with pytest.raises(ValueError, match="one class only"):
        FusionClassifier(two_bases()).fit(X, np.ones_like(y))
    with pytest.raises(ValueError, match="requires y"):
        FusionClassifier(two_bases()).fit(X, None)
    with pytest.raises(ValueError, match="sample_weight is zero on every row of class 1"):
        FusionClassifier(two_bases()).fit(X, y, sample_weight=(y == 0).astype(float))
    with pytest.raises(fusion.ConstantColumnError, match="'dummy' gave every row the same"):
        FusionClassifier(
            [("lr", LogisticRegression()), ("dummy", DummyClassifier(strategy="uniform"))]
        ).fit(X, y)
    with pytest.raises(ValueError, match="partitions"):
        FusionClassifier(two_bases(), cv=[(np.arange(200), np.arange(200, 250))]).fit(X, y)


def test_invalid_estimators_value_is_reported_at_fit_not_at_set_params(data):
    X, y = data
    clf = FusionClassifier(two_bases()).set_params(estimators=None)
    assert clf.get_params()["estimators"] is None
    with pytest.raises(ValueError, match="estimators"):
        clf.fit(X, y)


def test_a_failed_refit_keeps_the_previous_model(data):
    X, y = data
    clf = FusionClassifier(two_bases(), degree=2).fit(X, y)
    before = clf.predict_proba(X)
    fusion_before = clf.fusion_
    with pytest.raises(fusion.ConstantColumnError):
        clf.set_params(nb=DummyClassifier(strategy="uniform")).fit(X, y)
    assert clf.fusion_ is fusion_before
    np.testing.assert_array_equal(clf.predict_proba(X), before)


# ---------------------------------------------------------------------------------------------
# scikit-learn's own conformance checks.

_EXPECTED_FAILED_CHECKS = {
    "check_transformer_general": "fit_transform is out of fold by design (as TargetEncoder)",
    "check_transformer_data_not_an_array": "fit_transform is out of fold by design",
    "check_sample_weight_equivalence_on_dense_data": (
        "repeated rows change the cross-fitting folds and fall on both sides of a split"
    ),
}


@parametrize_with_checks(
    # lam from two penalties (logistic regression, a flexible g) and fixed multi-class
    # penalties: the fusion's cross-validations over its full grids took two thirds of these
    # checks' time and are not what they check (tests/bernstein tests them)
    [
        FusionClassifier(
            [("lr", LogisticRegression()), ("nb", GaussianNB())],
            cv=3,
            degree=2,
            lam_grid=(np.inf, 1e-2),
            bias_penalty=1e-2,
            top_label_penalty=1e-2,
        )
    ],
    expected_failed_checks=lambda est: _EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
