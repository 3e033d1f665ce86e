"""``FusionClassifier``: base classifiers -> out-of-fold scores -> one fitted fusion model."""

from __future__ import annotations

import difflib
import warnings
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, TransformerMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils import Bunch, get_tags, indexable
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    has_fit_parameter,
    validate_data,
)

from .._base import write_model
from .._registry import METHODS
from .._registry import fit as fusion_fit
from .._validation import check_sample_weight as _check_weights
from .._validation import label_repr as _label
from .._validation import param_names
from .._warn import caller_level
from ..ecdf import ConstantColumnError
from .crossfit import (
    fit_one,
    out_of_fold_output,
    response_method,
    score_columns,
    stack_scores,
)
from .directions import conditional_directions
from .members import check_members, is_drop, member_pairs, nested_params, replace_members

__all__ = ["FusionClassifier"]

#: Parameters of FusionClassifier handed on to the fusion method when it has them.
_SHARED_WITH_FUSION = ("random_state", "verbose")

#: Parameter of FusionClassifier that the fusion method has too, resolved before it is handed
#: on (``"conditional"`` becomes one bool per score).
_RESOLVED_FOR_FUSION = ("increasing",)

#: Fusion parameters FusionClassifier sets when the user gives none, by method, with the
#: least number of scores (binary) from which they apply. BernsteinFusion's own default at
#: M = 3 fits both the full tensor and the additive model and keeps the one its
#: cross-validation prefers; the tensor's (K + 1)^M coefficients made that fit cost as much
#: as all the base estimators' fits together (issue 23), for held-out losses within noise of
#: the additive model's (benchmarks/RESULTS.md, FusionClassifier section).
_FUSION_DEFAULTS = {"bernstein": (3, {"structure": "additive"})}


def _is_prefit(estimator, cv) -> bool:
    return cv == "prefit" or isinstance(estimator, FrozenEstimator)


class FusionClassifier(ClassifierMixin, TransformerMixin, MetaEstimatorMixin, BaseEstimator):
    """Fuse the scores of several classifiers into one calibrated, monotone probability.

    The stacking workflow with a fusion method as the final step: each base estimator is
    cross-fitted to give an out-of-fold score on every training row, the fusion method
    (:func:`fusion.fit`) is fitted on those scores, and the base estimators are refitted on
    all rows to score new data. Unlike :class:`~sklearn.ensemble.StackingClassifier`'s
    logistic final estimator, the fused probability is calibrated and (for the monotone
    methods) monotone in every base estimator's score, in the direction the other scores
    leave it (``increasing``).

    Parameters
    ----------
    estimators : list of (str, estimator) tuples, or list of estimators
        The base classifiers, as for :class:`~sklearn.ensemble.StackingClassifier`. A plain
        list of estimators gets names as in :func:`~sklearn.pipeline.make_pipeline` (the
        lower-cased class name, ``-1``, ``-2``, ... on repeats); the names are used for nested
        parameters (``name__param``) and ``named_estimators_``. An estimator set to
        ``"drop"`` (``set_params(name="drop")``) is left out. A
        :class:`~sklearn.frozen.FrozenEstimator` is used as fitted: it scores the training
        rows without being cross-fitted or refitted.
    method : str, default="bernstein"
        Fusion method, a key of :data:`fusion.METHODS`.
    cv : int, cross-validation generator, iterable or "prefit", default=5
        How the out-of-fold scores are made. An int gives that many
        :class:`~sklearn.model_selection.StratifiedKFold` folds, shuffled with
        ``random_state`` (scikit-learn's own ``cv=int`` does not shuffle: rows stored in
        order, e.g. by date or by class, would then give folds from different
        distributions). A splitter or an iterable of ``(train, test)`` index arrays is used as
        given (for group splits pass the pairs); the test folds must partition the rows.
        ``"prefit"`` takes every base estimator as already fitted, the same as wrapping each
        in :class:`~sklearn.frozen.FrozenEstimator` (the current scikit-learn idiom, which
        also allows freezing only some): no base estimator is fitted, and they score the
        rows given to ``fit`` directly, so those rows must not be the estimators' own
        training rows.
    stack_method : {"auto", "predict_proba", "decision_function"}, default="auto"
        Which output of each base estimator is its score. ``"auto"`` takes
        ``predict_proba`` when the estimator has it, else ``decision_function`` (the order of
        :class:`~sklearn.ensemble.StackingClassifier`). The score is the positive class's
        probability or the decision function for a binary target, and all ``C`` columns for
        ``C >= 3`` classes. The two outputs generally give different fits: the rank part of
        the default model sees only the scores' order, but its logistic part is fitted on
        the scores' own scale (a probability is used as its log-odds), and probabilities
        that round to exactly 0 or 1 tie where decision functions do not. Only the rank-only
        methods (``base=None``, CopulaFusion, MR-MIC, RPR, ENIR) give the same fit for any
        strictly increasing transform of a score.
    increasing : "conditional", "auto", bool or sequence of bool/"auto", default="conditional"
        The direction in which the fused probability is monotone in each base estimator's
        score (binary targets; handed to the fusion method as one bool per score).
        ``"conditional"`` (default): monotone in every base model's score, in the direction
        the others leave it. A logistic regression on all the out-of-fold scores, each on its
        own scale (the logit of a probability, a decision function as it is), gives every
        score a weight; a score is used reversed only where its weight is significantly
        negative (Wald z below -3.09, one-sided p < 0.001, the threshold of ``"auto"``;
        :func:`fusion.classifier.directions.conditional_directions`). That is a base model
        whose information, once the others are known, points against the label (a naive
        Bayes or linear model beside a boosted model that already has their signal), to
        which :class:`~sklearn.ensemble.StackingClassifier`'s logistic regression gives a
        negative weight: the fused probability then falls as that model's probability rises.
        A score that is noise given the others, or one of two redundant scores that share a
        positive effect, keeps its direction (a reversal by chance has probability about
        0.001 per score). ``"auto"``: non-decreasing in every score unless a score is
        significantly anti-aligned with the label on its own (reversed, with a warning; see
        :class:`~fusion.FusionEstimator`); :func:`fusion.fit`'s default. A bool or one per
        score: used as given. The decision is in ``fusion_.increasing_``
        (``benchmarks/RESULTS.md``, "FusionClassifier", compares the choices). Multi-class
        scores: ``"conditional"`` hands on the method's default, ``"auto"``.
    passthrough_scores : bool, default=False
        Whether :meth:`transform` returns the base estimators' scores after the fused
        probabilities. Raw features are never passed into the fusion (its monotonicity is
        in the scores). The output of :meth:`transform` is the fused probability of
        ``classes_[1]`` (one column, binary) or of every class (``C`` columns), followed,
        when True, by the fusion's inputs: ``M`` score columns (binary) or ``M * C``,
        estimator by estimator (multi-class). :meth:`fit_transform` returns the same
        columns computed out of fold, so a later step of a
        :class:`~sklearn.pipeline.Pipeline` is not trained on in-sample scores.
    n_jobs : int, default=None
        Parallel jobs for the base fits: the folds of each estimator's cross-fitting, then
        the refits on all rows (joblib; ``-1`` means all processors).
    random_state : int, RandomState instance or None, default=0
        Shuffling of the folds when ``cv`` is an int, and the fusion method's own
        ``random_state`` when it has one. The base estimators keep theirs. The default gives
        identical results on identical input when the base estimators are deterministic.
    verbose : int, default=0
        Print the time of each estimator's cross-fitting and refit; also handed to the
        fusion method when it has a ``verbose`` parameter.
    **fusion_params
        Parameters of the fusion method's estimator (e.g. ``degree=5`` for
        ``"bernstein"``). They are parameters of this estimator too: ``get_params`` lists
        them and ``set_params``/:class:`~sklearn.model_selection.GridSearchCV` set them
        (``{"degree": [3, 5]}``). A fusion parameter named like one of this class's
        (``cv``, ``increasing``, ``random_state``, ``verbose``) cannot be given:
        ``increasing``, ``random_state`` and ``verbose`` are handed on, the method's ``cv``
        keeps its default. For ``"bernstein"`` with three or more binary scores,
        ``structure`` defaults to ``"additive"`` here (a sum of one monotone Bernstein
        polynomial per score): BernsteinFusion's own default also fits the full tensor,
        whose ``(K + 1)^M`` coefficients cost as much time as the base estimators' fits,
        for held-out losses within noise of the additive model's. Pass ``structure="auto"``
        for the method's own default.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted; for a binary target ``classes_[1]`` is the positive class.
    estimators_ : list of estimators
        The base estimators refitted on all rows (the given objects when prefit), without
        the dropped ones.
    named_estimators_ : sklearn.utils.Bunch
        ``estimators_`` by name (dropped ones as ``"drop"``).
    stack_method_ : list of str
        The output used as score, per entry of ``estimators_``.
    fusion_ : FusionEstimator
        The fusion model fitted on the out-of-fold scores; its input is ``(n, M)`` scores
        (binary) or ``(n, M, C)`` (multi-class), estimators in the order of
        ``estimators_``.
    n_features_in_ : int
        Number of features of ``X`` (when ``X`` has a shape).
    feature_names_in_ : ndarray of str
        Column names of ``X``, when it is a DataFrame with string column names.

    Notes
    -----
    The fusion is fitted on out-of-fold scores, but new data are scored by the estimators
    refitted on all rows, which are slightly better than any fold's model: the usual
    stacking approximation (:class:`~sklearn.ensemble.StackingClassifier`,
    :class:`~sklearn.calibration.CalibratedClassifierCV` with ``ensemble=False``).

    ``sample_weight`` goes to every base estimator whose ``fit`` takes it (in cross-fitting
    and refit) and to the fusion fit; base estimators that cannot take it are named in a
    warning. Estimators held in a :class:`~sklearn.pipeline.Pipeline` are among them:
    scikit-learn passes weights into a pipeline only with metadata routing.

    There is no ``decision_function``: the product is the probability, and its log-odds are
    infinite where the fusion gives exactly 0 or 1. Threshold tuning and scorers use
    ``predict_proba``.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fusion import FusionClassifier
    >>> X, y = make_classification(n_samples=600, random_state=0)
    >>> clf = FusionClassifier(
    ...     [("lr", LogisticRegression()), ("rf", RandomForestClassifier(random_state=0))],
    ...     degree=3,
    ... ).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    #: Fitted state (the names a model file may hold; see :mod:`fusion.persistence`).
    _fitted_attributes = (
        "classes_",
        "estimators_",
        "named_estimators_",
        "stack_method_",
        "fusion_",
        "n_features_in_",
        "feature_names_in_",
    )

    _parameter_constraints: ClassVar[dict] = {
        "estimators": [list],
        "method": [str],
        "cv": ["cv_object", StrOptions({"prefit"})],
        "stack_method": [StrOptions({"auto", "predict_proba", "decision_function"})],
        "increasing": ["boolean", StrOptions({"auto", "conditional"}), "array-like"],
        "passthrough_scores": ["boolean"],
        "n_jobs": [None, Integral],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimators,
        method: str = "bernstein",
        *,
        cv=5,
        stack_method: str = "auto",
        increasing="conditional",
        passthrough_scores: bool = False,
        n_jobs: int | None = None,
        random_state=0,
        verbose: int = 0,
        **fusion_params: Any,
    ):
        self.estimators = estimators
        self.method = method
        self.cv = cv
        self.stack_method = stack_method
        self.increasing = increasing
        self.passthrough_scores = passthrough_scores
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self._fusion_params = fusion_params

    # -- parameters ----------------------------------------------------------------------
    def _estimator_pairs(self) -> tuple[list[str], list]:
        """``(names, estimators)`` of the ``estimators`` parameter, in either accepted form."""
        return member_pairs(self.estimators)

    def _fusion_class(self, method: str | None = None) -> type:
        method = self.method if method is None else method
        try:
            return METHODS[method]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown fusion method {method!r}; known methods: {sorted(METHODS)}."
            ) from None

    @staticmethod
    def _known_method(method) -> bool:
        return isinstance(method, str) and method in METHODS

    def _check_fusion_param_names(self, names, method: str | None = None) -> None:
        cls = self._fusion_class(method)
        valid = set(param_names(cls)) - set(_SHARED_WITH_FUSION) - set(_RESOLVED_FOR_FUSION)
        unknown = sorted(set(names) - valid)
        if unknown:
            own = set(self._get_param_names())
            hints = []
            for name in unknown:
                close = difflib.get_close_matches(name, sorted(own | valid), n=1, cutoff=0.6)
                if close:
                    hints.append(f"{name!r}: did you mean {close[0]!r}?")
            raise ValueError(
                f"unknown parameter(s) {unknown} for FusionClassifier with method "
                f"{self.method if method is None else method!r}"
                + (f" ({'; '.join(hints)})" if hints else "")
                + f": its own parameters are {sorted(own)}, the fusion method "
                f"{cls.__name__} takes {sorted(valid)}, and base estimator parameters are "
                "written '<name>__<parameter>'."
            )

    def get_params(self, deep: bool = True) -> dict:
        """Parameters of this estimator, the fusion method's and (``deep``) the base
        estimators' as ``name__param``.

        Parameters
        ----------
        deep : bool, default=True
            Also list the base estimators and their parameters.

        Returns
        -------
        params : dict
        """
        out = BaseEstimator.get_params(self, deep=deep)
        out.update(self._fusion_params)
        if not deep:
            return out
        try:
            names, estimators = self._estimator_pairs()
        except ValueError:
            # set_params calls get_params before an invalid value is reported at fit.
            return out
        out.update(nested_params(names, estimators))
        return out

    def set_params(self, **params) -> FusionClassifier:
        """Set parameters: this estimator's, the fusion method's (by their own name), whole
        base estimators (by name, or ``"drop"``) and theirs (``name__param``).

        Returns
        -------
        self
        """
        if "estimators" in params:
            self.estimators = params.pop("estimators")
        own = set(self._get_param_names())
        try:
            names, estimators = self._estimator_pairs()
        except ValueError:
            names, estimators = [], []
        fusion = {
            key: params.pop(key)
            for key in list(params)
            if "__" not in key and key not in own and key not in names
        }
        if fusion:
            method = params.get("method", self.method)
            if self._known_method(method):  # an unknown method is reported at fit
                self._check_fusion_param_names(fusion, method)
            self._fusion_params = {**self._fusion_params, **fusion}
        replaced = {key: params.pop(key) for key in list(params) if key in names}
        if replaced:
            self.estimators = replace_members(names, estimators, replaced)
        if params:
            BaseEstimator.set_params(self, **params)
        return self

    @property
    def named_estimators(self) -> Bunch:
        """The base estimators (unfitted, as given) by name."""
        return Bunch(**dict(zip(*self._estimator_pairs(), strict=True)))

    def validate_params(self) -> None:
        """Check the parameters as :meth:`fit` does before it looks at the data.

        The checks are those of :meth:`fit`'s first step, without fitting anything: the
        type and range of every parameter, the base estimators (unique names that are not
        parameters and hold no ``"__"``, instances of classifiers, not all ``"drop"``), the
        fusion method's name and the fusion parameters it takes. :func:`fusion.load` runs
        them on the parameters of a saved classifier before it restores its fitted state.

        Raises
        ------
        ValueError
            A parameter, a base estimator or a fusion parameter is invalid; the message names
            it (scikit-learn's ``InvalidParameterError`` is a ``ValueError``).
        TypeError
            A base estimator is a class, not an instance.
        """
        self._validate_params()
        check_members(*self._estimator_pairs(), reserved=self.get_params(deep=False))
        self._check_fusion_param_names(self._fusion_params)

    def restore_derived_attributes(self) -> None:
        """Set the fitted attributes that follow from the others: ``named_estimators_``.

        Model files do not store ``named_estimators_``: :func:`fusion.load` builds the
        classifier from the saved parameters, restores the saved fitted attributes
        (``estimators_`` among them) and calls this method, which names every entry of
        ``estimators_`` after its entry of the ``estimators`` parameter (the dropped ones as
        ``"drop"``), as :meth:`fit` does. The parameters must be those of the fit.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            ``estimators_`` is missing.
        ValueError
            ``estimators_`` does not hold one estimator per base estimator that is not
            ``"drop"``.
        """
        check_is_fitted(self, "estimators_")
        names, estimators = self._estimator_pairs()
        kept = sum(not is_drop(e) for e in estimators)
        if not isinstance(self.estimators_, list) or len(self.estimators_) != kept:
            raise ValueError(
                f"estimators_ must be a list of the {kept} fitted base estimators that are not "
                "'drop', in the order of the estimators parameter."
            )
        self._name_fitted(names, estimators)

    def _fusion_kwargs(self) -> dict:
        """Keyword arguments of the fusion estimator: the fusion parameters (checked by
        :meth:`validate_params`) plus the shared ones it takes."""
        cls = self._fusion_class()
        kwargs = dict(self._fusion_params)
        for name in _SHARED_WITH_FUSION:
            if name in param_names(cls):
                kwargs[name] = getattr(self, name)
        return kwargs

    def _splits(self, X, y) -> list[tuple[np.ndarray, np.ndarray]]:
        if isinstance(self.cv, Integral):
            cv = StratifiedKFold(self.cv, shuffle=True, random_state=self.random_state)
        else:
            cv = check_cv(self.cv, y, classifier=True)
        return list(cv.split(X, y))

    # -- fitting -------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None) -> FusionClassifier:
        """Cross-fit the base estimators, fit the fusion on their out-of-fold scores, refit
        the base estimators on all rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or what the base estimators take
            Training data, passed to the base estimators unchanged (DataFrames keep their
            columns).
        y : array-like of shape (n_samples,)
            Class labels of any sortable kind.
        sample_weight : array-like of shape (n_samples,), optional
            Row weights, for the base estimators that take them and for the fusion.

        Returns
        -------
        self
        """
        self._fit(X, y, sample_weight)
        return self

    def fit_transform(self, X, y, sample_weight=None) -> np.ndarray:
        """Fit, and return :meth:`transform`'s columns computed out of fold.

        The fused probabilities (and with ``passthrough_scores`` the base scores) of each
        training row come from base models that did not see the row, as for scikit-learn's
        :class:`~sklearn.preprocessing.TargetEncoder`; so ``fit_transform(X, y)`` differs
        from ``fit(X, y).transform(X)``, which scores the rows with the refitted models. The
        fusion itself is fitted on these rows.

        Returns
        -------
        ndarray of shape (n_samples, n_output)
            The columns of :meth:`get_feature_names_out`.
        """
        S_oof = self._fit(X, y, sample_weight)
        return self._output(S_oof)

    def _fit(self, X, y, sample_weight) -> np.ndarray:
        """Fit and return the out-of-fold fusion input. Fitted attributes are set only when
        every step succeeded, so a failed refit leaves the previous fit in place."""
        self.validate_params()
        names, all_estimators = self._estimator_pairs()
        fusion_kwargs = self._fusion_kwargs()
        if y is None:
            # Wording of scikit-learn's own message, which its conformance checks look for.
            raise ValueError(
                "this estimator requires y to be passed, but the target y is None; pass the "
                "class label of every row."
            )
        X, y = indexable(X, y)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        if y.shape[0] == 0:
            raise ValueError("X and y are empty (0 rows); fitting needs labelled rows.")
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(
                f"y holds one class only ({_label(classes[0])}); a classifier needs at least two."
            )
        w = None
        if sample_weight is not None:
            w = _check_weights(sample_weight, y.shape[0])
            empty = np.bincount(y_idx, weights=w, minlength=classes.shape[0]) <= 0
            if empty.any():
                raise ValueError(
                    f"sample_weight is zero on every row of class {_label(classes[empty][0])}; "
                    "each class of y needs positive total weight (drop the class's rows "
                    "instead)."
                )

        kept = [(n, e) for n, e in zip(names, all_estimators, strict=True) if not is_drop(e)]
        methods = [response_method(n, e, self.stack_method) for n, e in kept]
        for name, est in kept:
            if _is_prefit(est, self.cv):
                try:
                    check_is_fitted(est)
                except NotFittedError:
                    raise ValueError(
                        f"estimator {name!r} is {'frozen' if self.cv != 'prefit' else 'prefit'} "
                        "but not fitted; fit it first, or let FusionClassifier cross-fit it "
                        "(no FrozenEstimator, cv not 'prefit')."
                    ) from None
        fit_params = self._weight_params(kept, w)
        to_fit = [i for i, (_, e) in enumerate(kept) if not _is_prefit(e, self.cv)]
        splits = self._splits(X, y) if to_fit else None

        columns = []
        for (name, est), method, params in zip(kept, methods, fit_params, strict=True):
            output = out_of_fold_output(
                name,
                est,
                X,
                y,
                method=method,
                splits=None if _is_prefit(est, self.cv) else splits,
                fit_params=params,
                n_jobs=self.n_jobs,
                verbose=self.verbose,
            )
            column = score_columns(output, method, classes.shape[0], name)
            if not np.ptp(column.reshape(column.shape[0], -1), axis=0).any():
                raise ConstantColumnError(
                    f"estimator {name!r} gave every row the same out-of-fold score; a constant "
                    f"score carries no ranking information. Drop it (set_params({name}='drop'))."
                )
            columns.append(column)
        S_oof = stack_scores(columns)
        fusion_kwargs = self._data_fusion_kwargs(S_oof, y_idx, w, fusion_kwargs)
        fusion_ = self._fit_fusion(S_oof, y, w, fusion_kwargs)

        estimators_ = [est for _, est in kept]
        refits = Parallel(n_jobs=self.n_jobs, verbose=self.verbose)(
            delayed(fit_one)(clone(kept[i][1]), X, y, fit_params[i]) for i in to_fit
        )
        for i, fitted in zip(to_fit, refits, strict=True):
            estimators_[i] = fitted
        for (name, _), est in zip(kept, estimators_, strict=True):
            est_classes = getattr(est, "classes_", None)
            if est_classes is not None and not np.array_equal(np.asarray(est_classes), classes):
                raise ValueError(
                    f"estimator {name!r} knows the classes [{', '.join(map(_label, est_classes))}]"
                    f", but y holds [{', '.join(map(_label, classes))}]; a prefit estimator must "
                    "have been fitted on the same classes."
                )

        validate_data(self, X, skip_check_array=True)  # n_features_in_, feature_names_in_
        self.classes_ = classes
        self.estimators_ = estimators_
        self.stack_method_ = methods
        self.fusion_ = fusion_
        self._name_fitted(names, all_estimators)
        return S_oof

    def _name_fitted(self, names: list[str], all_estimators: list) -> None:
        """Set the state derived from ``estimators_`` and the names of all ``estimators``
        (dropped ones included): ``named_estimators_`` and the score names."""
        fitted = iter(self.estimators_)
        self.named_estimators_ = Bunch(
            **{
                n: ("drop" if is_drop(e) else next(fitted))
                for n, e in zip(names, all_estimators, strict=True)
            }
        )
        self._score_names = [
            n for n, e in zip(names, all_estimators, strict=True) if not is_drop(e)
        ]

    def _weight_params(self, kept, w) -> list[dict]:
        """Per estimator, ``{"sample_weight": w}`` if its fit takes it (else a warning)."""
        if w is None:
            return [{} for _ in kept]
        params, ignored = [], []
        for name, est in kept:
            if _is_prefit(est, self.cv):
                params.append({})
            elif has_fit_parameter(est, "sample_weight"):
                params.append({"sample_weight": w})
            else:
                params.append({})
                ignored.append(name)
        if ignored:
            warnings.warn(
                f"base estimator(s) {ignored} do not take sample_weight in fit; they are "
                "fitted unweighted (the fusion fit uses the weights).",
                UserWarning,
                stacklevel=caller_level(),
            )
        return params

    def _data_dependent_defaults(self, S: np.ndarray) -> dict:
        """The fusion parameters of :data:`_FUSION_DEFAULTS` that apply to scores ``S`` and
        that the user did not give."""
        min_scores, defaults = _FUSION_DEFAULTS.get(self.method, (0, {}))
        if S.ndim != 2 or S.shape[1] < min_scores:
            return {}
        return {k: v for k, v in defaults.items() if k not in self._fusion_params}

    def _data_fusion_kwargs(self, S: np.ndarray, y_idx: np.ndarray, w, kwargs: dict) -> dict:
        """``kwargs`` completed by what depends on the out-of-fold scores: the defaults of
        :data:`_FUSION_DEFAULTS` and the score directions (``increasing``)."""
        kwargs = {**self._data_dependent_defaults(S), **kwargs}
        if "increasing" not in param_names(self._fusion_class()):
            return kwargs
        increasing = self.increasing
        if isinstance(increasing, str) and increasing == "conditional":
            if S.ndim != 2:
                return kwargs  # multi-class: the method's default
            increasing = [bool(v) for v in conditional_directions(S, y_idx == 1, w)]
        kwargs["increasing"] = increasing
        return kwargs

    def _fit_fusion(self, S: np.ndarray, y: np.ndarray, w, kwargs: dict):
        try:
            return fusion_fit(S, y, method=self.method, sample_weight=w, **kwargs)
        except ValueError as err:
            if S.ndim != 3:
                raise
            # "Only binary classification is supported." is scikit-learn's wording for a
            # binary-only classifier (check_classifier_not_supporting_multiclass).
            binary_only = not getattr(self._fusion_class(), "_supports_multiclass", False)
            raise ValueError(
                ("Only binary classification is supported. " if binary_only else "")
                + f"Fusion method {self.method!r} could not fuse the multi-class scores: an "
                f"(n, M, C) = {S.shape} array from {S.shape[1]} estimator(s) and "
                f"{S.shape[2]} classes. It said: {err}"
            ) from err

    # -- persistence ---------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the fitted classifier to ``path`` without pickle; read it with
        :func:`fusion.load`.

        The archive is that of every fusion model (:mod:`fusion.persistence`): the fusion
        model ``fusion_`` as plain data, and each scikit-learn base estimator as an embedded
        :mod:`skops.io` archive, which :func:`fusion.load` builds only from trusted types.
        A path is written atomically (a unique temporary file in the same directory, then a
        rename); a symbolic link is followed.

        Parameters
        ----------
        path : str, os.PathLike or binary file object
            Destination.

        Raises
        ------
        fusion.PersistenceError
            Some parameter or fitted attribute cannot be saved without pickle (nothing is
            written then).
        sklearn.exceptions.NotFittedError
            The classifier is not fitted.
        OSError
            Writing failed; the message names ``path``.
        """
        write_model(self, path)

    # -- prediction ----------------------------------------------------------------------
    def _base_scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        # The base estimators validate X first: they know what input they take (a 1-D X is
        # a list of texts to a text pipeline, an error to most others).
        outputs = [
            getattr(est, method)(X)
            for est, method in zip(self.estimators_, self.stack_method_, strict=True)
        ]
        validate_data(self, X, reset=False, skip_check_array=True)
        columns = [
            score_columns(output, method, self.classes_.shape[0], name)
            for output, method, name in zip(
                outputs, self.stack_method_, self._score_names, strict=True
            )
        ]
        return stack_scores(columns)

    def predict_proba(self, X) -> np.ndarray:
        """Fused class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the base estimators, as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        S = self._base_scores(X)
        return self.fusion_.predict_proba(S)

    def predict(self, X) -> np.ndarray:
        """The most probable class (the first in ``classes_`` order on a tie)."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def transform(self, X) -> np.ndarray:
        """The fused probabilities, and with ``passthrough_scores`` the base scores.

        Returns
        -------
        ndarray of shape (n_samples, n_output)
            The columns of :meth:`get_feature_names_out`.
        """
        return self._output(self._base_scores(X))

    def _output(self, S: np.ndarray) -> np.ndarray:
        # Callers compute S first: it checks that the estimator is fitted.
        proba = self.fusion_.predict_proba(S)
        out = proba[:, 1:] if self.classes_.shape[0] == 2 else proba
        if self.passthrough_scores:
            out = np.hstack([out, S.reshape(S.shape[0], -1)])
        return out

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of the :meth:`transform` columns: ``fused`` (binary) or ``fused_<class>``,
        then with ``passthrough_scores`` ``<estimator>`` (binary) or ``<estimator>_<class>``.

        Parameters
        ----------
        input_features : ignored
            The output columns do not depend on the names of the input features.

        Returns
        -------
        ndarray of str
        """
        check_is_fitted(self)
        if self.classes_.shape[0] == 2:
            names = ["fused"]
            if self.passthrough_scores:
                names += list(self._score_names)
        else:
            names = [f"fused_{c}" for c in self.classes_]
            if self.passthrough_scores:
                names += [f"{n}_{c}" for n in self._score_names for c in self.classes_]
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            estimators = [e for e in self._estimator_pairs()[1] if not is_drop(e)]
            tags.input_tags.allow_nan = all(get_tags(e).input_tags.allow_nan for e in estimators)
            tags.input_tags.sparse = all(get_tags(e).input_tags.sparse for e in estimators)
        except (ValueError, TypeError, AttributeError):
            pass  # invalid estimators are reported by fit
        try:
            # The fusion method's tag speaks of 2-D score input; it fuses (n, M, C) scores,
            # which is what this classifier gives it, when it supports multi-class input.
            tags.classifier_tags.multi_class = bool(
                getattr(self._fusion_class(), "_supports_multiclass", False)
            )
        except (ValueError, TypeError):
            pass
        return tags
