"""The registered methods under test, with the small parameter sets that keep these tests fast.

Every reliability test is parametrized over ``fusion.METHODS`` as it stands when the tests are
collected, so a method is covered as soon as it is registered. A method missing from a dict
below is tested with its constructor defaults.
"""

from __future__ import annotations

import os

import numpy as np
from scipy.special import expit

import fusion

#: Registered method names, read at collection time.
METHOD_NAMES = sorted(fusion.METHODS)

#: Small but adequate models for ordinary data (n of 40-200 rows, M = 2 or 3).
FAST_PARAMS: dict[str, dict] = {
    # 9 (M = 2) or 27 (M = 3) coefficients and one penalty (no CV): fast, yet flexible
    # enough to be non-trivial.
    "bernstein": {"degree": 2, "lam": 1e-2},
    # One fixed lambda instead of 5-fold CV over 5 candidates (25 extra QP solves).
    "mrmic": {"lam": 1e-3},
    # One SDP solve (degree 4, no l1 bound) instead of CV over 7 x 13 candidates.
    "rpr": {"degree": 4, "lam": np.inf},
    # copula (Silverman bandwidths, no CV) and enir (no CV) are fast with their defaults.
}

#: Parameters that exercise the method's randomness, for the determinism test (defaults to
#: FAST_PARAMS).
RANDOMIZED_PARAMS: dict[str, dict] = {
    # (the folds are the random part: lam from three penalties, not the default grid's 16)
    "bernstein": {"degree": "cv", "degree_grid": (1, 2), "cv": 3, "lam_grid": (np.inf, 1e-2, 1e-4)},
    "mrmic": {"lam": "cv", "lam_grid": (1e-4, 1e-2), "cv": 3},
    "rpr": {"degree_grid": (2, 4), "lam_grid": (1.0, np.inf), "cv": 3},
    # copula and enir have no randomness: determinism is still checked with their defaults.
}

#: Further configurations checked for monotonicity besides FAST_PARAMS: those in which a
#: method without a class-wide guarantee (``_monotone``) guarantees it, and configurations of
#: monotone methods whose fitted guarantee (``monotone_``) depends on the data.
MONOTONE_PARAMS: dict[str, list[dict]] = {
    "mrmic": [{"lam": 1e-3, "interpolation": "monotone"}],
    # monotone_ is True when every logistic combine coefficient is non-negative.
    "rpr": [{"degree": 4, "lam": np.inf, "combine": "logistic"}],
}

#: Models for scikit-learn's check_estimator, whose data go up to 30 columns with 10-30 rows:
#: small grids keep the suite fast. With FUSION_SKLEARN_DEFAULTS=1 every estimator is checked
#: with its default parameters instead (CI does both; about two minutes more).
SKLEARN_PARAMS: dict[str, dict] = {}
_SMALL_SKLEARN_PARAMS: dict[str, dict] = {
    # degree="cv" drops candidates with more coefficients than rows per fold, so wide inputs
    # fall back to degree 0 (a constant fit) instead of failing "fewer rows than coefficients".
    # lam="cv" over two penalties (logistic regression and a flexible g) instead of the 16
    # of the default grid: the same cross-validation path at a third of the time (the
    # default grid is checked with FUSION_SKLEARN_DEFAULTS=1).
    "bernstein": {"degree": "cv", "degree_grid": (0, 1, 2), "cv": 3, "lam_grid": (np.inf, 1e-2)},
    "mrmic": {"lam": 1e-3},
    "rpr": {"degree_grid": (2, 3), "lam_grid": (1.0, 25.0)},
}

if os.environ.get("FUSION_SKLEARN_DEFAULTS") == "1":
    SKLEARN_PARAMS.update({name: {} for name in METHOD_NAMES})  # {} is "the defaults"
else:
    SKLEARN_PARAMS.update(_SMALL_SKLEARN_PARAMS)

#: Main hyper-parameters for GridSearchCV (an empty grid still exercises the integration).
PARAM_GRIDS: dict[str, dict] = {
    "bernstein": {"degree": [1, 2, 3]},
    "copula": {"selection": ["loglik", "aic"], "bandwidth": ["silverman", 0.05]},
    "mrmic": {"lam": [1e-4, 1e-2], "interpolation": ["linear", "monotone"]},
    "rpr": {"degree": [2, 4], "combine": ["mean", "logistic"]},
    "enir": {"combine": ["mean", "logistic"]},
}

#: Configurations that depend on the scores only through their ranks, for the invariance
#: tests (a method missing here is rank-only with FAST_PARAMS). BernsteinFusion's default
#: model uses the scores' own scale as well; base=None is its rank-only model.
RANK_ONLY_PARAMS: dict[str, dict] = {
    "bernstein": {"degree": 2, "base": None},
}

#: (parameters, message fragment): a model with more coefficients than the 12 training rows of
#: the "fewer samples than coefficients" test. Methods without an entry must either fit those
#: 12 rows or raise a ValueError.
OVERPARAMETRIZED: dict[str, tuple[dict, str]] = {
    # the rank-only model; the default model is penalized and fits any number of rows
    "bernstein": (
        {"degree": 3, "base": None},
        "16 coefficients but there are only 12 training rows",
    ),
}


def make(name: str, table: dict[str, dict] | None = None, **overrides):
    """An unfitted estimator of method ``name``: parameters from ``table`` (falling back to
    FAST_PARAMS, then to the defaults), updated by ``overrides``."""
    params = (table or {}).get(name, FAST_PARAMS.get(name, {}))
    return fusion.METHODS[name](**{**params, **overrides})


def scores(n: int = 120, M: int = 2, seed: int = 0):
    """M scores that all increase with P(y = 1), on different scales; both classes present."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    y = (rng.random(n) < expit(1.5 * z)).astype(int)
    y[:2] = [0, 1]
    S = z[:, None] + rng.normal(scale=1.0, size=(n, M))
    S[:, 0] = np.exp(S[:, 0])  # a positive, skewed scale
    return S, y
