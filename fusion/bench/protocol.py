"""The model-comparison protocol of Wang & Liu (2020), Sec. 5.2.

For each data set and round: three disjoint random samples of 500 rows; the first trains
scorer 1, the second scorer 2 (one-hidden-layer networks, "three-layer feed-forward
networks", of hidden sizes 10 and 20, on one-hot encoded and standardized features); the
third trains every fusion method on the two scores; all remaining rows are the test set.
Metrics on the test set: grid MCE and grid ECE on the 10 x 10 grid of the normalized square
with cells of at least ``min_count`` test samples, Brier score (all in percent), log-loss,
AUC, binned ECE (10 equal-width bins, mass-weighted, percent), and each method's fit time.

The scorers' outputs are the networks' logits (the pre-sigmoid output), computed once per
round and shared by all methods; every method is fitted on exactly the same scores.
"""

from __future__ import annotations

import math
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils.extmath import safe_sparse_dot

from .. import metrics
from .._base import FusionEstimator
from ..datasets import DATASETS, Dataset, load
from ._record import chosen, record_warnings
from .methods import DEFAULT_METHODS, MethodSpec, build, resolve_methods

__all__ = [
    "BenchConfig",
    "BenchResult",
    "RoundData",
    "N_SAMPLE",
    "HIDDEN_SIZES",
    "REFERENCE_TEST_SIZE",
    "QUICK_TEST_SIZE",
    "effective_min_count",
    "round_rng",
    "method_seed",
    "split_round",
    "make_scorer",
    "mlp_logit",
    "prepare_round",
    "evaluate_method",
    "run",
]

#: Rows in each of the three training samples.
N_SAMPLE = 500
#: Hidden-layer sizes of scorer 1 and scorer 2 (Sec. 5.1).
HIDDEN_SIZES = (10, 20)
#: Adam epochs of the scorers; they rarely converge in fewer, and the warning is silenced.
MLP_MAX_ITER = 500
#: Test size at and above which ``min_count`` is used as given: the paper's data sets all
#: have more than 40,000 rows. Smaller test sets scale it down proportionally.
REFERENCE_TEST_SIZE = 40_000
#: Test rows kept by ``--quick``.
QUICK_TEST_SIZE = 40_000

#: Metric columns of a result row and whether larger is better.
METRICS = {
    "grid_mce": False,
    "grid_ece": False,
    "brier": False,
    "log_loss": False,
    "auc": True,
    "binned_ece": False,
    "fit_time": False,
}


@dataclass(frozen=True)
class BenchConfig:
    """Everything that determines a benchmark run (and its numbers).

    ``rounds=None`` means 10, or 1 with ``quick``; ``test_size=None`` means every remaining
    row, or :data:`QUICK_TEST_SIZE` with ``quick``.
    """

    datasets: tuple[str, ...] = DATASETS
    methods: tuple[str, ...] = DEFAULT_METHODS
    rounds: int | None = None
    seed: int = 0
    quick: bool = False
    min_count: int = 1000
    bins: int = 10
    n_sample: int = N_SAMPLE
    test_size: int | None = None

    @property
    def n_rounds(self) -> int:
        if self.rounds is not None:
            return int(self.rounds)
        return 1 if self.quick else 10

    @property
    def n_test_max(self) -> int | None:
        if self.test_size is not None:
            return int(self.test_size)
        return QUICK_TEST_SIZE if self.quick else None


@dataclass
class BenchResult:
    """Output of :func:`run`.

    Attributes
    ----------
    rows : list of dict
        One per (data set, round, method): metrics, fit time, status.
    skipped : list of str
        Methods that could not run, with the reason.
    datasets : dict
        Per data set: ``n_rows``, ``n_test``, ``min_count`` (effective), ``scaled``.
    labels : dict
        Method key -> table label, in table order.
    config : BenchConfig
    elapsed : float
        Wall-clock seconds of the whole run.
    """

    rows: list[dict]
    skipped: list[str]
    datasets: dict[str, dict]
    labels: dict[str, str]
    config: BenchConfig
    elapsed: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass
class RoundData:
    """Scores of one round: the fusion sample and the test set."""

    S_fuse: np.ndarray
    y_fuse: np.ndarray
    S_test: np.ndarray
    y_test: np.ndarray
    scorer_auc: tuple[float, float]


def effective_min_count(n_test: int, min_count: int) -> int:
    """``min_count`` scaled to a test set smaller than :data:`REFERENCE_TEST_SIZE`.

    A cell of ``min_count`` samples out of at least 40,000 is what the paper asks; a smaller
    test set keeps the same share, ``ceil(min_count * n_test / 40,000)`` (212 for the 8,500
    test rows of the 10,000-row SUSY copy).
    """
    if min_count < 1:
        raise ValueError(f"min_count must be a positive integer, got {min_count}.")
    if n_test >= REFERENCE_TEST_SIZE:
        return int(min_count)
    return max(1, math.ceil(min_count * n_test / REFERENCE_TEST_SIZE))


def round_rng(seed: int, dataset: str, round_index: int) -> np.random.Generator:
    """The generator of one (data set, round): independent of which others are run."""
    return np.random.default_rng(
        np.random.SeedSequence([int(seed), zlib.crc32(dataset.encode()), int(round_index)])
    )


def method_seed(seed: int, dataset: str, round_index: int, method: str) -> int:
    """``random_state`` of one method in one round: independent of the other methods run."""
    ss = np.random.SeedSequence(
        [int(seed), zlib.crc32(dataset.encode()), int(round_index), zlib.crc32(method.encode())]
    )
    return int(ss.generate_state(1)[0] & 0x7FFFFFFF)


def split_round(
    n: int, rng: np.random.Generator, n_sample: int = N_SAMPLE, test_size: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Three disjoint random samples of ``n_sample`` rows and the test rows (all the rest,
    or a random ``test_size`` of them), as sorted index arrays."""
    if n <= 3 * n_sample:
        raise ValueError(f"the data have {n} rows; three samples of {n_sample} leave no test rows.")
    perm = rng.permutation(n)
    parts = [perm[i * n_sample : (i + 1) * n_sample] for i in range(3)]
    test = perm[3 * n_sample :]
    if test_size is not None and test.shape[0] > test_size:
        test = test[:test_size]
    return (*(np.sort(p) for p in parts), np.sort(test))


def make_scorer(
    categorical: Sequence[str], numeric: Sequence[str], hidden: int, random_state: int
) -> Pipeline:
    """One-hot (categorical) + standardize (numeric), then a one-hidden-layer ReLU network."""
    parts = []
    if categorical:
        parts.append(("cat", OneHotEncoder(handle_unknown="ignore"), list(categorical)))
    if numeric:
        parts.append(("num", StandardScaler(), list(numeric)))
    return Pipeline(
        [
            ("pre", ColumnTransformer(parts)),
            (
                "mlp",
                MLPClassifier(
                    hidden_layer_sizes=(hidden,),
                    activation="relu",
                    max_iter=MLP_MAX_ITER,
                    random_state=random_state,
                ),
            ),
        ]
    )


def mlp_logit(pipeline: Pipeline, X) -> np.ndarray:
    """The network's output before the final sigmoid (a score without saturation ties).

    Equal to ``logit(predict_proba(X)[:, 1])`` wherever that is finite.
    """
    Z = pipeline[:-1].transform(X)
    mlp = pipeline[-1]
    if mlp.activation != "relu":
        raise ValueError(f"mlp_logit supports ReLU networks, got {mlp.activation!r}.")
    H = Z
    for W, b in zip(mlp.coefs_[:-1], mlp.intercepts_[:-1], strict=True):
        H = np.maximum(safe_sparse_dot(H, W) + b, 0.0)
    return np.asarray(safe_sparse_dot(H, mlp.coefs_[-1]) + mlp.intercepts_[-1]).reshape(-1)


def prepare_round(
    data: Dataset,
    rng: np.random.Generator,
    *,
    n_sample: int = N_SAMPLE,
    test_size: int | None = None,
) -> RoundData:
    """Draw the samples, train both scorers and score the fusion sample and the test set."""
    idx1, idx2, idx_fuse, idx_test = split_round(data.y.shape[0], rng, n_sample, test_size)
    categorical = [c for c in data.X.columns if c in set(data.categorical)]
    numeric = [c for c in data.X.columns if c not in set(data.categorical)]
    keep = np.concatenate([idx_fuse, idx_test])
    X_keep = data.X.iloc[keep]
    scores, aucs = [], []
    for idx, hidden in zip((idx1, idx2), HIDDEN_SIZES, strict=True):
        scorer = make_scorer(categorical, numeric, hidden, int(rng.integers(2**31 - 1)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            scorer.fit(data.X.iloc[idx], data.y[idx])
        s = mlp_logit(scorer, X_keep)
        scores.append(s)
        aucs.append(float(roc_auc_score(data.y[idx_test], s[n_sample:])))
    S = np.column_stack(scores)
    return RoundData(
        S_fuse=S[:n_sample],
        y_fuse=data.y[idx_fuse],
        S_test=S[n_sample:],
        y_test=data.y[idx_test],
        scorer_auc=(aucs[0], aucs[1]),
    )


def evaluate_method(
    estimator: FusionEstimator, rd: RoundData, *, min_count: int, bins: int = 10
) -> dict:
    """Fit on the fusion sample, score the test set; metrics in percent where the paper's are.

    Failures are recorded, not raised: ``status`` is ``"ok"``, ``"error"`` (fit or predict
    raised; metrics NaN) or ``"no-grid-cell"`` (no cell reached ``min_count``; grid metrics
    NaN). ``warnings`` counts the warnings the method emitted, ``warning`` shows the first.
    """
    row = dict.fromkeys((*METRICS, "fit_cpu"), np.nan)
    row.update(status="ok", error="", warnings=0, warning="", n_cells=0, selected="")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            estimator.fit(rd.S_fuse, rd.y_fuse)
            row["fit_time"] = time.perf_counter() - t0
            row["fit_cpu"] = time.process_time() - c0
            p = estimator.predict_proba(rd.S_test)[:, 1]
        except Exception as err:  # a failing method is reported, the benchmark goes on
            row.update(status="error", error=f"{type(err).__name__}: {err}"[:300])
            p = None
        if p is not None:
            row["brier"] = 100 * metrics.brier_score(rd.y_test, p)
            row["log_loss"] = metrics.log_loss(rd.y_test, p)
            row["auc"] = float(roc_auc_score(rd.y_test, p))
            row["binned_ece"] = 100 * metrics.binned_ece(rd.y_test, p, n_bins=10)
            row["selected"] = chosen(estimator, _SELECTED)
            try:
                table = metrics.grid_calibration_table(
                    estimator, rd.S_test, rd.y_test, bins=bins, min_count=min_count
                )
            except ValueError as err:
                row.update(status="no-grid-cell", error=str(err)[:300])
            else:
                row["grid_mce"] = 100 * table.mce
                row["grid_ece"] = 100 * table.ece
                row["n_cells"] = table.n_kept
    return record_warnings(row, caught)


# Fitted attributes worth recording: the hyper-parameters each method chose by CV.
_SELECTED = ("degree_", "lam_", "C_", "best_params_", "copula_families_", "lambda_")


def run(
    config: BenchConfig,
    *,
    loader: Callable[[str], Dataset] = load,
    progress: bool = True,
    runnable=None,
) -> BenchResult:
    """Run the protocol for every data set, round and method of ``config``.

    Parameters
    ----------
    config : BenchConfig
    loader : callable
        ``loader(name) -> Dataset``; :func:`fusion.datasets.load` by default.
    progress : bool
        Show a tqdm progress bar on stderr.
    runnable : list of (MethodSpec, class), optional
        Methods to run instead of resolving ``config.methods`` (tests).

    Returns
    -------
    BenchResult
    """
    start = time.perf_counter()
    if runnable is None:
        runnable, skipped = resolve_methods(config.methods)
    else:
        skipped = []
    labels = {spec.key: spec.label for spec, _ in runnable}
    rows: list[dict] = []
    info: dict[str, dict] = {}
    n_units = len(config.datasets) * config.n_rounds * max(len(runnable), 1)
    bar = _progress(n_units, progress)
    try:
        for name in config.datasets:
            bar.set_postfix_str(f"{name}: loading")
            data = loader(name)
            n_test = _n_test(data.y.shape[0], config)
            mc = effective_min_count(n_test, config.min_count)
            info[name] = {
                "n_rows": int(data.y.shape[0]),
                "n_test": n_test,
                "min_count": mc,
                "scaled": mc != config.min_count,
                "path": str(data.path),
            }
            for r in range(config.n_rounds):
                rng = round_rng(config.seed, name, r)
                bar.set_postfix_str(f"{name} round {r + 1}: scorers")
                rd = prepare_round(data, rng, n_sample=config.n_sample, test_size=config.n_test_max)
                for spec, cls in runnable:
                    bar.set_postfix_str(f"{name} round {r + 1}: {spec.key}")
                    rs = method_seed(config.seed, name, r, spec.key)
                    row = _evaluate(spec, cls, rd, rs, config, mc)
                    row.update(
                        dataset=name,
                        round=r,
                        method=spec.key,
                        label=spec.label,
                        n_train=int(rd.y_fuse.shape[0]),
                        n_test=int(rd.y_test.shape[0]),
                        min_count=mc,
                        scorer1_auc=rd.scorer_auc[0],
                        scorer2_auc=rd.scorer_auc[1],
                        seed=config.seed,
                    )
                    rows.append(row)
                    bar.update(1)
    finally:
        bar.close()
    return BenchResult(
        rows=rows,
        skipped=skipped,
        datasets=info,
        labels=labels,
        config=config,
        elapsed=time.perf_counter() - start,
    )


def _evaluate(spec: MethodSpec, cls, rd: RoundData, rs: int, config: BenchConfig, mc: int):
    try:
        estimator = build(spec, cls, random_state=rs, quick=config.quick)
    except Exception as err:  # reported in the table notes like any failure
        row = dict.fromkeys(METRICS, np.nan)
        row.update(status="error", error=f"{type(err).__name__}: {err}"[:300], warnings=0)
        return row
    return evaluate_method(estimator, rd, min_count=mc, bins=config.bins)


def _n_test(n: int, config: BenchConfig) -> int:
    n_test = n - 3 * config.n_sample
    if config.n_test_max is not None:
        n_test = min(n_test, config.n_test_max)
    return n_test


class _NoBar:
    def set_postfix_str(self, s: str) -> None:
        pass

    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError(
            "the benchmark's progress bars need tqdm: pip install 'fusion-calibration[bench]'."
        ) from None
    return tqdm(total=total, unit="fit", dynamic_ncols=True, smoothing=0)
