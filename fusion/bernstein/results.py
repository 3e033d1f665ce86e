"""The frozen results of the Bernstein fitters, and the fitted attributes each gives the
estimator (the names of the fitted state that model files hold: a result never changes
them, so saved models load unchanged)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ecdf import ECDFNormalizer
from .scale import OwnScale
from .structure import Layout, Structure

__all__ = ["LogisticResult", "RankOnlyResult", "BootstrapResult", "SharedResult"]


def _fitted_structure(structure: Structure, degrees) -> dict:
    return {
        "degree_": tuple(int(k) for k in degrees),
        "components_": tuple(tuple(int(a) for a in axes) for axes in structure.axes),
    }


def _scores(cv_scores, cv_se) -> dict:
    """``cv_scores_`` and ``cv_se_`` where cross-validation ran (None: absent)."""
    out = {}
    if cv_scores is not None:
        out["cv_scores_"] = cv_scores
    if cv_se is not None:
        out["cv_se_"] = cv_se
    return out


@dataclass(frozen=True, eq=False)
class LogisticResult:
    """A fitted default model: the scale of its linear features, their weights ``c``, the
    coefficients of ``g`` on ``structure`` (degrees ``degrees``), the penalty, the
    cross-validation's scores (None without), the cells it ran on (None: the rows) and the
    final solve's status and iterations. ``candidate``: the structure of the candidate
    fitted, the refits' resolution even where ``lam = inf`` leaves ``g`` a constant."""

    scale: OwnScale
    base_coef: np.ndarray
    coef: np.ndarray
    structure: Structure
    degrees: tuple[int, ...]
    candidate: Structure
    lam: float
    cv_scores: dict | None
    cv_se: dict | None
    n_cells: int | None
    status: str
    n_iter: int

    def attributes(self) -> dict:
        return {
            "base_": self.scale.bases,
            "base_shift_": self.scale.shift,
            "base_scale_": self.scale.scale,
            "base_clip_": self.scale.clips,
            "n_cells_": self.n_cells,
            **_scores(self.cv_scores, self.cv_se),
            "base_coef_": self.base_coef,
            "coef_": self.coef,
            **_fitted_structure(self.structure, self.degrees),
            "lam_": self.lam,
            "solver_status_": self.status,
            "n_iter_": self.n_iter,
        }


@dataclass(frozen=True, eq=False)
class RankOnlyResult:
    """A fitted rank-only model: the coefficients of ``f`` on ``structure`` (degrees
    ``degrees``), the cross-validation's scores (None without) and OSQP's status and
    iterations of the final QP."""

    coef: np.ndarray
    structure: Structure
    degrees: tuple[int, ...]
    cv_scores: dict | None
    status: str
    n_iter: int

    def attributes(self) -> dict:
        nothing = ("base_", "base_coef_", "base_shift_", "base_scale_", "base_clip_", "lam_",
                   "n_cells_")  # fmt: skip
        return {
            **dict.fromkeys(nothing),
            **_scores(self.cv_scores, None),
            **_fitted_structure(self.structure, self.degrees),
            "coef_": self.coef,
            "solver_status_": self.status,
            "n_iter_": self.n_iter,
        }


@dataclass(frozen=True, eq=False)
class BootstrapResult:
    """The bootstrap refits (:mod:`fusion.bernstein.binary.bootstrap`): their coefficients
    on ``structure`` (after the linear weights for the default model), and where the
    training rows hold both classes (``informed``). None of it without refits."""

    coef: np.ndarray | None = None
    structure: Structure | None = None
    informed: np.ndarray | None = None

    def attributes(self) -> dict:
        if self.coef is None:
            return {"bootstrap_coef_": None}
        return {
            "bootstrap_coef_": self.coef,
            "bootstrap_basis_": self.structure.components,
            "bootstrap_informed_": self.informed,
        }


@dataclass(frozen=True, eq=False)
class SharedResult:
    """A fitted class-shared model: the scorers' axes (:class:`~fusion.bernstein.multiclass.
    pairs.MemberAxis`), their scales and their ECDF, the degree, ``x`` (``c``, ``theta`` and,
    with biases, ``b``) on ``layout``, the penalties, the cross-validation's scores (keyed by
    ``(lam, tau)``), the final solve's iterations and status, the top-label correction's
    coefficients (``theta_0 = 0`` first; all 0: none) and its fit (a
    :class:`~fusion.bernstein.multiclass.toplabel.TopLabelFit`; None: not searched), and
    every held-out row's log-loss at the chosen penalties (in memory, by the caller's row;
    NaN for a row outside the cross-validation)."""

    axes: list
    scales: tuple
    ecdf: ECDFNormalizer
    degree: int
    layout: Layout
    x: np.ndarray
    lam: float
    tau: float
    cv_scores: dict | None
    cv_se: dict | None
    n_iter: int
    status: str
    top_coef: np.ndarray
    top_label: object | None = None
    heldout: np.ndarray | None = None

    def attributes(self, classes) -> dict:
        """The fitted attributes, for class labels ``classes`` (the columns' order)."""
        M, C = len(self.axes), len(classes)
        c, parts = self.layout.split(self.x)
        degree = self.degree
        degree_ = (int(degree),) * M
        P = M * (degree + 2)
        top = self.top_label
        out = {
            "classes_": classes,
            "n_classes_": C,
            "n_features_in_": M,
            "multiclass_": "shared",
            "base_": tuple("logit" if v == "probability" else "identity" for v in self.scales),
            "base_coef_": np.array(c, dtype=float),
            "coef_": np.concatenate([np.ravel(p) for p in parts]),
            "components_": tuple((m,) for m in range(M)),
            "degree_": degree_,
            "lam_": float(self.lam),
            "class_bias_": self.x[P:].copy() if self.x.shape[0] > P else np.zeros(C),
            "bias_penalty_": float(self.tau),
        }
        if self.cv_scores is not None:
            key = ("additive", degree_)
            out["cv_scores_"] = {(*key, *k): v for k, v in self.cv_scores.items()}
            out["cv_se_"] = {(*key, *k): v for k, v in self.cv_se.items()}
        out.update(
            top_label_coef_=self.top_coef,
            top_label_penalty_=np.inf if top is None else float(top.penalty),
            top_label_kind_=_kind(top),
            top_label_cv_scores_=None if top is None else top.cv_scores,
            top_label_cv_se_=None if top is None else top.cv_se,
            ecdf_=self.ecdf,
            ecdf_knots_=max(len(a.knots) for a in self.axes),
            ecdf_error_bound_=float(max(np.max(np.diff(a.values)) for a in self.axes)),
            logp_floor_=np.array([a.floor for a in self.axes]),
            increasing_=np.ones(M, dtype=bool),
            reversal_offset_=np.zeros(M),
            base_shift_=None,
            base_scale_=None,
            base_clip_=None,
            n_cells_=None,
            bootstrap_coef_=None,
            solver_status_=self.status,
            n_iter_=int(self.n_iter),
            proba_bounds_=np.array([0.0, 1.0]),
        )
        return out


def _kind(top) -> str:
    """``top_label_kind_``: which correction the top-label fit ``top`` holds."""
    if top is None or not np.isfinite(top.penalty) or not np.any(top.theta):
        return "none"
    return "edge" if top.edge else "certified" if top.relaxed else "polytope"
