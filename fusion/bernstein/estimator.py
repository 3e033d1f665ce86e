"""BernsteinFusion: monotone fusion with tensor Bernstein polynomials (Wang & Liu 2020), by
default in a semi-parametric logistic model on the scores' own scale.

The estimator validates, decides the plan of a fit (:mod:`.plan`), hands it with a source of
statistics (rows in memory, :mod:`.binary.source`; dask blocks, :mod:`.dask`) to the model's
fitter, adopts the frozen result (:mod:`.results`) under its fitted attributes, and predicts
through the fitted model (:mod:`.binary.model`, :mod:`.multiclass.model`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import COMMON_PARAMETERS, SKETCH_KNOTS, FusionEstimator
from .._direction import label_rank_sums, reverse_networks
from .._multiclass import check_multiclass_targets
from .._solver import SolverError, one_blas_thread
from .._validation import check_sample_weight
from .._warn import caller_level
from . import plan as planning
from .basis import STRUCTURES
from .binary import bootstrap
from .binary.model import BinaryModel
from .binary.rank_only import fit_rank_only
from .binary.semiparametric import fit_logistic
from .binary.source import MemoryRows
from .dask.collections import is_dask, is_multiclass_dask, single_network_dask
from .multiclass.model import SharedModel
from .multiclass.shared import compare, fit_rows
from .plan import (
    DEFAULT_DEGREE_GRID,
    DEFAULT_LAM_GRID,
    RANK_ONLY_AUTO_COEFFICIENTS,
    auto_degree,
    default_lam_grid,
)
from .results import BootstrapResult
from .scale import BASES, InverseECDF, OwnScale
from .structure import Structure

__all__ = [
    "BernsteinFusion",
    "DEFAULT_DEGREE_GRID",
    "DEFAULT_LAM_GRID",
    "default_lam_grid",
    "DASK_ECDF_KNOTS",
    "RANK_ONLY_AUTO_COEFFICIENTS",
    "auto_degree",
]


#: Knots per column of the ECDF sketch when ``ecdf_knots="auto"`` and the input is dask (as
#: for in-memory fits from 100,000 rows on, see :class:`fusion.FusionEstimator`).
DASK_ECDF_KNOTS = SKETCH_KNOTS


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
    smoothness at every degree; :mod:`fusion.bernstein.binary.logistic`), plus a weak ridge
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
    It depends on the scores only through their ranks: a score between two training scores
    is normalized to the mean of their two ECDF values, whatever its distance to either.

    Guarantees (both models): the fused probability is non-decreasing in every score,
    everywhere (not only at training points). The default model's is continuous in the
    scores, and its predictions lie strictly inside ``(0, 1)`` (the linear predictor is
    capped at ``+-35``, so none rounds to 0 or 1). The rank-only model's predictions lie in
    ``[0, 1]`` and are unchanged, bit for bit and at every score (new ones included), by any
    strictly increasing transform of a score applied to the training and the new scores
    alike; the price is that it is a step function of each raw score, constant between two
    adjacent training values (steps of about ``1 / n`` on the normalized scale, where ``f``
    is a continuous polynomial). With an ECDF sketch (``ecdf_knots``; from 100,000 rows with
    ``"auto"``, and on dask) this holds relative to the sketch's knots
    (:mod:`fusion.ecdf.sketch`). Neither model can put a negative weight on a score, as
    unconstrained logistic regression on logits sometimes does (an overfitted or saturated
    scorer given a sharper one): where that helps, the monotone fit cannot follow.

    Parameters
    ----------
    base : {"auto", "logit", "identity"} or None, default="auto"
        Scale of the linear features ``z_m``. ``"logit"``: ``log(s / (1 - s))`` of the score
        clipped to ``base_clip_`` (``[1e-6, 1 - 1e-6]``, narrowed where the training scores
        include exactly 0 or 1); ``"identity"``: the raw score; ``"auto"``: logit for
        a column whose training values all lie in ``[0, 1]``, identity otherwise. Beyond the
        training range ``z_m`` is winsorized (a new extreme or infinite score counts as the
        most extreme training score), and it is standardized internally for conditioning;
        predictions do not depend on the unit of a raw score. ``None``: the rank-only model.
        Details: :mod:`fusion.bernstein.scale`.
    degree : int, sequence of int, "auto" or "cv", default="auto"
        Polynomial degree per axis (one int for all axes, or one per axis). ``"auto"``:
        default model: :func:`auto_degree` (8 per axis at M <= 2, growing to 12 from about
        12,700 rows; 4 at M = 3 with a tensor; 8 with the additive structure; the penalty
        sets the smoothness), lowered to no more coefficients than rows; rank-only model:
        ``"cv"``. ``"cv"``: chosen by
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
        corner coefficients (proof in :func:`fusion.bernstein.binary.qp.structure_constraints`).
    cv : int, cross-validation splitter or iterable of (train, test), default=5
        Splits of the cross-validation. An int gives that many folds assigned by a seeded
        hash of each row's content (its normalized scores and label; for multi-class
        scores their log-probabilities and the class), so that they do not depend on the
        order of the rows and equal rows share a fold; seeded by ``random_state``. Binary
        rows in memory are dealt to the folds per class in the order of their hash
        (stratified); on dask, and for multi-class scores, a row's fold is its hash modulo
        ``cv``, whatever the chunking; :class:`~fusion.HashFolds`
        ``(cv, random_state=random_state)`` gives a binary in-memory fit those folds (it
        then equals the dask fit). A splitter
        (``StratifiedKFold(...)``) or a list of ``(train, test)`` index arrays into the rows
        of ``S`` is used as given (a fit on cells needs test sets that partition the rows).
    bins : int >= 2, None or "auto", default="auto"
        Default model only: aggregation of rows into cells before the fit
        (:mod:`fusion.bernstein.binary.cells`): every score axis is cut at ``bins`` quantiles and
        ``bins`` equally spaced values of ``z_m``, and the fit runs on the occupied cells'
        counts, positives and mean ``z`` and ``u``. ``None``: the fit runs on the rows.
        ``"auto"``: rows below :func:`fusion.bernstein.plan.auto_cell_rows` rows (20,000
        for M <= 3, 100,000 above), cells of :func:`fusion.bernstein.plan.auto_bins` cuts
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
        degree per score (:mod:`fusion.bernstein.binary.bootstrap`). Default model: its penalty is
        chosen by cross-validation on the fit's folds, and again on every resample from the
        reweighted held-out losses (lowest loss); with a given ``lam``, that one. Kept in
        ``bootstrap_coef_``. The point fit does not change. 0: none. In memory only (not
        for dask input).
    multiclass : {"auto", "shared", "per-class"}, default="auto"
        The model for multi-class scores ``(n, M, C)`` (one network: ``(n, C)``, see
        :meth:`fit`). ``"shared"``: one monotone fusion shared by every class
        (:mod:`fusion.bernstein.multiclass.multinomial`): for row ``i`` and class ``k``,
        ``eta_ik = sum_m c_m z_imk + sum_m g_m(u_imk) + b_k`` and the class distribution
        ``softmax(eta_i)``, with ``z_imk`` scorer ``m``'s log-probability of class ``k``
        (logits, log-probabilities and probabilities of a network give the same ``z``;
        ``base`` says which the scores are, ``"auto"`` decides by their range), ``u_imk``
        its normalized value, ``c_m >= 0``, every ``g_m`` a monotone Bernstein polynomial
        penalized by ``lam`` (chosen by cross-validation, one-standard-error rule toward
        ``g = 0``) and class biases ``b_k`` under ``bias_penalty``; then the top-label
        correction (``top_label_penalty``). Its parameters do not grow with ``C``, it nests
        temperature scaling of the averaged log-probabilities, classes absent from the
        fusion sample get probabilities too (``classes=``), and its cost grows as ``n C``.
        ``"per-class"``: one binary fusion per class on that class's scores, coupled by a
        softmax (:mod:`fusion._multiclass`); it needs every class in the sample. ``"auto"``:
        the shared model; where every class has at least 1,000 rows, ``C <= 20`` and
        ``n C <= 50,000`` (and ``lam="cv"`` with an int ``cv``), also the per-class model,
        kept when its held-out log-loss on the same folds is lower by more than one paired
        standard error (``multiclass_cv_``); a per-class model that cannot be fitted (a
        network constant in a class) leaves the shared one, with a warning. The rank-only
        model (``base=None``) and
        ``missing="marginal"`` with missing scores are per-class.
    bias_penalty : float >= 0, inf or "cv", default="cv"
        Class-shared multi-class model only: the ridge ``(tau / 2) sum_k b_k^2`` on a bias
        ``b_k`` added to every class's ``eta_ik`` (classes that the scorers favour or
        neglect alike). ``inf``: no biases. ``"cv"``: chosen by the same cross-validation,
        after ``lam``, from ``inf`` and 1 down to 1e-6 (decades; the path stops once the
        held-out loss has risen clearly above its minimum), with the one-standard-error rule
        toward no biases.
    top_label_penalty : float >= 0, inf or "cv", default="cv"
        Class-shared multi-class model only: the top-label correction
        (:mod:`fusion.bernstein.multiclass.toplabel`). The fused distribution ``p`` is reweighted,
        ``P_ik ∝ p_ik exp(psi(p_ik))``, by one function ``psi`` of a class's fused
        probability (a Bernstein polynomial of degree 6 with ``psi(0) = 0``) under
        constraints that keep every guarantee (linear ones, or a wider set proven by
        interval bounds, :func:`~fusion.bernstein.multiclass.toplabel.certify`): rows sum
        to one, no probability is 0 or 1, the classes' order in a row (so the top label)
        is kept, and each class's probability stays non-decreasing in every network's
        score for that class. It
        corrects the top-label calibration of the fused distribution (a moderately
        confident top class lifted against the classes of small probability, a confident
        one lowered) where one temperature and per-class terms cannot. ``psi`` is fitted
        by the likelihood of the held-out fused probabilities of the model's own
        cross-validation, with the penalty ``(tau / 2) sum_j (theta_j - theta_{j-1})^2``.
        ``inf``: no correction (the model as before). ``"cv"``: ``tau`` from ``inf``,
        1e-2 down to 1e-5 and 0, and at each ``tau`` the minimizer under the linear
        constraints or the certified one, the lowest held-out log-loss (each fold's
        correction fitted on the other folds' held-out probabilities), a certified one
        only if lower by more than a standard error, and then the same followed along the
        certified set's edge (:func:`~fusion.bernstein.multiclass.toplabel.follow_edge`)
        only if lower again by more than its standard error. A finite value fits the
        certified one, followed along the edge, and needs the cross-validation's folds too.
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
    base_clip_ : ndarray of shape (M, 2) or None
        The interval a ``"logit"`` column's scores are clipped to before the logit:
        ``[1e-6, 1 - 1e-6]``, narrowed to half the smallest training score inside (0, 1)
        where the training scores include exactly 0 (likewise at 1), so that a rounded 0 is
        read as "below the smallest reported score". None for the rank-only model.
    lam_ : float or None
        Default model: the penalty weight used (``inf``: ``g`` constant, no Bernstein
        correction: logistic regression on the scores' own scale; ``degree_`` is then 0 on
        every axis). None for the rank-only model.
    components_ : tuple of tuple of int
        Score columns (axes) of each component; ``((0, ..., M - 1),)`` for the tensor.
    degree_ : tuple of int
        Degree per axis actually used. ``(0, ..., 0)`` when ``lam_`` is ``inf``: ``g`` is
        the constant ``coef_`` (shape ``(1, ..., 1)``), whatever degree cross-validation
        tried (its entries in ``cv_scores_`` keep that degree). Models saved before this
        rule hold the tried degree with every coefficient equal, the same function.
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
        See :class:`fusion._base.FusionEstimator`. For multi-class scores ``classes_`` are
        the labels of the class columns, in the order ``classes=`` gave (else sorted).
    n_classes_ : int
        Multi-class models: the number of class columns ``C``.
    multiclass_ : {"shared", "per-class"}
        Multi-class models: the model fitted (see ``multiclass``).
    multiclass_cv_ : dict
        Only where ``multiclass="auto"`` compared the two models: the mean held-out
        log-loss of each (``"shared"``, ``"per-class"``) and the paired standard error of
        their difference (``"se"``).
    class_bias_ : ndarray of shape (C,)
        Class-shared model: the class biases ``b_k`` (zeros without).
    bias_penalty_ : float
        Class-shared model: the biases' ridge used (``inf``: no biases).
    logp_floor_ : ndarray of shape (M,)
        Class-shared model: every scorer's floor of log-probabilities (log of half its
        smallest positive training probability); smaller ones, and probabilities of 0,
        count as it.
    top_label_coef_ : ndarray of shape (7,)
        Class-shared model: ``theta_0 = 0, theta_1, ..., theta_6``, the Bernstein
        coefficients of the top-label correction's ``psi`` (all 0: no correction).
    top_label_penalty_ : float
        Class-shared model: the correction's penalty used (``inf``: no correction).
    top_label_kind_ : str
        Class-shared model: the correction chosen: ``"none"``, ``"polytope"`` (under the
        linear constraints), ``"certified"`` (the best point the certificate proves on the
        segment toward the unconstrained minimizer, or that minimizer) or ``"edge"`` (that
        point followed along the certified set's edge); see
        :mod:`fusion.bernstein.multiclass.toplabel`.
    top_label_cv_scores_, top_label_cv_se_ : dict or None
        Class-shared model, after the correction's cross-validation: the mean held-out
        log-loss of every candidate tried and its paired standard error, keyed by ``tau``
        (under the linear constraints; ``inf``: no correction) and ``(tau, "certified")``;
        where a certified correction was chosen, also ``(tau, "edge")``: the same followed
        along the certified set's edge, kept where lower by more than its standard error
        against ``(tau, "certified")`` (the one given for it).

    Notes
    -----
    ``fit`` also accepts dask arrays and dask DataFrames for ``S``, ``y`` and
    ``sample_weight``: the data stay on the cluster, only per-block summaries and sufficient
    statistics travel, and the fit runs on the client (:mod:`fusion.bernstein.dask.binary`).
    ``predict_proba``/``predict`` of a dask collection return lazy dask arrays.

    During cross-validation the ECDF (and for the default model the standardization of
    ``z``) is the one fitted on all training rows (as in the paper's protocol); only the
    coefficients are refitted per fold.

    Default model: a ``lam`` or degree chosen at the edge of its grid raises a
    ``UserWarning`` that names the parameter (``lam = inf``, the logistic-regression limit,
    is not an edge) when the edge beats its neighbour by more than a quarter of the largest
    paired standard error of the edge against the grid's other values
    (:func:`fusion._cv.edge_matters`): a flat tail of the cross-validation curve stays
    silent. The class-shared multi-class model's smallest ``lam`` then also fits one decade
    further down (its folds warm started at the edge) and warns only if that one beats the
    edge the same way: a smaller penalty that would fit no better is not reported. The
    rank-only model's largest degree warns the same way, against the best other
    degree. The features ``z`` are computed from ``u`` (through the inverse of the
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
    _fitted_attributes = tuple(
        "coef_ components_ degree_ cv_scores_ cv_se_ solver_status_ n_iter_ base_ base_coef_ "
        "base_shift_ base_scale_ base_clip_ lam_ n_cells_ bootstrap_coef_ bootstrap_basis_ "
        "bootstrap_informed_ logp_floor_ class_bias_ bias_penalty_ multiclass_cv_ "
        "top_label_coef_ top_label_penalty_ top_label_kind_ top_label_cv_scores_ "
        "top_label_cv_se_".split()
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
        "top_label_penalty": [Interval(Real, 0, None, closed="both"), StrOptions({"cv"})],
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
    top_label_penalty: float | str = "cv"

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
        S = single_network_dask(S, y, classes)  # one network's (n, C) dask array
        if is_multiclass_dask(S) or is_dask(S):
            # As the in-memory fit: on a fresh copy, adopted only when it succeeds, its dense
            # algebra on the client with one BLAS thread (see FusionEstimator.fit).
            self._validate_params()
            work = self._blank()
            with one_blas_thread():
                if is_multiclass_dask(S):
                    work._fit_shared_dask(S, y, sample_weight, classes)
                else:
                    work._fit_dask(S, y, sample_weight)
            self._adopt(work)
            return self
        if is_dask(y) or is_dask(sample_weight):
            # S is in memory on the client already, so its labels and weights fit there too.
            y = y.compute() if is_dask(y) else y
            if is_dask(sample_weight):
                sample_weight = sample_weight.compute()
        return super().fit(S, y, sample_weight, classes=classes)

    def _take(self, attributes: dict) -> None:
        """Adopt fitted attributes (of a result, or of a dask fit's preparation)."""
        self.__dict__.update(attributes)

    def _fit_scores(self, S, U, y, w):
        # the prepared rows (FusionEstimator._fit): weights of mean 1, the directions applied
        source = MemoryRows(U, S, y, w, self._weight_unit)
        self._fit_binary(source, U.shape[0], U.shape[1], self._kept_rows, dask=False)

    def _fit_dask(self, S, y, sample_weight) -> None:
        """A binary fit on dask collections (:mod:`.dask.binary`)."""
        from .dask import binary as dask_binary

        if self.n_bootstrap:
            raise ValueError(
                "n_bootstrap > 0 is not supported for dask input (the resamples need the "
                "rows); fit on a sample in memory for predict_interval, or pass n_bootstrap=0."
            )
        knots = self.ecdf_knots
        n_knots = DASK_ECDF_KNOTS if isinstance(knots, str) else knots  # "auto": a sketch
        prepared, source = dask_binary.prepare(
            S, y, sample_weight, n_knots=None if n_knots is None else int(n_knots),
            increasing=self.increasing, between=self._ecdf_between(),
        )  # fmt: skip
        self._take(prepared.attributes())
        self._fit_binary(source, prepared.n, prepared.n_features, None, dask=True)
        self.proba_bounds_ = self._bounds_for(prepared.total_weight)

    def _fit_binary(self, source, n: int, M: int, kept, dask: bool) -> None:
        """Plan, fit and adopt a binary model on a source (rows in memory or dask blocks)."""
        boot = BootstrapResult()
        if self.base is None:
            plan = planning.rank_only_plan(self, M, n, source.n_train, kept, dask)
            rule = plan.folds if plan.cross_validated else None
            stats = source.gram(rule, [c.structure for c in plan.candidates])
            result = fit_rank_only(plan, stats)
            if self.n_bootstrap:
                boot = bootstrap.rank_only_bootstrap(plan, source, result)
        else:
            scale = OwnScale.fit(self.base, self.ecdf_, self._inverse())
            plan = planning.logistic_plan(self, n, M, kept, dask)
            rule = plan.folds if plan.deals_folds else None
            data, folds = source.logistic_data(scale, plan.bins, rule)
            result = fit_logistic(plan, data, scale)
            if self.n_bootstrap:
                boot = bootstrap.logistic_bootstrap(plan, source, result, data, folds)
        self._take({**result.attributes(), **boot.attributes()})

    def _inverse(self) -> InverseECDF:
        # A cache derived from ecdf_ (never saved): rebuilt after a refit or a load.
        cache = self.__dict__.get("_inverse_cache")
        if cache is None or cache[0] is not self.ecdf_.knots_:
            cache = (self.ecdf_.knots_, InverseECDF(self.ecdf_.knots_, self.ecdf_.values_))
            self._inverse_cache = cache
        return cache[1]

    def _refit_params(self) -> dict:
        params = self.get_params(deep=False)
        params.update(degree=self.degree_, increasing=[bool(v) for v in self.increasing_])
        params["n_bootstrap"] = 0
        if self.base_ is not None:
            params["lam"] = self.lam_
        structure = Structure.of(self.degree_, self.components_)
        params["structure"] = structure.name(len(self.degree_))
        return params

    def _fit_proba_bounds(self, S, U, w) -> np.ndarray:
        return self._bounds_for(float(w.sum()))

    def _bounds_for(self, n: float) -> np.ndarray:
        """``proba_bounds_`` of a model fitted on ``n`` rows (canonical weight), from the fit
        alone (:meth:`.binary.model.BinaryModel.bounds`)."""
        return self._model(self.n_features_in_).bounds(n, self.ecdf_.values_)

    def _ecdf_between(self) -> str:
        # The rank-only model is rank-based; the default model uses the scores' own scale
        # anyway, and keeps the ECDF continuous in them.
        return "step" if self.base is None else "linear"

    # -- multi-class --------------------------------------------------------------------------
    def _fit_multiclass(self, S, y, sample_weight, classes=None) -> None:
        self._validate_params()
        n, M, C = S.shape
        if C == 2:
            super()._fit_multiclass(S, y, sample_weight, classes)
            return
        if self.n_bootstrap:
            raise ValueError(
                f"n_bootstrap={self.n_bootstrap}: bootstrap intervals (predict_interval) are "
                "for binary fusion; a multi-class fit has none. Pass n_bootstrap=0."
            )
        labels, index = check_multiclass_targets(y, n, C, classes)
        model = planning.multiclass_model(self, S, index, sample_weight)
        if model == "per-class":
            self._fit_per_class(S, labels, index, sample_weight)
        elif model == "shared":
            self._take(self._fit_shared(S, labels, index, sample_weight)[0])
        else:
            self._fit_better_multiclass(S, labels, index, sample_weight)

    def _fit_better_multiclass(self, S, classes, index, sample_weight) -> None:
        """Both multi-class models, and the one with the lower held-out log-loss on the same
        folds (:func:`.multiclass.shared.compare`)."""
        shared, held_shared, folds = self._fit_shared(S, classes, index, sample_weight)
        if held_shared is None:  # no cross-validation to compare the two on
            self._adopt(self._blank())
            self._take(shared)
            return
        w = check_sample_weight(sample_weight, S.shape[0])
        try:
            held_per_class = self._fit_per_class(
                S, classes, index, sample_weight, folds, increasing=shared["increasing_"]
            )
        except (ValueError, SolverError) as err:
            # the per-class model is only a candidate: a network constant for a class (which
            # the shared model takes in its stride) must not fail the fit
            warnings.warn(
                f"multiclass='auto' kept the class-shared model: the per-class model could "
                f"not be fitted to compare with it ({err})",
                UserWarning,
                stacklevel=caller_level(),
            )
            held_per_class = None
        scores, per_class = compare(held_shared, held_per_class, w)
        if per_class:  # the per-class model, fitted on this estimator
            self.multiclass_cv_ = scores
            return
        self._adopt(self._blank())  # the per-class model's state goes
        self._take({**shared, **({} if scores is None else {"multiclass_cv_": scores})})

    def _fit_shared(self, S: np.ndarray, classes, index, sample_weight):
        """The class-shared model (:func:`.multiclass.shared.fit_rows`): its fitted
        attributes, every row's held-out log-loss and test fold (None without
        cross-validation)."""

        def plan_for(n, M, C, kept):
            return planning.shared_plan(self, n, M, C, kept)

        w = check_sample_weight(sample_weight, S.shape[0])
        _, M, C = S.shape
        increasing = self._network_directions(M, C, lambda: label_rank_sums(S, index, w))
        S = reverse_networks(S, increasing)
        fit, held, folds = fit_rows(S, index, sample_weight, self.base, plan_for)
        return {**fit.attributes(classes), "increasing_": increasing}, held, folds

    def _fit_shared_dask(self, S, y, sample_weight, classes) -> None:
        """The class-shared model on dask scores (:mod:`.dask.shared`)."""
        from .dask import shared as dask_shared

        if self.base is None or self.multiclass == "per-class":
            raise ValueError(
                "multi-class dask input is fitted by the class-shared model only: pass "
                "multiclass='auto' or 'shared' and a base (not None), or fit in memory."
            )
        if self.n_bootstrap:
            raise ValueError("n_bootstrap > 0 is not supported for dask input.")

        def plan_for(n, M, C):
            return planning.shared_plan(self, n, M, C)

        fit, labels, increasing = dask_shared.fit(
            S, y, sample_weight, classes, self.base, plan_for, self._network_directions
        )
        self._take({**fit.attributes(labels), "increasing_": increasing})

    def _shared_model(self) -> SharedModel:
        return SharedModel.of(self.__dict__, self.ecdf_.lookups())

    def _class_distribution(self, S: np.ndarray) -> np.ndarray:
        if self.__dict__.get("multiclass_", "per-class") != "shared":
            return super()._class_distribution(S)
        return self._shared_model().proba(reverse_networks(S, self.increasing_))

    def _class_distribution_normalized(self, U: np.ndarray) -> np.ndarray:
        if self.__dict__.get("multiclass_", "per-class") != "shared":
            return super()._class_distribution_normalized(U)
        return self._shared_model().proba_normalized(U, self._inverse())

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
        if (
            self._is_multiclass()
            and self.n_features_in_ == 1
            and is_dask(S)
            and getattr(S, "ndim", 0) == 2
        ):
            S = S[:, None, :]  # one network's (n, C) dask array
        if is_multiclass_dask(S):
            from .dask import shared as dask_shared

            check_is_fitted(self, "n_classes_")
            M, C = self.n_features_in_, self.n_classes_
            return dask_shared.predict_proba(S, self._class_distribution, M, C)
        if is_dask(S):
            from .dask import binary as dask_binary

            check_is_fitted(self, "ecdf_")
            names = getattr(self, "feature_names_in_", None)
            return dask_binary.predict_proba(S, self._proba_block, self.n_features_in_, names)
        check_is_fitted(self, "classes_")
        if self._is_multiclass() or np.ndim(S) != 2 or self.missing != "error":
            return super().predict_proba(S)
        return self._proba_scores(self._validated_scores(S))

    def _proba_block(self, S: np.ndarray) -> np.ndarray:
        """``predict_proba`` of a dask block's checked scores."""
        return self._proba_scores(self._apply_direction(S))

    def _proba_scores(self, S: np.ndarray) -> np.ndarray:
        """``predict_proba`` of validated scores, the directions applied."""
        return self._proba_normalized(self.ecdf_.transform(S, between=self._ecdf_between()), S)

    def _model(self, M: int) -> BinaryModel:
        """The fitted binary model, checked against ``M`` scores."""
        return BinaryModel.of(self.__dict__, M, self._inverse)

    def _proba_normalized(self, U: np.ndarray, S: np.ndarray | None = None) -> np.ndarray:
        """Both columns of ``predict_proba`` at normalized points ``U`` (of the scores ``S``,
        when given), each to full precision."""
        # FusionEstimator.predict_proba, with fewer full-size temporaries (it clips U and p
        # into copies and stacks a third): normalized scores already lie inside (0, 1).
        return self._model(U.shape[1]).proba(U, S, self._proba_bounds())

    def predict(self, S):
        """Labels at threshold 0.5 (the negative class on an exact tie); multi-class, the class
        of the largest probability (the first column on a tie); lazy for dask input."""
        if self._is_multiclass() and (is_dask(S) or is_multiclass_dask(S)):
            classes = self.classes_
            top = self.predict_proba(S).argmax(axis=1)
            return top.map_blocks(lambda i: classes[i], dtype=classes.dtype)
        if is_dask(S):
            from .dask import binary as dask_binary

            check_is_fitted(self, "ecdf_")
            names = getattr(self, "feature_names_in_", None)
            return dask_binary.predict(
                S, self._proba_block, self.n_features_in_, names, self.classes_
            )
        return super().predict(S)

    def _calibrate_scores(self, S, U):
        return self._model(U.shape[1]).calibrate(U, S)

    def _calibrate(self, U):
        return self._calibrate_scores(None, U)

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

        **How.** (:mod:`fusion.bernstein.binary.bootstrap`.) The refits of a richer model than the
        fit (the fitted interaction components and one univariate component of twice the
        fitted degree per score: undersmoothing by the degree), on resamples of the rows,
        its penalty chosen again on every resample by the cross-validation of the richer
        model; for the rank-only model the same logistic refits without the linear
        features (a monotone ``g`` of the normalized scores, so the interval too depends on
        the ranks only). The interval holds the central ``1 - alpha``
        of the refits' probabilities (a percentile interval, the same on the logit scale),
        except where the training rows near ``s`` are all of one class (a grid cell of
        about 20 rows without both classes: a saturated corner, most of a rare-positive
        sample's low scores): there the refits share the model's extrapolation, and the
        bounds become those that monotonicity gives from the cells with both classes (the
        smallest upper bound at informed points above ``s``, 1 if none; the largest lower
        bound at informed points below, 0 if none). Finally it is widened to contain
        ``predict_proba``. The ECDF and the structure are held at their fitted values.

        **Measured coverage** of nominal 90 % (``benchmarks/bench_interval.py``, mean over
        5 seeds, two normal scores; ``benchmarks/RESULTS.md``), default model
        at n = 500 / 2,000 / 10,000: ``sigmoid(2 s1 + s2^3)`` 0.84 / 0.86 / 0.88; a rare
        positive class (3 %) 0.83 / 0.92 / 0.94; a product of normal CDFs 0.91 / 0.87 /
        0.90; a logistic truth 0.96 / 0.92 / 0.91 (rank-only model, 3 seeds, n = 500 / 2,000:
        0.82 / 0.86, 0.94 / 0.95, 0.86 / 0.85, 0.94 / 0.85). Single seeds range from 0.75 to 1.0:
        where cross-validation picks a smooth fit on a curved truth, the refits mostly do
        too. Coverage is lowest in the bands that hold few rows (for the rare-positive
        truth, p > 0.1).

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
            if getattr(self, "multiclass_", None) == "shared":
                raise ValueError(
                    "predict_interval is for binary models; the class-shared multi-class "
                    "model has no bootstrap intervals (fit it with n_bootstrap=0)."
                )
            raise ValueError(
                "predict_interval is for binary models; a multi-class model's estimators_ "
                "(one per class) each have their own."
            )
        if getattr(self, "bootstrap_coef_", None) is None:
            raise ValueError(
                "predict_interval needs bootstrap refits: fit with n_bootstrap > 0 (e.g. "
                "BernsteinFusion(n_bootstrap=200))."
            )
        if not (isinstance(alpha, Real) and 0.0 < alpha < 1.0):
            raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}.")
        S = self._validated_scores(S)
        U = self.ecdf_.transform(S, between=self._ecdf_between())
        if np.isnan(U).any():
            raise ValueError("predict_interval needs every score: a row has a missing (NaN) score.")
        model = self._model(U.shape[1])
        return model.interval(U, S, alpha, self.__dict__, self._proba_bounds())
