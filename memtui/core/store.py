"""memtui's own store: ``.memtui/store.json``, a TinyDB database written atomically.

Tables (each issue adds its own; names are the field's terms):

- ``audit``: the append-only audit log (:mod:`memtui.core.auditlog`, invariant 7);
- ``versions``, ``uses``, ``pins``, ``provenance``: governance and graph provenance, added by
  later issues through :meth:`Store.table`.

Why a storage of our own (LIBRARY-NOTES, TinyDB 4.9.0; bug input B01): TinyDB's default
``JSONStorage`` truncates and rewrites the file in place, so a crash mid-write leaves a
truncated or empty store, and ``CachingMiddleware`` keeps writes in memory where a kill loses
them. :class:`AtomicJSONStorage` writes every change at once through
:func:`memtui.core.atomic.write_bytes` (temporary file, fsync, rename, folder fsync), so the
file is always a complete old or new store. Values JSON cannot hold (dates from front
matter, bug input B03) are made safe by :func:`memtui.core.frontmatter.json_safe` on the way
out instead of failing the save.

A store that is nevertheless unreadable (bad JSON, NUL bytes, leftover bytes after the
document, or not TinyDB's shape) opens read-only with a ``store-damaged`` finding that names
the file and where the JSON breaks; the file is left byte for byte as it was and never
written over (B01). :func:`set_aside` is the explicit way back: it renames the damaged file
beside itself and says where.

Only the one guarded write changes the store (:meth:`memtui.core.session.Session.write`,
under the writer lock, through :meth:`Store.begin` / :meth:`Store.commit`); outside it every
read goes to the file, and TinyDB's per-table query cache is disabled, so another process's
write is seen at once and an old in-memory copy is never written back.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

from tinydb import TinyDB
from tinydb.storages import Storage
from tinydb.table import Table

from memtui.core import atomic, jsonio
from memtui.core.errors import ConfinementError, MemtuiError, ReadOnlyError
from memtui.core.files import confine
from memtui.core.findings import Finding
from memtui.core.frontmatter import json_safe
from memtui.core.text import json_text

STORE_NAME = "store.json"
#: Tables whose records may be added but never changed or removed (invariant 7).
APPEND_ONLY_TABLES = frozenset({"audit"})


class StoreDamagedError(MemtuiError):
    """The store file cannot be read as a TinyDB store; ``str(exc)`` says where it breaks.

    Attributes:
        path: the store file.
        detail: the plain-words place and reason (``line 1, column 241 (byte 240): …``).
    """

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(
            f"memtui's store {path} is damaged: {detail}. It is kept exactly as it is and the "
            "workspace is open read-only; restore it from a backup, or set it aside with "
            "`memtui store set-aside` to start a fresh store.")
        self.path = path
        self.detail = detail


def parse(data: bytes, path: Path) -> dict[str, dict[str, Any]]:
    """Parse the bytes of a store file.

    Returns:
        ``{table name: {document id: document}}``.

    Raises:
        StoreDamagedError: not UTF-8, not JSON (with line, column and byte offset), trailing
            bytes after the document, or not a mapping of tables to mappings of documents.
    """
    if data and data.count(0) == len(data):
        raise StoreDamagedError(path, f"all {len(data)} bytes are NUL (0x00), as a power cut "
                                      "can leave a file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StoreDamagedError(path, f"byte {exc.start} is not UTF-8") from exc
    if not text.strip():
        raise StoreDamagedError(path, "the file is empty")
    try:
        tables = jsonio.loads(text, allow_nan=True)
    except jsonio.JSONError as exc:
        raise StoreDamagedError(path, f"the JSON {exc}") from exc
    except json.JSONDecodeError as exc:
        offset = len(text[: exc.pos].encode("utf-8"))
        reason = exc.msg
        if reason == "Extra data":
            reason = "a complete JSON document is followed by leftover bytes (Extra data)"
        elif exc.pos >= len(text.rstrip()) or reason.startswith("Unterminated string"):
            reason = f"the file ends in the middle of the JSON ({exc.msg}); it was cut short"
        raise StoreDamagedError(
            path, f"the JSON breaks at line {exc.lineno}, column {exc.colno} (byte {offset}): {reason}"
        ) from exc
    if not isinstance(tables, dict):
        raise StoreDamagedError(path, f"the top level is a JSON {type(tables).__name__}, not an object of tables")
    for name, table in tables.items():
        if not isinstance(table, dict) or not all(isinstance(d, dict) for d in table.values()):
            raise StoreDamagedError(path, f"table {name!r} is not an object of documents")
    return tables


class AtomicJSONStorage(Storage):
    """A TinyDB storage that never leaves a partial file and writes only inside a batch.

    Args:
        path: the store file; its folder must exist before the first write. A missing file
            reads as an empty store and is created by the first write.
        read_only_reason: when set, :meth:`begin` and :meth:`write` raise
            :class:`ReadOnlyError` with it.

    Outside a batch every :meth:`read` reads the file afresh, so a reader sees another
    process's write at once, and :meth:`write` refuses: the store is written only by the one
    guarded write (:meth:`memtui.core.session.Session.write`, DESIGN.md §4 invariant 2), which
    calls :meth:`begin` under the writer lock (the store is read once, fresh from the file),
    lets TinyDB change that one copy, and :meth:`commit` writes it back in one atomic file
    write — so every change of one write (records, state changes, its audit entry) lands
    together or not at all.

    ``read`` raises :class:`StoreDamagedError` for a damaged file; ``commit`` raises
    :class:`MemtuiError` when a change would alter or remove a record of an append-only
    table (a programming error caught before anything is written).
    """

    def __init__(self, path: str | os.PathLike[str], read_only_reason: str | None = None) -> None:
        self.path = Path(path)
        self.read_only_reason = read_only_reason
        #: the working copy of a batch (``None`` outside one)
        self._batch: dict[str, dict[str, Any]] | None = None
        #: the append-only tables as read when the batch began, to compare at commit
        self._append_only_seen: dict[str, dict[str, Any]] = {}
        self._dirty = False

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        return parse(data, self.path)

    def read(self) -> dict[str, dict[str, Any]] | None:
        if self._batch is not None:
            return self._batch
        return self._load() or None

    def write(self, data: dict[str, dict[str, Any]]) -> None:
        if self.read_only_reason:
            raise ReadOnlyError(self.read_only_reason)
        if self._batch is None:
            raise MemtuiError(
                "memtui's store is written only inside a guarded write (Session.write); "
                "nothing was written.")
        self._batch = data
        self._dirty = True

    @property
    def dirty(self) -> bool:
        """True when the batch changed something."""
        return self._dirty

    @property
    def in_batch(self) -> bool:
        """True between :meth:`begin` and :meth:`commit`/:meth:`rollback`."""
        return self._batch is not None

    def begin(self) -> None:
        """Start a batch: read the file once, fresh (call only while holding the writer lock).

        Raises:
            ReadOnlyError: the store is read-only. StoreDamagedError: the file is damaged.
        """
        if self.read_only_reason:
            raise ReadOnlyError(self.read_only_reason)
        tables = self._load()
        self._append_only_seen = {name: json.loads(json.dumps(tables.get(name, {})))
                                  for name in APPEND_ONLY_TABLES}
        self._batch = tables
        self._dirty = False

    def commit(self) -> bool:
        """Write the batch's copy back atomically if anything changed; end the batch.

        Returns:
            True when the file was written.

        Raises:
            MemtuiError: a record of an append-only table was changed or removed (nothing is
                written). OSError: the write failed (the file keeps its old content).
        """
        data, dirty = self._batch, self._dirty
        self._batch, self._dirty = None, False
        if data is None or not dirty:
            return False
        safe = json_safe(data)
        for name, before in self._append_only_seen.items():
            after = safe.get(name, {})
            for doc_id, record in before.items():
                if after.get(doc_id) != record:
                    raise MemtuiError(
                        f"the {name} table is append-only: record {doc_id} may not be changed or "
                        "removed; nothing was written.")
        payload = json_text(safe, indent=None).encode("utf-8")  # a lone surrogate (a name's bad byte) as its escape
        atomic.write_bytes(self.path, payload)
        return True

    def rollback(self) -> None:
        """End the batch without writing anything."""
        self._batch, self._dirty = None, False


class Store:
    """The opened store of one workspace.

    Attributes:
        path: ``<workspace>/.memtui/store.json``.
        read_only: writes raise :class:`ReadOnlyError` (with :attr:`reason`).
        reason: why the store is read-only, or ``None``.
        damaged: the file could not be read (B01); reads then see an empty store.
        findings: ``store-damaged`` when damaged.
        db: the underlying :class:`tinydb.TinyDB` (prefer :meth:`table`).
    """

    def __init__(self, path: Path, db: TinyDB, reason: str | None, damaged: bool,
                 findings: list[Finding]) -> None:
        self.path = path
        self.db = db
        self.reason = reason
        self.damaged = damaged
        self.findings = findings

    @property
    def read_only(self) -> bool:
        return self.reason is not None

    @classmethod
    def open(cls, root: str | os.PathLike[str] | Any, *, read_only: bool = False,
             reason: str | None = None) -> "Store":
        """Open the store of the workspace ``root`` (a path or a ``Workspace``).

        Args:
            root: the workspace folder, or an object with a ``root`` attribute.
            read_only: open for reading only; ``reason`` (the sentence writes refuse with)
                defaults to a generic one.
            reason: why it is read-only (for example :func:`memtui.core.lock.refusal`).

        Returns:
            A :class:`Store`; never raises. Nothing is written by opening (a missing file
            stays missing). A damaged file gives a read-only, empty-reading store with one
            ``store-damaged`` finding; a ``.memtui`` or store symlinked outside the workspace
            gives the same with ``symlink-outside`` (nothing is read through the link).
        """
        root_path = _root_of(root)
        findings: list[Finding] = []
        try:
            path = confine(root_path, f".memtui/{STORE_NAME}")
        except ConfinementError as exc:
            path = root_path / ".memtui" / STORE_NAME
            findings.append(Finding.make("symlink-outside", ".memtui/" + STORE_NAME, str(exc),
                                         "replace the link with a real .memtui folder"))
            db = TinyDB(storage=_EmptyIfDamaged, path=path, read_only_reason=str(exc))
            return cls(path, db, str(exc), True, findings)
        damaged = False
        if read_only and reason is None:
            reason = f"The store {path} is open read-only."
        try:
            if path.exists():
                parse(path.read_bytes(), path)
        except StoreDamagedError as exc:
            damaged = True
            reason = str(exc)
            findings.append(Finding.make(
                "store-damaged", ".memtui/" + STORE_NAME, exc.detail,
                "restore .memtui/store.json from a backup, or run `memtui store set-aside` "
                "to keep it aside and start a fresh store"))
        except OSError as exc:
            damaged = True
            reason = f"memtui's store {path} cannot be read ({exc.strerror or exc})."
            findings.append(Finding.make("file-unreadable", ".memtui/" + STORE_NAME,
                                         f"cannot be read: {exc.strerror or exc}",
                                         "check the permissions of .memtui/"))
        storage_reason = reason
        db = TinyDB(storage=_EmptyIfDamaged if damaged else AtomicJSONStorage, path=path,
                    read_only_reason=storage_reason)
        return cls(path, db, reason, damaged, findings)

    @property
    def storage(self) -> AtomicJSONStorage:
        """The storage (for :class:`memtui.core.session.Session`'s batch)."""
        return self.db.storage  # type: ignore[return-value]

    def begin(self) -> None:
        """Start a batch (see :meth:`AtomicJSONStorage.begin`); TinyDB's cached tables are
        dropped, so a record id is never computed from a stale copy of the file."""
        self.storage.begin()
        self.db._tables.clear()  # noqa: SLF001 - each Table caches its next id

    def commit(self) -> bool:
        """Write the batch (see :meth:`AtomicJSONStorage.commit`)."""
        try:
            return self.storage.commit()
        finally:
            self.db._tables.clear()  # noqa: SLF001

    def rollback(self) -> None:
        """Drop the batch (see :meth:`AtomicJSONStorage.rollback`)."""
        self.storage.rollback()
        self.db._tables.clear()  # noqa: SLF001

    def table(self, name: str) -> Table:
        """The TinyDB table ``name`` (created on its first write), with no query cache.

        Records of an append-only table (``audit``) cannot be changed or removed through it:
        the storage refuses such a write.
        """
        return self.db.table(name, cache_size=0)

    def tables(self) -> set[str]:
        """Names of the tables present in the file."""
        return set(self.db.tables())

    def require_writable(self) -> None:
        """Raise :class:`ReadOnlyError` (with :attr:`reason`) unless the store may be written."""
        if self.reason is not None:
            raise ReadOnlyError(self.reason)

    def close(self) -> None:
        """Close the database (nothing is pending: every write is already on disk)."""
        self.db.close()


def _root_of(root: Any) -> Path:
    """The folder of a ``Workspace`` (it has ``state_dir``) or of a path."""
    return Path(root.root) if hasattr(root, "state_dir") else Path(root)


class _EmptyIfDamaged(AtomicJSONStorage):
    """Storage of a damaged store: reads as empty, never writes (the file is kept as it is)."""

    def read(self) -> dict[str, dict[str, Any]] | None:
        return None

    def write(self, data: dict[str, dict[str, Any]]) -> None:
        raise ReadOnlyError(self.read_only_reason or f"The store {self.path} is damaged.")


def set_aside(root: str | os.PathLike[str] | Any) -> Path:
    """Rename a store file aside (``store.json.damaged-<UTC time>``) so a fresh one can start.

    Call only while holding the writer lock. The bytes are kept unchanged under the new name.

    Returns:
        The new path of the old file.

    Raises:
        FileNotFoundError: there is no store file.
        ConfinementError: the store path leads outside the workspace.
    """
    root_path = _root_of(root)
    path = confine(root_path, f".memtui/{STORE_NAME}")
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{STORE_NAME}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{STORE_NAME}.damaged-{stamp}-{n}")
    os.rename(path, target)
    return target


def audit_findings(ws: Any) -> list[Finding]:
    """The store's own findings for the audit (:data:`memtui.core.audit.CHECKS`): a damaged or
    unreadable ``store.json`` (``store-damaged``: the workspace is then read-only, so the
    audit must not say "0 errors", issue 15 item 13) and a ``.memtui`` or store leading
    outside the workspace (``symlink-outside``). Reads nothing through a link; never raises."""
    store = Store.open(ws, read_only=True)
    try:
        return list(store.findings)
    finally:
        store.close()

