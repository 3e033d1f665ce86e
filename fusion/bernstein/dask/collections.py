"""Dask collections as blocks of rows for the Bernstein fits: recognizing them, their scores,
labels and weights aligned block by block, the checks every block passes on the workers, the
weights' range, and the tree reduction of per-block results. dask is imported lazily: the
core package does not need it."""

from __future__ import annotations

import warnings

import numpy as np

from ..._multiclass import one_network
from ..._validation import canonical_weights, first_nonfinite

__all__ = [
    "SPLIT_EVERY",
    "is_dask",
    "is_multiclass_dask",
    "single_network_dask",
    "dask_modules",
    "tree_reduce",
    "score_array",
    "align",
    "row_blocks",
    "weight_scale",
    "block_scores",
    "block_labels",
    "block_weights",
]

#: Fan-in of the tree reductions.
SPLIT_EVERY = 8


def is_dask(x) -> bool:
    """Whether ``x`` is a dask collection (its protocol, checked without importing dask)."""
    return x is not None and callable(getattr(x, "__dask_graph__", None))


def is_multiclass_dask(S) -> bool:
    """Whether ``S`` is multi-class dask input: a 3-D dask array (n, M, C) or a list of
    2-D dask arrays (n, C)."""
    if isinstance(S, (list, tuple)):
        return bool(S) and all(is_dask(s) for s in S)
    return is_dask(S) and getattr(S, "ndim", 0) == 3


def single_network_dask(S, y, classes=None):
    """A 2-D dask array ``S`` (n, C) as one network's class scores ``S[:, None, :]`` (lazy),
    when the labels say so as for an array in memory
    (:func:`fusion._multiclass.single_network_scores`): ``classes`` listing ``C >= 3`` labels,
    or ``y`` holding exactly ``C >= 3`` distinct labels (one pass over ``y``); else ``S``."""
    if not (is_dask(S) and getattr(S, "ndim", 0) == 2 and not hasattr(S, "columns")):
        return S
    C = S.shape[1]
    if not isinstance(C, (int, np.integer)):  # unknown column count
        return S

    def n_labels() -> int:
        if not is_dask(y):
            return np.unique(np.asarray(y).reshape(-1)).shape[0]
        _, da = dask_modules()
        return np.asarray((y.unique() if hasattr(y, "unique") else da.unique(y)).compute()).size

    return S[:, None, :] if one_network(C, classes, None if y is None else n_labels) else S


def dask_modules():
    """``dask`` and ``dask.array``, or an ImportError that says how to install them."""
    try:
        import dask
        import dask.array as da
    except ImportError as err:  # pragma: no cover - exercised only without dask
        raise ImportError("dask input needs dask: pip install 'fusion-calibration[dask]'.") from err
    return dask, da


def tree_reduce(parts: list, combine, *args):
    """Delayed tree reduction of a list of delayed partial results (fan-in
    :data:`SPLIT_EVERY`)."""
    dask, _ = dask_modules()
    f = dask.delayed(combine, pure=True)
    while len(parts) > 1:
        parts = [f(parts[i : i + SPLIT_EVERY], *args) for i in range(0, len(parts), SPLIT_EVERY)]
    return parts[0]


def score_array(S, what: str = "S"):
    """A 2-D dask array with one chunk along the columns, and the column names if any."""
    _, da = dask_modules()
    names = None
    if hasattr(S, "columns"):  # dask DataFrame
        for name, dtype in zip(S.columns, S.dtypes, strict=True):
            if getattr(dtype, "kind", "O") not in "biuf":
                raise ValueError(
                    f"score column {name!r} has non-numeric dtype {dtype}; scores must be numbers."
                )
        names = list(S.columns)
        S = S.to_dask_array()
    elif hasattr(S, "to_dask_array"):  # dask Series: one score column
        S = S.to_dask_array()
    if not isinstance(S, da.Array):
        raise ValueError(f"{what} must be a dask array or dask DataFrame, got {type(S).__name__}.")
    if S.dtype.kind not in "biuf":
        raise ValueError(f"{what} must hold numeric scores, got dtype {S.dtype}.")
    if S.ndim == 1:
        S = S[:, None]
    if S.ndim != 2:
        raise ValueError(f"{what} must be a 2-D array of shape (n, M), got {S.ndim} dimensions.")
    if S.shape[1] == 0:
        raise ValueError(f"{what} has no columns; at least one score column is needed.")
    if S.numblocks[1] > 1:
        S = S.rechunk({1: -1})
    return S, names


def _vector(v, what: str):
    """A 1-D dask array for y / sample_weight (dask input), or None for in-memory input."""
    _, da = dask_modules()
    if hasattr(v, "to_dask_array"):  # dask Series / DataFrame
        with warnings.catch_warnings():
            # string labels become an object array, which is what the label checks expect
            warnings.filterwarnings("ignore", message=".*converting pandas extension dtypes")
            v = v.to_dask_array()
    if not isinstance(v, da.Array):
        return None
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got a dask array of shape {v.shape}.")
    return v


def _known(chunks) -> bool:
    return not any(np.isnan(c) for c in chunks)


def align(S, v, what: str):
    """``v`` (dask, numpy or None) as a 1-D dask array chunked like the rows of ``S``."""
    _, da = dask_modules()
    if v is None:
        return S, None
    dv = _vector(v, what)
    if dv is None:  # in memory: cut it like S
        v = np.asarray(v)
        if v.ndim == 2 and v.shape[1] == 1:
            v = v[:, 0]
        if v.ndim != 1:
            raise ValueError(f"{what} must be 1-D, got shape {v.shape}.")
        if not _known(S.chunks[0]):
            S = S.compute_chunk_sizes()
        if v.shape[0] != S.shape[0]:
            raise ValueError(
                f"S has {S.shape[0]} rows but {what} has {v.shape[0]}; they must match."
            )
        return S, da.from_array(v, chunks=(S.chunks[0],))
    if _known(S.chunks[0]) and _known(dv.chunks[0]):
        if dv.shape[0] != S.shape[0]:
            raise ValueError(
                f"S has {S.shape[0]} rows but {what} has {dv.shape[0]}; they must match."
            )
        return S, dv if dv.chunks[0] == S.chunks[0] else dv.rechunk((S.chunks[0],))
    if dv.numblocks[0] == S.numblocks[0]:
        return S, dv  # partitions of one frame: lengths are checked block by block
    if not _known(S.chunks[0]):
        S = S.compute_chunk_sizes()
    if not _known(dv.chunks[0]):
        dv = dv.compute_chunk_sizes()
    return align(S, dv, what)


def row_blocks(S, y, sample_weight) -> list[tuple]:
    """``(S, y, w)`` of every block of rows (delayed; ``w`` None without weights), with
    ``y`` and ``sample_weight`` aligned to the rows of the dask array ``S``."""
    S, ya = align(S, y, "y")
    S, wa = align(S, sample_weight, "sample_weight")
    if wa is not None and wa.dtype.kind not in "biuf":
        raise ValueError(f"sample_weight must be numeric, got dtype {wa.dtype}.")
    S_blocks = list(S.to_delayed().ravel())
    y_blocks = list(ya.to_delayed().ravel())
    w_blocks = list(wa.to_delayed().ravel()) if wa is not None else [None] * len(S_blocks)
    return list(zip(S_blocks, y_blocks, w_blocks, strict=True)), ya.dtype


def block_scores(Sb, i: int, M: int) -> np.ndarray:
    """The scores of block ``i``, checked: ``(rows, M)`` and finite."""
    Sb = np.asarray(Sb, dtype=float)
    if Sb.ndim == 1:
        Sb = Sb[:, None]
    if Sb.ndim != 2 or Sb.shape[1] != M:
        raise ValueError(f"block {i} of S has shape {Sb.shape}; expected (rows, {M}).")
    if not np.all(np.isfinite(Sb)):
        raise ValueError(f"S must hold finite scores; found {first_nonfinite(Sb)} of block {i}.")
    return Sb


def block_labels(yb, n: int, i: int) -> np.ndarray:
    """The labels of block ``i`` (``n`` rows), checked: no NaN or None."""
    yb = np.asarray(yb)
    if yb.ndim == 2 and yb.shape[1] == 1:
        yb = yb[:, 0]
    if yb.shape[0] != n:
        raise ValueError(
            f"block {i}: S has {n} rows but y has {yb.shape[0]} labels; S and y must be "
            "partitioned alike (same number of rows in every block)."
        )
    if yb.dtype.kind == "f" and np.isnan(yb).any():
        raise ValueError(
            f"y contains NaN at row {int(np.flatnonzero(np.isnan(yb))[0])} of block {i}."
        )
    if yb.dtype.kind == "O":
        for r, v in enumerate(yb):
            if v is None or (isinstance(v, float) and np.isnan(v)):
                raise ValueError(f"y contains a missing label ({v!r}) at row {r} of block {i}.")
    return yb


def block_weights(wb, n: int, i: int, scale=None) -> np.ndarray:
    """Validated weights of block ``i``; with ``scale``, the global ``(smallest positive,
    largest)`` weight, made canonical as in memory (:func:`fusion._validation.
    canonical_weights`)."""
    if wb is None:
        return np.ones(n)
    wb = np.asarray(wb)
    if wb.dtype.kind not in "biuf":
        raise ValueError(f"sample_weight must be numeric, got dtype {wb.dtype}.")
    wb = wb.astype(float).reshape(-1)
    if wb.shape[0] != n:
        raise ValueError(
            f"block {i}: S has {n} rows but sample_weight has {wb.shape[0]}; they must be "
            "partitioned alike."
        )
    if not np.all(np.isfinite(wb)):
        raise ValueError(f"sample_weight must be finite; found {first_nonfinite(wb)} of block {i}.")
    if np.any(wb < 0):
        r = int(np.flatnonzero(wb < 0)[0])
        raise ValueError(
            f"sample_weight must be non-negative; found {wb[r]} at row {r} of block {i}."
        )
    return wb if scale is None else canonical_weights(wb, *scale)


def _weight_range(wb, i: int):
    """The smallest positive and the largest weight of a block."""
    wb = block_weights(wb, np.size(wb), i)
    pos = wb[wb > 0]
    return (float(pos.min()), float(wb.max())) if pos.size else (np.inf, 0.0)


def _merge_ranges(parts: list) -> tuple[float, float]:
    return min(p[0] for p in parts), max(p[1] for p in parts)


def weight_scale(blocks) -> tuple[float, float] | None:
    """The pass of a weighted fit before any other: the weights' ``(smallest positive,
    largest)``, which make them canonical as in memory (None without weights)."""
    w_blocks = [wb for _, _, wb in blocks]
    if w_blocks[0] is None:
        return None
    dask, _ = dask_modules()
    rng = dask.delayed(_weight_range, pure=True)
    (scale,) = dask.compute(
        tree_reduce([rng(wb, i) for i, wb in enumerate(w_blocks)], _merge_ranges)
    )
    if not scale[1] > 0:
        raise ValueError("sample_weight sums to zero; at least one row needs positive weight.")
    return scale
