"""The writable workspace session: what every writer in memtui goes through.

A :class:`Session` bundles the four things a write needs (DESIGN.md §4 invariants 1, 2, 7):

- the :class:`~memtui.core.workspace.Workspace` (paths, settings, confinement);
- the writer lock (:mod:`memtui.core.lock`): held for the session's life, so only one
  memtui writes a workspace at a time;
- the store (:mod:`memtui.core.store`) and its audit log (:mod:`memtui.core.auditlog`);
- the acting profile recorded in the audit log.

When the lock is held by another process, ``.memtui`` cannot be written, or the store is
damaged, the session is **read-only**: reading works, and :meth:`Session.require_writable`
(which every write calls first) raises :class:`~memtui.core.errors.ReadOnlyError` with the
sentence saying why (for a held lock: which process holds which lock file). The TUI keeps
one session open for its whole life; a CLI command opens one for its run::

    with Session.open(workspace, purpose="cli notes set") as session:
        session.require_writable()
        ...  # write atomically, then session.audit.record(...)

Usage across issues: the graph, governance and backup writers take a ``Session`` and call
``require_writable()`` before touching anything.
"""

from __future__ import annotations

import os
from pathlib import Path

from memtui.core import atomic, lock
from memtui.core.auditlog import AuditLog
from memtui.core.errors import MemtuiError, ReadOnlyError
from memtui.core.findings import Finding
from memtui.core.store import Store
from memtui.core.workspace import Workspace

#: Environment variable naming the acting profile (wins over ``[user] profile``).
PROFILE_ENV = "MEMTUI_PROFILE"


def resolve_profile(ws: Workspace, given: str | None = None) -> str | None:
    """The acting profile: ``given``, else ``$MEMTUI_PROFILE``, else ``[user] profile``, else None."""
    for candidate in (given, os.environ.get(PROFILE_ENV), ws.config.profile):
        if candidate and candidate.strip():
            return candidate.strip()
    return None


class Session:
    """An opened workspace, writable if this process holds the writer lock.

    Attributes:
        ws: the workspace.
        lock: the held :class:`~memtui.core.lock.WriterLock`, or ``None`` when read-only.
        store: the store (read-only when the session is).
        audit: the audit log, recording entries as :attr:`profile`.
        profile: the acting profile (see :func:`resolve_profile`), or ``None``.
        reason: why the session is read-only (a complete sentence), or ``None``.
        findings: ``workspace-read-only`` / ``store-damaged`` findings met on opening.
    """

    def __init__(self, ws: Workspace, writer_lock: lock.WriterLock | None, store: Store,
                 profile: str | None, reason: str | None, findings: list[Finding]) -> None:
        self.ws = ws
        self.lock = writer_lock
        self.store = store
        self.profile = profile
        self.reason = reason
        self.findings = findings
        self.audit = AuditLog(store, profile)

    @classmethod
    def open(cls, workspace: Workspace | str | os.PathLike[str], *, purpose: str = "cli",
             wait: float = 0.0, profile: str | None = None, read_only: bool = False) -> "Session":
        """Open a session on ``workspace``.

        Args:
            workspace: an opened :class:`Workspace` or its folder.
            purpose: recorded with the lock for other memtui processes to read: ``"tui"``
                or ``"cli <command>"``.
            wait: seconds to wait for a CLI holder to finish (never for a TUI holder).
            profile: the acting profile (see :func:`resolve_profile`).
            read_only: do not even try to take the lock.

        Returns:
            A :class:`Session`; never raises for a held lock or a damaged store (it is then
            read-only with :attr:`reason`). Temporary files left by an interrupted write of
            the store or the member notes are removed once the lock is ours.

        Raises:
            WorkspaceError: the folder cannot be opened.
        """
        ws = workspace if isinstance(workspace, Workspace) else Workspace.open(workspace)
        findings: list[Finding] = []
        reason: str | None = None
        writer_lock: lock.WriterLock | None = None
        if read_only:
            reason = "This memtui opened the workspace read-only."
        else:
            try:
                writer_lock = lock.acquire(ws.root, purpose, wait=wait)
            except ReadOnlyError as exc:
                reason = str(exc)
                findings.append(Finding.make("workspace-read-only", ".memtui/lock", reason,
                                             "close the other memtui to edit here"))
        if writer_lock is not None:  # we are the only memtui writer now: sweep our own litter
            atomic.remove_leftovers(ws.state_dir / "store.json")
            atomic.remove_leftovers(ws.member_notes)
        store = Store.open(ws, read_only=reason is not None, reason=reason)
        if store.damaged:
            findings.extend(store.findings)
            reason = store.reason
            if writer_lock is not None:
                writer_lock.release()
                writer_lock = None
        session = cls(ws, writer_lock, store, resolve_profile(ws, profile), reason, findings)
        if reason is None and "intents" in store.tables():
            # complete a governance change an interrupted memtui left (governance.recover)
            from memtui.core import governance
            try:
                governance.recover(session)
            except MemtuiError as exc:
                findings.append(Finding.make("governance-pending", ".memtui/store.json", str(exc),
                                             "look at the file named, then run the command again"))
        return session

    @property
    def read_only(self) -> bool:
        """True when writes refuse (see :attr:`reason`)."""
        return self.reason is not None

    def require_writable(self) -> None:
        """Raise :class:`ReadOnlyError` with :attr:`reason` unless this session may write."""
        if self.reason is not None:
            raise ReadOnlyError(self.reason)
        if self.lock is None or not self.lock.held:
            raise ReadOnlyError("This memtui session is closed; open the workspace again to write.")

    @property
    def lock_path(self) -> Path:
        """``<workspace>/.memtui/lock``."""
        return self.ws.state_dir / lock.LOCK_NAME

    def close(self) -> None:
        """Close the store and give the writer lock back (idempotent)."""
        self.store.close()
        if self.lock is not None:
            self.lock.release()
        if self.reason is None:
            self.reason = "This memtui session is closed; open the workspace again to write."

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
