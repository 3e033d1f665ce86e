"""BernsteinFusion on dask collections: blockwise map-reduce, the fit on the client.

Fitting needs only per-column ECDF summaries and sufficient statistics that add over row
blocks, so :func:`fit_dask` never gathers rows or forms the ``n x P`` design: for the
rank-only model (``base=None``) ``Phi' W Phi``, ``Phi' W y``; for the default model the cell
sums of :mod:`fusion.bernstein.cells` (weights, positives, sums of ``u`` and ``z`` per
occupied cell and fold). Each pass is a ``dask.delayed`` map over the row blocks followed by
a tree reduction (fan-in :data:`SPLIT_EVERY`); only the reduced result reaches the client,
where the QP (:class:`~fusion.bernstein.qp.MonotoneQP`) or the Newton fit
(:mod:`fusion.bernstein.logistic`, the same code as in memory) runs. dask is imported
lazily: the core package does not need it. The blocks are computed with dask's current
scheduler, i.e. on the cluster of an active ``dask.distributed.Client``.

Passes over the data
--------------------
1. Validation (finite scores, numeric non-negative weights, labels, lengths of ``S``, ``y``
   and ``sample_weight`` blocks) with per-block label counts and weight sums, and one ECDF
   summary per column (:mod:`fusion.ecdf.sketch`). With ``ecdf_knots=None`` the summary
   is the distinct values with their counts, merged exactly: the knots (all distinct training
   values of a column, two floats each) must fit in the client's memory, and reach the
   workers again in pass 3. With an int ``k`` every block sends at most ``8 k`` weighted
   values per column.
2. Only for a sketched column that has more than ``k`` distinct values: exact counts below
   and at each knot (the sketch's values are exact mid-ECDF values at its knots).
3. The sufficient statistics, summed up the tree. Rank-only model: ``LeastSquaresStats`` per block
   (per block and fold for ``degree="cv"``, all candidate degrees in the same pass).
   Default model: the cell sums per block (and fold, for cross-validation); they do not
   depend on the degree or the penalty, so one pass serves the whole search.

With the exact ECDF the result equals the in-memory fit on the same statistics up to their
summation order: the rank-only model with a fixed degree, and the default model fitted in
memory on cells (``bins`` an int, or ``"auto"`` from 100,000 rows on) with a fixed ``lam``
and degree. With cross-validation the folds differ (below), so the chosen ``lam`` may too.

Cross-validation folds
----------------------
Assigned blockwise, without any global row index: in block ``i`` the rows of each class are
shuffled by a generator seeded with ``(seed, i)`` and dealt to the folds in turn from a
random start, so every fold is stratified to within one row per class and block. ``seed`` is
``random_state`` when it is an int (otherwise drawn from it). The folds depend on the
chunking and differ from the in-memory ``StratifiedKFold`` folds.
"""

from __future__ import annotations

import uuid
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._direction import DIRECTION_Z, resolve_increasing, reverse_scores, warn_reversed
from .._lstsq import LeastSquaresStats
from .._validation import canonical_weights, encode_binary_targets, first_nonfinite
from ..ecdf import ECDFNormalizer, mid_distribution
from ..ecdf.sketch import (
    CANDIDATE_FACTOR,
    column_summary,
    counts_at_knots,
    knot_candidates,
    max_gap,
    merge_summaries,
    select_knots,
)
from .basis import make_components
from .cells import CellData, CellSums, block_sums, cell_edges, hash_folds, resolve_bins
from .checks import as_degrees, check_not_constant, fold_seed
from .qp import accumulate_gram
from .scale import knot_range, scores_scale

__all__ = ["fit_dask", "predict_proba_dask", "predict_dask", "SPLIT_EVERY", "SUMMARY_FACTOR"]

#: Fan-in of the tree reductions.
SPLIT_EVERY = 8
#: Block ECDF summaries keep ``SUMMARY_FACTOR * ecdf_knots`` values per column.
SUMMARY_FACTOR = 8


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError as err:  # pragma: no cover - exercised only without dask
        raise ImportError("dask input needs dask: pip install 'fusion-calibration[dask]'.") from err
    return dask, da


def _tree_reduce(parts: list, combine, *args):
    """Delayed tree reduction of a list of delayed partial results."""
    dask, _ = _dask()
    f = dask.delayed(combine, pure=True)
    while len(parts) > 1:
        parts = [f(parts[i : i + SPLIT_EVERY], *args) for i in range(0, len(parts), SPLIT_EVERY)]
    return parts[0]


# ---------------------------------------------------------------------------------------------
# Input handling on the client.


def _score_array(S, what: str = "S"):
    """A 2-D dask array with one chunk along the columns, and the column names if any."""
    _, da = _dask()
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
    _, da = _dask()
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


def _align(S, v, what: str):
    """``v`` (dask, numpy or None) as a 1-D dask array chunked like the rows of ``S``."""
    _, da = _dask()
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
    return _align(S, dv, what)


# ---------------------------------------------------------------------------------------------
# Block functions (run on the workers).


def _block_scores(Sb, i: int, M: int) -> np.ndarray:
    Sb = np.asarray(Sb, dtype=float)
    if Sb.ndim == 1:
        Sb = Sb[:, None]
    if Sb.ndim != 2 or Sb.shape[1] != M:
        raise ValueError(f"block {i} of S has shape {Sb.shape}; expected (rows, {M}).")
    if not np.all(np.isfinite(Sb)):
        raise ValueError(f"S must hold finite scores; found {first_nonfinite(Sb)} of block {i}.")
    return Sb


def _block_labels(yb, n: int, i: int) -> np.ndarray:
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


def _block_weights(wb, n: int, i: int, scale=None) -> np.ndarray:
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
    """Pass 0 (weighted fits): the smallest positive and the largest weight of a block."""
    wb = _block_weights(wb, np.size(wb), i)
    pos = wb[wb > 0]
    return (float(pos.min()), float(wb.max())) if pos.size else (np.inf, 0.0)


def _merge_ranges(parts: list) -> tuple[float, float]:
    return min(p[0] for p in parts), max(p[1] for p in parts)


def _direction_block(Sb, yb, wb, M: int, ecdf, positive, scale, between) -> np.ndarray:
    """Pass for ``increasing="auto"``: per column the weighted sums of ``u``, ``u^2`` and
    ``u y``, and of ``1, y, y^2, w`` (rows: those sums, columns: the scores)."""
    Sb = np.asarray(Sb, dtype=float).reshape(-1, M)
    y01 = (np.asarray(yb).reshape(-1) == positive).astype(float)
    wb = _block_weights(wb, Sb.shape[0], -1, scale)
    U = ecdf.transform(Sb, between=between)
    one = np.ones(M)
    return np.array(
        [wb @ U, wb @ U**2, (wb * y01) @ U, one * wb.sum(), one * (wb @ y01), one * (wb @ wb)]
    )


def _sum_arrays(parts: list) -> np.ndarray:
    return sum(parts[1:], parts[0])


def _anti_alignment(sums: np.ndarray) -> np.ndarray:
    """:func:`fusion._direction.anti_alignment_z` of every column from summed moments."""
    su, su2, suy, W, sy, sw2 = sums
    with np.errstate(invalid="ignore", divide="ignore"):
        mu, my = su / W, sy / W
        vu = su2 - W * mu * mu
        vy = sy - W * my * my  # y^2 = y
        cov = suy - W * mu * my
        r = cov / np.sqrt(vu * vy)
        z = r * np.sqrt(np.maximum(W * W / sw2 - 1.0, 0.0))
    return np.where(np.isfinite(z), z, 0.0)


def _summarize_block(
    Sb,
    yb,
    wb,
    i: int,
    M: int,
    size: int | None,
    scale=None,
    n_cand: int | None = None,
    reverse=None,
) -> dict:
    """Pass 1: validate one block; label counts and weights; ECDF summary per column (of the
    scores with ``reverse = (columns, offsets)`` reversed, when given)."""
    Sb = _block_scores(Sb, i, M)
    if reverse is not None:
        Sb = reverse_scores(Sb, *reverse)
    n = Sb.shape[0]
    yb = _block_labels(yb, n, i)
    wb = _block_weights(wb, n, i, scale)
    labels = {}
    if n:
        try:
            uniq, inv = np.unique(yb, return_inverse=True)
        except TypeError as err:
            raise ValueError(f"y mixes label types that cannot be compared: {err}") from None
        wsum = np.bincount(inv.reshape(-1), weights=wb, minlength=uniq.shape[0])
        labels = {u: float(s) for u, s in zip(uniq.tolist(), wsum, strict=True)}
    # The ECDF is weighted, and a row of zero weight is no row at all (as in memory).
    pos = wb > 0
    Sp, wp = Sb[pos], wb[pos]
    summaries = [column_summary(Sp[:, j], size, wp, n_cand) if wp.size else None for j in range(M)]
    return {"n": n, "labels": labels, "summaries": summaries, "weight": float(wp.sum())}


def _merge_pass1(parts: list[dict], size: int | None) -> dict:
    labels: dict = {}
    for p in parts:
        for k, v in p["labels"].items():
            labels[k] = labels.get(k, 0.0) + v
    M = len(parts[0]["summaries"])
    summaries = []
    for j in range(M):
        col = [p["summaries"][j] for p in parts if p["summaries"][j] is not None]
        summaries.append(merge_summaries(col, size) if col else None)
    return {
        "n": sum(p["n"] for p in parts),
        "labels": labels,
        "summaries": summaries,
        "weight": sum(p["weight"] for p in parts),
    }


def _count_block(Sb, wb, i: int, M: int, knots: dict, scale=None, reverse=None) -> dict:
    """Pass 2: exact weights below and at the knots of the sketched columns."""
    Sb = np.asarray(Sb, dtype=float).reshape(-1, M)
    if reverse is not None:
        Sb = reverse_scores(Sb, *reverse)
    wb = _block_weights(wb, Sb.shape[0], i, scale)
    return {j: counts_at_knots(Sb[:, j], q, wb) for j, q in knots.items()}


def _sum_counts(parts: list[dict]) -> dict:
    return {j: tuple(sum(p[j][t] for p in parts) for t in (0, 1)) for j in parts[0]}


def _block_folds(y01: np.ndarray, cv: int, seed: int, i: int) -> np.ndarray:
    rng = np.random.default_rng([seed, i])
    fold = np.empty(y01.shape[0], dtype=np.int64)
    for c in (0.0, 1.0):
        idx = rng.permutation(np.flatnonzero(y01 == c))
        fold[idx] = (np.arange(idx.shape[0]) + rng.integers(cv)) % cv
    return fold


def _gram_block(Sb, yb, wb, i: int, M: int, model, positive, cands, cv, seed):
    """Pass 3: LeastSquaresStats of one block for every candidate (and fold, for CV).

    ``cands``: ``(key, components, degrees)`` triples; the result is keyed by ``key``.
    """
    Sb = model.direct(np.asarray(Sb, dtype=float).reshape(-1, M))
    yb = np.asarray(yb).reshape(-1)
    y01 = (yb == positive).astype(float)
    wb = _block_weights(wb, Sb.shape[0], i, model.weight_scale)
    U = model.ecdf_.transform(Sb, between=model.between)
    if cv is None:
        return {k: accumulate_gram(U, y01, wb, d, components=c) for k, c, d in cands}
    fold = _block_folds(y01, cv, seed, i)
    order = np.argsort(fold, kind="stable")
    bounds = np.searchsorted(fold[order], np.arange(cv + 1))
    Uo, yo, wo = U[order], y01[order], wb[order]
    return {
        k: [
            accumulate_gram(Uo[a:b], yo[a:b], wo[a:b], d, components=c)
            for a, b in zip(bounds[:-1], bounds[1:], strict=True)
        ]
        for k, c, d in cands
    }


def _sum_stats(parts: list[dict]) -> dict:
    out = {}
    for d in parts[0]:
        vals = [p[d] for p in parts]
        if isinstance(vals[0], LeastSquaresStats):
            out[d] = sum(vals[1:], vals[0])
        else:
            out[d] = [sum((v[f] for v in vals[1:]), vals[0][f]) for f in range(len(vals[0]))]
    return out


# ---------------------------------------------------------------------------------------------
# Fit.


def _mid_from_counts(summary) -> np.ndarray:
    upper = np.cumsum(summary.wts)
    return mid_distribution(upper - summary.wts, summary.wts, upper[-1])  # as in memory


def fit_dask(est, S, y, sample_weight=None):
    """Fit ``est`` (a :class:`~fusion.BernsteinFusion`) on dask collections; returns ``est``."""
    dask, _ = _dask()
    est._validate_params()
    if est.n_bootstrap:
        raise ValueError(
            "n_bootstrap > 0 is not supported for dask input (the resamples need the rows); "
            "fit on a sample in memory for predict_interval, or pass n_bootstrap=0."
        )
    est.bootstrap_coef_ = None
    if y is None:
        raise ValueError(
            "this estimator requires y to be passed, but the target y is None; pass the binary "
            "class label of every row of S."
        )
    S, names = _score_array(S)
    M = S.shape[1]
    S, ya = _align(S, y, "y")
    S, wa = _align(S, sample_weight, "sample_weight")
    if wa is not None and wa.dtype.kind not in "biuf":
        raise ValueError(f"sample_weight must be numeric, got dtype {wa.dtype}.")
    S_blocks = list(S.to_delayed().ravel())
    y_blocks = list(ya.to_delayed().ravel())
    w_blocks = list(wa.to_delayed().ravel()) if wa is not None else [None] * len(S_blocks)
    B = len(S_blocks)

    n_knots = est._dask_knots()

    # Pass 0 (weighted fits): the weights' range, to make them canonical as in memory.
    scale = None
    if wa is not None:
        rng = dask.delayed(_weight_range, pure=True)
        (scale,) = dask.compute(
            _tree_reduce([rng(wb, i) for i, wb in enumerate(w_blocks)], _merge_ranges)
        )
        if not scale[1] > 0:
            raise ValueError("sample_weight sums to zero; at least one row needs positive weight.")

    # Pass 1 (validation, labels, ECDF summaries) and pass 2 (counts at sketch candidates).
    blocks = (S_blocks, y_blocks, w_blocks)
    res, knots, values, bound = _ecdf_passes(blocks, M, n_knots, scale)
    n = res["n"]
    if n < 2:
        raise ValueError(f"at least 2 training rows are needed, got {n} sample.")
    labels = res["labels"]
    keys = list(labels)
    classes, _ = encode_binary_targets(np.asarray(keys, dtype=ya.dtype), len(keys))
    total_w = sum(labels.values())
    if not total_w > 0:
        raise ValueError("sample_weight sums to zero; at least one row needs positive weight.")
    for c in classes:
        if not labels[c.item() if hasattr(c, "item") else c] > 0:
            raise ValueError(
                f"sample_weight is zero on every row of class {c!r}; both classes need positive "
                "total weight."
            )
    ecdf = ECDFNormalizer.from_knots(knots, values)

    est.classes_ = classes
    est.n_features_in_ = M
    if names is not None and all(isinstance(c, str) for c in names):
        est.feature_names_in_ = np.asarray(names, dtype=object)
    else:
        est.__dict__.pop("feature_names_in_", None)
    increasing, offsets = _directions(est, blocks, ecdf, knots, classes[1], scale)
    if not increasing.all():
        # The ECDF refitted on the reversed scores, as in memory: a sketch's knots are the
        # candidates of smallest hash among the column's values, so mirroring the sketch of s
        # would give other knots than the sketch of offset - s (and, on a flat CV curve,
        # another penalty: 9e-3 apart in probability at 200,000 rows).
        reverse = (tuple(int(j) for j in np.flatnonzero(~increasing)), offsets)
        _, knots, values, bound = _ecdf_passes(blocks, M, n_knots, scale, reverse)
        ecdf = ECDFNormalizer.from_knots(knots, values)
    est.increasing_ = increasing
    est.reversal_offset_ = offsets
    positive = classes[1].item() if hasattr(classes[1], "item") else classes[1]
    est.base_rate_ = float(labels[positive] / total_w)
    est.ecdf_ = ecdf
    est.ecdf_knots_ = n_knots
    est.ecdf_error_bound_ = bound
    model = _FeatureModel(est, scale)
    if est.base is None:
        _fit_rank_only(est, blocks, model, classes, n, M, B)
    else:
        _fit_logistic(est, blocks, model, classes, n, M)
    est.proba_bounds_ = est._bounds_for(float(total_w))
    return est


def _ecdf_passes(blocks, M: int, n_knots: int | None, scale, reverse=None):
    """Passes 1 and 2: ``(pass-1 result, knots, values, error bound)`` of every column's
    ECDF, exact where the column has at most ``n_knots`` distinct values (or ``n_knots`` is
    None), else the sketch of :func:`fusion.ecdf.sketch.sketch_column` (pass 2 counts the
    rows at its candidates). ``reverse``: ``(columns, offsets)`` to reverse first."""
    dask, _ = _dask()
    S_blocks, y_blocks, w_blocks = blocks
    size = None if n_knots is None else SUMMARY_FACTOR * n_knots
    n_cand = None if n_knots is None else CANDIDATE_FACTOR * n_knots
    summarize = dask.delayed(_summarize_block, pure=True)
    parts = [
        summarize(s, yb, wb, i, M, size, scale, n_cand, reverse)
        for i, (s, yb, wb) in enumerate(zip(S_blocks, y_blocks, w_blocks, strict=True))
    ]
    (res,) = dask.compute(_tree_reduce(parts, _merge_pass1, size))
    knots, values, pending, bound = [None] * M, [None] * M, {}, 0.0
    for j, summary in enumerate(res["summaries"]):
        exact = n_knots is None or (summary.exact and summary.vals.shape[0] <= n_knots)
        # a sketch's knots are chosen among candidates, as in memory (ecdf.sketch_column)
        q = summary.vals if exact else knot_candidates(summary)
        check_not_constant(q, j)
        knots[j] = q
        if exact:
            values[j] = _mid_from_counts(summary)
        else:
            pending[j] = q
    if pending:
        count = dask.delayed(_count_block, pure=True)
        knots_d = dask.delayed(pending, pure=True)
        (counts,) = dask.compute(
            _tree_reduce(
                [
                    count(s, wb, i, M, knots_d, scale, reverse)
                    for i, (s, wb) in enumerate(zip(S_blocks, w_blocks, strict=True))
                ],
                _sum_counts,
            )
        )
        for j, (lt, le) in counts.items():
            knots[j], values[j] = select_knots(pending[j], lt, le, res["weight"], n_knots)
            bound = max(bound, max_gap(values[j]))
    return res, knots, values, bound


def _directions(est, blocks, ecdf, knots, positive, scale) -> tuple[np.ndarray, np.ndarray]:
    """``increasing_`` and ``reversal_offset_`` as in memory (one more pass for "auto")."""
    dask, _ = _dask()
    M = len(knots)
    wanted = resolve_increasing(est.increasing, M)
    offsets = np.array([1.0 if k[0] >= 0.0 and k[-1] <= 1.0 else 0.0 for k in knots])
    increasing = np.array([True if w is None else bool(w) for w in wanted])
    auto = [j for j, w in enumerate(wanted) if w is None]
    if auto:
        f = dask.delayed(_direction_block, pure=True)
        ecdf_d = dask.delayed(ecdf, pure=True)
        between = est._ecdf_between()
        parts = [
            f(s, yb, wb, M, ecdf_d, positive, scale, between)
            for s, yb, wb in zip(*blocks, strict=True)
        ]
        (sums,) = dask.compute(_tree_reduce(parts, _sum_arrays))
        z = _anti_alignment(sums)
        flagged = [j for j in auto if z[j] < DIRECTION_Z]
        if flagged:
            increasing[flagged] = False
            warn_reversed([est._column_name(j) for j in flagged], [float(z[j]) for j in flagged])
    return increasing, offsets


def _fit_rank_only(est, blocks, model, classes, n: int, M: int, B: int) -> None:
    """Pass 3 of the rank-only model: sufficient statistics of every candidate (structure and
    degree, :meth:`BernsteinFusion._rank_only_candidates`), then the QPs on the client."""
    dask, _ = _dask()
    for name in ("base_", "base_coef_", "base_shift_", "base_scale_", "lam_", "n_cells_"):
        setattr(est, name, None)
    structures = est._rank_only_structure(M)
    if isinstance(est.degree, str) or len(structures) > 1:  # a cross-validated choice
        if n < est.cv:
            raise ValueError(f"cv={est.cv} folds need at least {est.cv} rows, got {n}.")
        n_train = n - (-(-n // est.cv)) - 2 * B  # largest fold: n / cv + 1 row per class, block
        cands, edges = est._rank_only_candidates(M, max(n_train, 1))
        seed = fold_seed(est)
        cv = est.cv
    else:
        components = make_components(structures[0], M)
        cands, edges = [(structures[0], components, as_degrees(est.degree, M, "degree"))], set()
        est._check_size(cands[0][2], n, components)
        cv, seed = None, 0
    keys = est._rank_only_keys(cands)
    gram = dask.delayed(_gram_block, pure=True)
    model_d = dask.delayed(model, pure=True)
    work = [(k, c, d) for k, (_, c, d) in zip(keys, cands, strict=True)]
    parts = [
        gram(s, yb, wb, i, M, model_d, classes[1], work, cv, seed)
        for i, (s, yb, wb) in enumerate(zip(*blocks, strict=True))
    ]
    (stats,) = dask.compute(_tree_reduce(parts, _sum_stats))
    if cv is None:
        est.__dict__.pop("cv_scores_", None)
        _, components, degrees = cands[0]
        total = stats[keys[0]]
    else:
        results = {
            k: est._cv_score(d, stats[k], c) for k, (_, c, d) in zip(keys, cands, strict=True)
        }
        components, degrees, total = est._pick(results, cands, edges)
    est._solve_final(degrees, total, components)


def _cell_block(Sb, yb, wb, i: int, M: int, model, positive, edges, cv, seed) -> CellSums:
    """Pass 3 of the default model: the cell sums of one block (per fold for CV)."""
    Sb = model.direct(np.asarray(Sb, dtype=float).reshape(-1, M))
    yb = np.asarray(yb).reshape(-1)
    y01 = (yb == positive).astype(float)
    wb = _block_weights(wb, Sb.shape[0], i, model.weight_scale)
    U = model.ecdf_.transform(Sb, between=model.between)
    Z = model._features(U, Sb)
    fold = None if cv is None else hash_folds(U, y01, cv, seed)
    return block_sums(U, Z, y01, wb, edges, fold, 0 if cv is None else cv)


def _merge_cells(parts: list[CellSums]) -> CellSums:
    return CellSums.merge(parts)


def _fit_logistic(est, blocks, model, classes, n: int, M: int) -> None:
    """The default model: one pass for the cell sums, then the fit on the client."""
    dask, _ = _dask()
    est._own_scale_setup()
    candidates = est._candidates_logistic(M, n)
    lams = est._lam_candidates(n)
    bins = resolve_bins(est.bins, n, M, dask=True)
    edges = cell_edges(*est._feature_range(M), bins)
    search = len(candidates) > 1 or len(lams) > 1
    if search and n < est.cv:
        raise ValueError(f"cv={est.cv} folds need at least {est.cv} rows, got {n}.")
    cv, seed = (est.cv, fold_seed(est)) if search else (None, 0)
    model.set_scale(est)
    model = dask.delayed(model, pure=True)
    cell = dask.delayed(_cell_block, pure=True)
    parts = [
        cell(s, yb, wb, i, M, model, classes[1], edges, cv, seed)
        for i, (s, yb, wb) in enumerate(zip(*blocks, strict=True))
    ]
    (sums,) = dask.compute(_tree_reduce(parts, _merge_cells))
    data = CellData(sums, cv or 0, M)
    est._fit_logistic_from(data, candidates, lams)


class _FeatureModel:
    """What the workers need of the model (plain data): the directions, the weights' range,
    the ECDF and its form between knots, and (default model) the scale constants of ``z``."""

    def __init__(self, est, weight_scale):
        self.increasing_ = est.increasing_
        self.reversal_offset_ = est.reversal_offset_
        self.weight_scale = weight_scale
        self.ecdf_ = est.ecdf_
        self.between = est._ecdf_between()

    def set_scale(self, est) -> None:
        self.base_ = est.base_
        self.base_shift_ = est.base_shift_
        self.base_scale_ = est.base_scale_

    def direct(self, Sb: np.ndarray) -> np.ndarray:
        if self.increasing_.all():
            return Sb
        return reverse_scores(Sb, np.flatnonzero(~self.increasing_), self.reversal_offset_)

    def _features(self, U, S):
        lo, hi = knot_range(self.ecdf_.knots_)
        return scores_scale(S, lo, hi, self.base_, self.base_shift_, self.base_scale_)


# ---------------------------------------------------------------------------------------------
# Predict.


def _proba_block(Sb, model, block_id=None):
    i = block_id[0] if block_id else "?"
    Sb = _block_scores(Sb, i, model.n_features_in_)
    Sb = model._apply_direction(Sb)
    U = model.ecdf_.transform(Sb, between=model._ecdf_between())
    return model._proba_normalized(U, Sb)


def _label_block(p, classes):
    return classes[(p > 0.5).astype(int)]


def predict_proba_dask(est, S):
    """Lazy ``predict_proba`` of a dask array/DataFrame: a dask array of shape (n, 2)."""
    dask, da = _dask()
    check_is_fitted(est, "ecdf_")
    S, names = _score_array(S)
    if S.shape[1] != est.n_features_in_:
        raise ValueError(f"S has {S.shape[1]} columns, expected {est.n_features_in_}.")
    fitted_names = getattr(est, "feature_names_in_", None)
    if names is not None and fitted_names is not None and list(names) != list(fitted_names):
        raise ValueError(
            f"The feature names should match those that were passed during fit: got {names}, "
            f"expected {list(fitted_names)}."
        )
    # One graph key for the model, shipped once per worker rather than once per task.
    model = dask.delayed(est, pure=False, name=f"bernstein-model-{uuid.uuid4().hex}")
    return da.map_blocks(
        _proba_block, S, model, dtype=float, chunks=(S.chunks[0], (2,)), meta=np.empty((0, 2))
    )


def predict_dask(est, S):
    """Lazy ``predict`` of a dask array/DataFrame: labels at threshold 0.5."""
    p = predict_proba_dask(est, S)[:, 1]
    return p.map_blocks(_label_block, est.classes_, dtype=est.classes_.dtype)
