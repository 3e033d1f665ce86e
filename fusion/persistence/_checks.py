"""The fitted state a loaded model must have, and the self-check that it predicts as saved."""

from __future__ import annotations

import numpy as np

from ._errors import PersistenceError

__all__ = ["CHECK_ATOL", "check_points", "check_loaded"]

#: The loaded model must reproduce the saved probabilities at the check points to this.
CHECK_ATOL = 1e-9


def check_points(estimator) -> np.ndarray:
    """Points of the unit cube for the self-check: its diagonal, the ECDF values, random ones.

    Shape ``(k, M)``; for a multi-class model ``(k, M, C)``, each class's points those of its
    one-vs-rest fusion.
    """
    if "estimators_" in vars(estimator):
        return np.stack([check_points(e) for e in estimator.estimators_], axis=2)
    if "n_classes_" in vars(estimator):  # one fusion shared by every class
        C = estimator.n_classes_
        points = _cube_points(estimator)
        shift = np.random.default_rng(1).integers(0, points.shape[0], size=C)
        return np.stack([np.roll(points, s, axis=0) for s in shift], axis=2)
    return _cube_points(estimator)


def _cube_points(estimator) -> np.ndarray:
    M = estimator.n_features_in_
    diagonal = np.linspace(0.0, 1.0, 5)[:, None].repeat(M, axis=1)
    knots = np.column_stack([np.resize(v, 8) for v in estimator.ecdf_.values_])
    # The points are stored in the file, so the generator need not be stable across versions.
    spread = np.random.default_rng(0).random((16, M))
    return np.vstack([diagonal, knots, spread])


def check_loaded(est, points, proba, saved_by) -> None:
    """Refuse a loaded model whose base fitted state is inconsistent or that does not
    reproduce ``proba`` at ``points``."""
    if "estimators_" in vars(est):
        _check_multiclass_state(est)
    elif "n_classes_" in vars(est):
        _check_shared_state(est)
    else:
        _check_binary_state(est)
    _self_check(est, points, proba, saved_by)


def _bad(msg: str):
    raise PersistenceError(f"invalid fusion model file: {msg}")


def _check_multiclass_state(est) -> None:
    models = est.estimators_
    C = _check_classes(est)
    if type(models) is not list or len(models) != C:
        _bad(f"a multi-class model needs n_classes_ = {C} and one fusion per class.")
    for k, model in enumerate(models):
        if type(model) is not type(est) or "estimators_" in vars(model):
            _bad(f"estimators_[{k}] must be a binary {type(est).__name__}.")
        _check_binary_state(model)
        if model.n_features_in_ != est.n_features_in_:
            _bad(f"estimators_[{k}] fuses {model.n_features_in_} scores, not {est.n_features_in_}.")
    slope, intercept = est.coupling_slope_, est.coupling_intercept_
    if not (
        isinstance(slope, np.ndarray) and slope.shape == (C,) and slope.dtype == np.float64
        and np.all(np.isfinite(slope)) and np.all(slope >= 0)
    ):  # fmt: skip
        _bad(f"coupling_slope_ must be {C} finite floats >= 0.")
    penalty = getattr(est, "coupling_penalty_", None)
    if not (isinstance(penalty, float) and penalty >= 0):
        _bad("coupling_penalty_ must be a float >= 0 (inf: one common slope).")
    if not (
        isinstance(intercept, np.ndarray) and intercept.shape == (C,)
        and intercept.dtype == np.float64 and np.all(np.isfinite(intercept))
    ):  # fmt: skip
        _bad(f"coupling_intercept_ must be {C} finite floats.")


def _check_classes(est) -> int:
    classes = est.classes_
    C = len(classes) if isinstance(classes, np.ndarray) and classes.ndim == 1 else 0
    if C < 3:
        _bad("a multi-class model's classes_ must be an array of at least 3 labels.")
    try:  # in the class columns' order, which fit(classes=...) may give unsorted
        distinct = np.unique(classes).shape[0] == C
    except TypeError:
        distinct = False
    if not distinct:
        _bad(f"classes_ must hold distinct labels of one type, got {classes.tolist()[:10]}.")
    if getattr(est, "n_classes_", None) != C:
        _bad(f"a multi-class model needs n_classes_ = {C}.")
    return C


def _check_shared_state(est) -> None:
    """A multi-class model whose one fusion serves every class: its classes, and the
    normalizer and score columns of the binary state (the coefficients are checked by the
    estimator when it predicts)."""
    _check_classes(est)
    if getattr(est, "multiclass_", None) != "shared":
        _bad("a multi-class model without one fusion per class must have multiclass_='shared'.")
    _check_inputs(est)


def _check_binary_state(est) -> None:
    _check_inputs(est)
    classes = est.classes_
    if not isinstance(classes, np.ndarray) or classes.shape != (2,):
        _bad(
            f"classes_ must be an array of shape (2,), got {type(classes).__name__} "
            f"{getattr(classes, 'shape', '')}."
        )
    try:
        ordered = bool(classes[0] < classes[1])
    except TypeError:
        ordered = False
    if not ordered:
        _bad(f"classes_ must hold two sorted distinct labels, got {classes.tolist()}.")


def _check_inputs(est) -> None:
    """The score columns (``n_features_in_``, names) and the normalizer ``ecdf_``."""
    from ..ecdf import ECDFNormalizer, valid_knots

    bad = _bad
    for attr in ("classes_", "ecdf_", "n_features_in_"):
        if not hasattr(est, attr):
            bad(f"the fitted attribute {attr!r} is missing.")
    M = est.n_features_in_
    if not isinstance(M, (int, np.integer)) or isinstance(M, (bool, np.bool_)) or M < 1:
        bad(f"n_features_in_ must be a positive integer, got {M!r}.")
    if M < 2 and not est.accepts_single_score:
        bad(f"{type(est).__name__} needs n_features_in_ >= 2, got {M}.")
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
        if not valid_knots(k, v):
            bad(f"ecdf_ knots/values of column {j} are not increasing float arrays in (0, 1).")


def _self_check(est, points, proba, saved_by) -> None:
    M = est.n_features_in_
    C = est.n_classes_ if "n_classes_" in vars(est) else None
    tail = (M,) if C is None else (M, C)
    want = (points.shape[0],) if C is None else (points.shape[0], C)
    if not (
        isinstance(points, np.ndarray) and points.dtype == np.float64
        and points.ndim == 1 + len(tail) and points.shape[0] >= 1 and points.shape[1:] == tail
        and isinstance(proba, np.ndarray) and proba.dtype == np.float64 and proba.shape == want
    ):  # fmt: skip
        shape = ", ".join(map(str, tail))
        _bad(f"the self-check must hold float64 points of shape (k, {shape}) and probabilities.")
    try:
        p = est.calibrating_function(points)
    except Exception as err:  # noqa: BLE001 - any failure means an inconsistent file
        raise PersistenceError(
            f"invalid fusion model file: the fitted state of {type(est).__name__} is "
            f"inconsistent; evaluating it fails with {type(err).__name__}: {err}"
        ) from err
    diff = np.abs(p - proba) if p.shape == proba.shape else np.array([np.inf])
    if not np.all(diff <= CHECK_ATOL):
        from .._version import __version__

        raise PersistenceError(
            "invalid fusion model file: the loaded model does not reproduce the probabilities "
            f"recorded when it was saved (largest difference {np.max(diff):.3g}). Either the file "
            f"was modified, or this fusion {__version__} computes the model differently from "
            f"the fusion {saved_by!r} that saved it."
        )
