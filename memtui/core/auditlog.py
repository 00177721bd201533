"""The audit log: an append-only table of every write memtui made (DESIGN.md §4 invariant 7).

Each entry says when (UTC), who (the acting profile), what (the action, such as
``notes.set``), on what (the target, workspace-relative), the content hash before and
after, and the client id of the request.

Client ids carry seed 004's lesson ("an append-only log without a client id is a duplicate
on every timeout"): a retried write sends the same client id, and the one guarded write
(:meth:`memtui.core.session.Session.write`) returns the entry it already wrote instead of
doing the change again; a reused client id with *another request* is a conflict
(:class:`ClientIdConflict`), and the first entry stays. Each entry keeps the
:func:`request_key` of what was asked, so "the same request" is decided by one rule for every
writer. A write without a client id gets a fresh random one.

Entries are only ever added: :class:`AuditLog` has no update or delete, and the store's
storage refuses any write that would change or remove an existing audit record
(:data:`memtui.core.store.APPEND_ONLY_TABLES`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from tinydb import Query

from memtui.core.errors import ConflictError
from memtui.core.paging import Page
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
        request: :func:`request_key` of what was asked, to recognise a retry (``None`` in
            entries of older memtui versions).
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
    request: str | None = None

    def same_request(self, action: str, target: str, key: str) -> bool:
        """True when a request of ``action`` on ``target`` with :func:`request_key` ``key`` is
        the one this entry recorded (a retry)."""
        return (self.action, self.target, self.request) == (action, target, key)

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON-ready dict (the keys of the attributes)."""
        return asdict(self)


def _entry(doc: Any) -> AuditEntry:
    return AuditEntry(
        time=str(doc.get("time", "")), profile=doc.get("profile"), action=str(doc.get("action", "")),
        target=str(doc.get("target", "")), before=doc.get("before"), after=doc.get("after"),
        client_id=str(doc.get("client_id", "")), detail=dict(doc.get("detail") or {}),
        id=int(getattr(doc, "doc_id", 0)), request=doc.get("request"))


def request_key(action: str, target: str, request: Any) -> str:
    """The SHA-256 hex of a request: its action, target and the JSON of what was asked (keys
    sorted), so two calls are "the same request" exactly when this is equal."""
    blob = json.dumps([action, target, request], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


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

    def append(self, action: str, target: str, before: str | None, after: str | None, *,
               client_id: str | None = None, request: str | None = None,
               detail: dict[str, Any] | None = None) -> AuditEntry:
        """Append an entry (call only inside :meth:`memtui.core.session.Session.write`, which
        has already looked the client id up).

        Args:
            action: ``<area>.<verb>``.
            target: workspace-relative path or record name.
            before: sha256 hex before (``None``: did not exist).
            after: sha256 hex after (``None``: no longer exists).
            client_id: the caller's id for this request; a random one when ``None``.
            request: :func:`request_key` of the request.
            detail: extra JSON-safe facts.

        Returns:
            The stored entry.

        Raises:
            ReadOnlyError: the store is read-only. MemtuiError: not inside a guarded write.
        """
        self.store.require_writable()
        now = _dt.datetime.now(_dt.timezone.utc).isoformat()
        entry = AuditEntry(now, self.profile, action, target, before, after,
                           client_id or new_client_id(), dict(detail or {}), 0, request)
        data = entry.to_json()
        del data["id"]
        doc_id = self._table().insert(data)
        return AuditEntry(**{**entry.to_json(), "id": doc_id})

    def entries(self, limit: int | None = None, newest_first: bool = True) -> list[AuditEntry]:
        """The log, newest first by default; at most ``limit`` entries (1 or more; all when
        ``None``).

        Raises:
            ValueError: ``limit`` below 1.
        """
        if newest_first:
            return self.page(limit).items
        return Page.of([_entry(d) for d in sorted(self._table().all(), key=lambda d: d.doc_id)],
                       0, limit).items

    def page(self, limit: int | None = None, before: int | None = None) -> Page[AuditEntry]:
        """One page of the log, newest first, for ``memtui log``.

        Args:
            limit: most entries on the page (1 or more; all when ``None``).
            before: only entries older than the entry with this id (the previous page's
                ``next``); entries appended meanwhile never shift a page.

        Returns:
            A :class:`~memtui.core.paging.Page` whose ``total`` is the whole log's size and
            whose ``next`` is the id to pass as ``before`` for the following page.

        Raises:
            ValueError: ``limit`` below 1.
        """
        docs = sorted(self._table().all(), key=lambda d: d.doc_id, reverse=True)
        older = [d for d in docs if before is None or d.doc_id < before]
        shown = Page.of(older, 0, limit)
        more = shown.next is not None
        return Page([_entry(d) for d in shown.items], len(docs), shown.items[-1].doc_id if more else None)
