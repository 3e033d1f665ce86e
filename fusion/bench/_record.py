"""What every benchmark records of a fit beside its metrics: its warnings and the
hyper-parameters it chose."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["record_warnings", "chosen"]


def record_warnings(row: dict, caught: Sequence) -> dict:
    """Set ``row["warnings"]`` to the number of warnings caught and ``row["warning"]`` to the
    first one (category and message, at most 200 characters); returns ``row``."""
    row["warnings"] = len(caught)
    if caught:
        first = caught[0]
        row["warning"] = f"{first.category.__name__}: {first.message}"[:200]
    return row


def chosen(model, names: Sequence[str]) -> str:
    """``"degree_=(3, 3); ..."``: the fitted attributes among ``names`` that ``model`` has and
    that are not methods, in the order of ``names`` (at most 200 characters)."""
    out = []
    for name in names:
        value = getattr(model, name, None)
        if value is not None and not callable(value):
            out.append(f"{name}={value}")
    return "; ".join(out)[:200]
