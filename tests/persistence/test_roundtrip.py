"""``estimator.save`` / ``fusion.load``: exact round trips, and refusals to save.

Tests fusion/persistence for every saveable estimator (fusion.METHODS and the 1-D calibrators).
"""

from __future__ import annotations

import io
import pickle

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import fusion
from fusion.persistence import PersistenceError

from ..reliability._methods import scores
from ._helpers import SAVEABLE_NAMES, assert_same, fitted, make, roundtrip

pytestmark = pytest.mark.filterwarnings("error")


# -- round trips -----------------------------------------------------------------------------------

LABELS = {
    "int": lambda y: y,
    "float": lambda y: y.astype(float),
    "bool": lambda y: y.astype(bool),
    "str": lambda y: np.where(y == 1, "yes", "no"),
    "object-str": lambda y: np.where(y == 1, "yes", "no").astype(object),
    "object-int": lambda y: np.array([int(v) + 10 for v in y], dtype=object),
    "uint8": lambda y: y.astype(np.uint8) + 3,
}


@pytest.mark.parametrize("name", SAVEABLE_NAMES)
@pytest.mark.parametrize("labels", list(LABELS))
def test_roundtrip_is_exact(name, labels, tmp_path):
    S, y = scores(80, seed=1)
    est = make(name).fit(S, LABELS[labels](y))
    loaded = roundtrip(est, tmp_path)
    assert_same(est, loaded)
    assert loaded.get_params() == est.get_params()
    X = np.vstack([S, S * 3 - 1, [[1e300, -1e300]]])
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X), strict=True)
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X), strict=True)


@pytest.mark.parametrize("name", SAVEABLE_NAMES)
def test_roundtrip_dataframe_feature_names(name, tmp_path):
    S, y = scores(80, seed=2)
    df = pd.DataFrame(S, columns=["model_a", "model_b"])
    est = make(name).fit(df, y)
    loaded = roundtrip(est, tmp_path)
    assert_same(est, loaded)
    assert list(loaded.feature_names_in_) == ["model_a", "model_b"]
    np.testing.assert_array_equal(loaded.predict_proba(df), est.predict_proba(df))


@pytest.mark.parametrize("name", SAVEABLE_NAMES)
def test_roundtrip_through_file_objects(name):
    est, S = fitted(name)
    buf = io.BytesIO()
    est.save(buf)
    buf.seek(0)
    np.testing.assert_array_equal(fusion.load(buf).predict_proba(S), est.predict_proba(S))


@pytest.mark.parametrize("name", SAVEABLE_NAMES)
def test_loaded_model_clones_and_refits(name, tmp_path):
    est, S = fitted(name)
    loaded = roundtrip(est, tmp_path)
    fresh = clone(loaded)
    assert fresh.get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        fresh.predict_proba(S)
    S2, y2 = scores(80, seed=5)
    np.testing.assert_array_equal(fresh.fit(S2, y2).predict_proba(S), est.predict_proba(S))


def test_nonfinite_floats_and_containers_roundtrip(tmp_path):
    # The value grammar itself, on the reference method: tagged floats, tuples, dict keys of
    # several types, numpy scalars, 0-d arrays, string and complex arrays, nested lists.
    est, S = fitted("bernstein")
    est = clone(est).fit(S, scores(80, seed=5)[1])
    exotic = {
        "nan": float("nan"),
        ("t", 1, 2.5, True, None): [np.float32(1.5), np.int8(-3), np.bool_(True), np.str_("s")],
        3: (float("inf"), float("-inf"), -0.0, 10**30),
        2.5: {"nested": [np.arange(3, dtype=np.int16), np.array(4.0), np.array(["a", "bc"])]},
        False: np.array([1 + 2j]),
    }
    est.cv_scores_ = exotic  # a documented attribute, abused as a container of everything
    loaded = roundtrip(est, tmp_path)
    assert_same(est.cv_scores_, loaded.cv_scores_)
    assert str(loaded.cv_scores_[3][2]) == "-0.0"


def test_array_layouts_roundtrip_as_numpy_loads_them(tmp_path):
    # fusion reads .npy members itself (to check sizes before allocating): Fortran order,
    # empty and 0-d arrays, byte order and fixed-width strings come back as numpy.load gives.
    est, S = fitted("bernstein")
    est = clone(est).fit(S, scores(80, seed=5)[1])
    layouts = {
        "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
        "empty": np.zeros((0, 3), dtype=np.int32),
        "zero-d": np.array(2.5),
        "big-endian": np.arange(5, dtype=">i4"),
        "strings": np.array([["a", "bcd"], ["", "e"]]),
        "bytes": np.array([b"x", b"yz"]),
        "bool": np.array([True, False]),
    }
    est.cv_scores_ = layouts
    loaded = roundtrip(est, tmp_path)
    assert_same(layouts, loaded.cv_scores_)
    assert loaded.cv_scores_["fortran"].flags.f_contiguous
    assert all(a.flags.writeable for a in loaded.cv_scores_.values())


# -- pickle and joblib keep working for scikit-learn users -----------------------------------------


@pytest.mark.parametrize("name", SAVEABLE_NAMES)
def test_pickle_and_joblib(name, tmp_path):
    est, S = fitted(name)
    p = est.predict_proba(S)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict_proba(S), p)
    joblib.dump(est, tmp_path / "model.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "model.joblib").predict_proba(S), p)


# -- refusing to save ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAVEABLE_NAMES)
def test_save_unfitted(name, tmp_path):
    with pytest.raises(NotFittedError):
        make(name).save(tmp_path / "m.fusion")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "value",
    [
        {1, 2},
        object(),
        np.random.RandomState(0),
        lambda u: u,
        np.array([{"a": 1}], dtype=object),
        np.ma.masked_array([1.0, 2.0], mask=[True, False]),
        np.datetime64("2024-01-01"),
        b"bytes",
    ],
    ids=[
        "set",
        "object",
        "RandomState",
        "function",
        "object-array-of-dicts",
        "masked",
        "datetime",
        "bytes",
    ],
)
def test_save_refuses_non_plain_data(value, tmp_path):
    est, _ = fitted("bernstein")
    est = pickle.loads(pickle.dumps(est))
    est.cv_scores_ = {"x": [value]}
    with pytest.raises(PersistenceError, match=r"cv_scores_\['x'\]\[0\]"):
        est.save(tmp_path / "m.fusion")
    assert not list(tmp_path.iterdir()), "a refused save must not leave a file behind"


def test_save_refuses_non_plain_parameter(tmp_path):
    S, y = scores(60)
    est = fusion.BernsteinFusion(degree=2, random_state=np.random.RandomState(0)).fit(S, y)
    with pytest.raises(PersistenceError, match=r"parameter 'random_state' holds a .*RandomState"):
        est.save(tmp_path / "m.fusion")


def test_save_refuses_unregistered_class(tmp_path):
    class Custom(fusion.BernsteinFusion):
        pass

    S, y = scores(60)
    with pytest.raises(PersistenceError, match=r"Custom is not a registered fusion method"):
        Custom(degree=2).fit(S, y).save(tmp_path / "m.fusion")


def test_save_refuses_stray_public_attribute(tmp_path):
    est, _ = fitted("bernstein")
    est = pickle.loads(pickle.dumps(est))
    est.threshold = 0.3
    with pytest.raises(PersistenceError, match=r"'threshold' is neither a constructor parameter"):
        est.save(tmp_path / "m.fusion")
