"""Markdown table pieces both benchmarks' reports share: the table itself and how numbers,
paired differences, seconds and summary counts are written in its cells."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["table", "num", "milli", "seconds", "compared_cells", "worse_better"]


def table(header: list[str], rows: list[list[str]], align: str | None = None) -> list[str]:
    """The lines of a Markdown table; ``align`` has one ``"l"`` or ``"r"`` per column
    (default: the first left, the others right)."""
    align = align or "l" + "r" * (len(header) - 1)
    marks = ["---" if a == "l" else "---:" for a in align]
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"] + [
        "| " + " | ".join(r) + " |" for r in rows
    ]


def num(x: float, digits: int = 4) -> str:
    """``x`` with ``digits`` decimals; ``—`` for a missing value."""
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def milli(x: float, flag: str = "") -> str:
    """A paired difference in units of 1e-3, marked by its flag: bold ``W`` when clearly
    worse, ``B`` when clearly better; ``—`` for a missing value."""
    if x is None or math.isnan(x):
        return "—"
    text = f"{1000 * x:+.2f}"
    if flag == "worse":
        return f"**{text} W**"
    if flag == "better":
        return f"{text} B"
    return text


def seconds(x: float) -> str:
    """Seconds: three decimals below 1, one below 100, none above; ``—`` for a missing value."""
    if x is None or math.isnan(x):
        return "—"
    return f"{x:.3f}" if x < 1 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def compared_cells(r: Any) -> str:
    """A summary row's cell count, with the skipped and failed cells when there are any."""
    text = f"{r['cells']}"
    if r["skipped"] or r["failed"]:
        text += f" ({r['skipped']} skipped, {r['failed']} failed)"
    return text


def worse_better(r: Any, metrics: Sequence[str]) -> list[str]:
    """Per metric, a summary row's ``worse / better`` cell counts."""
    return [f"{r[f'{m}_worse']} / {r[f'{m}_better']}" for m in metrics]
