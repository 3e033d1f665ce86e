"""``fusion.load`` on tampered files: every damage is refused with a PersistenceError that
names it, and altered fitted arrays never load as a different model."""

from __future__ import annotations

import io
import json
import pickle
import zipfile

import joblib
import numpy as np
import pytest

import fusion
from fusion.persistence import FORMAT_VERSION, PersistenceError

from ._helpers import (
    FAST_PARAMS,
    SAVEABLE_NAMES,
    archive,
    fitted,
    load_fails,
    members,
    scores,
    write,
)

pytestmark = pytest.mark.filterwarnings("error")

_BASE_ATTRIBUTES = {"classes_", "ecdf_", "n_features_in_", "feature_names_in_"}


# -- refusing to load ----------------------------------------------------------------------------


def test_persistence_error_is_a_value_error():
    assert issubclass(fusion.PersistenceError, ValueError)


@pytest.mark.parametrize("name", SAVEABLE_NAMES)
def test_load_refuses_pickle_and_joblib(name, tmp_path):
    est, _ = fitted(name)
    (tmp_path / "m.pkl").write_bytes(pickle.dumps(est))
    load_fails(tmp_path / "m.pkl", r"not a readable fusion model file.*looks like a pickle")
    joblib.dump(est, tmp_path / "m.joblib")
    load_fails(tmp_path / "m.joblib", r"not a readable fusion model file")


@pytest.mark.parametrize(
    "content", [b"", b"hello", b"PK\x03\x04garbage"], ids=["empty", "text", "zip-magic"]
)
def test_load_refuses_non_archives(content, tmp_path):
    (tmp_path / "m.fusion").write_bytes(content)
    load_fails(tmp_path / "m.fusion", r"not a readable fusion model file")


@pytest.mark.parametrize("name", SAVEABLE_NAMES)
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.999])
def test_load_refuses_truncated_file(name, fraction, tmp_path):
    est, _ = fitted(name)
    est.save(tmp_path / "m.fusion")
    data = (tmp_path / "m.fusion").read_bytes()
    (tmp_path / "t.fusion").write_bytes(data[: int(len(data) * fraction)])
    load_fails(tmp_path / "t.fusion", r"not a readable fusion model file")


def test_load_refuses_corrupted_bytes(tmp_path):
    est, _ = fitted("bernstein")
    est.save(tmp_path / "m.fusion")
    data = bytearray((tmp_path / "m.fusion").read_bytes())
    with zipfile.ZipFile(tmp_path / "m.fusion") as zf:
        info = zf.getinfo("meta.json")
    data[info.header_offset + 30 + len(info.filename) + 5] ^= 0xFF  # inside compressed meta
    (tmp_path / "c.fusion").write_bytes(bytes(data))
    load_fails(tmp_path / "c.fusion", r"not a readable fusion model file|not valid JSON")


def test_load_refuses_newer_format_version(tmp_path):
    meta, arrays = archive("bernstein")
    meta["format_version"] = FORMAT_VERSION + 1
    load_fails(write(tmp_path / "m.fusion", meta, arrays), r"format version 2.*Upgrade fusion")


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
    meta, arrays = archive("bernstein")
    edit(meta)
    load_fails(write(tmp_path / "m.fusion", meta, arrays), match)


def test_load_refuses_invalid_parameter_value(tmp_path):
    meta, arrays = archive("bernstein")
    meta["params"]["max_iter"] = "many"
    load_fails(write(tmp_path / "m.fusion", meta, arrays), r"'max_iter' parameter")


def test_load_refuses_invalid_parameter_of_a_nested_normalizer(tmp_path):
    meta, arrays = archive("bernstein")
    meta["attributes"]["ecdf_"]["params"]["n_knots"] = 1
    load_fails(write(tmp_path / "m.fusion", meta, arrays), r"'n_knots' parameter")


def test_load_refuses_one_score_for_a_class_that_takes_two(tmp_path, monkeypatch):
    est = fusion.RPRCalibrator(**FAST_PARAMS["rpr"]).fit(*scores(60, M=1))
    est.save(tmp_path / "m.fusion")
    monkeypatch.setattr(fusion.RPRCalibrator, "_allows_1d", False)
    load_fails(tmp_path / "m.fusion", r"RPRCalibrator needs n_features_in_ >= 2, got 1")


def test_load_refuses_non_standard_json(tmp_path):
    meta, arrays = archive("bernstein")
    text = json.dumps(meta).replace('"lam_grid": null', '"lam_grid": NaN')
    load_fails(write(tmp_path / "m.fusion", meta, arrays, meta_text=text), r"token NaN")
    text = json.dumps(meta).replace('"cv": 5', '"cv": 5, "cv": 6')
    load_fails(write(tmp_path / "m.fusion", meta, arrays, meta_text=text), r"repeats a key")
    load_fails(write(tmp_path / "m.fusion", meta, arrays, meta_text="[1, 2"), r"not valid JSON")
    deep = '{"a": ' * 100_000 + "1" + "}" * 100_000
    load_fails(write(tmp_path / "m.fusion", meta, arrays, meta_text=deep), r"not valid JSON")


def test_load_refuses_extra_member(tmp_path):
    meta, arrays = archive("bernstein")
    path = write(tmp_path / "m.fusion", meta, arrays, extra={"payload.pkl": b"\x80\x05."})
    load_fails(path, r"expected exactly the members")


def test_load_refuses_pickled_array_inside_npz(tmp_path):
    meta, arrays = archive("bernstein")
    key = meta["attributes"]["classes_"]["__ndarray__"]
    arrays[key] = np.array([0, "1"], dtype=object)  # stored by np.save as a pickle
    path = write(tmp_path / "m.fusion", meta, arrays, allow_pickle=True)
    load_fails(path, r"not a valid pickle-free \.npz")


def test_load_refuses_unreferenced_and_shared_arrays(tmp_path):
    meta, arrays = archive("bernstein")
    arrays["extra"] = np.zeros(3)
    load_fails(write(tmp_path / "a.fusion", meta, arrays), r"arrays no field refers to")
    meta, arrays = archive("bernstein")
    meta["attributes"]["ecdf_"]["attributes"]["values_"][0] = meta["attributes"]["ecdf_"][
        "attributes"
    ]["values_"][1]
    load_fails(write(tmp_path / "b.fusion", meta, arrays), r"referenced twice")


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
    meta, arrays = archive("bernstein")
    ecdf = meta["attributes"]["ecdf_"]["attributes"]
    kk, vk = ecdf["knots_"][0]["__ndarray__"], ecdf["values_"][0]["__ndarray__"]
    arrays[kk], arrays[vk] = edit(arrays[kk], arrays[vk])
    load_fails(write(tmp_path / "m.fusion", meta, arrays), match)


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


@pytest.mark.parametrize("name", SAVEABLE_NAMES)
@pytest.mark.parametrize("edit", list(_ARRAY_EDITS))
def test_altered_method_arrays_never_load_as_a_different_model(name, edit, tmp_path):
    # Without any declaration from the method, the stored self-check guarantees: a file whose
    # fitted arrays were altered (yet still evaluate) is refused, or, if the altered arrays
    # are ones predictions do not use (diagnostics), the model predicts exactly as saved.
    est, S = fitted(name)
    meta, arrays = archive(name)
    keys = [k for k in _method_arrays(meta) if arrays[k].dtype.kind == "f" and arrays[k].size > 1]
    if not keys:
        pytest.skip(f"{name} stores no float arrays of its own")
    for k in keys:
        arrays[k] = _ARRAY_EDITS[edit](arrays[k])
    try:
        loaded = fusion.load(write(tmp_path / "m.fusion", meta, arrays))
    except PersistenceError as err:
        assert "invalid fusion model file" in str(err)
        return
    X = np.vstack([S, np.random.default_rng(1).normal(scale=3, size=(200, S.shape[1]))])
    # within the self-check's tolerance (an edit that moves no prediction beyond it passes)
    np.testing.assert_allclose(loaded.predict_proba(X), est.predict_proba(X), rtol=0, atol=1e-9)


@pytest.mark.parametrize("edit", list(_ARRAY_EDITS))
def test_altered_bernstein_coefficients_are_refused(edit, tmp_path):
    # coef_ is what BernsteinFusion predicts with: every alteration must be caught (a tensor
    # with a small penalty, so that no edit leaves the coefficients as they were).
    S, y = scores(200, seed=5)
    buf = io.BytesIO()
    fusion.BernsteinFusion(degree=2, lam=1e-3, structure="tensor").fit(S, y).save(buf)
    meta_bytes, npz_bytes = members(buf.getvalue())
    meta = json.loads(meta_bytes)
    with np.load(io.BytesIO(npz_bytes)) as npz:
        arrays = {k: npz[k] for k in npz.files}
    key = meta["attributes"]["coef_"]["__ndarray__"]
    assert not np.array_equal(_ARRAY_EDITS[edit](arrays[key]), arrays[key])
    arrays[key] = _ARRAY_EDITS[edit](arrays[key])
    load_fails(write(tmp_path / "m.fusion", meta, arrays), r"invalid fusion model file")


def test_load_refuses_tampered_self_check(tmp_path):
    meta, arrays = archive("bernstein")
    key = meta["check"]["proba"]["__ndarray__"]
    arrays[key] = arrays[key] + 1e-6
    load_fails(
        write(tmp_path / "m.fusion", meta, arrays),
        r"does not reproduce the probabilities recorded when it was saved",
    )
