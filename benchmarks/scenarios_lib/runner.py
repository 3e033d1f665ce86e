"""The loop of the scorer benchmark: scores (cached), then every contender on every cell.

A cell is (scenario, fusion sample size); per seed every contender is fitted on the same
fusion rows and scored on the same test rows. Before each fit NumPy's global random state is
seeded from (scenario, seed, size), identically for every contender, so methods that draw
from it (unseeded CV folds) are reproducible run to run.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from harness.loop import FitBar, contender_rows, fit_seed, run_cells, seeded_fit, timed_fit

from fusion import metrics
from fusion.bench._record import chosen

from .catalog import Scenario
from .contenders import Contender, FusionFit
from .scores import ScoreSet, cached_scores

__all__ = ["ECE_BINS", "RunConfig", "RunResult", "evaluate", "default_alias", "run"]

#: ECE: equal-width bins of the predicted probability, weighted by their share of test rows.
ECE_BINS = 15


@dataclass(frozen=True)
class RunConfig:
    """What a run covers.

    ``sizes=None`` fits every scenario's own fusion sizes; otherwise only those of its sizes
    that are listed. ``max_n[key]`` skips (and reports) cells above that size for a method.
    """

    scenarios: tuple[Scenario, ...]
    seeds: tuple[int, ...]
    set_name: str = "main"
    sizes: tuple[int, ...] | None = None
    max_n: dict = field(default_factory=dict)
    cache_dir: str | None = None

    def cell_sizes(self, scenario: Scenario) -> list[int]:
        if self.sizes is None:
            return list(scenario.n_fuse)
        return [n for n in scenario.n_fuse if n in self.sizes]


@dataclass
class RunResult:
    """Fit rows (one per scenario, seed, size, contender), per-(scenario, seed) score
    information, the contenders' labels, notes and the wall-clock time."""

    rows: list[dict]
    scores: list[dict]
    labels: dict[str, str]
    config: RunConfig
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0


#: The test metrics of a fit row: NaN until measured, and after a failure.
_METRICS = ("brier", "log_loss", "ece")


def _empty_row(status: str = "ok", error: str = "") -> dict:
    """A result row with every column (CSV rows of a run all have the same fields)."""
    row = dict.fromkeys((*_METRICS, "fit_seconds", "predict_seconds"), math.nan)
    row.update(status=status, error=error, warnings=0, warning="", note="", selected="")
    row.update(p_min=math.nan, p_max=math.nan)
    return row


def evaluate(estimator, S_fuse, y_fuse, S_test, y_test) -> dict:
    """Fit and score one contender; failures are recorded, not raised."""

    def score(P: np.ndarray) -> dict:
        p = P[:, 1] if P.ndim == 2 else P
        return {
            "brier": metrics.brier_score(y_test, p),
            "log_loss": metrics.log_loss(y_test, p),
            "ece": metrics.binned_ece(y_test, p, n_bins=ECE_BINS),
            "p_min": float(p.min()),
            "p_max": float(p.max()),
            "selected": selected(estimator),
        }

    return timed_fit(estimator, S_fuse, y_fuse, S_test, _empty_row(), score, reset=_METRICS)


#: Fitted attributes worth recording: the hyper-parameters a method chose by CV.
_SELECTED = ("degree_", "lam_", "lambda_", "C_", "copula_families_", "best_params_")


def selected(estimator) -> str:
    """``"degree_=(3, 3); ..."``: what the (wrapped) estimator chose, for the CSV."""
    return chosen(getattr(estimator, "model_", estimator), _SELECTED)


def default_alias(contenders: Sequence[Contender]) -> dict[str, str]:
    """Registered methods whose defaults build the very estimator ``fusion.fit`` builds by
    default: ``{key: "default"}``. Their fits would repeat the default's bit for bit (same
    estimator, same seeded random state), so their rows are copied from it."""
    import fusion

    keys = {c.key for c in contenders}
    if "default" not in keys:
        return {}
    rng = np.random.default_rng(0)
    S = rng.random((120, 2))
    y = (rng.random(120) < S.mean(axis=1)).astype(int)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = FusionFit().fit(S, y).model_
    except Exception:
        return {}
    params = repr(sorted(model.get_params().items()))
    out = {}
    for name, cls in fusion.METHODS.items():
        if (
            name in keys
            and type(model) is cls
            and repr(sorted(cls().get_params().items())) == params
        ):
            out[name] = "default"
    return out


def run(
    config: RunConfig,
    contenders: Sequence[Contender],
    *,
    loader: Callable[[str], object] | None = None,
    progress: bool = True,
    on_rows: Callable[[list[dict]], None] | None = None,
) -> RunResult:
    """Run every contender on every cell and seed of ``config``.

    Parameters
    ----------
    config : RunConfig
    contenders : sequence of Contender
    loader : callable, optional
        ``loader(name) -> Dataset`` for cache misses; :func:`fusion.datasets.load` by
        default (each data set is read at most once per run).
    progress : bool
        A tqdm bar on stderr.
    on_rows : callable, optional
        Called with the fit rows of each (cell, seed) as soon as they exist (a long run
        keeps its partial results).
    """
    start = time.perf_counter()
    if loader is None:
        from fusion.datasets import load as loader
    load_once = functools.cache(loader)
    aliases = default_alias(contenders)
    notes = [
        f"`{k}` builds the same estimator as `fusion.fit` by default; its rows are the "
        "default's (fitted once)."
        for k in aliases
    ]
    for c in contenders:
        if c.key in config.max_n:
            notes.append(
                f"`{c.key}` is not fitted on fusion samples above {config.max_n[c.key]:,} rows "
                "(too slow; those cells are marked skipped)."
            )
    plan = [(s, seed, config.cell_sizes(s)) for s in config.scenarios for seed in config.seeds]
    bar = FitBar(sum(len(sizes) * len(contenders) for _, _, sizes in plan), progress)
    rows, score_rows = run_cells(
        plan,
        lambda scenario, seed: cached_scores(scenario, seed, config.cache_dir, load_once),
        _score_row,
        lambda scenario, ss, n: _cell(scenario, ss, n, contenders, config, aliases, bar),
        bar,
        on_rows,
    )
    return RunResult(
        rows=rows,
        scores=score_rows,
        labels={c.key: c.label for c in contenders},
        config=config,
        notes=notes,
        elapsed=time.perf_counter() - start,
    )


def _score_row(scenario: Scenario, ss: ScoreSet, hit: bool, seconds: float) -> dict:
    row = {
        "scenario": scenario.name,
        "dataset": scenario.dataset,
        "seed": ss.seed,
        "M": scenario.M,
        "n_test": int(ss.y_test.shape[0]),
        "positive_rate": float(ss.y_test.mean()),
        "cached": hit,
        "seconds": seconds,
        "key": ss.key,
    }
    for j, auc in enumerate(ss.scorer_auc):
        row[f"auc_{j + 1}"] = auc
    return row


def _cell(
    scenario: Scenario, ss: ScoreSet, n: int, contenders, config, aliases, bar: FitBar
) -> list[dict]:
    S_fuse, y_fuse = ss.fusion_sample(n)
    base = {
        "set": config.set_name,
        "scenario": scenario.name,
        "dataset": scenario.dataset,
        "M": scenario.M,
        "n_fuse": n,
        "seed": ss.seed,
        "n_test": int(ss.y_test.shape[0]),
        "score_key": ss.key,
    }
    seed = fit_seed(scenario.name, ss.seed, n)
    done: dict[str, dict] = {}

    def fit(c: Contender) -> dict:
        alias = aliases.get(c.key)
        if alias in done:
            return dict(done[alias], note=f"= {alias}")
        done[c.key] = seeded_fit(
            c.make,
            seed,
            lambda est: evaluate(est, S_fuse, y_fuse, ss.S_test, ss.y_test),
            _empty_row,
        )
        return done[c.key]

    where = f"{scenario.name} seed {ss.seed} n={n}"
    return [
        {**base, "method": c.key, "label": c.label, **row}
        for c, row in contender_rows(contenders, n, config.max_n, fit, _empty_row, bar, where)
    ]
