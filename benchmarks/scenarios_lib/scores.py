"""The scorers' outputs of one (scenario, seed): trained once, cached on disk.

Training the scorers and scoring the test rows is the slow, fixed part of a run; the fusion
methods only need the resulting score matrices. They are stored as ``.npz`` files in a cache
directory, keyed by the scenario's full definition, the seed, :data:`SCORES_VERSION` (bump it
when code that shapes the scores changes in a way the key does not see) and the
scikit-learn version, so a rerun costs only the fusion fits.
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from harness.scores import FusionPool, cache_key, cache_path, cached, fit_scorer, pool_and_test
from sklearn.metrics import roc_auc_score

from .catalog import Scenario, feature_columns, split_rows
from .scorers import make_scorer

__all__ = ["SCORES_VERSION", "ScoreSet", "score_key", "build_scores", "cached_scores"]

#: Version of the score-making code; part of every cache key.
SCORES_VERSION = 1


@dataclass
class ScoreSet(FusionPool):
    """Scores of the fusion pool and of the test set for one (scenario, seed).

    Attributes
    ----------
    S_pool, y_pool : ndarray
        Scores (n_pool, M) and 0/1 labels of the fusion pool, in random order: the fusion
        sample of size ``k`` is its first ``k`` rows.
    S_test, y_test : ndarray
        Scores and labels of the test rows.
    scorer_auc : list of float
        Test AUC of each scorer.
    meta : dict
        Row counts and scorer training times.
    key : str
        The cache key.
    """

    scenario: str
    seed: int
    S_pool: np.ndarray
    y_pool: np.ndarray
    S_test: np.ndarray
    y_test: np.ndarray
    scorer_auc: list[float]
    meta: dict
    key: str


#: The fields of a :class:`ScoreSet` its cache file holds as arrays (the rest is JSON).
_ARRAYS = ("S_pool", "y_pool", "S_test", "y_test")


def score_key(scenario: Scenario, seed: int) -> str:
    """Hex digest identifying the scores of ``(scenario, seed)`` under the current code."""
    return cache_key("scenario", asdict(scenario), seed, SCORES_VERSION)


def _rng(scenario: Scenario, seed: int) -> np.random.Generator:
    return np.random.default_rng(
        np.random.SeedSequence(
            [int(seed), zlib.crc32(scenario.dataset.encode()), zlib.crc32(scenario.name.encode())]
        )
    )


def build_scores(scenario: Scenario, seed: int, data) -> ScoreSet:
    """Split the rows, train each scorer on its own rows, score the fusion pool and test set.

    ``data`` is a :class:`fusion.datasets.Dataset` (binary target).
    """
    rng = _rng(scenario, seed)
    train_parts, pool, test = split_rows(data.y.shape[0], scenario, rng)
    keep = np.concatenate([pool, test])
    categorical = set(data.categorical)
    scores, aucs, seconds = [], [], []
    for spec, rows in zip(scenario.scorers, train_parts, strict=True):
        cols = feature_columns(scenario, spec, data.X.columns)
        cat = [c for c in cols if c in categorical]
        num = [c for c in cols if c not in categorical]
        scorer = make_scorer(spec.kind, cat, num, int(rng.integers(2**31 - 1)))
        t0 = time.perf_counter()
        fit_scorer(scorer, data.X.iloc[rows][cols], data.y[rows])
        s = scorer.predict_proba(data.X.iloc[keep][cols])[:, 1]
        seconds.append(time.perf_counter() - t0)
        scores.append(s)
        aucs.append(float(roc_auc_score(data.y[test], s[pool.shape[0] :])))
    n_pool = pool.shape[0]
    meta = {
        "n_train": [int(r.shape[0]) for r in train_parts],
        "n_pool": int(n_pool),
        "n_test": int(test.shape[0]),
        "positive_rate_test": float(data.y[test].mean()),
        "scorer_seconds": seconds,
        "data_path": str(getattr(data, "path", "")),
    }
    return ScoreSet(
        scenario=scenario.name,
        seed=int(seed),
        **pool_and_test(
            np.column_stack(scores).astype(float),
            data.y[pool].astype(np.int64),
            data.y[test].astype(np.int64),
        ),
        scorer_auc=aucs,
        meta=meta,
        key=score_key(scenario, seed),
    )


def cached_scores(
    scenario: Scenario,
    seed: int,
    cache_dir: str | os.PathLike | None,
    loader: Callable[[str], object],
) -> tuple[ScoreSet, bool]:
    """The scores of ``(scenario, seed)``: from the cache when present, else built (and
    stored when ``cache_dir`` is given). ``loader(name)`` returns the data set; it is only
    called on a cache miss. Returns the scores and whether they came from the cache."""
    key = score_key(scenario, seed)

    def restore(arrays: dict[str, np.ndarray], extras: dict) -> ScoreSet:
        return ScoreSet(
            scenario.name,
            int(seed),
            **arrays,
            scorer_auc=list(extras["scorer_auc"]),
            meta=dict(extras["meta"]),
            key=key,
        )

    return cached(
        cache_path(cache_dir, scenario.name, seed, key),
        key,
        arrays=_ARRAYS,
        build=lambda: build_scores(scenario, seed, loader(scenario.dataset)),
        extras=lambda ss: {"scorer_auc": ss.scorer_auc, "meta": ss.meta},
        restore=restore,
    )
