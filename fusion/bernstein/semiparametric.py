"""The default model of :class:`~fusion.bernstein.BernsteinFusion`: logistic regression on the
scores' own scale plus a monotone Bernstein correction on their ranks, its penalty and
structure chosen by cross-validation (penalized Newton/QP steps, :mod:`.logistic`)."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np

from .._cv import edge_matters, fold_ids, one_se_pick
from .._progress import Progress
from .._solver import SolverWarning
from .._warn import caller_level
from . import logistic
from .basis import (
    component_shapes,
    evaluate,
    evaluate_structured,
    is_tensor,
    make_components,
    n_coef,
)
from .cells import RowData, aggregate_cells, cell_edges, hash_folds, resolve_bins
from .checks import as_degrees, fold_seed
from .scale import (
    InverseECDF,
    choose_bases,
    knot_range,
    own_scale,
    scale_constants,
    scores_scale,
)


#: Penalty weights tried by ``lam="cv"`` (default model), largest first: ``inf`` (``g``
#: constant: logistic regression on the scores' own scale), then 10 down to 1e-6 in
#: half-decade steps. (Whole decades gave the same held-out scores on realistic scorers in
#: 0.75 times the fit time, but a 10-30 % larger L2 error to a known truth at n = 4,000:
#: the one-standard-error rule then jumps past the best penalty.) With ``n`` rows beyond
#: 20,000 the grid continues down to ``0.02 / n`` (:func:`default_lam_grid`): the penalty
#: competes with a log-loss whose sampling noise shrinks as ``1 / n``. The path stops early
#: once the held-out loss has clearly risen, so the small values cost little where they
#: cannot win; 1e-6 rather than 1e-5 as the floor because realistic pairs at n = 1,000
#: picked 1e-5 (an edge warning) with the same fit as on a grid extended to 1e-8.
def default_lam_grid(n: int) -> tuple[float, ...]:
    """:data:`DEFAULT_LAM_GRID`, continued down to ``0.02 / n`` (the last half decade not
    below it) for ``n`` above 20,000."""
    low = int(np.ceil(2 * np.log10(min(1e-6, 0.02 / max(n, 1))) - 1e-9))  # in half decades
    return (float("inf"),) + tuple(float(10.0 ** (k / 2)) for k in range(2, low - 1, -1))


DEFAULT_LAM_GRID = default_lam_grid(0)


def auto_degree(M: int, n: int, structure: str) -> int:
    """Degree per axis of ``degree="auto"`` for the default model.

    The penalty, not the degree, sets the smoothness (``lam`` by cross-validation; the
    penalty is normalized so that one ``lam`` means about the same smoothness at every
    degree), so the degree only has to be large enough to resolve what the data can show.
    It grows with the number of rows ``n`` where that helped and the cost allows: a tensor
    over ``M`` axes has ``(K + 1)^M`` coefficients.

    * tensor, M <= 2: ``8 (n / 2500)^(1/4)`` rounded, between 8 and 12 (8 up to 3,900 rows,
      12 from about 12,700);
    * tensor, M = 3: 4 below 10,000 rows, 5 up to 100,000, then 6 (at n = 10,000: degree 6
      lowered the L2 error to a known truth by about 4 % and the held-out log-loss of
      realistic scorers by up to 3e-4, at 5 times the fit time of degree 4); M >= 4: 3;
    * additive: as the tensor at M <= 2 (8 to 12; ``M (K + 1)`` coefficients);
    * pairwise: 4.
    """
    if structure == "tensor" and M >= 3:
        return int(np.clip(4 + np.floor(np.log10(max(n, 1) / 1_000)), 4, 6)) if M == 3 else 3
    if structure == "pairwise":
        return 4
    return int(np.clip(np.round(8 * (n / 2_500) ** 0.25), 8, 12))


#: Predictions use ``expit(clip(eta, -ETA_CAP, ETA_CAP))``.
ETA_CAP = 35.0


class SemiparametricModel:
    """Fitting the default model (``base="auto"``); methods of :class:`BernsteinFusion`."""

    def _own_scale_setup(self) -> None:
        """``base_``, ``base_shift_``, ``base_scale_`` from the fitted ECDF."""
        self.base_ = choose_bases(self.base, self.ecdf_.knots_)
        self.base_shift_, self.base_scale_ = scale_constants(self._inverse(), self.base_)

    def _inverse(self) -> InverseECDF:
        # A cache derived from ecdf_ (never saved): rebuilt after a refit or a load.
        cache = self.__dict__.get("_inverse_cache")
        if cache is None or cache[0] is not self.ecdf_.knots_:
            cache = (self.ecdf_.knots_, InverseECDF(self.ecdf_.knots_, self.ecdf_.values_))
            self._inverse_cache = cache
        return cache[1]

    def _features(self, U: np.ndarray, S: np.ndarray | None = None) -> np.ndarray:
        """Standardized ``z`` at normalized points ``U``; from the raw scores ``S`` of the same
        rows when given (the same values up to rounding, without inverting the ECDF)."""
        if S is None:
            return own_scale(U, self._inverse(), self.base_, self.base_shift_, self.base_scale_)
        lo, hi = knot_range(self.ecdf_.knots_)
        Z = scores_scale(
            np.asarray(S, dtype=float), lo, hi, self.base_, self.base_shift_, self.base_scale_
        )
        unknown = np.isnan(Z)
        if unknown.any():  # a missing score's scale is unknown: integrated over its u
            Z[unknown] = self._features(U)[unknown]
        return Z

    def _feature_range(self, M: int) -> tuple[np.ndarray, np.ndarray]:
        """``z`` at the training minimum and maximum of every score (winsorization bounds)."""
        return self._features(np.zeros((1, M)))[0], self._features(np.ones((1, M)))[0]

    def _lam_candidates(self, n: int) -> list[float]:
        if self.lam != "cv":
            return [float(self.lam)]
        grid = default_lam_grid(n) if self.lam_grid is None else self.lam_grid
        try:
            lams = sorted({float(v) for v in np.asarray(grid, dtype=float).ravel()}, reverse=True)
        except (TypeError, ValueError):
            raise ValueError(f"lam_grid must hold numbers, got {grid!r}.") from None
        if not lams:
            raise ValueError("lam_grid is empty.")
        if any(not v >= 0 for v in lams):
            raise ValueError(f"lam_grid must hold non-negative numbers, got {grid!r}.")
        return lams

    def _structures_logistic(self, M: int) -> list[str]:
        """Structures the default model tries: the one given, or for ``"auto"`` the tensor
        and the additive model at M = 2 and 3 (cross-validation chooses), additive above."""
        if self.structure != "auto":
            return [self.structure]
        if M == 1:
            return ["tensor"]
        return ["tensor", "additive"] if M <= 3 else ["additive"]

    def _candidates_logistic(self, M: int, n: int) -> list[tuple[str, tuple, tuple]]:
        """``(structure, components, degrees)`` of every candidate of the default model."""
        out = []
        for structure in self._structures_logistic(M):
            components = make_components(structure, M)
            if self.degree == "auto":
                K = auto_degree(M, n, structure)
                while K > 1 and n_coef((K,) * M, components) > self.max_coefficients:
                    K -= 1
                degrees = [(K,) * M]
            elif self.degree == "cv":
                degrees = self._candidates(M, None, components)
            else:
                degrees = [as_degrees(self.degree, M, "degree")]
                self._check_size(degrees[0], None, components)
            out += [(structure, components, d) for d in degrees]
        return out

    def _fit_logistic(self, U, y, w, S=None) -> None:
        n, M = U.shape
        self._own_scale_setup()
        candidates = self._candidates_logistic(M, n)
        lams = self._lam_candidates(n)
        Z = self._features(U, S)
        bins = resolve_bins(self.bins, n, M, dask=False)
        search = len(candidates) > 1 or len(lams) > 1
        if bins is None:
            data = RowData(U, Z, y, w, self._cv_splits(U, y) if search else None)
        else:
            fold_of, n_folds = self._cell_folds(U, y) if search else (None, 0)
            edges = cell_edges(*self._feature_range(M), bins)
            data = aggregate_cells(U, Z, y, w, edges, fold_of, n_folds)
        degrees, components = self._fit_logistic_from(data, candidates, lams)
        self.bootstrap_coef_ = None
        if self.n_bootstrap:
            edges = None if bins is None else edges
            self._bootstrap_logistic(U, Z, y, w, edges, data, degrees, components)

    def _cell_folds(self, U, y) -> tuple[np.ndarray, int]:
        """Fold of every row for a fit on cells: a seeded hash of the row's content for an
        int ``cv`` (the same folds as a dask fit), else the given splits, which must
        partition the rows."""
        if isinstance(self.cv, Integral) and not isinstance(self.cv, bool):
            return hash_folds(U, y, int(self.cv), fold_seed(self)), int(self.cv)
        splits = self._cv_splits(U, y)
        fold_of = fold_ids(splits, U.shape[0])
        if fold_of is None:
            raise ValueError(
                "a fit on cells (bins) needs cross-validation test sets that partition the "
                "rows, each training set the rest (K-fold); pass such a cv, an int, or "
                "bins=None to fit on the rows."
            )
        return fold_of, len(splits)

    def _fit_logistic_from(self, data, candidates, lams) -> tuple[tuple, tuple]:
        """The default model's fit from rows or cells (shared with the dask path).

        ``candidates``: ``(structure, components, degrees)`` triples; with more than one
        candidate or ``lam`` each runs its cross-validated path on the same folds and one
        pick is made over all of them (:meth:`_pick_logistic`).

        Returns the ``(degrees, components)`` of the candidate fitted. With ``lam = inf``
        ``g`` is a constant, and the fitted state says so: ``degree_`` is ``(0, ..., 0)``
        (a polynomial of degree 0), ``components_`` the tensor, ``coef_`` its one
        coefficient; the candidate's degrees still shape the bootstrap's richer model.
        """
        M = data.n_features
        if all(np.isinf(lam) for lam in lams):
            candidates = candidates[:1]  # g is a constant: every candidate is the same model
        settings = self._osqp_settings()
        ridge = self._ridge(data)
        paths, layouts = {}, {}
        groups = None
        search = len(candidates) > 1 or len(lams) > 1
        steps = len(candidates) * len(lams) if search else 0
        progress = Progress(steps + 1, desc=type(self).__name__, enabled=self.verbose)
        for structure, components, degrees in candidates:
            key = (structure, degrees)
            layout = logistic.Layout(M, tuple(component_shapes(degrees, components)))
            layouts[key] = (layout, components)
            if not search:
                break
            x0 = logistic.initial_x(layout, data.base_rate())
            folds = data.fold_designs(degrees, components)
            if groups is None:
                groups = data.heldout_groups()
            paths[key] = logistic.cv_path(
                folds,
                layout,
                lams,
                x0,
                settings,
                groups=groups,
                ridge=ridge,
                progress=progress,
                label=f"{structure} {degrees}",
            )
        self.n_cells_ = data.n_cells
        if not search:
            structure, components, degrees = candidates[0]
            key, lam = (structure, degrees), lams[0]
            layout = layouts[key][0]
            x_start = logistic.initial_x(layout, data.base_rate())
            self.__dict__.pop("cv_scores_", None)
            self.__dict__.pop("cv_se_", None)
        else:
            key, lam, x_start = self._pick_logistic(paths, layouts, lams, candidates)
            layout, components = layouts[key]
            degrees = key[1]
        design = data.design(degrees, components)
        solver = logistic.make_solver(layout, **settings)
        res = logistic.newton(design, layout, lam, x_start, solver, ridge=ridge)
        progress.step(f"final fit, lam={lam:g}")
        progress.close()
        if res.status == "newton: inexact steps":
            warnings.warn(
                f"the final Newton fit ended with status '{res.status}' (OSQP reached max_iter="
                f"{self.max_iter} on some step; the steps were projected onto the constraints "
                "and the fit is feasible and monotone). Raise max_iter to silence this.",
                SolverWarning,
                stacklevel=caller_level(),
            )
        c, parts = layout.split(res.x)
        self.base_coef_ = c.copy()
        coef = np.concatenate([p.reshape(-1) for p in parts])
        self.coef_ = coef.reshape(layout.shapes[0]) if len(parts) == 1 else coef
        self.degree_ = tuple(int(k) for k in degrees)
        self.components_ = tuple(tuple(int(a) for a in comp) for comp in components)
        if np.isinf(lam):
            # g is flat (every coefficient of the first component equal, the others 0): no
            # Bernstein correction, reported as the constant it is, not at the degree tried
            self.coef_ = np.full((1,) * M, float(parts[0].flat[0]))
            self.degree_ = (0,) * M
            self.components_ = (tuple(range(M)),)
        self.lam_ = float(lam)
        self.solver_status_ = res.status
        self.n_iter_ = int(res.n_iter)
        return tuple(int(k) for k in degrees), components

    def _ridge(self, data) -> float:
        # in memory the rows carry weights of mean 1; a dask fit's cells canonical weights
        return logistic.base_ridge(data.n_eff() * getattr(self, "_weight_unit", 1.0))

    def _pick_logistic(self, paths, layouts, lams, candidates):
        keys, neg, pos, sols, sizes = [], [], [], [], []
        path = None
        for key, path in paths.items():
            size = layouts[key][0].n_coef
            for k, lam in enumerate(path.lams):
                keys.append((*key, float(lam)))
                neg.append(path.neg[k])
                pos.append(path.pos[k])
                sols.append(path.solutions[k])
                sizes.append(size)
        # every candidate was scored on the same held-out rows (cells): one joint path
        joint = logistic.PathResult(
            np.array([k[2] for k in keys]),
            np.array(neg),
            np.array(pos),
            path.wneg,
            path.wpos,
            path.sumw2,
            groups=path.groups,
        )
        mean = joint.mean
        best = int(np.argmin(mean))
        se = joint.paired_se(best)
        self.cv_scores_ = {k: float(m) for k, m in zip(keys, mean, strict=True)}
        self.cv_se_ = {k: float(v) for k, v in zip(keys, se, strict=True)}
        # one-standard-error rule: the largest lam, then the fewest coefficients
        pick = one_se_pick(
            mean, se, preference=lambda i: (-keys[i][2], sizes[i], i), factor=self._se_factor
        )
        structure, degrees, lam = keys[pick]
        x_start = np.mean(sols[pick], axis=0)
        degree_cands = [d for s, _, d in candidates if s == structure]
        index = {k: i for i, k in enumerate(keys)}

        def matters(neighbour, grid) -> bool:
            # the pick against the next value inwards (a key), on the scale of its paired
            # standard errors against the candidates (keys) of the same grid
            if neighbour not in index:
                return True
            rows = [pick, index[neighbour]] + [index[k] for k in grid if k in index]
            return edge_matters(mean[rows], joint.paired_se(pick)[rows], 0, 1)

        self._warn_edges(degrees, lam, lams, degree_cands, structure, matters)
        return (structure, degrees), lam, x_start

    def _warn_edges(self, degrees, lam, lams, candidates, structure, matters) -> None:
        """Warn when cross-validation picked the edge of ``lam_grid`` or of the degree
        candidates and the edge beats its neighbour by enough to matter
        (:func:`fusion._cv.edge_matters`; ``matters(key, grid)`` compares the pick with the
        candidate ``key`` among the candidates ``grid``)."""
        finite = [v for v in lams if np.isfinite(v)]
        lam_path = [(structure, degrees, v) for v in lams]
        if len(lams) > 1 and lam == lams[-1] and matters(lam_path[-2], lam_path):
            warnings.warn(
                f"cross-validation picked lam={lam:g}, the smallest value of lam_grid: a "
                "smaller penalty might fit better. Pass a lam_grid that extends further down "
                "(or a larger degree) to check.",
                UserWarning,
                stacklevel=caller_level(),
            )
        elif (
            len(lams) > 1
            and finite
            and lam == lams[0]
            and np.isfinite(lam)
            and matters(lam_path[1], lam_path)
        ):
            warnings.warn(
                f"cross-validation picked lam={lam:g}, the largest value of lam_grid: a "
                "larger penalty might fit better. Add float('inf') (logistic regression on "
                "the scores) or larger values to lam_grid.",
                UserWarning,
                stacklevel=caller_level(),
            )
        if (
            len(candidates) > 1
            and degrees == candidates[-1]
            and matters((structure, candidates[-2], lam), [(structure, d, lam) for d in candidates])
        ):
            warnings.warn(
                f"cross-validation picked degree {degrees}, the last candidate of "
                "degree_grid: a larger degree might fit better. Extend degree_grid to check.",
                UserWarning,
                stacklevel=caller_level(),
            )

    def _polynomial(self, coef: np.ndarray, U: np.ndarray) -> np.ndarray:
        """The Bernstein polynomial with coefficients ``coef`` (laid out as ``coef_``) at
        ``U``, on the fitted degrees and components."""
        if is_tensor(self.components_, U.shape[1]):
            return evaluate(coef, U)
        return evaluate_structured(coef, U, self.degree_, self.components_)

    def _logistic_eta(
        self,
        U: np.ndarray,
        S: np.ndarray | None = None,
        base_coef: np.ndarray | None = None,
        coef: np.ndarray | None = None,
    ) -> np.ndarray:
        """The default model's linear predictor, with the fitted coefficients unless others
        are given (a bootstrap refit's)."""
        base_coef = self.base_coef_ if base_coef is None else base_coef
        eta = self._features(U, S) @ base_coef
        eta += self._polynomial(self.coef_ if coef is None else coef, U)
        # expit rounds to exactly 1 beyond 36.7: capped, every probability stays inside
        # (0, 1) (within 6.3e-16 of either end), still continuous and non-decreasing.
        return np.clip(eta, -ETA_CAP, ETA_CAP, out=eta)
