"""FusionClassifier in model files: round trips, embedded skops archives, refused files."""

from __future__ import annotations

import functools
import importlib
import io
import json
import os
import sys
import textwrap

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.tree import DecisionTreeClassifier

import fusion
from fusion import FusionClassifier
from fusion.persistence import TRUSTED_TYPES, PersistenceError

from ._helpers import archive, members, write  # noqa: F401 - members used below

SKOPS = "__skops__"


@functools.cache
def data(n_classes: int = 2):
    X, y = make_classification(
        n_samples=300, n_features=6, n_informative=4, n_classes=n_classes, random_state=0
    )
    return X, y


@functools.cache
def fitted_binary() -> FusionClassifier:
    X, y = data()
    labels = np.array(["no", "yes"])[y]
    return FusionClassifier(
        [
            ("hgb", HistGradientBoostingClassifier(max_iter=15, random_state=0)),
            ("nb", GaussianNB()),
            ("tree", "drop"),
            ("lr", make_pipeline(StandardScaler(), LogisticRegression())),
        ],
        cv=KFold(3, shuffle=True, random_state=0),
        degree=3,
    ).fit(X, labels)


def saved(clf) -> bytes:
    buf = io.BytesIO()
    clf.save(buf)
    return buf.getvalue()


def parts(data_bytes: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    meta_bytes, npz_bytes = members(data_bytes)
    with np.load(io.BytesIO(npz_bytes)) as npz:
        return json.loads(meta_bytes), {k: npz[k] for k in npz.files}


def skops_keys(value) -> list[str]:
    """The npz keys of every embedded skops archive in a JSON value."""
    if isinstance(value, dict):
        if set(value) == {SKOPS}:
            return [value[SKOPS]]
        return [k for v in value.values() for k in skops_keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in skops_keys(v)]
    return []


def test_round_trip_predicts_identically(tmp_path):
    clf = fitted_binary()
    clf.save(tmp_path / "classifier.fusion")
    loaded = fusion.load(tmp_path / "classifier.fusion")
    assert type(loaded) is FusionClassifier
    X, _ = data()
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))
    np.testing.assert_array_equal(loaded.transform(X), clf.transform(X))
    np.testing.assert_array_equal(loaded.classes_, clf.classes_)
    assert list(loaded.named_estimators_) == ["hgb", "nb", "tree", "lr"]
    assert loaded.named_estimators_["tree"] == "drop"
    assert loaded.get_feature_names_out().tolist() == ["fused"]
    assert loaded.stack_method_ == clf.stack_method_
    # The fusion model is plain data (no skops), its parameters those of the fitted one.
    assert type(loaded.fusion_) is type(clf.fusion_)
    assert loaded.get_params(deep=False).keys() == clf.get_params(deep=False).keys()
    assert loaded.get_params()["degree"] == 3 and loaded.cv.n_splits == 3


def test_round_trip_through_a_file_object_and_with_a_dataframe():
    pd = pytest.importorskip("pandas")
    X, y = data()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    clf = FusionClassifier([GaussianNB(), DecisionTreeClassifier(max_depth=3)], degree=2)
    clf.fit(frame, y)
    loaded = fusion.load(io.BytesIO(saved(clf)))
    assert loaded.feature_names_in_.tolist() == frame.columns.tolist()
    np.testing.assert_array_equal(loaded.predict_proba(frame), clf.predict_proba(frame))


def test_multiclass_round_trip():
    X, y = data(n_classes=3)
    clf = FusionClassifier([GaussianNB(), LogisticRegression()], degree=2).fit(X, y)
    loaded = fusion.load(io.BytesIO(saved(clf)))
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))


def test_base_estimators_are_embedded_skops_archives_and_no_pickle():
    meta, arrays = parts(saved(fitted_binary()))
    assert meta["format"] == "fusion-model" and meta["estimator"] == "fusion_classifier"
    assert meta["attributes"]["fusion_"]["__estimator__"] == "bernstein"
    # One archive per fitted base estimator, one per given estimator, one for the splitter.
    assert len(skops_keys(meta["attributes"]["estimators_"])) == 3
    assert len(skops_keys(meta["params"]["estimators"])) == 3
    assert len(skops_keys(meta["params"]["cv"])) == 1
    for key in skops_keys(meta):
        assert arrays[key].dtype == np.uint8 and arrays[key][:2].tobytes() == b"PK"
    assert all(a.dtype != object for a in arrays.values())


def test_unfitted_classifier_is_not_saved(tmp_path):
    with pytest.raises(NotFittedError):
        FusionClassifier([GaussianNB()]).save(tmp_path / "x.fusion")
    assert not (tmp_path / "x.fusion").exists()


def test_trusted_types_are_scikit_learn_classes():
    for name in TRUSTED_TYPES:
        module, _, attr = name.rpartition(".")
        assert module.startswith("sklearn.")
        assert isinstance(getattr(importlib.import_module(module), attr), type), name


# -- refused files -----------------------------------------------------------------------------


def _rewrite(path, meta, arrays):
    write(path, meta, arrays)
    return path


def test_a_corrupted_byte_is_refused(tmp_path):
    data_bytes = bytearray(saved(fitted_binary()))
    middle = len(data_bytes) // 2
    data_bytes[middle] ^= 0xFF
    path = tmp_path / "corrupted.fusion"
    path.write_bytes(bytes(data_bytes))
    with pytest.raises(PersistenceError):
        fusion.load(path)


def test_an_untrusted_type_smuggled_into_a_base_estimator_is_refused(tmp_path):
    # A consistent file whose first base estimator would call os.system on its input.
    import skops.io

    meta, arrays = parts(saved(fitted_binary()))
    X, y = data()
    evil = make_pipeline(FunctionTransformer(os.system), GaussianNB())
    key = skops_keys(meta["attributes"]["estimators_"])[0]
    arrays[key] = np.frombuffer(skops.io.dumps(evil), dtype=np.uint8)
    path = _rewrite(tmp_path / "evil.fusion", meta, arrays)
    with pytest.raises(PersistenceError, match=r"not trusted: \['posix.system'\]|system"):
        fusion.load(path)


def test_a_compressed_embedded_archive_is_refused(tmp_path):
    import zipfile

    import skops.io

    meta, arrays = parts(saved(fitted_binary()))
    key = skops_keys(meta["params"]["estimators"])[1]
    arrays[key] = np.frombuffer(
        skops.io.dumps(GaussianNB(), compression=zipfile.ZIP_DEFLATED), dtype=np.uint8
    )
    path = _rewrite(tmp_path / "deflated.fusion", meta, arrays)
    with pytest.raises(PersistenceError, match="compressed"):
        fusion.load(path)


def test_altered_fusion_model_fails_the_self_check(tmp_path):
    meta, arrays = parts(saved(fitted_binary()))
    key = meta["check"]["proba"]["__ndarray__"]
    arrays[key] = arrays[key] + 1e-6
    path = _rewrite(tmp_path / "altered.fusion", meta, arrays)
    with pytest.raises(PersistenceError, match="does not reproduce"):
        fusion.load(path)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda m: m["attributes"].pop("fusion_"), "missing"),
        (lambda m: m["attributes"].update(extra_=1), "unknown"),
        (lambda m: m["attributes"].update(stack_method_=["predict"] * 3), "no output"),
        (lambda m: m["params"].update(method="copula"), "CopulaFusion takes"),
        (lambda m: m["params"].update(bogus=1), "bogus"),
    ],
)
def test_inconsistent_state_is_refused(tmp_path, change, match):
    meta, arrays = parts(saved(fitted_binary()))
    change(meta)
    path = _rewrite(tmp_path / "inconsistent.fusion", meta, arrays)
    with pytest.raises(PersistenceError, match=match):
        fusion.load(path)


def test_own_types_load_only_when_the_caller_trusts_them(tmp_path, monkeypatch):
    # A classifier class of the user's own: skops saves it, loading needs trusted=.
    module = tmp_path / "my_models.py"
    module.write_text(
        textwrap.dedent(
            """
            from sklearn.naive_bayes import GaussianNB

            class ShiftedNB(GaussianNB):
                pass
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_models", raising=False)
    from my_models import ShiftedNB

    X, y = data()
    clf = FusionClassifier([ShiftedNB(), LogisticRegression()], degree=2).fit(X, y)
    clf.save(tmp_path / "own.fusion")
    with pytest.raises(PersistenceError, match=r"trusted=\['my_models.ShiftedNB'\]"):
        fusion.load(tmp_path / "own.fusion")
    loaded = fusion.load(tmp_path / "own.fusion", trusted=["my_models.ShiftedNB"])
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    with pytest.raises(TypeError, match="trusted"):
        fusion.load(tmp_path / "own.fusion", trusted="my_models.ShiftedNB")
