"""Multi-class scores in :class:`~fusion.bernstein.BernsteinFusion`: the class-shared model
(:mod:`.shared`, :mod:`.multinomial`), the per-class model and ``multiclass="auto"``'s choice
between them."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._cv import cv_splits, paired_se
from .._multiclass import check_multiclass_targets
from .._progress import Progress
from .._validation import canonical_weights, check_sample_weight
from .checks import as_degrees, fold_seed
from .pairs import ScoreRange, detect_scale, normalizer, row_folds
from .scale import InverseECDF
from .semiparametric import auto_degree
from .shared import (
    BIAS_GRID,
    fit_shared,
    needs_folds,
    shared_layout,
    shared_proba,
    shared_proba_normalized,
)
from .toplabel import DEGREE as TOP_LABEL_DEGREE
from .toplabel import PENALTY_GRID as TOP_LABEL_GRID
from .toplabel import satisfies

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


class MulticlassModels:
    """Fitting and predicting multi-class scores ``(n, M, C)``; methods of
    :class:`BernsteinFusion`."""

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
        scales = self._member_scales(S[kept])
        folds[kept] = row_folds(S[kept], index[kept], int(self.cv), fold_seed(self), sample, scales)
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
        scales = self._member_scales(S)
        degree = self._shared_degree(M, n)
        lams, taus, tops = self._shared_lams(n), self._bias_candidates(), self._top_candidates()
        fold, n_folds = (None, 0)
        if needs_folds(lams, taus, tops):
            fold, n_folds = self._shared_folds(S, index, kept, scales)
        progress = self._shared_progress(len(lams), len(taus), tops)
        fit = fit_shared(
            S, index, w / w.mean(), scales, degree, lams, taus, fold, n_folds,
            self._osqp_settings(), float(w.sum()), progress, tops,
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
            top_penalties=self._top_candidates(),
            cv_sample=_cv_sample,
            osqp_settings=self._osqp_settings(),
            progress=self._shared_progress,
        )
        fit, labels, M, C = fit_shared_dask(S, y, sample_weight, classes, plan)
        self._adopt_shared(fit, labels, M, C)

    def _shared_progress(self, n_lams: int, n_taus: int, tops=(np.inf,)) -> Progress:
        top = any(np.isfinite(t) for t in tops)
        search = n_lams > 1 or n_taus > 1 or top
        steps = (n_lams + (n_taus - 1 if n_taus > 1 else 0) if search else 0) + 1 + int(top)
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

    def _top_candidates(self) -> list[float]:
        """Penalties of the top-label correction: :data:`~fusion.bernstein.toplabel.
        PENALTY_GRID` for ``"cv"``, else the given one (``inf``: no correction)."""
        if self.top_label_penalty == "cv":
            return list(TOP_LABEL_GRID)
        return [float(self.top_label_penalty)]

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
        top = fit.top_label
        theta = np.zeros(TOP_LABEL_DEGREE) if top is None else np.asarray(top.theta, dtype=float)
        self.top_label_coef_ = np.r_[0.0, theta]
        self.top_label_penalty_ = np.inf if top is None else float(top.penalty)
        self.top_label_cv_scores_ = None if top is None else top.cv_scores
        self.top_label_cv_se_ = None if top is None else top.cv_se
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

    def _member_scales(self, S: np.ndarray) -> list[str]:
        """Every scorer's scale, ``"probability"`` or ``"logit"`` (:func:`.pairs.detect_scale`;
        raises for NaN, ``+inf`` or probabilities with negative values)."""
        bad = np.isnan(S) | (S == np.inf)
        if bad.any():
            i, m, k = (int(v[0]) for v in np.nonzero(bad))
            raise ValueError(
                f"S[{i}, {m}, {k}] is {S[i, m, k]}: the class-shared model needs every class "
                "score (logits, log-probabilities where -inf is a probability of 0, or "
                "probabilities). For missing scores use missing='marginal' with "
                "multiclass='per-class'."
            )
        return [detect_scale(ScoreRange.of(S[:, m, :]), self.base, m) for m in range(S.shape[1])]

    def _shared_folds(self, S, index, kept, scales) -> tuple[np.ndarray, int]:
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
            folds = row_folds(S, index, int(self.cv), fold_seed(self), sample, scales)
            return folds, int(self.cv)
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
            S, scales, self.logp_floor_, lookups, self.base_coef_, coefs, self.class_bias_,
            self._top_label_theta(),
        )  # fmt: skip

    def _class_distribution_normalized(self, U: np.ndarray) -> np.ndarray:
        if self.__dict__.get("multiclass_", "per-class") != "shared":
            return super()._class_distribution_normalized(U)
        self._check_shared_state()
        _, coefs = self._shared_lookups()
        inverse = InverseECDF(self.ecdf_.knots_, self.ecdf_.values_)
        Z = np.empty_like(U)
        for m in range(U.shape[1]):
            Z[:, m] = inverse.column(np.clip(U[:, m], 0.0, 1.0).ravel(), m).reshape(U[:, m].shape)
        return shared_proba_normalized(
            Z, U, self.base_coef_, coefs, self.class_bias_, self._top_label_theta()
        )

    def _top_label_theta(self) -> np.ndarray | None:
        """``theta_1 .. theta_K`` of the top-label correction; None for none (and for a model
        saved before it existed)."""
        coef = self.__dict__.get("top_label_coef_")
        if coef is None or not np.any(coef):
            return None
        return np.asarray(coef[1:], dtype=float)

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
        top = self.__dict__.get("top_label_coef_")
        if top is not None and not (
            isinstance(top, np.ndarray)
            and top.ndim == 1
            and top.shape[0] >= 2
            and top[0] == 0.0
            and np.all(np.isfinite(top))
            and satisfies(top[1:])
        ):
            problems.append(
                "top_label_coef_ must be a finite array starting with 0 whose correction keeps "
                "the probabilities monotone (see fusion.bernstein.toplabel)"
            )
        if problems:
            raise ValueError(
                "BernsteinFusion's fitted state is inconsistent: " + "; ".join(problems) + "."
            )
