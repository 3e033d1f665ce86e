"""One row of a benchmark: a named way of fitting the scores (``Contender``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Contender:
    """One row of the benchmark.

    Attributes
    ----------
    key : str
        Name on the command line and in the CSV.
    label : str
        Row label of the tables.
    make : callable
        ``make() -> estimator`` (unfitted; ``fit(S, y)``, ``predict_proba(S)``).
    family : str
        ``"fusion"``, ``"peer"``, ``"candidate"`` (and, in the multi-class benchmark,
        ``"member"`` or ``"truth"``).
    skip : callable, optional
        ``skip(*cell) -> reason or None``: the cells it is not fitted on (the multi-class
        benchmark passes ``n, M, C``).
    """

    key: str
    label: str
    make: Callable[[], object]
    family: str
    skip: Callable[..., str | None] | None = None

    def skip_reason(self, *cell) -> str | None:
        return None if self.skip is None else self.skip(*cell)
