"""Command-line pieces the benchmarks share: the options that mean the same in each, the
check for the optional packages, partial results, rebuilding a report, the command line a
report quotes and the provenance of the code measured."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

__all__ = [
    "main_with",
    "add_run_options",
    "add_report_from",
    "add_process_options",
    "partial_writer",
    "announce",
    "provenance",
]


def main_with(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    *,
    benchmark: str,
    rebuild: Callable[[str], str],
    run: Callable[[argparse.ArgumentParser, argparse.Namespace, str], int],
) -> int:
    """What both command lines do before their own work, then ``run``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        With the options of :func:`add_report_from`; its ``prog`` is the file in
        ``benchmarks/`` that runs the benchmark, for the command a report quotes.
    argv : sequence of str or None
        The arguments (None: ``sys.argv[1:]``).
    benchmark : str
        Its name in the message when pandas or tqdm is missing.
    rebuild : callable
        ``rebuild(folder) -> report`` from the files of an earlier ``--out`` folder.
    run : callable
        ``run(parser, args, command) -> exit status``: the benchmark itself.

    Returns
    -------
    int
        The exit status: 2 when pandas or tqdm is missing, 0 after ``--report-from``
        (the rebuilt report is written to the folder and printed), else ``run``'s.
    """
    args = parser.parse_args(argv)
    try:
        import pandas  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError:
        print(
            f"the {benchmark} needs pandas and tqdm: pip install 'fusion-calibration[bench]'",
            file=sys.stderr,
        )
        return 2
    if args.report_from:
        text = rebuild(args.report_from)
        (Path(args.report_from) / "report.md").write_text(text, encoding="utf-8")
        print(text, end="")
        return 0
    command = f"python benchmarks/{parser.prog} " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    return run(parser, args, command)


def add_run_options(
    p: argparse.ArgumentParser,
    *,
    default_cache: str | None,
    seeds_help: str,
    methods_help: str,
    candidate_help: str,
    max_n_help: str,
    out_help: str,
) -> None:
    """Add ``--seeds``, ``--sizes``, ``--methods``, ``--candidate``, ``--max-n``,
    ``--cache``, ``--no-cache`` and ``--out`` (in this order, for ``--help``).

    Parameters
    ----------
    p : argparse.ArgumentParser
    default_cache : str or None
        Default of ``--cache``, named in its help.
    seeds_help, methods_help, candidate_help, max_n_help, out_help : str
        The help of the options whose meaning differs between the benchmarks.
    """
    p.add_argument("--seeds", nargs="+", type=int, metavar="S", help=seeds_help)
    p.add_argument("--sizes", nargs="+", type=int, metavar="N", help="only these n_fuse")
    p.add_argument("--methods", nargs="+", metavar="KEY", help=methods_help)
    p.add_argument(
        "--candidate",
        action="append",
        default=[],
        metavar="NAME=module:callable",
        help=candidate_help,
    )
    p.add_argument("--max-n", action="append", default=[], metavar="KEY=N", help=max_n_help)
    p.add_argument(
        "--cache",
        default=default_cache,
        help="directory of cached scorer outputs"
        + (f" (default: {default_cache})" if default_cache else ""),
    )
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--out", help=out_help)


def add_report_from(p: argparse.ArgumentParser) -> None:
    """Add ``--report-from DIR`` (handled by :func:`main_with`)."""
    p.add_argument(
        "--report-from",
        metavar="DIR",
        help="fit nothing: rebuild DIR/report.md from the files an earlier --out wrote there",
    )


def add_process_options(p: argparse.ArgumentParser) -> None:
    """Add ``--threads`` and ``--no-progress``."""
    p.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (default: 1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def partial_writer(out: str | None) -> Callable[[list[dict]], None] | None:
    """``on_rows`` appending each (cell, seed)'s rows to ``out/fits.partial.csv`` (a long run
    keeps what it has done if interrupted), or None without ``--out``."""
    if not out:
        return None
    import pandas as pd

    path = Path(out) / "fits.partial.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)

    def on_rows(rows: list[dict]) -> None:
        pd.DataFrame(rows).to_csv(path, mode="a", header=not path.exists(), index=False)

    return on_rows


def announce(paths: Iterable[Path]) -> None:
    """Say on stderr which files were written."""
    for path in paths:
        print(f"wrote {path}", file=sys.stderr)


def provenance() -> str:
    """The commit of the checkout and whether fusion/ has uncommitted changes (read-only
    git commands), and the load average."""
    import fusion

    root = Path(__file__).resolve().parents[2]
    imported = Path(fusion.__file__).resolve().parent
    if imported.parent != root:
        return f"fusion imported from {imported}, not from this checkout"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--", "fusion"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout
    except OSError:
        return "git not available"
    changed = sorted({line[3:] for line in status.splitlines() if len(line) > 3})
    text = f"fusion at commit {head or '?'}"
    if changed:
        shown = ", ".join(changed[:4])
        if len(changed) > 4:
            shown += f" and {len(changed) - 4} more"
        text += f" with uncommitted changes in {len(changed)} file(s) under fusion/ ({shown})"
    if hasattr(os, "getloadavg"):
        text += "; load average at the start " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return text
