"""What the multi-class benchmark fits on the members' class probabilities ``S`` (n, M, C).

Every contender has ``fit(S, y)`` and ``predict_proba(S) -> (n, C)``; ``y`` holds class
indices ``0 .. C - 1`` (a class may be absent from the fusion sample; ``C`` is ``S``'s).

* ``default`` -- ``fusion.fit(S, y)`` exactly as a user calls it (the class-shared model);
* ``per_class`` -- ``BernsteinFusion(multiclass="per-class")``, the previous default (one
  binary fusion per class coupled by a softmax), skipped from :data:`PER_CLASS_MAX_C`
  classes;
* the peers, fitted the way users fit them (:data:`PEERS`), on the members'
  log-probabilities clipped at :data:`LOG_CLIP`:

  - ``ts_avg`` -- temperature scaling of the averaged log-probabilities (one temperature,
    a bounded 1-D search of the log-loss): the reference of the issue's check;
  - ``ts_members`` -- each member temperature-scaled, then the probabilities averaged;
  - ``vector`` -- vector scaling: per-class scale and bias on the averaged
    log-probabilities, multinomial likelihood, L-BFGS started at temperature scaling;
  - ``dirichlet`` -- multinomial ``LogisticRegressionCV`` on the standardized stacked
    log-probabilities (Dirichlet calibration with a full matrix), penalty by 5-fold
    cross-validation of the log-loss; skipped where it has more than
    :data:`DIRICHLET_MAX_PARAMS` parameters or ``n M C^2`` exceeds
    :data:`DIRICHLET_MAX_WORK` (time);
  - ``best_ts`` -- the member of lowest log-loss after temperature scaling, scaled;

* the raw members (``member1_<name>`` ...), for reference, and the true posterior where it
  is known (``truth``; filled in by the runner);
* candidates ``NAME=module:callable`` (an unfitted estimator taking ``S`` of shape (n, M, C)).
"""

from __future__ import annotations

import numpy as np
from harness.contender import Contender
from scenarios_lib.contenders import parse_candidate
from scipy.optimize import minimize, minimize_scalar
from scipy.special import logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin

__all__ = [
    "LOG_CLIP",
    "T_BOUNDS",
    "PER_CLASS_MAX_C",
    "DIRICHLET_MAX_PARAMS",
    "DIRICHLET_MAX_WORK",
    "VECTOR_MAX_ITER",
    "REFERENCE",
    "Contender",
    "log_probabilities",
    "average_log_probabilities",
    "fit_temperature",
    "DefaultFusion",
    "PerClassFusion",
    "TemperatureOfAverage",
    "MemberTemperatureAverage",
    "VectorScaling",
    "DirichletLR",
    "BestSingleTS",
    "RawMember",
    "FUSION",
    "PEERS",
    "member_contenders",
    "resolve",
]

#: Probabilities are clipped to ``[LOG_CLIP, 1]`` before their logarithm (peers).
LOG_CLIP = 1e-12

#: The temperature search's bounds.
T_BOUNDS = (0.01, 100.0)

#: ``per_class`` is skipped from this many classes (one binary fit per class).
PER_CLASS_MAX_C = 50

#: ``dirichlet`` is skipped above this many parameters (``M C^2``) ...
DIRICHLET_MAX_PARAMS = 200_000
#: ... or above this ``n M C^2`` (its time grows with it: 50 L-BFGS fits on n x M C features).
DIRICHLET_MAX_WORK = 1e8

#: L-BFGS iterations of vector scaling (typical implementations stop at 50-100; at C = 1,000
#: 1,000 iterations took 500 s and were not converged, and fitted the test rows worse).
VECTOR_MAX_ITER = 100

#: The peer the issue's check compares the default with.
REFERENCE = "ts_avg"


def log_probabilities(S) -> np.ndarray:
    """``log(clip(S, LOG_CLIP, 1))`` in double precision (any shape)."""
    return np.log(np.clip(np.asarray(S, dtype=float), LOG_CLIP, 1.0))


def average_log_probabilities(S) -> np.ndarray:
    """The members' clipped log-probabilities averaged: ``(n, C)`` of ``S`` (n, M, C)."""
    S = np.asarray(S)
    out = np.zeros((S.shape[0], S.shape[2]))
    for m in range(S.shape[1]):  # one member at a time: no (n, M, C) double copy
        out += log_probabilities(S[:, m])
    return out / S.shape[1]


def _nll(logits: np.ndarray, y: np.ndarray) -> float:
    """Mean multinomial log-loss of ``softmax(logits)`` at class indices ``y``."""
    return float(np.mean(logsumexp(logits, axis=1) - logits[np.arange(y.shape[0]), y]))


def fit_temperature(L: np.ndarray, y: np.ndarray) -> float:
    """The temperature ``T`` minimizing the mean log-loss of ``softmax(L / T)``.

    ``L`` (n, C) are log-probabilities (or logits), ``y`` the class indices. A bounded 1-D
    search (Brent) over ``log T`` in ``log`` :data:`T_BOUNDS` (the loss is smooth and in
    practice unimodal in ``log T``).
    """
    L = np.asarray(L, dtype=float)
    y = np.asarray(y)

    def loss(log_t: float) -> float:
        return _nll(L * np.exp(-log_t), y)

    lo, hi = np.log(T_BOUNDS[0]), np.log(T_BOUNDS[1])
    res = minimize_scalar(loss, bounds=(lo, hi), method="bounded", options={"xatol": 1e-5})
    return float(np.exp(res.x))


class DefaultFusion(ClassifierMixin, BaseEstimator):
    """``fusion.fit(S, y)``, as a user calls it."""

    def fit(self, S, y):
        import fusion

        # y holds column indices: say so, so that a class absent from a small sample is
        # not an ambiguity fusion refuses to guess
        classes = np.arange(np.shape(S)[-1]) if np.ndim(S) == 3 else None
        self.model_ = fusion.fit(S, y, classes=classes)
        return self

    def predict_proba(self, S):
        return self.model_.predict_proba(S)

    def describe(self) -> str:
        m = self.model_
        parts = []
        for name in ("multiclass_", "lam_", "base_coef_", "degree_"):
            value = getattr(m, name, None)
            if value is None:
                continue
            if isinstance(value, np.ndarray):
                value = np.array2string(value, precision=3, separator=" ")
            parts.append(f"{name}={value}")
        return "; ".join(parts)[:200]


class PerClassFusion(DefaultFusion):
    """``BernsteinFusion(multiclass="per-class")``: one binary fusion per class, softmax."""

    def fit(self, S, y):
        import fusion

        self.model_ = fusion.BernsteinFusion(multiclass="per-class").fit(S, y)
        return self


class TemperatureOfAverage(ClassifierMixin, BaseEstimator):
    """Temperature scaling of the averaged log-probabilities: ``softmax(mean_m log p_m / T)``
    (:func:`average_log_probabilities`, :func:`fit_temperature`)."""

    #: ``S`` (n, M, C) -> the (n, C) log-probabilities that are scaled (a subclass may read
    #: other inputs, e.g. logits).
    _features = staticmethod(average_log_probabilities)

    def fit(self, S, y):
        self.temperature_ = fit_temperature(self._features(S), y)
        return self

    def predict_proba(self, S):
        return softmax(self._features(S) / self.temperature_, axis=1)

    def describe(self) -> str:
        return f"T={self.temperature_:.4g}"


class MemberTemperatureAverage(ClassifierMixin, BaseEstimator):
    """Each member temperature-scaled (its own ``T_m``), then the mean of the ``M``
    calibrated distributions."""

    #: One member's (n, C) scores -> its log-probabilities.
    _member_features = staticmethod(log_probabilities)

    def fit(self, S, y):
        S = np.asarray(S)
        self.temperatures_ = np.array(
            [fit_temperature(self._member_features(S[:, m]), y) for m in range(S.shape[1])]
        )
        return self

    def predict_proba(self, S):
        S = np.asarray(S)
        out = np.zeros((S.shape[0], S.shape[2]))
        for m, t in enumerate(self.temperatures_):
            out += softmax(self._member_features(S[:, m]) / t, axis=1)
        return out / S.shape[1]

    def describe(self) -> str:
        return "T=" + " ".join(f"{t:.3g}" for t in self.temperatures_)


class VectorScaling(ClassifierMixin, BaseEstimator):
    """Vector scaling of the averaged log-probabilities ``L``: ``softmax(a * L + b)`` with a
    scale ``a_k`` and a bias ``b_k`` per class, fitted by multinomial likelihood with L-BFGS
    (analytic gradient, no penalty, at most :data:`VECTOR_MAX_ITER` iterations), started at
    temperature scaling (``a = 1 / T``, ``b = 0``), so its training log-loss is never above
    temperature scaling's."""

    #: ``S`` (n, M, C) -> the (n, C) log-probabilities that are scaled.
    _features = staticmethod(average_log_probabilities)

    def __init__(self, max_iter: int = VECTOR_MAX_ITER):
        self.max_iter = max_iter

    def fit(self, S, y):
        L = self._features(S)
        y = np.asarray(y)
        n, C = L.shape
        rows = np.arange(n)
        onehot_counts = np.bincount(y, minlength=C)
        T = fit_temperature(L, y)
        Ly = np.zeros(C)
        np.add.at(Ly, y, L[rows, y])

        def objective(theta):
            a, b = theta[:C], theta[C:]
            Z = L * a + b
            lse = logsumexp(Z, axis=1)
            loss = (lse.sum() - (a @ Ly + b @ onehot_counts)) / n
            P = np.exp(Z - lse[:, None])
            grad_a = (np.einsum("ik,ik->k", P, L) - Ly) / n
            grad_b = (P.sum(axis=0) - onehot_counts) / n
            return loss, np.concatenate([grad_a, grad_b])

        x0 = np.concatenate([np.full(C, 1.0 / T), np.zeros(C)])
        res = minimize(
            objective, x0, jac=True, method="L-BFGS-B", options={"maxiter": self.max_iter}
        )
        self.temperature_ = T
        self.scale_, self.bias_ = res.x[:C], res.x[C:]
        self.n_iter_ = int(res.nit)
        return self

    def predict_proba(self, S):
        return softmax(self._features(S) * self.scale_ + self.bias_, axis=1)

    def describe(self) -> str:
        return (
            f"T0={self.temperature_:.4g}; scale in [{self.scale_.min():.3g}, "
            f"{self.scale_.max():.3g}]; n_iter={self.n_iter_}"
        )


def _lrcv_quiet() -> dict:
    """The arguments that keep scikit-learn >= 1.8's ``LogisticRegressionCV`` from warning
    about changing defaults (an L2 penalty, the new fitted attributes); none before."""
    import inspect

    from sklearn.linear_model import LogisticRegressionCV

    names = inspect.signature(LogisticRegressionCV).parameters
    out = {}
    if "use_legacy_attributes" in names:
        out["use_legacy_attributes"] = False
        out["l1_ratios"] = (0.0,)
    return out


class DirichletLR(ClassifierMixin, BaseEstimator):
    """Multinomial ``LogisticRegressionCV(Cs=10, cv=5, scoring="neg_log_loss",
    max_iter=1000)`` on the standardized ``M * C`` clipped log-probabilities (Dirichlet
    calibration with a full matrix and an L2 penalty chosen by cross-validation). Classes
    absent from the fusion sample get probability 0."""

    def fit(self, S, y):
        from sklearn.linear_model import LogisticRegressionCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        S = np.asarray(S)
        self.n_classes_ = S.shape[2]
        lr = LogisticRegressionCV(
            Cs=10, cv=5, scoring="neg_log_loss", max_iter=1000, **_lrcv_quiet()
        )
        self.model_ = make_pipeline(StandardScaler(), lr).fit(self._features(S), y)
        return self

    def predict_proba(self, S):
        P = self.model_.predict_proba(self._features(np.asarray(S)))
        out = np.zeros((P.shape[0], self.n_classes_))
        out[:, self.model_.classes_] = P
        return out

    @staticmethod
    def _features(S) -> np.ndarray:
        L = log_probabilities(S)
        return L.reshape(L.shape[0], -1)

    def describe(self) -> str:
        return f"C={float(np.ravel(self.model_[-1].C_)[0]):.3g}"


class BestSingleTS(ClassifierMixin, BaseEstimator):
    """The member of lowest fusion-sample log-loss after its own temperature scaling,
    scaled."""

    def fit(self, S, y):
        S = np.asarray(S)
        self.temperatures_, self.losses_ = [], []
        for m in range(S.shape[1]):
            L = log_probabilities(S[:, m])
            t = fit_temperature(L, y)
            self.temperatures_.append(t)
            self.losses_.append(_nll(L / t, np.asarray(y)))
        self.member_ = int(np.argmin(self.losses_))
        return self

    def predict_proba(self, S):
        L = log_probabilities(np.asarray(S)[:, self.member_])
        return softmax(L / self.temperatures_[self.member_], axis=1)

    def describe(self) -> str:
        return f"member {self.member_ + 1}, T={self.temperatures_[self.member_]:.4g}"


class RawMember(ClassifierMixin, BaseEstimator):
    """Member ``m``'s probabilities as they are (nothing is fitted)."""

    def __init__(self, m: int = 0):
        self.m = m

    def fit(self, S, y):
        return self

    def predict_proba(self, S):
        return np.asarray(S)[:, self.m]


def _per_class_skip(n: int, M: int, C: int) -> str | None:
    if C >= PER_CLASS_MAX_C:
        return f"C >= {PER_CLASS_MAX_C}: one binary fit per class"
    return None


def _dirichlet_skip(n: int, M: int, C: int) -> str | None:
    if M * C * C > DIRICHLET_MAX_PARAMS:
        return f"M C^2 = {M * C * C:,} parameters > {DIRICHLET_MAX_PARAMS:,}"
    if n * M * C * C > DIRICHLET_MAX_WORK:
        return f"n M C^2 = {n * M * C * C:.2g} > {DIRICHLET_MAX_WORK:.0e} (time)"
    return None


#: ``fusion.fit``'s default and the previous default.
FUSION: tuple[Contender, ...] = (
    Contender("default", "fusion.fit default", DefaultFusion, "fusion"),
    Contender(
        "per_class",
        'BernsteinFusion(multiclass="per-class")',
        PerClassFusion,
        "fusion",
        _per_class_skip,
    ),
)

#: The peers as users fit them.
PEERS: tuple[Contender, ...] = (
    Contender(REFERENCE, "TS of the average", TemperatureOfAverage, "peer"),
    Contender("ts_members", "TS of each member, averaged", MemberTemperatureAverage, "peer"),
    Contender("vector", "vector scaling", VectorScaling, "peer"),
    Contender(
        "dirichlet", "Dirichlet (LogisticRegressionCV)", DirichletLR, "peer", _dirichlet_skip
    ),
    Contender("best_ts", "best single member after TS", BestSingleTS, "peer"),
)


def member_contenders(names) -> list[Contender]:
    """One raw-member row per member; the key names its position and name
    (``member1_hot``), so setups with other members get other rows."""
    return [
        Contender(
            f"member{m + 1}_{name}",
            f"member {m + 1} ({name}), raw",
            lambda m=m: RawMember(m),
            "member",
        )
        for m, name in enumerate(names)
    ]


def resolve(methods: list[str] | None, candidates: list[str]) -> list[Contender]:
    """The contenders named in ``methods`` (None: :data:`FUSION` and :data:`PEERS`), then
    the candidates (``NAME=module:callable``); ``default`` and the reference ``ts_avg`` are
    always included (the issue's check needs them)."""
    pool = {c.key: c for c in (*FUSION, *PEERS)}
    parsed = []
    for text in candidates:
        c = parse_candidate(text)
        if c.key in pool or c.key.startswith("member") or c.key == "truth":
            raise ValueError(f"candidate name {c.key!r} is taken by a built-in contender.")
        parsed.append(Contender(c.key, c.label, c.make, "candidate"))
    if methods is None:
        keys = list(pool)
    else:
        unknown = [m for m in methods if m not in pool]
        if unknown:
            raise ValueError(f"unknown method(s) {unknown}; known: {sorted(pool)}.")
        wanted = {"default", REFERENCE, *methods}
        keys = [k for k in pool if k in wanted]
    return [pool[k] for k in keys] + parsed
