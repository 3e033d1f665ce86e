"""The value grammar of ``meta.json``: Python values <-> JSON with tagged objects and arrays.

See the table in :mod:`fusion.persistence`. Encoding collects the arrays into a dict of npz
keys; decoding takes that dict back and checks that every array is referenced exactly once.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from .._validation import param_names
from ._classes import ATTR_NAME, class_name, fitted_attributes, saveable_classes
from ._errors import PersistenceError

__all__ = ["Encoder", "Decoder", "check_array_dtype", "dump_meta", "parse_meta"]

FORMAT = "fusion-model"
FORMAT_VERSION = 1
META_KEYS = frozenset(
    {"format", "format_version", "fusion_version", "estimator", "params", "attributes", "check"}
)
MAX_DEPTH = 64
ARRAY_KINDS = "biufcUS"


def check_array_dtype(dtype: np.dtype, where: str, error: type[Exception]) -> None:
    if (
        dtype.kind not in ARRAY_KINDS
        or dtype.fields is not None
        or dtype.hasobject
        or dtype.itemsize == 0
    ):
        raise error(
            f"{where}: arrays of dtype {dtype} are not supported (only bool, integer, float, "
            "complex and fixed-width string dtypes)."
        )


# ---------------------------------------------------------------------------------------------
# Encoding.


class Encoder:
    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}

    def _store(self, arr: np.ndarray) -> str:
        key = f"a{len(self.arrays)}"
        self.arrays[key] = arr
        return key

    def estimator(self, est: BaseEstimator, where: str) -> dict:
        params = est.get_params(deep=False)
        declared = fitted_attributes(type(est))
        attrs = {}
        for name, value in vars(est).items():
            if name in params or name.startswith("_"):
                continue
            if not name.endswith("_"):
                raise PersistenceError(
                    f"{where}: attribute {name!r} is neither a constructor parameter nor a "
                    "fitted attribute (name ending in '_'); it cannot be saved."
                )
            if name not in declared:
                # The loader would refuse the file: refuse to write it.
                raise PersistenceError(
                    f"{where}: fitted attribute {name!r} is not declared by "
                    f"{type(est).__name__} (its _fitted_attributes, along the class hierarchy); "
                    "a file holding it could not be loaded."
                )
            attrs[name] = self.value(value, f"{where}.{name}", 0)
        return {
            "params": {k: self.value(v, f"{where} parameter {k!r}", 0) for k, v in params.items()},
            "attributes": attrs,
        }

    def value(self, v: Any, where: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise PersistenceError(f"{where}: nested deeper than {MAX_DEPTH} levels.")
        if v is None or type(v) in (bool, int, str):
            return v
        if type(v) is float:
            return v if math.isfinite(v) else {"__float__": repr(v)}
        if type(v) is np.ndarray:  # not subclasses: a masked array would lose its mask
            if v.dtype.kind == "O":
                return self._object_array(v, where, depth)
            check_array_dtype(v.dtype, where, PersistenceError)
            return {"__ndarray__": self._store(v)}
        if isinstance(v, np.generic):
            check_array_dtype(v.dtype, where, PersistenceError)
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
            name = class_name(type(v))
            if name is None:
                raise PersistenceError(
                    f"{where} holds a {type(v).__name__}, which is neither a saveable fusion "
                    "estimator nor ECDFNormalizer; keep its parameters as arrays instead."
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


def dump_meta(meta: dict) -> bytes:
    return json.dumps(meta, allow_nan=False, indent=1).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Decoding.


def parse_meta(meta_bytes: bytes, what: str) -> dict:
    """The checked top-level object of ``meta.json`` (its values are decoded later)."""

    def pairs(items):
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise PersistenceError(f"{what}: meta.json repeats a key in one object.")
        return dict(items)

    def reject_constant(token):
        raise PersistenceError(f"{what}: meta.json holds the non-standard JSON token {token}.")

    def finite_float(text):
        x = float(text)
        if not math.isfinite(x):
            raise PersistenceError(f"{what}: meta.json holds an out-of-range number {text}.")
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
    except (ValueError, RecursionError) as err:  # JSONDecodeError, UnicodeDecodeError, int digits
        raise PersistenceError(f"{what}: meta.json is not valid JSON: {err}") from err
    if not isinstance(meta, dict):
        raise PersistenceError(f"{what}: meta.json must hold a JSON object.")
    if meta.get("format") != FORMAT:
        raise PersistenceError(
            f"{what} is not a fusion model file: format is {meta.get('format')!r}, expected "
            f"{FORMAT!r}."
        )
    version = meta.get("format_version")
    if type(version) is not int:
        raise PersistenceError(f"{what}: format_version must be an integer, got {version!r}.")
    if version > FORMAT_VERSION:
        from .._version import __version__

        raise PersistenceError(
            f"{what} uses format version {version} (written by fusion "
            f"{meta.get('fusion_version')!r}); this fusion {__version__} reads versions up to "
            f"{FORMAT_VERSION}. Upgrade fusion to load it."
        )
    if version < 1:
        raise PersistenceError(f"{what}: unknown format_version {version}.")
    keys = set(meta)
    if keys != META_KEYS:
        raise PersistenceError(
            f"{what}: meta.json keys must be {sorted(META_KEYS)}; missing "
            f"{sorted(META_KEYS - keys)}, unknown {sorted(keys - META_KEYS)}."
        )
    for key in ("params", "attributes", "check"):
        if not isinstance(meta[key], dict):
            raise PersistenceError(f"{what}: {key!r} must be a JSON object.")
    if not isinstance(meta["estimator"], str):
        raise PersistenceError(f"{what}: 'estimator' must be a registered method name.")
    return meta


class Decoder:
    def __init__(self, arrays: dict[str, np.ndarray]):
        self.arrays = arrays
        self.used: set[str] = set()

    def unused(self) -> set[str]:
        return set(self.arrays) - self.used

    def _array(self, key: Any, where: str) -> np.ndarray:
        if type(key) is not str or key not in self.arrays:
            raise PersistenceError(f"{where}: refers to a missing array {key!r}.")
        if key in self.used:
            raise PersistenceError(f"{where}: array {key!r} is referenced twice.")
        self.used.add(key)
        return self.arrays[key]

    def value(self, v: Any, where: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise PersistenceError(f"{where}: nested deeper than {MAX_DEPTH} levels.")
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
        allowed = saveable_classes()
        if type(name) is not str or name not in allowed:
            raise PersistenceError(
                f"{where}: unknown estimator {name!r}; loadable ones are {sorted(allowed)}."
            )
        cls = allowed[name]
        if type(params) is not dict or type(attributes) is not dict:
            raise PersistenceError(f"{where}: params and attributes must be JSON objects.")
        known_params = set(param_names(cls))
        unknown = set(params) - known_params
        if unknown:
            raise PersistenceError(f"{where}: unknown parameters {sorted(unknown)} of {name!r}.")
        kwargs = {
            k: self.value(v, f"{where} parameter {k!r}", depth + 1) for k, v in params.items()
        }
        est = cls(**kwargs)
        est.validate_params()  # InvalidParameterError is a ValueError
        declared = fitted_attributes(cls)
        for attr, value in attributes.items():
            if (
                not ATTR_NAME.match(attr)
                or attr in known_params
                or hasattr(cls, attr)
                or attr not in declared
            ):
                raise PersistenceError(
                    f"{where}: unknown fitted attribute {attr!r} for {cls.__name__} (not a "
                    "declared fitted attribute of the class)."
                )
            setattr(est, attr, self.value(value, f"{where}.{attr}", depth + 1))
        return est
