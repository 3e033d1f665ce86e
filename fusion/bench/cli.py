"""``python -m fusion.bench``: the paper's benchmark from the command line.

Example (the full Table 1 reproduction)::

    python -m fusion.bench --datasets adult census covertype dota2 susy --rounds 10 \\
        --out bench-out --seed 0

Data files are found through ``FUSION_DATA_DIR`` (or the cache ``~/.cache/fusion``), see
:mod:`fusion.datasets`.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from ..datasets import DATASETS, DatasetNotFoundError
from .methods import DEFAULT_METHODS

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m fusion.bench",
        description=(
            "Wang & Liu (2020), Sec. 5.2: per data set and round, two MLP scorers and every "
            "fusion method are trained on three disjoint samples of 500 rows and evaluated "
            "on all other rows. Writes table.md (shaped like the paper's Table 1) and "
            "rounds.csv into --out and prints the table."
        ),
    )
    parser.add_argument(
        "--datasets",
        nargs="+",
        choices=DATASETS,
        default=list(DATASETS),
        metavar="NAME",
        help=f"data sets to run (default: all of {', '.join(DATASETS)})",
    )
    parser.add_argument(
        "--rounds",
        type=_positive_int,
        default=None,
        help="repetitions per data set (default: 10, or 1 with --quick)",
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        default=list(DEFAULT_METHODS),
        metavar="NAME",
        help=f"methods to run (default: {' '.join(DEFAULT_METHODS)}); a method that is not "
        "available is skipped with a note under the table",
    )
    parser.add_argument("--out", default="bench-out", help="output directory (default: bench-out)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 round, at most 40,000 test rows, small CV grids",
    )
    parser.add_argument(
        "--min-count",
        type=_positive_int,
        default=1000,
        help="test samples a grid cell needs (default: 1000; scaled down for test sets "
        "smaller than 40,000 rows, marked in the table)",
    )
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def main(argv=None) -> int:
    """Run the benchmark; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    missing = [m for m in ("tqdm", "pandas") if importlib.util.find_spec(m) is None]
    if missing:
        print(
            f"python -m fusion.bench needs {' and '.join(missing)}: "
            "pip install 'fusion-calibration[bench]'",
            file=sys.stderr,
        )
        return 2
    from . import report
    from .methods import resolve_methods
    from .protocol import BenchConfig, run

    try:
        runnable, skipped = resolve_methods(args.methods)
    except ValueError as err:
        parser.error(str(err))
    for note in skipped:
        print(f"note: {note}", file=sys.stderr)
    config = BenchConfig(
        datasets=tuple(args.datasets),
        methods=tuple(args.methods),
        rounds=args.rounds,
        seed=args.seed,
        quick=args.quick,
        min_count=args.min_count,
    )
    try:
        result = run(config)
    except DatasetNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    md, csv = report.write(result, args.out)
    print(report.markdown(result), end="")
    print(f"wrote {md} and {csv}", file=sys.stderr)
    return 0
