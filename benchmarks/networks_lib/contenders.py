"""What the real-network benchmark fits on the networks' scores ``S`` (n, M, C).

Every contender has ``fit(S, y)`` and ``predict_proba(S) -> (n, C)``; ``y`` holds class
indices ``0 .. C - 1``. ``S`` is passed as the networks give it (CIFAR-100: logits;
CIFAR-10: softmax probabilities). The peers read each member as its users would: a member
whose rows lie in ``[0, 1]`` and sum to 1 is a probability vector and is logged (clipped at
:data:`multiclass_lib.contenders.LOG_CLIP`), anything else is logits and goes through a
log-softmax (:func:`member_log_probabilities`). ``L`` below is the members' mean
log-probability (for M = 1 the network's own log-softmax).

* ``default`` -- ``fusion.fit(S, y)`` exactly as a user calls it;
* ``uncalibrated`` -- the mean of the members' probabilities, nothing fitted (for M = 1 the
  network's softmax); a reference, not a peer;
* ``ts`` -- temperature scaling of ``L`` (likelihood);
* ``ts_members`` -- each member temperature-scaled, then the mean probability (M >= 2);
* ``loglinear`` -- the log-linear pool ``softmax(sum_m w_m log p_m)`` with ``w_m >= 0``
  fitted by multinomial likelihood (M >= 2; for M = 1 it is ``ts``);
* ``ets`` -- ensemble temperature scaling (Zhang, Kailkhura & Han 2020, "Mix-n-Match"):
  ``w_1 softmax(L / T) + w_2 softmax(L) + w_3 / C`` with ``T`` and then the weights (on the
  simplex) fitted by the mean squared error, as the authors' code does;
* ``vector`` -- vector scaling of ``L`` (:class:`multiclass_lib.contenders.VectorScaling`);
* ``svs``, ``sms`` -- structured vector / matrix scaling (Berta et al. 2025) as the
  ``probmetrics`` package implements them (``get_calibrator("svs")`` / ``"sms"``), given
  ``softmax(L)``: for an ensemble, the mean log-probability of the members. They need the
  optional extra ``networks`` (probmetrics, torch, numba); without it they are skipped.
"""

from __future__ import annotations

import numpy as np
from harness.contender import Contender
from multiclass_lib.contenders import (
    LOG_CLIP,
    T_BOUNDS,
    DefaultFusion,
    MemberTemperatureAverage,
    TemperatureOfAverage,
    VectorScaling,
    fit_temperature,
)
from scipy.optimize import minimize, minimize_scalar
from scipy.special import log_softmax, logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin

__all__ = [
    "PROBABILITY_TOL",
    "DEFAULT",
    "REFERENCE",
    "PROBMETRICS",
    "Contender",
    "member_log_probabilities",
    "mean_log_probabilities",
    "probmetrics_missing",
    "Uncalibrated",
    "TemperatureScaling",
    "MemberTemperatureScaling",
    "LogLinearPool",
    "EnsembleTemperatureScaling",
    "VectorScalingOfMean",
    "ProbmetricsCalibrator",
    "CONTENDERS",
    "resolve",
]

#: A member whose rows sum to 1 within this (and lie in [0, 1]) holds probabilities.
PROBABILITY_TOL = 1e-4

#: The contender the benchmark is about.
DEFAULT = "default"

#: Temperature scaling: the peer every target names.
REFERENCE = "ts"

#: The peers that need the optional extra ``networks``.
PROBMETRICS = ("svs", "sms")


def member_log_probabilities(S_m) -> np.ndarray:
    """One member's scores ``S_m`` (n, C) as log-probabilities, in double precision.

    Probabilities (every entry in ``[0, 1]``, rows summing to 1 within
    :data:`PROBABILITY_TOL`) are clipped at ``LOG_CLIP`` and logged; anything else is read
    as logits: ``log_softmax(S_m)``.
    """
    S_m = np.asarray(S_m, dtype=float)
    is_probability = (
        S_m.min() >= 0.0
        and S_m.max() <= 1.0
        and np.abs(S_m.sum(axis=1) - 1.0).max() <= PROBABILITY_TOL
    )
    if is_probability:
        return np.log(np.clip(S_m, LOG_CLIP, 1.0))
    return log_softmax(S_m, axis=1)


def mean_log_probabilities(S) -> np.ndarray:
    """The members' mean log-probability ``L`` (n, C) of ``S`` (n, M, C)."""
    S = np.asarray(S)
    out = np.zeros((S.shape[0], S.shape[2]))
    for m in range(S.shape[1]):
        out += member_log_probabilities(S[:, m])
    return out / S.shape[1]


def probmetrics_missing() -> str | None:
    """Why the probmetrics peers cannot run (None when they can)."""
    try:
        import probmetrics.calibrators  # noqa: F401
    except ImportError as err:
        return (
            f"probmetrics is not installed ({err}); "
            "pip install -e '.[networks]' after a CPU build of torch"
        )
    return None


class Uncalibrated(ClassifierMixin, BaseEstimator):
    """The mean of the members' probabilities; nothing is fitted."""

    def fit(self, S, y):
        return self

    def predict_proba(self, S):
        S = np.asarray(S)
        return np.mean(
            [np.exp(member_log_probabilities(S[:, m])) for m in range(S.shape[1])], axis=0
        )


class TemperatureScaling(TemperatureOfAverage):
    """``softmax(L / T)``, ``T`` by likelihood (:func:`fit_temperature`)."""

    _features = staticmethod(mean_log_probabilities)


class MemberTemperatureScaling(MemberTemperatureAverage):
    """Each member's ``softmax(log p_m / T_m)``, then the mean over members."""

    _member_features = staticmethod(member_log_probabilities)


class VectorScalingOfMean(VectorScaling):
    """Vector scaling ``softmax(a * L + b)`` (per-class ``a``, ``b``), started at TS."""

    _features = staticmethod(mean_log_probabilities)


class LogLinearPool(ClassifierMixin, BaseEstimator):
    """The log-linear pool ``softmax(sum_m w_m log p_m)`` with ``w_m >= 0`` and no bias,
    fitted by multinomial likelihood (L-BFGS-B with bounds, analytic gradient), started at
    temperature scaling of the mean (``w_m = 1 / (M T)``), so its fusion-row log-loss is
    never above TS's."""

    def fit(self, S, y):
        S = np.asarray(S)
        y = np.asarray(y)
        M = S.shape[1]
        Ls = [member_log_probabilities(S[:, m]) for m in range(M)]
        rows = np.arange(y.shape[0])
        picked = np.array([L[rows, y].sum() for L in Ls])
        n = y.shape[0]

        def objective(w):
            Z = sum(wm * L for wm, L in zip(w, Ls, strict=True))
            lse = logsumexp(Z, axis=1)
            P = np.exp(Z - lse[:, None])
            loss = (lse.sum() - w @ picked) / n
            grad = np.array([np.einsum("ik,ik->", P, L) for L in Ls]) - picked
            return loss, grad / n

        T = fit_temperature(sum(Ls) / M, y)
        res = minimize(
            objective,
            np.full(M, 1.0 / (M * T)),
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, None)] * M,
        )
        self.weights_ = res.x
        return self

    def predict_proba(self, S):
        S = np.asarray(S)
        Z = sum(w * member_log_probabilities(S[:, m]) for m, w in enumerate(self.weights_))
        return softmax(Z, axis=1)

    def describe(self) -> str:
        return "w=" + " ".join(f"{w:.3g}" for w in self.weights_)


class EnsembleTemperatureScaling(ClassifierMixin, BaseEstimator):
    """Ensemble temperature scaling (Zhang, Kailkhura & Han 2020):
    ``w_1 softmax(L / T) + w_2 softmax(L) + w_3 / C`` with ``w`` on the simplex.

    As in the authors' code (``ets_calibrate`` of Mix-n-Match-Calibration), ``T`` minimizes
    the mean squared error of ``softmax(L / T)`` against the one-hot labels, then ``w``
    minimizes the mean squared error of the mixture (SLSQP on the simplex, started at
    ``(1, 0, 0)``). Their ``T`` lies in ``[0.05, 5]``; here in ``T_BOUNDS``, searched on
    ``log T`` like :func:`fit_temperature`.
    """

    def fit(self, S, y):
        L = mean_log_probabilities(S)
        y = np.asarray(y)
        n, C = L.shape
        onehot = np.zeros((n, C))
        onehot[np.arange(n), y] = 1.0

        def brier_t(log_t: float) -> float:
            return float(np.mean((softmax(L * np.exp(-log_t), axis=1) - onehot) ** 2))

        lo, hi = np.log(T_BOUNDS[0]), np.log(T_BOUNDS[1])
        res = minimize_scalar(brier_t, bounds=(lo, hi), method="bounded", options={"xatol": 1e-5})
        self.temperature_ = float(np.exp(res.x))
        parts = self._parts(L)

        def brier_w(w):
            return float(np.mean((np.tensordot(w, parts, axes=1) - onehot) ** 2))

        res = minimize(
            brier_w,
            np.array([1.0, 0.0, 0.0]),
            method="SLSQP",
            bounds=[(0.0, 1.0)] * 3,
            constraints={"type": "eq", "fun": lambda w: np.sum(w) - 1.0},
            tol=1e-12,
        )
        w = np.clip(res.x, 0.0, 1.0)
        self.weights_ = w / w.sum()
        return self

    def _parts(self, L: np.ndarray) -> np.ndarray:
        return np.stack(
            [
                softmax(L / self.temperature_, axis=1),
                softmax(L, axis=1),
                np.full(L.shape, 1.0 / L.shape[1]),
            ]
        )

    def predict_proba(self, S):
        return np.tensordot(self.weights_, self._parts(mean_log_probabilities(S)), axes=1)

    def describe(self) -> str:
        return f"T={self.temperature_:.4g}; w=" + " ".join(f"{w:.3g}" for w in self.weights_)


class ProbmetricsCalibrator(ClassifierMixin, BaseEstimator):
    """``probmetrics.calibrators.get_calibrator(method)`` fitted on ``softmax(L)`` (its numpy
    interface takes probabilities; SVS and SMS take their logarithm and start with their own
    temperature scaling, so a row's constant shift does not matter)."""

    def __init__(self, method: str = "sms"):
        self.method = method

    def fit(self, S, y):
        from probmetrics.calibrators import get_calibrator

        self.calibrator_ = get_calibrator(self.method)
        self.calibrator_.fit(softmax(mean_log_probabilities(S), axis=1), np.asarray(y))
        return self

    def predict_proba(self, S):
        return self.calibrator_.predict_proba(softmax(mean_log_probabilities(S), axis=1))


def _needs_ensemble(what: str):
    def skip(M: int) -> str | None:
        return f"M = 1: the same model as {what}" if M == 1 else None

    return skip


def _needs_probmetrics(M: int) -> str | None:
    return probmetrics_missing()


#: Every contender, in report order.
CONTENDERS: tuple[Contender, ...] = (
    Contender(DEFAULT, "fusion.fit default", DefaultFusion, "fusion"),
    Contender("uncalibrated", "uncalibrated (mean probability)", Uncalibrated, "reference"),
    Contender(REFERENCE, "TS of the mean log-probability", TemperatureScaling, "peer"),
    Contender(
        "ts_members",
        "TS per member, mean probability",
        MemberTemperatureScaling,
        "peer",
        _needs_ensemble("ts"),
    ),
    Contender(
        "loglinear", "log-linear pool (w >= 0)", LogLinearPool, "peer", _needs_ensemble("ts")
    ),
    Contender("ets", "ensemble TS (Zhang et al. 2020)", EnsembleTemperatureScaling, "peer"),
    Contender("vector", "vector scaling", VectorScalingOfMean, "peer"),
    Contender(
        "svs",
        "SVS (probmetrics)",
        lambda: ProbmetricsCalibrator("svs"),
        "peer",
        _needs_probmetrics,
    ),
    Contender(
        "sms",
        "SMS (probmetrics)",
        lambda: ProbmetricsCalibrator("sms"),
        "peer",
        _needs_probmetrics,
    ),
)


def resolve(methods: list[str] | None, *, quick: bool = False) -> list[Contender]:
    """The contenders named in ``methods`` (None: all; ``quick`` leaves out ``sms``), in
    report order; ``default`` is always included.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    pool = {c.key: c for c in CONTENDERS}
    if methods is None:
        wanted = set(pool) - ({"sms"} if quick else set())
    else:
        unknown = [m for m in methods if m not in pool]
        if unknown:
            raise ValueError(f"unknown method(s) {unknown}; known: {list(pool)}.")
        wanted = {DEFAULT, *methods}
    return [c for c in CONTENDERS if c.key in wanted]
