"""Command line of the multi-class benchmark (``python benchmarks/bench_multiclass.py``)."""

from __future__ import annotations

import argparse
import sys
import time

from harness import cli as _cli

from .data import QUICK_TRAINED_SETUPS, TRAINED_SETUPS
from .synthetic import HELDOUT_SETUPS, QUICK_SYNTHETIC_SETUPS, SYNTHETIC_SETUPS

__all__ = ["SETUPS", "QUICK_SETUPS", "build_parser", "main"]

#: Every setup of a full run (main set, then held-out set) and of --quick.
SETUPS = (*TRAINED_SETUPS, *SYNTHETIC_SETUPS, *HELDOUT_SETUPS)
QUICK_SETUPS = (*QUICK_TRAINED_SETUPS, *QUICK_SYNTHETIC_SETUPS)


def build_parser(default_cache: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bench_multiclass.py",
        description=(
            "Multi-class fusion benchmark (issue 21): M members x C classes (C = 7 to 1,000) "
            "from trained scorers (digits, Covertype, a 100-class make_classification task) "
            "and synthetic ensembles with a known posterior (main and held-out sets); "
            "fusion.fit's default, the previous per-class model and the peers users fit "
            "(temperature scaling of the averaged log-probabilities, of each member, vector "
            "scaling, Dirichlet / LogisticRegressionCV, the best member after TS), the "
            "issue's check against TS of the average, and the speed and memory of the fit."
        ),
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: digits (500), syn10 and ho_useless100 (1,000 rows), seed 0; "
        "small speed sizes, once",
    )
    p.add_argument(
        "--setups",
        nargs="+",
        metavar="NAME",
        help=f"only these setups (known: {', '.join(s.name for s in SETUPS)})",
    )
    p.add_argument(
        "--sets",
        nargs="+",
        choices=["main", "heldout"],
        help="only the setups of these sets (default: both)",
    )
    _cli.add_run_options(
        p,
        default_cache=default_cache,
        seeds_help="seeds (default: the setup's, 3)",
        methods_help="contenders to fit (default, per_class, ts_avg, ts_members, vector, "
        "dirichlet, best_ts; default: all); default and ts_avg are always fitted, the raw "
        "members and the truth are always reported",
        candidate_help="a prototype: the callable returns an unfitted estimator with fit(S, y) "
        "and predict_proba(S) for S of shape (n, M, C) and y in 0..C-1; module may be a .py "
        "path; repeatable",
        max_n_help="skip KEY's cells above N fusion rows; repeatable",
        out_help="write report.md, fits.csv, cells.csv, check.csv, scores.csv, speed.json, "
        "run.json (and, while running, fits.partial.csv)",
    )
    p.add_argument(
        "--speed-repeats",
        type=int,
        metavar="R",
        help="fits per measurement of the speed section (default 3; --quick 1)",
    )
    _cli.add_report_from(p)
    p.add_argument("--no-speed", action="store_true", help="skip the speed and memory section")
    p.add_argument("--speed-only", action="store_true", help="only the speed and memory section")
    _cli.add_process_options(p)
    return p


def _max_n(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--max-n expects KEY=N, got {item!r}.")
        out[key.strip()] = int(value)
    return out


def main(argv=None, *, default_cache: str | None = None) -> int:
    parser = build_parser(default_cache)
    return _cli.main_with(
        parser, argv, benchmark="multi-class benchmark", rebuild=_rebuild, run=_run
    )


def _rebuild(folder: str) -> str:
    """The report of the files an earlier ``--out`` wrote to ``folder``."""
    from .report import markdown, read

    return markdown(*read(folder))


def _select(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple:
    setups = QUICK_SETUPS if args.quick else SETUPS
    if args.setups:
        known = {s.name: s for s in SETUPS}
        unknown = [n for n in args.setups if n not in known]
        if unknown:
            parser.error(f"unknown setup(s) {unknown}; known: {list(known)}")
        quick = {s.name: s for s in QUICK_SETUPS}
        setups = tuple((quick if args.quick and n in quick else known)[n] for n in args.setups)
    if args.sets:
        setups = tuple(s for s in setups if s.group in args.sets)
    return tuple(setups)


def _logger(enabled: bool):
    start = time.perf_counter()

    def log(text: str) -> None:
        if enabled:
            print(f"[{(time.perf_counter() - start) / 60:6.1f} min] {text}", file=sys.stderr)

    return log


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> int:
    """Run the benchmark ``args`` ask for; ``command`` is quoted in the report."""
    from threadpoolctl import threadpool_limits

    from fusion.datasets import DatasetNotFoundError

    from .contenders import resolve
    from .report import markdown, write
    from .runner import RunConfig, RunResult, run
    from .speed import measure

    setups = _select(parser, args)
    try:
        contenders = resolve(args.methods, args.candidate)
        max_n = _max_n(args.max_n)
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    config = RunConfig(
        setups=setups,
        seeds=tuple(args.seeds) if args.seeds else None,
        sizes=tuple(args.sizes) if args.sizes else None,
        max_n=max_n,
        cache_dir=None if args.no_cache else args.cache,
    )
    log = _logger(args.no_progress)
    notes = [_cli.provenance()]
    partial = _cli.partial_writer(args.out)

    def on_rows(rows: list[dict]) -> None:
        if partial is not None:
            partial(rows)
        r = rows[0]
        fits = {x["method"]: x for x in rows}
        nan = float("nan")
        d, ref = fits.get("default", {}), fits.get("ts_avg", {})
        log(
            f"{r['setup']} seed {r['seed']} n={r['n_fuse']}: default log-loss "
            f"{d.get('log_loss', nan):.4f} (TS avg {ref.get('log_loss', nan):.4f}), "
            f"fit {d.get('fit_seconds', nan):.1f} s"
        )

    speed = None
    with threadpool_limits(limits=args.threads):
        if args.speed_only:
            result = RunResult([], [], {}, {})
        else:
            try:
                result = run(config, contenders, progress=not args.no_progress, on_rows=on_rows)
            except DatasetNotFoundError as err:
                print(f"error: {err}", file=sys.stderr)
                return 2
        if not args.no_speed:
            t0 = time.perf_counter()
            repeats = args.speed_repeats or (1 if args.quick else 3)
            speed = measure(repeats, quick=args.quick, threads=args.threads, log=log)
            speed["seconds"] = time.perf_counter() - t0
            result.elapsed += speed["seconds"]
    result.notes[:0] = notes
    text = markdown(result, command, speed)
    print(text, end="")
    if args.out:
        _cli.announce(write(result, args.out, command, speed))
    return 0
