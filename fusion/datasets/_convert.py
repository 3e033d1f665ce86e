"""Converters: original UCI files -> the shared CSV format (header, fields stripped, ``\\n``).

Pure functions of bytes; fetching the originals is :mod:`fusion.datasets._download`'s job.
"""

from __future__ import annotations

from ._registry import ADULT_COLUMNS, CENSUS_COLUMNS, COVTYPE_COLUMNS, DOTA2_COLUMNS

__all__ = ["adult_from_uci", "census_from_uci", "covtype_from_uci", "dota2_from_uci"]


def _csv_text(columns: list[str], rows: list[str]) -> bytes:
    return ("\n".join([",".join(columns), *rows]) + "\n").encode()


def _split_stripped(line: str, n_fields: int, what: str, lineno: int) -> list[str]:
    fields = [f.strip() for f in line.split(",")]
    if len(fields) != n_fields:
        raise ValueError(
            f"{what} line {lineno} has {len(fields)} fields, expected {n_fields}: {line[:80]!r}"
        )
    return fields


def adult_from_uci(data: bytes, test: bytes) -> bytes:
    """Convert UCI ``adult.data`` and ``adult.test`` into the shared ``adult.csv.gz`` text.

    The originals separate fields by ``", "``; ``adult.test`` starts with a
    ``|1x3 Cross validator`` line and its labels end in a full stop. Both end with a blank
    line. Fields are stripped, the full stops removed, blank and ``|`` lines dropped.
    """
    rows = []
    for blob, name in ((data, "adult.data"), (test, "adult.test")):
        for lineno, line in enumerate(blob.decode("utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("|"):
                continue
            fields = _split_stripped(line, len(ADULT_COLUMNS), name, lineno)
            if name == "adult.test" and fields[-1].endswith("."):
                fields[-1] = fields[-1][:-1]
            rows.append(",".join(fields))
    return _csv_text(ADULT_COLUMNS, rows)


def census_from_uci(data: bytes, test: bytes) -> bytes:
    """Convert UCI ``census-income.data`` and ``census-income.test`` (uncompressed).

    Fields are ``", "`` separated in the originals and are stripped; labels keep their text
    (``- 50000.`` / ``50000+.``).
    """
    rows = []
    for blob, name in ((data, "census-income.data"), (test, "census-income.test")):
        for lineno, line in enumerate(blob.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            rows.append(",".join(_split_stripped(line, len(CENSUS_COLUMNS), name, lineno)))
    return _csv_text(CENSUS_COLUMNS, rows)


def covtype_from_uci(data: bytes) -> bytes:
    """Convert UCI ``covtype.data`` (uncompressed, no header) by adding the header."""
    rows = []
    for lineno, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if line.strip():
            rows.append(",".join(_split_stripped(line, len(COVTYPE_COLUMNS), "covtype", lineno)))
    return _csv_text(COVTYPE_COLUMNS, rows)


def dota2_from_uci(train: bytes, test: bytes) -> bytes:
    """Convert ``dota2Train.csv`` and ``dota2Test.csv`` (from ``dota2Dataset.zip``)."""
    rows = []
    for blob, name in ((train, "dota2Train.csv"), (test, "dota2Test.csv")):
        for lineno, line in enumerate(blob.decode("utf-8").splitlines(), 1):
            if line.strip():
                rows.append(",".join(_split_stripped(line, len(DOTA2_COLUMNS), name, lineno)))
    return _csv_text(DOTA2_COLUMNS, rows)
