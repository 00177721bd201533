"""One writer per workspace (DESIGN.md §4 invariant 2; bug input B04).

The writer lock is ``.memtui/lock``, held with an exclusive ``flock`` for as long as a
memtui process may write (the whole TUI session, or one CLI command). Beside it,
``.memtui/lock.holder.json`` records who holds it: process id, host, start time and what
the process is (``"tui"``, ``"cli notes set"``), so a second memtui can say which process
holds which lock file.

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
import json
import os
import socket
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from memtui.core import atomic
from memtui.core.errors import ConfinementError, ReadOnlyError
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
        data = json.loads(path.read_bytes())
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

    @property
    def held(self) -> bool:
        """True until :meth:`release`."""
        return self._fd is not None

    def release(self) -> None:
        """Give the lock back (idempotent); removes the holder record if it is still ours."""
        if self._fd is None:
            return
        current = _read_holder(self.holder_path)
        if current == self.holder:
            try:
                self.holder_path.unlink()
            except OSError:
                pass
        _unlock(self._fd)
        os.close(self._fd)
        self._fd = None

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


def refusal(lock_path: Path, holder: Holder | None) -> str:
    """The sentence every refused write says when another memtui holds ``lock_path``."""
    if holder is None:
        who = "another process (it has not recorded who it is)"
    elif holder.alive() is False:
        who = (f"another process; the last recorded holder, {holder.describe()}, has exited, "
               "so a process it started may still hold it")
    else:
        who = holder.describe()
    return (f"The workspace is open read-only: {who} holds the writer lock {lock_path}. "
            "Close that memtui (or wait for it to finish) and try again.")


def acquire(root: Path, purpose: str, *, wait: float = 0.0, poll: float = 0.05) -> WriterLock:
    """Take the writer lock of the workspace at ``root``.

    Args:
        root: the workspace folder.
        purpose: what this process is, recorded for others: ``"tui"`` or ``"cli notes set"``.
        wait: seconds to keep trying while another *short-lived* holder (a CLI command) has
            it; a TUI holder is never waited for (it may stay open for hours).
        poll: seconds between tries.

    Returns:
        A held :class:`WriterLock`.

    Raises:
        ReadOnlyError: another process holds the lock (the message says which process holds
            which lock file), or ``.memtui`` cannot be created or written (read-only file
            system, permissions), or ``.memtui``/the lock is a symlink leading outside.
    """
    root = Path(root)
    try:
        state = confine(root, ".memtui")
        lock_path = confine(root, f".memtui/{LOCK_NAME}")
        holder_path = confine(root, f".memtui/{HOLDER_NAME}")
    except ConfinementError as exc:
        raise ReadOnlyError(f"The workspace is open read-only: {exc}") from exc
    try:
        state.mkdir(exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(lock_path, flags, 0o644)
    except OSError as exc:
        raise ReadOnlyError(
            f"The workspace is open read-only: memtui cannot create its writer lock {lock_path} "
            f"({exc.strerror or exc}). Check that the workspace folder is writable.") from exc
    if sys.platform != "win32":
        os.set_inheritable(fd, False)
    deadline = time.monotonic() + max(0.0, wait)
    while True:
        if _try_lock(fd):
            break
        holder = _read_holder(holder_path)
        if time.monotonic() >= deadline or (holder is not None and holder.purpose == "tui"):
            os.close(fd)
            if holder is None:  # the holder may be between locking and recording: look again
                time.sleep(min(poll, 0.05))
                holder = _read_holder(holder_path)
            raise ReadOnlyError(refusal(lock_path, holder))
        time.sleep(poll)
    me = Holder.me(purpose)
    try:
        atomic.remove_leftovers(holder_path)
        atomic.write_bytes(holder_path, json.dumps(asdict(me), indent=1).encode("utf-8") + b"\n")
    except OSError as exc:
        _unlock(fd)
        os.close(fd)
        raise ReadOnlyError(
            f"The workspace is open read-only: memtui cannot write {holder_path} "
            f"({exc.strerror or exc}). Check that the workspace folder is writable.") from exc
    return WriterLock(lock_path, holder_path, fd, me)
