"""The zip container of a model file: atomic writing, and reading within size limits.

Reading never trusts a size it has not checked: the zip directory's declared sizes are
compared with the limits before anything is inflated, every member is inflated with a cap at
its declared size, and every ``.npy`` header of ``arrays.npz`` is parsed and checked against
the bytes actually present before its array is allocated.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import secrets
import stat
import zipfile

import numpy as np
from numpy.lib import format as npy_format

from ._codec import check_array_dtype
from ._errors import BinaryModeError, PersistenceError

__all__ = [
    "META",
    "ARRAYS",
    "MAX_BYTES",
    "MAX_META_BYTES",
    "MAX_INFLATION",
    "INFLATION_ALLOWANCE",
    "write",
    "read",
]

META = "meta.json"
ARRAYS = "arrays.npz"

#: Default ``max_bytes`` of :func:`fusion.load`: the largest total uncompressed size of a
#: file's members it reads.
MAX_BYTES = 4 * 2**30
#: The largest ``meta.json`` read (real ones hold a few kB; arrays live in ``arrays.npz``).
MAX_META_BYTES = 64 * 2**20
#: A member may inflate to at most ``max(INFLATION_ALLOWANCE, MAX_INFLATION * compressed size)``.
MAX_INFLATION = 200
INFLATION_ALLOWANCE = 32 * 2**20

_NPY_MEMBER = re.compile(r"[A-Za-z0-9_]{1,64}\.npy\Z")
_NPY_VERSIONS = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}


# ---------------------------------------------------------------------------------------------
# Writing.


def write(target, meta_bytes: bytes, npz_bytes: bytes) -> None:
    """Write the archive to a path (atomically) or to a binary file object."""
    if hasattr(target, "write"):
        try:
            target.write(b"")
        except TypeError:
            raise BinaryModeError(
                "fusion model files are binary: open the file in binary mode ('wb'), or pass "
                "its path."
            ) from None
        _write_zip(target, meta_bytes, npz_bytes)
        return
    user_path = _fspath(target)
    # Follow a symlink: replace the file it points to and keep the link.
    final = os.path.realpath(user_path)
    directory, base = os.path.split(final)
    try:
        fd, tmp = _create_temporary(directory, base)
    except OSError as err:
        raise _naming(err, user_path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            _copy_mode(final, tmp)
            _write_zip(f, meta_bytes, npz_bytes)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, OSError):
            raise _naming(err, user_path) from None
        raise
    _fsync_directory(directory)


def _fspath(target) -> str:
    try:
        return os.fsdecode(os.fspath(target))
    except TypeError:
        raise TypeError(
            f"expected a path (str or os.PathLike) or a binary file object, got "
            f"{type(target).__name__}."
        ) from None


def _create_temporary(directory: str, base: str) -> tuple[int, str]:
    """A new file beside the target, under a name no concurrent save can pick.

    Like ``tempfile.mkstemp``, but created with mode ``0o666`` so that the umask applies as for
    any new file (mkstemp's ``0o600`` would make every saved model private).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        # base cut so that the name stays within the usual 255-byte limit
        tmp = os.path.join(directory, f".{base[:200]}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {base!r}")  # pragma: no cover


def _copy_mode(final: str, tmp: str) -> None:
    """Replacing an existing model keeps its permissions."""
    try:
        mode = stat.S_IMODE(os.stat(final).st_mode) & 0o777  # never set-id bits
    except OSError:
        return
    os.chmod(tmp, mode)


def _fsync_directory(directory: str) -> None:
    """Make the rename durable; not possible (nor needed) where directories cannot be opened."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _naming(err: OSError, user_path: str) -> OSError:
    """The same error about the user's path (never the temporary file's)."""
    if err.errno is None:
        return OSError(f"cannot save to {user_path!r}: {err}")
    return OSError(err.errno, err.strerror, user_path)  # the errno's subclass, e.g. PermissionError


def _write_zip(f, meta_bytes: bytes, npz_bytes: bytes) -> None:
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(META, meta_bytes)
        zf.writestr(ARRAYS, npz_bytes)


# ---------------------------------------------------------------------------------------------
# Reading.


def read(source, max_bytes: int) -> tuple[bytes, dict[str, np.ndarray], str]:
    """``(meta.json bytes, arrays by npz key, how to name the source in messages)``.

    Raises PersistenceError for anything but a well-formed archive within the limits, and
    OSError when a path cannot be opened.
    """
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        what = repr(name) if isinstance(name, str) else "the file object"
        if isinstance(source.read(0), str):
            raise BinaryModeError(
                "fusion model files are binary: open the file in binary mode ('rb'), or pass "
                "its path."
            )
        return (*_read_zip(source, what, max_bytes), what)
    path = _fspath(source)
    what = repr(path)
    with open(path, "rb") as f:
        return (*_read_zip(f, what, max_bytes), what)


def _read_zip(f, what: str, max_bytes: int) -> tuple[bytes, dict[str, np.ndarray]]:
    hint = ""
    try:
        pos = f.tell()
        if f.read(1) == b"\x80":  # the PROTO opcode that starts every pickle of protocol >= 2
            hint = " It looks like a pickle file; fusion.load never unpickles."
        f.seek(pos)
        with zipfile.ZipFile(f) as zf:
            infos = _checked_members(zf, what, max_bytes)
            meta_bytes = _inflate(zf, infos[META], what)
            npz_bytes = _inflate(zf, infos[ARRAYS], what)
    except (PersistenceError, MemoryError):
        raise
    except Exception as err:  # noqa: BLE001 - zipfile's errors are no closed set
        # BadZipFile, EOFError, zlib.error, struct.error, NotImplementedError (unknown methods
        # and flags), RuntimeError (encryption), OSError/ValueError (offsets out of the file),
        # UnicodeDecodeError, ...: in a file from an untrusted source all mean one thing.
        raise PersistenceError(
            f"{what} is not a readable fusion model file (a zip archive written by "
            f"FusionEstimator.save): {type(err).__name__}: {err}.{hint}"
        ) from err
    return meta_bytes, _read_npz(npz_bytes, what)


def _checked_members(zf: zipfile.ZipFile, what: str, max_bytes: int) -> dict:
    infos = zf.infolist()
    names = [i.filename for i in infos]
    if sorted(names) != sorted([META, ARRAYS]):
        raise PersistenceError(
            f"{what} is not a fusion model file: expected exactly the members "
            f"{[META, ARRAYS]}, found {names[:10]}."
        )
    for info in infos:
        _check_member(info, what, f"member {info.filename}", (zipfile.ZIP_DEFLATED,))
        allowed = max(INFLATION_ALLOWANCE, MAX_INFLATION * info.compress_size)
        if info.file_size > allowed:
            raise PersistenceError(
                f"{what}: member {info.filename} declares {info.file_size} bytes inflated from "
                f"{info.compress_size} compressed ones, above the limit of {allowed} bytes "
                f"(the larger of {INFLATION_ALLOWANCE} and {MAX_INFLATION} times the compressed "
                "size; fusion's own files inflate a few times). Refused as a likely "
                "decompression bomb."
            )
    by_name = {i.filename: i for i in infos}
    if by_name[META].file_size > MAX_META_BYTES:
        raise PersistenceError(
            f"{what}: {META} is implausibly large ({by_name[META].file_size} bytes; at most "
            f"{MAX_META_BYTES} are read)."
        )
    total = sum(i.file_size for i in infos)
    if total > max_bytes:
        raise PersistenceError(
            f"{what} holds {total} bytes of model data, more than max_bytes={max_bytes}. If you "
            "trust the file and have the memory, pass a larger max_bytes to fusion.load."
        )
    return by_name


def _check_member(info: zipfile.ZipInfo, what: str, where: str, methods: tuple[int, ...]):
    if info.flag_bits & 0x1:
        raise PersistenceError(f"{what}: {where} is encrypted; fusion never writes that.")
    if info.compress_type not in (zipfile.ZIP_STORED, *methods):
        raise PersistenceError(
            f"{what}: {where} uses zip compression method {info.compress_type}, which fusion "
            "never writes."
        )


def _inflate(zf: zipfile.ZipFile, info: zipfile.ZipInfo, what: str) -> bytes:
    """The member's bytes, never more than its (checked) declared size, whatever its
    compressed stream would inflate to."""
    with zf.open(info) as member:
        data = member.read(info.file_size)
        # zipfile stops at the declared size itself and compares the CRC-32 there; the extra
        # read keeps the cap explicit should that ever change.
        overflow = member.read(1)
    if len(data) != info.file_size or overflow:
        raise PersistenceError(
            f"{what}: member {info.filename} does not inflate to its declared size of "
            f"{info.file_size} bytes; the archive is corrupted."
        )
    return data


def _read_npz(npz_bytes: bytes, what: str) -> dict[str, np.ndarray]:
    """The arrays of ``arrays.npz``: uncompressed ``.npy`` members, headers checked first."""
    where = f"{what}: {ARRAYS} is not a valid pickle-free .npz"
    arrays = {}
    try:
        with zipfile.ZipFile(io.BytesIO(npz_bytes)) as zf:
            infos = zf.infolist()
            for info in infos:
                if not _NPY_MEMBER.match(info.filename):
                    raise PersistenceError(f"{where}: unexpected member {info.filename[:80]!r}.")
                # Stored members only (numpy.savez's): their size is the bytes present here, so
                # nothing inside arrays.npz can inflate.
                _check_member(info, what, f"{ARRAYS} member {info.filename}", ())
                if info.compress_size != info.file_size:
                    raise PersistenceError(f"{where}: member {info.filename} has two sizes.")
            if len({i.filename for i in infos}) != len(infos):
                raise PersistenceError(f"{where}: a member name is repeated.")
            for info in infos:
                with zf.open(info) as member:
                    arr = _read_npy(member, info.file_size, f"{where}: {info.filename}")
                    if member.read(1):  # also has zipfile compare the CRC-32
                        raise PersistenceError(f"{where}: {info.filename} has trailing bytes.")
                arrays[info.filename[: -len(".npy")]] = arr
    except (PersistenceError, MemoryError):
        raise
    except Exception as err:  # noqa: BLE001 - see _read_zip
        raise PersistenceError(f"{where}: {type(err).__name__}: {err}") from err
    return arrays


def _read_npy(member, size: int, where: str) -> np.ndarray:
    """One ``.npy`` member of ``size`` bytes; the array is allocated only once its header
    accounts for exactly the bytes that follow it."""
    version = npy_format.read_magic(member)
    if version not in _NPY_VERSIONS:
        raise PersistenceError(f"{where}: .npy format version {version} is not read.")
    shape, fortran_order, dtype = _NPY_VERSIONS[version](member)
    check_array_dtype(dtype, where, PersistenceError)
    if any(s < 0 for s in shape):
        raise PersistenceError(f"{where}: negative dimension in shape {shape}.")
    count = math.prod(shape)
    data_bytes = size - member.tell()
    if count * dtype.itemsize != data_bytes:
        raise PersistenceError(
            f"{where}: its header declares {count} elements of {dtype} ({count * dtype.itemsize} "
            f"bytes) but {data_bytes} bytes follow it."
        )
    arr = np.empty(count, dtype=dtype)
    view = memoryview(arr.view(np.uint8))
    filled = 0
    while filled < data_bytes:
        n = member.readinto(view[filled:])
        if not n:
            raise PersistenceError(f"{where}: the array data ends early.")
        filled += n
    if fortran_order:
        return arr.reshape(shape[::-1]).transpose()
    return arr.reshape(shape)
