"""How ``save`` writes (fusion/persistence/_archive.py): atomic under concurrency, through
symbolic links, binary file objects only, errors naming the caller's path, no leftovers."""

from __future__ import annotations

import io
import os
import stat
import sys
import threading

import numpy as np
import pytest

import fusion
from fusion.persistence import BinaryModeError, PersistenceError

from ._helpers import fitted, make

pytestmark = pytest.mark.filterwarnings("error")


def _models():
    """Two models of different methods and their predictions on common scores."""
    (a, S), (b, _) = fitted("platt"), fitted("histogram")
    return [a, b], S


def test_concurrent_saves_and_loads_see_complete_files(tmp_path):
    # Writers race on one path while readers load it: every save succeeds, every load sees a
    # complete file, one of the saved models, and no temporary file is left behind.
    models, S = _models()
    expected = [m.predict_proba(S) for m in models]
    path = tmp_path / "model.fusion"
    models[0].save(path)
    errors, loaded = [], []
    writers_done = threading.Event()

    def writer(k):
        try:
            for i in range(6):
                models[(k + i) % 2].save(path)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    def reader():
        try:
            while not writers_done.is_set() or len(loaded) < 4:
                loaded.append(fusion.load(path).predict_proba(S))
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    writers = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in writers + readers:
        t.start()
    for t in writers:
        t.join()
    writers_done.set()
    for t in readers:
        t.join()
    assert not errors, errors
    assert loaded
    for p in loaded:
        assert any(np.array_equal(p, e) for e in expected)
    assert sorted(os.listdir(tmp_path)) == ["model.fusion"]


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")
def test_save_through_symlink_replaces_the_target_and_keeps_the_link(tmp_path):
    models, S = _models()
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "v1.fusion"
    models[0].save(target)
    link = tmp_path / "current.fusion"
    link.symlink_to(os.path.join("store", "v1.fusion"))
    models[1].save(link)
    assert link.is_symlink() and os.readlink(link) == os.path.join("store", "v1.fusion")
    np.testing.assert_array_equal(fusion.load(target).predict_proba(S), models[1].predict_proba(S))
    assert sorted(os.listdir(tmp_path / "store")) == ["v1.fusion"]
    # A dangling link: its target is created, as open(link, "wb") would.
    dangling = tmp_path / "next.fusion"
    dangling.symlink_to(os.path.join("store", "v2.fusion"))
    models[0].save(dangling)
    assert dangling.is_symlink()
    np.testing.assert_array_equal(
        fusion.load(tmp_path / "store" / "v2.fusion").predict_proba(S), models[0].predict_proba(S)
    )


def test_text_mode_file_objects_are_refused_with_a_clear_error(tmp_path):
    est, _ = fitted("platt")
    for f in (io.StringIO(), open(tmp_path / "m.txt", "w")):  # noqa: SIM115
        with f, pytest.raises(BinaryModeError, match=r"binary mode \('wb'\)"):
            est.save(f)
    assert (tmp_path / "m.txt").read_bytes() == b""
    est.save(tmp_path / "m.fusion")
    with open(tmp_path / "m.fusion") as f, pytest.raises(BinaryModeError, match=r"\('rb'\)"):
        fusion.load(f)
    # Both a PersistenceError and the TypeError that zipfile used to raise.
    assert issubclass(BinaryModeError, PersistenceError) and issubclass(BinaryModeError, TypeError)


def test_save_error_names_the_callers_path_not_a_temporary_file(tmp_path):
    est, _ = fitted("platt")
    path = tmp_path / "missing" / "m.fusion"
    with pytest.raises(FileNotFoundError) as info:
        est.save(path)
    assert info.value.filename == str(path)
    assert ".tmp" not in str(info.value) and str(path) in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    # The target is a directory: the rename fails, the temporary file is removed.
    (tmp_path / "dir.fusion").mkdir()
    with pytest.raises(OSError) as info:
        est.save(tmp_path / "dir.fusion")
    assert info.value.filename == str(tmp_path / "dir.fusion") and ".tmp" not in str(info.value)
    assert sorted(os.listdir(tmp_path)) == ["dir.fusion"]


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="root ignores directory permissions"
)
def test_save_into_read_only_directory_names_the_callers_path(tmp_path):
    est, _ = fitted("platt")
    (tmp_path / "ro").mkdir()
    os.chmod(tmp_path / "ro", 0o500)
    try:
        with pytest.raises(PermissionError) as info:
            est.save(tmp_path / "ro" / "m.fusion")
    finally:
        os.chmod(tmp_path / "ro", 0o700)
    assert info.value.filename == str(tmp_path / "ro" / "m.fusion")


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failed_write_leaves_the_old_file_and_no_temporary_file(error, tmp_path, monkeypatch):
    from fusion.persistence import _archive

    models, S = _models()
    path = tmp_path / "model.fusion"
    models[0].save(path)
    before = path.read_bytes()

    def failing_write(f, meta_bytes, npz_bytes):
        f.write(meta_bytes[:100])  # a partial archive
        raise error

    monkeypatch.setattr(_archive, "_write_zip", failing_write)
    with pytest.raises(type(error)) as info:
        models[1].save(path)
    if isinstance(error, OSError):
        assert info.value.filename == str(path) and info.value.errno == 28
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["model.fusion"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_permissions_of_new_and_replaced_files(tmp_path):
    est, _ = fitted("platt")
    umask = os.umask(0o022)
    try:
        est.save(tmp_path / "new.fusion")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "new.fusion").st_mode) == 0o644  # not mkstemp's 0o600
    os.chmod(tmp_path / "new.fusion", 0o640)
    est.save(tmp_path / "new.fusion")
    assert stat.S_IMODE(os.stat(tmp_path / "new.fusion").st_mode) == 0o640


def test_save_to_relative_path_and_bytes_path(tmp_path, monkeypatch):
    est, S = fitted("platt")
    monkeypatch.chdir(tmp_path)
    est.save("m.fusion")
    est.save(os.fsencode("b.fusion"))
    for name in ("m.fusion", "b.fusion"):
        np.testing.assert_array_equal(fusion.load(name).predict_proba(S), est.predict_proba(S))
    assert sorted(os.listdir(tmp_path)) == ["b.fusion", "m.fusion"]


def test_save_and_load_refuse_what_is_neither_a_path_nor_a_file(tmp_path):
    est, _ = fitted("platt")
    with pytest.raises(TypeError, match="path .* or a binary file object, got int"):
        est.save(3)
    with pytest.raises(TypeError, match="got NoneType"):
        fusion.load(None)
    with pytest.raises(FileNotFoundError):
        fusion.load(tmp_path / "missing.fusion")


def test_unfitted_calibrator_is_not_saved(tmp_path):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        make("isotonic").save(tmp_path / "m.fusion")
    assert not list(tmp_path.iterdir())
