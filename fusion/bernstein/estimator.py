"""BernsteinFusion: a coordinate-wise monotone tensor Bernstein polynomial (Wang & Liu 2020)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import FusionEstimator
from .basis import evaluate
from .qp import GramStats, MonotoneQP, accumulate_gram, heldout_sse

__all__ = ["BernsteinFusion", "DEFAULT_DEGREE_GRID"]

#: Degrees tried by ``degree="cv"`` when no grid is given (same degree on every axis), before
#: dropping candidates whose coefficient count exceeds ``max_coefficients`` or the number of
#: training rows in a fold.
DEFAULT_DEGREE_GRID = tuple(range(1, 11))


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

    Attributes
    ----------
    coef_ : ndarray of shape (K_1 + 1, ..., K_M + 1)
        Coefficients; non-decreasing along every axis and within ``[0, 1]`` exactly.
    degree_ : tuple of int
        Degree per axis actually used.
    cv_scores_ : dict
        Only when ``degree="cv"``: held-out Brier score for each candidate degree tuple.
    solver_status_ : str
        OSQP's status for the final fit.
    classes_, ecdf_, n_features_in_, feature_names_in_
        See :class:`fusion._base.FusionEstimator`.

    Notes
    -----
    During cross-validation the ECDF is the one fitted on all training rows (as in the
    paper's protocol); only the QP is refitted per fold. Each candidate degree costs one
    pass over the data: per-fold sufficient statistics are accumulated once, every training
    fold's statistics are "total minus fold", and the held-out squared error follows from
    the fold's statistics without evaluating the polynomial. The final model reuses the
    totals, so ``fit`` with ``degree="cv"`` never evaluates the design twice.

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
    _parameter_constraints = {
        "degree": [Interval(Integral, 0, None, closed="left"), "array-like", StrOptions({"cv"})],
        "degree_grid": ["array-like", None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "eps_abs": [Interval(Real, 0, None, closed="neither")],
        "eps_rel": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_coefficients": [Interval(Integral, 1, None, closed="left")],
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
    ):
        self.degree = degree
        self.degree_grid = degree_grid
        self.cv = cv
        self.random_state = random_state
        self.eps_abs = eps_abs
        self.eps_rel = eps_rel
        self.max_iter = max_iter
        self.max_coefficients = max_coefficients

    # -- fitting -----------------------------------------------------------------------------
    def _osqp_settings(self) -> dict:
        return {
            "eps_abs": self.eps_abs,
            "eps_rel": self.eps_rel,
            "max_iter": self.max_iter,
        }

    def _fit_normalized(self, U, y, sample_weight):
        M = U.shape[1]
        if isinstance(self.degree, str):
            degrees, stats = self._select_degree(U, y, sample_weight)
        else:
            degrees = _as_degrees(self.degree, M, "degree")
            self._check_size(degrees, U.shape[0])
            stats = accumulate_gram(U, y, sample_weight, degrees)
            self.__dict__.pop("cv_scores_", None)
        self.degree_ = degrees
        self.coef_, self.solver_status_ = MonotoneQP(
            [k + 1 for k in degrees], **self._osqp_settings()
        ).solve(stats)

    def _check_size(self, degrees: tuple[int, ...], n_rows: int) -> None:
        P = _n_coef(degrees)
        if P > self.max_coefficients:
            raise ValueError(
                f"degree {degrees} gives {P} coefficients, above max_coefficients="
                f"{self.max_coefficients} (the normal equations need {8 * P * P / 1e6:.0f} MB); "
                "lower the degree or raise max_coefficients."
            )
        if P > n_rows:
            raise ValueError(
                f"degree {degrees} gives {P} coefficients but there are only {n_rows} training "
                "rows; lower the degree (or use degree='cv')."
            )

    def _candidates(self, M: int, n_train: int) -> list[tuple[int, ...]]:
        grid = DEFAULT_DEGREE_GRID if self.degree_grid is None else self.degree_grid
        if len(grid) == 0:
            raise ValueError("degree_grid is empty.")
        cands = []
        for g in grid:
            d = _as_degrees(g, M, "degree_grid entry")
            if d not in cands and _n_coef(d) <= min(self.max_coefficients, n_train):
                cands.append(d)
        if not cands:
            raise ValueError(
                f"no degree in the grid fits: every candidate has more coefficients than "
                f"min(max_coefficients={self.max_coefficients}, rows per training fold="
                f"{n_train})."
            )
        return cands

    def _select_degree(self, U, y, w) -> tuple[tuple[int, ...], GramStats]:
        n = U.shape[0]
        fold_of = _fold_ids(y, self.cv, self.random_state)
        n_train = n - np.bincount(fold_of).max()
        order = np.argsort(fold_of, kind="stable")
        bounds = np.searchsorted(fold_of[order], np.arange(self.cv + 1))
        Uo, yo, wo = U[order], y[order], w[order]
        settings = self._osqp_settings()
        scores: dict[tuple[int, ...], float] = {}
        totals: dict[tuple[int, ...], GramStats] = {}
        for degrees in self._candidates(U.shape[1], n_train):
            qp = MonotoneQP([k + 1 for k in degrees], **settings)
            folds = [
                accumulate_gram(Uo[a:b], yo[a:b], wo[a:b], degrees)
                for a, b in zip(bounds[:-1], bounds[1:], strict=True)
            ]
            total = folds[0]
            for f in folds[1:]:
                total = total + f
            sse = 0.0
            for f in folds:
                beta, _ = qp.solve(total - f)
                sse += heldout_sse(f, beta)
            scores[degrees] = sse / total.sw
            totals[degrees] = total
        best = min(scores, key=scores.get)  # dict order: ties keep the earlier (smaller) one
        self.cv_scores_ = scores
        return best, totals[best]

    # -- prediction --------------------------------------------------------------------------
    def _calibrate(self, U):
        return evaluate(self.coef_, U)


def _n_coef(degrees) -> int:
    return int(np.prod([k + 1 for k in degrees]))


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


def _fold_ids(y: np.ndarray, n_folds: int, random_state) -> np.ndarray:
    n = y.shape[0]
    if n < n_folds:
        raise ValueError(f"cv={n_folds} folds need at least {n_folds} rows, got {n}.")
    counts = np.bincount(y.astype(int), minlength=2)
    splitter = (
        StratifiedKFold(n_folds, shuffle=True, random_state=random_state)
        if counts.min() >= n_folds
        else KFold(n_folds, shuffle=True, random_state=random_state)
    )
    fold_of = np.empty(n, dtype=np.int64)
    for f, (_, test) in enumerate(splitter.split(np.zeros(n), y)):
        fold_of[test] = f
    return fold_of
