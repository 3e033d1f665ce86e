"""Reading a data set: the :class:`Dataset` record, the file reader, labels, the loaders."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ._download import download
from ._errors import DatasetDownloadError, DatasetNotFoundError
from ._locate import find_local_copy, where_to_put
from ._registry import Spec, check_target, spec

if TYPE_CHECKING:  # pandas is an optional dependency (extras "bench" and "test")
    import pandas as pd


@dataclass(frozen=True)
class Dataset:
    """One benchmark data set.

    Attributes
    ----------
    name : str
        Registry name (``"adult"``, ...).
    X : pandas.DataFrame
        Features in UCI column order; categorical columns have the ``category`` dtype.
    y : ndarray of shape (n,)
        The label as ``int64``: 1 for the positive class and 0 otherwise with the binary
        target; the original class codes with ``target="multiclass"``.
    categorical : tuple of str
        Names of the categorical columns of ``X``.
    positive : str
        What label 1 means (binary target), or what the class codes mean (multiclass).
    path : pathlib.Path
        File the data were read from.
    sample_weight : ndarray or None
        Survey weights (Census's ``instance_weight``), not a feature; None elsewhere.
    target : str
        ``"binary"`` or ``"multiclass"``: which label ``y`` holds.
    """

    name: str
    X: pd.DataFrame
    y: np.ndarray
    categorical: tuple[str, ...]
    positive: str
    path: Path
    sample_weight: np.ndarray | None = None
    target: str = "binary"


def _require_pandas():
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is in the test and bench extras
        raise ImportError(
            "fusion.datasets needs pandas: pip install 'fusion-calibration[bench]'."
        ) from None
    return pd


def read_frame(name: str, path: str | os.PathLike) -> pd.DataFrame:
    """Read one data set's file (shared format, or SUSY's UCI original) into a DataFrame.

    The columns are checked against the expected names; categorical columns are read as
    strings and the label column as text.
    """
    pd = _require_pandas()
    s = spec(name)
    path = Path(path)
    original = path.name in s.original_names
    dtype = {c: str for c in s.categorical}
    dtype[s.label] = str
    try:
        frame = pd.read_csv(
            path,
            header=None if original else 0,
            names=list(s.columns) if original else None,
            dtype=dtype,
            na_filter=False,  # keep UCI's "?" and every text as it is
            float_precision="round_trip",  # the exact float64 of each printed value
            engine="c",
        )
    except (OSError, EOFError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read {path} as the {name} data: {err}") from err
    if tuple(frame.columns) != s.columns:
        got = list(frame.columns)
        raise ValueError(
            f"{path} does not have the {name} columns: expected {len(s.columns)} columns "
            f"starting {list(s.columns[:3])}, got {len(got)} starting {got[:3]}."
        )
    return frame


def _bad_label(s: Spec, text, bad, path: Path, expected: str) -> ValueError:
    first = int(np.flatnonzero(np.asarray(bad))[0])
    return ValueError(
        f"{path}: label column {s.label!r} holds {text.iloc[first]!r} at data row "
        f"{first + 1}; expected {expected}."
    )


def _label(s: Spec, column, path: Path, target: str = "binary") -> np.ndarray:
    text = column.astype(str).str.strip()
    if s.name == "covertype":
        values = text.astype(int)
        valid = values.between(1, 7)
        if target == "multiclass":
            if not valid.all():
                raise _bad_label(s, text, ~valid, path, "a cover type code 1..7")
            return values.to_numpy().astype(np.int64)
        pos, neg = values == 2, valid & (values != 2)
    elif s.name == "susy":  # floats such as "1.0" or "1.000000000000000000e+00"
        values = text.astype(float)
        pos, neg = values == 1.0, values == 0.0
    else:
        pos, neg = text == s.positive, text == s.negative
    bad = ~(pos | neg)
    if bad.any():
        raise _bad_label(s, text, bad, path, f"{s.positive!r} or {s.negative!r}")
    return pos.to_numpy().astype(np.int64)


def load(
    name: str,
    *,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    return_X_y: bool = False,
    target: str = "binary",
):
    """Load one of :data:`DATASETS` by name; see the ``load_<name>`` functions.

    Parameters
    ----------
    name : str
        ``"adult"``, ``"census"``, ``"covertype"``, ``"dota2"`` or ``"susy"``.
    data_home : path, optional
        Directory searched first, and where a download is stored.
    download_if_missing : bool, default=True
        Download from the UCI archive when no local copy exists.
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a :class:`Dataset`.
    target : {"binary", "multiclass"}, default="binary"
        ``"binary"``: the paper's 0/1 label (table in :mod:`fusion.datasets`).
        ``"multiclass"``: the original classes, for the data sets that have more than two
        (Covertype: ``Cover_Type`` 1..7); any other data set raises a ``ValueError``.

    Raises
    ------
    DatasetNotFoundError
        No local copy, and downloading was disabled or failed; the message says what to
        download and where to put it.
    ValueError
        The file exists but is not the expected data; an unknown name or ``target``; or
        ``target="multiclass"`` for a data set with only a binary label.
    """
    _require_pandas()  # fail early, before any download
    s = spec(name)
    check_target(s, target)
    path = find_local_copy(name, data_home)
    if path is None:
        if not download_if_missing:
            raise DatasetNotFoundError(
                f"no local copy of the {name} data and download_if_missing=False. "
                + where_to_put(s, data_home)
            )
        try:
            path = download(name, data_home)
        except DatasetDownloadError as err:
            raise DatasetNotFoundError(
                f"no local copy of the {name} data, and downloading failed ({err}). "
                + where_to_put(s, data_home)
            ) from err
    frame = read_frame(name, path)
    y = _label(s, frame[s.label], path, target)
    weight = None
    if "instance_weight" in s.drop:
        weight = frame["instance_weight"].to_numpy(dtype=float)
    X = frame.drop(columns=[s.label, *s.drop])
    for col in s.categorical:
        X[col] = X[col].astype("category")
    if return_X_y:
        return X, y
    return Dataset(
        name=name,
        X=X,
        y=y,
        categorical=s.categorical,
        positive=s.multiclass_doc if target == "multiclass" else s.positive_doc,
        path=path,
        sample_weight=weight,
        target=target,
    )


_SEE_LOAD = """

See :func:`load` for the parameters, the search order and the errors.

Returns
-------
Dataset or (X, y)
"""


def _binary_loader(name: str, summary: str):
    """``load_<name>``: :func:`load` for one data set that has only the binary target."""

    def loader(*, data_home=None, download_if_missing: bool = True, return_X_y: bool = False):
        return load(
            name,
            data_home=data_home,
            download_if_missing=download_if_missing,
            return_X_y=return_X_y,
        )

    loader.__name__ = loader.__qualname__ = f"load_{name}"
    loader.__doc__ = summary + _SEE_LOAD
    return loader


load_adult = _binary_loader("adult", "Adult (48,842 rows): label 1 is income > 50K.")
load_census = _binary_loader(
    "census",
    "Census-Income KDD (299,285 rows): label 1 is income > 50K; ``instance_weight`` is\n"
    "dropped from ``X`` (it is a survey weight) and returned as ``sample_weight``.",
)
load_dota2 = _binary_loader(
    "dota2", "Dota2 Games Results (102,944 rows): label 1 is ``team_won == 1`` (the first column)."
)
load_susy = _binary_loader(
    "susy",
    "SUSY: label 1 is signal (the first column). Reads the full UCI ``SUSY.csv(.gz)`` when\n"
    "present, else the shared ``susy.csv.gz`` (a 10,000-row sample).",
)


def load_covertype(
    *,
    data_home=None,
    download_if_missing: bool = True,
    return_X_y: bool = False,
    target: str = "binary",
):
    """Covertype (581,012 rows): label 1 is Lodgepole Pine (``Cover_Type == 2``), all other
    cover types are label 0; with ``target="multiclass"`` the label is ``Cover_Type`` itself,
    the seven cover types coded 1..7.

    See :func:`load` for the parameters, the search order and the errors.

    Returns
    -------
    Dataset or (X, y)
    """
    return load(
        "covertype",
        data_home=data_home,
        download_if_missing=download_if_missing,
        return_X_y=return_X_y,
        target=target,
    )
