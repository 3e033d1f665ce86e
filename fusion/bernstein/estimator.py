"""BernsteinFusion: monotone fusion with tensor Bernstein polynomials (Wang & Liu 2020), by
default in a semi-parametric logistic model on the scores' own scale."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import COMMON_PARAMETERS, SATURATED, SKETCH_KNOTS, FusionEstimator
from .._lstsq import LeastSquaresStats, heldout_sse
from .._multiclass import check_multiclass_targets
from .._progress import Progress
from .._solver import SolverWarning, one_blas_thread
from .._validation import canonical_weights, check_sample_weight, cv_splits, fold_ids
from .._warn import caller_level
from . import bootstrap, logistic
from .basis import (
    STRUCTURES,
    component_shapes,
    evaluate,
    evaluate_structured,
    make_components,
)
from .cells import RowData, aggregate_cells, cell_edges, hash_folds, resolve_bins
from .checks import as_degrees, fold_seed
from .pairs import detect_scale, normalizer, row_folds
from .qp import MonotoneQP, StructuredQP, accumulate_gram
from .scale import (
    BASES,
    InverseECDF,
    choose_bases,
    knot_range,
    own_scale,
    scale_constants,
    scores_scale,
)
from .shared import (
    BIAS_GRID,
    fit_shared,
    paired_se,
    shared_layout,
    shared_proba,
    shared_proba_normalized,
)
from .shared_dask import is_multiclass_dask

__all__ = [
    "BernsteinFusion",
    "DEFAULT_DEGREE_GRID",
    "DEFAULT_LAM_GRID",
    "default_lam_grid",
    "DASK_ECDF_KNOTS",
    "RANK_ONLY_AUTO_COEFFICIENTS",
    "auto_degree",
]

#: Degrees tried by ``degree="cv"`` when no grid is given (same degree on every axis), before
#: dropping candidates whose coefficient count exceeds ``max_coefficients`` or (rank-only
#: model) the number of training rows in a fold.
DEFAULT_DEGREE_GRID = tuple(range(1, 11))


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

#: Knots per column of the ECDF sketch when ``ecdf_knots="auto"`` and the input is dask (as
#: for in-memory fits from 100,000 rows on, see :class:`fusion.FusionEstimator`).
DASK_ECDF_KNOTS = SKETCH_KNOTS


def _is_dask(x) -> bool:
    # The dask collection protocol, checked without importing dask.
    return x is not None and callable(getattr(x, "__dask_graph__", None))


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


@dataclass(eq=False, repr=False)
class BernsteinFusion(FusionEstimator):
    """Monotone, calibrated fusion of M scores with tensor Bernstein polynomials.

    Two models share the Bernstein machinery; ``base`` chooses.

    **Default (``base="auto"``): semi-parametric logistic model.** With ``z_m`` score ``m`` on
    its own scale (the logit of a probability, the raw score otherwise; see ``base``) and
    ``u_m`` its ECDF value,

    .. math:: P(Y = 1 \\mid s) = \\operatorname{expit}\\Big( \\sum_m c_m z_m + g(u) \\Big),
              \\qquad g(u) = \\sum_{k} \\theta_{k_1 \\dots k_M} \\prod_m b_{k_m, K_m}(u_m),

    with ``c_m >= 0`` and the coefficients ``theta`` of ``g`` unbounded but non-decreasing
    along every axis (its constant term is the intercept). It is fitted by penalized maximum
    likelihood: weighted mean log-loss plus ``(lam / 2)`` times the squared first differences
    of ``theta`` along every axis (normalized so that one ``lam`` means about the same
    smoothness at every degree; :mod:`fusion.bernstein.logistic`), plus a weak ridge
    ``0.05 / n`` times the squared weights of the standardized ``z_m`` (the penalty of
    ``LogisticRegression(C=10)``; it keeps a separating score's weight finite). As ``lam``
    grows ``g`` becomes a constant and the model becomes logistic regression on the ``z_m``
    with non-negative weights ("LR on logits", the usual stacking of probabilities); ``lam`` is
    chosen by ``cv``-fold cross-validation of the log-loss along a warm-started path, with
    the one-standard-error rule toward larger ``lam`` (the standard error of each penalty's
    excess held-out loss over the best one, from the rows' paired differences). The solver
    takes Newton steps, each a QP with the monotone constraints solved by OSQP, then
    projects exactly onto the constraints and backtracks (Armijo); it stops on the Newton
    decrement. From about 20,000 rows (and on dask) the fit runs on fine cells of the
    scores instead of the rows (``bins``).

    **Rank-only (``base=None``): the paper's model.** The calibrating function on
    ECDF-normalized scores is ``f(u) = sum_k beta_k prod_m b_{k_m, K_m}(u_m)``, fitted by
    (weighted) least squares subject to ``beta`` non-decreasing along every axis and
    ``0 <= beta <= 1`` (Wang & Liu 2020, Theorem 1, for any M), with the degree chosen by
    cross-validation of the Brier score. The QP has ``P = prod(K_m + 1)`` variables whatever
    the number of rows, and is solved with OSQP on the normal equations, accumulated over row
    chunks. From M = 3 on ``f`` may instead be a sum of monotone univariate or bivariate
    Bernstein polynomials, chosen with the degree by the same cross-validation (see
    ``structure``): ``(K + 1)^M`` coefficients make the tensor too costly beyond low degrees.
    It depends on the scores only through their ranks.

    Guarantees (both models): the fused probability is non-decreasing in every score,
    everywhere (not only at training points), and continuous. The default model's
    predictions lie strictly inside ``(0, 1)`` (the linear predictor is capped at
    ``+-35``, so none rounds to 0 or 1); the rank-only model's lie in ``[0, 1]`` and are
    unchanged by any strictly increasing transform of a score. Neither model can put a
    negative weight on a score, as unconstrained logistic regression on logits sometimes
    does (an overfitted or saturated scorer given a sharper one): where that helps, the
    monotone fit cannot follow.

    Parameters
    ----------
    base : {"auto", "logit", "identity"} or None, default="auto"
        Scale of the linear features ``z_m``. ``"logit"``: ``log(s / (1 - s))`` of the score
        clipped to ``[1e-6, 1 - 1e-6]``; ``"identity"``: the raw score; ``"auto"``: logit for
        a column whose training values all lie in ``[0, 1]``, identity otherwise. Beyond the
        training range ``z_m`` is winsorized (a new extreme or infinite score counts as the
        most extreme training score), and it is standardized internally for conditioning;
        predictions do not depend on the unit of a raw score. ``None``: the rank-only model.
        Details: :mod:`fusion.bernstein.scale`.
    degree : int, sequence of int, "auto" or "cv", default="auto"
        Polynomial degree per axis (one int for all axes, or one per axis). ``"auto"``:
        default model: :func:`auto_degree` (8 per axis at M <= 2, growing to 12 from about
        12,700 rows; 4 at M = 3 with a tensor; 8 with the additive structure; the penalty
        sets the smoothness); rank-only model: ``"cv"``. ``"cv"``: chosen by
        cross-validation from ``degree_grid`` (rank-only: lowest held-out Brier score, jointly
        with the structure for ``structure="auto"`` at M >= 3, ties to the smaller model;
        default model: jointly with ``lam``, one-standard-error rule toward larger ``lam``,
        then smaller degree).
    degree_grid : sequence of int or of tuples, optional
        Candidates for ``degree="cv"``. Ints mean the same degree on every axis. Default
        ``1..10`` (:data:`DEFAULT_DEGREE_GRID`). Candidates with more coefficients than
        ``max_coefficients`` (or, rank-only, than training rows per fold; rank-only with
        ``structure="auto"`` at M >= 3, tensor and pairwise candidates beyond
        :data:`RANK_ONLY_AUTO_COEFFICIENTS`) are skipped.
    lam : float >= 0, inf or "cv", default="cv"
        Default model only: the penalty weight, or ``"cv"`` to choose it from ``lam_grid``.
        ``inf`` gives logistic regression on the ``z_m`` with ``c_m >= 0`` and ``g``
        constant.
    lam_grid : sequence of float, optional
        Candidates for ``lam="cv"``, visited from the largest down (warm starts; the path
        stops early once the held-out loss has risen clearly above its minimum). Default
        :func:`default_lam_grid`: ``inf``, then 10 down to 1e-6 in half-decade steps,
        continued down to ``0.02 / n`` beyond 20,000 rows.
    structure : {"auto", "tensor", "additive", "pairwise"}, default="auto"
        ``"tensor"``: ``g`` (or ``f``) is the full tensor polynomial (``prod(K_m + 1)``
        coefficients). ``"additive"``: a sum of univariate Bernstein polynomials, one per
        score (``sum(K_m + 1)`` coefficients). ``"pairwise"``: a sum of bivariate tensors,
        one per pair of scores (``sum (K_m + 1)(K_l + 1)`` coefficients), which contains
        every additive model too; with ``M <= 2`` it is the tensor. Every component is
        non-decreasing along each of its axes. ``"auto"``: rank-only model: the tensor at
        M <= 2; from M = 3 on the additive, pairwise and tensor models, the structure chosen
        jointly with the degree by the cross-validation of the Brier score (lowest held-out
        score over all candidates, ties to fewer coefficients), with the tensor and pairwise
        candidates limited to :data:`RANK_ONLY_AUTO_COEFFICIENTS` (256) coefficients (at
        M = 4: tensor degrees up to 3, pairwise up to 5; at M = 6: tensor degree 1, pairwise
        up to 3; additive: the whole grid), so that a fit costs seconds rather than the
        minutes of the full tensor; with a fixed ``degree`` that degree in each structure
        within ``max_coefficients``. On known truths the additive model wins for additive
        ones, pairwise terms for pairwise interactions and the low-degree tensor for a
        logistic truth (interactions of every order on the probability scale). Default
        model: at M = 2 and 3 both the tensor and the additive model, one chosen by the
        cross-validation that chooses ``lam`` (on realistic scorers the additive model with
        its finer per-score resolution often wins at M = 3; interactions favour the tensor);
        additive for M >= 4 (the tensor's coefficients grow as ``K^M``). In the rank-only
        model ``0 <= f <= 1`` holds on the whole cube through two linear constraints on the
        corner coefficients (proof in :func:`fusion.bernstein.qp.structure_constraints`).
    cv : int, cross-validation splitter or iterable of (train, test), default=5
        Splits of the cross-validation. An int gives that many folds, stratified, assigned
        by each row's content (its normalized scores and label) so that they depend neither
        on the order of the rows nor, for a fit on cells (``bins``), on their chunking (a
        dask fit then equals the in-memory fit); seeded by ``random_state``. A splitter
        (``StratifiedKFold(...)``) or a list of ``(train, test)`` index arrays into the rows
        of ``S`` is used as given (a fit on cells needs test sets that partition the rows).
    bins : int >= 2, None or "auto", default="auto"
        Default model only: aggregation of rows into cells before the fit
        (:mod:`fusion.bernstein.cells`): every score axis is cut at ``bins`` quantiles and
        ``bins`` equally spaced values of ``z_m``, and the fit runs on the occupied cells'
        counts, positives and mean ``z`` and ``u``. ``None``: the fit runs on the rows.
        ``"auto"``: rows below :func:`fusion.bernstein.cells.auto_cell_rows` rows (20,000
        for M <= 3, 100,000 above), cells of :func:`fusion.bernstein.cells.auto_bins` cuts
        (32 per axis at M = 2, 16 at M = 3, 8 above) from there on and always for dask input
        (where the cells are the sufficient statistic that travels).
    eps_abs, eps_rel : float, default=1e-7
        OSQP tolerances.
    max_iter : int, default=20000
        OSQP iteration limit (of every QP solve).
    max_coefficients : int, default=4096
        Refuse (``ValueError``) a model with more coefficients: the dense ``P x P`` normal
        equations or Hessian take ``8 P^2`` bytes (134 MB at the default bound).
        ``degree="auto"`` lowers its degree to fit.
    n_bootstrap : int >= 0, default=0
        Number of bootstrap refits for :meth:`predict_interval` (200 is a good value), on
        multinomial resamples of the training rows, of a richer model than the fit: the
        fitted interaction components plus one univariate component of twice the fitted
        degree per score (:mod:`fusion.bernstein.bootstrap`). Default model: its penalty is
        chosen by cross-validation on the fit's folds, and again on every resample from the
        reweighted held-out losses (lowest loss); with a given ``lam``, that one. Kept in
        ``bootstrap_coef_``. The point fit does not change. 0: none. In memory only (not
        for dask input).
    multiclass : {"auto", "shared", "per-class"}, default="auto"
        The model for multi-class scores ``(n, M, C)``. ``"shared"``: one monotone fusion
        shared by every class (:mod:`fusion.bernstein.multinomial`): for row ``i`` and class
        ``k``, ``eta_ik = sum_m c_m z_imk + sum_m g_m(u_imk)`` and the class distribution
        ``softmax(eta_i)``, with ``z_imk`` scorer ``m``'s log-probability of class ``k``
        (``base`` says whether the scores are probabilities or logits), ``u_imk`` its
        normalized value, ``c_m >= 0`` and every ``g_m`` a monotone Bernstein polynomial
        penalized by ``lam`` (chosen by cross-validation, one-standard-error rule toward
        ``g = 0``); its parameters do not grow with ``C``, it nests temperature scaling of
        the averaged log-probabilities, classes absent from the fusion sample get
        probabilities too (``classes=``), and its cost grows as ``n C``. ``"per-class"``: one
        binary fusion per class on that class's scores, coupled by a softmax
        (:mod:`fusion._multiclass`); it needs every class in the sample. ``"auto"``: the
        shared model (the rank-only model, ``base=None``, and ``missing="marginal"`` with
        missing scores are per-class).
    bias_penalty : float >= 0, inf or "cv", default="cv"
        Class-shared multi-class model only: the ridge ``(tau / 2) sum_k b_k^2`` on a bias
        ``b_k`` added to every class's ``eta_ik`` (classes that the scorers favour or
        neglect alike). ``inf``: no biases. ``"cv"``: chosen by the same cross-validation,
        after ``lam``, from ``inf`` and 1 down to 1e-6 (decades; the path stops once
        the held-out loss has risen or stayed flat), with the
        one-standard-error rule toward no biases.
    increasing, missing, ecdf_knots, random_state, verbose
        Shared by every estimator; see :class:`~fusion.FusionEstimator`. ``random_state``
        seeds the folds of an int ``cv`` (the default 0 makes fits reproducible);
        ``verbose`` shows the progress of the cross-validation (one step per candidate and
        ``lam``); ``missing="marginal"`` integrates a missing score out over its training
        distribution. ``ecdf_knots`` (a quantile sketch from 100,000 rows on by default)
        matters for the rank-only model and for the ``u`` of the default model; the default
        model's linear features ``z`` come from the scores themselves.

    Attributes
    ----------
    coef_ : ndarray
        Coefficients of ``g`` (default model) or ``f`` (rank-only). Tensor structure: shape
        ``(K_1 + 1, ..., K_M + 1)``, non-decreasing along every axis (rank-only: also within
        ``[0, 1]``). Other structures: 1-D, the flattened (C order) coefficient tensors of the
        components in ``components_``, one after the other; component ``c`` has shape
        ``tuple(degree_[a] + 1 for a in components_[c])``, is non-decreasing along each
        axis, and all but the first have 0-corner coefficient 0.
    base_ : tuple of str or None
        Base of every column (``"logit"`` or ``"identity"``); None for the rank-only model.
    base_coef_ : ndarray of shape (M,) or None
        Default model: ``c_m >= 0``, the weight of the standardized feature
        ``(z_m - base_shift_[m]) / base_scale_[m]``. None for the rank-only model.
    base_shift_, base_scale_ : ndarray of shape (M,) or None
        Standardization of ``z_m`` (median and interquartile range over the training
        distribution). None for the rank-only model.
    lam_ : float or None
        Default model: the penalty weight used (``inf``: ``g`` constant). None for the
        rank-only model.
    components_ : tuple of tuple of int
        Score columns (axes) of each component; ``((0, ..., M - 1),)`` for the tensor.
    degree_ : tuple of int
        Degree per axis actually used.
    cv_scores_ : dict
        Only after cross-validation. Rank-only: held-out Brier score for each candidate degree
        tuple, or for each ``(structure, degree tuple)`` when several structures competed
        (``structure="auto"`` at M >= 3). Default model: mean held-out log-loss for each
        ``(structure, degree tuple, lam)`` visited.
    cv_se_ : dict
        Default model, only after cross-validation: standard error of each
        ``cv_scores_`` entry (from the spread over the folds).
    n_cells_ : int or None
        Default model: number of cells the fit ran on (None: it ran on the rows).
    bootstrap_coef_ : ndarray of shape (n_bootstrap, n_coef) or None
        With ``n_bootstrap > 0``: the coefficients of every bootstrap refit (default model:
        the ``M`` linear weights, then the components' coefficients; rank-only: the
        components' coefficients), on the components of ``bootstrap_basis_``.
    bootstrap_basis_ : tuple of (axes, degrees) or None
        The refits' Bernstein components: the axes and the degree per axis of each.
    bootstrap_informed_ : ndarray of bool or None
        A regular grid on the unit cube (``G`` cuts per axis, about 20 training rows per
        cell): True where the cell holds training rows of both classes (see
        :meth:`predict_interval`).
    solver_status_ : str
        OSQP's status for the final QP (rank-only), ``"solved"`` or ``"newton: inaccurate"``
        for the final Newton solve (default model).
    n_iter_ : int
        Rank-only: OSQP iterations of the final fit (bounded by ``max_iter``). Default model:
        Newton iterations of the final fit. The solves of the cross-validation are not
        counted.
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
    statistics travel, and the fit runs on the client (:mod:`fusion.bernstein.distributed`).
    ``predict_proba``/``predict`` of a dask collection return lazy dask arrays.

    During cross-validation the ECDF (and for the default model the standardization of
    ``z``) is the one fitted on all training rows (as in the paper's protocol); only the
    coefficients are refitted per fold.

    Default model: a ``lam`` or degree chosen at the edge of its grid raises a
    ``UserWarning`` that names the parameter (``lam = inf``, the logistic-regression limit,
    is not an edge). The features ``z`` are computed from ``u`` (through the inverse of the
    ECDF), so the model is a function on the unit cube like the rank-only one
    (``calibrating_function``).

    Rank-only model: each candidate degree costs one pass over the data: per-fold sufficient
    statistics are accumulated once, every training fold's statistics are "total minus
    fold", and the held-out squared error follows from the fold's statistics without
    evaluating the polynomial. With monotone coefficients the steepest rise along an axis (a
    step in the coefficients) is ``P(Binomial(K, u) >= j)``, spread over a width of about
    ``sqrt(u (1 - u) / K)`` in ``u`` (0.16 at ``K = 10`` near ``u = 1/2``): a very sharp
    scorer needs degrees beyond the default grid.

    Examples
    --------
    >>> import numpy as np
    >>> from fusion import BernsteinFusion
    >>> rng = np.random.default_rng(0)
    >>> S = rng.normal(size=(400, 2)); y = (S.sum(1) + rng.normal(size=400) > 0).astype(int)
    >>> model = BernsteinFusion(degree=3).fit(S, y)
    >>> model.coef_.shape
    (4, 4)
    >>> bool(np.all(model.base_coef_ >= 0))
    True
    """

    _allows_1d = True
    _monotone = True
    _supports_multiclass = True
    #: Multiple of the standard error in the one-standard-error rule.
    _se_factor = 1.0
    _fitted_attributes = (
        "coef_",
        "components_",
        "degree_",
        "cv_scores_",
        "cv_se_",
        "solver_status_",
        "n_iter_",
        "base_",
        "base_coef_",
        "base_shift_",
        "base_scale_",
        "lam_",
        "n_cells_",
        "bootstrap_coef_",
        "bootstrap_basis_",
        "bootstrap_informed_",
        "logp_floor_",
        "class_bias_",
        "bias_penalty_",
        "multiclass_cv_",
    )
    _parameter_constraints = {
        "base": [StrOptions(set(BASES)), None],
        "degree": [
            Interval(Integral, 0, None, closed="left"),
            "array-like",
            StrOptions({"cv", "auto"}),
        ],
        "degree_grid": ["array-like", None],
        "lam": [Interval(Real, 0, None, closed="both"), StrOptions({"cv"})],
        "lam_grid": ["array-like", None],
        "structure": [StrOptions({"auto", *STRUCTURES})],
        "cv": ["cv_object"],
        "bins": [Interval(Integral, 2, None, closed="left"), None, StrOptions({"auto"})],
        "eps_abs": [Interval(Real, 0, None, closed="neither")],
        "eps_rel": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_coefficients": [Interval(Integral, 1, None, closed="left")],
        "n_bootstrap": [Interval(Integral, 0, None, closed="left")],
        "multiclass": [StrOptions({"auto", "shared", "per-class"})],
        "bias_penalty": [Interval(Real, 0, None, closed="both"), StrOptions({"cv"})],
        **COMMON_PARAMETERS,
    }

    base: str | None = "auto"
    _: KW_ONLY
    degree: int | Sequence[int] | str = "auto"
    degree_grid: Sequence | None = None
    lam: float | str = "cv"
    lam_grid: Sequence[float] | None = None
    structure: str = "auto"
    cv: int | object = 5
    bins: int | str | None = "auto"
    eps_abs: float = 1e-7
    eps_rel: float = 1e-7
    max_iter: int = 20_000
    max_coefficients: int = 4096
    n_bootstrap: int = 0
    multiclass: str = "auto"
    bias_penalty: float | str = "cv"

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, S, y, sample_weight=None, *, classes=None):
        """Fit the calibrating function on training scores, in memory or on a dask cluster.

        Parameters
        ----------
        S : array-like of shape (n, M) or (n, M, C), DataFrame, dask array or dask DataFrame
            Scores of the ``M`` classifiers: probabilities, logits, margins, ... (the
            rank-only model accepts any strictly increasing scale). Multi-class: each
            scorer's ``C`` class scores (see :class:`fusion.FusionEstimator`; in memory).
        y : array-like of shape (n,), dask array or dask Series
            Labels: any two values (the second in sorted order is positive), or ``C``
            values for multi-class scores.
        sample_weight : array-like of shape (n,), dask array or dask Series, optional
            Non-negative row weights. Scaling them changes nothing; a zero weight is the
            same as leaving the row out.
        classes : array-like, optional
            Every class label, for multi-class scores whose fusion sample lacks some classes
            (as scikit-learn's ``partial_fit`` takes them); see
            :meth:`fusion.FusionEstimator.fit`.

        Returns
        -------
        self
        """
        if is_multiclass_dask(S) or _is_dask(S):
            from .distributed import fit_dask

            # As the in-memory fit: on a fresh copy, adopted only when it succeeds, its dense
            # algebra on the client with one BLAS thread (see FusionEstimator.fit).
            work = self._blank()
            with one_blas_thread():
                if is_multiclass_dask(S):
                    work._fit_shared_dask(S, y, sample_weight, classes)
                else:
                    fit_dask(work, S, y, sample_weight)
            self._adopt(work)
            return self
        if _is_dask(y) or _is_dask(sample_weight):
            # S is in memory on the client already, so its labels and weights fit there too.
            y = y.compute() if _is_dask(y) else y
            if _is_dask(sample_weight):
                sample_weight = sample_weight.compute()
        return super().fit(S, y, sample_weight, classes=classes)

    def _osqp_settings(self) -> dict:
        return {
            "eps_abs": self.eps_abs,
            "eps_rel": self.eps_rel,
            "max_iter": self.max_iter,
        }

    def _dask_knots(self) -> int | None:
        """``ecdf_knots`` of a dask fit (``"auto"``: always a sketch)."""
        if isinstance(self.ecdf_knots, str):  # "auto"
            return DASK_ECDF_KNOTS
        return None if self.ecdf_knots is None else int(self.ecdf_knots)

    def _refit_params(self) -> dict:
        params = self.get_params(deep=False)
        params.update(degree=self.degree_, increasing=[bool(v) for v in self.increasing_])
        params["n_bootstrap"] = 0
        if self.base_ is not None:
            params["lam"] = self.lam_
        if _is_tensor(self.components_, len(self.degree_)):
            params["structure"] = "tensor"
        elif all(len(c) == 1 for c in self.components_):
            params["structure"] = "additive"
        else:
            params["structure"] = "pairwise"
        return params

    def _fit_proba_bounds(self, S, U, w) -> np.ndarray:
        return self._bounds_for(float(w.sum()))

    def _bounds_for(self, n: float) -> np.ndarray:
        """``proba_bounds_`` of a model fitted on ``n`` rows (canonical weight), from the fit
        alone, so that a dask fit gets the same bounds without another pass over the rows.

        The default model: ``[0, 1]`` (its capped linear predictor stays inside (0, 1)). The
        rank-only model's coefficients lie in ``[0, 1]``, so its polynomial reaches 0 or 1
        where a corner coefficient does. It is non-decreasing, so over the training rows it
        is smallest at the corner of the smallest normalized values: the bound is the
        add-half estimate ``0.5 / (n + 1)`` (:func:`fusion._base.proba_bounds` without rows
        at 0), capped at the polynomial's value at that corner when positive.
        """
        if self.base is not None:
            return np.array([0.0, 1.0])
        values = self.ecdf_.values_
        corners = np.array([[v[0] for v in values], [v[-1] for v in values]], dtype=float)
        lo, hi = np.clip(self._calibrate(corners), 0.0, 1.0)
        eps = 0.5 / (n + 1.0)
        low = min(eps, float(lo)) if lo > SATURATED else eps
        high = max(1.0 - eps, float(hi)) if hi < 1.0 - SATURATED else 1.0 - eps
        return np.array([low, high])

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
                elif _n_coef(degrees[0], components) > min(self.max_coefficients, n_train):
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

    def _fit_scores(self, S, U, y, w):
        # The default model's linear features come from the scores themselves.
        if self.base is None:
            self._fit_rank_only(U, y, w)
        else:
            self._fit_logistic(U, y, w, S)

    # -- default model -----------------------------------------------------------------------
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
                while K > 1 and _n_coef((K,) * M, components) > self.max_coefficients:
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
        self._fit_logistic_from(data, candidates, lams)
        self.bootstrap_coef_ = None
        if self.n_bootstrap:
            self._bootstrap_logistic(U, Z, y, w, None if bins is None else edges, data)

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

    def _fit_logistic_from(self, data, candidates, lams) -> None:
        """The default model's fit from rows or cells (shared with the dask path).

        ``candidates``: ``(structure, components, degrees)`` triples; with more than one
        candidate or ``lam`` each runs its cross-validated path on the same folds and one
        pick is made over all of them (:meth:`_pick_logistic`).
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
            x0 = _initial_x(layout, data.base_rate())
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
            x_start = _initial_x(layout, data.base_rate())
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
        self.lam_ = float(lam)
        self.solver_status_ = res.status
        self.n_iter_ = int(res.n_iter)

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
        within = np.flatnonzero(mean - mean[best] <= self._se_factor * se)
        # one-standard-error rule: the largest lam, then the fewest coefficients
        pick = min(within, key=lambda i: (-keys[i][2], sizes[i], i))
        structure, degrees, lam = keys[pick]
        x_start = np.mean(sols[pick], axis=0)
        degree_cands = [d for s, _, d in candidates if s == structure]
        self._warn_edges(degrees, lam, lams, degree_cands)
        return (structure, degrees), lam, x_start

    def _warn_edges(self, degrees, lam, lams, candidates) -> None:
        finite = [v for v in lams if np.isfinite(v)]
        if len(lams) > 1 and lam == lams[-1]:
            warnings.warn(
                f"cross-validation picked lam={lam:g}, the smallest value of lam_grid: a "
                "smaller penalty might fit better. Pass a lam_grid that extends further down "
                "(or a larger degree) to check.",
                UserWarning,
                stacklevel=caller_level(),
            )
        elif len(lams) > 1 and finite and lam == lams[0] and np.isfinite(lam):
            warnings.warn(
                f"cross-validation picked lam={lam:g}, the largest value of lam_grid: a "
                "larger penalty might fit better. Add float('inf') (logistic regression on "
                "the scores) or larger values to lam_grid.",
                UserWarning,
                stacklevel=caller_level(),
            )
        if len(candidates) > 1 and degrees == candidates[-1]:
            warnings.warn(
                f"cross-validation picked degree {degrees}, the last candidate of "
                "degree_grid: a larger degree might fit better. Extend degree_grid to check.",
                UserWarning,
                stacklevel=caller_level(),
            )

    def _polynomial(self, coef: np.ndarray, U: np.ndarray) -> np.ndarray:
        """The Bernstein polynomial with coefficients ``coef`` (laid out as ``coef_``) at
        ``U``, on the fitted degrees and components."""
        if _is_tensor(self.components_, U.shape[1]):
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

    # -- rank-only model ---------------------------------------------------------------------
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

    def _resamples(self, n: int):
        """Row counts of ``n_bootstrap`` multinomial resamples of ``n`` rows, seeded by
        ``random_state`` (a stream apart from the folds'), with progress."""
        rng = np.random.default_rng([fold_seed(self), 1])
        with Progress(self.n_bootstrap, desc="bootstrap", enabled=self.verbose) as progress:
            for _ in range(self.n_bootstrap):
                yield rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
                progress.step()

    def _bootstrap_logistic(self, U, Z, y, w, edges, data) -> None:
        """The default model's refits (:func:`fusion.bernstein.bootstrap.logistic_refits`) on
        the richer model of :func:`~fusion.bernstein.bootstrap.interval_basis`, the penalty
        chosen on every resample (``lam="cv"``: the cross-validation of ``data``'s folds)
        or the given one, with the fit's own ridge (a resample's weights would give
        another)."""
        basis = bootstrap.interval_basis(self.degree_, self.components_)
        lams = self._lam_candidates(U.shape[0]) if self.lam == "cv" else [self.lam_]
        folds = {}
        if len(lams) > 1 and edges is None:
            folds["splits"] = data.splits
        elif len(lams) > 1:
            folds["fold_of"], folds["n_folds"] = self._cell_folds(U, y)
        self.bootstrap_coef_ = bootstrap.logistic_refits(
            U, Z, y, w, basis, lams, self._resamples(U.shape[0]), self._osqp_settings(),
            self._ridge(data), edges=edges, **folds,
        )  # fmt: skip
        self.bootstrap_basis_ = basis.components
        self.bootstrap_informed_ = bootstrap.informed_grid(U, y, w)

    def _bootstrap_rank_only(self, U, y, w) -> None:
        """The rank-only model's least-squares refits on the richer model of
        :func:`~fusion.bernstein.bootstrap.rank_only_basis`, solved to the cross-validation's
        tolerance."""
        basis = bootstrap.rank_only_basis(self.degree_, self.components_)
        degrees = [0] * U.shape[1]
        for axes, degs in basis.components:
            for a, k in zip(axes, degs, strict=True):
                degrees[a] = k
        solver = self._make_qp(degrees, self.components_, cv=True)
        resamples = self._resamples(U.shape[0])
        self.bootstrap_coef_ = bootstrap.rank_only_refits(U, y, w, basis, resamples, solver)
        self.bootstrap_basis_ = basis.components
        self.bootstrap_informed_ = bootstrap.informed_grid(U, y, w)

    def predict_interval(self, S, alpha: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
        """Pointwise bootstrap interval for the true probability ``P(Y = classes_[1] | s)``.

        Needs a model fitted with ``n_bootstrap > 0`` (200 refits are a good value).

        **What is covered.** At every row ``s``, the interval is meant to contain the true
        conditional probability ``P(Y = classes_[1] | scores = s)`` of the population the
        training rows were drawn from (independent rows, the fused probability
        non-decreasing in every score), with probability about ``1 - alpha`` over the
        training sample: a pointwise interval, whose coverage is an average over the rows
        ``s`` (not a band that holds at all rows at once). The same target for both models
        (the rank-only model's ``f(u)`` estimates it through the ranks).

        **How.** (:mod:`fusion.bernstein.bootstrap`.) The refits of a richer model than the
        fit (the fitted interaction components and one univariate component of twice the
        fitted degree per score: undersmoothing by the degree), on resamples of the rows;
        the default model's penalty is chosen again on every resample by the
        cross-validation of the richer model. The interval holds the central ``1 - alpha``
        of the refits' probabilities (a percentile interval, the same on the logit scale),
        except where the training rows near ``s`` are all of one class (a grid cell of
        about 20 rows without both classes: a saturated corner, most of a rare-positive
        sample's low scores): there the refits share the model's extrapolation, and the
        bounds become those that monotonicity gives from the cells with both classes (the
        smallest upper bound at informed points above ``s``, 1 if none; the largest lower
        bound at informed points below, 0 if none). Finally it is widened to contain
        ``predict_proba``. The ECDF and the structure are held at their fitted values.

        **Measured coverage** (``benchmarks/bench_interval.py``, see
        ``benchmarks/RESULTS.md``): MEASURED.

        Parameters
        ----------
        S : array-like of shape (n, M)
            Raw scores (binary model).
        alpha : float in (0, 1), default=0.1
            One minus the interval's nominal level (0.1: a 90 % interval).

        Returns
        -------
        lower, upper : ndarray of shape (n,)
            Bounds with ``lower <= predict_proba(S)[:, 1] <= upper``, inside ``[0, 1]``;
            for one or two scores each is non-decreasing in every score.
        """
        check_is_fitted(self, "classes_")
        if self._is_multiclass():
            raise ValueError(
                "predict_interval is for binary models; a multi-class model's estimators_ "
                "(one per class) each have their own."
            )
        boot = getattr(self, "bootstrap_coef_", None)
        if boot is None:
            raise ValueError(
                "predict_interval needs bootstrap refits: fit with n_bootstrap > 0 (e.g. "
                "BernsteinFusion(n_bootstrap=200))."
            )
        if not (isinstance(alpha, Real) and 0.0 < alpha < 1.0):
            raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}.")
        S = self._validated_scores(S)
        U = self.ecdf_.transform(S)
        if np.isnan(U).any():
            raise ValueError("predict_interval needs every score: a row has a missing (NaN) score.")
        self._check_fitted_arrays(U.shape[1])
        basis = self._bootstrap_basis(U.shape[1])
        B = boot.shape[0]
        lower, upper = bootstrap.percentile_bounds(
            lambda r: self._bootstrap_proba(basis, U[r], S[r]), U.shape[0], B, alpha
        )
        informed = getattr(self, "bootstrap_informed_", None)
        if informed is not None:

            def bounds_at(points):
                return bootstrap.percentile_bounds(
                    lambda r: self._bootstrap_proba(basis, points[r]), points.shape[0], B, alpha
                )

            lower, upper = bootstrap.monotone_envelope(U, lower, upper, informed, bounds_at)
        point = self._proba_normalized(U, S)[:, 1]
        return np.minimum(lower, point), np.maximum(upper, point)

    def _bootstrap_basis(self, M: int) -> bootstrap.Basis:
        """The refits' :class:`~fusion.bernstein.bootstrap.Basis`, checked against
        ``bootstrap_coef_``."""
        comps = getattr(self, "bootstrap_basis_", None)
        try:
            basis = bootstrap.Basis(
                tuple((tuple(int(a) for a in ax), tuple(int(k) for k in d)) for ax, d in comps)
            )
            linear = 0 if self.base_ is None else M
            ok = all(0 <= a < M for ax, _ in basis.components for a in ax) and (
                self.bootstrap_coef_.shape[1] == linear + basis.n_coef
            )
        except (TypeError, ValueError, AttributeError, IndexError):
            ok = False
        if not ok:
            raise ValueError(
                "BernsteinFusion's bootstrap state is inconsistent (bootstrap_coef_ does not "
                "match bootstrap_basis_); refit with n_bootstrap > 0."
            )
        return basis

    def _bootstrap_proba(self, basis, U: np.ndarray, S: np.ndarray | None = None) -> np.ndarray:
        """Every refit's ``P(Y = classes_[1])`` at normalized points ``U`` (of the raw
        scores ``S`` when given), shape ``(n, n_bootstrap)``."""
        if self.base_ is None:
            return bootstrap.rank_only_proba(self.bootstrap_coef_, basis, U)
        Z = self._features(U, S)
        return bootstrap.logistic_proba(self.bootstrap_coef_, basis, U, Z, ETA_CAP)

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

    def _solve_final(self, degrees, stats: LeastSquaresStats, components) -> None:
        self.degree_ = tuple(int(k) for k in degrees)
        self.components_ = tuple(tuple(int(a) for a in c) for c in components)
        qp = self._make_qp(degrees, components)
        self.coef_, self.solver_status_ = qp.solve(stats)
        self.n_iter_ = qp.last_iterations

    def _check_size(self, degrees: tuple[int, ...], n_rows: int | None, components=None) -> None:
        P = _n_coef(degrees, components)
        if P > self.max_coefficients:
            tensor = components is None or _is_tensor(components, len(degrees))
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
            if d not in cands and _n_coef(d, components) <= limit:
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
                results[key] = (self._heldout_brier(degrees, pairs, components), total)
            label = f"{structure} {degrees}" if key != degrees else f"degree {degrees}"
            progress.step(label)
        best = self._pick(results, cands, edges)
        progress.step("final fit")
        progress.close()
        return best

    def _cv_score(
        self, degrees, folds: list[LeastSquaresStats], components
    ) -> tuple[float, LeastSquaresStats]:
        """Held-out Brier score of one candidate from its per-fold statistics, and the totals."""
        total = folds[0]
        for f in folds[1:]:
            total = total + f
        pairs = [(total - f, f) for f in folds]
        return self._heldout_brier(degrees, pairs, components), total

    def _heldout_brier(self, degrees, pairs, components) -> float:
        """Weighted held-out Brier score over ``(train, test)`` statistics pairs."""
        qp = self._make_qp(degrees, components, cv=True)
        sse = sw = 0.0
        for train, test in pairs:
            if test.sw > 0 and train.sw > 0:  # a fold can be empty in a tiny dask data set
                beta, _ = qp.solve(train)
                sse += heldout_sse(test, beta)
                sw += test.sw
        return sse / sw

    def _pick(
        self, results: dict, cands: list[tuple], edges: set[int]
    ) -> tuple[tuple, tuple[int, ...], LeastSquaresStats]:
        """The candidate with the lowest held-out Brier score (ties: fewer coefficients, then
        the earlier candidate); sets ``cv_scores_``.

        ``results`` maps the keys of :meth:`_rank_only_keys` to ``(score, statistics of all
        rows)``; ``cands`` and ``edges`` come from :meth:`_rank_only_candidates`. Picking a
        candidate in ``edges`` (the largest of its structure's grid) warns.

        Returns ``(components, degrees, statistics)`` of the pick.
        """
        keys = self._rank_only_keys(cands)
        scores = {k: results[k][0] for k in keys}
        sizes = [_n_coef(d, c) for _, c, d in cands]
        i = min(range(len(keys)), key=lambda j: (scores[keys[j]], sizes[j], j))
        self.cv_scores_ = scores
        structure, components, degrees = cands[i]
        if i in edges:
            which = f" of the {structure} structure" if keys[i] != degrees else ""
            warnings.warn(
                f"cross-validation picked degree {degrees}, the largest candidate{which} of "
                "degree_grid that was tried: a larger degree might fit better. Extend "
                "degree_grid (and max_coefficients if needed) to check.",
                UserWarning,
                stacklevel=caller_level(),
            )
        return components, degrees, results[keys[i]][1]

    # -- multi-class --------------------------------------------------------------------------
    def _fit_multiclass(self, S, y, sample_weight, classes=None) -> None:
        self._validate_params()
        n, M, C = S.shape
        if C == 2:
            super()._fit_multiclass(S, y, sample_weight, classes)
            return
        labels, index = check_multiclass_targets(y, n, C, classes)
        model = self._multiclass_model(S, index, sample_weight)
        if model == "per-class":
            self._fit_per_class(S, labels, index, sample_weight)
        elif model == "shared":
            self._fit_shared(S, labels, index, sample_weight)
        else:
            self._fit_better_multiclass(S, labels, index, sample_weight)

    def _multiclass_model(self, S: np.ndarray, index, sample_weight) -> str:
        """``"shared"``, ``"per-class"`` or ``"compare"`` (both, by cross-validation; see
        ``multiclass``)."""
        if self.multiclass == "shared" and self.base is None:
            raise ValueError(
                "the class-shared multi-class model is a model on the scores' own scale; the "
                "rank-only model (base=None) fits multi-class scores per class: pass "
                "multiclass='per-class' (or 'auto'), or a base."
            )
        if self.multiclass != "auto":
            return self.multiclass
        if self.base is None or (self.missing == "marginal" and np.isnan(S).any()):
            return "per-class"
        C = S.shape[2]
        w = check_sample_weight(sample_weight, S.shape[0])
        counts = np.bincount(index, weights=w / w[w > 0].min(), minlength=C)
        cv_int = isinstance(self.cv, Integral) and not isinstance(self.cv, bool)
        searched = self.lam == "cv" and cv_int
        cheap = S.shape[0] * C <= AUTO_PER_CLASS_PAIRS
        if (
            searched
            and cheap
            and C <= AUTO_PER_CLASS_CLASSES
            and counts.min() >= AUTO_PER_CLASS_ROWS
        ):
            return "compare"
        return "shared"

    def _fit_better_multiclass(self, S, classes, index, sample_weight) -> None:
        """Both multi-class models, and the one with the lower held-out log-loss on the same
        folds; the shared model unless the per-class one is lower by more than the paired
        standard error of the difference (the one-standard-error rule)."""
        shared, per_class = self._blank(), self._blank()
        held_shared = shared._fit_shared(S, classes, index, sample_weight)
        folds = np.full(S.shape[0], -1, dtype=np.int64)
        w = check_sample_weight(sample_weight, S.shape[0])
        kept = w > 0
        sample = _cv_sample(int(kept.sum()), S.shape[2])
        folds[kept] = row_folds(S[kept], index[kept], int(self.cv), fold_seed(self), sample)
        held_per_class = per_class._fit_per_class(S, classes, index, sample_weight, folds)
        if held_shared is None or held_per_class is None:  # a fold without some class
            self.__dict__.update({k: v for k, v in vars(shared).items() if k.endswith("_")})
            return
        rows = kept & np.isfinite(held_shared) & np.isfinite(held_per_class)
        diff = held_per_class[rows] - held_shared[rows]
        se = float(paired_se(np.vstack([diff, np.zeros_like(diff)]), w[rows], 1)[0])
        mean = float(np.average(diff, weights=w[rows]))
        winner = per_class if mean + se < 0 else shared
        self.__dict__.update({k: v for k, v in vars(winner).items() if k.endswith("_")})
        base = float(np.average(held_shared[rows], weights=w[rows]))
        self.multiclass_cv_ = {"shared": base, "per-class": base + mean, "se": se}

    def _fit_shared(self, S: np.ndarray, classes, index, sample_weight) -> np.ndarray | None:
        """The class-shared model (:mod:`fusion.bernstein.multinomial`); returns every
        row's held-out log-loss of the cross-validation at the chosen penalties (NaN for a
        row of zero weight), or None without cross-validation."""
        n, M, C = S.shape
        finite = np.isfinite(S)
        if not finite.all():
            i, m, k = (int(v[0]) for v in np.nonzero(~finite))
            raise ValueError(
                f"S[{i}, {m}, {k}] is {S[i, m, k]}: the class-shared model needs finite "
                "scores (probabilities or logits). For missing scores use "
                "missing='marginal' with multiclass='per-class'."
            )
        del finite
        w = check_sample_weight(sample_weight, n)
        kept = w > 0
        if not kept.all():
            S, index, w = S[kept], index[kept], w[kept]
        if sample_weight is not None:
            w = canonical_weights(w)
        if S.shape[0] < 2:
            raise ValueError(
                f"at least 2 training rows with positive sample_weight are needed, got "
                f"{S.shape[0]}."
            )
        n = S.shape[0]
        scales = [detect_scale(S[:, m, :], self.base) for m in range(M)]
        degree = self._shared_degree(M, n)
        lams, taus = self._shared_lams(n), self._bias_candidates()
        fold, n_folds = (None, 0)
        if len(lams) > 1 or len(taus) > 1:
            fold, n_folds = self._shared_folds(S, index, kept)
        progress = self._shared_progress(len(lams), len(taus))
        fit = fit_shared(
            S, index, w / w.mean(), scales, degree, lams, taus, fold, n_folds,
            self._osqp_settings(), float(w.sum()), progress,
        )  # fmt: skip
        progress.close()
        self._adopt_shared(fit, classes, M, C)
        if fit.heldout is None:
            return None
        held = np.full(kept.shape[0], np.nan)
        held[np.flatnonzero(kept)] = fit.heldout
        return held

    def _fit_shared_dask(self, S, y, sample_weight, classes) -> None:
        """The class-shared model on dask scores (:mod:`fusion.bernstein.shared_dask`)."""
        from .shared_dask import DaskPlan, fit_shared_dask

        self._validate_params()
        if self.base is None or self.multiclass == "per-class":
            raise ValueError(
                "multi-class dask input is fitted by the class-shared model only: pass "
                "multiclass='auto' or 'shared' and a base (not None), or fit in memory."
            )
        if not (isinstance(self.cv, Integral) and not isinstance(self.cv, bool)):
            raise ValueError("a dask fit assigns its folds by content: pass an int cv.")
        if self.n_bootstrap:
            raise ValueError("n_bootstrap > 0 is not supported for dask input.")
        plan = DaskPlan(
            base=self.base,
            cv=int(self.cv),
            seed=fold_seed(self),
            degree_for=self._shared_degree,
            lams_for=self._shared_lams,
            taus=self._bias_candidates(),
            cv_sample=_cv_sample,
            osqp_settings=self._osqp_settings(),
            progress=self._shared_progress,
        )
        fit, labels, M, C = fit_shared_dask(S, y, sample_weight, classes, plan)
        self._adopt_shared(fit, labels, M, C)

    def _shared_progress(self, n_lams: int, n_taus: int) -> Progress:
        search = n_lams > 1 or n_taus > 1
        steps = (n_lams + (n_taus - 1 if n_taus > 1 else 0) if search else 0) + 1
        return Progress(steps, desc=type(self).__name__, enabled=self.verbose)

    def _shared_lams(self, n: int) -> list[float]:
        """``lam`` candidates of the class-shared model: ``lam_grid``, or by default that of
        the binary model in whole decades (``inf``, 10, 1, ..., 1e-6, then down to
        ``0.02 / n``): its few parameters need no finer grid, and every candidate is a pass
        over ``n C`` pairs per fold."""
        lams = self._lam_candidates(n)
        if self.lam == "cv" and self.lam_grid is None:
            lams = [v for v in lams if np.isinf(v) or np.log10(v) == round(np.log10(v))]
        return lams

    def _bias_candidates(self) -> list[float]:
        if self.bias_penalty == "cv":
            return [np.inf, *BIAS_GRID]
        return [float(self.bias_penalty)]

    def _adopt_shared(self, fit, classes, M: int, C: int) -> None:
        """The fitted attributes of a class-shared model."""
        degree = fit.degree
        c, parts = shared_layout(M, degree).split(fit.x)
        self.classes_ = classes
        self.n_classes_ = C
        self.n_features_in_ = M
        self.multiclass_ = "shared"
        self.base_ = tuple("logit" if v == "probability" else "identity" for v in fit.scales)
        self.base_coef_ = np.array(c, dtype=float)
        self.coef_ = np.concatenate([np.ravel(p) for p in parts])
        self.components_ = tuple((m,) for m in range(M))
        self.degree_ = (int(degree),) * M
        self.lam_ = float(fit.lam)
        P = M * (degree + 2)
        self.class_bias_ = fit.x[P:].copy() if fit.x.shape[0] > P else np.zeros(C)
        self.bias_penalty_ = float(fit.tau)
        if fit.cv_scores is not None:
            key = ("additive", self.degree_)
            self.cv_scores_ = {(*key, *k): v for k, v in fit.cv_scores.items()}
            self.cv_se_ = {(*key, *k): v for k, v in fit.cv_se.items()}
        self.ecdf_ = normalizer(fit.axes)
        self.ecdf_knots_ = max(len(a.knots) for a in fit.axes)
        self.ecdf_error_bound_ = float(max(np.max(np.diff(a.values)) for a in fit.axes))
        self.logp_floor_ = np.array([a.floor for a in fit.axes])
        self.increasing_ = np.ones(M, dtype=bool)
        self.reversal_offset_ = np.zeros(M)
        self.base_shift_ = self.base_scale_ = None
        self.n_cells_ = None
        self.bootstrap_coef_ = None
        self.solver_status_ = fit.status
        self.n_iter_ = int(fit.n_iter)
        self.proba_bounds_ = np.array([0.0, 1.0])

    def _shared_degree(self, M: int, n: int) -> int:
        if self.degree == "auto":
            return auto_degree(M, n, "additive")
        if isinstance(self.degree, str):  # "cv"
            raise ValueError(
                "degree='cv' is not available for the class-shared multi-class model: pass an "
                "int or 'auto' (the penalty lam, chosen by cross-validation, sets the "
                "smoothness)."
            )
        degrees = as_degrees(self.degree, M, "degree")
        if len(set(degrees)) != 1:
            raise ValueError(
                f"the class-shared multi-class model takes one degree for every scorer, got "
                f"{degrees}."
            )
        return degrees[0]

    def _shared_folds(self, S, index, kept) -> tuple[np.ndarray, int]:
        """Test fold of every row for the class-shared model's CV (-1: in none, -2: outside
        its sample, see :data:`CV_MAX_PAIRS`): by the row's content for an int ``cv`` (as a
        dask fit would assign them), else from the given splits, whose test sets must not
        overlap."""
        if isinstance(self.cv, Integral) and not isinstance(self.cv, bool):
            if S.shape[0] < self.cv:
                raise ValueError(
                    f"cv={self.cv} folds need at least {self.cv} rows, got {S.shape[0]}."
                )
            sample = _cv_sample(*S.shape[::2])
            return row_folds(S, index, int(self.cv), fold_seed(self), sample), int(self.cv)
        splits = cv_splits(self.cv, index, self.random_state, kept=kept)
        fold = np.full(S.shape[0], -1, dtype=np.int64)
        for f, (train, test) in enumerate(splits):
            if np.any(fold[test] >= 0) or train.shape[0] + test.shape[0] != S.shape[0]:
                raise ValueError(
                    "the class-shared multi-class model needs cross-validation splits whose "
                    "test sets do not overlap and whose training sets are the other rows "
                    "(K-fold); pass such a cv or an int."
                )
            fold[test] = f
        return fold, len(splits)

    def _shared_lookups(self):
        cache = self.__dict__.get("_shared_cache")
        if cache is None or cache[0] is not self.ecdf_:
            lookups = self.ecdf_._lookups()
            coefs = np.split(self.coef_, len(self.degree_))
            cache = self._shared_cache = (self.ecdf_, lookups, coefs)
        return cache[1], cache[2]

    def _class_distribution(self, S: np.ndarray) -> np.ndarray:
        if self.__dict__.get("multiclass_", "per-class") != "shared":
            return super()._class_distribution(S)
        self._check_shared_state()
        lookups, coefs = self._shared_lookups()
        scales = ["probability" if b == "logit" else "logit" for b in self.base_]
        return shared_proba(
            S, scales, self.logp_floor_, lookups, self.base_coef_, coefs, self.class_bias_
        )

    def _class_distribution_normalized(self, U: np.ndarray) -> np.ndarray:
        if self.__dict__.get("multiclass_", "per-class") != "shared":
            return super()._class_distribution_normalized(U)
        self._check_shared_state()
        _, coefs = self._shared_lookups()
        inverse = InverseECDF(self.ecdf_.knots_, self.ecdf_.values_)
        Z = np.empty_like(U)
        for m in range(U.shape[1]):
            Z[:, m] = inverse.column(np.clip(U[:, m], 0.0, 1.0).ravel(), m).reshape(U[:, m].shape)
        return shared_proba_normalized(Z, U, self.base_coef_, coefs, self.class_bias_)

    def _check_shared_state(self) -> None:
        """Refuse a class-shared model whose fitted arrays do not fit together."""
        M = self.n_features_in_
        K = self.degree_[0] if self.degree_ else -1
        problems = []
        if len(self.degree_) != M or len(set(self.degree_)) != 1 or K < 0:
            problems.append(f"degree_ must hold one degree for each of the {M} scorers")
        coef, c = self.coef_, self.base_coef_
        if not (
            isinstance(coef, np.ndarray)
            and coef.dtype == np.float64
            and coef.shape == (M * (K + 1),)
        ):
            problems.append(f"coef_ must be a float64 array of shape ({M * (K + 1)},)")
        if not (
            isinstance(c, np.ndarray)
            and c.dtype == np.float64
            and c.shape == (M,)
            and np.all(c >= 0)
        ):
            problems.append(f"base_coef_ must be {M} floats >= 0")
        floor = self.logp_floor_
        if not (
            isinstance(floor, np.ndarray) and floor.shape == (M,) and np.all(np.isfinite(floor))
        ):
            problems.append(f"logp_floor_ must be {M} finite floats")
        if len(self.base_) != M or any(b not in ("logit", "identity") for b in self.base_):
            problems.append(f"base_ must hold {M} of 'logit'/'identity'")
        if problems:
            raise ValueError(
                "BernsteinFusion's fitted state is inconsistent: " + "; ".join(problems) + "."
            )

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
        if is_multiclass_dask(S):
            from .shared_dask import proba_dask

            check_is_fitted(self, "n_classes_")
            return proba_dask(self, S)
        if _is_dask(S):
            from .distributed import predict_proba_dask

            return predict_proba_dask(self, S)
        check_is_fitted(self, "classes_")
        if self._is_multiclass() or np.ndim(S) != 2 or self.missing != "error":
            return super().predict_proba(S)
        S = self._validated_scores(S)
        return self._proba_normalized(self.ecdf_.transform(S), S)

    def _proba_normalized(self, U: np.ndarray, S: np.ndarray | None = None) -> np.ndarray:
        """Both columns of ``predict_proba`` at normalized points ``U`` (of the scores ``S``,
        when given), each to full precision."""
        # FusionEstimator.predict_proba, with fewer full-size temporaries (it clips U and p
        # into copies and stacks a third): normalized scores already lie inside (0, 1).
        self._check_fitted_arrays(U.shape[1])
        proba = np.empty((U.shape[0], 2))
        if self.base_ is None:
            np.clip(self._polynomial(self.coef_, U), *self._proba_bounds(), out=proba[:, 1])
            np.subtract(1.0, proba[:, 1], out=proba[:, 0])
        else:
            eta = self._logistic_eta(U, S)
            # 1 - expit(eta) would round to 0 for eta > 37; expit(-eta) keeps every digit.
            expit(-eta, out=proba[:, 0])
            expit(eta, out=proba[:, 1])
        if not np.all(np.isfinite(proba)):
            raise RuntimeError(
                "BernsteinFusion produced non-finite probabilities; please report this."
            )
        return proba

    def predict(self, S):
        """Labels at threshold 0.5 (the negative class on an exact tie); lazy for dask input."""
        if _is_dask(S):
            from .distributed import predict_dask

            return predict_dask(self, S)
        return super().predict(S)

    def _check_fitted_arrays(self, M: int) -> None:
        """Refuse fitted arrays that do not match ``degree_`` and ``components_`` (a file
        edited by hand, see :mod:`fusion.persistence`) instead of evaluating something else."""
        comps = self.components_
        P = _n_coef(self.degree_, comps)
        tensor = _is_tensor(comps, M)
        want = tuple(k + 1 for k in self.degree_) if tensor else (P,)
        problems = []
        coef = self.coef_
        if not (isinstance(coef, np.ndarray) and coef.dtype == np.float64 and coef.shape == want):
            problems.append(f"coef_ must be a float64 array of shape {want}")
        if self.base_ is not None:
            if len(self.base_) != M or any(b not in ("logit", "identity") for b in self.base_):
                problems.append(f"base_ must hold {M} of 'logit'/'identity'")
            for name in ("base_coef_", "base_shift_", "base_scale_"):
                a = getattr(self, name)
                if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == (M,)):
                    problems.append(f"{name} must be a float64 array of shape ({M},)")
                elif not np.all(np.isfinite(a)):
                    problems.append(f"{name} must be finite")
            if not problems and not (np.all(self.base_coef_ >= 0) and np.all(self.base_scale_ > 0)):
                problems.append("base_coef_ must be >= 0 and base_scale_ > 0")
        if problems:
            raise ValueError(
                "BernsteinFusion's fitted state is inconsistent: " + "; ".join(problems) + "."
            )

    def _calibrate_scores(self, S, U):
        self._check_fitted_arrays(U.shape[1])
        if self.base_ is None:
            return self._polynomial(self.coef_, U)
        return expit(self._logistic_eta(U, S))

    def _calibrate(self, U):
        return self._calibrate_scores(None, U)


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


def _cv_sample(n: int, C: int) -> float:
    """Share of the rows in the class-shared model's cross-validation sample."""
    return min(1.0, CV_MAX_PAIRS / max(n * C, 1))


#: Predictions use ``expit(clip(eta, -ETA_CAP, ETA_CAP))``.
ETA_CAP = 35.0


def _initial_x(layout: logistic.Layout, base_rate: float) -> np.ndarray:
    """``c = 0`` and ``g`` the constant logit of the base rate."""
    x = np.zeros(layout.n_coef)
    r = min(max(base_rate, 1e-12), 1.0 - 1e-12)  # one class can hold nearly all the weight
    x[layout.n_linear : layout.n_linear + layout.sizes[0]] = np.log(r / (1.0 - r))
    return x


def _float_array(a, shape: tuple[int, ...]) -> bool:
    return (
        isinstance(a, np.ndarray)
        and a.dtype == np.float64
        and a.shape == shape
        and bool(np.all(np.isfinite(a)))
    )


def _is_tensor(components, M: int) -> bool:
    return tuple(tuple(c) for c in components) == (tuple(range(M)),)


def _n_coef(degrees, components=None) -> int:
    if components is None:
        return int(np.prod([k + 1 for k in degrees]))
    return int(sum(np.prod(s) for s in component_shapes(degrees, components)))
