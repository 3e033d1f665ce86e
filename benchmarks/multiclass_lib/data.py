"""Setups whose scorers are trained on data: digits, Covertype and a 100-class
``make_classification`` task; the stratified row splits and the cache of the scorers' outputs.

A *setup* names a data set, ``M`` scorer kinds, the training rows of each scorer, the fusion
sample sizes and the test size. Per seed the rows are put in a stratified random order
(:func:`stratified_order`) and cut into consecutive disjoint parts: one training sample per
scorer, the fusion pool (its first ``n`` rows are the fusion sample of size ``n``, so the
samples are nested) and the test set. Every part, and every prefix of the pool, holds each
class in proportion to its share of the data (to within a row or two).

Training the scorers is the slow, fixed part of a run; their ``predict_proba`` outputs on the
pool and test rows are cached as ``.npz`` files keyed by the setup, the seed,
:data:`SCORES_VERSION` and the scikit-learn version
(:func:`harness.scores.cached`).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
from harness.scores import (
    FusionPool,
    cache_key,
    cache_path,
    cached,
    fit_scorer,
    pool_and_test,
)
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

__all__ = [
    "SCORES_VERSION",
    "SCORER_KINDS",
    "CLASSIFICATION_100",
    "Setup",
    "TRAINED_SETUPS",
    "QUICK_TRAINED_SETUPS",
    "ScoreSet",
    "stratified_order",
    "split_rows",
    "load_data",
    "score_key",
    "build_scores",
    "cached_scores",
    "member_metrics",
]

#: Version of the score-making code; part of every cache key.
SCORES_VERSION = 1


def _hgb(seed: int):
    return HistGradientBoostingClassifier(random_state=seed)


def _hgb50(seed: int):
    # 100 classes: one tree per class and iteration, so a modest budget and no early stopping.
    return HistGradientBoostingClassifier(max_iter=50, early_stopping=False, random_state=seed)


def _rf(seed: int):
    # Fully grown trees: probabilities are multiples of 1/100 with many exact zeros.
    return RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=seed)


def _mlp(seed: int):
    # Little weight decay, trained to (near) convergence: confident, often overconfident.
    return make_pipeline(
        StandardScaler(),
        MLPClassifier(hidden_layer_sizes=(100,), alpha=1e-4, max_iter=300, random_state=seed),
    )


def _gnb(seed: int):
    # Naive independence on correlated pixels: probabilities pushed to 0 and 1.
    return GaussianNB()


def _logreg(seed: int):
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=300))


#: kind -> (builder(seed) -> unfitted classifier, description for the report).
SCORER_KINDS: dict[str, tuple[Callable[[int], object], str]] = {
    "hgb": (_hgb, "HistGradientBoosting (defaults)"),
    "hgb50": (_hgb50, "HistGradientBoosting (50 iterations)"),
    "rf": (_rf, "RandomForest (100 fully grown trees)"),
    "mlp": (_mlp, "MLP (100 hidden units, standardized inputs)"),
    "gnb": (_gnb, "Gaussian naive Bayes"),
    "logreg": (_logreg, "LogisticRegression (standardized inputs)"),
}

#: The 100-class task: ``make_classification`` with these arguments (one Gaussian cluster per
#: class in 35 informative dimensions; ``class_sep`` puts the scorers' accuracies at 40-70 %).
CLASSIFICATION_100: dict = {
    "n_samples": 70_000,
    "n_features": 50,
    "n_informative": 35,
    "n_redundant": 5,
    "n_classes": 100,
    "n_clusters_per_class": 1,
    "class_sep": 1.75,
    "flip_y": 0.0,
    "random_state": 0,
}

#: Data sets generated in code: name -> ``make_classification`` arguments (part of the key).
_GENERATED = {"classification100": CLASSIFICATION_100}


@dataclass(frozen=True)
class Setup:
    """One data set with its scorers and row budget.

    Per seed, :func:`split_rows` cuts the data into ``n_train`` rows per scorer, a fusion
    pool of ``max(n_fuse)`` rows and the test rows (``n_test``, or all that are left).

    Attributes
    ----------
    name : str
        Name in the tables and on the command line.
    dataset : str
        ``"digits"`` (scikit-learn's bundled digits), ``"covertype"`` (fusion.datasets,
        ``target="multiclass"``) or ``"classification100"`` (:data:`CLASSIFICATION_100`).
    scorers : tuple of str
        Scorer kinds (keys of :data:`SCORER_KINDS`), one per scorer.
    n_train : int
        Training rows of each scorer (disjoint between scorers).
    n_fuse : tuple of int
        Fusion sample sizes (nested prefixes of a pool of ``max(n_fuse)`` rows).
    n_test : int or None
        Test rows (None: every row left over).
    seeds : tuple of int
        Seeds of a full run.
    group : str
        ``"main"`` or ``"heldout"`` (not part of the cache key).
    """

    name: str
    dataset: str
    scorers: tuple[str, ...]
    n_train: int
    n_fuse: tuple[int, ...]
    n_test: int | None
    seeds: tuple[int, ...]
    group: str = field(default="main", compare=False)

    @property
    def M(self) -> int:
        return len(self.scorers)

    @property
    def n_pool(self) -> int:
        return max(self.n_fuse)

    def describe(self) -> str:
        """The scorers, for the report."""
        return ", ".join(SCORER_KINDS[k][1] for k in self.scorers)

    def scores(self, seed: int, cache_dir, loader=None) -> tuple[ScoreSet, bool]:
        """The scorers' outputs of ``seed`` (cached) and whether they came from the cache."""
        return cached_scores(self, seed, cache_dir, loader or load_data)


#: Digits has 1,797 rows: 3 x 200 scorer rows, a pool of 500, the remaining 697 for testing.
#: Covertype: 3 x 10,000 scorer rows, a pool of 5,000, 50,000 test rows. The 100-class task:
#: 4 x 10,000 scorer rows (100 per class), a pool of 10,000, 20,000 test rows.
TRAINED_SETUPS: tuple[Setup, ...] = (
    Setup("digits", "digits", ("rf", "mlp", "gnb"), 200, (250, 500), None, (0, 1, 2)),
    Setup(
        "covertype",
        "covertype",
        ("hgb", "rf", "mlp"),
        10_000,
        (500, 2_000, 5_000),
        50_000,
        (0, 1, 2),
    ),
    Setup(
        "classif100",
        "classification100",
        ("mlp", "logreg", "rf", "hgb50"),
        10_000,
        (2_000, 10_000),
        20_000,
        (0, 1, 2),
    ),
)

#: The smoke run: digits only, one seed, one fusion size.
QUICK_TRAINED_SETUPS: tuple[Setup, ...] = (
    Setup("digits", "digits", ("rf", "mlp", "gnb"), 200, (500,), None, (0,)),
)


@dataclass
class ScoreSet(FusionPool):
    """The scorers' class probabilities on the fusion pool and the test rows.

    ``S_pool`` has shape ``(n_pool, M, C)`` (columns follow ``classes``); the fusion sample of
    size ``n`` is its first ``n`` rows. ``info`` holds per-scorer test accuracy and log-loss
    (``scorer_accuracy``, ``scorer_log_loss``), and what else the maker records;
    ``truth_test`` is the true class distribution of the test rows where it is known.
    """

    setup: str
    seed: int
    classes: np.ndarray
    S_pool: np.ndarray
    y_pool: np.ndarray
    S_test: np.ndarray
    y_test: np.ndarray
    info: dict
    key: str
    truth_test: np.ndarray | None = None


#: The fields of a :class:`ScoreSet` its cache file holds as arrays (``info`` is JSON).
_ARRAYS = ("classes", "S_pool", "y_pool", "S_test", "y_test")


def stratified_order(y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random order of the rows in which every run of consecutive rows is stratified.

    Within each class the rows are shuffled; the ``r``-th row of class ``k`` gets the key
    ``(r + 1/2) / n_k`` and rows are sorted by key (ties broken at random). A window of
    ``L`` consecutive positions then holds each class ``k`` about ``L n_k / n`` times (within
    a couple of rows), so consecutive slices are stratified samples, as are the prefixes.
    """
    y = np.asarray(y)
    _, index, counts = np.unique(y, return_inverse=True, return_counts=True)
    index = index.reshape(-1)
    keys = np.empty(y.shape[0])
    for k, count in enumerate(counts):
        rows = np.flatnonzero(index == k)
        keys[rng.permutation(rows)] = (np.arange(count) + 0.5) / count
    tie = rng.random(y.shape[0])
    return np.lexsort((tie, keys))


def split_rows(
    y: np.ndarray, setup: Setup, rng: np.random.Generator
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """``(train_parts, pool, test)``: disjoint stratified row indices (see the module doc)."""
    n = np.asarray(y).shape[0]
    need = setup.M * setup.n_train + setup.n_pool + (setup.n_test or 1)
    if need > n:
        raise ValueError(
            f"setup {setup.name!r} needs {need:,} rows ({setup.M} x {setup.n_train:,} scorer "
            f"rows, a pool of {setup.n_pool:,}, test rows) but the data have {n:,}."
        )
    order = stratified_order(y, rng)
    cuts = np.cumsum([setup.n_train] * setup.M + [setup.n_pool])
    parts = np.split(order, cuts)
    train, pool, rest = parts[: setup.M], parts[setup.M], parts[setup.M + 1]
    test = rest if setup.n_test is None else rest[: setup.n_test]
    return train, pool, test


def load_data(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a setup's data set: features as floats, the class labels."""
    if dataset == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X.astype(float), y.astype(np.int64)
    if dataset == "covertype":
        from fusion.datasets import load

        data = load("covertype", target="multiclass")
        return data.X.to_numpy(dtype=float), np.asarray(data.y, dtype=np.int64)
    if dataset in _GENERATED:
        from sklearn.datasets import make_classification

        X, y = make_classification(**_GENERATED[dataset])
        return X.astype(float), y.astype(np.int64)
    known = ["digits", "covertype", *_GENERATED]
    raise ValueError(f"unknown data set {dataset!r}; known: {known}.")


def score_key(setup: Setup, seed: int) -> str:
    """Hex digest identifying the scores of ``(setup, seed)`` under the current code."""
    definition = {k: v for k, v in asdict(setup).items() if k not in ("seeds", "group")}
    if setup.dataset in _GENERATED:
        definition["data"] = _GENERATED[setup.dataset]
    return cache_key("setup", definition, seed, SCORES_VERSION)


def _rng(setup: Setup, seed: int) -> np.random.Generator:
    name = int.from_bytes(hashlib.sha256(setup.name.encode()).digest()[:4], "little")
    return np.random.default_rng(np.random.SeedSequence([int(seed), name]))


def member_metrics(P: np.ndarray, y_index: np.ndarray) -> tuple[float, float]:
    """Accuracy and log-loss (probabilities clipped at 1e-15) of one member's ``P`` (n, C)
    for labels given as column indices."""
    P = np.asarray(P, dtype=float)
    acc = float(np.mean(np.argmax(P, axis=1) == y_index))
    picked = P[np.arange(P.shape[0]), y_index]
    return acc, float(-np.mean(np.log(np.clip(picked, 1e-15, 1.0))))


def build_scores(setup: Setup, seed: int, X: np.ndarray, y: np.ndarray) -> ScoreSet:
    """Split the rows, train each scorer on its own rows, score the pool and the test set."""
    rng = _rng(setup, seed)
    classes = np.unique(y)
    train, pool, test = split_rows(y, setup, rng)
    keep = np.concatenate([pool, test])
    test_index = np.searchsorted(classes, y[test])
    probs, acc, nll, seconds = [], [], [], []
    for kind, rows in zip(setup.scorers, train, strict=True):
        try:
            model = SCORER_KINDS[kind][0](int(rng.integers(2**31 - 1)))
        except KeyError:
            raise ValueError(
                f"unknown scorer kind {kind!r}; known: {sorted(SCORER_KINDS)}."
            ) from None
        t0 = time.perf_counter()
        fit_scorer(model, X[rows], y[rows])
        if not np.array_equal(model.classes_, classes):
            raise ValueError(
                f"scorer {kind!r} saw classes {model.classes_.tolist()} in its training rows, "
                f"not all of {classes.tolist()}; give it more rows."
            )
        P = model.predict_proba(X[keep])
        seconds.append(time.perf_counter() - t0)
        probs.append(P / P.sum(axis=1, keepdims=True))
        a, ll = member_metrics(probs[-1][pool.shape[0] :], test_index)
        acc.append(a)
        nll.append(ll)
    info = {
        "scorer_accuracy": acc,
        "scorer_log_loss": nll,
        "scorer_seconds": seconds,
        "n_train": [int(r.shape[0]) for r in train],
        "n_pool": int(pool.shape[0]),
        "n_test": int(test.shape[0]),
    }
    arrays = pool_and_test(np.stack(probs, axis=1), y[pool], y[test])
    return ScoreSet(setup.name, int(seed), classes, **arrays, info=info, key=score_key(setup, seed))


def cached_scores(
    setup: Setup,
    seed: int,
    cache_dir: str | os.PathLike | None,
    loader: Callable[[str], tuple[np.ndarray, np.ndarray]] = load_data,
) -> tuple[ScoreSet, bool]:
    """The scores of ``(setup, seed)`` from the cache, else built (and stored when
    ``cache_dir`` is given). ``loader(dataset) -> (X, y)`` is called only on a cache miss.
    Returns the scores and whether they came from the cache."""
    key = score_key(setup, seed)

    def build() -> ScoreSet:
        X, y = loader(setup.dataset)
        return build_scores(setup, seed, X, y)

    def restore(arrays: dict[str, np.ndarray], extras: dict) -> ScoreSet:
        return ScoreSet(setup.name, int(seed), **arrays, info=dict(extras["info"]), key=key)

    return cached(
        cache_path(cache_dir, setup.name, seed, key),
        key,
        arrays=_ARRAYS,
        build=build,
        extras=lambda ss: {"info": ss.info},
        restore=restore,
    )
