"""What the multi-class benchmark fits on the scorers' class probabilities ``S`` (n, M, C).

* fusion: ``fusion.fit(S, y)`` as a user calls it (``default``), the 1-D reductions
  ``fusion.fit(S, y, method="rpr" / "enir")`` and the Platt and isotonic calibrators, each
  one-vs-rest per class and coupled into one distribution by the base;
* peers, fitted the way users fit them (:data:`PEERS`): multinomial logistic regression on
  the stacked log-probabilities, standardized (``lr_logp``) or as they are
  (``lr_logp_raw``), temperature scaling of each scorer then the
  average of the calibrated distributions (``temp_avg``), and the best single scorer chosen
  on the fusion sample (``best_single``);
* the raw scorers themselves (``scorer1_<kind>`` ... ``scorerM_<kind>``), for reference;
* candidates ``NAME=module:callable`` (an unfitted estimator taking ``S`` of shape (n, M, C)).

Every contender has ``fit(S, y)`` and ``predict_proba(S) -> (n, C)`` with columns in the
sorted order of the labels.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ..scenarios.contenders import Contender, parse_candidate

__all__ = [
    "PROBA_CLIP",
    "PEERS",
    "log_probabilities",
    "fit_temperature",
    "FusionMulticlass",
    "StackedLogLR",
    "TemperatureAverage",
    "BestSingle",
    "SingleScorer",
    "fusion_contenders",
    "scorer_contenders",
    "resolve",
]

#: Probabilities are clipped to ``[PROBA_CLIP, 1]`` before their logarithm (peers).
PROBA_CLIP = 1e-6

#: Fusion contenders: key -> (method name for fusion.fit, or a calibrator class name).
_FUSION = {
    "default": None,
    "rpr": "rpr",
    "enir": "enir",
    "platt": "PlattCalibrator",
    "isotonic": "IsotonicCalibrator",
}


def log_probabilities(S) -> np.ndarray:
    """``log(clip(S, PROBA_CLIP, 1))`` as floats (any shape)."""
    return np.log(np.clip(np.asarray(S, dtype=float), PROBA_CLIP, 1.0))


def _class_index(y, classes: np.ndarray) -> np.ndarray:
    return np.searchsorted(classes, np.asarray(y))


def fit_temperature(logp: np.ndarray, index: np.ndarray) -> float:
    """The temperature ``T`` minimizing the mean log-loss of ``softmax(logp / T)``.

    ``logp`` (n, C) are one scorer's log-probabilities, ``index`` the true class columns.
    Searched over ``log T`` in ``[log 0.01, log 100]`` (a bounded 1-D problem; the loss is
    smooth and in practice unimodal in ``log T``).
    """
    rows = np.arange(logp.shape[0])

    def loss(log_t: float) -> float:
        return float(-np.mean(log_softmax(logp * np.exp(-log_t), axis=1)[rows, index]))

    res = minimize_scalar(
        loss, bounds=(np.log(0.01), np.log(100.0)), method="bounded", options={"xatol": 1e-6}
    )
    return float(np.exp(res.x))


class FusionMulticlass(ClassifierMixin, BaseEstimator):
    """``fusion.fit(S, y)`` (``method=None``), ``fusion.fit(S, y, method=...)`` for a
    registered method, or a public calibrator class of :mod:`fusion` by name."""

    def __init__(self, method: str | None = None):
        self.method = method

    def fit(self, S, y):
        import fusion

        if self.method is None:
            self.model_ = fusion.fit(S, y)
        elif self.method in fusion.METHODS:
            self.model_ = fusion.fit(S, y, method=self.method)
        else:
            self.model_ = getattr(fusion, self.method)().fit(S, y)
        return self

    def predict_proba(self, S):
        return self.model_.predict_proba(S)


class StackedLogLR(ClassifierMixin, BaseEstimator):
    """Multinomial logistic regression on the ``M * C`` log-probabilities, clipped to
    ``[1e-6, 1]``: ``LogisticRegression(max_iter=1000)`` (lbfgs, ``C = 1``), on standardized
    features when ``scale`` (what scikit-learn's convergence warning advises; on Covertype
    the unscaled fit stops at ``max_iter`` and is both slower and worse)."""

    def __init__(self, scale: bool = True):
        self.scale = scale

    def fit(self, S, y):
        X = self._features(S)
        lr = LogisticRegression(max_iter=1000)
        self.model_ = make_pipeline(StandardScaler(), lr) if self.scale else lr
        self.model_.fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, S):
        return self.model_.predict_proba(self._features(S))

    @staticmethod
    def _features(S) -> np.ndarray:
        L = log_probabilities(S)
        return L.reshape(L.shape[0], -1)


class TemperatureAverage(ClassifierMixin, BaseEstimator):
    """Temperature scaling of each scorer (one ``T_m`` per scorer, by log-loss on the fusion
    sample, on log-probabilities clipped to ``[1e-6, 1]``), then the mean of the ``M``
    calibrated distributions."""

    def fit(self, S, y):
        L = log_probabilities(S)
        self.classes_ = np.unique(y)
        index = _class_index(y, self.classes_)
        self.temperatures_ = np.array([fit_temperature(L[:, m], index) for m in range(L.shape[1])])
        return self

    def predict_proba(self, S):
        L = log_probabilities(S)
        return softmax(L / self.temperatures_[None, :, None], axis=2).mean(axis=1)


class BestSingle(ClassifierMixin, BaseEstimator):
    """The scorer with the lowest log-loss on the fusion sample, used as it is."""

    def fit(self, S, y):
        S = np.asarray(S, dtype=float)
        self.classes_ = np.unique(y)
        index = _class_index(y, self.classes_)
        picked = S[np.arange(S.shape[0]), :, index]  # (n, M): each scorer's p of the label
        losses = -np.mean(np.log(np.clip(picked, 1e-15, 1.0)), axis=0)
        self.scorer_ = int(np.argmin(losses))
        return self

    def predict_proba(self, S):
        return np.asarray(S, dtype=float)[:, self.scorer_]


class SingleScorer(ClassifierMixin, BaseEstimator):
    """Scorer ``m``'s probabilities as they are (nothing is fitted)."""

    def __init__(self, m: int = 0):
        self.m = m

    def fit(self, S, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, S):
        return np.asarray(S, dtype=float)[:, self.m]


#: The peers as users fit them.
PEERS: tuple[Contender, ...] = (
    Contender("lr_logp", "LR on log-probabilities (standardized)", StackedLogLR, "peer"),
    Contender(
        "lr_logp_raw",
        "LR on log-probabilities (unscaled)",
        lambda: StackedLogLR(scale=False),
        "peer",
    ),
    Contender("temp_avg", "temperature scaling + average", TemperatureAverage, "peer"),
    Contender("best_single", "best single scorer", BestSingle, "peer"),
)


def fusion_contenders() -> list[Contender]:
    """``default``, ``rpr``, ``enir``, ``platt``, ``isotonic``."""
    labels = {
        "default": "fusion.fit default",
        "rpr": "rpr (one-vs-rest)",
        "enir": "enir (one-vs-rest)",
        "platt": "Platt (one-vs-rest)",
        "isotonic": "isotonic (one-vs-rest)",
    }
    return [
        Contender(key, labels[key], lambda m=method: FusionMulticlass(m), "fusion")
        for key, method in _FUSION.items()
    ]


def scorer_contenders(kinds) -> list[Contender]:
    """One raw-scorer row per scorer; the key names its position and kind (``scorer1_rf``), so
    setups with other scorers get other rows."""
    return [
        Contender(
            f"scorer{m + 1}_{kind}",
            f"scorer {m + 1} ({kind}), raw",
            lambda m=m: SingleScorer(m),
            "scorer",
        )
        for m, kind in enumerate(kinds)
    ]


def resolve(methods: list[str] | None, candidates: list[str]) -> list[Contender]:
    """The fusion contenders and peers named in ``methods`` (None: all), then the candidates
    (``NAME=module:callable``). The peers are always included: the comparisons need them."""
    pool = {c.key: c for c in (*fusion_contenders(), *PEERS)}
    parsed = [parse_candidate(text) for text in candidates]
    for c in parsed:
        if c.key in pool or c.key.startswith("scorer"):
            raise ValueError(f"candidate name {c.key!r} is taken by a built-in contender.")
    if methods is None:
        keys = list(pool)
    else:
        unknown = [m for m in methods if m not in pool]
        if unknown:
            raise ValueError(f"unknown method(s) {unknown}; known: {sorted(pool)}.")
        keys = list(dict.fromkeys([*methods, *(p.key for p in PEERS)]))
    return [pool[k] for k in keys] + parsed
