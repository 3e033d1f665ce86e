"""What the scorer benchmark fits on the scores: fusion methods, peers, plug-in candidates.

Every contender is an unfitted estimator with ``fit(S, y)`` and ``predict_proba(S)`` built
by a factory, so one loop serves all of them:

* ``default`` -- ``fusion.fit(S, y)``, exactly as a user calls it;
* every registered fusion method -- ``fusion.fit(S, y, method=name)`` with its defaults;
* the peers, fitted the way a user fits them with scikit-learn (scores are probabilities):
  logistic regression on the logits (``lr_logit``, probabilities clipped to
  ``[1e-6, 1 - 1e-6]``; a column not in ``[0, 1]`` is used as it is), logistic regression on
  the probabilities (``lr_proba``), a cubic spline basis of each logit then logistic
  regression (``spline_lr_logit``), gradient boosting constrained non-decreasing in every
  score (``hgb_monotone``) and isotonic regression on the mean score (``isotonic_mean``);
* candidates given as ``NAME=module:callable`` (or ``NAME=path/to/file.py:callable``); the
  callable returns an unfitted estimator.

``lr_logit`` is the reference of the paired comparisons.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from harness.contender import Contender
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import SplineTransformer

from fusion.bench.peers import logit_features, probability_columns

__all__ = [
    "REFERENCE",
    "Contender",
    "LogitScale",
    "FusionFit",
    "MonotoneHGB",
    "IsotonicOnMean",
    "PEERS",
    "DEFAULT_MAX_N",
    "fusion_contenders",
    "parse_candidate",
    "resolve",
]

#: Key of the reference contender of the paired differences.
REFERENCE = "lr_logit"

#: Largest fusion sample each contender is fitted on by default; larger cells are skipped
#: and reported as such. MR-MIC's fit takes 1-2 minutes at n = 2,000 (M = 2, 3).
DEFAULT_MAX_N: dict[str, int] = {"mrmic": 500}


class LogitScale(TransformerMixin, BaseEstimator):
    """Logits of the probability columns (clipped to ``[1e-6, 1 - 1e-6]``), other columns
    unchanged; which columns are probabilities is decided on the training scores."""

    def fit(self, S, y=None):
        self.logit_columns_ = probability_columns(np.asarray(S, dtype=float))
        return self

    def transform(self, S):
        return logit_features(np.asarray(S, dtype=float), self.logit_columns_)


class FusionFit(ClassifierMixin, BaseEstimator):
    """``fusion.fit(S, y)`` (``method=None``) or ``fusion.fit(S, y, method=method)``."""

    def __init__(self, method: str | None = None):
        self.method = method

    def fit(self, S, y):
        import fusion

        if self.method is None:
            self.model_ = fusion.fit(S, y)
        else:
            self.model_ = fusion.fit(S, y, method=self.method)
        return self

    def predict_proba(self, S):
        return self.model_.predict_proba(S)


class MonotoneHGB(ClassifierMixin, BaseEstimator):
    """:class:`~sklearn.ensemble.HistGradientBoostingClassifier` with ``monotonic_cst`` +1
    on every score, default hyper-parameters."""

    def __init__(self, random_state: int = 0):
        self.random_state = random_state

    def fit(self, S, y):
        S = np.asarray(S, dtype=float)
        self.model_ = HistGradientBoostingClassifier(
            monotonic_cst=[1] * S.shape[1], random_state=self.random_state
        ).fit(S, y)
        return self

    def predict_proba(self, S):
        return self.model_.predict_proba(np.asarray(S, dtype=float))


class IsotonicOnMean(ClassifierMixin, BaseEstimator):
    """Isotonic regression of the label on the mean of the scores (clipped outside the
    training range)."""

    def fit(self, S, y):
        S = np.asarray(S, dtype=float)
        self.model_ = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
        self.model_.fit(S.mean(axis=1), y)
        return self

    def predict_proba(self, S):
        p = self.model_.predict(np.asarray(S, dtype=float).mean(axis=1))
        return np.column_stack([1.0 - p, p])


def _lr():
    return LogisticRegression(max_iter=1000)


#: The peers, as users fit them (scikit-learn defaults unless stated).
PEERS: tuple[Contender, ...] = (
    Contender("lr_logit", "LR on logits", lambda: make_pipeline(LogitScale(), _lr()), "peer"),
    Contender("lr_proba", "LR on probabilities", _lr, "peer"),
    Contender(
        "spline_lr_logit",
        "spline + LR on logits",
        lambda: make_pipeline(LogitScale(), SplineTransformer(), _lr()),
        "peer",
    ),
    Contender("hgb_monotone", "HGB monotone", MonotoneHGB, "peer"),
    Contender("isotonic_mean", "isotonic on mean score", IsotonicOnMean, "peer"),
)


def fusion_contenders() -> list[Contender]:
    """``default`` then one contender per registered fusion method, in registry order."""
    import fusion

    out = [Contender("default", "fusion.fit default", FusionFit, "fusion")]
    for name, cls in fusion.METHODS.items():
        out.append(
            Contender(name, f"{name} ({cls.__name__})", lambda n=name: FusionFit(n), "fusion")
        )
    return out


def _import_callable(target: str) -> Callable:
    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"expected module:callable or path/file.py:callable, got {target!r}.")
    if module_name.endswith(".py"):
        path = Path(module_name).expanduser().resolve()
        if not path.is_file():
            raise ValueError(f"no such file {path}.")
        mod_key = f"_bench_candidate_{abs(hash(str(path)))}"
        spec = importlib.util.spec_from_file_location(mod_key, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_key] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ValueError(f"{module_name} has no attribute {attr!r}.") from None


def parse_candidate(text: str) -> Contender:
    """``NAME=module:callable`` -> a candidate contender (checked: the callable returns an
    object with ``fit`` and ``predict_proba``)."""
    name, sep, target = text.partition("=")
    name = name.strip()
    if not sep or not name or not target:
        raise ValueError(f"--candidate expects NAME=module:callable, got {text!r}.")
    factory = _import_callable(target.strip())
    probe = factory()
    if not (hasattr(probe, "fit") and hasattr(probe, "predict_proba")):
        raise ValueError(
            f"candidate {name!r}: {target} returned {type(probe).__name__}, which lacks "
            "fit/predict_proba."
        )
    return Contender(name, f"{name} (candidate)", factory, "candidate")


def resolve(methods: list[str] | None, candidates: list[Contender]) -> tuple[list[Contender], list]:
    """The contenders of a run: ``methods`` (None: every fusion method and peer) plus the
    candidates; the reference ``lr_logit`` is always included. Returns the contenders and
    notes (one per method added or reordered)."""
    pool = {c.key: c for c in (*fusion_contenders(), *PEERS)}
    for c in candidates:
        if c.key in pool:
            raise ValueError(f"candidate name {c.key!r} is taken by a built-in method.")
        pool[c.key] = c
    notes = []
    if methods is None:
        keys = [k for k in pool if pool[k].family != "candidate"]
    else:
        unknown = [m for m in methods if m not in pool]
        if unknown:
            raise ValueError(f"unknown method(s) {unknown}; known: {sorted(pool)}.")
        keys = list(dict.fromkeys(methods))
    keys += [c.key for c in candidates if c.key not in keys]
    if REFERENCE not in keys:
        keys.insert(0, REFERENCE)
        notes.append(f"{REFERENCE} added: it is the reference of the paired differences.")
    return [pool[k] for k in keys], notes
