"""Labels and predicted probabilities as the metrics take them.

Binary metrics take the positive-class probability ``p`` of shape ``(n,)`` (or ``(n, 2)``
``predict_proba`` output) and labels that are 0/1, bool, or any two labels with
``pos_label`` naming the positive one. Multi-class metrics take an ``(n, C)`` matrix whose
columns follow the *sorted* labels, as in scikit-learn (``LabelBinarizer``, ``classes_``):
the labels are those found in ``y``; ``labels=`` names the class of every column instead,
in the columns' order (a fused model's ``classes_`` fitted with ``classes=`` in the
networks' order, say), and must when ``y`` does not hold every class.
"""

from __future__ import annotations

import numpy as np

#: Largest ``|sum of a row - 1|`` accepted for a row of class probabilities (float32 softmax
#: output sums to 1 within a few 1e-8).
ROW_SUM_TOL = 1e-6


def positive_int(value, name: str) -> int:
    """``value`` as an int >= 1 (an integral float such as ``10.0`` is accepted)."""
    try:
        ok = not isinstance(value, bool) and int(value) == value and value >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)


def _show(values, k: int = 5) -> str:
    values = list(values)
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:k])
    return f"[{shown}{', ...' if len(values) > k else ''}]"


def as_labels(y) -> np.ndarray:
    """``y`` as a non-empty 1-D array of labels."""
    y = np.asarray(y)
    if y.ndim == 0:
        y = y.reshape(1)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must hold one label per row, shape (n,); got shape {y.shape}.")
    if y.shape[0] == 0:
        raise ValueError("empty input: y has no labels.")
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise ValueError("y contains NaN; every row needs a label.")
    return y


def distinct_labels(y: np.ndarray) -> np.ndarray:
    """Sorted distinct labels, with a clear error for labels that cannot be sorted."""
    try:
        return np.unique(y)
    except TypeError:
        raise ValueError(
            "the labels cannot be sorted (for example strings mixed with numbers or None); "
            "use labels of one type."
        ) from None


def _is_01(y: np.ndarray) -> bool:
    return y.dtype.kind == "b" or (y.dtype.kind in "iuf" and bool(np.all((y == 0) | (y == 1))))


def binary_targets(y, pos_label=None) -> np.ndarray:
    """0./1. targets: 1 where ``y == pos_label`` (default: 0/1 or bool labels as they are)."""
    y = as_labels(y)
    if pos_label is None:
        if _is_01(y):
            return y.astype(float)
        if y.dtype.kind in "iuf":
            raise ValueError(
                f"y must be 0/1 or bool, got values {_show(distinct_labels(y))}; pass "
                "pos_label to name the positive class of other labels."
            )
        raise ValueError(
            f"y holds labels {_show(distinct_labels(y))} (dtype {y.dtype}); pass pos_label to "
            "name the positive one."
        )
    distinct = distinct_labels(y)
    if distinct.shape[0] > 2:
        raise ValueError(
            f"a binary metric needs two labels, y holds {distinct.shape[0]}: {_show(distinct)}. "
            "For several classes pass the (n, C) probability matrix to a multi-class metric "
            "(brier_score, log_loss, top_label_ece, classwise_ece)."
        )
    if distinct.shape[0] == 2 and not any(d == pos_label for d in distinct):
        raise ValueError(
            f"pos_label={pos_label!r} is not one of the labels in y: {_show(distinct)}."
        )
    return (y == pos_label).astype(float)


def check_labels_argument(labels, sorted_only: bool = True) -> np.ndarray:
    """``labels=`` as an array of distinct labels: sorted (``sorted_only``: two columns,
    whose second is the positive class), else in any order (the columns' order)."""
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.shape[0] < 2:
        raise ValueError(f"labels must list at least two classes, got {labels.tolist()!r}.")
    try:
        ordered = bool(np.all(labels[:-1] < labels[1:]))
        distinct = np.unique(labels).shape[0] == labels.shape[0]
    except TypeError:
        raise ValueError("labels cannot be sorted; use labels of one type.") from None
    if sorted_only and not ordered:
        raise ValueError(
            f"labels must be distinct and sorted ({_show(np.unique(labels))}): the two "
            f"columns follow the sorted labels, as in scikit-learn; got {_show(labels)}."
        )
    if not distinct:
        raise ValueError(f"labels must be distinct, got {_show(labels)}.")
    return labels


def class_index(y, n_columns: int, labels=None) -> tuple[np.ndarray, np.ndarray]:
    """The classes of the ``n_columns`` probability columns and each row's column.

    Returns
    -------
    classes : ndarray of shape (n_columns,)
    index : ndarray of shape (n,)
        ``classes[index] == y``.
    """
    y = as_labels(y)
    if labels is not None:
        classes = check_labels_argument(labels, sorted_only=n_columns < 3)
        if classes.shape[0] != n_columns:
            raise ValueError(
                f"labels names {classes.shape[0]} classes but p has {n_columns} columns."
            )
    elif n_columns == 2 and _is_01(y):
        # 0/1 or bool labels name both columns even when one class is absent from y.
        classes = np.array([False, True]) if y.dtype.kind == "b" else np.array([0, 1])
    else:
        classes = distinct_labels(y)
        if classes.shape[0] != n_columns:
            raise ValueError(
                f"y holds {classes.shape[0]} distinct labels {_show(classes)} but p has "
                f"{n_columns} columns; pass labels= to name the class of every column."
            )
    try:
        order = np.argsort(classes, kind="stable")  # labels= may list the columns unsorted
        index = order[np.clip(np.searchsorted(classes[order], y), 0, n_columns - 1)]
        unknown = classes[index] != y
    except TypeError:
        raise ValueError(
            f"the labels in y cannot be compared with the classes {_show(classes)}."
        ) from None
    if np.any(unknown):
        raise ValueError(
            f"y holds labels that are not among the classes {_show(classes)}: "
            f"{_show(np.unique(y[unknown]))}."
        )
    return classes, index


def check_probabilities(p, n: int) -> np.ndarray:
    """Finite probabilities in ``[0, 1]``: shape ``(n,)``, or ``(n, C)`` rows summing to 1."""
    try:
        p = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("p must be numeric probabilities.") from None
    if p.ndim == 2 and p.shape[1] == 1:
        p = p[:, 0]
    if p.ndim == 0:
        p = p.reshape(1)
    if p.ndim not in (1, 2):
        raise ValueError(f"p must have shape (n,) or (n, C), got shape {p.shape}.")
    if p.shape[0] != n:
        raise ValueError(f"y has {n} labels but p has {p.shape[0]} rows of probabilities.")
    if n == 0:
        raise ValueError("empty input: y and p have no rows.")
    if p.ndim == 2 and p.shape[1] == 0:
        raise ValueError("p has no columns.")
    if not np.all(np.isfinite(p)):
        raise ValueError("p contains non-finite values.")
    if p.min() < 0 or p.max() > 1:
        raise ValueError(f"p must lie in [0, 1]; got values in [{p.min()}, {p.max()}].")
    if p.ndim == 2:
        off = np.abs(p.sum(axis=1) - 1.0)
        if off.max() > ROW_SUM_TOL:
            row = int(np.argmax(off))
            raise ValueError(
                f"each row of p must sum to 1 (class probabilities, e.g. predict_proba or a "
                f"softmax); row {row} sums to {p[row].sum()!r}."
            )
    return p


def binary_pair(y, p, *, pos_label=None, labels=None) -> tuple[np.ndarray, np.ndarray]:
    """0./1. targets and positive-class probabilities of a binary problem.

    ``p`` of shape ``(n,)`` is the positive-class probability (the positive class is
    ``pos_label``, else ``labels[1]``, else 1/True of 0/1 or bool labels); ``p`` of shape
    ``(n, 2)`` has columns for the sorted classes and the positive one is ``pos_label``, else
    the second class.
    """
    y = as_labels(y)
    p = check_probabilities(p, y.shape[0])
    if p.ndim == 1:
        if labels is not None:
            classes = check_labels_argument(labels)
            if classes.shape[0] != 2:
                raise ValueError(
                    f"p of shape (n,) is a binary prediction but labels names "
                    f"{classes.shape[0]} classes."
                )
            class_index(y, 2, classes)  # every label of y must be one of them
            pos_label = classes[1] if pos_label is None else pos_label
        return binary_targets(y, pos_label), p
    if p.shape[1] != 2:
        raise ValueError(
            f"this metric is binary: p must have shape (n,) or (n, 2), got {p.shape[1]} "
            "columns; for several classes use top_label_ece, classwise_ece, brier_score or "
            "log_loss."
        )
    classes, index = class_index(y, 2, labels)
    column = 1 if pos_label is None else _position(classes, pos_label)
    return (index == column).astype(float), p[:, column]


def _position(classes: np.ndarray, label) -> int:
    hits = [k for k, c in enumerate(classes) if c == label]
    if not hits:
        raise ValueError(f"pos_label={label!r} is not one of the classes {_show(classes)}.")
    return hits[0]


def class_pair(y, p, *, labels=None, pos_label=None) -> tuple[np.ndarray, np.ndarray]:
    """Each row's class column and the ``(n, C)`` probability matrix (``C >= 2``).

    A binary ``p`` of shape ``(n,)`` becomes the two columns ``[1 - p, p]``.
    """
    y = as_labels(y)
    p = check_probabilities(p, y.shape[0])
    if p.ndim == 1:
        y01, p = binary_pair(y, p, pos_label=pos_label, labels=labels)
        return y01.astype(np.int64), np.column_stack([1.0 - p, p])
    if p.shape[1] < 2:
        raise ValueError(f"p needs at least two class columns, got {p.shape[1]}.")
    if pos_label is not None and p.shape[1] > 2:
        raise ValueError(
            "pos_label names the positive class of a binary problem; p has "
            f"{p.shape[1]} class columns, so pass labels= instead."
        )
    classes, index = class_index(y, p.shape[1], labels)
    if pos_label is not None:
        _position(classes, pos_label)  # validate; a two-column metric is symmetric
    return index, p
