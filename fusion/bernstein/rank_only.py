"""The rank-only model of :class:`~fusion.bernstein.BernsteinFusion` (``base=None``, Wang &
Liu 2020): candidates (structure and degree), their cross-validation by the held-out Brier
score, the final least-squares QP."""

from __future__ import annotations

import warnings

import numpy as np

from .._cv import edge_matters, fold_ids, paired_se
from .._lstsq import LeastSquaresStats, heldout_sse
from .._progress import Progress
from .._warn import caller_level
from .basis import (
    component_shapes,
    is_tensor,
    make_components,
    n_coef,
)
from .checks import as_degrees
from .qp import MonotoneQP, StructuredQP, accumulate_gram

#: OSQP tolerance of the rank-only model's cross-validation solves (never tighter than the
#: user's).
CV_EPS = 1e-5

#: Coefficients of the largest tensor and pairwise candidates that the rank-only model's
#: ``structure="auto"`` tries at M >= 3 (additive candidates: ``max_coefficients`` only).
#: Their QPs cost about the square of the coefficient count per OSQP iteration, and take
#: more iterations as they grow: on four or six Covertype scorers (n = 10,000) the whole
#: search then costs 2-4 s, within 30 times ``LogisticRegressionCV()``. On known truths at
#: M = 4 and 6 a budget of 384 or 512 changed the held-out L2 error by less than 0.001 at up
#: to 1.6 times the time, and the full grids (tensor and pairwise up to 1,400 coefficients)
#: lowered it only where a logistic truth wanted the degree-4 tensor (M = 4) or the
#: degree-2 tensor (M = 6), at 4-8 times the time (benchmarks/RESULTS.md, "Rank-only model
#: at M >= 4").
RANK_ONLY_AUTO_COEFFICIENTS = 256

#: Degrees tried by ``degree="cv"`` when no grid is given (same degree on every axis), before
#: dropping candidates whose coefficient count exceeds ``max_coefficients`` or (rank-only
#: model) the number of training rows in a fold.
DEFAULT_DEGREE_GRID = tuple(range(1, 11))


class RankOnlyModel:
    """Fitting the rank-only model ``f(u)`` (``base=None``); methods of :class:`BernsteinFusion`."""

    def _rank_only_structure(self, M: int) -> tuple[str, ...]:
        """Structures the rank-only model tries: the one given; for ``"auto"`` the tensor at
        M <= 2, and at M >= 3 the additive, pairwise and tensor models, chosen jointly with
        the degree by cross-validation (:meth:`_rank_only_candidates`)."""
        if self.structure != "auto":
            return (self.structure,)
        return ("tensor",) if M <= 2 else ("additive", "pairwise", "tensor")

    def _rank_only_candidates(self, M: int, n_train: int) -> tuple[list[tuple], set[int]]:
        """Candidates of the rank-only model's cross-validation.

        Parameters
        ----------
        M : int
            Number of scores.
        n_train : int
            Rows of the smallest training fold: no candidate has more coefficients.

        Returns
        -------
        candidates : list of (structure, components, degrees)
            In the order of :meth:`_rank_only_structure`, each structure's degrees in grid
            order. ``degree="cv"`` or ``"auto"``: the degrees of ``degree_grid`` within
            ``max_coefficients``; with ``structure="auto"`` at M >= 3 the tensor and pairwise
            candidates also within :data:`RANK_ONLY_AUTO_COEFFICIENTS`. A fixed ``degree``:
            that degree in every structure it fits.
        edges : set of int
            Candidates whose pick raises the grid-edge warning (:meth:`_pick`): the last of
            a structure with several candidates whose grid the auto budget did not cut.
        """
        structures = self._rank_only_structure(M)
        auto = len(structures) > 1
        fixed = not isinstance(self.degree, str)  # else "cv" or "auto"
        cands, edges = [], set()
        for structure in structures:
            components = make_components(structure, M)
            if fixed:
                degrees = [as_degrees(self.degree, M, "degree")]
                if not auto:
                    self._check_size(degrees[0], n_train, components)
                elif n_coef(degrees[0], components) > min(self.max_coefficients, n_train):
                    degrees = []
                cut = True
            else:
                budget = None
                if auto and structure != "additive":
                    budget = RANK_ONLY_AUTO_COEFFICIENTS
                degrees = self._candidates(M, n_train, components, budget, required=not auto)
                cut = budget is not None and len(degrees) < len(
                    self._candidates(M, n_train, components, required=False)
                )
            if len(degrees) > 1 and not cut:
                edges.add(len(cands) + len(degrees) - 1)
            cands += [(structure, components, d) for d in degrees]
        if not cands:  # structure="auto": nothing fits; the additive model's error says why
            additive = make_components("additive", M)
            if fixed:
                self._check_size(as_degrees(self.degree, M, "degree"), n_train, additive)
            self._candidates(M, n_train, additive)
        return cands, edges

    def _fit_rank_only(self, U, y, sample_weight):
        M = U.shape[1]
        structures = self._rank_only_structure(M)
        for name in ("base_", "base_coef_", "base_shift_", "base_scale_", "lam_", "n_cells_"):
            setattr(self, name, None)
        if isinstance(self.degree, str) or len(structures) > 1:  # a cross-validated choice
            components, degrees, stats = self._select_degree(U, y, sample_weight)
        else:
            components = make_components(structures[0], M)
            degrees = as_degrees(self.degree, M, "degree")
            self._check_size(degrees, U.shape[0], components)
            stats = accumulate_gram(U, y, sample_weight, degrees, components=components)
            self.__dict__.pop("cv_scores_", None)
        self._solve_final(degrees, stats, components)
        self.bootstrap_coef_ = None
        if self.n_bootstrap:
            self._bootstrap_rank_only(U, y, sample_weight)

    def _make_qp(self, degrees, components, cv: bool = False):
        shapes = component_shapes(degrees, components)
        settings = self._osqp_settings()
        if cv:
            # Candidates are ranked by held-out Brier scores that differ in the third or fourth
            # digit; 1e-5 tolerances resolve them at a third of the iterations. The final fit
            # uses the user's tolerances.
            settings["eps_abs"] = max(settings["eps_abs"], CV_EPS)
            settings["eps_rel"] = max(settings["eps_rel"], CV_EPS)
        if is_tensor(components, len(degrees)):
            return MonotoneQP(shapes[0], **settings)
        return StructuredQP(shapes, **settings)

    def _solve_final(self, degrees, stats: LeastSquaresStats, components) -> None:
        self.degree_ = tuple(int(k) for k in degrees)
        self.components_ = tuple(tuple(int(a) for a in c) for c in components)
        qp = self._make_qp(degrees, components)
        self.coef_, self.solver_status_ = qp.solve(stats)
        self.n_iter_ = qp.last_iterations

    def _check_size(self, degrees: tuple[int, ...], n_rows: int | None, components=None) -> None:
        P = n_coef(degrees, components)
        if P > self.max_coefficients:
            tensor = components is None or is_tensor(components, len(degrees))
            hint = (
                ""
                if self.structure not in ("tensor", "auto") or not tensor
                else (", or use structure='additive'/'pairwise'")
            )
            raise ValueError(
                f"degree {degrees} gives {P} coefficients, above max_coefficients="
                f"{self.max_coefficients} (the normal equations need {8 * P * P / 1e6:.0f} MB); "
                f"lower the degree or raise max_coefficients{hint}."
            )
        if n_rows is not None and P > n_rows:
            raise ValueError(
                f"degree {degrees} gives {P} coefficients but there are only {n_rows} training "
                "rows; lower the degree (or use degree='cv')."
            )

    def _candidates(
        self,
        M: int,
        n_train: int | None,
        components=None,
        budget: int | None = None,
        required: bool = True,
    ) -> list[tuple[int, ...]]:
        """Degree tuples of ``degree_grid`` (default :data:`DEFAULT_DEGREE_GRID`) in grid order,
        without repeats, whose model has at most ``max_coefficients`` coefficients, no more
        than ``n_train`` (when given) nor ``budget`` (when given). An empty result raises
        ``ValueError`` when ``required``."""
        grid = DEFAULT_DEGREE_GRID if self.degree_grid is None else self.degree_grid
        if len(grid) == 0:
            raise ValueError("degree_grid is empty.")
        limit = self.max_coefficients if n_train is None else min(self.max_coefficients, n_train)
        if budget is not None:
            limit = min(limit, budget)
        cands = []
        for g in grid:
            d = as_degrees(g, M, "degree_grid entry")
            if d not in cands and n_coef(d, components) <= limit:
                cands.append(d)
        if not cands and required:
            rows = "" if n_train is None else f", rows per training fold={n_train}"
            raise ValueError(
                f"no degree in the grid fits: every candidate has more coefficients than "
                f"max_coefficients={self.max_coefficients}{rows}."
            )
        return cands

    @staticmethod
    def _rank_only_keys(cands: list[tuple]) -> list[tuple]:
        """Keys of the rank-only model's ``cv_scores_``: the degree tuple of every candidate,
        or ``(structure, degree tuple)`` when the candidates span several structures."""
        if len({structure for structure, _, _ in cands}) > 1:
            return [(structure, degrees) for structure, _, degrees in cands]
        return [degrees for _, _, degrees in cands]

    def _select_degree(self, U, y, w) -> tuple[tuple, tuple[int, ...], LeastSquaresStats]:
        """Cross-validate every candidate of :meth:`_rank_only_candidates` on the same folds.

        Returns the chosen ``(components, degrees)`` and the statistics of all rows.
        """
        n = U.shape[0]
        splits = self._cv_splits(U, y)
        fold_of = fold_ids(splits, n)
        n_train = min(train.shape[0] for train, _ in splits)
        cands, edges = self._rank_only_candidates(U.shape[1], n_train)
        keys = self._rank_only_keys(cands)
        results = {}
        progress = Progress(len(cands) + 1, desc=type(self).__name__, enabled=self.verbose)
        if fold_of is not None:  # K-fold: every training fold's statistics are total - fold
            order = np.argsort(fold_of, kind="stable")
            bounds = np.searchsorted(fold_of[order], np.arange(len(splits) + 1))
            Uo, yo, wo = U[order], y[order], w[order]
        for key, (structure, components, degrees) in zip(keys, cands, strict=True):
            if fold_of is not None:
                folds = [
                    accumulate_gram(Uo[a:b], yo[a:b], wo[a:b], degrees, components=components)
                    for a, b in zip(bounds[:-1], bounds[1:], strict=True)
                ]
                results[key] = self._cv_score(degrees, folds, components)
            else:

                def gram(rows, degrees=degrees, components=components):
                    return accumulate_gram(
                        U[rows], y[rows], w[rows], degrees, components=components
                    )

                pairs = [(gram(train), gram(test)) for train, test in splits]
                total = gram(np.arange(n))
                score, per_fold = self._heldout_brier(degrees, pairs, components)
                results[key] = (score, total, per_fold)
            label = f"{structure} {degrees}" if key != degrees else f"degree {degrees}"
            progress.step(label)
        best = self._pick(results, cands, edges)
        progress.step("final fit")
        progress.close()
        return best

    def _cv_score(
        self, degrees, folds: list[LeastSquaresStats], components
    ) -> tuple[float, LeastSquaresStats, tuple[np.ndarray, np.ndarray]]:
        """Held-out Brier score of one candidate from its per-fold statistics, the totals,
        and the per-fold scores (:meth:`_heldout_brier`)."""
        total = folds[0]
        for f in folds[1:]:
            total = total + f
        pairs = [(total - f, f) for f in folds]
        score, per_fold = self._heldout_brier(degrees, pairs, components)
        return score, total, per_fold

    def _heldout_brier(
        self, degrees, pairs, components
    ) -> tuple[float, tuple[np.ndarray, np.ndarray]]:
        """Weighted held-out Brier score over ``(train, test)`` statistics pairs, and every
        fold's own with its weight (the held-out units of :meth:`_pick`'s edge check)."""
        qp = self._make_qp(degrees, components, cv=True)
        sse, sw = [], []
        for train, test in pairs:
            if test.sw > 0 and train.sw > 0:  # a fold can be empty in a tiny dask data set
                beta, _ = qp.solve(train)
                sse.append(heldout_sse(test, beta))
                sw.append(test.sw)
        sse, sw = np.array(sse), np.array(sw)
        return float(sse.sum() / sw.sum()), (sse / sw, sw)

    def _pick(
        self, results: dict, cands: list[tuple], edges: set[int]
    ) -> tuple[tuple, tuple[int, ...], LeastSquaresStats]:
        """The candidate with the lowest held-out Brier score (ties: fewer coefficients, then
        the earlier candidate); sets ``cv_scores_``.

        ``results`` maps the keys of :meth:`_rank_only_keys` to ``(score, statistics of all
        rows, (per-fold scores, fold weights))``; ``cands`` and ``edges`` come from
        :meth:`_rank_only_candidates`. Picking a candidate in ``edges`` (the largest of its
        structure's grid) warns when it beats the structure's other degrees by enough to
        matter (:func:`fusion._cv.edge_matters`, the folds as the paired held-out units:
        only per-fold statistics exist, so the standard error is a coarse one).

        Returns ``(components, degrees, statistics)`` of the pick.
        """
        keys = self._rank_only_keys(cands)
        scores = {k: results[k][0] for k in keys}
        sizes = [n_coef(d, c) for _, c, d in cands]
        i = min(range(len(keys)), key=lambda j: (scores[keys[j]], sizes[j], j))
        self.cv_scores_ = scores
        structure, components, degrees = cands[i]
        if i in edges and self._edge_matters(results, keys, cands, i):
            which = f" of the {structure} structure" if keys[i] != degrees else ""
            warnings.warn(
                f"cross-validation picked degree {degrees}, the largest candidate{which} of "
                "degree_grid that was tried: a larger degree might fit better. Extend "
                "degree_grid (and max_coefficients if needed) to check.",
                UserWarning,
                stacklevel=caller_level(),
            )
        return components, degrees, results[keys[i]][1]

    @staticmethod
    def _edge_matters(results: dict, keys: list, cands: list[tuple], edge: int) -> bool:
        """:func:`fusion._cv.edge_matters` for candidate ``edge``, the last of its structure,
        against the structure's best other degree (the held-out Brier score is jagged
        along the degrees and the lowest wins, so the edge's gain is over the best of the
        rest, not over whichever degree precedes it), on the folds' scores."""
        grid = [j for j, c in enumerate(cands) if c[0] == cands[edge][0]]
        held = [results[keys[j]][2] for j in grid]
        w = held[0][1]
        if any(h[1].shape != w.shape or not np.array_equal(h[1], w) for h in held):
            return True  # not the same held-out units
        losses = np.stack([h[0] for h in held])
        mean = losses @ w / w.sum()
        ref = grid.index(edge)
        other = min((k for k in range(len(grid)) if k != ref), key=lambda k: mean[k])
        return edge_matters(mean, paired_se(losses, w, ref), ref, other)
