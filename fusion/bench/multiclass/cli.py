"""Command line of the multi-class benchmark (``python benchmarks/bench_multiclass.py``)."""

from __future__ import annotations

import argparse
import sys

from .. import _cli
from .data import QUICK_SETUPS, SETUPS

__all__ = ["build_parser", "main"]

#: Fusion size and repeats of the speed comparison in a full run and in --quick.
SPEED = {"n": 5_000, "classes": 10, "repeats": 5}
QUICK_SPEED = {"n": 1_000, "classes": 10, "repeats": 1}


def build_parser(default_cache: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bench_multiclass.py",
        description=(
            "Multi-class fusion benchmark (issue 13): three scorers trained on disjoint rows "
            "of digits (10 classes) and Covertype (7 cover types); fusion.fit's default, the "
            "one-vs-rest 1-D reductions, and the peers users fit (multinomial LR on stacked "
            "log-probabilities, temperature scaling + average, best single scorer) compared "
            "with the best peer per cell by paired differences over seeds; and the fit time "
            "of the default against LR on 10 classes x 3 scorers x 5,000 rows."
        ),
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: digits, seed 0, n_fuse 500; speed at 1,000 rows, once",
    )
    p.add_argument(
        "--setups",
        nargs="+",
        metavar="NAME",
        help=f"only these setups (known: {', '.join(s.name for s in SETUPS)})",
    )
    _cli.add_run_options(
        p,
        default_cache=default_cache,
        seeds_help="seeds (default: setup's)",
        methods_help="fusion contenders to fit (default, rpr, enir, platt, isotonic; default: "
        "all); the peers lr_logp, lr_logp_raw, temp_avg, best_single and the raw scorers are "
        "always fitted",
        candidate_help="a prototype: the callable returns an unfitted estimator with fit(S, y) "
        "and predict_proba(S) for S of shape (n, M, C); module may be a .py path; repeatable",
        max_n_help="skip KEY's cells above N fusion rows; repeatable",
        out_help="write report.md, fits.csv, cells.csv, scores.csv, speed.json (and, while "
        "running, fits.partial.csv)",
    )
    p.add_argument("--speed-n", type=int, help=f"rows of the speed test (default {SPEED['n']})")
    p.add_argument("--speed-classes", type=int, default=SPEED["classes"], metavar="C")
    p.add_argument(
        "--speed-repeats",
        type=int,
        help=f"alternating fits per method (default {SPEED['repeats']})",
    )
    p.add_argument(
        "--speed-methods",
        nargs="+",
        default=["default"],
        metavar="KEY",
        help="contenders timed against LR (default: default; candidates by name)",
    )
    _cli.add_report_from(p)
    p.add_argument("--no-speed", action="store_true", help="skip the speed comparison")
    p.add_argument("--speed-only", action="store_true", help="only the speed comparison")
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


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> int:
    """Run the benchmark ``args`` ask for; ``command`` is quoted in the report."""
    from threadpoolctl import threadpool_limits

    from ...datasets import DatasetNotFoundError
    from .contenders import resolve
    from .report import markdown, write
    from .runner import RunConfig, RunResult, run
    from .speed import measure

    setups = QUICK_SETUPS if args.quick else SETUPS
    if args.setups:
        known = {s.name: s for s in SETUPS}
        unknown = [n for n in args.setups if n not in known]
        if unknown:
            parser.error(f"unknown setup(s) {unknown}; known: {sorted(known)}")
        quick = {s.name: s for s in QUICK_SETUPS}
        setups = tuple((quick if args.quick and n in quick else known)[n] for n in args.setups)
    try:
        contenders = resolve(args.methods, args.candidate)
        max_n = _max_n(args.max_n)
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    by_key = {c.key: c for c in contenders}
    unknown = [k for k in args.speed_methods if k not in by_key]
    if unknown and not args.no_speed:
        parser.error(
            f"--speed-methods {unknown} are not among this run's contenders {sorted(by_key)}."
        )
    speed = QUICK_SPEED if args.quick else SPEED
    config = RunConfig(
        setups=tuple(setups),
        seeds=tuple(args.seeds) if args.seeds else None,
        sizes=tuple(args.sizes) if args.sizes else None,
        max_n=max_n,
        cache_dir=None if args.no_cache else args.cache,
    )
    with threadpool_limits(limits=args.threads):
        if args.speed_only:
            result = RunResult([], [], {}, {}, config)
        else:
            try:
                result = run(
                    config,
                    contenders,
                    progress=not args.no_progress,
                    on_rows=_cli.partial_writer(args.out),
                )
            except DatasetNotFoundError as err:
                print(f"error: {err}", file=sys.stderr)
                return 2
        speed_rows = []
        if not args.no_speed:
            speed_rows = measure(
                [by_key[k] for k in args.speed_methods],
                n=args.speed_n or speed["n"],
                C=args.speed_classes,
                repeats=args.speed_repeats or speed["repeats"],
            )
    quick = args.quick and not args.speed_n
    print(markdown(result, command, speed_rows, quick), end="")
    if args.out:
        _cli.announce(write(result, args.out, command, speed_rows, quick))
    return 0
