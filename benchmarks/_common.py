"""Helpers shared by the benchmark scripts (run them from the repository root as
``python benchmarks/<script>.py``; Python puts this folder on the path)."""

from __future__ import annotations

import time

import numpy as np


def median_time(fn, repeats: int) -> float:
    """Median wall-clock seconds of ``repeats`` calls of ``fn()``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
