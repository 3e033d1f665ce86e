"""The ``estimators`` parameter's rules (fusion/classifier/members.py), as scikit-learn's
StackingClassifier applies them: two forms, checked names and members, nested parameters."""

import pytest
from sklearn.base import BaseEstimator
from sklearn.ensemble import StackingClassifier
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fusion.classifier.members import (
    check_members,
    is_drop,
    member_pairs,
    nested_params,
    replace_members,
)


def test_pairs_and_a_plain_list_give_the_same_members():
    lr, nb = LogisticRegression(), GaussianNB()
    assert member_pairs([("a", lr), ("b", nb)]) == (["a", "b"], [lr, nb])
    assert member_pairs((lr, nb)) == (["logisticregression", "gaussiannb"], [lr, nb])


@pytest.mark.parametrize("items", [[], None, "lr", [("a", GaussianNB()), GaussianNB()]])
def test_a_value_that_is_neither_form_is_refused(items):
    with pytest.raises(ValueError, match="non-empty list|mixes"):
        member_pairs(items)


@pytest.mark.parametrize(
    "names, estimators, error, match",
    [
        (["a", "a"], [GaussianNB(), GaussianNB()], ValueError, r"not unique: \['a', 'a'\]"),
        (["cv", "b"], [GaussianNB(), GaussianNB()], ValueError, r"conflict .*\['cv'\]"),
        (["a__b"], [GaussianNB()], ValueError, r"must not contain '__'.*\['a__b'\]"),
        (["a", "b"], ["drop", "drop"], ValueError, "every estimator is 'drop'"),
        (["a"], [GaussianNB], TypeError, r"'a' is the class GaussianNB"),
        (["a"], [BaseEstimator()], ValueError, "'a' .BaseEstimator. has no fit method"),
        (["a"], [Ridge()], ValueError, "'a' .Ridge. is not a classifier"),
    ],
)
def test_members_a_classifier_cannot_use_are_refused(names, estimators, error, match):
    with pytest.raises(error, match=match):
        check_members(names, estimators, reserved={"cv", "method"})


def test_usable_members_pass_and_drop_is_only_the_string():
    check_members(["a", "b"], [GaussianNB(), "drop"], reserved={"cv"})
    assert is_drop("drop") and not is_drop("Drop") and not is_drop(GaussianNB())


def test_nested_parameters_are_those_stacking_lists():
    members = [("p", make_pipeline(StandardScaler(), LogisticRegression())), ("nb", GaussianNB())]
    ours = nested_params(*member_pairs(members))
    stacking = StackingClassifier(members).get_params(deep=True)
    own = set(StackingClassifier(members).get_params(deep=False))
    assert ours.keys() == stacking.keys() - own
    assert all(ours[k] is stacking[k] for k in ours)
    assert ours["p__logisticregression__C"] == 1.0


def test_replacing_a_member_keeps_the_others_and_names_a_plain_list():
    lr, nb, new = LogisticRegression(), GaussianNB(), LogisticRegression(C=3)
    out = replace_members(*member_pairs([lr, nb]), {"gaussiannb": new})
    assert out == [("logisticregression", lr), ("gaussiannb", new)]
    assert replace_members(["a"], [lr], {"a": "drop"}) == [("a", "drop")]
