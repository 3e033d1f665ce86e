"""FusionEstimator's public hooks (fusion/_base.py): parameter checks without data, and whether
a method takes a single score."""

import numpy as np
import pytest

import fusion
from fusion import FusionEstimator
from fusion.persistence import saveable_classes

from .reliability._methods import FAST_PARAMS, scores

ESTIMATORS = sorted(n for n, c in saveable_classes().items() if issubclass(c, FusionEstimator))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_validate_params_refuses_what_fit_refuses_and_fits_nothing(name):
    cls = saveable_classes()[name]
    est = cls(**FAST_PARAMS.get(name, {}))
    est.validate_params()  # valid parameters pass
    est.set_params(missing="sometimes")
    with pytest.raises(ValueError, match="'missing' parameter") as from_check:
        est.validate_params()
    S, y = scores(40)
    with pytest.raises(ValueError) as from_fit:
        est.fit(S, y)
    assert str(from_check.value) == str(from_fit.value)
    assert not hasattr(est, "classes_")


@pytest.mark.parametrize("name", ESTIMATORS)
def test_a_method_that_accepts_a_single_score_fits_one(name):
    est = saveable_classes()[name](**FAST_PARAMS.get(name, {}))
    S, y = scores(60)
    assert est.accepts_single_score
    p = est.fit(S[:, 0], y).predict_proba(S[:, 0])
    assert p.shape == (60, 2) and est.n_features_in_ == 1


def test_a_method_that_declares_two_scores_refuses_one_and_cannot_be_told_otherwise():
    class Pairwise(fusion.CopulaFusion):
        _allows_1d = False

    est = Pairwise()
    S, y = scores(60)
    assert not est.accepts_single_score
    with pytest.raises(ValueError, match="fuses M >= 2 scores"):
        est.fit(S[:, :1], y)
    with pytest.raises(AttributeError):
        est.accepts_single_score = True
    assert np.all(np.isfinite(est.fit(S, y).predict_proba(S)))
