"""Command line of the scorer benchmark (``python benchmarks/bench_scorers.py``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import cli as _cli

from .catalog import HOLDOUT_SEEDS, MAIN_SEEDS, QUICK, SCENARIO_SETS
from .contenders import DEFAULT_MAX_N, parse_candidate, resolve

__all__ = ["build_parser", "main", "merge_rows"]


def build_parser(default_cache: str | None = None) -> argparse.ArgumentParser:
    limits = ", ".join(f"{k}={v}" for k, v in DEFAULT_MAX_N.items())
    p = argparse.ArgumentParser(
        prog="bench_scorers.py",
        description=(
            "Scenario benchmark: realistic scorers on the five UCI data sets, fusion samples "
            "of 500 / 2,000 / 10,000 rows, several seeds; every fusion method, the peers a "
            "user would fit, and plug-in candidates, compared with logistic regression on the "
            "logits by paired differences. Prints Markdown tables; --out writes CSVs."
        ),
    )
    p.add_argument(
        "--holdout",
        action="store_true",
        help="the held-out scenario set (other scorer kinds, feature subsets and seeds)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 3 scenarios, seed 0, n_fuse 500 (a couple of minutes)",
    )
    p.add_argument("--scenarios", nargs="+", metavar="NAME", help="only these scenarios")
    _cli.add_run_options(
        p,
        default_cache=default_cache,
        seeds_help="seeds (default: the set's)",
        methods_help="contenders to fit (default: fusion.fit default, every registered fusion "
        "method and every peer); lr_logit, the reference, is always added",
        candidate_help="a prototype to evaluate: the callable returns an unfitted estimator "
        "with fit(S, y) / predict_proba(S); module may be a path to a .py file; repeatable",
        max_n_help=f"skip KEY's cells above N fusion rows (default: {limits}; KEY=none lifts "
        "a limit); repeatable",
        out_help="write report.md, fits.csv, cells.csv, summary.csv, scores.csv (and, while "
        "running, fits.partial.csv)",
    )
    p.add_argument(
        "--merge",
        nargs="+",
        default=[],
        metavar="FITS_CSV",
        help="add the rows of earlier runs (their fits.csv) for methods not fitted in this "
        "run, where scenario, seed, n_fuse and the scores' cache key match",
    )
    _cli.add_report_from(p)
    _cli.add_process_options(p)
    return p


def _max_n(items: list[str]) -> dict[str, int]:
    out = dict(DEFAULT_MAX_N)
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--max-n expects KEY=N, got {item!r}.")
        if value.strip().lower() == "none":
            out.pop(key.strip(), None)
        else:
            out[key.strip()] = int(value)
    return out


def merge_rows(rows: list[dict], previous, methods_here: set[str]) -> tuple[list[dict], int]:
    """Rows of ``previous`` (a fits DataFrame) for methods not in ``methods_here`` whose
    (scenario, seed, n_fuse, score_key) is a cell of ``rows``. Returns them and how many
    rows of ``previous`` were left out because their cell is not in this run.

    A row that was a copy of a method fitted in this run (note ``"= default"``) is left out
    too: it holds that method's old numbers under another label."""
    cells = {(r["scenario"], r["seed"], r["n_fuse"], r["score_key"]) for r in rows}
    copies = {f"= {m}" for m in methods_here}
    kept, dropped = [], 0
    for r in previous.to_dict("records"):
        if r["method"] in methods_here or r.get("note") in copies:
            continue
        if (r["scenario"], int(r["seed"]), int(r["n_fuse"]), r["score_key"]) in cells:
            kept.append(
                {
                    k: ("" if v != v and k in ("error", "warning", "note") else v)
                    for k, v in r.items()
                }
            )
        else:
            dropped += 1
    return kept, dropped


def main(argv=None, *, default_cache: str | None = None) -> int:
    parser = build_parser(default_cache)
    return _cli.main_with(parser, argv, benchmark="scorer benchmark", rebuild=_rebuild, run=_run)


def _rebuild(folder: str) -> str:
    """The report of the files an earlier ``--out`` wrote to ``folder``."""
    from . import tables

    return tables.markdown(*tables.read(folder))


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> int:
    """Run the benchmark ``args`` ask for; ``command`` is quoted in the report."""
    import pandas as pd
    from threadpoolctl import threadpool_limits

    from . import tables
    from .runner import RunConfig, run

    set_name = "holdout" if args.holdout else "main"
    scenarios = SCENARIO_SETS[set_name]
    seeds = HOLDOUT_SEEDS if args.holdout else MAIN_SEEDS
    sizes = None
    if args.quick:
        if args.holdout:
            parser.error("--quick runs main scenarios; use --holdout with --scenarios instead.")
        scenarios, seeds, sizes, set_name = QUICK, (0,), (500,), "quick"
    if args.scenarios:
        by_name = {s.name: s for sets in SCENARIO_SETS.values() for s in sets}
        unknown = [n for n in args.scenarios if n not in by_name]
        if unknown:
            parser.error(f"unknown scenario(s) {unknown}; known: {sorted(by_name)}")
        scenarios = tuple(by_name[n] for n in args.scenarios)
    if args.seeds:
        seeds = tuple(args.seeds)
    if args.sizes:
        sizes = tuple(args.sizes)
    try:
        candidates = [parse_candidate(c) for c in args.candidate]
        contenders, notes = resolve(args.methods, candidates)
        max_n = _max_n(args.max_n)
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    config = RunConfig(
        scenarios=tuple(scenarios),
        seeds=tuple(seeds),
        set_name=set_name,
        sizes=sizes,
        max_n={k: v for k, v in max_n.items() if k in {c.key for c in contenders}},
        cache_dir=None if args.no_cache else args.cache,
    )
    from fusion.datasets import DatasetNotFoundError

    on_rows = _cli.partial_writer(args.out)
    try:
        with threadpool_limits(limits=args.threads):
            result = run(config, contenders, progress=not args.no_progress, on_rows=on_rows)
    except DatasetNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in args.merge:
        extra, dropped = merge_rows(result.rows, pd.read_csv(path), {c.key for c in contenders})
        result.rows += extra
        result.notes.append(
            f"{len(extra)} fit rows merged from {Path(path).name}"
            + (f" ({dropped} rows of other cells left out)" if dropped else "")
            + "; their fit times were measured in that run, so their ratios to this run's "
            "LR times mix two machines' loads."
        )
    print(tables.markdown(result, command), end="")
    if args.out:
        _cli.announce(tables.write(result, args.out, command))
    return 0
