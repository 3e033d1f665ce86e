"""Saving and loading fitted models without pickle: :meth:`FusionEstimator.save`, :func:`load`.

File format ``fusion-model``, version 1
=======================================
One zip archive holding exactly two members, each stored or deflated (no other compression
method, no encryption):

``meta.json``
    A JSON object (UTF-8, no NaN/Infinity tokens) with exactly these keys:

    ``format``          the string ``"fusion-model"``
    ``format_version``  integer, 1 for this layout; readers refuse newer versions
    ``fusion_version``  the ``fusion.__version__`` that wrote the file (informational)
    ``estimator``       the *stable name* of the estimator class: a key of
                        :data:`fusion.METHODS`, ``"platt"``, ``"isotonic"``,
                        ``"histogram"`` for the 1-D calibrators that :func:`fusion.fit` does
                        not offer, or ``"fusion_classifier"`` for
                        :class:`~fusion.FusionClassifier` (never an import path: only these
                        classes are instantiated)
    ``params``          object: constructor parameter name -> value
    ``attributes``      object: fitted attribute name -> value
    ``check``           object ``{"points": (k, M) array, "proba": (k,) array}``: the
                        calibrating function of the saved model at ``points`` (self-check)

``arrays.npz``
    The numpy arrays and numpy scalars referenced from ``meta.json``, each stored once under
    the key named by its reference: a zip of *uncompressed* (stored) members ``<key>.npy``
    (keys of 1 to 64 letters, digits and underscores) in ``.npy`` format 1.0 or 2.0, as
    :func:`numpy.savez` writes them. No array of dtype object.

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
fitted ECDFNormalizer or saveable estimator           ``{"__estimator__": name, "params": {...},
                                                      "attributes": {...}}``
                                                      (``name`` ``"ecdf"`` for ECDFNormalizer)
anything else, in a FusionClassifier file only        ``{"__skops__": "<npz key>"}``: the bytes
(its scikit-learn base estimators, a ``cv``           of a :mod:`skops.io` archive of stored
splitter, ...)                                        members, as a 1-D ``uint8`` array
====================================================  ===========================================

Dtypes, numpy scalar types and container types round-trip exactly, so predictions of a loaded
model are bit-for-bit those of the saved one.

What is saved
-------------
The constructor parameters (``get_params(deep=False)``) and every public instance attribute
whose name ends in ``_`` (scikit-learn's fitted-attribute convention), each of which must be a
*declared* fitted attribute of the class: a class declares its fitted state in a class
attribute ``_fitted_attributes`` (a tuple of names; the declarations along the MRO add up);
docstrings play no part. Private attributes (leading ``_``) are not saved: a method may cache
helpers there only if it rebuilds them when they are missing. An undeclared attribute, or
anything that is not plain data in the sense of the table above (a scipy or scikit-learn
object, a set, a ``RandomState``, a function, ...), makes :func:`save` raise
:class:`PersistenceError` before any file is written.

How saving writes
-----------------
A path is written atomically: the archive goes to a new temporary file of a unique name in the
target's directory, is flushed to disk (``fsync``), and is renamed over the target
(``os.replace``). Readers, including concurrent :func:`load` calls, therefore see the old file
or the new one, never a partial one; concurrent saves to one path each succeed, and the last
rename wins. A symbolic link is followed: the file it points to is replaced and the link kept.
Replacing a file keeps its permission bits; a new file gets those of any new file (umask). On
failure the temporary file is removed, and errors name the path given by the caller, never the
temporary file. A file object must be open in binary mode (:class:`BinaryModeError`, a
``PersistenceError`` and ``TypeError``, otherwise); it is written in place, not atomically.

FusionClassifier
----------------
A fitted :class:`~fusion.FusionClassifier` is saved in the same archive: its parameters and
fitted attributes by the table above, its fusion model ``fusion_`` as a nested estimator of
plain data, and what no table of plain data can describe (each scikit-learn base estimator,
given and fitted, and a splitter given as ``cv``) as an embedded archive of
:func:`skops.io.dumps`, scikit-learn's project for persisting estimators without pickle.
``named_estimators_`` is rebuilt on loading. ``check`` is the self-check of ``fusion_``
(the base estimators score raw input, which the file does not hold).

Loading builds an embedded archive only when every type it would build is trusted: the
types skops trusts itself (scikit-learn's estimators, numpy and scipy types), the
scikit-learn internals of common classifiers listed in :data:`TRUSTED_TYPES` (trees,
histogram gradient boosting, neural network optimizers, calibration, splitters), and the
names passed as ``trusted`` to :func:`load` (say, your own classifier class). The types are
read with :func:`skops.io.get_untrusted_types` before anything is built; any other type
(such as a function that would run on the input) makes loading raise
:class:`PersistenceError` naming it. Only then does skops import the modules of those
types; the rest of the file is read as for every model. Embedded archives must consist of
stored (uncompressed) zip members, so nothing in them inflates beyond the limits below.

Limits of loading
-----------------
Loading allocates nothing whose size it has not checked, in this order:

1. The zip directory's declared sizes: each member may inflate to at most
   ``max(INFLATION_ALLOWANCE, MAX_INFLATION * its compressed size)`` (32 MiB, 200 times;
   fusion's own files inflate a few times, a zip bomb hundreds to millions of times);
   ``meta.json`` to at most ``MAX_META_BYTES`` (64 MiB); the members together to at most
   ``max_bytes`` (argument of :func:`load`, default ``MAX_BYTES`` = 4 GiB).
2. Each member is inflated with a cap at its declared size, so a stream that would inflate
   further (a lying header) is never inflated beyond it; the CRC-32 of what was read must
   match the one recorded.
3. Each ``.npy`` header in ``arrays.npz`` is parsed (:func:`numpy.lib.format.read_magic`,
   ``read_array_header_1_0/2_0``) and its shape times item size must equal the bytes that
   follow it in the (uncompressed, so already bounded) member, before the array is allocated.

What loading checks
-------------------
Loading never unpickles, and never imports a name taken from the file except the trusted
types of a FusionClassifier's base estimators (above). It raises
:class:`PersistenceError` (a ``ValueError``) for anything but a well-formed file of a known
version within the limits above, whatever the damage: a pickle or other non-zip file, a
truncated or corrupted archive (any byte of it), unknown or missing members or keys, an unknown
zip compression method or flag, a newer ``format_version``, an unknown estimator name, unknown
parameters or parameter values the estimator rejects, a fitted attribute the class does not
declare (this name check is skipped only for a class without a declaration of its own when
docstrings are stripped, ``python -OO``), malformed tagged values, arrays of disallowed dtypes,
unreferenced or doubly referenced arrays, and base fitted state that is inconsistent
(``classes_``, ``n_features_in_``, ``feature_names_in_``, the ECDF knots). A path that cannot
be opened raises the ``OSError`` of opening it. Finally the self-check: at save time the
calibrating function is evaluated at a few points of the unit cube and both are stored
(``check``); the loaded model must reproduce those probabilities to within ``1e-9``. This
catches, for every method without any declaration on its part, fitted arrays that were altered
or reshaped consistently enough to evaluate, and a fusion version that computes a saved model
differently from the one that wrote it. Any failure there is reported as a
:class:`PersistenceError` too.
"""

from __future__ import annotations

import io
import numbers
from collections.abc import Iterable

import numpy as np

from .._base import register_model_writer
from . import _archive
from ._archive import INFLATION_ALLOWANCE, MAX_BYTES, MAX_INFLATION, MAX_META_BYTES
from ._checks import check_loaded, check_points
from ._classes import (
    class_name,
    declares_fitted_attributes,
    fitted_attributes,
    is_top_level,
    saveable_classes,
)
from ._classifier import CLASSIFIER_NAME, TRUSTED_TYPES, build_classifier, encode_classifier
from ._codec import FORMAT, FORMAT_VERSION, Decoder, Encoder, dump_meta, parse_meta
from ._errors import BinaryModeError, PersistenceError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_BYTES",
    "MAX_META_BYTES",
    "MAX_INFLATION",
    "INFLATION_ALLOWANCE",
    "TRUSTED_TYPES",
    "PersistenceError",
    "BinaryModeError",
    "save",
    "load",
    "saveable_classes",
    "fitted_attributes",
    "declares_fitted_attributes",
]


def save(estimator, path) -> None:
    """Write a fitted estimator to ``path`` (see the module docstring for the format).

    Parameters
    ----------
    estimator : FusionEstimator or FusionClassifier
        A fitted estimator of a saveable class (:func:`saveable_classes`), or a fitted
        :class:`~fusion.FusionClassifier`.
    path : str, os.PathLike or binary file object
        Destination. A path is written atomically (unique temporary file in the same directory,
        then rename); a symbolic link is followed.

    Raises
    ------
    PersistenceError
        The estimator's class is not saveable, or some parameter or fitted attribute is not
        plain data or not declared. Nothing is written then.
    BinaryModeError
        ``path`` is a file object open in text mode.
    sklearn.exceptions.NotFittedError
        The estimator is not fitted.
    OSError
        Writing failed; the message names ``path``.
    """
    from sklearn.utils.validation import check_is_fitted

    from .._version import __version__
    from ..classifier import FusionClassifier

    if type(estimator) is FusionClassifier:
        _save_classifier(estimator, path)
        return
    cls = type(estimator)
    name = class_name(cls)
    if name is None or not is_top_level(cls):
        top = sorted(k for k, c in saveable_classes().items() if is_top_level(c))
        raise PersistenceError(
            f"{cls.__name__} is not a registered fusion method; only these estimators can be "
            f"saved: {top}."
        )
    check_is_fitted(estimator)
    enc = Encoder()
    state = enc.estimator(estimator, cls.__name__)
    points = check_points(estimator)
    check = {"points": points, "proba": estimator.calibrating_function(points)}
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "fusion_version": __version__,
        "estimator": name,
        **state,
        "check": {k: enc.value(v, f"check {k}", 0) for k, v in check.items()},
    }
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **enc.arrays)
    _archive.write(path, dump_meta(meta), buf.getvalue())


def _save_classifier(estimator, path) -> None:
    from sklearn.utils.validation import check_is_fitted

    from .._version import __version__

    check_is_fitted(estimator)
    state, arrays = encode_classifier(estimator)
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "fusion_version": __version__,
        "estimator": CLASSIFIER_NAME,
        **state,
    }
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **arrays)
    _archive.write(path, dump_meta(meta), buf.getvalue())


def load(path, *, max_bytes: int = MAX_BYTES, trusted: Iterable[str] = ()):
    """Read a model written by :meth:`FusionEstimator.save`; never unpickles.

    Parameters
    ----------
    path : str, os.PathLike or binary file object
    max_bytes : int, default=MAX_BYTES (4 GiB)
        The largest total uncompressed size of the file's members that is read; larger files
        are refused before anything is inflated.
    trusted : iterable of str, default=()
        For a :class:`~fusion.FusionClassifier`: further types (full names, as
        :func:`skops.io.get_untrusted_types` gives them) that its base estimators may be
        built from, beyond scikit-learn's estimators, numpy and scipy types and
        :data:`TRUSTED_TYPES`. Pass them only for files you trust: building a type runs its
        code.

    Returns
    -------
    FusionEstimator or FusionClassifier
        The fitted estimator; its predictions equal the saved model's bit for bit.

    Raises
    ------
    PersistenceError
        The file is not a valid fusion model file of a version this fusion reads, or exceeds
        the limits (see the module docstring for what is checked).
    BinaryModeError
        ``path`` is a file object open in text mode.
    OSError
        ``path`` cannot be opened.
    """
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, numbers.Integral):
        raise TypeError(f"max_bytes must be an integer, got {max_bytes!r}.")
    if max_bytes < 0:
        raise ValueError(f"max_bytes must be non-negative, got {max_bytes}.")
    if isinstance(trusted, str) or not all(isinstance(t, str) for t in trusted):
        raise TypeError(f"trusted must be an iterable of type names (str), got {trusted!r}.")
    meta_bytes, arrays, what = _archive.read(path, int(max_bytes))
    meta = parse_meta(meta_bytes, what)
    if meta["estimator"] == CLASSIFIER_NAME:
        return _load_classifier(meta, arrays, what, trusted)
    decoder = Decoder(arrays)
    try:
        est = _build_top(meta, decoder)
        check = meta["check"]
        if set(check) != {"points", "proba"}:
            raise PersistenceError("'check' must hold exactly 'points' and 'proba'.")
        points = decoder.value(check["points"], "check points", 0)
        proba = decoder.value(check["proba"], "check proba", 0)
        check_loaded(est, points, proba, meta["fusion_version"])
    except (PersistenceError, MemoryError):
        raise
    except Exception as err:  # noqa: BLE001 - the file is untrusted: any failure means invalid
        raise PersistenceError(
            f"invalid fusion model file {what}: {type(err).__name__}: {err}"
        ) from err
    unused = decoder.unused()
    if unused:
        raise PersistenceError(
            f"invalid fusion model file: {_archive.ARRAYS} holds arrays no field refers to: "
            f"{sorted(unused)[:5]}."
        )
    return est


def _load_classifier(meta: dict, arrays: dict, what: str, trusted: Iterable[str]):
    try:
        est, decoder = build_classifier(meta, arrays, trusted)
    except (PersistenceError, MemoryError):
        raise
    except Exception as err:  # noqa: BLE001 - the file is untrusted: any failure means invalid
        raise PersistenceError(
            f"invalid fusion model file {what}: {type(err).__name__}: {err}"
        ) from err
    unused = decoder.unused()
    if unused:
        raise PersistenceError(
            f"invalid fusion model file: {_archive.ARRAYS} holds arrays no field refers to: "
            f"{sorted(unused)[:5]}."
        )
    return est


def _build_top(meta: dict, decoder: Decoder):
    name = meta["estimator"]
    allowed = saveable_classes()
    if name not in allowed or not is_top_level(allowed[name]):
        top = sorted(k for k, c in allowed.items() if is_top_level(c))
        raise PersistenceError(f"unknown estimator {name!r} in the file; known ones are {top}.")
    return decoder.estimator(name, meta["params"], meta["attributes"], "model", 0)


register_model_writer(save)
