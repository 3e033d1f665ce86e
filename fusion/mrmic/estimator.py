"""MRMICFusion: manifold-regularized isotonic fusion (Zhong & Kwok 2013) as a sparse QP."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import COMMON_PARAMETERS, FusionEstimator
from .._docs import estimator_doc
from .._progress import Progress, warn_if_slow
from .coarsen import coarsen_points
from .cost import estimate_fit_seconds
from .graph import dominance_edges, laplacian, merge_points, similarity_matrix
from .interpolate import LINEAR_MAX_DIMENSION, apply_weights, linear_weights, monotone_interpolate
from .qp import MRMICQP

__all__ = ["MRMICFusion", "DEFAULT_RELATIVE_LAM_GRID", "DEFAULT_MAX_POINTS", "CV_TOLERANCE"]

#: Relative strengths ``c`` tried by ``lam="cv"``; the absolute candidates are
#: ``lam = c * 2 * mean(W) / mean(degree)`` on the full training graph (see MRMICFusion).
DEFAULT_RELATIVE_LAM_GRID = (1e-3, 1e-2, 1e-1, 3e-1, 1.0)

#: Default ``max_points``: the QP is solved on at most this many (weighted) points.
DEFAULT_MAX_POINTS = 500

#: OSQP tolerance of the cross-validation solves (the final fit uses ``eps_abs``/``eps_rel``
#: when tighter): held-out Brier scores need far less accuracy than the fitted values, and
#: the looser tolerance halved the iterations on tied and binary scores.
CV_TOLERANCE = 1e-5


def _qp_points(U, y, w, max_points):
    """Distinct weighted points (identical rows merged), then at most ``max_points`` cells."""
    points, target, weight = merge_points(U, y, w)
    if points.shape[0] == 0:
        raise ValueError("no training row has positive sample_weight.")
    n_distinct = points.shape[0]
    return (*coarsen_points(points, target, weight, max_points), n_distinct)


def _build_qp(points, target, weight, graph: str, n_neighbors: int, settings: dict) -> MRMICQP:
    hi, lo = dominance_edges(points)
    L = laplacian(similarity_matrix(points, graph, n_neighbors))
    return MRMICQP(points, target, weight, hi, lo, L, **settings)


def _held_out_rule(rule: str, points: np.ndarray, queries: np.ndarray):
    """``values -> predictions at queries``; the linear rule's triangulation is built once."""
    if rule == "linear":
        vertices, weights = linear_weights(points, queries)
        return lambda values: apply_weights(vertices, weights, values)
    return lambda values: monotone_interpolate(points, values, queries)


@estimator_doc
@dataclass(eq=False, repr=False)
class MRMICFusion(FusionEstimator):
    """Manifold-regularized isotonic fusion of M scores (MR-MIC).

    On the ECDF-normalized training points, identical rows merged into one point ``g`` of
    weight ``W_g`` (sum of its rows' weights) and target ``t_g`` (their weighted mean label),
    the fitted values ``p`` minimize

    .. math:: F(p) = \\sum_g W_g (t_g - p_g)^2 + \\frac{\\lambda}{2} p^\\top L p
              = \\sum_g W_g (t_g - p_g)^2
                + \\frac{\\lambda}{2} \\sum_{g < h} \\frac{(p_g - p_h)^2}{\\|U_g - U_h\\|}

    subject to ``p_g >= p_h`` whenever ``U_g`` strictly dominates ``U_h`` (imposed on the
    transitive reduction of the order) and ``0 <= p <= 1`` (Wang & Liu 2020, eq. (6); the
    sum over pairs is over all pairs for ``graph="dense"`` and over k-NN pairs for
    ``graph="knn"``). ``F`` equals ``sum_i w_i (y_i - p_{g(i)})^2 + (lam / 2) p' L p`` over
    the rows up to a constant, so with unit weights and distinct rows it is exactly the
    paper's unnormalized objective and ``lam`` has the paper's scale (Fig. 1 uses
    ``lam = 1e-5`` with ``n = 400``). The data term grows like ``n`` while ``p' L p`` grows
    like ``n^2`` on the dense graph, so a fixed ``lam`` smooths more as ``n`` grows; the
    default grid accounts for that. The QP is solved by OSQP and the solution is made exactly
    monotone (see :mod:`fusion.mrmic.qp`). Between training points the fitted values are
    extended by ``interpolation``.

    Sample weights follow scikit-learn: rows of zero weight are dropped (also from the
    cross-validation folds), and the others are rescaled to mean 1, so multiplying every
    weight by a constant changes nothing, fixed ``lam`` included. An integer weight ``k_i``
    then acts like repeating the row ``k_i`` times with ``lam`` multiplied by ``mean(k)``;
    with ``lam="cv"`` the default grid is relative to the weights, so its candidates are the
    same fits either way.

    Large training sets are summarized before the QP: when there are more than
    ``max_points`` distinct points, they are grouped into ``max_points`` cells by recursive
    median splits and each cell enters the QP as one point (its weighted mean point, mean
    label and total weight; see :mod:`fusion.mrmic.coarsen`). That bounds the time of a
    default fit whatever ``n``; a fit estimated to take more than a minute (raised
    ``max_points``, ``max_points=None``) warns first (:mod:`fusion.mrmic.cost`).

    Parameters
    ----------
    lam : float >= 0 or "cv", default="cv"
        Regularization strength ``lambda``, or ``"cv"`` to choose it by cross-validation
        (``cv``) on the held-out Brier score, predicting held-out rows with the chosen
        ``interpolation``.
    interpolation : {"auto", "linear", "monotone"}, default="auto"
        "linear": Delaunay-linear interpolation of the fitted values, nearest fitted value
        outside the convex hull (the paper's choice; not monotone between training points).
        "monotone": mean of the largest fitted value below and the smallest above the point;
        non-decreasing in every score everywhere. "auto": "linear" for ``M <= 4`` scores,
        "monotone" above, where the triangulation has hundreds to thousands of simplices
        per point (9 s for 500 points at ``M = 6``, once per fold and per
        ``predict_proba``). See :mod:`fusion.mrmic.interpolate`.
    graph : {"dense", "knn"}, default="dense"
        Similarity graph: all pairs (the paper; ``P`` has ``g^2`` entries, so fitting is
        ``O(g^2)`` per OSQP iteration plus an ``O(g^3)`` factorization) or the symmetrized
        ``n_neighbors``-nearest-neighbour graph (sparse ``P``; 2-5 times faster per
        iteration at ``g`` = 500-2,000). Either way OSQP's factorization fills in along the
        dominance edges, so the cost grows steeply with ``g`` (see benchmarks/RESULTS.md).
    n_neighbors : int, default=10
        Neighbours per point for ``graph="knn"``.
    max_points : int >= 2 or None, default=500
        Largest number of points of the QP; more distinct training points are grouped into
        this many cells (see above). None: never group (cost grows like ``g^2`` to ``g^3``
        in the number ``g`` of distinct points).
    lam_grid : sequence of float, optional
        Absolute candidates for ``lam="cv"``. Default: ``c * 2 * mean(W) / mean(d)`` for
        ``c`` in :data:`DEFAULT_RELATIVE_LAM_GRID` = ``(1e-3, 1e-2, 0.1, 0.3, 1)``, where
        ``W`` are the merged weights and ``d`` the vertex degrees of the similarity graph of
        all training points. ``c`` is the ratio of the regularizer's to the data term's
        curvature on an average vertex, so the grid adapts to ``n`` and to the graph (the
        degree grows like ``n`` on the dense graph); ``c = 1e-3`` is nearly plain isotonic
        regression.
    cv : int, cross-validation splitter or iterable of (train, test), default=5
        Splits for ``lam="cv"``: an int gives that many shuffled folds (stratified when
        both classes have at least ``cv`` rows, seeded by ``random_state``); a splitter
        (``StratifiedKFold(...)``) or a list of ``(train, test)`` index arrays into the
        rows of ``S`` is used as given. None means 5.
    random_state : int, RandomState or None, default=0
        Shuffling of the folds when ``cv`` is an int. The default makes fits reproducible.
    verbose : bool, default=False
        Show the progress of the QP solves (a tqdm bar on stderr when tqdm is installed,
        one line per solve otherwise).
    eps_abs, eps_rel : float, default=1e-7
        OSQP tolerances of the final fit (the cross-validation solves use at most
        :data:`CV_TOLERANCE`).
    max_iter : int, default=20000
        OSQP iteration limit.

    Attributes
    ----------
    train_scores_ : ndarray of shape (g, M)
        The points of the QP: the distinct normalized training points (rows of zero weight
        dropped), or the cells' mean points when there were more than ``max_points``;
        sorted lexicographically.
    train_proba_ : ndarray of shape (g,)
        Fitted ``p`` at ``train_scores_``; within ``[0, 1]`` and monotone on every strict
        dominance pair exactly.
    train_weights_ : ndarray of shape (g,)
        Merged weights ``W`` (sum of the rescaled sample weights of each point's rows).
    n_distinct_points_ : int
        Distinct normalized training points before grouping (``>= g``).
    lam_ : float
        The ``lambda`` of the final fit.
    interpolation_ : str
        The interpolation rule used by ``predict_proba`` ("linear" or "monotone", fixed at
        fit).
    n_edges_ : int
        Number of dominance constraints (edges of the transitive reduction).
    cv_scores_ : dict
        Only when ``lam="cv"``: held-out Brier score for each candidate ``lam``.
    solver_status_ : str
        OSQP's status for the final fit.
    n_iter_ : int
        OSQP iterations of the final fit (bounded by ``max_iter``; the solves of the
        cross-validation are not counted).
    monotone_ : bool
        Whether the calibrating function is non-decreasing in every score everywhere: True
        for the "monotone" rule; False for "linear", which is monotone only on the training
        points.
    classes_, ecdf_, n_features_in_, feature_names_in_
        See :class:`fusion._base.FusionEstimator`.

    Notes
    -----
    During cross-validation the ECDF is the one fitted on all training rows (as for
    :class:`~fusion.BernsteinFusion`); each training fold rescales its weights to mean 1
    (as a fit on those rows would), merges (and groups) its own rows, builds its graphs and
    solves the QP once per candidate, warm-started along the grid.
    Cost: with the default 5 folds and 5 candidates, 25 solves on 80% of the rows plus the
    final one; each fold's triangulation for the linear rule is built once.

    The dominance constraints hold only at the training points; with
    ``interpolation="linear"`` the calibrating function can decrease between them (the
    criticism of Wang & Liu 2020, Sec. 3.2).

    {rank_invariance}

    Examples
    --------
    >>> import numpy as np
    >>> from fusion import MRMICFusion
    >>> rng = np.random.default_rng(0)
    >>> S = rng.normal(size=(300, 2)); y = (S.sum(1) + rng.normal(size=300) > 0).astype(int)
    >>> model = MRMICFusion(lam=1e-3).fit(S, y)
    >>> model.train_proba_.shape
    (300,)
    """

    _allows_1d = True
    _rank_based = True
    _fitted_attributes = (
        "train_scores_",
        "train_proba_",
        "train_weights_",
        "n_distinct_points_",
        "lam_",
        "interpolation_",
        "monotone_",
        "n_edges_",
        "cv_scores_",
        "solver_status_",
        "n_iter_",
    )
    _parameter_constraints = {
        "lam": [Interval(Real, 0, None, closed="left"), StrOptions({"cv"})],
        "interpolation": [StrOptions({"auto", "linear", "monotone"})],
        "graph": [StrOptions({"dense", "knn"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "max_points": [Interval(Integral, 2, None, closed="left"), None],
        "lam_grid": ["array-like", None],
        "cv": ["cv_object"],
        **COMMON_PARAMETERS,
        "eps_abs": [Interval(Real, 0, None, closed="neither")],
        "eps_rel": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    lam: float | str = "cv"
    _: KW_ONLY
    interpolation: str = "auto"
    graph: str = "dense"
    n_neighbors: int = 10
    max_points: int | None = DEFAULT_MAX_POINTS
    lam_grid: Sequence[float] | None = None
    cv: int | object = 5
    eps_abs: float = 1e-7
    eps_rel: float = 1e-7
    max_iter: int = 20_000

    # -- fitting -----------------------------------------------------------------------------
    def _osqp_settings(self, *, cv: bool = False) -> dict:
        eps_abs, eps_rel = self.eps_abs, self.eps_rel
        if cv:
            eps_abs, eps_rel = max(eps_abs, CV_TOLERANCE), max(eps_rel, CV_TOLERANCE)
        return {"eps_abs": eps_abs, "eps_rel": eps_rel, "max_iter": self.max_iter}

    def _interpolation_rule(self, M: int) -> str:
        if self.interpolation == "auto":
            return "linear" if M <= LINEAR_MAX_DIMENSION else "monotone"
        return self.interpolation

    def _fit_normalized(self, U, y, sample_weight):
        keep = sample_weight > 0
        if not keep.any():
            raise ValueError("no training row has positive sample_weight.")
        w = sample_weight / sample_weight[keep].mean()
        rule = self._interpolation_rule(U.shape[1])
        tune = isinstance(self.lam, str)
        splits = self._cv_splits(U, y) if tune else []
        U, y, w = U[keep], y[keep], w[keep]
        points, target, weight, n_distinct = _qp_points(U, y, w, self.max_points)
        grid = self._checked_lam_grid() if tune else None
        n_candidates = len(DEFAULT_RELATIVE_LAM_GRID) if grid is None else len(grid)
        n_solves = len(splits) * n_candidates + 1
        self._warn_if_slow(points.shape[0], U.shape[1], len(splits) + 1, n_solves, rule)
        with Progress(n_solves, desc=type(self).__name__, enabled=self.verbose) as progress:
            qp = _build_qp(
                points, target, weight, self.graph, self.n_neighbors, self._osqp_settings()
            )
            cv_scores = None
            if tune:
                candidates = grid if grid is not None else self._default_lam_grid(qp)
                cv_scores = self._cv_scores(U, y, w, splits, candidates, rule, progress)
                lam = candidates[int(np.argmin(cv_scores))]  # ties: the smaller lam
            else:
                lam = float(self.lam)
            p, status = qp.solve(lam)
            progress.step(f"final fit, lam={lam:.3g}")
        # Fitted state is assigned together, after every step that can fail.
        if cv_scores is None:
            self.__dict__.pop("cv_scores_", None)
        else:
            self.cv_scores_ = {
                float(c): float(v) for c, v in zip(candidates, cv_scores, strict=True)
            }
        self.lam_ = lam
        self.train_scores_ = qp.points
        self.train_proba_ = p
        self.train_weights_ = qp.weight
        self.n_distinct_points_ = int(n_distinct)
        self.interpolation_ = rule
        self.monotone_ = rule == "monotone"
        self.n_edges_ = int(qp.hi.shape[0])
        self.solver_status_ = status
        self.n_iter_ = qp.last_iterations

    def _warn_if_slow(self, g: int, M: int, n_qps: int, n_solves: int, rule: str) -> None:
        seconds = estimate_fit_seconds(
            g, M, graph=self.graph, n_qps=n_qps, n_solves=n_solves, interpolation=rule
        )
        hints = []
        if self.max_points is None or g > DEFAULT_MAX_POINTS:
            hints.append(f"max_points={DEFAULT_MAX_POINTS} (now {self.max_points})")
        if n_solves > 1:
            hints.append("a fixed lam instead of lam='cv'")
        if rule == "linear" and M > LINEAR_MAX_DIMENSION:
            hints.append("interpolation='monotone'")
        hint = f"Faster: {', '.join(hints)}." if hints else ""
        warn_if_slow(
            seconds,
            f"{type(self).__name__} fit ({n_solves} QP solve(s) on {g} points, graph="
            f"{self.graph!r}, M={M}, interpolation={rule!r}; a rough estimate, see "
            "fusion.mrmic.cost)",
            hint,
        )

    def _checked_lam_grid(self) -> list[float] | None:
        """The user's ``lam_grid``, sorted and deduplicated (None: the default grid)."""
        if self.lam_grid is None:
            return None
        grid = np.asarray(self.lam_grid, dtype=float).reshape(-1)
        if grid.size == 0:
            raise ValueError("lam_grid is empty.")
        if not np.all(np.isfinite(grid)) or np.any(grid < 0):
            raise ValueError(f"lam_grid must hold finite values >= 0, got {grid.tolist()}.")
        return sorted({float(v) for v in grid})

    @staticmethod
    def _default_lam_grid(qp: MRMICQP) -> list[float]:
        """``c * 2 * mean(W) / mean(degree)`` for ``c`` in the relative grid: scaling the
        weights scales every candidate alike (and the weights arrive rescaled anyway)."""
        degree = qp.L.diagonal()
        scale = 2.0 * qp.weight.mean() / degree.mean() if degree.mean() > 0 else 1.0
        return [float(c * scale) for c in DEFAULT_RELATIVE_LAM_GRID]

    def _cv_scores(self, U, y, w, splits, candidates, rule, progress) -> np.ndarray:
        """Held-out Brier score of each candidate (weighted, over all held-out rows)."""
        sse = np.zeros(len(candidates))
        held_out_weight = 0.0
        settings = self._osqp_settings(cv=True)
        for f, (train, test) in enumerate(splits):
            # Each fold is fitted as fit() would fit its rows: weights rescaled to mean 1 (a
            # fold without the one heavy row of a skewed weighting stays well scaled).
            w_train = w[train] / w[train].mean()
            points, target, weight, _ = _qp_points(U[train], y[train], w_train, self.max_points)
            qp = _build_qp(points, target, weight, self.graph, self.n_neighbors, settings)
            predict = _held_out_rule(rule, qp.points, U[test])
            for c, lam in enumerate(candidates):
                p, _ = qp.solve(lam)
                sse[c] += float(np.dot(w[test], (y[test] - predict(p)) ** 2))
                progress.step(f"fold {f + 1}/{len(splits)}, lam={lam:.3g}")
            held_out_weight += float(w[test].sum())
        return sse / held_out_weight

    # -- prediction --------------------------------------------------------------------------
    def _calibrate(self, U):
        return _interpolate(self.interpolation_, self.train_scores_, self.train_proba_, U)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The isotonic constraints assume every score increases with P(positive), whatever
        # the interpolation (only "monotone" makes the whole function monotone, so the class
        # does not declare _monotone): scikit-learn's accuracy check on blobs where a feature
        # decreases with it cannot be met by design (see FusionEstimator.__sklearn_tags__).
        tags.classifier_tags.poor_score = True
        return tags


def _interpolate(rule: str, points, values, queries) -> np.ndarray:
    if rule == "linear":
        return apply_weights(*linear_weights(points, queries), values)
    return monotone_interpolate(points, values, queries)
