"""BernsteinFusion: a coordinate-wise monotone tensor Bernstein polynomial (Wang & Liu 2020)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import FusionEstimator, cv_fold_ids
from ..ecdf import ConstantColumnError
from .basis import STRUCTURES, component_shapes, evaluate, evaluate_structured, make_components
from .qp import GramStats, MonotoneQP, StructuredQP, accumulate_gram, heldout_sse

__all__ = ["BernsteinFusion", "DEFAULT_DEGREE_GRID", "DASK_ECDF_KNOTS"]

#: Degrees tried by ``degree="cv"`` when no grid is given (same degree on every axis), before
#: dropping candidates whose coefficient count exceeds ``max_coefficients`` or the number of
#: training rows in a fold.
DEFAULT_DEGREE_GRID = tuple(range(1, 11))

#: OSQP tolerance of the cross-validation solves (never tighter than the user's).
CV_EPS = 1e-5

#: Knots per column of the ECDF sketch when ``ecdf_knots="auto"`` and the input is dask.
DASK_ECDF_KNOTS = 10_000


def _is_dask(x) -> bool:
    # The dask collection protocol, checked without importing dask.
    return x is not None and callable(getattr(x, "__dask_graph__", None))


class BernsteinFusion(FusionEstimator):
    """Monotone, calibrated fusion of M scores with a tensor Bernstein polynomial.

    The calibrating function on ECDF-normalized scores ``u`` in ``[0, 1]^M`` is

    .. math:: f(u) = \\sum_{k_1=0}^{K_1} \\cdots \\sum_{k_M=0}^{K_M}
              \\beta_{k_1 \\dots k_M} \\prod_m b_{k_m, K_m}(u_m),

    fitted by (weighted) least squares subject to ``beta`` non-decreasing along every axis
    and ``0 <= beta <= 1`` (Wang & Liu 2020, Theorem 1, for any M). These linear constraints
    make ``f`` non-decreasing in every score and valued in ``[0, 1]`` over the whole cube;
    the QP has ``P = prod(K_m + 1)`` variables whatever the number of rows, and is solved
    with OSQP on the normal equations, accumulated over row chunks.

    Parameters
    ----------
    degree : int, sequence of int, or "cv", default="cv"
        Polynomial degree per axis (one int for all axes, or one per axis), or ``"cv"`` to
        choose it by ``cv``-fold cross-validation (lowest held-out Brier score; ties go to
        the smaller model).
    degree_grid : sequence of int or of tuples, optional
        Candidates for ``degree="cv"``. Ints mean the same degree on every axis. Default
        ``1..10`` (:data:`DEFAULT_DEGREE_GRID`). Candidates with more coefficients than
        ``max_coefficients`` or than training rows per fold are skipped.
    cv : int, default=5
        Folds for ``degree="cv"`` (stratified when every class has at least ``cv`` rows).
    random_state : int, RandomState or None
        Shuffling of the cross-validation folds.
    eps_abs, eps_rel : float
        OSQP tolerances.
    max_iter : int
        OSQP iteration limit.
    max_coefficients : int, default=4096
        Refuse (``ValueError``) a model with more coefficients: the dense ``P x P`` normal
        equations take ``8 P^2`` bytes (134 MB at the default bound).
    ecdf_knots : int >= 2, None or "auto", default="auto"
        Knots per column of the ECDF normalizer. ``None``: the exact mid-ECDF of all training
        scores (one knot per distinct value). An int ``k``: a quantile sketch with at most
        ``k`` knots, exact mid-ECDF values at the knots, and a sup-norm error of at most
        ``ecdf_error_bound_`` against the exact one (see :mod:`fusion.bernstein.sketch`); a
        column with at most ``k`` distinct values is kept exactly. ``"auto"``: ``None`` for
        in-memory input, ``10_000`` (:data:`DASK_ECDF_KNOTS`) for dask input. The exact ECDF
        of ``n`` continuous scores stores ``2 n`` floats per column and every prediction
        searches it (tens of seconds per column at ``n = 10^7``, against about a second with
        ``10^4`` knots): pass an int for large in-memory training sets too.
    structure : {"tensor", "additive", "pairwise"}, default="tensor"
        ``"tensor"``: the full tensor polynomial above (``prod(K_m + 1)`` coefficients).
        ``"additive"``: ``f(u) = sum_m g_m(u_m)`` with univariate Bernstein ``g_m``
        (``sum(K_m + 1)`` coefficients). ``"pairwise"``: ``f(u) = sum_{m<l} h_ml(u_m, u_l)``
        with bivariate tensor Bernstein ``h_ml`` (``sum (K_m + 1)(K_l + 1)`` coefficients),
        which contains every additive model too. Every component has coefficients
        non-decreasing along each of its axes, so ``f`` is non-decreasing in every score, and
        ``0 <= f <= 1`` on the whole cube holds exactly through two linear constraints on the
        corner coefficients (proof in :func:`fusion.bernstein.qp.structure_constraints`). For
        M from 4 to 10 the tensor has too many coefficients; these keep monotonicity with far
        fewer. With ``M <= 2``, ``"pairwise"`` is ``"tensor"``.

    Attributes
    ----------
    coef_ : ndarray
        Tensor structure: shape ``(K_1 + 1, ..., K_M + 1)``, non-decreasing along every axis
        and within ``[0, 1]`` exactly. Other structures: 1-D, the flattened (C order)
        coefficient tensors of the components in ``components_``, one after the other;
        component ``c`` has shape ``tuple(degree_[a] + 1 for a in components_[c])``, is
        non-decreasing along each axis, and all but the first have 0-corner coefficient 0.
    components_ : tuple of tuple of int
        Score columns (axes) of each component; ``((0, ..., M - 1),)`` for the tensor.
    degree_ : tuple of int
        Degree per axis actually used.
    cv_scores_ : dict
        Only when ``degree="cv"``: held-out Brier score for each candidate degree tuple.
    solver_status_ : str
        OSQP's status for the final fit.
    n_iter_ : int
        OSQP iterations of the final fit (bounded by ``max_iter``; the solves of the
        cross-validation are not counted).
    ecdf_knots_ : int or None
        The ``ecdf_knots`` actually used (``"auto"`` resolved).
    ecdf_error_bound_ : float
        Bound on ``sup_t |F_used(t) - F_exact(t)|`` over all columns, where ``F_exact`` is the
        exact training mid-ECDF: 0 for the exact ECDF, else the largest gap between
        consecutive sketch values of a sketched column.
    classes_, ecdf_, n_features_in_, feature_names_in_
        See :class:`fusion._base.FusionEstimator`.

    Notes
    -----
    ``fit`` also accepts dask arrays and dask DataFrames for ``S``, ``y`` and
    ``sample_weight``: the data stay on the cluster, only per-block summaries and sufficient
    statistics travel, and the QP is solved on the client (:mod:`fusion.bernstein.distributed`).
    ``predict_proba``/``predict`` of a dask collection return lazy dask arrays.

    During cross-validation the ECDF is the one fitted on all training rows (as in the
    paper's protocol); only the QP is refitted per fold. Each candidate degree costs one
    pass over the data: per-fold sufficient statistics are accumulated once, every training
    fold's statistics are "total minus fold", and the held-out squared error follows from
    the fold's statistics without evaluating the polynomial. The final model reuses the
    totals, so ``fit`` with ``degree="cv"`` never evaluates the design twice.

    With monotone coefficients the steepest rise along an axis (a step in the coefficients)
    is ``P(Binomial(K, u) >= j)``, spread over a width of about ``sqrt(u (1 - u) / K)`` in
    ``u`` (0.16 at ``K = 10`` near ``u = 1/2``). A very sharp scorer, whose ``P(Y | u)``
    jumps within a few percent of the normalized scale, needs degrees beyond the default
    grid. If
    ``cv_scores_`` still falls at the largest candidate, pass a larger ``degree_grid`` (and
    enough rows: ``prod(K_m + 1)`` coefficients per fold).

    Examples
    --------
    >>> import numpy as np
    >>> from fusion import BernsteinFusion
    >>> rng = np.random.default_rng(0)
    >>> S = rng.normal(size=(400, 2)); y = (S.sum(1) + rng.normal(size=400) > 0).astype(int)
    >>> model = BernsteinFusion(degree=3).fit(S, y)
    >>> model.coef_.shape
    (4, 4)
    """

    _allows_1d = True
    _monotone = True
    _supports_multiclass = True
    _parameter_constraints = {
        "degree": [Interval(Integral, 0, None, closed="left"), "array-like", StrOptions({"cv"})],
        "degree_grid": ["array-like", None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "eps_abs": [Interval(Real, 0, None, closed="neither")],
        "eps_rel": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_coefficients": [Interval(Integral, 1, None, closed="left")],
        "ecdf_knots": [Interval(Integral, 2, None, closed="left"), None, StrOptions({"auto"})],
        "structure": [StrOptions(set(STRUCTURES))],
    }

    def __init__(
        self,
        degree="cv",
        *,
        degree_grid=None,
        cv: int = 5,
        random_state=None,
        eps_abs: float = 1e-7,
        eps_rel: float = 1e-7,
        max_iter: int = 20_000,
        max_coefficients: int = 4096,
        ecdf_knots="auto",
        structure: str = "tensor",
    ):
        self.degree = degree
        self.degree_grid = degree_grid
        self.cv = cv
        self.random_state = random_state
        self.eps_abs = eps_abs
        self.eps_rel = eps_rel
        self.max_iter = max_iter
        self.max_coefficients = max_coefficients
        self.ecdf_knots = ecdf_knots
        self.structure = structure

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, S, y, sample_weight=None):
        """Fit the calibrating function on training scores, in memory or on a dask cluster.

        Parameters
        ----------
        S : array-like of shape (n, M), DataFrame, dask array or dask DataFrame
            Scores of the ``M`` classifiers (any strictly increasing scale).
        y : array-like of shape (n,), dask array or dask Series
            Binary labels of any two values; the second in sorted order is positive.
        sample_weight : array-like of shape (n,), dask array or dask Series, optional
            Non-negative row weights.

        Returns
        -------
        self
        """
        if _is_dask(S):
            from .distributed import fit_dask

            # As the in-memory fit: on a fresh copy, adopted only when it succeeds.
            work = self._blank()
            fit_dask(work, S, y, sample_weight)
            self._adopt(work)
            return self
        if _is_dask(y) or _is_dask(sample_weight):
            # S is in memory on the client already, so its labels and weights fit there too.
            y = y.compute() if _is_dask(y) else y
            if _is_dask(sample_weight):
                sample_weight = sample_weight.compute()
        return super().fit(S, y, sample_weight)

    def _osqp_settings(self) -> dict:
        return {
            "eps_abs": self.eps_abs,
            "eps_rel": self.eps_rel,
            "max_iter": self.max_iter,
        }

    def _resolved_knots(self, dask: bool) -> int | None:
        if isinstance(self.ecdf_knots, str):  # "auto"
            return DASK_ECDF_KNOTS if dask else None
        return None if self.ecdf_knots is None else int(self.ecdf_knots)

    def _fit_normalized(self, U, y, sample_weight):
        M = U.shape[1]
        components = make_components(self.structure, M)
        if isinstance(self.degree, str):
            degrees, stats = self._select_degree(U, y, sample_weight, components)
        else:
            degrees = _as_degrees(self.degree, M, "degree")
            self._check_size(degrees, U.shape[0], components)
            stats = accumulate_gram(U, y, sample_weight, degrees, components=components)
            self.__dict__.pop("cv_scores_", None)
        self._solve_final(degrees, stats, components)

    def _make_qp(self, degrees, components, cv: bool = False):
        shapes = component_shapes(degrees, components)
        settings = self._osqp_settings()
        if cv:
            # Candidates are ranked by held-out Brier scores that differ in the third or fourth
            # digit; 1e-5 tolerances resolve them at a third of the iterations. The final fit
            # uses the user's tolerances.
            settings["eps_abs"] = max(settings["eps_abs"], CV_EPS)
            settings["eps_rel"] = max(settings["eps_rel"], CV_EPS)
        if _is_tensor(components, len(degrees)):
            return MonotoneQP(shapes[0], **settings)
        return StructuredQP(shapes, **settings)

    def _solve_final(self, degrees, stats: GramStats, components) -> None:
        self.degree_ = tuple(int(k) for k in degrees)
        self.components_ = tuple(tuple(int(a) for a in c) for c in components)
        qp = self._make_qp(degrees, components)
        self.coef_, self.solver_status_ = qp.solve(stats)
        self.n_iter_ = qp.last_iterations

    def _check_size(self, degrees: tuple[int, ...], n_rows: int, components=None) -> None:
        P = _n_coef(degrees, components)
        if P > self.max_coefficients:
            hint = "" if self.structure != "tensor" else ", or use structure='additive'/'pairwise'"
            raise ValueError(
                f"degree {degrees} gives {P} coefficients, above max_coefficients="
                f"{self.max_coefficients} (the normal equations need {8 * P * P / 1e6:.0f} MB); "
                f"lower the degree or raise max_coefficients{hint}."
            )
        if P > n_rows:
            raise ValueError(
                f"degree {degrees} gives {P} coefficients but there are only {n_rows} training "
                "rows; lower the degree (or use degree='cv')."
            )

    def _candidates(self, M: int, n_train: int, components=None) -> list[tuple[int, ...]]:
        grid = DEFAULT_DEGREE_GRID if self.degree_grid is None else self.degree_grid
        if len(grid) == 0:
            raise ValueError("degree_grid is empty.")
        cands = []
        for g in grid:
            d = _as_degrees(g, M, "degree_grid entry")
            if d not in cands and _n_coef(d, components) <= min(self.max_coefficients, n_train):
                cands.append(d)
        if not cands:
            raise ValueError(
                f"no degree in the grid fits: every candidate has more coefficients than "
                f"min(max_coefficients={self.max_coefficients}, rows per training fold="
                f"{n_train})."
            )
        return cands

    def _select_degree(self, U, y, w, components) -> tuple[tuple[int, ...], GramStats]:
        n = U.shape[0]
        fold_of = cv_fold_ids(y, self.cv, self.random_state)
        n_train = n - np.bincount(fold_of).max()
        order = np.argsort(fold_of, kind="stable")
        bounds = np.searchsorted(fold_of[order], np.arange(self.cv + 1))
        Uo, yo, wo = U[order], y[order], w[order]
        results = {}
        for degrees in self._candidates(U.shape[1], n_train, components):
            folds = [
                accumulate_gram(Uo[a:b], yo[a:b], wo[a:b], degrees, components=components)
                for a, b in zip(bounds[:-1], bounds[1:], strict=True)
            ]
            results[degrees] = self._cv_score(degrees, folds, components)
        return self._pick(results)

    def _cv_score(self, degrees, folds: list[GramStats], components) -> tuple[float, GramStats]:
        """Held-out Brier score of one candidate from its per-fold statistics, and the totals."""
        qp = self._make_qp(degrees, components, cv=True)
        total = folds[0]
        for f in folds[1:]:
            total = total + f
        sse = 0.0
        for f in folds:
            if f.sw > 0:  # a fold can be empty in a tiny distributed data set
                beta, _ = qp.solve(total - f)
                sse += heldout_sse(f, beta)
        return sse / total.sw, total

    def _pick(self, results: dict) -> tuple[tuple[int, ...], GramStats]:
        scores = {d: score for d, (score, _) in results.items()}
        best = min(scores, key=scores.get)  # dict order: ties keep the earlier (smaller) one
        self.cv_scores_ = scores
        return best, results[best][1]

    # -- prediction --------------------------------------------------------------------------
    def predict_proba(self, S):
        """Class probabilities for raw scores; lazy and blockwise for a dask collection.

        Parameters
        ----------
        S : array-like of shape (n, M), DataFrame, dask array or dask DataFrame

        Returns
        -------
        proba : ndarray or dask array of shape (n, 2)
            Columns follow ``classes_``; the second is ``P(Y = classes_[1])``.
        """
        if _is_dask(S):
            from .distributed import predict_proba_dask

            return predict_proba_dask(self, S)
        if self._is_multiclass() or S is None or np.ndim(S) != 2:
            return super().predict_proba(S)
        # FusionEstimator.predict_proba, with fewer full-size temporaries (it clips U and p
        # into copies and stacks a third): normalized scores already lie inside (0, 1).
        U = self._normalize(S)
        p = np.asarray(self._calibrate(U), dtype=float)
        del U
        if not np.all(np.isfinite(p)):
            raise RuntimeError(
                "BernsteinFusion produced non-finite probabilities; please report this."
            )
        proba = np.empty((p.shape[0], 2))
        np.clip(p, 0.0, 1.0, out=proba[:, 1])
        np.subtract(1.0, proba[:, 1], out=proba[:, 0])
        return proba

    def predict(self, S):
        """Labels at threshold 0.5 (the negative class on an exact tie); lazy for dask input."""
        if _is_dask(S):
            from .distributed import predict_dask

            return predict_dask(self, S)
        return super().predict(S)

    def _calibrate(self, U):
        if _is_tensor(self.components_, U.shape[1]):
            return evaluate(self.coef_, U)
        return evaluate_structured(self.coef_, U, self.degree_, self.components_)


def _is_tensor(components, M: int) -> bool:
    return tuple(tuple(c) for c in components) == (tuple(range(M)),)


def _n_coef(degrees, components=None) -> int:
    if components is None:
        return int(np.prod([k + 1 for k in degrees]))
    return int(sum(np.prod(s) for s in component_shapes(degrees, components)))


def _check_not_constant(knots: np.ndarray, j: int) -> None:
    if knots.shape[0] < 2:
        raise ConstantColumnError(
            f"score column {j} is constant (every value equals {knots[0]!r}); a "
            "constant score carries no ranking information and cannot be calibrated."
        )


def _as_degrees(value, M: int, what: str) -> tuple[int, ...]:
    if isinstance(value, (Integral, np.integer)) and not isinstance(value, bool):
        degrees = (int(value),) * M
    else:
        try:
            degrees = tuple(int(v) for v in value)
            ok = all(float(v) == int(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(
                f"{what} must be an int or a sequence of ints, got {value!r}."
            ) from None
        if not ok:
            raise ValueError(f"{what} must hold integers, got {value!r}.")
        if len(degrees) != M:
            raise ValueError(
                f"{what} {value!r} has {len(degrees)} entries but there are {M} score columns."
            )
    if any(k < 0 for k in degrees):
        raise ValueError(f"{what} must be non-negative, got {value!r}.")
    return degrees
