"""The fitter of BernsteinFusion's default model (logistic regression on the scores' own scale
plus a monotone Bernstein correction on their ranks): every candidate's cross-validated
``lam`` path on the same folds, the plan's pick, the final penalized Newton fit
(:mod:`.logistic`), a frozen :class:`~fusion.bernstein.results.LogisticResult`."""

from __future__ import annotations

import warnings

import numpy as np

from ..._solver import SolverWarning
from ..._warn import caller_level
from .. import newton
from ..plan import LogisticPlan
from ..results import LogisticResult
from ..scale import OwnScale
from ..structure import Layout, Structure
from . import logistic
from .data import LogisticData

__all__ = ["fit_logistic", "ETA_CAP"]

#: Predictions use ``expit(clip(eta, -ETA_CAP, ETA_CAP))``.
ETA_CAP = 35.0


def fit_logistic(plan: LogisticPlan, data: LogisticData, scale: OwnScale) -> LogisticResult:
    """The default model on rows or cells (in memory or summed over dask blocks alike).

    With more than one candidate or ``lam`` each runs its cross-validated path on the same
    folds and the plan picks over all of them. With ``lam = inf`` ``g`` is a constant, and
    the result says so: degree ``(0, ..., 0)`` (a polynomial of degree 0) on the tensor,
    one coefficient; ``candidate`` keeps the candidate's structure (the bootstrap's
    resolution).
    """
    M = data.n_features
    candidates, lams, settings = plan.fitted, plan.lams, plan.settings
    ridge = newton.base_ridge(data.n_eff)
    search = plan.searches
    progress = plan.progress()
    if search:
        keys, paths, sizes, sols, cands = [], [], [], [], []
        for cand in candidates:
            layout = Layout(M, cand.structure)
            x0 = logistic.initial_x(layout, data.base_rate)
            path = logistic.cv_path(
                data.fold_designs(cand.structure),
                layout,
                lams,
                x0,
                settings,
                groups=data.groups,
                ridge=ridge,
                progress=progress,
                label=f"{cand.name} {cand.degrees}",
            )
            keys += [(cand.name, cand.degrees, float(lam)) for lam in path.lams]
            sizes += [cand.structure.n_coef] * len(path.lams)
            sols += path.solutions
            cands += [cand] * len(path.lams)
            paths.append(path)
        # every candidate was scored on the same held-out rows (cells): one joint path
        pick, cv_scores, cv_se = plan.pick(keys, logistic.joint_path(paths), sizes)
        cand, lam, x_start = cands[pick], keys[pick][2], np.mean(sols[pick], axis=0)
        layout = Layout(M, cand.structure)
    else:
        cand, lam = candidates[0], lams[0]
        layout = Layout(M, cand.structure)
        x_start = logistic.initial_x(layout, data.base_rate)
        cv_scores = cv_se = None
    solver = newton.make_solver(layout, **settings)
    res = logistic.newton(data.design(cand.structure), layout, lam, x_start, solver, ridge=ridge)
    progress.step(f"final fit, lam={lam:g}")
    progress.close()
    if res.status == "newton: inexact steps":
        warnings.warn(
            f"the final Newton fit ended with status '{res.status}' (OSQP reached max_iter="
            f"{settings['max_iter']} on some step; the steps were projected onto the "
            "constraints and the fit is feasible and monotone). Raise max_iter to silence "
            "this.",
            SolverWarning,
            stacklevel=caller_level(),
        )
    c, parts = layout.split(res.x)
    coef = np.concatenate([p.reshape(-1) for p in parts])
    coef = coef.reshape(layout.shapes[0]) if len(parts) == 1 else coef
    structure, degrees = cand.structure, cand.degrees
    if np.isinf(lam):
        # g is flat (every coefficient of the first component equal, the others 0): no
        # Bernstein correction, reported as the constant it is, not at the degree tried
        coef = np.full((1,) * M, float(parts[0].flat[0]))
        degrees = (0,) * M
        structure = Structure.of(degrees, (tuple(range(M)),))
    return LogisticResult(
        scale, c.copy(), coef, structure, degrees, cand.structure, float(lam), cv_scores,
        cv_se, data.n_cells, res.status, int(res.n_iter),
    )  # fmt: skip
