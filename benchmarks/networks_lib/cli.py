"""Command line of the real-network benchmark (``python benchmarks/bench_networks.py``)."""

from __future__ import annotations

import argparse
import sys
import time

from harness import cli as _cli

from .contenders import CONTENDERS, PROBMETRICS, probmetrics_missing, resolve
from .data import CASES

__all__ = ["SEEDS", "build_parser", "main"]

#: The seeds of the random-split (CIFAR-10) cases in a full run.
SEEDS = (0, 1, 2, 3, 4)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bench_networks.py",
        description=(
            "Real-network calibration benchmark (issue 26): CIFAR-100 DenseNet-121 and "
            "ResNet-110 (M = 1, given val/test split) and a CIFAR-10 ensemble of LeNet-5 and "
            "WideResNet-16-4 with each member alone (stratified halves over seeds); "
            "fusion.fit's default against temperature scaling, TS per member, the log-linear "
            "pool, ensemble TS, vector scaling, SVS and SMS (probmetrics, optional); "
            "log-loss, Brier, accuracy, top-label ECE (equal width / equal mass), top-label "
            "smooth ECE, classwise ECE; the issue's targets as PASS / FAIL."
        ),
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: seed 0 only, no SMS",
    )
    p.add_argument(
        "--cases",
        nargs="+",
        metavar="NAME",
        help=f"only these cases (known: {', '.join(c.name for c in CASES)})",
    )
    p.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        metavar="S",
        help="seeds of the random splits (default: 0 1 2 3 4; --quick: 0)",
    )
    p.add_argument(
        "--resplit",
        action="store_true",
        help="CIFAR-100: pool the val and test rows and split them at random per seed "
        "(5,000 fusion / 10,000 test, stratified) instead of the published split",
    )
    p.add_argument(
        "--methods",
        nargs="+",
        metavar="KEY",
        help=f"contenders to fit ({', '.join(c.key for c in CONTENDERS)}; default: all, "
        "--quick: all but sms); default is always fitted",
    )
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help="the folder of the networks' files (default: $FUSION_DATA_DIR/networks)",
    )
    p.add_argument(
        "--out",
        help="write report.md, fits.csv, splits.csv, means.csv, paired.csv, targets.csv, "
        "run.json (and, while running, fits.partial.csv)",
    )
    _cli.add_report_from(p)
    _cli.add_process_options(p)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    return _cli.main_with(
        parser, argv, benchmark="real-network benchmark", rebuild=_rebuild, run=_run
    )


def _rebuild(folder: str) -> str:
    from .report import read

    return read(folder)


def _cases(parser: argparse.ArgumentParser, names: list[str] | None) -> tuple:
    if not names:
        return CASES
    known = {c.name: c for c in CASES}
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown case(s) {unknown}; known: {list(known)}")
    return tuple(known[n] for n in names)


def _logger(enabled: bool):
    start = time.perf_counter()

    def log(text: str) -> None:
        if enabled:
            print(f"[{(time.perf_counter() - start) / 60:6.1f} min] {text}", file=sys.stderr)

    return log


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> int:
    """Run the benchmark ``args`` ask for; ``command`` is quoted in the report."""
    from threadpoolctl import threadpool_limits

    from .data import NetworkDataNotFoundError, data_dir, resplit
    from .report import markdown, write
    from .runner import run

    cases = _cases(parser, args.cases)
    if args.resplit:
        cases = tuple(resplit(c) for c in cases)
    try:
        contenders = resolve(args.methods, quick=args.quick)
    except ValueError as err:
        parser.error(str(err))
    seeds = tuple(args.seeds) if args.seeds else ((0,) if args.quick else SEEDS)
    try:
        folder = data_dir(args.data_dir)
    except NetworkDataNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    notes = [_cli.provenance()]
    wanted = [c.key for c in contenders if c.key in PROBMETRICS]
    missing = probmetrics_missing() if wanted else None
    if missing:
        notes.append(f"{' and '.join(wanted)} skipped: {missing}.")
    elif wanted:
        from importlib.metadata import version

        import torch

        torch.set_num_threads(args.threads)
        notes.append(
            f"probmetrics {version('probmetrics')}, torch {torch.__version__} "
            f"({args.threads} thread(s))."
        )
    if args.quick and not args.methods:
        notes.append("--quick: SMS left out.")
    log = _logger(args.no_progress)
    partial = _cli.partial_writer(args.out)

    def on_rows(rows: list[dict]) -> None:
        if partial is not None:
            partial(rows)
        fits = {r["method"]: r for r in rows}
        d, ts = fits.get("default", {}), fits.get("ts", {})
        nan = float("nan")
        log(
            f"{rows[0]['case']} seed {rows[0]['seed']}: default log-loss "
            f"{d.get('log_loss', nan):.4f} top-ECE {d.get('top_label_ece', nan):.4f} "
            f"(TS {ts.get('log_loss', nan):.4f} / {ts.get('top_label_ece', nan):.4f}), "
            f"fit {d.get('fit_seconds', nan):.1f} s"
        )

    with threadpool_limits(limits=args.threads):
        result = run(
            cases, seeds, contenders, folder, progress=not args.no_progress, on_rows=on_rows
        )
    result.notes[:0] = notes
    text = markdown(result, command)
    print(text, end="")
    if args.out:
        _cli.announce(write(result, args.out, command))
    return 0
