"""Bootstrap refits and ``predict_interval`` of :class:`~fusion.bernstein.BernsteinFusion`
(the arithmetic is in :mod:`.bootstrap`)."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._progress import Progress
from . import bootstrap, logistic
from .cells import cell_edges, resolve_bins
from .checks import fold_seed
from .semiparametric import ETA_CAP, default_lam_grid


class BootstrapIntervals:
    """``n_bootstrap`` refits and :meth:`predict_interval`; methods of :class:`BernsteinFusion`."""

    def _resamples(self, n: int):
        """Row counts of ``n_bootstrap`` multinomial resamples of ``n`` rows, seeded by
        ``random_state`` (a stream apart from the folds'), with progress."""
        rng = np.random.default_rng([fold_seed(self), 1])
        with Progress(self.n_bootstrap, desc="bootstrap", enabled=self.verbose) as progress:
            for _ in range(self.n_bootstrap):
                yield rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
                progress.step()

    def _bootstrap_logistic(self, U, Z, y, w, edges, data, degrees, components) -> None:
        """The default model's refits (:func:`fusion.bernstein.bootstrap.logistic_refits`) on
        the richer model of :func:`~fusion.bernstein.bootstrap.interval_basis` around the
        fitted candidate's ``degrees`` and ``components`` (with ``lam_ = inf`` the fitted
        state holds degree 0: the candidate's degrees still set the refits' resolution),
        the penalty chosen on every resample (``lam="cv"``: the cross-validation of
        ``data``'s folds) or the given one, with the fit's own ridge (a resample's weights
        would give another)."""
        basis = bootstrap.interval_basis(degrees, components)
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
        """The rank-only model's refits: the default model's refits without its linear
        features (:func:`~fusion.bernstein.bootstrap.logistic_refits` with
        ``linear=False``), a monotone Bernstein ``g`` on the normalized scores of the
        richer basis of :func:`~fusion.bernstein.bootstrap.interval_basis`, so the interval,
        like the fit, depends on the scores through their ranks only. Its penalty is chosen
        on every resample from the cross-validation of the finite ``lam`` of
        :func:`~fusion.bernstein.semiparametric.default_lam_grid`; on rows, or on cells of
        the normalized scores beyond the default model's ``bins`` threshold.

        The rank-only fit's own least-squares refits covered the truth less (0.67-0.86 on
        ``sigmoid(2 s1 + s2^3)`` at n = 2,000, ``benchmarks/bench_interval.py``): on the
        probability scale a polynomial's bias near 0 and 1 is not in their spread."""
        n, M = U.shape
        basis = bootstrap.interval_basis(self.degree_, self.components_)
        lams = [v for v in default_lam_grid(n) if np.isfinite(v)]
        bins = resolve_bins(self.bins, n, M, dask=False)
        folds, edges = {}, None
        if bins is None:
            folds["splits"] = self._cv_splits(U, y)
        else:
            edges = cell_edges(np.zeros(M), np.ones(M), bins)
            folds["fold_of"], folds["n_folds"] = self._cell_folds(U, y)
        coef = bootstrap.logistic_refits(
            U, U, y, w, basis, lams, self._resamples(n), self._osqp_settings(),
            logistic.base_ridge(float(w.sum())), edges=edges, linear=False, **folds,
        )  # fmt: skip
        self.bootstrap_coef_ = coef[:, M:]
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
        U = self.ecdf_.transform(S, between=self._ecdf_between())
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
        Z = None if self.base_ is None else self._features(U, S)
        return bootstrap.logistic_proba(self.bootstrap_coef_, basis, U, Z, ETA_CAP)
