"""A fitted binary Bernstein model read from the estimator's fitted attributes: its checks,
its linear predictor and probabilities, the bounds of its predictions and its bootstrap
intervals (arithmetic in :mod:`.bootstrap`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ..._base import SATURATED
from ..scale import OwnScale
from ..structure import Structure
from . import bootstrap
from .semiparametric import ETA_CAP

__all__ = ["BinaryModel"]


def _inconsistent(problems: list[str], what: str = "fitted state") -> ValueError:
    return ValueError(f"BernsteinFusion's {what} is inconsistent: " + "; ".join(problems) + ".")


@dataclass(frozen=True, eq=False)
class BinaryModel:
    """The fitted ``coef_`` on its ``structure`` and, for the default model, the linear
    features' ``scale`` and weights ``base_coef`` (None: the rank-only model)."""

    structure: Structure
    coef: np.ndarray
    scale: OwnScale | None = None
    base_coef: np.ndarray | None = None

    @classmethod
    def of(cls, attrs: dict, M: int, inverse=None) -> BinaryModel:
        """The model of the fitted attributes ``attrs`` for ``M`` scores, after refusing
        arrays that do not match ``degree_`` and ``components_`` (a file edited by hand, see
        :mod:`fusion.persistence`) instead of evaluating something else. ``inverse``: the
        fitted ECDF's inverse, or a function that returns it (the default model's features,
        :class:`~fusion.bernstein.scale.OwnScale`)."""
        structure = Structure.of(attrs["degree_"], attrs["components_"])
        tensor = structure.is_tensor(M)
        want = structure.shapes[0] if tensor else (structure.n_coef,)
        problems = []
        coef = attrs["coef_"]
        if not (isinstance(coef, np.ndarray) and coef.dtype == np.float64 and coef.shape == want):
            problems.append(f"coef_ must be a float64 array of shape {want}")
        base = attrs["base_"]
        if base is not None:
            if len(base) != M or any(b not in ("logit", "identity") for b in base):
                problems.append(f"base_ must hold {M} of 'logit'/'identity'")
            for name in ("base_coef_", "base_shift_", "base_scale_"):
                a = attrs[name]
                if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == (M,)):
                    problems.append(f"{name} must be a float64 array of shape ({M},)")
                elif not np.all(np.isfinite(a)):
                    problems.append(f"{name} must be finite")
            if not problems and not (
                np.all(attrs["base_coef_"] >= 0) and np.all(attrs["base_scale_"] > 0)
            ):
                problems.append("base_coef_ must be >= 0 and base_scale_ > 0")
        if problems:
            raise _inconsistent(problems)
        if base is None:
            return cls(structure, coef)
        clips = attrs.get("base_clip_")  # None in models saved before it: the fixed clip
        if clips is not None and not (
            isinstance(clips, np.ndarray)
            and clips.dtype == np.float64
            and clips.shape == (M, 2)
            and np.all((0.0 < clips[:, 0]) & (clips[:, 0] < clips[:, 1]) & (clips[:, 1] < 1.0))
        ):
            raise _inconsistent([f"base_clip_ must be a float64 array of shape ({M}, 2) of "
                                 "intervals inside (0, 1)"])  # fmt: skip
        ecdf = attrs["ecdf_"]
        scale = OwnScale(base, attrs["base_shift_"], attrs["base_scale_"], ecdf.knots_, inverse,
                         clips)  # fmt: skip
        return cls(structure, coef, scale, attrs["base_coef_"])

    def polynomial(self, U: np.ndarray, coef: np.ndarray | None = None) -> np.ndarray:
        """The Bernstein polynomial at ``U`` (with other coefficients ``coef``, laid out as
        ``coef_``, when given)."""
        return self.structure.evaluate(self.coef if coef is None else coef, U)

    def eta(self, U: np.ndarray, S: np.ndarray | None = None) -> np.ndarray:
        """The default model's linear predictor at normalized points ``U`` (of the scores
        ``S``, when given), capped at ``+-ETA_CAP``."""
        eta = self.scale.features(U, S) @ self.base_coef
        eta += self.polynomial(U)
        # expit rounds to exactly 1 beyond 36.7: capped, every probability stays inside
        # (0, 1) (within 6.3e-16 of either end), still continuous and non-decreasing.
        return np.clip(eta, -ETA_CAP, ETA_CAP, out=eta)

    def calibrate(self, U: np.ndarray, S: np.ndarray | None = None) -> np.ndarray:
        """``P(Y = classes_[1])`` at ``U`` (of the scores ``S``, when given), unclipped."""
        if self.scale is None:
            return self.polynomial(U)
        return expit(self.eta(U, S))

    def proba(self, U: np.ndarray, S: np.ndarray | None, bounds) -> np.ndarray:
        """Both columns of ``predict_proba`` at ``U``, each to full precision (the rank-only
        model's clipped to ``bounds``)."""
        proba = np.empty((U.shape[0], 2))
        if self.scale is None:
            np.clip(self.polynomial(U), *bounds, out=proba[:, 1])
            np.subtract(1.0, proba[:, 1], out=proba[:, 0])
        else:
            eta = self.eta(U, S)
            # 1 - expit(eta) would round to 0 for eta > 37; expit(-eta) keeps every digit.
            expit(-eta, out=proba[:, 0])
            expit(eta, out=proba[:, 1])
        if not np.all(np.isfinite(proba)):
            raise RuntimeError(
                "BernsteinFusion produced non-finite probabilities; please report this."
            )
        return proba

    def bounds(self, n: float, values) -> np.ndarray:
        """``proba_bounds_`` of a model fitted on ``n`` rows (canonical weight), from the fit
        alone (so that a dask fit gets the same bounds without another pass over the rows);
        ``values``: the ECDF's values per column.

        The default model: ``[0, 1]`` (its capped linear predictor stays inside (0, 1)). The
        rank-only model's coefficients lie in ``[0, 1]``, so its polynomial reaches 0 or 1
        where a corner coefficient does. It is non-decreasing, so over the training rows it
        is smallest at the corner of the smallest normalized values: the bound is the
        add-half estimate ``0.5 / (n + 1)`` (:func:`fusion._base.proba_bounds` without rows
        at 0), capped at the polynomial's value at that corner when positive.
        """
        if self.scale is not None:
            return np.array([0.0, 1.0])
        corners = np.array([[v[0] for v in values], [v[-1] for v in values]], dtype=float)
        lo, hi = np.clip(self.calibrate(corners), 0.0, 1.0)
        eps = 0.5 / (n + 1.0)
        low = min(eps, float(lo)) if lo > SATURATED else eps
        high = max(1.0 - eps, float(hi)) if hi < 1.0 - SATURATED else 1.0 - eps
        return np.array([low, high])

    def interval(self, U, S, alpha: float, attrs: dict, bounds) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`fusion.bernstein.BernsteinFusion.predict_interval` at normalized points
        ``U`` of the scores ``S``, from the bootstrap's fitted attributes ``attrs``."""
        boot = attrs["bootstrap_coef_"]
        basis = self._bootstrap_basis(U.shape[1], attrs)
        B = boot.shape[0]

        def refits(V, T=None):
            Z = None if self.scale is None else self.scale.features(V, T)
            return bootstrap.logistic_proba(boot, basis, V, Z, ETA_CAP)

        lower, upper = bootstrap.percentile_bounds(
            lambda r: refits(U[r], S[r]), U.shape[0], B, alpha
        )
        informed = attrs.get("bootstrap_informed_")
        if informed is not None:

            def bounds_at(points):
                return bootstrap.percentile_bounds(
                    lambda r: refits(points[r]), points.shape[0], B, alpha
                )

            lower, upper = bootstrap.monotone_envelope(U, lower, upper, informed, bounds_at)
        point = self.proba(U, S, bounds)[:, 1]
        return np.minimum(lower, point), np.maximum(upper, point)

    def _bootstrap_basis(self, M: int, attrs: dict) -> Structure:
        """The refits' structure, checked against ``bootstrap_coef_``."""
        comps = attrs.get("bootstrap_basis_")
        try:
            basis = Structure(
                tuple((tuple(int(a) for a in ax), tuple(int(k) for k in d)) for ax, d in comps)
            )
            linear = 0 if self.scale is None else M
            ok = all(0 <= a < M for ax in basis.axes for a in ax) and (
                attrs["bootstrap_coef_"].shape[1] == linear + basis.n_coef
            )
        except (TypeError, ValueError, AttributeError, IndexError):
            ok = False
        if not ok:
            raise ValueError(
                "BernsteinFusion's bootstrap state is inconsistent (bootstrap_coef_ does not "
                "match bootstrap_basis_); refit with n_bootstrap > 0."
            )
        return basis
