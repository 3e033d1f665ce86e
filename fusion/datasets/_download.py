"""Fetching the original files from the UCI archive and storing them in the shared format.

``_urlopen`` is the one network call of the package's loaders (tests replace it).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

from ._convert import adult_from_uci, census_from_uci, covtype_from_uci, dota2_from_uci
from ._errors import DatasetDownloadError
from ._locate import get_data_home
from ._registry import UCI, spec

__all__ = ["download"]

_DOWNLOAD_TIMEOUT = 60.0


def _urlopen(url: str, timeout: float):
    """The one network call of the loaders (tests replace it)."""
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
        f"{UCI}/adult/adult.data",
        "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    )
    test = _get(
        f"{UCI}/adult/adult.test",
        "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    )
    return adult_from_uci(data, test)


def _fetch_census() -> bytes:
    base = f"{UCI}/census-income-mld"
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
    return covtype_from_uci(gzip.decompress(_get(f"{UCI}/covtype/covtype.data.gz")))


def _fetch_dota2() -> bytes:
    blob = _get(f"{UCI}/00367/dota2Dataset.zip")
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        by_name = {Path(n).name: n for n in zf.namelist()}
        try:
            train = zf.read(by_name["dota2Train.csv"])
            test = zf.read(by_name["dota2Test.csv"])
        except KeyError as err:
            raise DatasetDownloadError(f"dota2Dataset.zip lacks {err}.") from None
    return dota2_from_uci(train, test)


#: Originals -> shared-format CSV text, per data set. SUSY has none: its original file is
#: the format and is stored as it comes.
_FETCHERS: dict[str, Callable[[], bytes]] = {
    "adult": _fetch_adult,
    "census": _fetch_census,
    "covertype": _fetch_covtype,
    "dota2": _fetch_dota2,
}


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
    s = spec(name)
    target = get_data_home(data_home)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DatasetDownloadError(f"cannot create the data directory {target}: {err}") from err
    fetch = _FETCHERS.get(s.name)
    if fetch is None:  # SUSY: the original file is the format
        return _stream_to(s.urls[0], target / s.original_names[0])
    text = fetch()
    if s.content_sha256 is not None and _sha256(text) != s.content_sha256:
        raise DatasetDownloadError(
            f"the converted {s.name} data have SHA-256 {_sha256(text)}, expected "
            f"{s.content_sha256}; the UCI files differ from those this loader knows."
        )
    path = target / s.filename
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
