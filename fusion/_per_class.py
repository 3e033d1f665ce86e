"""The per-class multi-class fusion every method inherits: one binary fusion per class on the
class's scores, coupled by a softmax fitted on out-of-fold probabilities
(:class:`fusion.FusionEstimator` fits multi-class scores ``(n, M, C)`` through it)."""

from __future__ import annotations

import numpy as np

from ._cv import content_folds
from ._direction import (
    DIRECTION_Z,
    label_rank_sums,
    label_rank_z,
    resolve_increasing,
    warn_reversed_networks,
)
from ._multiclass import (
    check_frame_columns,
    check_multiclass_targets,
    couple,
    fit_coupling,
    heldout_coupled_losses,
    multiclass_scores,
)
from ._validation import check_sample_weight, label_repr

__all__ = ["COUPLING_FOLDS", "PerClassFusion"]


#: Folds of the out-of-fold probabilities the multi-class coupling is fitted on.
COUPLING_FOLDS = 5


class PerClassFusion:
    """One binary fusion per class, coupled by a softmax; methods of
    :class:`fusion.FusionEstimator`."""

    def _fit_multiclass(self, S: np.ndarray, y, sample_weight, classes=None) -> None:
        """One binary fusion per class on the class's scores, coupled by a softmax."""
        self._validate_params()
        self._check_multiclass_support()
        n, M, C = S.shape
        if C == 2 and classes is None:  # two classes: the binary fusion of the second's scores
            self._fit(S[:, :, 1], y, sample_weight)
            return
        classes, index = check_multiclass_targets(y, n, C, classes)
        if C == 2:  # the binary fusion of the second column's scores
            if classes[0] > classes[1]:
                raise ValueError(
                    f"classes={classes.tolist()} puts the larger label first; a binary model "
                    "predicts the second label of the sorted pair (classes_[1]) from the "
                    "second column. Pass the positive class's scores S[:, :, 0] (shape "
                    "(n, M)) with its labels, or swap the columns."
                )
            self._fit(S[:, :, 1], classes[index], sample_weight)
            return
        self._fit_per_class(S, classes, index, sample_weight)

    def _fit_per_class(
        self,
        S: np.ndarray,
        classes,
        index,
        sample_weight,
        folds: np.ndarray | None = None,
        increasing: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """One binary fusion per class on the class's scores, coupled by a softmax.

        ``folds``: the test fold of every row for the out-of-fold coupling (default:
        :data:`COUPLING_FOLDS` folds by content). ``increasing``: every network's direction,
        given to every class's fusion (default: :meth:`_network_directions`, one decision
        per network, not one per class). Returns every row's held-out log-loss of the
        coupled distribution on those folds (its fold's coupling fitted on the other folds'
        out-of-fold probabilities), or None where the method has no out-of-fold
        probabilities."""
        n, M, C = S.shape
        unseen = np.setdiff1d(np.arange(C), index)
        if unseen.size:
            raise ValueError(
                f"classes {classes[unseen][:10].tolist()} do not occur in the fusion sample: "
                f"{type(self).__name__} fits one fusion per class, which needs every class. "
                "BernsteinFusion's class-shared model (multiclass='shared') fits classes "
                "without rows."
            )
        w = check_sample_weight(sample_weight, n)
        params = self.get_params(deep=False)
        if "increasing" in params:
            if increasing is None:
                increasing = self._network_directions(M, C, lambda: label_rank_sums(S, index, w))
            params["increasing"] = [bool(v) for v in increasing]
        estimators, P = [], np.empty((n, C))
        for k in range(C):
            est = type(self)(**params)
            try:
                est.fit(S[:, :, k], (index == k).astype(int), sample_weight=w)
            except ValueError as err:
                raise ValueError(
                    f"class {label_repr(classes[k])} (scores S[:, :, {k}]): {err}"
                ) from err
            estimators.append(est)
            P[:, k] = est._positive_proba(S[:, :, k])
        oof, folds = self._out_of_fold_proba(S, index, w, estimators, folds)
        self.coupling_slope_, self.coupling_intercept_, self.coupling_penalty_ = fit_coupling(
            P if oof is None else oof, index, w, folds
        )
        self.estimators_ = estimators
        self.classes_ = classes
        self.n_classes_ = C
        self.n_features_in_ = M
        self.multiclass_ = "per-class"
        return (
            None
            if oof is None
            else heldout_coupled_losses(oof, index, w, folds, self.coupling_penalty_)
        )

    def _network_directions(self, M: int, C: int, rank_sums) -> np.ndarray:
        """Every network's direction in a multi-class fit of ``M`` networks and ``C``
        classes: ``increasing`` resolved per network, ``"auto"`` reversing a network whose
        label ranks are significantly low, with one warning. ``rank_sums()`` gives them
        (:func:`fusion._direction.label_rank_sums`); it is called only for ``"auto"``."""
        wanted = resolve_increasing(getattr(self, "increasing", True), M)
        increasing = np.array([True if v is None else v for v in wanted], dtype=bool)
        auto = [m for m, v in enumerate(wanted) if v is None]
        if not auto:
            return increasing
        z = label_rank_z(rank_sums(), C)
        flagged = [m for m in auto if z[m] < DIRECTION_Z]
        if flagged:
            warn_reversed_networks(flagged, z[flagged])
            increasing[flagged] = False
        return increasing

    def _refit_params(self) -> dict | None:
        """Parameters that refit this fitted model's choices (penalty, degree, directions)
        without a search, for the out-of-fold coupling of a multi-class fit; None: the
        method has none (the coupling is then fitted on in-sample probabilities)."""
        return None

    def _out_of_fold_proba(
        self,
        S: np.ndarray,
        index: np.ndarray,
        w: np.ndarray,
        estimators: list,
        folds: np.ndarray | None = None,
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """One-vs-rest probabilities of every row from fits that did not see it, and the
        fold of every row (both None where the method cannot refit without a search).

        The in-sample probabilities of flexible one-vs-rest fits are overconfident where a
        class has few rows (25 per class on digits: coupled log-loss 1.0 against 0.28 for
        temperature scaling), and a softmax coupling fitted on them keeps that. Each class's
        chosen model (:meth:`_refit_params`, no new search) is refitted on
        :data:`COUPLING_FOLDS` content-assigned folds and predicts the held-out rows; the
        coupling is fitted on those.
        """
        refits = [e._refit_params() for e in estimators]
        if any(r is None for r in refits):
            return None, None
        n, _, C = S.shape
        if folds is None:
            keys = np.nan_to_num(S.reshape(n, -1).astype(float), nan=-1.0, posinf=2.0, neginf=-2.0)
            folds = content_folds(keys, index, COUPLING_FOLDS, getattr(self, "random_state", 0))
        oof = np.full((n, C), np.nan)  # a row in no test fold has none
        for f in np.unique(folds[folds >= 0]):
            test = folds == f
            train = ~test
            if not test.any():
                continue
            for k, params in enumerate(refits):
                yk = (index[train] == k).astype(int)
                if yk.min() == yk.max():  # a class absent from (or alone in) the fold
                    return None, None
                est = type(self)(**params).fit(S[train, :, k], yk, sample_weight=w[train])
                oof[test, k] = est._positive_proba(S[test, :, k])
        return oof, folds

    def _is_multiclass(self) -> bool:
        return "n_classes_" in self.__dict__

    def _multiclass_proba(self, S) -> np.ndarray:
        S3 = multiclass_scores(S)
        if S3 is None and self.n_features_in_ == 1 and np.ndim(S) == 2:  # one network (n, C)
            check_frame_columns(S, self.classes_)
            S3 = multiclass_scores(np.asarray(S)[:, None, :])
        if S3 is None or S3.shape[1:] != (self.n_features_in_, self.n_classes_):
            raise ValueError(
                f"this model fuses {self.n_features_in_} scorers of {self.n_classes_} classes: "
                f"pass S of shape (n, {self.n_features_in_}, {self.n_classes_}) (or a list of "
                f"{self.n_features_in_} arrays of shape (n, {self.n_classes_})), got "
                f"{np.shape(S) if S3 is None else S3.shape}."
            )
        return self._class_distribution(S3)

    def _class_distribution(self, S: np.ndarray) -> np.ndarray:
        """The fused class distribution (n, C) of multi-class scores (n, M, C): the
        one-vs-rest fusions coupled by the softmax."""
        P = np.column_stack([e._positive_proba(S[:, :, k]) for k, e in enumerate(self.estimators_)])
        return couple(P, self.coupling_slope_, self.coupling_intercept_)

    def _class_distribution_normalized(self, U: np.ndarray) -> np.ndarray:
        """:meth:`_class_distribution` at normalized points (n, M, C)."""
        P = np.column_stack(
            [e.calibrating_function(U[:, :, k]) for k, e in enumerate(self.estimators_)]
        )
        return couple(P, self.coupling_slope_, self.coupling_intercept_)
