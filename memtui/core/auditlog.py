"""The audit log: an append-only table of every write memtui made (DESIGN.md §4 invariant 7).

Each entry says when (UTC), who (the acting profile), what (the action, such as
``notes.set``), on what (the target, workspace-relative), the content hash before and
after, and the client id of the request.

Client ids carry seed 004's lesson ("an append-only log without a client id is a duplicate
on every timeout"): a retried write sends the same client id, and the log returns the entry
it already wrote instead of adding a second one; a reused client id with *different*
content is a conflict (:class:`ClientIdConflict`), and the first entry stays. A write
without a client id gets a fresh random one.

Entries are only ever added: :class:`AuditLog` has no update or delete, and the store's
storage refuses any write that would change or remove an existing audit record
(:data:`memtui.core.store.APPEND_ONLY_TABLES`).
"""

from __future__ import annotations

import datetime as _dt
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from tinydb import Query

from memtui.core.errors import ConflictError
from memtui.core.store import Store

TABLE = "audit"


class ClientIdConflict(ConflictError):
    """A client id already names an audit entry with different content (seed 004).

    Attributes:
        existing: the entry first recorded under that client id (it stays).
    """

    def __init__(self, message: str, existing: "AuditEntry") -> None:
        super().__init__(message)
        self.existing = existing


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One audit record.

    Attributes:
        time: when the write happened, ISO 8601 UTC with microseconds (``…+00:00``).
        profile: the acting profile, or ``None`` when none is configured.
        action: what was done, ``<area>.<verb>`` (``notes.set``, ``store.set-aside``).
        target: the file or record concerned, workspace-relative with ``/``.
        before: sha256 hex of the content before, ``None`` when it did not exist.
        after: sha256 hex of the content after, ``None`` when it no longer exists.
        client_id: the request's id (given by the caller for retries, else random).
        detail: extra JSON-safe facts (sizes, the reason of a choice).
        id: the record's number in the table (0 before it is stored).
    """

    time: str
    profile: str | None
    action: str
    target: str
    before: str | None
    after: str | None
    client_id: str
    detail: dict[str, Any] = field(default_factory=dict)
    id: int = 0

    def same_request(self, action: str, target: str, before: str | None, after: str | None) -> bool:
        """True when a write of ``action`` on ``target`` from ``before`` to ``after`` is this one."""
        return (self.action, self.target, self.before, self.after) == (action, target, before, after)

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON-ready dict (the keys of the attributes)."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Recorded:
    """What :meth:`AuditLog.record` did.

    Attributes:
        entry: the entry now in the log for this client id.
        new: ``False`` when the client id was already recorded with the same content
            (a retry: nothing was added).
    """

    entry: AuditEntry
    new: bool


def _entry(doc: Any) -> AuditEntry:
    return AuditEntry(
        time=str(doc.get("time", "")), profile=doc.get("profile"), action=str(doc.get("action", "")),
        target=str(doc.get("target", "")), before=doc.get("before"), after=doc.get("after"),
        client_id=str(doc.get("client_id", "")), detail=dict(doc.get("detail") or {}),
        id=int(getattr(doc, "doc_id", 0)))


def new_client_id() -> str:
    """A fresh random client id (32 hex digits)."""
    return uuid.uuid4().hex


class AuditLog:
    """The audit table of one store.

    Args:
        store: the opened store (writes need it writable).
        profile: the acting profile recorded in new entries.
    """

    def __init__(self, store: Store, profile: str | None = None) -> None:
        self.store = store
        self.profile = profile

    def _table(self):  # noqa: ANN202 - TinyDB Table
        return self.store.table(TABLE)

    def find(self, client_id: str) -> AuditEntry | None:
        """The entry recorded under ``client_id``, or ``None``."""
        docs = self._table().search(Query().client_id == client_id)
        return _entry(docs[0]) if docs else None

    def check(self, client_id: str | None, action: str, target: str, before: str | None,
              after: str | None) -> AuditEntry | None:
        """Look ``client_id`` up before writing.

        Returns:
            The entry already recorded for this very request (a retry: do not write again),
            or ``None`` when the id is new (or not given).

        Raises:
            ClientIdConflict: the id names an entry with different content.
        """
        if not client_id:
            return None
        existing = self.find(client_id)
        if existing is None:
            return None
        if existing.same_request(action, target, before, after):
            return existing
        raise ClientIdConflict(
            f"client id {client_id!r} was already used on {existing.time} for {existing.action} "
            f"on {existing.target} with other content; that entry stays. Use a new client id "
            "for a new change.", existing)

    def record(self, action: str, target: str, before: str | None, after: str | None, *,
               client_id: str | None = None, detail: dict[str, Any] | None = None) -> Recorded:
        """Append an entry, unless ``client_id`` already recorded this very request.

        Args:
            action: ``<area>.<verb>``.
            target: workspace-relative path or record name.
            before: sha256 hex before (``None``: did not exist).
            after: sha256 hex after (``None``: no longer exists).
            client_id: the caller's id for this request; a random one when ``None``.
            detail: extra JSON-safe facts.

        Returns:
            :class:`Recorded` with the entry and whether it was added now.

        Raises:
            ClientIdConflict: ``client_id`` was used before with different content.
            ReadOnlyError: the store is read-only (lock held elsewhere, or damaged).
        """
        self.store.require_writable()
        existing = self.check(client_id, action, target, before, after)
        if existing is not None:
            return Recorded(existing, False)
        now = _dt.datetime.now(_dt.timezone.utc).isoformat()
        entry = AuditEntry(now, self.profile, action, target, before, after,
                           client_id or new_client_id(), dict(detail or {}))
        data = entry.to_json()
        del data["id"]
        doc_id = self._table().insert(data)
        return Recorded(AuditEntry(**{**entry.to_json(), "id": doc_id}), True)

    def entries(self, limit: int | None = None, newest_first: bool = True) -> list[AuditEntry]:
        """The log, newest first by default; at most ``limit`` entries."""
        docs = sorted(self._table().all(), key=lambda d: d.doc_id, reverse=newest_first)
        if limit is not None:
            docs = docs[: max(0, limit)]
        return [_entry(d) for d in docs]
