"""A fitted :class:`~fusion.FusionClassifier` in a model file: its fusion model as plain data,
its scikit-learn base estimators as embedded skops archives.

The base estimators are arbitrary scikit-learn classifiers, whose fitted state no fixed table
of plain data can describe. Each one (and any other value of the classifier that is not plain
data, such as a splitter given as ``cv``) is written with :func:`skops.io.dumps`, the
scikit-learn project's format for persisting estimators without pickle, and stored in
``arrays.npz`` as a ``uint8`` array referenced by ``{"__skops__": "<npz key>"}``. Loading
asks :func:`skops.io.get_untrusted_types` which types the embedded archive would build
beyond those skops trusts itself (scikit-learn's estimators, numpy and scipy types), and
builds it only when each of them is in :data:`TRUSTED_TYPES` or in the caller's ``trusted``;
any other type, an embedded archive that is not a stored zip, or one skops cannot read makes
loading raise :class:`PersistenceError`.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from ._checks import check_loaded, check_points
from ._classes import class_name, fitted_attributes
from ._codec import Decoder, Encoder
from ._errors import PersistenceError

__all__ = ["CLASSIFIER_NAME", "TRUSTED_TYPES", "encode_classifier", "build_classifier"]

#: The stable name of :class:`~fusion.FusionClassifier` in model files.
CLASSIFIER_NAME = "fusion_classifier"

#: Types that a FusionClassifier's base estimators may hold beyond those skops trusts by
#: default: scikit-learn's own internals of common classifiers (trees and tree ensembles,
#: histogram gradient boosting, neural networks, calibration, stacking and voting), and its
#: cross-validation splitters (``cv``). Building any of them runs scikit-learn's code only.
TRUSTED_TYPES: tuple[str, ...] = (
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
    "sklearn.calibration._CalibratedClassifier",
    "sklearn.calibration._SigmoidCalibration",
    "sklearn.utils._bunch.Bunch",
    "sklearn.model_selection._split.KFold",
    "sklearn.model_selection._split.StratifiedKFold",
    "sklearn.model_selection._split.GroupKFold",
    "sklearn.model_selection._split.StratifiedGroupKFold",
    "sklearn.model_selection._split.ShuffleSplit",
    "sklearn.model_selection._split.StratifiedShuffleSplit",
    "sklearn.model_selection._split.RepeatedKFold",
    "sklearn.model_selection._split.RepeatedStratifiedKFold",
    "sklearn.model_selection._split.PredefinedSplit",
    "sklearn.model_selection._split.TimeSeriesSplit",
)

_SKOPS_TAG = "__skops__"
#: Fitted attributes rebuilt on loading from the others (never stored).
_DERIVED = frozenset({"named_estimators_"})
#: Fitted attributes every fitted FusionClassifier has.
_REQUIRED = frozenset({"classes_", "estimators_", "stack_method_", "fusion_"})


def _skops():
    try:
        import skops.io
    except ImportError:  # pragma: no cover - skops is a dependency of fusion
        raise ImportError(
            "saving and loading a FusionClassifier needs skops: pip install skops."
        ) from None
    return skops.io


def _is_plain(v: Any) -> bool:
    """Whether the model-file grammar itself holds ``v`` (containers are looked into by the
    encoder, which comes back here for their items)."""
    if v is None or type(v) in (bool, int, float, str, list, tuple, dict):
        return True
    if type(v) is np.ndarray or isinstance(v, np.generic):
        return True
    return isinstance(v, BaseEstimator) and class_name(type(v)) is not None


class _ClassifierEncoder(Encoder):
    """The model-file grammar plus embedded skops archives for everything else."""

    def value(self, v: Any, where: str, depth: int) -> Any:
        if _is_plain(v):
            return super().value(v, where, depth)
        try:
            data = _skops().dumps(v)  # stored zip members: nothing in it can inflate
        except Exception as err:  # noqa: BLE001 - skops cannot describe every object
            raise PersistenceError(
                f"{where} holds a {type(v).__module__}.{type(v).__qualname__} that skops "
                f"cannot save without pickle: {type(err).__name__}: {err}"
            ) from err
        return {_SKOPS_TAG: self._store(np.frombuffer(data, dtype=np.uint8).copy())}


class _ClassifierDecoder(Decoder):
    """Reads what :class:`_ClassifierEncoder` writes, building only trusted types."""

    def __init__(self, arrays: dict[str, np.ndarray], trusted: Iterable[str]):
        super().__init__(arrays)
        self.trusted = frozenset(TRUSTED_TYPES) | frozenset(trusted)

    def value(self, v: Any, where: str, depth: int) -> Any:
        if type(v) is dict and set(v) == {_SKOPS_TAG}:
            return self._skops_value(v[_SKOPS_TAG], where)
        return super().value(v, where, depth)

    def _skops_value(self, key: Any, where: str) -> Any:
        arr = self._array(key, where)
        if arr.dtype != np.uint8 or arr.ndim != 1:
            raise PersistenceError(f"{where}: an embedded skops archive must be 1-D uint8 bytes.")
        data = arr.tobytes()
        _check_stored_zip(data, where)
        sio = _skops()
        try:
            needed = sio.get_untrusted_types(data=data)
        except Exception as err:  # noqa: BLE001 - the bytes are untrusted
            raise PersistenceError(
                f"{where}: the embedded skops archive is unreadable: {type(err).__name__}: {err}"
            ) from err
        refused = sorted(set(needed) - self.trusted)
        if refused:
            raise PersistenceError(
                f"{where}: the file would build types that are not trusted: {refused}. Loading "
                "builds only scikit-learn's estimators, numpy and scipy types and the "
                "scikit-learn internals in fusion.persistence.TRUSTED_TYPES. If you trust the "
                f"file and these types, pass trusted={refused!r} to fusion.load."
            )
        try:
            return sio.loads(data, trusted=sorted(needed))
        except Exception as err:  # noqa: BLE001 - the bytes are untrusted
            raise PersistenceError(
                f"{where}: skops cannot load the embedded archive: {type(err).__name__}: {err}"
            ) from err


def _check_stored_zip(data: bytes, where: str) -> None:
    """Refuse an embedded archive that is not a zip of stored (uncompressed) members, the
    only kind :func:`skops.io.dumps` writes here: their sizes are the bytes present, so
    nothing in it can inflate beyond the limits the outer file was read within."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if (
                    info.compress_type != zipfile.ZIP_STORED
                    or info.flag_bits & 0x1
                    or info.file_size != info.compress_size
                ):
                    raise PersistenceError(
                        f"{where}: the embedded skops archive's member {info.filename[:80]!r} "
                        "is compressed or encrypted; fusion writes stored members only."
                    )
    except zipfile.BadZipFile as err:
        raise PersistenceError(f"{where}: the embedded skops archive is not a zip: {err}") from err


def encode_classifier(estimator) -> tuple[dict, dict[str, np.ndarray]]:
    """``({"params", "attributes", "check"}, arrays)`` of a fitted FusionClassifier.

    The ``check`` is the self-check of its fusion model ``fusion_`` (the base estimators
    score raw input, which the file does not hold).
    """
    enc = _ClassifierEncoder()
    where = type(estimator).__name__
    params = estimator.get_params(deep=False)
    declared = fitted_attributes(type(estimator))
    attrs = {}
    for name, value in vars(estimator).items():
        if name in params or name.startswith("_") or name in _DERIVED:
            continue
        if name not in declared:
            raise PersistenceError(
                f"{where}: attribute {name!r} is not a declared fitted attribute of "
                "FusionClassifier; a file holding it could not be loaded."
            )
        attrs[name] = enc.value(value, f"{where}.{name}", 0)
    points = check_points(estimator.fusion_)
    check = {"points": points, "proba": estimator.fusion_.calibrating_function(points)}
    state = {
        "params": {k: enc.value(v, f"{where} parameter {k!r}", 0) for k, v in params.items()},
        "attributes": attrs,
        "check": {k: enc.value(v, f"check {k}", 0) for k, v in check.items()},
    }
    return state, enc.arrays


def build_classifier(meta: dict, arrays: dict[str, np.ndarray], trusted: Iterable[str]):
    """The FusionClassifier of a model file, its state checked; returns ``(estimator,
    decoder)`` (the caller checks that every array was used)."""
    from ..classifier import FusionClassifier

    decoder = _ClassifierDecoder(arrays, trusted)
    kwargs = {
        k: decoder.value(v, f"parameter {k!r}", 1) for k, v in _object(meta, "params").items()
    }
    est = FusionClassifier(**kwargs)
    est.validate_params()  # refuses unknown parameters, bad estimators, unknown fusion ones
    members = est.named_estimators
    names, given = list(members), list(members.values())
    attributes = _object(meta, "attributes")
    allowed = fitted_attributes(FusionClassifier) - _DERIVED
    unknown, missing = set(attributes) - allowed, _REQUIRED - set(attributes)
    if unknown or missing:
        raise PersistenceError(
            f"invalid fusion model file: FusionClassifier attributes unknown {sorted(unknown)}, "
            f"missing {sorted(missing)}."
        )
    for attr, value in attributes.items():
        setattr(est, attr, decoder.value(value, f"FusionClassifier.{attr}", 1))
    check = _object(meta, "check")
    if set(check) != {"points", "proba"}:
        raise PersistenceError("'check' must hold exactly 'points' and 'proba'.")
    points = decoder.value(check["points"], "check points", 0)
    proba = decoder.value(check["proba"], "check proba", 0)
    _check_classifier_state(est, names, given)
    check_loaded(est.fusion_, points, proba, meta["fusion_version"])
    est.restore_derived_attributes()
    return est, decoder


def _object(meta: dict, key: str) -> dict:
    value = meta[key]
    if type(value) is not dict:
        raise PersistenceError(f"invalid fusion model file: {key!r} must be a JSON object.")
    return value


def _bad(msg: str):
    raise PersistenceError(f"invalid fusion model file: {msg}")


def _check_classifier_state(est, names: list[str], given: list) -> None:
    """The fitted state must fit together: the estimators, their outputs, the fusion model."""
    from .._base import FusionEstimator
    from .._registry import METHODS
    from ..classifier.crossfit import RESPONSE_METHODS

    kept = [e for e in given if not (isinstance(e, str) and e == "drop")]
    models, methods, fusion = est.estimators_, est.stack_method_, est.fusion_
    if type(models) is not list or len(models) != len(kept):
        _bad(f"estimators_ must be a list of the {len(kept)} estimators that are not 'drop'.")
    if type(methods) is not list or len(methods) != len(kept):
        _bad("stack_method_ must name one output per estimator.")
    kept_names = [
        n for n, e in zip(names, given, strict=True) if not (isinstance(e, str) and e == "drop")
    ]
    for name, model, method in zip(kept_names, models, methods, strict=True):
        if method not in RESPONSE_METHODS or not hasattr(model, method):
            _bad(f"the estimator {name!r} has no output {method!r}.")
    if not isinstance(fusion, FusionEstimator) or type(fusion) is not METHODS.get(est.method):
        _bad(f"fusion_ must be a fitted {est.method!r} fusion model.")
    if fusion.n_features_in_ != len(models):
        _bad(f"fusion_ fuses {fusion.n_features_in_} scores, not {len(models)}.")
    classes = est.classes_
    if not (
        isinstance(classes, np.ndarray) and classes.ndim == 1 and classes.shape[0] >= 2
        and np.array_equal(classes, np.asarray(fusion.classes_))
    ):  # fmt: skip
        _bad("classes_ must be the labels of fusion_, at least two.")
    for model in models:
        model_classes = getattr(model, "classes_", None)
        if model_classes is not None and not np.array_equal(np.asarray(model_classes), classes):
            _bad("a base estimator knows other classes than classes_.")
    n = getattr(est, "n_features_in_", None)
    if n is not None and (type(n) is not int or n < 1):
        _bad(f"n_features_in_ must be a positive integer, got {n!r}.")
