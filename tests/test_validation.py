"""fusion/_validation.py: weights."""

import numpy as np
import pytest

from fusion._validation import check_sample_weight


def test_weights_that_overflow_are_a_clear_error():
    with pytest.raises(ValueError, match="sums to infinity.*divide them by a constant"):
        check_sample_weight(np.full(3, 1e308), 3)
    with pytest.raises(ValueError, match="sums to zero"):
        check_sample_weight(np.zeros(3), 3)
    with pytest.raises(ValueError, match="non-negative.*-1.0 at row 1"):
        check_sample_weight(np.array([1.0, -1.0, 2.0]), 3)
    np.testing.assert_array_equal(check_sample_weight(None, 2), [1.0, 1.0])


def test_an_unknown_keyword_names_the_closest_parameter():
    import fusion

    S = np.random.default_rng(0).random((40, 2))
    y = np.arange(40) % 2
    with pytest.raises(TypeError, match=r"'degre' \(did you mean 'degree'\?\)"):
        fusion.BernsteinFusion(degre=3)
    with pytest.raises(TypeError, match=r"'bandwith' \(did you mean 'bandwidth'\?\)"):
        fusion.fit(S, y, method="copula", bandwith=0.1)
    # fusion.fit's own keywords are candidates too
    with pytest.raises(TypeError, match=r"did you mean 'sample_weight'"):
        fusion.fit(S, y, sample_weights=np.ones(40))
    # nothing close: the parameters are listed
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'zzz'; its parameters"):
        fusion.BernsteinFusion(zzz=1)
    # construction with known keywords, clone and copies are unchanged
    from sklearn.base import clone

    assert clone(fusion.BernsteinFusion(degree=3)).degree == 3


def test_classifier_unknown_fusion_parameter_names_the_closest():
    from sklearn.linear_model import LogisticRegression

    import fusion

    X = np.random.default_rng(0).random((40, 2))
    clf = fusion.FusionClassifier([LogisticRegression()], degre=3)
    with pytest.raises(ValueError, match=r"'degre': did you mean 'degree'\?"):
        clf.fit(X, np.arange(40) % 2)
