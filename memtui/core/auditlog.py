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

The log is tamper-evident (seed 000 §7.4b: "every memory write is an audit record"; §4 rule 7):
each entry carries its sequence number ``seq``, the hash of the entry before it (``prev``) and
its own hash (``hash``, SHA-256 over every other field), and the store keeps the chain's head
(the last ``seq`` and ``hash``) in the ``audit_head`` table, written in the same atomic commit.
:func:`verify` walks the chain and names the first entry that was changed, removed, or cut off
the end. Entries written before the chain existed stay readable; the chain starts at the first
new entry (``chain_start``), which links to the hash of the last older entry, and :func:`verify`
says where it starts. Each entry also records, beside the claimed profile (``--as``), the OS
user and the host that made it.
"""

from __future__ import annotations

import datetime as _dt
import getpass
import hashlib
import json
import socket
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from tinydb import Query
from tinydb.table import Document

from memtui.core.errors import ConflictError
from memtui.core.findings import Finding
from memtui.core.frontmatter import json_safe
from memtui.core.paging import Page
from memtui.core.store import STORE_NAME, Store

TABLE = "audit"
#: The table holding the chain's head: one record, the last entry's ``seq`` and ``hash``.
HEAD_TABLE = "audit_head"


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
        os_user: the operating-system user that made the write (``None`` when unknown, and in
            entries of older memtui versions).
        host: the host name of the machine that made the write.
        seq: the entry's number in the hash chain (``None`` before the chain existed).
        prev: the hash of the entry before (``None`` for the first entry of an empty log).
        hash: SHA-256 hex of this entry's fields except ``id`` and ``hash`` (:func:`entry_hash`).
        chain_start: True on the entry that starts the chain (the first one written by a
            memtui that keeps the chain, or after the head record was lost).
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
    os_user: str | None = None
    host: str | None = None
    seq: int | None = None
    prev: str | None = None
    hash: str | None = None
    chain_start: bool = False

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
        id=int(getattr(doc, "doc_id", 0)), request=doc.get("request"),
        os_user=doc.get("os_user"), host=doc.get("host"),
        seq=doc.get("seq") if isinstance(doc.get("seq"), int) else None,
        prev=doc.get("prev"), hash=doc.get("hash"), chain_start=bool(doc.get("chain_start")))


def entry_hash(doc: Any) -> str:
    """SHA-256 hex of an audit record as stored: every field except ``id`` and ``hash``, as
    JSON with sorted keys and ASCII escapes (so any stored text hashes the same way)."""
    data = {k: v for k, v in dict(doc).items() if k not in ("id", "hash")}
    blob = json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("ascii")).hexdigest()


def os_identity() -> tuple[str | None, str | None]:
    """The OS user and host name of this process (``None`` for what cannot be told)."""
    try:
        user: str | None = getpass.getuser()
    except (KeyError, OSError, ImportError):  # no login name and no password entry
        user = None
    try:
        host: str | None = socket.gethostname() or None
    except OSError:
        host = None
    return user, host


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
        user, host = os_identity()
        table = self._table()
        heads = self.store.table(HEAD_TABLE)
        rows = heads.all()
        head = rows[0] if rows else None
        if head is not None and isinstance(head.get("seq"), int):
            seq, prev, start = int(head["seq"]) + 1, head.get("hash"), False
        else:  # the chain starts here: it links to the last entry written before it
            docs = table.all()
            last = max(docs, key=lambda d: d.doc_id) if docs else None
            seq = (last.doc_id + 1) if last is not None else 1
            prev = (last.get("hash") or entry_hash(last)) if last is not None else None
            start = True
        entry = AuditEntry(now, self.profile, action, target, before, after,
                           client_id or new_client_id(), dict(detail or {}), 0, request,
                           user, host, seq, prev, None, start)
        data = json_safe(entry.to_json())  # hashed exactly as the store will keep it
        del data["id"]
        if not start:
            del data["chain_start"]
        data["hash"] = entry_hash(data)
        doc_id = table.insert(data)
        if head is None:
            heads.insert({"seq": seq, "hash": data["hash"]})
        else:
            heads.update({"seq": seq, "hash": data["hash"]}, doc_ids=[head.doc_id])
        return _entry(Document(data, doc_id))

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


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """The first place where the audit log's hash chain does not hold.

    Attributes:
        seq: the number of the entry that is broken or missing (the first of a missing run).
        kind: ``changed`` (its content no longer matches its hash), ``missing`` (removed from
            the log), ``cut`` (the log's end was removed: the head names a later entry),
            ``replaced`` (an entry's hash is not the one the next entry or the head recorded),
            ``unchained`` (a record without a hash after the chain started), ``restarted``
            (the chain starts again: its head record was removed), ``head-missing``.
        message: the sentence naming it.
        last: the number of the last entry of a missing run (``seq`` when one entry).
    """

    seq: int | None
    kind: str
    message: str
    last: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The break as a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ChainReport:
    """What :func:`verify` found.

    Attributes:
        entries: how many records the log holds.
        legacy: how many records predate the chain (written by an older memtui; not verifiable).
        start: the ``seq`` of the entry that starts the chain, or ``None`` when no entry has one.
        head: the ``seq`` the head record names, or ``None``.
        broken: the first break, or ``None`` when the chain holds.
    """

    entries: int
    legacy: int
    start: int | None
    head: int | None
    broken: ChainBreak | None

    @property
    def ok(self) -> bool:
        """True when the chain holds (a log of only older records holds trivially)."""
        return self.broken is None

    def summary(self) -> str:
        """One sentence for people."""
        if self.broken is not None:
            return self.broken.message
        if not self.entries:
            return "the audit log is empty"
        parts = []
        if self.legacy:
            parts.append(f"{self.legacy} older entr{'y' if self.legacy == 1 else 'ies'} predate the hash chain "
                         "and cannot be verified")
        if self.start is not None:
            parts.append(f"the chain starts at entry {self.start} and holds through entry {self.head}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return {"ok": self.ok, "entries": self.entries, "legacy": self.legacy, "start": self.start,
                "head": self.head, "broken": self.broken.to_json() if self.broken else None}


def _when(doc: Any) -> str:
    return f"{doc.get('time', '?')} {doc.get('action', '?')} {doc.get('target', '?')}"


def _missing(first: int, last: int, why: str) -> ChainBreak:
    which = f"entry {first} is" if first == last else f"entries {first}-{last} are"
    return ChainBreak(first, "missing" if why != "cut" else "cut",
                      f"{which} missing from the audit log ({why})", last)


def verify(store: Store) -> ChainReport:
    """Walk the audit log's hash chain and name the first entry that breaks it.

    Args:
        store: an opened store (read-only is enough; nothing is written).

    Returns:
        A :class:`ChainReport`; its ``broken`` is the first break in the log's order:
        an entry whose content no longer matches its hash (changed), a gap in the sequence
        (removed entries), a link that does not match the entry before (replaced), a record
        without a hash after the chain started, a second chain start (the head record was
        removed), or a head that names a later or other entry than the log's last (the end
        was cut).
    """
    docs = sorted(store.table(TABLE).all(), key=lambda d: d.doc_id)
    rows = store.table(HEAD_TABLE).all()
    head = rows[0] if rows else None
    head_seq = head.get("seq") if head is not None and isinstance(head.get("seq"), int) else None
    legacy = 0
    previous: Any = None  # the record before, chained or not
    last_chained: Any = None
    start: int | None = None

    def report(broken: ChainBreak | None) -> ChainReport:
        return ChainReport(len(docs), legacy, start, head_seq, broken)

    for doc in docs:
        seq = doc.get("seq")
        if "hash" not in doc:
            if last_chained is not None:
                return report(ChainBreak(None, "unchained",
                                         f"a record without a hash follows entry {last_chained.get('seq')} "
                                         f"({_when(doc)}): it was added outside memtui"))
            legacy += 1
            previous = doc
            continue
        if not isinstance(seq, int):
            return report(ChainBreak(None, "changed", f"the entry of {_when(doc)} has no sequence number: "
                                                      "it was changed after it was written"))
        if entry_hash(doc) != doc.get("hash"):
            return report(ChainBreak(seq, "changed", f"entry {seq} ({_when(doc)}) was changed after it was "
                                                     "written: its content does not match its hash"))
        if last_chained is None:
            start = seq
            if not doc.get("chain_start"):
                first = (legacy + 1) if legacy < seq - 1 else seq - 1
                return report(_missing(max(first, 1), seq - 1, "the entries that started the chain were removed"))
        else:
            expected = int(last_chained["seq"]) + 1
            if doc.get("chain_start"):
                return report(ChainBreak(seq, "restarted",
                                         f"the chain starts again at entry {seq} ({_when(doc)}): the record "
                                         "of the chain's head was removed before it was written"))
            if seq > expected:
                return report(_missing(expected, seq - 1, f"removed between entry {expected - 1} and entry {seq}"))
            if seq < expected:
                return report(ChainBreak(seq, "replaced", f"entry {seq} ({_when(doc)}) appears twice or out of order"))
        link = None if previous is None else (previous.get("hash") or entry_hash(previous))
        if doc.get("prev") != link:
            before = previous.get("seq") if previous is not None and "hash" in previous else None
            name = f"entry {before}" if before is not None else "the last entry before the chain"
            return report(ChainBreak(before, "replaced",
                                     f"{name} is not the one entry {seq} was chained to: it was replaced"))
        previous = last_chained = doc
    if last_chained is None:
        if head_seq is not None:
            return report(_missing(1, head_seq, "the log holds no chained entry but its head names entry "
                                                f"{head_seq}"))
        return report(None)
    last_seq = int(last_chained["seq"])
    if head is None:
        return report(ChainBreak(None, "head-missing",
                                 "the record of the chain's head was removed: the end of the log cannot be checked"))
    if head_seq is not None and head_seq > last_seq:
        return report(_missing(last_seq + 1, head_seq, f"the log ends at entry {last_seq}: its end was cut"))
    if head_seq != last_seq or head.get("hash") != last_chained.get("hash"):
        return report(ChainBreak(last_seq, "replaced", f"entry {last_seq} ({_when(last_chained)}) is not the "
                                                       "last entry the chain's head recorded: it was replaced"))
    return report(None)


#: What :func:`audit_findings` reads: the store that holds the log (``.memtui/store.json``); the audit
#: after outside changes elsewhere keeps its last findings (:func:`memtui.core.audit.rerun`).
AUDIT_READS = (".memtui",)


def audit_findings(ws: Any) -> list[Finding]:
    """The audit's check of the log (``audit-log-broken``, :data:`memtui.core.audit.CHECKS`):
    the first break of the hash chain, named; nothing when it holds or the store cannot be read
    (a damaged store is its own finding). Never raises."""
    store = Store.open(ws, read_only=True)
    try:
        if store.damaged:
            return []
        report = verify(store)
    finally:
        store.close()
    if report.ok:
        return []
    return [Finding.make("audit-log-broken", f".memtui/{STORE_NAME}", report.summary(),
                         "the audit log was edited outside memtui: compare .memtui/store.json with a "
                         "backup (memtui backup) to see what was removed or changed; memtui keeps "
                         "appending, and the break stays on record")]
