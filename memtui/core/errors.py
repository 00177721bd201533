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
    """A write was attempted on a workspace opened read-only (another memtui holds the lock)."""


class ConflictError(MemtuiError):
    """A file changed on disk since it was loaded; writing would lose someone's update."""
