"""Loaders for the five UCI data sets of the paper's benchmark (Wang & Liu 2020, Sec. 5.2).

Each loader returns the features as a :class:`pandas.DataFrame` (categorical columns with the
``category`` dtype and listed in :attr:`Dataset.categorical`) and the binary label as 0/1
integers, positive as the paper defines it:

========== ============================== ==========================================
name       file                           positive class (label 1)
========== ============================== ==========================================
adult      ``adult.csv.gz``               ``income == ">50K"``
census     ``census_income_kdd.csv.gz``   ``income == "50000+."`` (income > 50K)
covertype  ``covtype.csv.gz``             ``Cover_Type == 2`` (Lodgepole Pine)
dota2      ``dota2.csv.gz``               ``team_won == 1`` (first column)
susy       ``susy.csv.gz``                ``label == 1`` (signal; first column)
========== ============================== ==========================================

The files are gzip CSVs with a header line, the UCI columns in UCI order, train rows before
test rows (the format of the project's shared copies). A local copy is looked for, in order,
in the ``data_home`` argument, the directory named by the environment variable
``FUSION_DATA_DIR`` and the cache directory ``~/.cache/fusion`` (``$XDG_CACHE_HOME/fusion``
when that is set). When none has the file, :func:`download` fetches the original files from
the UCI archive, converts them to this format, checks the SHA-256 of the result against the
known copy and stores it in ``data_home`` or the cache directory.

SUSY is also read from the original UCI ``SUSY.csv.gz`` / ``SUSY.csv`` (5,000,000 rows, no
header, label first), which takes precedence over ``susy.csv.gz`` in the same directory;
``download("susy")`` fetches that full file (about 880 MB).

Census's ``instance_weight`` column is the survey's sampling weight, not a feature: it is
dropped from ``X`` and kept in :attr:`Dataset.sample_weight`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is an optional dependency (extras "bench" and "test")
    import pandas as pd

__all__ = [
    "DATASETS",
    "Dataset",
    "DatasetNotFoundError",
    "DatasetDownloadError",
    "load",
    "load_adult",
    "load_census",
    "load_covertype",
    "load_dota2",
    "load_susy",
    "download",
    "get_data_home",
    "find_local_copy",
    "read_frame",
    "adult_from_uci",
    "census_from_uci",
    "covtype_from_uci",
    "dota2_from_uci",
]

_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_DOWNLOAD_TIMEOUT = 60.0


class DatasetNotFoundError(FileNotFoundError):
    """No local copy of a data set, and downloading was not allowed or not possible."""


class DatasetDownloadError(OSError):
    """A file could not be fetched from the UCI archive (offline, moved, or bad checksum)."""


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
        Binary label, 1 for the positive class, as ``int64``.
    categorical : tuple of str
        Names of the categorical columns of ``X``.
    positive : str
        What label 1 means.
    path : pathlib.Path
        File the data were read from.
    sample_weight : ndarray or None
        Survey weights (Census's ``instance_weight``), not a feature; None elsewhere.
    """

    name: str
    X: pd.DataFrame
    y: np.ndarray
    categorical: tuple[str, ...]
    positive: str
    path: Path
    sample_weight: np.ndarray | None = None


# ---------------------------------------------------------------------------------------------
# Column names of the shared-format files (the README of the shared copies explains them).

_ADULT_COLUMNS = (
    "age,workclass,fnlwgt,education,education_num,marital_status,occupation,relationship,race,"
    "sex,capital_gain,capital_loss,hours_per_week,native_country,income"
).split(",")

_CENSUS_COLUMNS = (
    "age,class_of_worker,detailed_industry_recode,detailed_occupation_recode,education,"
    "wage_per_hour,enroll_in_edu_inst_last_wk,marital_stat,major_industry_code,"
    "major_occupation_code,race,hispanic_origin,sex,member_of_a_labor_union,"
    "reason_for_unemployment,full_or_part_time_employment_stat,capital_gains,capital_losses,"
    "dividends_from_stocks,tax_filer_stat,region_of_previous_residence,"
    "state_of_previous_residence,detailed_household_and_family_stat,"
    "detailed_household_summary_in_household,instance_weight,migration_code_change_in_msa,"
    "migration_code_change_in_reg,migration_code_move_within_reg,live_in_this_house_1_year_ago,"
    "migration_prev_res_in_sunbelt,num_persons_worked_for_employer,family_members_under_18,"
    "country_of_birth_father,country_of_birth_mother,country_of_birth_self,citizenship,"
    "own_business_or_self_employed,fill_inc_questionnaire_for_veterans_admin,veterans_benefits,"
    "weeks_worked_in_year,year,income"
).split(",")

# The census-income.names file marks these as continuous; every other attribute is nominal,
# including the integer-coded recodes, own_business_or_self_employed, veterans_benefits, year.
_CENSUS_CONTINUOUS = (
    "age",
    "wage_per_hour",
    "capital_gains",
    "capital_losses",
    "dividends_from_stocks",
    "instance_weight",
    "num_persons_worked_for_employer",
    "weeks_worked_in_year",
)

_COVTYPE_COLUMNS = (
    [
        "Elevation",
        "Aspect",
        "Slope",
        "Horizontal_Distance_To_Hydrology",
        "Vertical_Distance_To_Hydrology",
        "Horizontal_Distance_To_Roadways",
        "Hillshade_9am",
        "Hillshade_Noon",
        "Hillshade_3pm",
        "Horizontal_Distance_To_Fire_Points",
    ]
    + [f"Wilderness_Area{i}" for i in range(1, 5)]
    + [f"Soil_Type{i}" for i in range(1, 41)]
    + ["Cover_Type"]
)

_DOTA2_COLUMNS = ["team_won", "cluster_id", "game_mode", "game_type"] + [
    f"hero_{i}" for i in range(1, 114)
]

_SUSY_COLUMNS = (
    "label,lepton_1_pT,lepton_1_eta,lepton_1_phi,lepton_2_pT,lepton_2_eta,lepton_2_phi,"
    "missing_energy_magnitude,missing_energy_phi,MET_rel,axial_MET,M_R,M_TR_2,R,MT2,S_R,"
    "M_Delta_R,dPhi_r_b,cos_theta_r1"
).split(",")


# ---------------------------------------------------------------------------------------------
# Converters: original UCI files -> the shared CSV format (header, fields stripped, "\n").


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
            fields = _split_stripped(line, len(_ADULT_COLUMNS), name, lineno)
            if name == "adult.test" and fields[-1].endswith("."):
                fields[-1] = fields[-1][:-1]
            rows.append(",".join(fields))
    return _csv_text(_ADULT_COLUMNS, rows)


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
            rows.append(",".join(_split_stripped(line, len(_CENSUS_COLUMNS), name, lineno)))
    return _csv_text(_CENSUS_COLUMNS, rows)


def covtype_from_uci(data: bytes) -> bytes:
    """Convert UCI ``covtype.data`` (uncompressed, no header) by adding the header."""
    rows = []
    for lineno, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if line.strip():
            rows.append(",".join(_split_stripped(line, len(_COVTYPE_COLUMNS), "covtype", lineno)))
    return _csv_text(_COVTYPE_COLUMNS, rows)


def dota2_from_uci(train: bytes, test: bytes) -> bytes:
    """Convert ``dota2Train.csv`` and ``dota2Test.csv`` (from ``dota2Dataset.zip``)."""
    rows = []
    for blob, name in ((train, "dota2Train.csv"), (test, "dota2Test.csv")):
        for lineno, line in enumerate(blob.decode("utf-8").splitlines(), 1):
            if line.strip():
                rows.append(",".join(_split_stripped(line, len(_DOTA2_COLUMNS), name, lineno)))
    return _csv_text(_DOTA2_COLUMNS, rows)


# ---------------------------------------------------------------------------------------------
# Fetching originals.


def _urlopen(url: str, timeout: float):
    """The one network call of this module (tests replace it)."""
    return urllib.request.urlopen(url, timeout=timeout)  # noqa: S310 - fixed https URLs


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _get(url: str, sha256: str | None = None) -> bytes:
    try:
        with _urlopen(url, _DOWNLOAD_TIMEOUT) as response:
            data = response.read()
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise DatasetDownloadError(f"could not download {url}: {err}") from err
    if sha256 is not None and _sha256(data) != sha256:
        raise DatasetDownloadError(
            f"{url} has SHA-256 {_sha256(data)}, expected {sha256}; the file on the server "
            "differs from the UCI original this loader was written for."
        )
    return data


def _fetch_adult() -> bytes:
    data = _get(
        f"{_UCI}/adult/adult.data",
        "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    )
    test = _get(
        f"{_UCI}/adult/adult.test",
        "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    )
    return adult_from_uci(data, test)


def _fetch_census() -> bytes:
    base = f"{_UCI}/census-income-mld"
    try:
        data = gzip.decompress(_get(f"{base}/census-income.data.gz"))
        test = gzip.decompress(_get(f"{base}/census-income.test.gz"))
    except DatasetDownloadError as first:
        # The UCI KDD archive ships the pair only inside census.tar.gz.
        try:
            members = _untar(_get(f"{base}/census.tar.gz"))
        except DatasetDownloadError:
            raise first from None
        data, test = members["census-income.data"], members["census-income.test"]
    return census_from_uci(data, test)


def _untar(blob: bytes) -> dict[str, bytes]:
    out = {}
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:*") as tar:
        for member in tar.getmembers():
            if member.isfile():
                name = Path(member.name).name
                if name.endswith(".gz"):
                    out[name[:-3]] = gzip.decompress(tar.extractfile(member).read())
                else:
                    out[name] = tar.extractfile(member).read()
    missing = {"census-income.data", "census-income.test"} - set(out)
    if missing:
        raise DatasetDownloadError(f"census.tar.gz lacks {sorted(missing)}.")
    return out


def _fetch_covtype() -> bytes:
    return covtype_from_uci(gzip.decompress(_get(f"{_UCI}/covtype/covtype.data.gz")))


def _fetch_dota2() -> bytes:
    blob = _get(f"{_UCI}/00367/dota2Dataset.zip")
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        by_name = {Path(n).name: n for n in zf.namelist()}
        try:
            train = zf.read(by_name["dota2Train.csv"])
            test = zf.read(by_name["dota2Test.csv"])
        except KeyError as err:
            raise DatasetDownloadError(f"dota2Dataset.zip lacks {err}.") from None
    return dota2_from_uci(train, test)


# ---------------------------------------------------------------------------------------------
# The registry.


@dataclass(frozen=True)
class _Spec:
    name: str
    filename: str
    columns: tuple[str, ...]
    label: str
    positive: str  # label text of the positive class, as pandas reads it
    negative: str
    positive_doc: str
    categorical: tuple[str, ...]
    drop: tuple[str, ...]
    n_rows: int  # rows of the shared copy (documentation and messages only)
    file_sha256: str  # of the shared .csv.gz (depends on the gzip implementation)
    content_sha256: str | None  # of the uncompressed CSV text: what download() verifies
    urls: tuple[str, ...]
    fetch: Callable[[], bytes] | None  # originals -> shared-format CSV text
    original_names: tuple[str, ...] = ()  # files in UCI format (no header) also accepted


_SPECS: dict[str, _Spec] = {
    "adult": _Spec(
        name="adult",
        filename="adult.csv.gz",
        columns=tuple(_ADULT_COLUMNS),
        label="income",
        positive=">50K",
        negative="<=50K",
        positive_doc="income > 50K",
        categorical=(
            "workclass",
            "education",
            "marital_status",
            "occupation",
            "relationship",
            "race",
            "sex",
            "native_country",
        ),
        drop=(),
        n_rows=48_842,
        file_sha256="52b9736a0ec775da41438aa0cf947a6abf2ad4bf27cfe740e0fdd32126347ca5",
        content_sha256="6f519c67ccd70e0c9d4f616b15d338aa6e44b336a20962f5010fb01bee0d12d4",
        urls=(f"{_UCI}/adult/adult.data", f"{_UCI}/adult/adult.test"),
        fetch=_fetch_adult,
    ),
    "census": _Spec(
        name="census",
        filename="census_income_kdd.csv.gz",
        columns=tuple(_CENSUS_COLUMNS),
        label="income",
        positive="50000+.",
        negative="- 50000.",
        positive_doc="income > 50K (label text '50000+.')",
        categorical=tuple(
            c for c in _CENSUS_COLUMNS if c not in _CENSUS_CONTINUOUS and c != "income"
        ),
        drop=("instance_weight",),
        n_rows=299_285,
        file_sha256="caf011bf39d4caf2ba1b1db940fe186ca8d5a4de9b211c682eaa09772f510173",
        content_sha256="1ae9a2eb9b616d82c1d41fee92ebe46be9ff90040794ea1a5bf049a14245d66d",
        urls=(
            f"{_UCI}/census-income-mld/census-income.data.gz",
            f"{_UCI}/census-income-mld/census-income.test.gz",
        ),
        fetch=_fetch_census,
    ),
    "covertype": _Spec(
        name="covertype",
        filename="covtype.csv.gz",
        columns=tuple(_COVTYPE_COLUMNS),
        label="Cover_Type",
        positive="2",
        negative="1,3,4,5,6,7",
        positive_doc="Cover_Type == 2 (Lodgepole Pine); all other cover types are negative",
        categorical=(),
        drop=(),
        n_rows=581_012,
        file_sha256="3eb5d2425ee7ae8671442fe74865511dc8505e5576f84ea24ecedcd1c293f529",
        content_sha256="ea35ca6820fcbe0bdc6707e9ed31e11a9de84f07d88da73b511c737383c271a6",
        urls=(f"{_UCI}/covtype/covtype.data.gz",),
        fetch=_fetch_covtype,
    ),
    "dota2": _Spec(
        name="dota2",
        filename="dota2.csv.gz",
        columns=tuple(_DOTA2_COLUMNS),
        label="team_won",
        positive="1",
        negative="-1",
        positive_doc="team_won == 1 (first column)",
        categorical=("cluster_id", "game_mode", "game_type"),
        drop=(),
        n_rows=102_944,
        file_sha256="6f58cc7a6bfd784ce58b8502f8fece6c2673303cd866764adbda95a34d9928d8",
        content_sha256="cceedeee31fe468bcfae63d63ebbb54cb954441651a171f36171dbda63de9b7a",
        urls=(f"{_UCI}/00367/dota2Dataset.zip",),
        fetch=_fetch_dota2,
    ),
    "susy": _Spec(
        name="susy",
        filename="susy.csv.gz",
        columns=tuple(_SUSY_COLUMNS),
        label="label",
        positive="1",
        negative="0",
        positive_doc="label == 1 (signal; first column)",
        categorical=(),
        drop=(),
        n_rows=10_000,
        file_sha256="c160949cddfc4a6009daa6ff694ff801e68467dae3d19a3d9fa5dd7c75b14eb1",
        # The shared copy is a 10,000-row sample; a download is the full UCI file, kept as is.
        content_sha256=None,
        urls=(f"{_UCI}/00279/SUSY.csv.gz",),
        fetch=None,
        original_names=("SUSY.csv.gz", "SUSY.csv"),
    ),
}

#: Names accepted by :func:`load`, in the order of the paper's Table 1.
DATASETS: tuple[str, ...] = tuple(_SPECS)


def _spec(name: str) -> _Spec:
    try:
        return _SPECS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown data set {name!r}; known: {list(DATASETS)}.") from None


# ---------------------------------------------------------------------------------------------
# Locating and downloading.


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Directory where :func:`download` stores files.

    ``data_home`` when given, else ``$XDG_CACHE_HOME/fusion`` or ``~/.cache/fusion``.
    """
    if data_home is not None:
        return Path(data_home).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME")
    return (Path(cache) if cache else Path.home() / ".cache").expanduser() / "fusion"


def _search_dirs(data_home) -> list[Path]:
    dirs = []
    if data_home is not None:
        dirs.append(Path(data_home).expanduser())
    env = os.environ.get("FUSION_DATA_DIR")
    if env:
        dirs.append(Path(env).expanduser())
    dirs.append(get_data_home(None))
    return dirs


def find_local_copy(name: str, data_home=None) -> Path | None:
    """The file :func:`load` would read for ``name``, or None when there is no local copy.

    Looks in ``data_home``, then ``$FUSION_DATA_DIR``, then the cache directory; within a
    directory a UCI-format original (SUSY only) comes before the shared-format file.
    """
    spec = _spec(name)
    for directory in _search_dirs(data_home):
        for fname in (*spec.original_names, spec.filename):
            path = directory / fname
            if path.is_file():
                return path
    return None


def _where_to_put(spec: _Spec, data_home) -> str:
    dirs = ", ".join(str(d) for d in _search_dirs(data_home))
    wanted = " or ".join((*spec.original_names, spec.filename))
    return (
        f"Put {wanted} into one of: {dirs} (or point FUSION_DATA_DIR or data_home at the "
        f"directory holding it). The original files are at {', '.join(spec.urls)}; "
        f"fusion.datasets.download({spec.name!r}) fetches and converts them on a connected "
        "machine."
    )


def download(name: str, data_home=None) -> Path:
    """Fetch a data set from the UCI archive into ``data_home`` (or the cache directory).

    The original files are downloaded, converted to the shared CSV format and checked
    against the SHA-256 of the known-good copy before they are written as
    ``<data_home>/<file>.csv.gz``. SUSY is stored as the original ``SUSY.csv.gz``.

    Returns
    -------
    pathlib.Path
        The written file.

    Raises
    ------
    DatasetDownloadError
        When a file cannot be fetched (no network, moved URL) or a checksum differs.
    """
    spec = _spec(name)
    target = get_data_home(data_home)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DatasetDownloadError(f"cannot create the data directory {target}: {err}") from err
    if spec.fetch is None:  # SUSY: the original file is the format
        return _stream_to(spec.urls[0], target / spec.original_names[0])
    text = spec.fetch()
    if spec.content_sha256 is not None and _sha256(text) != spec.content_sha256:
        raise DatasetDownloadError(
            f"the converted {spec.name} data have SHA-256 {_sha256(text)}, expected "
            f"{spec.content_sha256}; the UCI files differ from those this loader knows."
        )
    path = target / spec.filename
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
    tmp.replace(path)
    return path


def _stream_to(url: str, path: Path) -> Path:
    tmp = path.with_name(path.name + ".part")
    try:
        with _urlopen(url, _DOWNLOAD_TIMEOUT) as response, open(tmp, "wb") as out:
            while chunk := response.read(1 << 20):
                out.write(chunk)
    except (urllib.error.URLError, OSError, ValueError) as err:
        tmp.unlink(missing_ok=True)
        raise DatasetDownloadError(f"could not download {url}: {err}") from err
    tmp.replace(path)
    return path


# ---------------------------------------------------------------------------------------------
# Reading.


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
    spec = _spec(name)
    path = Path(path)
    original = path.name in spec.original_names
    dtype = {c: str for c in spec.categorical}
    dtype[spec.label] = str
    try:
        frame = pd.read_csv(
            path,
            header=None if original else 0,
            names=list(spec.columns) if original else None,
            dtype=dtype,
            na_filter=False,  # keep UCI's "?" and every text as it is
            float_precision="round_trip",  # the exact float64 of each printed value
            engine="c",
        )
    except (OSError, EOFError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read {path} as the {name} data: {err}") from err
    if tuple(frame.columns) != spec.columns:
        got = list(frame.columns)
        raise ValueError(
            f"{path} does not have the {name} columns: expected {len(spec.columns)} columns "
            f"starting {list(spec.columns[:3])}, got {len(got)} starting {got[:3]}."
        )
    return frame


def _label(spec: _Spec, column, path: Path) -> np.ndarray:
    text = column.astype(str).str.strip()
    if spec.name == "susy":  # floats such as "1.0" or "1.000000000000000000e+00"
        values = text.astype(float)
        pos, neg = values == 1.0, values == 0.0
    elif spec.name == "covertype":
        values = text.astype(int)
        pos, neg = values == 2, values.between(1, 7) & (values != 2)
    else:
        pos, neg = text == spec.positive, text == spec.negative
    bad = ~(pos | neg)
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(
            f"{path}: label column {spec.label!r} holds {text.iloc[first]!r} at data row "
            f"{first + 1}; expected {spec.positive!r} or {spec.negative!r}."
        )
    return pos.to_numpy().astype(np.int64)


def load(
    name: str,
    *,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    return_X_y: bool = False,
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

    Raises
    ------
    DatasetNotFoundError
        No local copy, and downloading was disabled or failed; the message says what to
        download and where to put it.
    ValueError
        The file exists but is not the expected data.
    """
    _require_pandas()  # fail early, before any download
    spec = _spec(name)
    path = find_local_copy(name, data_home)
    if path is None:
        if not download_if_missing:
            raise DatasetNotFoundError(
                f"no local copy of the {name} data and download_if_missing=False. "
                + _where_to_put(spec, data_home)
            )
        try:
            path = download(name, data_home)
        except DatasetDownloadError as err:
            raise DatasetNotFoundError(
                f"no local copy of the {name} data, and downloading failed ({err}). "
                + _where_to_put(spec, data_home)
            ) from err
    frame = read_frame(name, path)
    y = _label(spec, frame[spec.label], path)
    weight = None
    if "instance_weight" in spec.drop:
        weight = frame["instance_weight"].to_numpy(dtype=float)
    X = frame.drop(columns=[spec.label, *spec.drop])
    for col in spec.categorical:
        X[col] = X[col].astype("category")
    if return_X_y:
        return X, y
    return Dataset(
        name=name,
        X=X,
        y=y,
        categorical=spec.categorical,
        positive=spec.positive_doc,
        path=path,
        sample_weight=weight,
    )


def load_adult(*, data_home=None, download_if_missing: bool = True, return_X_y: bool = False):
    """Adult (48,842 rows): label 1 is income > 50K.

    See :func:`load` for the parameters, the search order and the errors.

    Returns
    -------
    Dataset or (X, y)
    """
    return load(
        "adult",
        data_home=data_home,
        download_if_missing=download_if_missing,
        return_X_y=return_X_y,
    )


def load_census(*, data_home=None, download_if_missing: bool = True, return_X_y: bool = False):
    """Census-Income KDD (299,285 rows): label 1 is income > 50K; ``instance_weight`` is
    dropped from ``X`` (it is a survey weight) and returned as ``sample_weight``.

    See :func:`load` for the parameters, the search order and the errors.

    Returns
    -------
    Dataset or (X, y)
    """
    return load(
        "census",
        data_home=data_home,
        download_if_missing=download_if_missing,
        return_X_y=return_X_y,
    )


def load_covertype(*, data_home=None, download_if_missing: bool = True, return_X_y: bool = False):
    """Covertype (581,012 rows): label 1 is Lodgepole Pine (``Cover_Type == 2``), all other
    cover types are label 0.

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
    )


def load_dota2(*, data_home=None, download_if_missing: bool = True, return_X_y: bool = False):
    """Dota2 Games Results (102,944 rows): label 1 is ``team_won == 1`` (the first column).

    See :func:`load` for the parameters, the search order and the errors.

    Returns
    -------
    Dataset or (X, y)
    """
    return load(
        "dota2",
        data_home=data_home,
        download_if_missing=download_if_missing,
        return_X_y=return_X_y,
    )


def load_susy(*, data_home=None, download_if_missing: bool = True, return_X_y: bool = False):
    """SUSY: label 1 is signal (the first column). Reads the full UCI ``SUSY.csv(.gz)`` when
    present, else the shared ``susy.csv.gz`` (a 10,000-row sample).

    See :func:`load` for the parameters, the search order and the errors.

    Returns
    -------
    Dataset or (X, y)
    """
    return load(
        "susy",
        data_home=data_home,
        download_if_missing=download_if_missing,
        return_X_y=return_X_y,
    )
