"""FusionClassifier: its defaults from issue 23 (score directions given the other scores, the
additive Bernstein fusion from three scores on, the cost of cross-fitting), the nested
parameters of its base estimators, and the public steps fusion.load takes."""

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_classification
from sklearn.ensemble import StackingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import fusion
from fusion import FusionClassifier
from fusion.metrics import log_loss


class ColumnScorer(ClassifierMixin, BaseEstimator):
    """A classifier whose probability is ``expit(X[:, column])``: known scores, no fitting."""

    def __init__(self, column=0):
        self.column = column

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        p = expit(np.asarray(X)[:, self.column])
        return np.column_stack([1 - p, p])

    def predict(self, X):
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]


class CountingNB(GaussianNB):
    """GaussianNB that counts its fits (on the class: clones share the count)."""

    fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        return super().fit(X, y, sample_weight=sample_weight)


def suppressor_data(n: int, seed: int):
    """Two correlated scores; the label's log-odds are ``2 z1 - z2``, so the second score is
    positively related to the label on its own and negatively given the first."""
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.8], [0.8, 1.0]], size=n)
    truth = expit(2.0 * z[:, 0] - z[:, 1])
    y = (rng.random(n) < truth).astype(int)
    return z, y, truth


#: A fixed fusion penalty for the tests in which the fusion's fit is not what is tested: its
#: cross-validation over the default grid took most of their time.
FAST = {"lam": 1e-2}


def columns(m: int):
    return [(f"s{j}", ColumnScorer(j)) for j in range(m)]


@pytest.mark.parametrize("seed", [0, 1])
def test_a_score_informative_against_the_label_given_the_others_is_reversed(seed):
    z, y, truth = suppressor_data(8000, seed)
    fit, test = slice(0, 4000), slice(4000, None)
    default = FusionClassifier(columns(2)).fit(z[fit], y[fit])
    np.testing.assert_array_equal(default.fusion_.increasing_, [True, False])
    # Non-decreasing in both scores, the fusion can only ignore the second one.
    forced = FusionClassifier(columns(2), increasing=True).fit(z[fit], y[fit])
    np.testing.assert_array_equal(forced.fusion_.increasing_, [True, True])
    loss = {
        name: log_loss(y[test], clf.predict_proba(z[test])[:, 1])
        for name, clf in (("default", default), ("forced", forced))
    }
    oracle = log_loss(y[test], truth[test])
    assert loss["default"] < loss["forced"] - 0.01
    assert loss["default"] < oracle + 0.01


def test_the_fused_probability_decreases_in_a_reversed_score():
    z, y, _ = suppressor_data(4000, 2)
    clf = FusionClassifier(columns(2)).fit(z, y)
    grid = np.linspace(-2, 2, 41)
    rows = np.column_stack([np.zeros_like(grid), grid])
    p = clf.predict_proba(rows)[:, 1]
    assert np.all(np.diff(p) <= 1e-12) and p[0] - p[-1] > 0.1
    p = clf.predict_proba(rows[:, ::-1])[:, 1]  # and increases in the other one
    assert np.all(np.diff(p) >= -1e-12)


def test_given_directions_are_handed_on_unchanged():
    z, y, _ = suppressor_data(2000, 3)
    # a fixed penalty (FAST): the directions are decided before the fusion's own fit
    clf = FusionClassifier(columns(2), increasing=[False, True], **FAST).fit(z, y)
    np.testing.assert_array_equal(clf.fusion_.increasing_, [False, True])
    clf.set_params(increasing="auto").fit(z, y)
    np.testing.assert_array_equal(clf.fusion_.increasing_, [True, True])  # not significant


@pytest.mark.parametrize("seed", range(4))
def test_by_default_a_noise_score_keeps_its_direction(seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(1500, 2))  # the second column is noise
    y = (rng.random(1500) < expit(2.0 * z[:, 0])).astype(int)
    clf = FusionClassifier(columns(2), **FAST).fit(z, y)  # the default directions
    np.testing.assert_array_equal(clf.fusion_.increasing_, [True, True])


def test_increasing_is_a_parameter_of_the_classifier():
    clf = FusionClassifier(columns(2))
    assert clf.get_params()["increasing"] == "conditional"
    assert clf.set_params(increasing=True).increasing is True
    with pytest.raises(ValueError, match="increasing"):
        FusionClassifier(columns(2), increasing="sometimes").fit(np.zeros((10, 2)), [0, 1] * 5)


def test_additive_fusion_from_three_scores_unless_given():
    X, y = make_classification(n_samples=600, n_features=5, random_state=0)
    three = FusionClassifier(columns(3)).fit(X, y)
    assert three.fusion_.structure == "additive"
    assert three.fusion_.components_ == ((0,), (1,), (2,))
    assert "structure" not in three.get_params()  # a default of the fit, not a parameter
    given = FusionClassifier(columns(3), structure="tensor", degree=2).fit(X, y)
    assert given.fusion_.components_ == ((0, 1, 2),)
    two = FusionClassifier(columns(2)).fit(X, y)
    assert two.fusion_.structure == "auto"  # BernsteinFusion's own default: the tensor


def test_other_methods_get_the_directions_and_not_the_structure():
    z, y, _ = suppressor_data(2000, 4)
    clf = FusionClassifier(columns(2), method="copula", increasing="conditional").fit(z, y)
    np.testing.assert_array_equal(clf.fusion_.increasing_, [True, False])


def test_multiclass_scores_get_the_methods_own_directions():
    X, y = make_classification(
        n_samples=600, n_features=6, n_informative=4, n_classes=3, random_state=0
    )
    bases = [("lr", LogisticRegression()), ("nb", GaussianNB())]
    clf = FusionClassifier(bases).fit(X, y)
    assert clf.fusion_.increasing == "auto"
    assert clf.predict_proba(X).shape == (600, 3)


@pytest.mark.parametrize("cv", [3, 5])
def test_each_base_is_fitted_as_often_as_by_stacking(cv):
    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    counts = {}
    for name, cls, kw in (("fusion", FusionClassifier, FAST), ("stacking", StackingClassifier, {})):
        CountingNB.fits = 0
        cls([("nb", CountingNB()), ("lr", LogisticRegression())], cv=cv, **kw).fit(X, y)
        counts[name] = CountingNB.fits
    assert counts["fusion"] == counts["stacking"] == cv + 1


def test_saved_model_keeps_the_directions(tmp_path):
    z, y, _ = suppressor_data(1000, 5)
    clf = FusionClassifier([("lr", LogisticRegression()), ("nb", GaussianNB())]).fit(z, y)
    path = tmp_path / "clf.fusion"
    clf.save(path)
    loaded = fusion.load(path)
    assert loaded.get_params()["increasing"] == "conditional"
    np.testing.assert_array_equal(loaded.fusion_.increasing_, clf.fusion_.increasing_)
    np.testing.assert_array_equal(loaded.predict_proba(z), clf.predict_proba(z))


def test_nested_parameters_reach_through_a_pipeline_and_survive_clone():
    clf = FusionClassifier(
        [("p", make_pipeline(StandardScaler(), LogisticRegression())), ("nb", GaussianNB())]
    )
    assert clf.get_params()["p__logisticregression__C"] == 1.0
    clf.set_params(p__logisticregression__C=0.2, p__standardscaler__with_mean=False)
    pipe = clf.estimators[0][1]
    assert pipe[-1].C == 0.2 and pipe[0].with_mean is False
    twin = clone(clf)
    assert twin.estimators[0][1] is not pipe
    assert twin.get_params()["p__logisticregression__C"] == 0.2
    assert twin.get_params()["p__standardscaler__with_mean"] is False


def test_a_replacement_and_its_parameters_in_one_call_set_the_new_estimator():
    old = GaussianNB()
    clf = FusionClassifier([("lr", LogisticRegression()), ("nb", old)])
    clf.set_params(nb=LogisticRegression(), nb__C=4.0)
    assert clf.named_estimators["nb"].C == 4.0 and not hasattr(old, "C")
    clf.set_params(estimators=[("a", GaussianNB()), ("b", GaussianNB())], a__var_smoothing=1.0)
    assert clf.named_estimators["a"].var_smoothing == 1.0
    assert clf.named_estimators["b"].var_smoothing == 1e-9


def test_a_nested_parameter_of_an_unknown_estimator_is_refused():
    clf = FusionClassifier(columns(2))
    with pytest.raises(ValueError, match="Invalid parameter 'zz'"):
        clf.set_params(zz__column=1)
    with pytest.raises(ValueError, match="Invalid parameter 'nope'"):
        clf.set_params(s0__nope=1)


@pytest.mark.parametrize(
    "estimators, params, match",
    [
        ([("a", GaussianNB()), ("a", LogisticRegression())], {}, "not unique"),
        ([("degree", GaussianNB())], {"degree": 3}, "conflict"),
        ([("a", GaussianNB())], {"degre": 3}, r"did you mean 'degree'"),
        ([("a", GaussianNB())], {"method": "nope"}, "unknown fusion method 'nope'"),
        ([("a", GaussianNB())], {"cv": "none"}, "'cv' parameter"),
    ],
)
def test_validate_params_raises_what_fit_raises_without_fitting(estimators, params, match):
    clf = FusionClassifier(estimators, **params)
    with pytest.raises(ValueError, match=match):
        clf.validate_params()
    with pytest.raises(ValueError, match=match):
        clf.fit(*make_classification(n_samples=60, n_features=3, n_redundant=0, random_state=0))
    assert not any(hasattr(e, "classes_") for _, e in estimators)


def test_derived_attributes_are_restored_as_fit_sets_them():
    X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    members = [("s0", ColumnScorer(0)), ("x", "drop"), ("s1", ColumnScorer(1))]
    clf = FusionClassifier(members, cv=3, degree=2, lam=1e-2)
    clf.set_params(passthrough_scores=True).fit(X, y)
    bare = FusionClassifier(**clf.get_params(deep=False))
    for name in ("classes_", "estimators_", "stack_method_", "fusion_", "n_features_in_"):
        setattr(bare, name, getattr(clf, name))
    bare.restore_derived_attributes()
    assert bare.named_estimators_ == clf.named_estimators_
    np.testing.assert_array_equal(bare.get_feature_names_out(), clf.get_feature_names_out())
    np.testing.assert_array_equal(bare.transform(X), clf.transform(X))
    bare.estimators_ = bare.estimators_[:1]
    with pytest.raises(ValueError, match="estimators_ must be a list of the 2 fitted"):
        bare.restore_derived_attributes()
