"""Exceptions raised by ``memtui.core``, each carrying a sentence a user can act on.

The CLI maps them to exit codes by class, in one table (:data:`memtui.cli.EXIT_CODES`):
:class:`WorkspaceError` 2, :class:`RefusedError` (and its kinds) 3, :class:`ExternalError` 4,
every other :class:`MemtuiError` 1. The TUI shows the sentence; ``--json`` adds the error's
``reference`` (where the rule it enforces is written), which the sentence never holds.
"""

from __future__ import annotations


class MemtuiError(Exception):
    """Base class: ``str(exc)`` is a complete sentence saying what is wrong and what to do.

    Attributes:
        reference: where the rule behind the error is written (``"seed 000 §7.4b"``), or
            ``None``; shown by ``--json`` output, never part of the sentence.
    """

    def __init__(self, *args: object, reference: str | None = None) -> None:
        super().__init__(*args)
        self.reference = reference


class WorkspaceError(MemtuiError):
    """The workspace cannot be opened (missing, not a folder, unreadable)."""


class RefusedError(MemtuiError):
    """The action is not allowed (exit code 3): a read-only workspace, a path leading outside
    it, an actor who is not the owner, an unsafe backup."""


class ConfinementError(RefusedError):
    """A path would lead outside the workspace (``..``, an absolute path or a symlink)."""


class ReadOnlyError(RefusedError):
    """A write was attempted where memtui may not write: a workspace opened ``--read-only``,
    one it has no permission to write (or on a read-only file system), a damaged store (bug
    store), or a file memtui never writes (the notebook, the operator files; seed 002).
    ``str(exc)`` names the reason.
    """


class BusyError(MemtuiError):
    """Another process kept the workspace's writer lock longer than a write waits (one write
    takes milliseconds); nothing was written, and trying again is the remedy."""


class ExternalError(MemtuiError):
    """An operation outside memtui failed: git, the network, the keyring (exit code 4)."""


class ConflictError(MemtuiError):
    """A file changed on disk since it was loaded; writing would lose someone's update.

    Attributes:
        path: the file concerned (absolute), when known.
        current: the bytes now on disk (``None`` when the file is now absent or unknown).
        current_hash: the sha256 (hex) of ``current``, ``None`` when the file is absent.
    """

    def __init__(self, message: str, *, path: object = None, current: bytes | None = None,
                 current_hash: str | None = None, reference: str | None = None) -> None:
        super().__init__(message, reference=reference)
        self.path = path
        self.current = current
        self.current_hash = current_hash


# -- a write the system refused: a full disk, a read-only file system ---------------------------
class DiskFullError(ExternalError, OSError):
    """The disk (or the user's quota) is full: the write did not happen and the file keeps its
    previous bytes (exit code 4: the file system, outside memtui, failed). An ``OSError`` too,
    with the system's ``errno`` (``ENOSPC``, ``EDQUOT``), so code handling ``OSError`` still does."""


class WriteRefusedError(ReadOnlyError, OSError):
    """The system refused the write: a read-only file system (``EROFS``) or no permission
    (``EACCES``, ``EPERM``); nothing was written (exit code 3: refused). An ``OSError`` too."""


_FULL = {28: "the disk is full", 122: "your disk quota is used up"}  # ENOSPC, EDQUOT (Linux)
_REFUSED = {30: "the file system is read-only", 13: "permission denied", 1: "the operation is not permitted"}


def write_failure(exc: OSError, target: object = None) -> "DiskFullError | WriteRefusedError | None":
    """The sentence error for a write that failed with ``exc``, or ``None`` when ``exc`` is not
    a full disk (``ENOSPC``, ``EDQUOT``) or a refusal (``EROFS``, ``EACCES``, ``EPERM``).

    Args:
        exc: the system's error.
        target: the file or folder being written (default ``exc.filename``), named in the sentence.

    Returns:
        A :class:`DiskFullError` or :class:`WriteRefusedError` whose ``str`` is a complete
        sentence (what happened, that nothing was written, what to do), with ``errno``
        copied from ``exc``; ``exc`` itself when it already is one.
    """
    if isinstance(exc, (DiskFullError, WriteRefusedError)):
        return exc
    import errno as _errno
    import os as _os

    code = exc.errno
    where = target if target is not None else exc.filename
    shown = f" to {_os.fsdecode(where)}" if isinstance(where, (str, bytes, _os.PathLike)) else ""
    error: DiskFullError | WriteRefusedError
    if code in (_errno.ENOSPC, getattr(_errno, "EDQUOT", 122)):
        what = _FULL.get(code or 0, "the disk is full")
        error = DiskFullError(f"{what}: nothing was written{shown} (the file keeps what it held); "
                              "free some space and try again.")
    elif code in (_errno.EROFS, _errno.EACCES, _errno.EPERM):
        what = _REFUSED.get(code or 0, "the write was refused")
        error = WriteRefusedError(f"memtui may not write{shown}: {what}; nothing was written. "
                                  "Make the place writable, or open the workspace with --read-only to browse.")
    else:
        return None
    error.errno = code  # (no filename: OSError's str would then replace the sentence)
    return error
