"""Atomic file writes (DESIGN.md §4 invariant 1).

A write goes to a temporary file in the same folder, is flushed and fsynced, then renamed
over the target, and the folder is fsynced, so a crash at any moment leaves either the old
or the new bytes, never a truncated file. The target's permission bits are kept.

The temporary file is named ``.<target name>.<random>.tmp``; a writer killed before the
rename leaves it behind (never the target half-written). :func:`leftovers` finds such
files and :func:`remove_leftovers` removes them; only the holder of the writer lock
(:mod:`memtui.core.lock`) may call the latter, so it never removes a live writer's file.
Proven by ``tests/test_atomic.py`` (SIGKILL of a writer subprocess at every step and at
random moments).
"""

from __future__ import annotations

import errno as _errno
import functools
import hashlib
import os
import re
import signal as _signal
import stat
import sys
import tempfile
import time
from dataclasses import dataclass as _dataclass
from pathlib import Path
from typing import Callable, TypeVar

from memtui.core.errors import write_failure

try:  # POSIX
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None  # type: ignore[assignment]


def sha256(data: bytes) -> str:
    """The SHA-256 of ``data`` as 64 lowercase hex digits: the content hash memtui records."""
    return hashlib.sha256(data).hexdigest()


#: The name of a temporary file of this module: ``.<target name>.<8 random characters>.tmp``
#: (``tempfile.mkstemp`` draws them from lowercase letters, digits and ``_``).
LEFTOVER_NAME = re.compile(r"^\.(?P<target>.+)\.[a-z0-9_]{8}\.tmp$", re.DOTALL)


def is_leftover(name: str) -> bool:
    """True when the file name ``name`` is one of this module's temporary files: a write that
    was killed leaves it behind, and it never holds the only copy of anything (a write is
    installed by its rename, and the bytes of an interrupted several-file write are in the
    store's pending intent)."""
    return LEFTOVER_NAME.match(name) is not None


def leftovers(path: str | os.PathLike[str]) -> list[Path]:
    """Temporary files an interrupted :func:`write_bytes` of ``path`` left in its folder.

    Returns:
        Paths of ``.<name>.*.tmp`` files beside ``path``, sorted; ``[]`` when the folder is
        missing or unreadable.
    """
    target = Path(path)
    prefix = f".{target.name}."
    try:
        names = os.listdir(target.parent)
    except OSError:
        return []
    return sorted(target.parent / n for n in names if n.startswith(prefix) and n.endswith(".tmp"))


def remove_leftovers(path: str | os.PathLike[str], *, whole_folder: bool = False) -> list[Path]:
    """Delete the files :func:`leftovers` lists (call only while holding the writer lock).

    Args:
        path: the file whose leftovers go.
        whole_folder: every leftover in ``path``'s folder goes, whatever file it was for
            (only for memtui's own folders, ``.memtui/``, where nothing else writes; a backup
            named after the time is never written twice, so its leftover had no other chance).

    Returns:
        The paths removed. Files that vanish or cannot be removed are skipped silently.
    """
    removed = []
    found = leftovers(path)
    if whole_folder:
        try:
            found = sorted({*found, *(Path(path).parent / n for n in os.listdir(Path(path).parent) if is_leftover(n))})
        except OSError:
            pass
    for leftover in found:
        try:
            if leftover.is_file() and not leftover.is_symlink():
                leftover.unlink()
                removed.append(leftover)
        except OSError:
            continue
    return removed


_F = TypeVar("_F", bound=Callable[..., object])


def _sentences(write: _F) -> _F:
    """Make a full disk or a refused write inside ``write`` (whose first argument is the target)
    a sentence: :class:`~memtui.core.errors.DiskFullError` (``ENOSPC``, ``EDQUOT``) or
    :class:`~memtui.core.errors.WriteRefusedError` (``EROFS``, ``EACCES``, ``EPERM``), both still
    ``OSError``. Every writer of this module leaves the target as it was when it fails, so the
    sentence says nothing was written. Other errors pass unchanged."""
    @functools.wraps(write)
    def guarded(path, *args, **kwargs):  # noqa: ANN001, ANN202 - as ``write``
        try:
            return write(path, *args, **kwargs)
        except RaceError:
            raise
        except OSError as exc:
            sentence = write_failure(exc, path)
            if sentence is None or sentence is exc:
                raise
            raise sentence from exc
    return guarded  # type: ignore[return-value]


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


@_sentences
def write_bytes(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None,
                durable: bool = True) -> None:
    """Replace the file at ``path`` with ``data`` atomically.

    Args:
        path: the target file; its folder must exist.
        data: the complete new content.
        mode: permission bits for a new file (default 0o644 less the umask); an existing
            file keeps its own bits.
        durable: fsync the file and its folder (``False`` only for advisory files, such as
            the lock's holder record, where a lost update after a power cut is harmless: the
            rename is still atomic).

    Raises:
        OSError: the folder is missing or not writable; the target is then untouched.
    """
    target = Path(path)
    folder = target.parent
    try:
        keep_mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            keep_mode = 0o666 & ~umask
        else:
            keep_mode = mode
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp_name, keep_mode)
        os.replace(tmp_name, target)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    if durable:
        _fsync_dir(folder)


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8",
               mode: int | None = None) -> None:
    """Encode ``text`` (no newline translation) and write it with :func:`write_bytes`."""
    write_bytes(path, text.encode(encoding), mode=mode)


# -- the exact replace: files that processes outside memtui write too ------------------------------
#
# memtui's writer lock excludes memtui processes only. An agent appending a line to
# graph.jsonl, or an MCP memory server rewriting it (temporary file and rename), takes no
# lock, so a plain "read, compute, rename over" loses what they write between memtui's read
# and its rename: an append lands in the old inode, which the rename unlinks,
# and a rename of theirs is renamed over. :func:`replace_exact` closes both, exactly:
#
# * the bytes a change is based on are read from a descriptor kept open (:class:`Snapshot`),
#   so "what the old inode gained since" is known to the byte, before and after the rename;
# * the rename is ``renameat2(RENAME_EXCHANGE)`` (Linux): the new file and the old name swap
#   atomically, and what was swapped out is checked to be the very inode that was read; if
#   another writer replaced the file meanwhile, the swap is undone and the write refused;
# * "nobody has the old inode open for writing" is asked of the kernel with a read lease
#   (``F_SETLEASE F_RDLCK`` is refused while any process has the file open for writing, and
#   while it is held a process opening the file for writing waits in ``open``), falling back
#   to a scan of ``/proc/*/fd`` where leases are not available;
# * appends (``carry=True``) are carried into the new file: those made before the swap go
#   into it before it is installed, those of processes that had the file open across the swap
#   are drained into it afterwards, until the kernel says no writer holds the old inode and it
#   gained nothing more. Any other change of the old inode (a rewrite in place, a truncation)
#   is refused as a conflict, and so is every change of a file written with ``carry=False``.
#
# What stays outside: a process that looked the old name up before the swap and is then held
# up inside that very ``open`` call (between the path lookup and taking write access) for
# longer than :data:`LATE_OPEN_GRACE`; platforms without ``renameat2`` (the inode check before
# ``os.replace`` then leaves a window of a few microseconds); network file systems, whose
# locks and leases are not shared between machines.

#: Seconds :func:`replace_exact` waits for another process to close the file it writes.
WRITER_WAIT = 5.0
#: Seconds the old file stays leased after the last carry, so an ``open`` that looked the old
#: name up just before the swap is seen (it waits on the lease) instead of writing unseen.
LATE_OPEN_GRACE = 0.002

_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_AT_FDCWD = -100
_renameat2_fn: object = None


class RaceError(OSError):
    """:func:`replace_exact` refused: a process outside memtui changed, replaced or still
    writes the file. Nothing of the write is installed (the file holds the other process's
    bytes). Session turns it into a :class:`~memtui.core.errors.ConflictError` or a
    :class:`~memtui.core.errors.BusyError`.

    Attributes:
        busy: True when the reason is a process that kept the file open for writing (try
            again), False for a change (reload and look).
        pids: the processes seen holding the file open for writing, when known.
    """

    def __init__(self, message: str, *, busy: bool = False, pids: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.busy = busy
        self.pids = pids


def _renameat2(src: str | os.PathLike[str], dst: str | os.PathLike[str], flags: int) -> bool:
    """``renameat2(src, dst, flags)``; False where the system or file system lacks it.

    Raises:
        OSError: any other failure (``FileExistsError`` for ``RENAME_NOREPLACE``).
    """
    global _renameat2_fn
    if _renameat2_fn is None:
        _renameat2_fn = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                fn = libc.renameat2
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
                fn.restype = ctypes.c_int
                _renameat2_fn = fn
            except (OSError, AttributeError):  # pragma: no cover - old libc
                _renameat2_fn = False
    if _renameat2_fn is False:
        return False
    import ctypes

    result = _renameat2_fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags)  # type: ignore[operator]
    if result == 0:
        return True
    err = ctypes.get_errno()
    if err in (_errno.ENOSYS, _errno.EINVAL, _errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), os.fspath(dst))


class Snapshot:
    """A file as read for a change, with a read-only descriptor kept open on the very inode
    read, so what happens to that inode afterwards can be seen (:func:`replace_exact`).

    Attributes:
        path: the file.
        data: the bytes read.
        dev, ino: the identity of the inode read.
    """

    def __init__(self, path: Path, handle: "object", data: bytes) -> None:
        self.path = path
        self._handle = handle
        self.fd: int = handle.fileno()  # type: ignore[attr-defined]
        st = os.fstat(self.fd)
        self.dev, self.ino = st.st_dev, st.st_ino
        self.data = data

    @classmethod
    def take(cls, path: str | os.PathLike[str]) -> "Snapshot | None":
        """Open and read ``path`` whole; ``None`` when it does not exist.

        Raises:
            OSError: it cannot be read (a folder, permissions).
        """
        try:
            handle = open(path, "rb")  # noqa: SIM115 - kept open on purpose
        except FileNotFoundError:
            return None
        try:
            data = handle.read()
        except BaseException:
            handle.close()
            raise
        return cls(Path(path), handle, data)

    def read_from(self, offset: int) -> bytes:
        """What the inode holds from ``offset`` on, now."""
        chunks: list[bytes] = []
        while True:
            chunk = os.pread(self.fd, 1 << 20, offset)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            offset += len(chunk)

    def close(self) -> None:
        """Close the descriptor (idempotent)."""
        self._release_lease()
        try:
            self._handle.close()  # type: ignore[attr-defined]
        except OSError:  # pragma: no cover
            pass

    # -- "is anyone writing it?" ------------------------------------------------------------
    _leased = False

    def lease(self) -> bool | None:
        """Take a read lease on the inode: True when taken (no process has the file open for
        writing, and one opening it for writing now waits until :meth:`release`); False when a
        process has it open for writing; ``None`` where leases are not available."""
        if _fcntl is None or not hasattr(_fcntl, "F_SETLEASE"):
            return None
        if self._leased:
            return True
        try:
            if hasattr(_fcntl, "F_SETSIG"):  # the lease-break signal: SIGURG is ignored by default
                _fcntl.fcntl(self.fd, _fcntl.F_SETSIG, int(_signal.SIGURG))
            _fcntl.fcntl(self.fd, _fcntl.F_SETLEASE, _fcntl.F_RDLCK)
        except BlockingIOError:
            return False
        except OSError:
            return None
        self._leased = True
        return True

    def lease_kept(self) -> bool:
        """True while the lease is held and no process has started to open the file for writing."""
        if not self._leased or _fcntl is None:
            return False
        try:
            return _fcntl.fcntl(self.fd, _fcntl.F_GETLEASE) == _fcntl.F_RDLCK
        except OSError:  # pragma: no cover
            return False

    def _release_lease(self) -> None:
        if self._leased and _fcntl is not None:
            self._leased = False
            try:
                _fcntl.fcntl(self.fd, _fcntl.F_SETLEASE, _fcntl.F_UNLCK)
            except OSError:  # pragma: no cover
                pass

    release = _release_lease

    def writers(self) -> tuple[int, ...]:
        """Other processes that have this inode open for writing (a ``/proc`` scan; ``()``
        where there is no ``/proc``)."""
        return writer_pids(self.dev, self.ino)

    def no_writers(self) -> bool:
        """True when no other process has the inode open for writing. With a lease, the lease
        stays held (call :meth:`release`)."""
        leased = self.lease()
        if leased is None:
            return not self.writers()
        return leased


def writer_pids(dev: int, ino: int) -> tuple[int, ...]:
    """Process ids (other than this one) with the inode ``(dev, ino)`` open for writing,
    from ``/proc/<pid>/fd`` and ``fdinfo`` (processes this user may not inspect are missed)."""
    found: list[int] = []
    mine = os.getpid()
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return ()
    for pid in pids:
        if int(pid) == mine:
            continue
        folder = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(folder)
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"{folder}/{fd}")
            except OSError:
                continue
            if st.st_ino != ino or st.st_dev != dev:
                continue
            try:
                with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as info:
                    flags = next((int(line.split()[1], 8) for line in info if line.startswith(b"flags:")), 0)
            except (OSError, ValueError, IndexError):
                flags = os.O_WRONLY
            if flags & os.O_ACCMODE != os.O_RDONLY:
                found.append(int(pid))
                break
    return tuple(found)


def describe_pids(pids: tuple[int, ...]) -> str:
    """``process 123 (python3 agent.py)`` for each pid, for messages (credentials in a URL of
    the command line masked)."""
    from memtui.core.text import mask_url

    out = []
    for pid in pids[:3]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                cmd = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            cmd = ""
        out.append(f"process {pid}" + (f" ({mask_url(cmd)[:80]})" if cmd else ""))
    return ", ".join(out) + (f" and {len(pids) - 3} more" if len(pids) > 3 else "")


def _separator(before_tail: bytes, dest_end: bytes) -> bytes:
    """The line break to put between ``dest_end`` (the last bytes of the file carried into)
    and a carried tail that followed ``before_tail`` in the old file: one when the tail began
    a line there and the new file does not end with a line break (nothing otherwise, so a
    tail that continued a line in the old file continues it here as well)."""
    if not before_tail.endswith(b"\n") or not dest_end or dest_end.endswith(b"\n"):
        return b""
    return b"\r\n" if before_tail.endswith(b"\r\n") else b"\n"


def _checkpoint(step: str) -> None:
    """A no-op between the steps of :func:`replace_exact` (tests put outside writers here)."""


@_dataclass
class Installed:
    """What :func:`replace_exact` installed.

    Attributes:
        data: the file's bytes as memtui left it: the new content and any carried appends.
        carried: the bytes of other processes' appends carried into it (in order).
    """

    data: bytes
    carried: bytes = b""


@_dataclass
class _Carried:
    carried: bytes  # the other processes' bytes carried so far
    upto: int       # the old file's length up to which it is read and carried


@_sentences
def replace_exact(path: str | os.PathLike[str], data: bytes, snapshot: Snapshot, *, carry: bool = False,
                  wait: float = WRITER_WAIT) -> Installed:
    """Replace the file ``snapshot`` read with ``data``, atomically, losing nothing another
    process (one that takes no memtui lock) writes into it meanwhile (see the section comment).

    Args:
        path: the file (``snapshot.path``; its folder must exist).
        data: the new content, computed from ``snapshot.data``.
        snapshot: the file as read for the change, its descriptor still open.
        carry: appends made to the file since it was read are carried into the new file (for
            files agents append to: ``graph.jsonl``); without it any change is refused.
        wait: seconds to wait for another process to close the file.

    Returns:
        :class:`Installed`.

    Raises:
        RaceError: another process rewrote, truncated or replaced the file (or appended to it
            without ``carry``), or kept it open for writing past ``wait``; the file then holds
            that process's bytes and nothing of ``data`` stays installed.
        OSError: the write failed; the old file is untouched.
    """
    target = Path(path)
    deadline = time.monotonic() + max(0.0, wait)
    state = _Carried(b"", len(snapshot.data))

    def last_old_bytes() -> bytes:  # the old file's last two bytes before what is not carried yet
        return (snapshot.data[-2:] + state.carried[-2:])[-2:]

    def old_gained() -> bytes:
        """What the old inode gained past what is carried; RaceError for any other change."""
        now = snapshot.read_from(0)
        base = len(snapshot.data)
        if len(now) < state.upto or now[:base] != snapshot.data or now[base:state.upto] != state.carried:
            raise RaceError(f"{target.name} was rewritten by another process while memtui was saving it")
        gained = now[state.upto:]
        if gained and not carry:
            raise RaceError(f"{target.name} was written by another process while memtui was saving it")
        return gained

    def took(gained: bytes) -> None:
        state.carried += gained
        state.upto += len(gained)

    def wait_writers() -> None:
        """Until no other process has the old inode open for writing (leased when possible)."""
        while not snapshot.no_writers():
            if time.monotonic() >= deadline:
                pids = snapshot.writers()
                who = describe_pids(pids) if pids else "another process"
                raise RaceError(f"{target.name} is held open for writing by {who} for more than {wait:g} s",
                                busy=True, pids=pids)
            time.sleep(0.002)

    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    staged = os.fdopen(fd, "r+b")
    try:
        os.chmod(tmp_name, stat.S_IMODE(os.fstat(snapshot.fd).st_mode))
        staged.write(data)
        content = data
        _checkpoint("staged")
        wait_writers()  # with a lease, nobody can open the old file for writing from here to the swap
        gained = old_gained()
        if gained:
            piece = _separator(last_old_bytes(), content[-2:]) + gained
            staged.write(piece)
            content += piece
            took(gained)
        staged.flush()
        os.fsync(staged.fileno())
        _checkpoint("leased")
        exchanged = _renameat2(tmp_name, target, _RENAME_EXCHANGE)
        if exchanged:
            swapped = os.lstat(tmp_name)
            if (swapped.st_dev, swapped.st_ino) != (snapshot.dev, snapshot.ino):
                _renameat2(tmp_name, target, _RENAME_EXCHANGE)  # put theirs back
                _drain_into(target, staged.fileno(), len(content))
                raise RaceError(f"{target.name} was replaced by another process while memtui was saving it")
        else:  # no atomic swap here: check the inode, then rename over (a tiny window stays)
            now = os.stat(target)
            if (now.st_dev, now.st_ino) != (snapshot.dev, snapshot.ino):
                raise RaceError(f"{target.name} was replaced by another process while memtui was saving it")
            os.replace(tmp_name, target)
        _checkpoint("swapped")
        snapshot.release()  # writers held back by the lease now open the old inode: drain them
        while True:
            try:
                wait_writers()
                gained = old_gained()
            except RaceError:
                _undo(target, tmp_name if exchanged else None, snapshot, staged.fileno(), len(content))
                raise
            if gained:
                content += _append(target, last_old_bytes(), gained)
                took(gained)
                continue
            time.sleep(LATE_OPEN_GRACE)  # an open that looked the old name up just before the swap
            if snapshot.lease_kept() or (not snapshot._leased and not snapshot.writers()
                                         and not snapshot.read_from(state.upto)):
                break
            snapshot.release()
        _fsync_dir(target.parent)
        return Installed(content, state.carried)
    finally:
        staged.close()
        snapshot.release()
        try:  # the old file (after a swap) or memtui's own (before one, or after an undo)
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass


@_sentences
def create_exact(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    """Create the file ``path`` with ``data`` atomically, only if it does not exist (a file
    another process created meanwhile is never overwritten).

    Raises:
        RaceError: the file exists now (nothing written).
        OSError: the write failed.
    """
    target = Path(path)
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        try:
            os.link(tmp_name, target)  # fails when the name exists: an atomic create-or-refuse
        except FileExistsError:
            raise RaceError(f"{target.name} was created by another process while memtui was saving it") from None
    finally:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
    _fsync_dir(target.parent)


@_sentences
def remove_exact(path: str | os.PathLike[str], snapshot: Snapshot, *, wait: float = WRITER_WAIT) -> None:
    """Remove the file ``snapshot`` read, only if nobody changed or replaced it since.

    Raises:
        RaceError: another process changed, replaced or holds the file (it stays as they left it).
    """
    target = Path(path)
    deadline = time.monotonic() + max(0.0, wait)
    while not snapshot.no_writers():
        if time.monotonic() >= deadline:
            pids = snapshot.writers()
            raise RaceError(f"{target.name} is held open for writing by "
                            f"{describe_pids(pids) if pids else 'another process'}", busy=True, pids=pids)
        time.sleep(0.002)
    try:
        if snapshot.read_from(0) != snapshot.data:
            raise RaceError(f"{target.name} was written by another process while memtui was removing it")
        aside = target.parent / f".{target.name}.{os.urandom(4).hex()}.tmp"
        os.rename(target, aside)
        moved = os.lstat(aside)
        if (moved.st_dev, moved.st_ino) != (snapshot.dev, snapshot.ino):
            try:
                os.link(aside, target)
            except FileExistsError:
                pass
            os.unlink(aside)
            raise RaceError(f"{target.name} was replaced by another process while memtui was removing it")
        os.unlink(aside)
    finally:
        snapshot.release()
    _fsync_dir(target.parent)


def _append(target: Path, before_tail: bytes, gained: bytes) -> bytes:
    """Append ``gained`` to the file now at ``target``, after :func:`_separator`; returns the
    bytes appended."""
    fd = os.open(target, os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        end = os.pread(fd, 2, max(0, size - 2)) if size else b""
        piece = _separator(before_tail, end) + gained
        view = memoryview(piece)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        return piece
    finally:
        os.close(fd)


def _drain_into(target: Path, fd: int, known: int) -> None:
    """Append to ``target`` what the staged file (``fd``) gained past ``known`` bytes while it
    was installed for a moment (an appender that opened it then)."""
    gained = b""
    while True:
        chunk = os.pread(fd, 1 << 20, known + len(gained))
        if not chunk:
            break
        gained += chunk
    if gained:
        _append(target, b"\n", gained)


def _undo(target: Path, old_name: str | None, snapshot: Snapshot, staged_fd: int, known: int) -> None:
    """Put the other process's file back after a conflict found past the swap (when the file
    at ``target`` is still memtui's); appends made to memtui's file meanwhile follow it."""
    try:
        now = os.stat(target)
    except FileNotFoundError:
        return
    mine = os.fstat(staged_fd)
    if (now.st_dev, now.st_ino) != (mine.st_dev, mine.st_ino):
        return  # someone replaced memtui's file already: theirs stays
    if old_name is not None:
        _renameat2(old_name, target, _RENAME_EXCHANGE)
    else:  # pragma: no cover - systems without renameat2: copy the old inode back
        write_bytes(target, snapshot.read_from(0))
    _drain_into(target, staged_fd, known)
