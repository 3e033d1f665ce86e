"""What a Bernstein fit tries and how it chooses: the candidates (structure and degree), the
penalty grids, the folds and the pick of the default, rank-only and class-shared models,
decided once from the estimator's parameters and the size of the prepared data.

A plan is frozen; the fitters (:mod:`fusion.bernstein.binary.semiparametric`,
:mod:`fusion.bernstein.binary.rank_only`, :mod:`fusion.bernstein.multiclass.shared`) run
it on a source of statistics, in memory or on dask alike, and hand the cross-validation's
scores back to its ``pick``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._cv import edge_matters, one_se_pick, paired_se
from .._progress import Progress
from .._validation import check_sample_weight
from .._warn import caller_level
from .checks import as_degrees
from .folds import FoldRule, by_content
from .structure import Structure

__all__ = [
    "DEFAULT_LAM_GRID",
    "DEFAULT_DEGREE_GRID",
    "RANK_ONLY_AUTO_COEFFICIENTS",
    "BIAS_GRID",
    "TOP_LABEL_GRID",
    "auto_bins",
    "auto_cell_rows",
    "resolve_bins",
    "default_lam_grid",
    "auto_degree",
    "Candidate",
    "LogisticPlan",
    "RankOnlyPlan",
    "SharedPlan",
    "logistic_plan",
    "rank_only_plan",
    "shared_plan",
    "multiclass_model",
]


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

#: Degrees tried by ``degree="cv"`` when no grid is given (same degree on every axis), before
#: dropping candidates whose coefficient count exceeds ``max_coefficients`` or (rank-only
#: model) the number of training rows in a fold.
DEFAULT_DEGREE_GRID = tuple(range(1, 11))

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

#: Ridge penalties of the class biases tried by ``bias_penalty="cv"`` after ``inf`` (no
#: biases), largest first; in units of the mean log-loss, like ``lam``.
BIAS_GRID = (1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)

#: Penalties ``tau`` of the class-shared model's top-label correction
#: (:mod:`fusion.bernstein.multiclass.toplabel`) tried by ``top_label_penalty="cv"``, from
#: no correction down to none (the constraints bound ``psi`` alone: no grid edge below).
TOP_LABEL_GRID = (np.inf, 1e-2, 1e-3, 1e-4, 1e-5, 0.0)

#: ``multiclass="auto"`` also fits the per-class model, and keeps it if cross-validation
#: prefers it, when every class has at least this many rows (canonical weight), there are
#: at most ``AUTO_PER_CLASS_CLASSES`` classes and ``n C`` is at most
#: ``AUTO_PER_CLASS_PAIRS``. The per-class model needs many rows of every class to beat the
#: shared one (Covertype with 5,000 rows, whose rarest classes have 25: shared with class
#: biases 0.4413 against per-class 0.4396, within noise; digits with 25-50 rows per class:
#: per-class worse by 0.016-0.05), and it costs one penalized fit per class with its own
#: cross-validation plus five refits each: about 30 s at 10 classes and 10,000 rows, 300 s
#: at 20 classes and 40,000 rows, against 3 and 20 s for the shared model.
AUTO_PER_CLASS_ROWS = 1_000
AUTO_PER_CLASS_PAIRS = 50_000
AUTO_PER_CLASS_CLASSES = 20

#: The class-shared model cross-validates its penalties on a sample of rows holding about
#: this many (row, class) pairs, drawn by the rows' content (``n C`` beyond it: 2,000 of
#: 10,000 rows at 1,000 classes); the final fit uses every row. Every candidate costs a
#: few passes over the sample per fold, and a held-out log-loss over a few thousand rows
#: already separates penalties as well as the one-standard-error rule can use.
CV_MAX_PAIRS = 10_000_000

#: OSQP tolerance of the rank-only model's cross-validation solves (never tighter than the
#: user's).
CV_EPS = 1e-5


def auto_bins(M: int) -> int:
    """Quantile (and ``z``) cuts per axis of ``bins="auto"``: fine in one or two dimensions,
    coarser with more axes, where the number of occupied cells grows as ``bins^M``.

    With 32 cuts per axis at M = 2 the fitted probabilities differ from the fit on the rows
    by 1e-4 to 3e-4 (root mean square; measured on 50,000 rows), far below the sampling
    error; 48 cuts halve that at 1.4 times the fit time of a million rows.
    """
    return {1: 256, 2: 32, 3: 16}.get(M, 8)


def auto_cell_rows(M: int) -> int:
    """``bins="auto"`` aggregates rows into cells from this many training rows on: where the
    occupied cells are clearly fewer than the rows."""
    return 20_000 if M <= 3 else 100_000


def resolve_bins(bins, n: int, M: int, dask: bool) -> int | None:
    """``bins`` resolved: None (rows) or the number of cuts per axis."""
    if isinstance(bins, str):  # "auto"
        return auto_bins(M) if dask or n >= auto_cell_rows(M) else None
    if bins is None and dask:
        raise ValueError(
            "bins=None (a fit on the rows) is not available for dask input: the rows are "
            "aggregated into cells on the workers. Pass bins='auto' or an int."
        )
    return None if bins is None else int(bins)


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

    :func:`logistic_plan` lowers it until the model has no more coefficients than rows
    (and ``max_coefficients``).
    """
    if structure == "tensor" and M >= 3:
        return int(np.clip(4 + np.floor(np.log10(max(n, 1) / 1_000)), 4, 6)) if M == 3 else 3
    if structure == "pairwise":
        return 4
    return int(np.clip(np.round(8 * (n / 2_500) ** 0.25), 8, 12))


class Candidate(NamedTuple):
    """One model a fit tries: its structure's name, the degree per axis and the
    :class:`~fusion.bernstein.structure.Structure`."""

    name: str
    degrees: tuple[int, ...]
    structure: Structure


def _settings(est) -> dict:
    """OSQP's settings from the estimator's parameters."""
    return {"eps_abs": est.eps_abs, "eps_rel": est.eps_rel, "max_iter": est.max_iter}


def check_size(est, degrees: tuple[int, ...], n_rows: int | None, axes=None) -> None:
    """Refuse a model beyond ``max_coefficients``, or with more coefficients than
    ``n_rows`` rows (when given)."""
    M = len(degrees)
    structure = Structure.of(degrees, (tuple(range(M)),) if axes is None else axes)
    P = structure.n_coef
    if P > est.max_coefficients:
        hint = (
            ""
            if est.structure not in ("tensor", "auto") or not structure.is_tensor(M)
            else (", or use structure='additive'/'pairwise'")
        )
        raise ValueError(
            f"degree {degrees} gives {P} coefficients, above max_coefficients="
            f"{est.max_coefficients} (the normal equations need {8 * P * P / 1e6:.0f} MB); "
            f"lower the degree or raise max_coefficients{hint}."
        )
    if n_rows is not None and P > n_rows:
        raise ValueError(
            f"degree {degrees} gives {P} coefficients but there are only {n_rows} training "
            "rows; lower the degree (or use degree='cv')."
        )


def degree_candidates(
    est, M: int, n_train: int | None, axes=None, budget: int | None = None, required=True
) -> list[tuple[int, ...]]:
    """Degree tuples of ``degree_grid`` (default :data:`DEFAULT_DEGREE_GRID`) in grid order,
    without repeats, whose model (components ``axes``, default the tensor) has at most
    ``max_coefficients`` coefficients, no more than ``n_train`` (when given) nor ``budget``
    (when given). An empty result raises ``ValueError`` when ``required``."""
    grid = DEFAULT_DEGREE_GRID if est.degree_grid is None else est.degree_grid
    if len(grid) == 0:
        raise ValueError("degree_grid is empty.")
    limit = est.max_coefficients if n_train is None else min(est.max_coefficients, n_train)
    if budget is not None:
        limit = min(limit, budget)
    axes = (tuple(range(M)),) if axes is None else axes
    cands = []
    for g in grid:
        d = as_degrees(g, M, "degree_grid entry")
        if d not in cands and Structure.of(d, axes).n_coef <= limit:
            cands.append(d)
    if not cands and required:
        rows = "" if n_train is None else f", rows per training fold={n_train}"
        raise ValueError(
            f"no degree in the grid fits: every candidate has more coefficients than "
            f"max_coefficients={est.max_coefficients}{rows}."
        )
    return cands


def lam_candidates(est, n: int) -> list[float]:
    """The default model's ``lam`` candidates: the given one, ``lam_grid`` or
    :func:`default_lam_grid`, largest first."""
    if est.lam != "cv":
        return [float(est.lam)]
    grid = default_lam_grid(n) if est.lam_grid is None else est.lam_grid
    try:
        lams = sorted({float(v) for v in np.asarray(grid, dtype=float).ravel()}, reverse=True)
    except (TypeError, ValueError):
        raise ValueError(f"lam_grid must hold numbers, got {grid!r}.") from None
    if not lams:
        raise ValueError("lam_grid is empty.")
    if any(not v >= 0 for v in lams):
        raise ValueError(f"lam_grid must hold non-negative numbers, got {grid!r}.")
    return lams


# -- the default model -----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LogisticPlan:
    """The default model's plan: the candidates, the ``lam`` grid (largest first), the cells
    (``bins`` cuts per axis; None: the rows), the fold rule and the solver settings. With
    every ``lam`` infinite the candidates are one model (``g`` is a constant), and the first
    alone is fitted; the folds are still dealt when there were several (``deals_folds``)."""

    candidates: tuple[Candidate, ...]
    lams: tuple[float, ...]
    bins: int | None
    folds: FoldRule
    settings: dict
    bootstrap: int = 0
    se_factor: float = 1.0
    verbose: bool = False
    name: str = "BernsteinFusion"

    @property
    def fitted(self) -> tuple[Candidate, ...]:
        """The candidates the fit tries."""
        if all(np.isinf(lam) for lam in self.lams):
            return self.candidates[:1]  # g is a constant: every candidate is the same model
        return self.candidates

    @property
    def searches(self) -> bool:
        """Whether cross-validation chooses between candidates or penalties."""
        return len(self.fitted) > 1 or len(self.lams) > 1

    @property
    def deals_folds(self) -> bool:
        """Whether the data are dealt to folds."""
        return len(self.candidates) > 1 or len(self.lams) > 1

    def progress(self) -> Progress:
        steps = len(self.fitted) * len(self.lams) if self.searches else 0
        return Progress(steps + 1, desc=self.name, enabled=self.verbose)

    def pick(self, keys: list[tuple], joint, sizes: list[int]) -> tuple[int, dict, dict]:
        """The one-standard-error pick over the cross-validated paths of every candidate (the
        largest ``lam``, then the fewest coefficients), with the grid-edge warnings.

        ``keys``: ``(structure, degrees, lam)`` of every point of the paths, in the order of
        ``joint``, their held-out losses on the same rows (cells), whose ``mean`` and
        ``paired_se(ref)`` the pick reads (a :class:`~fusion.bernstein.binary.logistic.
        PathResult`); ``sizes``: every point's number of coefficients.

        Returns the index of the pick and the scores and standard errors keyed by ``keys``.
        """
        mean = joint.mean
        best = int(np.argmin(mean))
        se = joint.paired_se(best)
        cv_scores = {k: float(m) for k, m in zip(keys, mean, strict=True)}
        cv_se = {k: float(v) for k, v in zip(keys, se, strict=True)}
        pick = one_se_pick(
            mean, se, preference=lambda i: (-keys[i][2], sizes[i], i), factor=self.se_factor
        )
        name, degrees, lam = keys[pick]
        degree_cands = [c.degrees for c in self.fitted if c.name == name]
        index = {k: i for i, k in enumerate(keys)}

        def matters(neighbour, grid) -> bool:
            # the pick against the next value inwards (a key), on the scale of its paired
            # standard errors against the candidates (keys) of the same grid
            if neighbour not in index:
                return True
            rows = [pick, index[neighbour]] + [index[k] for k in grid if k in index]
            return edge_matters(mean[rows], joint.paired_se(pick)[rows], 0, 1)

        self._warn_edges(degrees, lam, degree_cands, name, matters)
        return pick, cv_scores, cv_se

    def _warn_edges(self, degrees, lam, candidates, name, matters) -> None:
        """Warn when cross-validation picked the edge of ``lam_grid`` or of the degree
        candidates and the edge beats its neighbour by enough to matter
        (:func:`fusion._cv.edge_matters`; ``matters(key, grid)`` compares the pick with the
        candidate ``key`` among the candidates ``grid``)."""
        lams = self.lams
        finite = [v for v in lams if np.isfinite(v)]
        lam_path = [(name, degrees, v) for v in lams]
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
            and matters((name, candidates[-2], lam), [(name, d, lam) for d in candidates])
        ):
            warnings.warn(
                f"cross-validation picked degree {degrees}, the last candidate of "
                "degree_grid: a larger degree might fit better. Extend degree_grid to check.",
                UserWarning,
                stacklevel=caller_level(),
            )


def logistic_structures(est, M: int) -> list[str]:
    """Structures the default model tries: the one given, or for ``"auto"`` the tensor
    and the additive model at M = 2 and 3 (cross-validation chooses), additive above."""
    if est.structure != "auto":
        return [est.structure]
    if M == 1:
        return ["tensor"]
    return ["tensor", "additive"] if M <= 3 else ["additive"]


def logistic_plan(est, n: int, M: int, kept=None, dask: bool = False) -> LogisticPlan:
    """The default model's plan for ``n`` rows of ``M`` scores."""
    out = []
    for name in logistic_structures(est, M):
        axes = Structure.named(name, (0,) * M).axes
        if est.degree == "auto":
            K = auto_degree(M, n, name)
            # no more coefficients than rows: beyond them the penalty path ran into ill-posed
            # QPs (a 125-coefficient tensor on 40 rows: 13 s of OSQP, and a small lam chosen)
            rows = n if kept is None else int(np.count_nonzero(kept))
            limit = min(est.max_coefficients, rows)
            while K > 1 and Structure.of((K,) * M, axes).n_coef > limit:
                K -= 1
            degrees = [(K,) * M]
        elif est.degree == "cv":
            degrees = degree_candidates(est, M, None, axes)
        else:
            degrees = [as_degrees(est.degree, M, "degree")]
            check_size(est, degrees[0], None, axes)
        out += [Candidate(name, d, Structure.of(d, axes)) for d in degrees]
    return LogisticPlan(
        tuple(out), tuple(lam_candidates(est, n)), resolve_bins(est.bins, n, M, dask=dask),
        FoldRule.of(est.cv, est.random_state, kept), _settings(est), est.n_bootstrap, 1.0,
        est.verbose, type(est).__name__,
    )  # fmt: skip


# -- the rank-only model ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RankOnlyPlan:
    """The rank-only model's plan: the candidates (one without cross-validation), those
    whose pick warns of the grid's edge (``edges``), whether cross-validation chooses, the
    folds, the solver settings and the default model's cells (``bins``, for the bootstrap
    refits)."""

    candidates: tuple[Candidate, ...]
    edges: frozenset[int]
    cross_validated: bool
    folds: FoldRule
    settings: dict
    bins: int | None = None
    bootstrap: int = 0
    verbose: bool = False
    name: str = "BernsteinFusion"

    def settings_for(self, cv: bool) -> dict:
        """The solver settings, with tolerances of at least :data:`CV_EPS` for the
        cross-validation: candidates are ranked by held-out Brier scores that differ in the
        third or fourth digit, which 1e-5 resolves at a third of the iterations."""
        settings = dict(self.settings)
        if cv:
            settings["eps_abs"] = max(settings["eps_abs"], CV_EPS)
            settings["eps_rel"] = max(settings["eps_rel"], CV_EPS)
        return settings

    @property
    def keys(self) -> list[tuple]:
        """Keys of ``cv_scores_``: the degree tuple of every candidate, or ``(structure,
        degree tuple)`` when the candidates span several structures."""
        if len({c.name for c in self.candidates}) > 1:
            return [(c.name, c.degrees) for c in self.candidates]
        return [c.degrees for c in self.candidates]

    def progress(self) -> Progress:
        return Progress(len(self.candidates) + 1, desc=self.name, enabled=self.verbose)

    def pick(self, results: dict):
        """The candidate with the lowest held-out Brier score (ties: fewer coefficients,
        then the earlier candidate).

        ``results`` maps :attr:`keys` to ``(score, statistics of all rows, (per-fold
        scores, fold weights))``. Picking a candidate in ``edges`` (the largest of its
        structure's grid) warns when it beats the structure's other degrees by enough to
        matter (:func:`fusion._cv.edge_matters`, the folds as the paired held-out units:
        only per-fold statistics exist, so the standard error is a coarse one).

        Returns ``(candidate, statistics, cv_scores)``.
        """
        keys = self.keys
        scores = {k: results[k][0] for k in keys}
        sizes = [c.structure.n_coef for c in self.candidates]
        i = min(range(len(keys)), key=lambda j: (scores[keys[j]], sizes[j], j))
        cand = self.candidates[i]
        if i in self.edges and self._edge_matters(results, keys, i):
            which = f" of the {cand.name} structure" if keys[i] != cand.degrees else ""
            warnings.warn(
                f"cross-validation picked degree {cand.degrees}, the largest candidate{which} "
                "of degree_grid that was tried: a larger degree might fit better. Extend "
                "degree_grid (and max_coefficients if needed) to check.",
                UserWarning,
                stacklevel=caller_level(),
            )
        return cand, results[keys[i]][1], scores

    def _edge_matters(self, results: dict, keys: list, edge: int) -> bool:
        """:func:`fusion._cv.edge_matters` for candidate ``edge``, the last of its structure,
        against the structure's best other degree (the held-out Brier score is jagged
        along the degrees and the lowest wins, so the edge's gain is over the best of the
        rest, not over whichever degree precedes it), on the folds' scores."""
        cands = self.candidates
        grid = [j for j, c in enumerate(cands) if c.name == cands[edge].name]
        held = [results[keys[j]][2] for j in grid]
        w = held[0][1]
        if any(h[1].shape != w.shape or not np.array_equal(h[1], w) for h in held):
            return True  # not the same held-out units
        losses = np.stack([h[0] for h in held])
        mean = losses @ w / w.sum()
        ref = grid.index(edge)
        other = min((k for k in range(len(grid)) if k != ref), key=lambda k: mean[k])
        return edge_matters(mean, paired_se(losses, w, ref), ref, other)


def rank_only_structures(est, M: int) -> tuple[str, ...]:
    """Structures the rank-only model tries: the one given; for ``"auto"`` the tensor at
    M <= 2, and at M >= 3 the additive, pairwise and tensor models, chosen jointly with the
    degree by cross-validation."""
    if est.structure != "auto":
        return (est.structure,)
    return ("tensor",) if M <= 2 else ("additive", "pairwise", "tensor")


def rank_only_candidates(est, M: int, n_train: int) -> tuple[list[Candidate], set[int]]:
    """Candidates of the rank-only model's cross-validation: in the order of
    :func:`rank_only_structures`, each structure's degrees in grid order (``degree="cv"`` or
    ``"auto"``: the degrees of ``degree_grid`` within ``max_coefficients`` and ``n_train``,
    the rows of the smallest training fold; with ``structure="auto"`` at M >= 3 the tensor
    and pairwise candidates also within :data:`RANK_ONLY_AUTO_COEFFICIENTS`; a fixed
    ``degree``: that degree in every structure it fits). Also returns the candidates whose
    pick warns of the grid's edge: the last of a structure with several candidates whose
    grid the auto budget did not cut."""
    structures = rank_only_structures(est, M)
    auto = len(structures) > 1
    fixed = not isinstance(est.degree, str)  # else "cv" or "auto"
    cands, edges = [], set()
    for name in structures:
        axes = Structure.named(name, (0,) * M).axes
        if fixed:
            degrees = [as_degrees(est.degree, M, "degree")]
            if not auto:
                check_size(est, degrees[0], n_train, axes)
            elif Structure.of(degrees[0], axes).n_coef > min(est.max_coefficients, n_train):
                degrees = []
            cut = True
        else:
            budget = None
            if auto and name != "additive":
                budget = RANK_ONLY_AUTO_COEFFICIENTS
            degrees = degree_candidates(est, M, n_train, axes, budget, required=not auto)
            cut = budget is not None and len(degrees) < len(
                degree_candidates(est, M, n_train, axes, required=False)
            )
        if len(degrees) > 1 and not cut:
            edges.add(len(cands) + len(degrees) - 1)
        cands += [Candidate(name, d, Structure.of(d, axes)) for d in degrees]
    if not cands:  # structure="auto": nothing fits; the additive model's error says why
        additive = Structure.named("additive", (0,) * M).axes
        if fixed:
            check_size(est, as_degrees(est.degree, M, "degree"), n_train, additive)
        degree_candidates(est, M, n_train, additive)
    return cands, edges


def rank_only_plan(est, M: int, n: int, n_train, kept=None, dask: bool = False):
    """The rank-only model's plan for ``n`` rows of ``M`` scores; ``n_train(rule)`` gives
    the rows of the smallest training fold of a fold rule (asked only when cross-validation
    chooses)."""
    structures = rank_only_structures(est, M)
    rule = FoldRule.of(est.cv, est.random_state, kept)
    cross_validated = isinstance(est.degree, str) or len(structures) > 1
    if cross_validated:
        cands, edges = rank_only_candidates(est, M, n_train(rule))
    else:
        name = structures[0]
        degrees = as_degrees(est.degree, M, "degree")
        axes = Structure.named(name, degrees).axes
        check_size(est, degrees, n, axes)
        cands, edges = [Candidate(name, degrees, Structure.of(degrees, axes))], set()
    return RankOnlyPlan(
        tuple(cands), frozenset(edges), cross_validated, rule, _settings(est),
        resolve_bins(est.bins, n, M, dask=dask), est.n_bootstrap, est.verbose,
        type(est).__name__,
    )  # fmt: skip


# -- the class-shared multi-class model -----------------------------------------------------


@dataclass(frozen=True, eq=False)
class SharedPlan:
    """The class-shared model's plan: the degree of every scorer's ``g_m``, the grids of
    ``lam``, of the class biases' ridge ``tau`` (``inf``: no biases) and of the top-label
    correction's penalty (``inf`` alone: none), the folds, the share of the rows its
    cross-validation samples and the solver settings."""

    degree: int
    lams: tuple[float, ...]
    taus: tuple[float, ...]
    tops: tuple[float, ...]
    folds: FoldRule
    sample: float
    settings: dict
    verbose: bool = False
    name: str = "BernsteinFusion"

    @property
    def searches(self) -> bool:
        """Whether the fit needs cross-validation folds: a penalty to choose, or a top-label
        correction (fitted on held-out probabilities even at a given penalty)."""
        return len(self.lams) > 1 or len(self.taus) > 1 or any(np.isfinite(self.tops))

    def progress(self) -> Progress:
        top = any(np.isfinite(t) for t in self.tops)
        n_lams, n_taus = len(self.lams), len(self.taus)
        steps = (n_lams + (n_taus - 1 if n_taus > 1 else 0) if self.searches else 0) + 1
        return Progress(steps + int(top), desc=self.name, enabled=self.verbose)


def shared_degree(est, M: int, n: int) -> int:
    """The class-shared model's one degree of every scorer's ``g_m``."""
    if est.degree == "auto":
        return auto_degree(M, n, "additive")
    if isinstance(est.degree, str):  # "cv"
        raise ValueError(
            "degree='cv' is not available for the class-shared multi-class model: pass an "
            "int or 'auto' (the penalty lam, chosen by cross-validation, sets the "
            "smoothness)."
        )
    degrees = as_degrees(est.degree, M, "degree")
    if len(set(degrees)) != 1:
        raise ValueError(
            f"the class-shared multi-class model takes one degree for every scorer, got {degrees}."
        )
    return degrees[0]


def shared_plan(est, n: int, M: int, C: int, kept=None) -> SharedPlan:
    """The class-shared model's plan for ``n`` rows (of positive weight) of ``M`` scorers'
    ``C`` class scores. ``lam``: ``lam_grid``, or by default the binary model's grid in whole
    decades (``inf``, 10, 1, ..., 1e-6, then down to ``0.02 / n``): its few parameters need
    no finer grid, and every candidate is a pass over ``n C`` pairs per fold."""
    lams = lam_candidates(est, n)
    if est.lam == "cv" and est.lam_grid is None:
        lams = [v for v in lams if np.isinf(v) or np.log10(v) == round(np.log10(v))]
    taus = [np.inf, *BIAS_GRID] if est.bias_penalty == "cv" else [float(est.bias_penalty)]
    if est.top_label_penalty == "cv":
        tops = list(TOP_LABEL_GRID)
    else:
        tops = [float(est.top_label_penalty)]
    sample = min(1.0, CV_MAX_PAIRS / max(n * C, 1))
    return SharedPlan(
        shared_degree(est, M, n), tuple(lams), tuple(taus), tuple(tops),
        FoldRule.of(est.cv, est.random_state, kept), sample, _settings(est), est.verbose,
        type(est).__name__,
    )  # fmt: skip


def multiclass_model(est, S: np.ndarray, index: np.ndarray, sample_weight) -> str:
    """The multi-class model a fit takes: ``"shared"``, ``"per-class"`` or ``"compare"``
    (both, by cross-validation; see ``multiclass``)."""
    if est.multiclass == "shared" and est.base is None:
        raise ValueError(
            "the class-shared multi-class model is a model on the scores' own scale; the "
            "rank-only model (base=None) fits multi-class scores per class: pass "
            "multiclass='per-class' (or 'auto'), or a base."
        )
    if est.multiclass != "auto":
        return est.multiclass
    if est.base is None or (est.missing == "marginal" and np.isnan(S).any()):
        return "per-class"
    C = S.shape[2]
    w = check_sample_weight(sample_weight, S.shape[0])
    # rows, not weight: weights scaled by their smallest (one tiny weight) made 150 rows
    # count as thousands and sent a 30-rows-per-class fit to the per-class comparison
    counts = np.bincount(index[w > 0], minlength=C)
    searched = est.lam == "cv" and by_content(est.cv)
    cheap = S.shape[0] * C <= AUTO_PER_CLASS_PAIRS
    if searched and cheap and C <= AUTO_PER_CLASS_CLASSES and counts.min() >= AUTO_PER_CLASS_ROWS:
        return "compare"
    return "shared"
