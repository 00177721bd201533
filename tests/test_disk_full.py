"""A full disk and a read-only file system during a write: a sentence, the README's exit code,
nothing lost (never an ``Errno 28`` traceback).

The real test mounts a small tmpfs in a private mount namespace (``unshare -rm``), fills it,
and runs ``memtui notes set`` and ``memtui backup`` there; where namespaces are not allowed it
is skipped, and the tests that inject ``ENOSPC``/``EROFS`` at the ``os.write``/``fsync`` and
``mkstemp`` boundary still run.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core import atomic, notes
from memtui.core.errors import DiskFullError, WriteRefusedError
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from tests.backup_helpers import isolate_git

REPO = Path(__file__).resolve().parent.parent


def _run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


def _namespaces_work() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt 2>/dev/null "
                            "|| mount -t tmpfs -o size=64k tmpfs /tmp"], capture_output=True)
    return probe.returncode == 0


def _mount_point_and_workspace(tmp_path: Path, head: bytes) -> tuple[Path, Path, Path, str]:
    """An empty mount point, a workspace whose member notes hold ``kept``, a ~580 KB text
    starting with ``head`` (more than the filled disk takes) and the quoted Python."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    source = tmp_path / "ws"
    (source / "memory").mkdir(parents=True)
    (source / "memory" / "MEMORY_CUSTOM.md").write_bytes(b"kept\n")
    big = tmp_path / "big.md"
    big.write_bytes(head + b"a line of the member's notes\n" * 20_000)
    return mnt, source, big, shlex.quote(sys.executable)


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _namespaces_work(),
                    reason="needs a private mount namespace (unshare -rm) to mount a small tmpfs")
def test_a_really_full_disk_during_backup_is_a_sentence_and_no_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    mnt, source, big, py = _mount_point_and_workspace(tmp_path, b"")  # ~580 KB: its backup copy cannot fit
    script = f"""
set -u
mount -t tmpfs -o size=3m tmpfs {mnt}
cp -a {source} {mnt}/ws
cd {mnt}
{py} -m memtui backup -w ws --repo repo >/dev/null 2>&1 || echo "first backup failed"
git -C repo rev-parse HEAD > {tmp_path}/head-before
cat {big} >> ws/memory/MEMORY_CUSTOM.md
dd if=/dev/zero of=filler bs=4k 2>/dev/null
{py} -m memtui backup -w ws --repo repo >{tmp_path}/backup.out 2>{tmp_path}/backup.err
echo $? > {tmp_path}/backup.rc
git -C repo rev-parse HEAD > {tmp_path}/head-after
cp ws/memory/MEMORY_CUSTOM.md {tmp_path}/notes-after 2>/dev/null || true
git -C repo status --porcelain > {tmp_path}/status
"""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert "first backup failed" not in done.stdout, done.stderr
    backup_err = (tmp_path / "backup.err").read_text()
    assert "Traceback" not in backup_err and "Errno" not in backup_err, backup_err
    assert (tmp_path / "notes-after").read_bytes() == b"kept\n" + big.read_bytes()
    assert (tmp_path / "backup.rc").read_text().strip() == "4", backup_err
    assert "the disk is full" in backup_err and "No backup commit was made" in backup_err
    assert (tmp_path / "head-before").read_text() == (tmp_path / "head-after").read_text()


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _namespaces_work(),
                    reason="needs a private mount namespace (unshare -rm) to mount a small tmpfs")
def test_a_really_full_disk_during_a_notes_save_that_reaches_the_write(tmp_path: Path) -> None:
    mnt, source, big, py = _mount_point_and_workspace(tmp_path, b"kept\n")
    base = atomic.sha256(b"kept\n")
    script = f"""
mount -t tmpfs -o size=1m tmpfs {mnt}
cp -a {source} {mnt}/ws
cd {mnt}
{py} -m memtui notes show -w ws --hash >/dev/null
dd if=/dev/zero of=filler bs=4k 2>/dev/null
{py} -m memtui notes set -w ws --from {big} --base-hash {base} >{tmp_path}/out1 2>{tmp_path}/err1
echo $? > {tmp_path}/rc1
rm filler
{py} -m memtui notes set -w ws --from ws/memory/MEMORY_CUSTOM.md --base-hash {base} >/dev/null 2>&1
dd if=/dev/zero of=filler bs=4k 2>/dev/null
{py} -m memtui notes set -w ws --from {big} --base-hash {base} >{tmp_path}/out 2>{tmp_path}/err
echo $? > {tmp_path}/rc
cp ws/memory/MEMORY_CUSTOM.md {tmp_path}/after
ls -a ws/memory > {tmp_path}/listing
"""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    # no room even for memtui's writer lock (.memtui/ not made yet)
    err = (tmp_path / "err1").read_text()
    assert (tmp_path / "rc1").read_text().strip() == "4", err
    assert err.startswith("memtui: the disk is full: memtui cannot create its writer lock"), err
    # the lock exists; the notes file itself does not fit
    err = (tmp_path / "err").read_text()
    assert (tmp_path / "rc").read_text().strip() == "4", err
    assert err.startswith("memtui: the disk is full: nothing was written") and "Traceback" not in err, err
    assert (tmp_path / "after").read_bytes() == b"kept\n"
    assert (tmp_path / "listing").read_text().split() == [".", "..", "MEMORY_CUSTOM.md"]  # no temporary file left


class _FullFile:
    """A file object whose writes fail with ``code``, as on a full disk (the rest is the file's)."""

    def __init__(self, handle, code: int) -> None:  # noqa: ANN001
        self._handle, self._code = handle, code

    def write(self, _data: bytes) -> int:
        raise OSError(self._code, os.strerror(self._code))

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self._handle, name)

    def __enter__(self) -> "_FullFile":
        return self

    def __exit__(self, *_exc: object) -> None:
        self._handle.close()


def _fail_writes(monkeypatch: pytest.MonkeyPatch, code: int, fsync: bool = False) -> None:
    """Make every write of data through a file object or ``os.write`` (or every ``fsync``) fail
    with ``code``, as a full disk or a read-only file system does."""
    def refuse(*_args, **_kwargs):  # noqa: ANN002, ANN003, ANN202
        raise OSError(code, os.strerror(code))

    if fsync:
        monkeypatch.setattr(os, "fsync", refuse)
        return
    real_fdopen = os.fdopen

    def fdopen(fd, mode="r", *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        handle = real_fdopen(fd, mode, *args, **kwargs)
        return _FullFile(handle, code) if any(c in mode for c in "wa+") else handle

    monkeypatch.setattr(os, "write", refuse)
    monkeypatch.setattr(os, "fdopen", fdopen)


@pytest.mark.parametrize("code, kind, exit_code", [
    (errno.ENOSPC, DiskFullError, 4), (getattr(errno, "EDQUOT", 122), DiskFullError, 4),
    (errno.EROFS, WriteRefusedError, 3), (errno.EACCES, WriteRefusedError, 3)])
@pytest.mark.parametrize("fsync", [False, True])
def test_an_injected_write_failure_in_notes_set_is_a_sentence_and_nothing_is_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        code: int, kind: type, exit_code: int, fsync: bool) -> None:
    """Injected at the ``os.write``/``fsync`` boundary (where a real full disk shows)."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    target = ws / "memory" / "MEMORY_CUSTOM.md"
    target.write_bytes(b"kept\n")
    mine = tmp_path / "mine.md"
    mine.write_bytes(b"kept\nnew line\n")
    base = atomic.sha256(b"kept\n")
    Session.open(Workspace.open(ws)).close()
    with monkeypatch.context() as patch:
        _fail_writes(patch, code, fsync)
        result = _run(["notes", "set", "-w", str(ws), "--from", str(mine), "--base-hash", base])
    err = capsys.readouterr().err
    assert result == exit_code, err
    assert "Traceback" not in err and "Errno" not in err and "nothing was written" in err
    assert target.read_bytes() == b"kept\n"
    assert [p.name for p in target.parent.iterdir()] == ["MEMORY_CUSTOM.md"]  # no temporary file left
    with monkeypatch.context() as patch, Session.open(Workspace.open(ws)) as session:
        _fail_writes(patch, code, fsync)
        with pytest.raises(kind) as raised:
            notes.save(session, notes.load(session.ws), "kept\nnew line\n", base)
    assert isinstance(raised.value, OSError) and raised.value.errno == code


def test_an_injected_full_disk_during_backup_is_a_sentence_and_no_commit(
        sample_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = tmp_path / "repo"
    assert _run(["backup", "-w", str(sample_copy), "--repo", str(repo)]) == 0
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    with open(sample_copy / "memory" / "MEMORY_CUSTOM.md", "ab") as handle:
        handle.write(b"a change to back up\n")
    capsys.readouterr()
    _fail_writes(monkeypatch, errno.ENOSPC)
    code = _run(["backup", "-w", str(sample_copy), "--repo", str(repo)])
    err = capsys.readouterr().err
    assert code == 4, err
    assert "the disk is full" in err and "No backup commit was made" in err and "Traceback" not in err
    assert subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout == head
    assert b"a change to back up" in (sample_copy / "memory" / "MEMORY_CUSTOM.md").read_bytes()


def test_a_full_disk_at_the_store_write_puts_the_file_back_or_says_what_it_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is installed first, then the store with the audit entry. When the store write
    fails for a full disk, the file is put back; when even that fails, the sentence says the
    file holds the new text without its audit record (never "nothing was written")."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    target = ws / "memory" / "MEMORY_CUSTOM.md"
    target.write_bytes(b"kept\n")
    real = atomic.write_bytes
    store_path = ws / ".memtui" / "store.json"

    def store_full(path, data, **kwargs):  # noqa: ANN001, ANN003, ANN202
        if Path(path) == store_path:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, data, **kwargs)

    with Session.open(Workspace.open(ws)) as session:
        note = notes.load(session.ws)
        monkeypatch.setattr(atomic, "write_bytes", atomic._sentences(store_full))
        with pytest.raises(DiskFullError, match="nothing was written"):
            notes.save(session, note, "kept\nmine\n", note.hash)
        assert target.read_bytes() == b"kept\n"  # put back

        def all_full(path, data, **kwargs):  # noqa: ANN001, ANN003, ANN202
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(atomic, "write_bytes", atomic._sentences(all_full))
        with pytest.raises(DiskFullError, match="was saved, but its audit record could not be"):
            notes.save(session, note, "kept\nmine\n", note.hash)
        assert target.read_bytes() == b"kept\nmine\n"
