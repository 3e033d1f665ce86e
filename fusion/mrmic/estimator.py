"""MRMICFusion: manifold-regularized isotonic fusion (Zhong & Kwok 2013) as a sparse QP."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import FusionEstimator, cv_fold_ids
from .graph import dominance_edges, laplacian, merge_points, similarity_matrix
from .interpolate import linear_interpolate, monotone_interpolate
from .qp import MRMICQP

__all__ = ["MRMICFusion", "DEFAULT_RELATIVE_LAM_GRID"]

#: Relative strengths ``c`` tried by ``lam="cv"``; the absolute candidates are
#: ``lam = c * 2 * mean(W) / mean(degree)`` on the full training graph (see MRMICFusion).
DEFAULT_RELATIVE_LAM_GRID = (1e-3, 1e-2, 1e-1, 3e-1, 1.0)


def _build_qp(U, y, w, graph: str, n_neighbors: int, settings: dict) -> MRMICQP:
    points, target, weight = merge_points(U, y, w)
    if points.shape[0] == 0:
        raise ValueError("no training row has positive sample_weight.")
    hi, lo = dominance_edges(points)
    L = laplacian(similarity_matrix(points, graph, n_neighbors))
    return MRMICQP(points, target, weight, hi, lo, L, **settings)


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
    ``lam = 1e-5`` with ``n = 400``). As in scikit-learn's ridge models, an integer weight
    is the same as repeating the row, and multiplying every weight by ``a`` is the same as
    dividing ``lam`` by ``a`` (the default ``lam="cv"`` grid scales with the weights, so the
    cross-validated fit does not change). The data term grows like ``n`` while ``p' L p``
    grows like ``n^2`` on the dense graph, so a fixed ``lam`` smooths more as ``n`` grows;
    the default grid accounts for that. The QP is solved by OSQP and the solution is made
    exactly monotone (see :mod:`fusion.mrmic.qp`). Between training points the fitted values
    are extended by ``interpolation``.

    Parameters
    ----------
    lam : float >= 0 or "cv", default="cv"
        Regularization strength ``lambda``, or ``"cv"`` to choose it by ``cv``-fold
        cross-validation on the held-out Brier score, predicting held-out rows with the
        chosen ``interpolation``.
    interpolation : {"linear", "monotone"}, default="linear"
        "linear": Delaunay-linear interpolation of the fitted values, nearest fitted value
        outside the convex hull (the paper's choice; not monotone between training points).
        "monotone": mean of the largest fitted value below and the smallest above the point;
        non-decreasing in every score everywhere. See :mod:`fusion.mrmic.interpolate`.
    graph : {"dense", "knn"}, default="dense"
        Similarity graph: all pairs (the paper; ``P`` has ``n^2`` entries, so fitting is
        ``O(n^2)`` per OSQP iteration plus an ``O(n^3)`` factorization) or the symmetrized
        ``n_neighbors``-nearest-neighbour graph (sparse ``P``; several times faster from
        ``n`` of a few hundred on). Either way OSQP's factorization fills in along the long
        edges of the dominance graph, so neither scales far beyond a few thousand distinct
        points (see benchmarks/RESULTS.md).
    n_neighbors : int, default=10
        Neighbours per point for ``graph="knn"``.
    lam_grid : sequence of float, optional
        Absolute candidates for ``lam="cv"``. Default: ``c * 2 * mean(W) / mean(d)`` for
        ``c`` in :data:`DEFAULT_RELATIVE_LAM_GRID` = ``(1e-3, 1e-2, 0.1, 0.3, 1)``, where
        ``W`` are the merged weights and ``d`` the vertex degrees of the similarity graph of
        all training points. ``c`` is the ratio of the regularizer's to the data term's
        curvature on an average vertex, so the grid adapts to ``n`` and to the graph (the
        degree grows like ``n`` on the dense graph); ``c = 1e-3`` is nearly plain isotonic
        regression.
    cv : int, default=5
        Folds for ``lam="cv"`` (stratified when both classes have at least ``cv`` rows).
    random_state : int, RandomState or None
        Shuffling of the folds.
    eps_abs, eps_rel : float, default=1e-7
        OSQP tolerances.
    max_iter : int, default=20000
        OSQP iteration limit.

    Attributes
    ----------
    train_scores_ : ndarray of shape (g, M)
        The distinct normalized training points (rows of zero weight dropped), sorted
        lexicographically.
    train_proba_ : ndarray of shape (g,)
        Fitted ``p`` at ``train_scores_``; within ``[0, 1]`` and monotone on every strict
        dominance pair exactly.
    train_weights_ : ndarray of shape (g,)
        Merged weights ``W`` (sum of the sample weights of each point's rows).
    lam_ : float
        The ``lambda`` of the final fit.
    interpolation_ : str
        The interpolation rule used by ``predict_proba`` (fixed at fit).
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
        for ``interpolation="monotone"``; False for ``"linear"``, which is monotone only on
        the training points.
    classes_, ecdf_, n_features_in_, feature_names_in_
        See :class:`fusion._base.FusionEstimator`.

    Notes
    -----
    During cross-validation the ECDF is the one fitted on all training rows (as for
    :class:`~fusion.BernsteinFusion`); each training fold merges its own rows, builds its
    graphs and solves the QP once per candidate, warm-started along the grid. Cost: with
    the default 5 folds and 5 candidates, about 25 solves on 80% of the rows.

    The dominance constraints hold only at the training points; with
    ``interpolation="linear"`` the calibrating function can decrease between them (the
    criticism of Wang & Liu 2020, Sec. 3.2).

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
    _parameter_constraints = {
        "lam": [Interval(Real, 0, None, closed="left"), StrOptions({"cv"})],
        "interpolation": [StrOptions({"linear", "monotone"})],
        "graph": [StrOptions({"dense", "knn"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "lam_grid": ["array-like", None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "eps_abs": [Interval(Real, 0, None, closed="neither")],
        "eps_rel": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        lam="cv",
        *,
        interpolation: str = "linear",
        graph: str = "dense",
        n_neighbors: int = 10,
        lam_grid=None,
        cv: int = 5,
        random_state=None,
        eps_abs: float = 1e-7,
        eps_rel: float = 1e-7,
        max_iter: int = 20_000,
    ):
        self.lam = lam
        self.interpolation = interpolation
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.lam_grid = lam_grid
        self.cv = cv
        self.random_state = random_state
        self.eps_abs = eps_abs
        self.eps_rel = eps_rel
        self.max_iter = max_iter

    # -- fitting -----------------------------------------------------------------------------
    def _osqp_settings(self) -> dict:
        return {"eps_abs": self.eps_abs, "eps_rel": self.eps_rel, "max_iter": self.max_iter}

    def _fit_normalized(self, U, y, sample_weight):
        w = sample_weight
        qp = _build_qp(U, y, w, self.graph, self.n_neighbors, self._osqp_settings())
        if isinstance(self.lam, str):
            lam = self._select_lam(U, y, w, qp)
        else:
            lam = float(self.lam)
            self.__dict__.pop("cv_scores_", None)
        p, status = qp.solve(lam)
        self.lam_ = lam
        self.train_scores_ = qp.points
        self.train_proba_ = p
        self.train_weights_ = qp.weight
        self.interpolation_ = self.interpolation
        self.monotone_ = self.interpolation == "monotone"
        self.n_edges_ = int(qp.hi.shape[0])
        self.solver_status_ = status
        self.n_iter_ = qp.last_iterations

    def _lam_candidates(self, qp: MRMICQP) -> list[float]:
        if self.lam_grid is not None:
            grid = np.asarray(self.lam_grid, dtype=float).reshape(-1)
            if grid.size == 0:
                raise ValueError("lam_grid is empty.")
            if not np.all(np.isfinite(grid)) or np.any(grid < 0):
                raise ValueError(f"lam_grid must hold finite values >= 0, got {grid.tolist()}.")
            return sorted({float(v) for v in grid})
        degree = qp.L.diagonal()
        scale = 2.0 * qp.weight.mean() / degree.mean() if degree.mean() > 0 else 1.0
        return [float(c * scale) for c in DEFAULT_RELATIVE_LAM_GRID]

    def _select_lam(self, U, y, w, full_qp: MRMICQP) -> float:
        candidates = self._lam_candidates(full_qp)
        fold_of = cv_fold_ids(y, self.cv, self.random_state)
        sse = np.zeros(len(candidates))
        settings = self._osqp_settings()
        for f in range(self.cv):
            test = fold_of == f
            train = ~test
            qp = _build_qp(U[train], y[train], w[train], self.graph, self.n_neighbors, settings)
            for c, lam in enumerate(candidates):
                p, _ = qp.solve(lam)
                pred = _interpolate(self.interpolation, qp.points, p, U[test])
                sse[c] += float(np.dot(w[test], (y[test] - pred) ** 2))
        scores = sse / w.sum()
        self.cv_scores_ = {float(lam): float(s) for lam, s in zip(candidates, scores, strict=True)}
        return candidates[int(np.argmin(scores))]  # ties: the smaller lam

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
        return linear_interpolate(points, values, queries)
    return monotone_interpolate(points, values, queries)
