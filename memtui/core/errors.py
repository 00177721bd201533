"""Exceptions raised by ``memtui.core``, each carrying a sentence a user can act on.

The CLI maps them to exit codes (``memtui.cli.ExitCode``); the TUI shows the sentence.
"""

from __future__ import annotations


class MemtuiError(Exception):
    """Base class: ``str(exc)`` is a complete sentence saying what is wrong and what to do."""


class WorkspaceError(MemtuiError):
    """The workspace cannot be opened (missing, not a folder, unreadable)."""


class ConfinementError(MemtuiError):
    """A path would lead outside the workspace (``..``, an absolute path or a symlink)."""


class ReadOnlyError(MemtuiError):
    """A write was attempted on a workspace opened read-only (another memtui holds the lock).

    Also raised for files memtui never writes (the notebook, the operator files; seed 002)
    and for a damaged store (bug input B01). ``str(exc)`` names the reason: for a held lock,
    which process holds which lock file.
    """


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
