"""One writer at a time, for one write at a time (DESIGN.md §4 invariant 2).

The writer lock is ``.memtui/lock``, held with an exclusive ``flock`` for the duration of one
guarded write (:meth:`memtui.core.session.Session.write`) and never while memtui waits for a
person or the network, so an open TUI blocks an agent's ``memtui propose`` for at most one
write. Beside it, ``.memtui/lock.holder.json`` records who holds it: process id, host, start
time and what the process is doing (``"tui"``, ``"cli notes set"``), so a memtui that waited
too long can say which process holds which lock file.

Why ``flock`` and not a lock file that merely exists: the kernel releases a ``flock`` when
its holder dies, however it dies (SIGKILL, power loss of a client, closed terminal), so a
lock left by a dead process is recovered by the next ``acquire`` with no guess about
whether a recorded pid is still alive. The lock file itself is never deleted (deleting it
would let two processes lock two different files); the holder record of a dead process is
simply overwritten. The lock file descriptor is not inherited by child processes (an
``$EDITOR`` started by memtui cannot keep the lock alive).

Limits: ``flock`` is advisory and local; on a network file system shared by two machines it
may not exclude. On platforms without ``fcntl`` (Windows) ``msvcrt.locking`` on the lock
file's first byte gives the same exclusion.
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import socket
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from memtui.core import atomic, jsonio
from memtui.core.errors import BusyError, ConfinementError, DiskFullError, ReadOnlyError
from memtui.core.files import confine

try:  # POSIX
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None  # type: ignore[assignment]

LOCK_NAME = "lock"
HOLDER_NAME = "lock.holder.json"


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds (or last held) a writer lock.

    Attributes:
        pid: the holder's process id.
        host: the holder's host name (``socket.gethostname()``).
        started: when it took the lock (ISO 8601, UTC, seconds).
        purpose: what the process is doing: ``"tui"`` or ``"cli <command>"``.
    """

    pid: int
    host: str
    started: str
    purpose: str

    @classmethod
    def me(cls, purpose: str) -> "Holder":
        """The record for this process, taking the lock now for ``purpose``."""
        now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
        return cls(os.getpid(), socket.gethostname(), now, purpose)

    def alive(self) -> bool | None:
        """True/False when the holder runs on this host and is/is not alive; None elsewhere."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        except OSError:
            return None
        return True

    def describe(self) -> str:
        """``memtui (tui), process 1234 on host h, since 2026-…`` for messages."""
        return f"memtui ({self.purpose}), process {self.pid} on host {self.host}, since {self.started}"


def _read_holder(path: Path) -> Holder | None:
    try:
        data = jsonio.loads(path.read_bytes())
        return Holder(int(data["pid"]), str(data["host"]), str(data["started"]), str(data["purpose"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


class WriterLock:
    """The writer lock of one workspace, held by this process.

    Obtain one with :func:`acquire`; give it back with :meth:`release` (or ``with``).

    Attributes:
        path: the lock file ``<workspace>/.memtui/lock``.
        holder_path: the holder record beside it.
        holder: this process's record.
    """

    def __init__(self, path: Path, holder_path: Path, fd: int, holder: Holder) -> None:
        self.path = path
        self.holder_path = holder_path
        self.holder = holder
        self._fd: int | None = fd

    def release(self) -> None:
        """Give the lock back (idempotent); removes the holder record if it is still ours.

        The lock is released even when removing the record fails or is interrupted: a
        process must never keep the lock past its write.
        """
        fd = self._fd
        if fd is None:
            return
        self._fd = None
        try:
            if _read_holder(self.holder_path) == self.holder:
                os.unlink(self.holder_path)
        except OSError:
            pass
        finally:
            try:
                _unlock(fd)
            finally:
                os.close(fd)

    def __enter__(self) -> "WriterLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:  # pragma: no cover - safety net
        try:
            self.release()
        except Exception:
            pass


def _try_lock(fd: int) -> bool:
    if _fcntl is not None:
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    import msvcrt  # pragma: no cover - Windows

    try:  # pragma: no cover
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:  # pragma: no cover
        return False
    return True  # pragma: no cover


def _unlock(fd: int) -> None:
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
        return
    import msvcrt  # pragma: no cover - Windows

    try:  # pragma: no cover
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    except OSError:  # pragma: no cover
        pass


def holder_of(root: Path) -> Holder | None:
    """The recorded holder of the workspace at ``root`` (may be stale if nobody holds it)."""
    return _read_holder(Path(root) / ".memtui" / HOLDER_NAME)


def busy(lock_path: Path, holder: Holder | None, waited: float) -> str:
    """The sentence a write says when another process kept ``lock_path`` past ``waited`` s."""
    if holder is None:
        who = "another process (it has not recorded who it is)"
    elif holder.alive() is False:
        who = (f"another process; the last recorded holder, {holder.describe()}, has exited, "
               "so a process it started may still hold it")
    else:
        who = holder.describe()
    return (f"The workspace is busy: {who} has held the writer lock {lock_path} for more than "
            f"{waited:g} s, so nothing was written. Try again in a moment; if it stays busy, "
            "look at that process.")


def _paths(root: Path) -> tuple[Path, Path, Path]:
    """``(.memtui, lock, holder record)`` of the workspace at ``root``, confined.

    Raises:
        ReadOnlyError: ``.memtui`` or the lock is a symlink leading outside the workspace.
    """
    try:
        return (confine(root, ".memtui"), confine(root, f".memtui/{LOCK_NAME}"),
                confine(root, f".memtui/{HOLDER_NAME}"))
    except ConfinementError as exc:
        raise ReadOnlyError(f"The workspace is open read-only: {exc}") from exc


#: ``.memtui/.gitignore``: memtui's state (store, index, lock) is never part of a git checkout
#: the workspace lives in (opening a repository dirtied its ``git status``).
GITIGNORE = b"# memtui's own state (store, search index, writer lock): not for this repository.\n*\n"


def _ignore_in_git(state: Path) -> None:
    """Write ``.memtui/.gitignore`` in a ``.memtui`` folder memtui has just created (with the
    lock: opening a workspace writes nothing else but the index, DESIGN.md §2). An existing
    folder is left as its owner keeps it; a failure to write is not fatal (the lock says why)."""
    try:
        fd = os.open(state / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError:
        return
    try:
        os.write(fd, GITIGNORE)
    finally:
        os.close(fd)


def _open(root: Path) -> tuple[int, Path, Path]:
    state, lock_path, holder_path = _paths(root)
    try:
        if not os.path.lexists(state):
            state.mkdir(exist_ok=True)
            _ignore_in_git(state)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(lock_path, flags, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", 122)):
            raise DiskFullError(
                f"the disk is full: memtui cannot create its writer lock {lock_path}, so nothing was "
                "written; free some space and try again.") from exc
        raise ReadOnlyError(
            f"The workspace is open read-only: memtui cannot create its writer lock {lock_path} "
            f"({exc.strerror or exc}). Check that the workspace folder is writable.") from exc
    if sys.platform != "win32":
        os.set_inheritable(fd, False)
    return fd, lock_path, holder_path


def probe(root: Path) -> None:
    """Check that this process could take the writer lock of the workspace at ``root``
    (``.memtui`` creatable, the lock file openable for writing), without taking it.

    Raises:
        ReadOnlyError: with the sentence saying why the workspace cannot be written
            (read-only file system, permissions, ``.memtui`` leading outside).
        DiskFullError: the disk is too full to create the lock.
    """
    fd, _, _ = _open(Path(root))
    os.close(fd)


class LockBusyError(BusyError):
    """Another process kept the writer lock longer than this one would wait (one write should
    take well under a second); ``str(exc)`` names the holder. Nothing was written: try again."""


def acquire(root: Path, purpose: str, *, wait: float = 0.0, poll: float = 0.01) -> WriterLock:
    """Take the writer lock of the workspace at ``root`` for one write.

    Args:
        root: the workspace folder.
        purpose: what this process is, recorded for others: ``"tui"`` or ``"cli notes set"``.
        wait: seconds to keep trying while another process holds it (every holder holds it
            for one write only, so a short wait nearly always succeeds).
        poll: seconds between tries.

    Returns:
        A held :class:`WriterLock`; give it back with :meth:`WriterLock.release` (or ``with``).

    Raises:
        LockBusyError: another process still held it after ``wait`` seconds (the message
            says which process holds which lock file).
        DiskFullError: the lock cannot be created because the disk is full.
        ReadOnlyError: ``.memtui`` cannot be created or written (read-only file system,
            permissions), or ``.memtui``/the lock is a symlink leading outside.
    """
    fd, lock_path, holder_path = _open(Path(root))
    deadline = time.monotonic() + max(0.0, wait)
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            os.close(fd)
            holder = _read_holder(holder_path)
            if holder is None:  # the holder may be between locking and recording: look again
                time.sleep(0.05)
                holder = _read_holder(holder_path)
            raise LockBusyError(busy(lock_path, holder, wait))
        time.sleep(poll)
    me = Holder.me(purpose)
    try:  # advisory: who holds it, for a waiting process's message; a full disk must not stop it
        atomic.remove_leftovers(holder_path)
        atomic.write_bytes(holder_path, json.dumps(asdict(me), indent=1).encode("utf-8") + b"\n",
                           durable=False)
    except OSError:
        pass
    return WriterLock(lock_path, holder_path, fd, me)
