"""The fitter of BernsteinFusion's rank-only model (``base=None``, Wang & Liu 2020): every
candidate's held-out Brier score from its least-squares statistics, the plan's pick, the
final monotone QP (:mod:`.qp`), a frozen :class:`~fusion.bernstein.results.RankOnlyResult`.

Each candidate costs one pass over the data: per-fold statistics are accumulated once, every
training fold's statistics are "total minus fold", and the held-out squared error follows
from the fold's statistics without evaluating the polynomial.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._lstsq import heldout_sse
from ..plan import RankOnlyPlan
from ..results import RankOnlyResult
from ..structure import Structure
from .qp import MonotoneQP, StructuredQP
from .source import GramStats

__all__ = ["fit_rank_only", "make_qp", "heldout_brier"]


def make_qp(structure: Structure, settings: dict):
    """The least-squares QP of ``structure``: :class:`~.qp.MonotoneQP` for the tensor,
    :class:`~.qp.StructuredQP` otherwise."""
    M = 1 + max(a for axes in structure.axes for a in axes)
    if structure.is_tensor(M):
        return MonotoneQP(structure.shapes[0], **settings)
    return StructuredQP(structure, **settings)


def heldout_brier(qp, pairs) -> tuple[float, tuple[np.ndarray, np.ndarray]]:
    """Weighted held-out Brier score over ``(train, test)`` statistics pairs, and every
    fold's own with its weight (the held-out units of the plan's edge check)."""
    sse, sw = [], []
    for train, test in pairs:
        if test.sw > 0 and train.sw > 0:  # a fold can be empty in a tiny dask data set
            beta, _ = qp.solve(train)
            sse.append(heldout_sse(test, beta))
            sw.append(test.sw)
    sse, sw = np.array(sse), np.array(sw)
    return float(sse.sum() / sw.sum()), (sse / sw, sw)


def fit_rank_only(plan: RankOnlyPlan, stats: Callable[[Structure], GramStats]) -> RankOnlyResult:
    """The rank-only model from the least-squares statistics ``stats(structure)`` of every
    candidate (of a source in memory or on dask): the lowest held-out Brier score where
    cross-validation chooses, then the final QP on all rows."""
    if plan.cross_validated:
        results = {}
        progress = plan.progress()
        cv = plan.settings_for(cv=True)
        for key, cand in zip(plan.keys, plan.candidates, strict=True):
            total, pairs = stats(cand.structure)
            score, per_fold = heldout_brier(make_qp(cand.structure, cv), pairs)
            results[key] = (score, total, per_fold)
            progress.step(f"{cand.name} {cand.degrees}" if key != cand.degrees else f"degree {key}")
        cand, total, cv_scores = plan.pick(results)
        progress.step("final fit")
        progress.close()
    else:
        cand, cv_scores = plan.candidates[0], None
        total, _ = stats(cand.structure)
    qp = make_qp(cand.structure, plan.settings_for(cv=False))
    coef, status = qp.solve(total)
    return RankOnlyResult(coef, cand.structure, cand.degrees, cv_scores, status, qp.last_iterations)
