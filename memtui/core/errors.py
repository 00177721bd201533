"""Exceptions raised by ``memtui.core``, each carrying a sentence a user can act on.

The CLI maps them to exit codes by class, in one table (:data:`memtui.cli.EXIT_CODES`):
:class:`WorkspaceError` 2, :class:`RefusedError` (and its kinds) 3, :class:`ExternalError` 4,
every other :class:`MemtuiError` 1. The TUI shows the sentence.
"""

from __future__ import annotations


class MemtuiError(Exception):
    """Base class: ``str(exc)`` is a complete sentence saying what is wrong and what to do."""


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
    input B01), or a file memtui never writes (the notebook, the operator files; seed 002).
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
                 current_hash: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.current = current
        self.current_hash = current_hash
