"""``estimator.save`` / ``fusion.load``: exact round trips, refusals, and hostile files.

Tests fusion/persistence.py for every registered method.
"""

from __future__ import annotations

import functools
import io
import json
import pickle
import zipfile

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import fusion
from fusion.persistence import FORMAT_VERSION, PersistenceError, documented_attributes

from ._methods import METHOD_NAMES, make, scores

pytestmark = pytest.mark.filterwarnings("error")

_BASE_ATTRIBUTES = {"classes_", "ecdf_", "n_features_in_", "feature_names_in_"}


@functools.cache
def _fitted(name):
    # One fit per method for the tests that only read it.
    S, y = scores(80, seed=5)
    return make(name).fit(S, y), S


def _roundtrip(est, tmp_path):
    path = tmp_path / "model.fusion"
    est.save(path)
    return fusion.load(path)


def _assert_same(a, b, where="model"):
    """Same value, same type, same dtype, recursively (estimators by their __dict__)."""
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype.kind == "O":
            for i, (x, z) in enumerate(zip(a.ravel(), b.ravel(), strict=True)):
                _assert_same(x, z, f"{where}[{i}]")
        else:
            np.testing.assert_array_equal(a, b, err_msg=where, strict=True)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, z) in enumerate(zip(a, b, strict=True)):
            _assert_same(x, z, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif hasattr(a, "get_params"):
        public = {k: v for k, v in vars(a).items() if not k.startswith("_")}
        _assert_same(public, {k: v for k, v in vars(b).items() if not k.startswith("_")}, where)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), where
    else:
        assert a == b, where


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


@pytest.mark.parametrize("name", METHOD_NAMES)
@pytest.mark.parametrize("labels", list(LABELS))
def test_roundtrip_is_exact(name, labels, tmp_path):
    S, y = scores(80, seed=1)
    est = make(name).fit(S, LABELS[labels](y))
    loaded = _roundtrip(est, tmp_path)
    _assert_same(est, loaded)
    assert loaded.get_params() == est.get_params()
    X = np.vstack([S, S * 3 - 1, [[1e300, -1e300]]])
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X), strict=True)
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X), strict=True)


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_roundtrip_dataframe_feature_names(name, tmp_path):
    S, y = scores(80, seed=2)
    df = pd.DataFrame(S, columns=["model_a", "model_b"])
    est = make(name).fit(df, y)
    loaded = _roundtrip(est, tmp_path)
    _assert_same(est, loaded)
    assert list(loaded.feature_names_in_) == ["model_a", "model_b"]
    np.testing.assert_array_equal(loaded.predict_proba(df), est.predict_proba(df))


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_roundtrip_through_file_objects(name):
    est, S = _fitted(name)
    buf = io.BytesIO()
    est.save(buf)
    buf.seek(0)
    np.testing.assert_array_equal(fusion.load(buf).predict_proba(S), est.predict_proba(S))


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_loaded_model_clones_and_refits(name, tmp_path):
    est, S = _fitted(name)
    loaded = _roundtrip(est, tmp_path)
    fresh = clone(loaded)
    assert fresh.get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        fresh.predict_proba(S)
    S2, y2 = scores(80, seed=5)
    np.testing.assert_array_equal(fresh.fit(S2, y2).predict_proba(S), est.predict_proba(S))


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_every_saved_attribute_is_documented(name):
    # The loader accepts only documented fitted attributes (numpydoc "Attributes" sections).
    est, _ = _fitted(name)
    fitted = {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}
    assert fitted <= documented_attributes(type(est))


def test_nonfinite_floats_and_containers_roundtrip(tmp_path):
    # The value grammar itself, on the reference method: tagged floats, tuples, dict keys of
    # several types, numpy scalars, 0-d arrays, string and complex arrays, nested lists.
    est, S = _fitted("bernstein")
    est = clone(est).fit(S, scores(80, seed=5)[1])
    exotic = {
        "nan": float("nan"),
        ("t", 1, 2.5, True, None): [np.float32(1.5), np.int8(-3), np.bool_(True), np.str_("s")],
        3: (float("inf"), float("-inf"), -0.0, 10**30),
        2.5: {"nested": [np.arange(3, dtype=np.int16), np.array(4.0), np.array(["a", "bc"])]},
        False: np.array([1 + 2j]),
    }
    est.cv_scores_ = exotic  # a documented attribute, abused as a container of everything
    loaded = _roundtrip(est, tmp_path)
    _assert_same(est.cv_scores_, loaded.cv_scores_)
    assert str(loaded.cv_scores_[3][2]) == "-0.0"


# -- pickle and joblib keep working for scikit-learn users -----------------------------------------


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_pickle_and_joblib(name, tmp_path):
    est, S = _fitted(name)
    p = est.predict_proba(S)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict_proba(S), p)
    joblib.dump(est, tmp_path / "model.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "model.joblib").predict_proba(S), p)


# -- refusing to save ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", METHOD_NAMES)
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
    est, _ = _fitted("bernstein")
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
    est, _ = _fitted("bernstein")
    est = pickle.loads(pickle.dumps(est))
    est.threshold = 0.3
    with pytest.raises(PersistenceError, match=r"'threshold' is neither a constructor parameter"):
        est.save(tmp_path / "m.fusion")


# -- refusing to load ----------------------------------------------------------------------------


def _archive(name) -> tuple[dict, dict]:
    est, _ = _fitted(name)
    buf = io.BytesIO()
    est.save(buf)
    with zipfile.ZipFile(buf) as zf:
        meta = json.loads(zf.read("meta.json"))
        with np.load(io.BytesIO(zf.read("arrays.npz"))) as npz:
            arrays = {k: npz[k] for k in npz.files}
    return meta, arrays


def _write(path, meta, arrays, *, meta_text=None, extra=None, allow_pickle=False):
    npz = io.BytesIO()
    np.savez(npz, allow_pickle=allow_pickle, **arrays)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("meta.json", meta_text if meta_text is not None else json.dumps(meta))
        zf.writestr("arrays.npz", npz.getvalue())
        for member, data in (extra or {}).items():
            zf.writestr(member, data)
    return path


def _load_fails(path, match):
    with pytest.raises(PersistenceError, match=match):
        fusion.load(path)


def test_persistence_error_is_a_value_error():
    assert issubclass(fusion.PersistenceError, ValueError)


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_load_refuses_pickle_and_joblib(name, tmp_path):
    est, _ = _fitted(name)
    (tmp_path / "m.pkl").write_bytes(pickle.dumps(est))
    _load_fails(tmp_path / "m.pkl", r"not a readable fusion model file.*looks like a pickle")
    joblib.dump(est, tmp_path / "m.joblib")
    _load_fails(tmp_path / "m.joblib", r"not a readable fusion model file")


@pytest.mark.parametrize(
    "content", [b"", b"hello", b"PK\x03\x04garbage"], ids=["empty", "text", "zip-magic"]
)
def test_load_refuses_non_archives(content, tmp_path):
    (tmp_path / "m.fusion").write_bytes(content)
    _load_fails(tmp_path / "m.fusion", r"not a readable fusion model file")


@pytest.mark.parametrize("name", METHOD_NAMES)
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.999])
def test_load_refuses_truncated_file(name, fraction, tmp_path):
    est, _ = _fitted(name)
    est.save(tmp_path / "m.fusion")
    data = (tmp_path / "m.fusion").read_bytes()
    (tmp_path / "t.fusion").write_bytes(data[: int(len(data) * fraction)])
    _load_fails(tmp_path / "t.fusion", r"not a readable fusion model file")


def test_load_refuses_corrupted_bytes(tmp_path):
    est, _ = _fitted("bernstein")
    est.save(tmp_path / "m.fusion")
    data = bytearray((tmp_path / "m.fusion").read_bytes())
    with zipfile.ZipFile(tmp_path / "m.fusion") as zf:
        info = zf.getinfo("meta.json")
    data[info.header_offset + 30 + len(info.filename) + 5] ^= 0xFF  # inside compressed meta
    (tmp_path / "c.fusion").write_bytes(bytes(data))
    _load_fails(tmp_path / "c.fusion", r"not a readable fusion model file|not valid JSON")


def test_load_refuses_newer_format_version(tmp_path):
    meta, arrays = _archive("bernstein")
    meta["format_version"] = FORMAT_VERSION + 1
    _load_fails(_write(tmp_path / "m.fusion", meta, arrays), r"format version 2.*Upgrade fusion")


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda m: m.update(format="sklearn-pickle"), r"format is 'sklearn-pickle'"),
        (lambda m: m.update(format_version="1"), r"format_version must be an integer"),
        (lambda m: m.update(format_version=True), r"format_version must be an integer"),
        (lambda m: m.update(format_version=0), r"unknown format_version 0"),
        (lambda m: m.pop("check"), r"missing \['check'\]"),
        (lambda m: m.update(extra=1), r"unknown \['extra'\]"),
        (lambda m: m.update(estimator="os.system"), r"unknown estimator 'os.system'"),
        (lambda m: m.update(estimator="ecdf"), r"unknown estimator 'ecdf'"),
        (lambda m: m.update(estimator=["bernstein"]), r"registered method name"),
        (lambda m: m.update(params=[]), r"'params' must be a JSON object"),
        (lambda m: m["params"].update(evil=1), r"unknown parameters \['evil'\]"),
        (lambda m: m["attributes"].update(evil_=1), r"unknown fitted attribute 'evil_'"),
        (lambda m: m["attributes"].update(_private=1), r"unknown fitted attribute '_private'"),
        (lambda m: m["attributes"].update(__class__=1), r"unknown fitted attribute '__class__'"),
        (lambda m: m["attributes"].update(predict=1), r"unknown fitted attribute 'predict'"),
        (lambda m: m["attributes"].update(n_features_in_="2"), r"n_features_in_ must be a"),
        (lambda m: m["attributes"].update(n_features_in_=3), r"ecdf_ must hold|3 score columns"),
        (lambda m: m["attributes"].pop("ecdf_"), r"'ecdf_' is missing"),
        (lambda m: m["attributes"].update(classes_="ab"), r"classes_ must be an array"),
        (
            lambda m: m["attributes"].update(classes_={"__objarray__": [1, "a"], "shape": [2]}),
            r"two sorted distinct labels",
        ),
        (
            lambda m: m["attributes"].update(classes_={"__objarray__": [1, 2], "shape": [3]}),
            r"shape \[3\] does not fit",
        ),
        (
            lambda m: m["attributes"].update(
                classes_={"__objarray__": [{"__tuple__": []}, 2], "shape": [2]}
            ),
            r"scalar labels only",
        ),
        (
            lambda m: m["attributes"].update(classes_={"__ndarray__": "zz"}),
            r"missing array 'zz'",
        ),
        (
            lambda m: m["attributes"].update(classes_={"__pickle__": "x"}),
            r"unknown tagged value",
        ),
        (
            lambda m: m["attributes"].update(classes_={"__float__": "1e999"}),
            r"bad __float__ value",
        ),
        (
            lambda m: m["attributes"]["ecdf_"].update({"__estimator__": "sklearn.svm.SVC"}),
            r"unknown estimator 'sklearn.svm.SVC'",
        ),
        (
            lambda m: m["attributes"]["ecdf_"]["attributes"].update(weights_=[1.0]),
            r"unknown fitted attribute 'weights_' for ECDFNormalizer",
        ),
        (
            lambda m: m["attributes"].update(
                ecdf_={"__estimator__": "bernstein", "params": {}, "attributes": {}}
            ),
            r"ecdf_ must be an ECDFNormalizer",
        ),
        (
            lambda m: m["attributes"].update(classes_={"__dict__": [[[1], 2]]}),
            r"dict key 0 is not hashable",
        ),
        (lambda m: m["check"].update(proba=[0.5]), r"self-check must hold float64"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_load_refuses_tampered_meta(edit, match, tmp_path):
    meta, arrays = _archive("bernstein")
    edit(meta)
    _load_fails(_write(tmp_path / "m.fusion", meta, arrays), match)


def test_load_refuses_invalid_parameter_value(tmp_path):
    meta, arrays = _archive("bernstein")
    meta["params"]["max_iter"] = "many"
    _load_fails(_write(tmp_path / "m.fusion", meta, arrays), r"'max_iter' parameter")


def test_load_refuses_non_standard_json(tmp_path):
    meta, arrays = _archive("bernstein")
    text = json.dumps(meta).replace('"random_state": null', '"random_state": NaN')
    _load_fails(_write(tmp_path / "m.fusion", meta, arrays, meta_text=text), r"token NaN")
    text = json.dumps(meta).replace('"cv": 5', '"cv": 5, "cv": 6')
    _load_fails(_write(tmp_path / "m.fusion", meta, arrays, meta_text=text), r"repeats a key")
    _load_fails(_write(tmp_path / "m.fusion", meta, arrays, meta_text="[1, 2"), r"not valid JSON")
    deep = '{"a": ' * 100_000 + "1" + "}" * 100_000
    _load_fails(_write(tmp_path / "m.fusion", meta, arrays, meta_text=deep), r"not valid JSON")


def test_load_refuses_extra_member(tmp_path):
    meta, arrays = _archive("bernstein")
    path = _write(tmp_path / "m.fusion", meta, arrays, extra={"payload.pkl": b"\x80\x05."})
    _load_fails(path, r"expected exactly the members")


def test_load_refuses_pickled_array_inside_npz(tmp_path):
    meta, arrays = _archive("bernstein")
    key = meta["attributes"]["classes_"]["__ndarray__"]
    arrays[key] = np.array([0, "1"], dtype=object)  # stored by np.save as a pickle
    path = _write(tmp_path / "m.fusion", meta, arrays, allow_pickle=True)
    _load_fails(path, r"not a valid pickle-free \.npz")


def test_load_refuses_unreferenced_and_shared_arrays(tmp_path):
    meta, arrays = _archive("bernstein")
    arrays["extra"] = np.zeros(3)
    _load_fails(_write(tmp_path / "a.fusion", meta, arrays), r"arrays no field refers to")
    meta, arrays = _archive("bernstein")
    meta["attributes"]["ecdf_"]["attributes"]["values_"][0] = meta["attributes"]["ecdf_"][
        "attributes"
    ]["values_"][1]
    _load_fails(_write(tmp_path / "b.fusion", meta, arrays), r"referenced twice")


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda k, v: (k[::-1], v), r"not increasing float arrays"),
        (lambda k, v: (k, v * 2), r"not increasing float arrays"),
        (lambda k, v: (k[:-1], v), r"not increasing float arrays"),
        (lambda k, v: (k.astype(np.float32), v), r"not increasing float arrays"),
    ],
    ids=["reversed", "values-out-of-range", "length", "dtype"],
)
def test_load_refuses_inconsistent_ecdf(edit, match, tmp_path):
    meta, arrays = _archive("bernstein")
    ecdf = meta["attributes"]["ecdf_"]["attributes"]
    kk, vk = ecdf["knots_"][0]["__ndarray__"], ecdf["values_"][0]["__ndarray__"]
    arrays[kk], arrays[vk] = edit(arrays[kk], arrays[vk])
    _load_fails(_write(tmp_path / "m.fusion", meta, arrays), match)


def _method_arrays(meta):
    """npz keys of the method's own array attributes (not the base ones)."""
    keys = []

    def walk(v):
        if isinstance(v, dict):
            if "__ndarray__" in v:
                keys.append(v["__ndarray__"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for attr, v in meta["attributes"].items():
        if attr not in _BASE_ATTRIBUTES:
            walk(v)
    return keys


_ARRAY_EDITS = {
    "flattened": lambda a: a.ravel(),
    "truncated": lambda a: a.ravel()[:-1],
    "flipped": lambda a: np.flip(a),
    "float32": lambda a: a.astype(np.float32),
    "perturbed": lambda a: a + 1e-3 * np.abs(a).max(),
}


@pytest.mark.parametrize("name", METHOD_NAMES)
@pytest.mark.parametrize("edit", list(_ARRAY_EDITS))
def test_altered_method_arrays_never_load_as_a_different_model(name, edit, tmp_path):
    # Without any declaration from the method, the stored self-check guarantees: a file whose
    # fitted arrays were altered (yet still evaluate) is refused, or, if the altered arrays
    # are ones predictions do not use (diagnostics), the model predicts exactly as saved.
    est, S = _fitted(name)
    meta, arrays = _archive(name)
    keys = [k for k in _method_arrays(meta) if arrays[k].dtype.kind == "f" and arrays[k].size > 1]
    if not keys:
        pytest.skip(f"{name} stores no float arrays of its own")
    for k in keys:
        arrays[k] = _ARRAY_EDITS[edit](arrays[k])
    try:
        loaded = fusion.load(_write(tmp_path / "m.fusion", meta, arrays))
    except PersistenceError as err:
        assert "invalid fusion model file" in str(err)
        return
    X = np.vstack([S, np.random.default_rng(1).normal(scale=3, size=(200, S.shape[1]))])
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize("edit", list(_ARRAY_EDITS))
def test_altered_bernstein_coefficients_are_refused(edit, tmp_path):
    # coef_ is what BernsteinFusion predicts with: every alteration must be caught.
    meta, arrays = _archive("bernstein")
    key = meta["attributes"]["coef_"]["__ndarray__"]
    arrays[key] = _ARRAY_EDITS[edit](arrays[key])
    _load_fails(_write(tmp_path / "m.fusion", meta, arrays), r"invalid fusion model file")


def test_load_refuses_tampered_self_check(tmp_path):
    meta, arrays = _archive("bernstein")
    key = meta["check"]["proba"]["__ndarray__"]
    arrays[key] = arrays[key] + 1e-6
    _load_fails(
        _write(tmp_path / "m.fusion", meta, arrays),
        r"does not reproduce the probabilities recorded when it was saved",
    )
