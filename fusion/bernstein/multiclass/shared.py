"""The fitter of the class-shared multi-class model (:mod:`.multinomial`): the cross-validated
penalty paths on a source of statistics (in memory or on dask alike), the one-standard-error
picks, the final fit and the top-label correction (:mod:`.toplabel`), a frozen
:class:`~fusion.bernstein.results.SharedResult`."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from ..._cv import edge_matters, one_se_index, paired_se
from ..._solver import one_blas_thread
from ..._validation import canonical_weights, check_sample_weight
from ..._warn import caller_level
from ..newton import Problem, base_ridge, solve
from ..plan import SharedPlan
from ..results import SharedResult
from .multinomial import CV_ROWS, cv_path, hessian_share
from .pairs import MemberAxis, PairData, member_log_probabilities, member_scales, normalizer
from .source import MemorySource, shared_layout
from .toplabel import DEGREE, choose

__all__ = ["fit_rows", "fit_memory", "fit_source", "compare"]


def fit_rows(S: np.ndarray, index: np.ndarray, sample_weight, base: str, plan_for):
    """The class-shared model on scores ``S`` (n, M, C) in memory with class indices
    ``index`` and weights ``sample_weight`` (None: equal): rows of zero weight dropped, the
    others made canonical, the scorers' scales read by ``base``; ``plan_for(n, M, C, kept)``
    gives the :class:`~fusion.bernstein.plan.SharedPlan` (``kept``: the rows of positive
    weight). Returns the result, every row's held-out log-loss of the cross-validation at
    the chosen penalties (NaN for a row of zero weight; None without cross-validation) and
    every row's test fold (-1 for a row of zero weight, ``folds.OUTSIDE`` outside
    the cross-validation's sample; None without cross-validation), which a model compared
    with this one must be scored on."""
    n, M, C = S.shape
    w = check_sample_weight(sample_weight, n)
    kept = w > 0
    if not kept.all():
        S, index, w = S[kept], index[kept], w[kept]
    if sample_weight is not None:
        w = canonical_weights(w)
    if S.shape[0] < 2:
        raise ValueError(
            f"at least 2 training rows with positive sample_weight are needed, got {S.shape[0]}."
        )
    scales = member_scales(S, base)
    plan = plan_for(S.shape[0], M, C, kept)
    Z = member_log_probabilities(S, scales)  # once: the folds' keys, the axes, the storage
    fold, n_folds = (None, 0)
    if plan.searches:
        fold, n_folds = plan.folds.pair_folds(Z, index, plan.sample)
    fit = fit_memory(Z, index, w / w.mean(), scales, plan, fold, n_folds, float(w.sum()))
    held = folds = None
    if fit.heldout is not None:
        held = np.full(kept.shape[0], np.nan)
        held[kept] = fit.heldout
    if fold is not None:
        folds = np.full(kept.shape[0], -1, dtype=np.int64)
        folds[kept] = fold
    return fit, held, folds


def compare(held_shared, held_per_class, w: np.ndarray) -> tuple[dict | None, bool]:
    """``multiclass_cv_`` of the class-shared and the per-class model from every row's
    held-out log-loss on the same folds (None where either has none: a fold without some
    class), the mean of each and the paired standard error of their difference, and whether
    the per-class model is kept: where it is lower by more than that (the one-standard-error
    rule toward the shared one)."""
    if held_shared is None or held_per_class is None:
        return None, False
    rows = (w > 0) & np.isfinite(held_shared) & np.isfinite(held_per_class)
    diff = held_per_class[rows] - held_shared[rows]
    se = float(paired_se(np.vstack([diff, np.zeros_like(diff)]), w[rows], 1)[0])
    mean = float(np.average(diff, weights=w[rows]))
    base = float(np.average(held_shared[rows], weights=w[rows]))
    return {"shared": base, "per-class": base + mean, "se": se}, mean + se < 0


def fit_memory(
    Z: np.ndarray,
    index: np.ndarray,
    w: np.ndarray,
    scales: Sequence[str],
    plan: SharedPlan,
    fold: np.ndarray | None,
    n_folds: int,
    n_eff: float,
) -> SharedResult:
    """The class-shared model on log-probabilities ``Z`` (M, n, C) in memory
    (:func:`~.pairs.member_log_probabilities`, taken over as the pairs' storage), class
    indices ``index`` and weights ``w`` (mean 1), on the test folds ``fold`` (where the plan
    searches) of ``n_folds`` folds; ``n_eff``: the rows' canonical weight (the ridge's row
    count)."""
    M = Z.shape[0]
    search = plan.searches
    data = PairData(Z, index, w, scales, fold if search else None, n_folds if search else 0)
    source = MemorySource(data, shared_layout(M, plan.degree), plan.degree)
    return fit_source(source, plan, data.axes, scales, n_eff)


def fit_source(
    source, plan: SharedPlan, axes: list[MemberAxis], scales: Sequence[str], n_eff: float
) -> SharedResult:
    """The fit on a source of statistics (in memory or on dask): the cross-validated path
    over the plan's ``lams`` (without class biases when ``taus`` is a grid), the
    one-standard-error rule toward the largest ``lam``; then, at that ``lam``, the path over
    the biases' ridges ``taus`` with the same rule toward no biases; then the final fit on
    every row from the mean of the chosen penalties' fold solutions; and the top-label
    correction from the held-out probabilities of the chosen penalties' folds."""
    progress = plan.progress()
    with one_blas_thread():  # small dense algebra only: threads would only spin
        fit = _fit_source(source, axes, scales, plan.degree, plan.lams, plan.taus,
                          plan.settings, n_eff, progress, plan.tops)  # fmt: skip
    progress.close()
    return fit


def _fit_source(source, axes, scales, degree, lams, taus, settings, n_eff, progress, tops):
    M = len(axes)
    layout = shared_layout(M, degree)
    ridge = base_ridge(n_eff)
    x0 = np.zeros(layout.n_coef)
    x0[:M] = 1.0 / M  # temperature 1 of the averaged log-probabilities
    lam, tau = float(lams[0]), float(taus[0])
    x_start, cv_scores, cv_se, heldout, chosen_folds = x0, None, None, None, None
    if len(lams) > 1 or len(taus) > 1 or any(np.isfinite(t) for t in tops):
        _check_folds(source)
        first = taus[0] if len(taus) == 1 else np.inf
        starts = [x0] * len(source.fold_keys())
        path = cv_path(source, layout, [(v, first) for v in lams], starts, settings, ridge,
                       progress=progress, se_rule=paired_se)  # fmt: skip
        pick = one_se_index(path.held, path.w)
        lam, tau = path.settings[pick]
        chosen_folds = path.solutions[pick]
        heldout = path.held[pick]
        done, held = list(path.settings), [path.held]
        if len(lams) > 1 and pick == len(lams) - 1 and _edge_matters(path.held, path.w, pick):
            if _smaller_fits_better(source, layout, path, pick, lams, first, settings, ridge):
                _warn_edge(f"lam={lam:g}", "lam_grid")
        if len(taus) > 1:
            grid = [(lam, float(t)) for t in taus if np.isfinite(t)]
            bias = cv_path(source, layout, grid, path.solutions[pick], settings, ridge,
                           progress=progress, se_rule=paired_se, optional=True)  # fmt: skip
            candidates = np.vstack([path.held[pick : pick + 1], bias.held])
            chosen = one_se_index(candidates, path.w)
            if chosen > 0:
                tau = bias.settings[chosen - 1][1]
                chosen_folds = bias.solutions[chosen - 1]
                heldout = bias.held[chosen - 1]
                # (at tau n <= 0.01 a smaller ridge could not fit the data any closer)
                edge = chosen == len(grid) and tau * n_eff > 0.01
                if edge and _edge_matters(candidates, path.w, chosen):
                    _warn_edge(f"bias_penalty={tau:g}", "the bias penalty grid")
            done += bias.settings
            held.append(bias.held)
        x_start = np.mean(chosen_folds, axis=0)
        if len(lams) > 1 or len(taus) > 1:
            losses = np.vstack(held)
            mean = losses @ path.w / path.w.sum()
            se = paired_se(losses, path.w, int(np.argmin(mean)))
            cv_scores = {k: float(v) for k, v in zip(done, mean, strict=True)}
            cv_se = {k: float(v) for k, v in zip(done, se, strict=True)}
    top = None
    if chosen_folds is not None and any(np.isfinite(t) for t in tops):
        sample = source.heldout_sample(list(zip(source.fold_keys(), chosen_folds, strict=True)))
        top = choose(sample, tops)
        if top.heldout is not None:  # the held-out loss of the corrected model
            heldout = top.heldout
        if progress is not None:
            progress.step(f"top-label correction, penalty={top.penalty:g}")
    final = Problem(key=None, x=x_start, lam=lam, total=source.total(None), tau=tau)
    curvature = None
    if chosen_folds is not None:  # steps of one pass each, guided by the folds' curvature
        share = hessian_share(source.total(CV_ROWS), source.n_classes)
        curvature = source.curvature(x_start, share)
    refresh = None if curvature is None else (lambda x: source.curvature(x, share))
    solve(source, layout, [final], settings, ridge, hessian=curvature, refresh=refresh)
    if progress is not None:
        progress.step(f"final fit, lam={lam:g}")
    by_row = getattr(source, "by_row", None)  # in memory: every row's held-out loss
    heldout = None if heldout is None or by_row is None else by_row(heldout)
    theta = np.zeros(DEGREE) if top is None else np.asarray(top.theta, dtype=float)
    return SharedResult(
        axes, tuple(scales), normalizer(axes), int(degree), layout, final.x, float(lam),
        float(tau), cv_scores, cv_se, final.n_iter, final.status, np.r_[0.0, theta], top,
        heldout,
    )  # fmt: skip


def _smaller_fits_better(source, layout, path, pick, lams, tau, settings, ridge) -> bool:
    """Whether, cross-validation having picked the smallest ``lam`` of ``lams`` (largest
    first), one more step down (a decade, or the grid's last step where that is longer)
    fits the held-out rows better by enough to warn (:func:`_edge_matters`), every fold warm
    started from its solution at the edge; True if that step cannot be fitted. Fitting one
    CIFAR-100 network on 4,000 rows picked 1e-6 at the edge of the default grid, and a grid
    extended to 1e-8 picked 1e-6 again with the same test log-loss: a warning of the edge
    alone was false there (benchmarks/RESULTS.md). ``lam = 0`` has nothing below it."""
    low, prev = float(lams[-1]), float(lams[-2])
    if low <= 0:
        return False
    beyond = low * min(low / prev if np.isfinite(prev) else 0.1, 0.1)
    step = cv_path(source, layout, [(beyond, tau)], path.solutions[pick], settings, ridge,
                   se_rule=paired_se, optional=True)  # fmt: skip
    if not step.settings:
        return True
    # the whole path beside it: the scale of a step that matters (see edge_matters)
    return _edge_matters(np.vstack([path.held, step.held]), path.w, path.held.shape[0])


def _check_folds(source) -> None:
    """Refuse a cross-validation in which some fold trains on no row: every row in one fold,
    as content folds put rows of the same scores (and the same score for their label)."""
    empty = [k for k in source.fold_keys() if not source.total(k) > 0]
    if empty:
        raise ValueError(
            f"cross-validation has no training rows for {len(empty)} of its "
            f"{len(source.fold_keys())} folds: rows with the same scores share a fold, and "
            "the rows have too few distinct scores (every row the same, or the same score "
            "for its label, as from a network that gives hard labels) to be split. Check "
            "the scores, or fix lam, bias_penalty and top_label_penalty to fit without "
            "cross-validation."
        )


def _edge_matters(held: np.ndarray, w: np.ndarray, edge: int) -> bool:
    """Whether the pick ``edge`` (the last candidate of ``held``) beats its neighbour by
    enough to warn (:func:`fusion._cv.edge_matters`)."""
    mean = held @ w / w.sum()
    return edge_matters(mean, paired_se(held, w, edge), edge, edge - 1)


def _warn_edge(what: str, grid: str) -> None:
    warnings.warn(
        f"cross-validation picked {what}, the smallest value of {grid}: a smaller penalty "
        "might fit better. Pass a grid that extends further down to check.",
        UserWarning,
        stacklevel=caller_level(),
    )
