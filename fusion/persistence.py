"""Saving and loading fitted models without pickle: :meth:`FusionEstimator.save`, :func:`load`.

File format ``fusion-model``, version 1
=======================================
One zip archive holding exactly two members:

``meta.json``
    A JSON object (UTF-8, no NaN/Infinity tokens) with exactly these keys:

    ``format``          the string ``"fusion-model"``
    ``format_version``  integer, 1 for this layout; readers refuse newer versions
    ``fusion_version``  the ``fusion.__version__`` that wrote the file (informational)
    ``estimator``       the *registered name* of the estimator class in :data:`fusion.METHODS`
                        (never an import path: only registered classes can be instantiated)
    ``params``          object: constructor parameter name -> value
    ``attributes``      object: fitted attribute name -> value
    ``check``           object ``{"points": (k, M) array, "proba": (k,) array}``: the
                        calibrating function of the saved model at ``points`` (self-check)

``arrays.npz``
    The numpy arrays and numpy scalars referenced from ``meta.json``, each stored once under
    the key named by its reference; read with ``allow_pickle=False``.

Values are JSON with tagged objects for what JSON lacks, recursively:

====================================================  ===========================================
Python value                                          JSON
====================================================  ===========================================
None, bool, int, str, list                            themselves
finite float                                          a number (``repr``, exact)
nan, inf, -inf                                        ``{"__float__": "nan" | "inf" | "-inf"}``
tuple                                                 ``{"__tuple__": [...]}``
dict (keys: any hashable value of this table)         ``{"__dict__": [[key, value], ...]}``
ndarray of dtype kind b, i, u, f, c, U or S           ``{"__ndarray__": "<npz key>"}``
numpy scalar of those kinds                           ``{"__npscalar__": "<npz key>"}`` (0-d)
ndarray of dtype object holding scalars (labels)      ``{"__objarray__": [...], "shape": [...]}``
fitted ECDFNormalizer or registered estimator         ``{"__estimator__": name, "params": {...},
                                                      "attributes": {...}}``
====================================================  ===========================================

Dtypes, numpy scalar types and container types round-trip exactly, so predictions of a loaded
model are bit-for-bit those of the saved one.

What is saved
-------------
The constructor parameters (``get_params(deep=False)``) and every public instance attribute
whose name ends in ``_`` (scikit-learn's fitted-attribute convention). Private attributes
(leading ``_``) are not saved: a method may cache helpers there only if it rebuilds them when
they are missing. Anything that is not plain data in the sense of the table above (a scipy or
scikit-learn object, a set, a ``RandomState``, a function, ...) makes :func:`save` raise
:class:`PersistenceError` before any file is written.

What loading checks
-------------------
Loading never unpickles and never imports a name taken from the file. It raises
:class:`PersistenceError` (a ``ValueError``) for anything but a well-formed file of a known
version: a pickle or other non-zip file, a truncated or corrupted archive, unknown or missing
members or keys, a newer ``format_version``, an unregistered estimator name, unknown
parameters or parameter values the estimator rejects, a fitted attribute the class does not
document (the ``Attributes`` section of the class docstrings is the declaration; this name
check is skipped only when docstrings are stripped, ``python -OO``), malformed tagged values,
arrays of disallowed dtypes, unreferenced or doubly referenced arrays, and base fitted state
that is inconsistent (``classes_``, ``n_features_in_``, ``feature_names_in_``, the ECDF knots).
Finally the self-check: at save time the calibrating function is evaluated at a few points
of the unit cube and both are stored (``check``); the loaded model must reproduce those
probabilities to within ``1e-9``. This catches, for every method without any declaration on
its part, fitted arrays that were altered or reshaped consistently enough to evaluate, and a
fusion version that computes a saved model differently from the one that wrote it. Any
failure there is reported as a :class:`PersistenceError` too.
"""

from __future__ import annotations

import inspect
import io
import json
import math
import os
import re
import zipfile
import zlib
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

__all__ = ["FORMAT", "FORMAT_VERSION", "PersistenceError", "save", "load"]

FORMAT = "fusion-model"
FORMAT_VERSION = 1

_META = "meta.json"
_ARRAYS = "arrays.npz"
_META_KEYS = {
    "format",
    "format_version",
    "fusion_version",
    "estimator",
    "params",
    "attributes",
    "check",
}
_CHECK_ATOL = 1e-9
_MAX_META_BYTES = 64 * 2**20
_MAX_DEPTH = 64
_ARRAY_KINDS = "biufcUS"
_ATTR_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*_\Z")
_ECDF_NAME = "ecdf"


class PersistenceError(ValueError):
    """A model cannot be saved as plain data, or a file is not a valid fusion model file."""


# ---------------------------------------------------------------------------------------------
# Registry of the classes a file may name.


def _allowed_classes() -> dict[str, type]:
    from . import METHODS
    from .ecdf import ECDFNormalizer

    allowed = dict(METHODS)
    allowed.setdefault(_ECDF_NAME, ECDFNormalizer)
    return allowed


def _class_name(cls: type) -> str | None:
    for name, registered in _allowed_classes().items():
        if registered is cls:
            return name
    return None


def documented_attributes(cls: type) -> set[str] | None:
    """Fitted-attribute names listed in the numpydoc ``Attributes`` sections along ``cls``'s MRO.

    Returns None when ``cls`` has no docstring (stripped by ``python -OO``).
    """
    if not cls.__dict__.get("__doc__"):
        return None
    names: set[str] = set()
    for klass in cls.__mro__:
        doc = klass.__dict__.get("__doc__")
        if not doc:
            continue
        lines = inspect.cleandoc(doc).splitlines()
        for i in range(len(lines) - 1):
            if lines[i].strip() != "Attributes" or not _is_rule(lines[i + 1]):
                continue
            for j in range(i + 2, len(lines)):
                line = lines[j]
                if j + 1 < len(lines) and _is_rule(lines[j + 1]) and line.strip():
                    break  # next section header
                if line.strip() and not line[0].isspace():
                    head = line.split(" : ")[0]
                    names.update(t.strip() for t in head.split(",") if _ATTR_NAME.match(t.strip()))
    return names


def _is_rule(line: str) -> bool:
    s = line.strip()
    return len(s) >= 3 and set(s) == {"-"}


# ---------------------------------------------------------------------------------------------
# Saving.


class _Encoder:
    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}

    def _store(self, arr: np.ndarray) -> str:
        key = f"a{len(self.arrays)}"
        self.arrays[key] = arr
        return key

    def estimator(self, est: BaseEstimator, where: str) -> dict:
        params = est.get_params(deep=False)
        attrs = {}
        for name, value in vars(est).items():
            if name in params or name.startswith("_"):
                continue
            if not name.endswith("_"):
                raise PersistenceError(
                    f"{where}: attribute {name!r} is neither a constructor parameter nor a "
                    "fitted attribute (name ending in '_'); it cannot be saved."
                )
            attrs[name] = self.value(value, f"{where}.{name}", 0)
        return {
            "params": {k: self.value(v, f"{where} parameter {k!r}", 0) for k, v in params.items()},
            "attributes": attrs,
        }

    def value(self, v: Any, where: str, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise PersistenceError(f"{where}: nested deeper than {_MAX_DEPTH} levels.")
        if v is None or type(v) in (bool, int, str):
            return v
        if type(v) is float:
            return v if math.isfinite(v) else {"__float__": repr(v)}
        if type(v) is np.ndarray:  # not subclasses: a masked array would lose its mask
            if v.dtype.kind == "O":
                return self._object_array(v, where, depth)
            _check_array_dtype(v.dtype, where, PersistenceError)
            return {"__ndarray__": self._store(v)}
        if isinstance(v, np.generic):
            _check_array_dtype(v.dtype, where, PersistenceError)
            return {"__npscalar__": self._store(np.asarray(v))}
        if type(v) is list:
            return [self.value(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v)]
        if type(v) is tuple:
            return {
                "__tuple__": [self.value(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v)]
            }
        if type(v) is dict:
            return {
                "__dict__": [
                    [
                        self.value(k, f"{where} key {k!r}", depth + 1),
                        self.value(x, f"{where}[{k!r}]", depth + 1),
                    ]
                    for k, x in v.items()
                ]
            }
        if isinstance(v, BaseEstimator):
            name = _class_name(type(v))
            if name is None:
                raise PersistenceError(
                    f"{where} holds a {type(v).__name__}, which is neither a registered fusion "
                    "method nor ECDFNormalizer; keep its parameters as arrays instead."
                )
            return {"__estimator__": name, **self.estimator(v, where)}
        raise PersistenceError(
            f"{where} holds a {type(v).__module__}.{type(v).__qualname__}, which is not plain "
            "data (arrays, numbers, strings, None, and lists/tuples/dicts of these); it cannot "
            "be saved without pickle."
        )

    def _object_array(self, v: np.ndarray, where: str, depth: int) -> dict:
        items = []
        for i, x in enumerate(v.reshape(-1)):
            if not (x is None or type(x) in (bool, int, float, str) or isinstance(x, np.generic)):
                raise PersistenceError(
                    f"{where}: object array element {i} is a {type(x).__name__}; only scalar "
                    "labels (str, int, float, bool, None) can be saved in object arrays."
                )
            items.append(self.value(x, f"{where}[{i}]", depth + 1))
        return {"__objarray__": items, "shape": list(v.shape)}


def _check_array_dtype(dtype: np.dtype, where: str, error: type[Exception]) -> None:
    if dtype.kind not in _ARRAY_KINDS or dtype.fields is not None or dtype.hasobject:
        raise error(
            f"{where}: arrays of dtype {dtype} are not supported (only bool, integer, float, "
            "complex and fixed-width string dtypes)."
        )


def save(estimator, path) -> None:
    """Write a fitted registered estimator to ``path`` (see the module docstring for the format).

    Parameters
    ----------
    estimator : FusionEstimator
        A fitted estimator whose class is registered in :data:`fusion.METHODS`.
    path : str, os.PathLike or writable binary file
        Destination. A path is written atomically (temporary file, then rename).

    Raises
    ------
    PersistenceError
        The estimator's class is not registered, or some parameter or fitted attribute is not
        plain data. Nothing is written then.
    sklearn.exceptions.NotFittedError
        The estimator is not fitted.
    """
    from sklearn.utils.validation import check_is_fitted

    from . import METHODS, __version__

    name = next((k for k, cls in METHODS.items() if cls is type(estimator)), None)
    if name is None:
        raise PersistenceError(
            f"{type(estimator).__name__} is not a registered fusion method (fusion.METHODS); "
            "only registered methods can be saved."
        )
    check_is_fitted(estimator)
    enc = _Encoder()
    state = enc.estimator(estimator, type(estimator).__name__)
    points = _check_points(estimator)
    check = {"points": points, "proba": estimator.calibrating_function(points)}
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "fusion_version": __version__,
        "estimator": name,
        **state,
        "check": {k: enc.value(v, f"check {k}", 0) for k, v in check.items()},
    }
    meta_bytes = json.dumps(meta, allow_nan=False, indent=1).encode("utf-8")
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **enc.arrays)
    if hasattr(path, "write"):
        _write_zip(path, meta_bytes, buf.getvalue())
        return
    path = os.fspath(path)
    # Write beside the target, then rename: a crash never leaves a truncated model file.
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            _write_zip(f, meta_bytes, buf.getvalue())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _check_points(estimator) -> np.ndarray:
    """Points of the unit cube for the self-check: its diagonal, the ECDF values, random ones."""
    M = estimator.n_features_in_
    diagonal = np.linspace(0.0, 1.0, 5)[:, None].repeat(M, axis=1)
    knots = np.column_stack([np.resize(v, 8) for v in estimator.ecdf_.values_])
    # The points are stored in the file, so the generator need not be stable across versions.
    spread = np.random.default_rng(0).random((16, M))
    return np.vstack([diagonal, knots, spread])


def _write_zip(f, meta_bytes: bytes, npz_bytes: bytes) -> None:
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(_META, meta_bytes)
        zf.writestr(_ARRAYS, npz_bytes)


# ---------------------------------------------------------------------------------------------
# Loading.


def load(path):
    """Read a model written by :meth:`FusionEstimator.save`; never unpickles.

    Parameters
    ----------
    path : str, os.PathLike or readable binary file

    Returns
    -------
    FusionEstimator
        The fitted estimator; its predictions equal the saved model's bit for bit.

    Raises
    ------
    PersistenceError
        The file is not a valid fusion model file of a version this fusion reads (see the
        module docstring for what is checked).
    """
    meta, arrays = _read_archive(path)
    decoder = _Decoder(arrays)
    try:
        est = _build_top(meta, decoder)
        check = meta["check"]
        if set(check) != {"points", "proba"}:
            raise PersistenceError("'check' must hold exactly 'points' and 'proba'.")
        points = decoder.value(check["points"], "check points", 0)
        proba = decoder.value(check["proba"], "check proba", 0)
    except PersistenceError:
        raise
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError) as err:
        raise PersistenceError(f"invalid fusion model file: {err}") from err
    _check_loaded(est, points, proba, meta["fusion_version"])
    unused = set(arrays) - decoder.used
    if unused:
        raise PersistenceError(
            f"invalid fusion model file: {_ARRAYS} holds arrays no field refers to: "
            f"{sorted(unused)[:5]}."
        )
    return est


def _read_archive(path) -> tuple[dict, dict[str, np.ndarray]]:
    what = repr(os.fspath(path)) if not hasattr(path, "read") else "the file"
    head = b""
    try:
        if hasattr(path, "read"):
            pos = path.tell()
            head = path.read(4)
            path.seek(pos)
        else:
            with open(path, "rb") as f:
                head = f.read(4)
    except OSError:
        pass  # reported by ZipFile below
    if head[:1] == b"\x80":  # the PROTO opcode that starts every pickle of protocol >= 2
        hint = " It looks like a pickle file; fusion.load never unpickles."
    else:
        hint = ""
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            if sorted(names) != sorted([_META, _ARRAYS]):
                raise PersistenceError(
                    f"{what} is not a fusion model file: expected exactly the members "
                    f"{[_META, _ARRAYS]}, found {names[:10]}."
                )
            if zf.getinfo(_META).file_size > _MAX_META_BYTES:
                raise PersistenceError(f"{what}: {_META} is implausibly large.")
            meta_bytes = zf.read(_META)
            npz_bytes = zf.read(_ARRAYS)
    except PersistenceError:
        raise
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        zlib.error,
        EOFError,
        OSError,
        ValueError,
    ) as err:
        raise PersistenceError(
            f"{what} is not a readable fusion model file (a zip archive written by "
            f"FusionEstimator.save): {err}.{hint}"
        ) from err
    meta = _parse_meta(meta_bytes, what)
    arrays = _read_npz(npz_bytes, what)
    return meta, arrays


def _parse_meta(meta_bytes: bytes, what: str) -> dict:
    def pairs(items):
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise PersistenceError(f"{what}: {_META} repeats a key in one object.")
        return dict(items)

    def reject_constant(token):
        raise PersistenceError(f"{what}: {_META} holds the non-standard JSON token {token}.")

    def finite_float(text):
        x = float(text)
        if not math.isfinite(x):
            raise PersistenceError(f"{what}: {_META} holds an out-of-range number {text}.")
        return x

    try:
        meta = json.loads(
            meta_bytes.decode("utf-8"),
            object_pairs_hook=pairs,
            parse_constant=reject_constant,
            parse_float=finite_float,
        )
    except PersistenceError:
        raise
    except (ValueError, RecursionError) as err:  # JSONDecodeError, UnicodeDecodeError
        raise PersistenceError(f"{what}: {_META} is not valid JSON: {err}") from err
    if not isinstance(meta, dict):
        raise PersistenceError(f"{what}: {_META} must hold a JSON object.")
    if meta.get("format") != FORMAT:
        raise PersistenceError(
            f"{what} is not a fusion model file: format is {meta.get('format')!r}, expected "
            f"{FORMAT!r}."
        )
    version = meta.get("format_version")
    if type(version) is not int:
        raise PersistenceError(f"{what}: format_version must be an integer, got {version!r}.")
    if version > FORMAT_VERSION:
        from . import __version__

        raise PersistenceError(
            f"{what} uses format version {version} (written by fusion "
            f"{meta.get('fusion_version')!r}); this fusion {__version__} reads versions up to "
            f"{FORMAT_VERSION}. Upgrade fusion to load it."
        )
    if version < 1:
        raise PersistenceError(f"{what}: unknown format_version {version}.")
    keys = set(meta)
    if keys != _META_KEYS:
        raise PersistenceError(
            f"{what}: {_META} keys must be {sorted(_META_KEYS)}; missing "
            f"{sorted(_META_KEYS - keys)}, unknown {sorted(keys - _META_KEYS)}."
        )
    for key in ("params", "attributes", "check"):
        if not isinstance(meta[key], dict):
            raise PersistenceError(f"{what}: {key!r} must be a JSON object.")
    if not isinstance(meta["estimator"], str):
        raise PersistenceError(f"{what}: 'estimator' must be a registered method name.")
    return meta


def _read_npz(npz_bytes: bytes, what: str) -> dict[str, np.ndarray]:
    arrays = {}
    try:
        with np.load(io.BytesIO(npz_bytes), allow_pickle=False) as npz:
            for key in npz.files:
                arrays[key] = npz[key]
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, KeyError) as err:
        raise PersistenceError(f"{what}: {_ARRAYS} is not a valid pickle-free .npz: {err}") from err
    for key, arr in arrays.items():
        _check_array_dtype(arr.dtype, f"{what}: array {key!r}", PersistenceError)
    return arrays


class _Decoder:
    def __init__(self, arrays: dict[str, np.ndarray]):
        self.arrays = arrays
        self.used: set[str] = set()

    def _array(self, key: Any, where: str) -> np.ndarray:
        if type(key) is not str or key not in self.arrays:
            raise PersistenceError(f"{where}: refers to a missing array {key!r}.")
        if key in self.used:
            raise PersistenceError(f"{where}: array {key!r} is referenced twice.")
        self.used.add(key)
        return self.arrays[key]

    def value(self, v: Any, where: str, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise PersistenceError(f"{where}: nested deeper than {_MAX_DEPTH} levels.")
        if v is None or type(v) in (bool, int, float, str):
            return v
        if type(v) is list:
            return [self.value(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v)]
        if type(v) is not dict:  # pragma: no cover - json only yields the types above
            raise PersistenceError(f"{where}: unexpected JSON value {v!r}.")
        tag = next(iter(v), None)
        if tag == "__float__" and len(v) == 1:
            if v[tag] not in ("nan", "inf", "-inf"):
                raise PersistenceError(f"{where}: bad __float__ value {v[tag]!r}.")
            return float(v[tag])
        if tag == "__tuple__" and len(v) == 1 and type(v[tag]) is list:
            return tuple(self.value(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v[tag]))
        if tag == "__dict__" and len(v) == 1 and type(v[tag]) is list:
            return self._dict(v[tag], where, depth)
        if tag == "__ndarray__" and len(v) == 1:
            return self._array(v[tag], where)
        if tag == "__npscalar__" and len(v) == 1:
            arr = self._array(v[tag], where)
            if arr.ndim != 0:
                raise PersistenceError(f"{where}: a numpy scalar must be stored 0-d.")
            return arr[()]
        if tag == "__objarray__" and set(v) == {"__objarray__", "shape"}:
            return self._object_array(v, where, depth)
        if tag == "__estimator__" and set(v) == {"__estimator__", "params", "attributes"}:
            return self.estimator(v["__estimator__"], v["params"], v["attributes"], where, depth)
        raise PersistenceError(f"{where}: unknown tagged value with keys {sorted(v)[:5]}.")

    def _dict(self, items: list, where: str, depth: int) -> dict:
        out = {}
        for i, item in enumerate(items):
            if type(item) is not list or len(item) != 2:
                raise PersistenceError(f"{where}: dict item {i} must be a [key, value] pair.")
            key = self.value(item[0], f"{where} key {i}", depth + 1)
            try:
                hash(key)
            except TypeError:
                raise PersistenceError(f"{where}: dict key {i} is not hashable.") from None
            if key in out:
                raise PersistenceError(f"{where}: dict key {key!r} is repeated.")
            out[key] = self.value(item[1], f"{where}[{key!r}]", depth + 1)
        return out

    def _object_array(self, v: dict, where: str, depth: int) -> np.ndarray:
        items, shape = v["__objarray__"], v["shape"]
        if type(items) is not list or type(shape) is not list:
            raise PersistenceError(f"{where}: malformed object array.")
        if not all(type(s) is int and s >= 0 for s in shape) or math.prod(shape) != len(items):
            raise PersistenceError(f"{where}: object array shape {shape} does not fit its items.")
        out = np.empty(len(items), dtype=object)
        for i, x in enumerate(items):
            x = self.value(x, f"{where}[{i}]", depth + 1)
            if not (x is None or type(x) in (bool, int, float, str) or isinstance(x, np.generic)):
                raise PersistenceError(f"{where}[{i}]: object arrays hold scalar labels only.")
            out[i] = x
        return out.reshape(shape)

    def estimator(self, name: Any, params: Any, attributes: Any, where: str, depth: int):
        allowed = _allowed_classes()
        if type(name) is not str or name not in allowed:
            raise PersistenceError(
                f"{where}: unknown estimator {name!r}; loadable ones are {sorted(allowed)}."
            )
        cls = allowed[name]
        if type(params) is not dict or type(attributes) is not dict:
            raise PersistenceError(f"{where}: params and attributes must be JSON objects.")
        known_params = set(cls._get_param_names())
        unknown = set(params) - known_params
        if unknown:
            raise PersistenceError(f"{where}: unknown parameters {sorted(unknown)} of {name!r}.")
        kwargs = {
            k: self.value(v, f"{where} parameter {k!r}", depth + 1) for k, v in params.items()
        }
        est = cls(**kwargs)
        if hasattr(cls, "_parameter_constraints"):
            est._validate_params()  # InvalidParameterError is a ValueError
        documented = documented_attributes(cls)
        for attr, value in attributes.items():
            if (
                not _ATTR_NAME.match(attr)
                or attr in known_params
                or hasattr(cls, attr)
                or (documented is not None and attr not in documented)
            ):
                raise PersistenceError(
                    f"{where}: unknown fitted attribute {attr!r} for {cls.__name__} (not a "
                    "documented fitted attribute of the class)."
                )
            setattr(est, attr, self.value(value, f"{where}.{attr}", depth + 1))
        return est


def _build_top(meta: dict, decoder: _Decoder):
    from . import METHODS
    from ._base import FusionEstimator

    name = meta["estimator"]
    if name not in METHODS or not issubclass(METHODS[name], FusionEstimator):
        raise PersistenceError(
            f"unknown estimator {name!r} in the file; registered methods are {sorted(METHODS)}."
        )
    return decoder.estimator(name, meta["params"], meta["attributes"], "model", 0)


# ---------------------------------------------------------------------------------------------
# Consistency of the loaded fitted state.


def _check_loaded(est, points, proba, saved_by) -> None:
    from .ecdf import ECDFNormalizer

    def bad(msg: str):
        raise PersistenceError(f"invalid fusion model file: {msg}")

    for attr in ("classes_", "ecdf_", "n_features_in_"):
        if not hasattr(est, attr):
            bad(f"the fitted attribute {attr!r} is missing.")
    M = est.n_features_in_
    if not isinstance(M, (int, np.integer)) or isinstance(M, (bool, np.bool_)) or M < 1:
        bad(f"n_features_in_ must be a positive integer, got {M!r}.")
    if M < 2 and not est._allows_1d:
        bad(f"{type(est).__name__} needs n_features_in_ >= 2, got {M}.")
    classes = est.classes_
    if not isinstance(classes, np.ndarray) or classes.shape != (2,):
        bad(
            f"classes_ must be an array of shape (2,), got {type(classes).__name__} "
            f"{getattr(classes, 'shape', '')}."
        )
    try:
        ordered = bool(classes[0] < classes[1])
    except TypeError:
        ordered = False
    if not ordered:
        bad(f"classes_ must hold two sorted distinct labels, got {classes.tolist()}.")
    names = getattr(est, "feature_names_in_", None)
    if names is not None and not (
        isinstance(names, np.ndarray)
        and names.shape == (M,)
        and all(isinstance(s, str) for s in names)
    ):
        bad(f"feature_names_in_ must be an array of {M} strings.")
    ecdf = est.ecdf_
    if type(ecdf) is not ECDFNormalizer:
        bad(f"ecdf_ must be an ECDFNormalizer, got {type(ecdf).__name__}.")
    for attr in ("knots_", "values_", "n_features_in_"):
        if not hasattr(ecdf, attr):
            bad(f"ecdf_.{attr} is missing.")
    if ecdf.n_features_in_ != M or type(ecdf.knots_) is not list or type(ecdf.values_) is not list:
        bad("ecdf_ must hold lists knots_ and values_ for every score column.")
    if len(ecdf.knots_) != M or len(ecdf.values_) != M:
        bad(f"ecdf_ has {len(ecdf.knots_)} knot arrays for {M} score columns.")
    for j, (k, v) in enumerate(zip(ecdf.knots_, ecdf.values_, strict=True)):
        ok = (
            isinstance(k, np.ndarray) and isinstance(v, np.ndarray)
            and k.dtype == np.float64 and v.dtype == np.float64
            and k.ndim == 1 and k.shape == v.shape and k.shape[0] >= 2
            and np.all(np.isfinite(k)) and np.all(np.diff(k) > 0)
            and np.all(np.diff(v) > 0) and v[0] > 0 and v[-1] < 1
        )  # fmt: skip
        if not ok:
            bad(f"ecdf_ knots/values of column {j} are not increasing float arrays in (0, 1).")
    if not (
        isinstance(points, np.ndarray) and points.dtype == np.float64 and points.ndim == 2
        and points.shape[0] >= 1 and points.shape[1] == M
        and isinstance(proba, np.ndarray) and proba.dtype == np.float64
        and proba.shape == (points.shape[0],)
    ):  # fmt: skip
        bad(f"the self-check must hold float64 points of shape (k, {M}) and k probabilities.")
    try:
        p = est.calibrating_function(points)
    except Exception as err:  # noqa: BLE001 - any failure means an inconsistent file
        raise PersistenceError(
            f"invalid fusion model file: the fitted state of {type(est).__name__} is "
            f"inconsistent; evaluating it fails with {type(err).__name__}: {err}"
        ) from err
    diff = np.abs(p - proba) if p.shape == proba.shape else np.array([np.inf])
    if not np.all(diff <= _CHECK_ATOL):
        from . import __version__

        raise PersistenceError(
            "invalid fusion model file: the loaded model does not reproduce the probabilities "
            f"recorded when it was saved (largest difference {np.max(diff):.3g}). Either the file "
            f"was modified, or this fusion {__version__} computes the model differently from "
            f"the fusion {saved_by!r} that saved it."
        )
