"""The loop of the scorer benchmark: scores (cached), then every contender on every cell.

A cell is (scenario, fusion sample size); per seed every contender is fitted on the same
fusion rows and scored on the same test rows. Before each fit NumPy's global random state is
seeded from (scenario, seed, size), identically for every contender, so methods that draw
from it (unseeded CV folds) are reproducible run to run.
"""

from __future__ import annotations

import math
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ... import metrics
from .._record import chosen, record_warnings
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


def _empty_row(status: str = "ok", error: str = "") -> dict:
    """A result row with every column (CSV rows of a run all have the same fields)."""
    row = dict.fromkeys(("brier", "log_loss", "ece", "fit_seconds", "predict_seconds"), math.nan)
    row.update(status=status, error=error, warnings=0, warning="", note="", selected="")
    row.update(p_min=math.nan, p_max=math.nan)
    return row


def evaluate(estimator, S_fuse, y_fuse, S_test, y_test) -> dict:
    """Fit and score one contender; failures are recorded, not raised."""
    row = _empty_row()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            t0 = time.perf_counter()
            estimator.fit(S_fuse, y_fuse)
            row["fit_seconds"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            p = np.asarray(estimator.predict_proba(S_test), dtype=float)
            row["predict_seconds"] = time.perf_counter() - t0
            p = p[:, 1] if p.ndim == 2 else p
            row["brier"] = metrics.brier_score(y_test, p)
            row["log_loss"] = metrics.log_loss(y_test, p)
            row["ece"] = metrics.binned_ece(y_test, p, n_bins=ECE_BINS)
            row["p_min"], row["p_max"] = float(p.min()), float(p.max())
            row["selected"] = selected(estimator)
        except Exception as err:  # a failing method is reported, the benchmark goes on
            row.update(status="error", error=f"{type(err).__name__}: {err}"[:300])
            for m in ("brier", "log_loss", "ece"):
                row[m] = math.nan
    return record_warnings(row, caught)


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


def _fit_seed(scenario: str, seed: int, n: int) -> int:
    return zlib.crc32(f"{scenario}|{seed}|{n}".encode()) & 0x7FFFFFFF


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="fit", dynamic_ncols=True, smoothing=0.05)


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
        from ...datasets import load as loader
    data_cache: dict[str, object] = {}

    def load_once(name):
        if name not in data_cache:
            data_cache[name] = loader(name)
        return data_cache[name]

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
    n_fits = sum(
        len(config.cell_sizes(s)) * len(config.seeds) * len(contenders) for s in config.scenarios
    )
    bar = _progress(n_fits, progress)
    rows: list[dict] = []
    score_rows: list[dict] = []
    try:
        for scenario in config.scenarios:
            for seed in config.seeds:
                if bar is not None:
                    bar.set_postfix_str(f"{scenario.name} seed {seed}: scorers")
                t0 = time.perf_counter()
                ss, hit = cached_scores(scenario, seed, config.cache_dir, load_once)
                score_rows.append(_score_row(scenario, ss, hit, time.perf_counter() - t0))
                for n in config.cell_sizes(scenario):
                    new = _cell(scenario, ss, n, contenders, config, aliases, bar)
                    rows += new
                    if on_rows is not None:
                        on_rows(new)
    finally:
        if bar is not None:
            bar.close()
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


def _cell(scenario, ss: ScoreSet, n: int, contenders, config, aliases, bar) -> list[dict]:
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
    done: dict[str, dict] = {}
    out = []
    for c in contenders:
        if bar is not None:
            bar.set_postfix_str(f"{scenario.name} seed {ss.seed} n={n}: {c.key}")
        limit = config.max_n.get(c.key)
        if limit is not None and n > limit:
            row = _empty_row("skipped", f"not fitted above n_fuse = {limit:,}")
        elif c.key in aliases and aliases[c.key] in done:
            row = dict(done[aliases[c.key]], note=f"= {aliases[c.key]}")
        else:
            # Deliberately the legacy global state: what unseeded library code draws from.
            np.random.seed(_fit_seed(scenario.name, ss.seed, n))  # noqa: NPY002
            try:
                estimator = c.make()
            except Exception as err:  # reported like any failure
                row = _empty_row("error", f"{type(err).__name__}: {err}"[:300])
            else:
                row = evaluate(estimator, S_fuse, y_fuse, ss.S_test, ss.y_test)
            done[c.key] = row
        out.append({**base, "method": c.key, "label": c.label, **row})
        if bar is not None:
            bar.update(1)
    return out
