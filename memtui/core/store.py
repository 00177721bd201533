"""memtui's own store: ``.memtui/store.json``, a TinyDB database written atomically.

Tables (each issue adds its own; names are the field's terms):

- ``audit``: the append-only audit log (:mod:`memtui.core.auditlog`, invariant 7);
- ``versions``, ``uses``, ``pins``, ``provenance``: governance and graph provenance, added by
  later issues through :meth:`Store.table`.

Why a storage of our own (LIBRARY-NOTES, TinyDB 4.9.0): TinyDB's default
``JSONStorage`` truncates and rewrites the file in place, so a crash mid-write leaves a
truncated or empty store, and ``CachingMiddleware`` keeps writes in memory where a kill loses
them. :class:`AtomicJSONStorage` writes every change at once through
:func:`memtui.core.atomic.write_bytes` (temporary file, fsync, rename, folder fsync), so the
file is always a complete old or new store. Values JSON cannot hold (dates from front
matter) are made safe by :func:`memtui.core.frontmatter.json_safe` on the way
out instead of failing the save.

A store that is nevertheless unreadable (bad JSON, NUL bytes, leftover bytes after the
document, or not TinyDB's shape) opens read-only with a ``store-damaged`` finding that names
the file and where the JSON breaks; the file is left byte for byte as it was and never
written over. :func:`set_aside` is the explicit way back: it renames the damaged file
beside itself and says where.

Only the one guarded write changes the store (:meth:`memtui.core.session.Session.write`,
under the writer lock, through :meth:`Store.begin` / :meth:`Store.commit`), which reads the
file afresh under the lock, so an old in-memory copy is never written back.

Reading is parsed once per version of the file. Outside a write every read looks at the file
(one ``stat``) and re-parses it only when it is another file than the one parsed (a new
inode, size, modification or change time: every memtui write replaces the file by a rename,
so it is always a new inode); a file changed so recently that a second change could hide in
the same timestamp tick is compared byte for byte before its parse is reused
(:data:`RACY_SECONDS`), so another process's write is seen at once and a stale parse is never
served. Before, every TinyDB call parsed the whole file again: a page of 100 proposals of a
10,000-proposal store parsed its 20 MB about 200 times. The parse is shared by every
:class:`Store` of the process (:func:`shared`: the TUI's session, its audit and its areas
read one parse of an unchanged file), and what readers derive from the tables (a ledger's
index of versions by article, uses by version) is kept with the parse it came from
(:meth:`Store.derived`) and dropped with it. TinyDB's own query cache stays disabled.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

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
#: A file whose modification time is this close to the moment it was read may still change
#: within the same timestamp tick (coarse file-system clocks, 2 s on FAT): until it is older,
#: its parse is reused only after its bytes are compared with the parsed ones (the "racy" case
#: of git's index).
RACY_SECONDS = 2.0

T = TypeVar("T")
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


@dataclass(frozen=True, slots=True)
class Parsed:
    """One parse of the store file.

    Attributes:
        key: the file's identity when it was read: ``(device, inode, size, modification
            time ns, change time ns)``; ``None`` when there was no file.
        tables: ``{table name: {document id: document}}`` (shared; never changed).
        data: the bytes parsed while the file is *racy* (changed less than
            :data:`RACY_SECONDS` before it was read), to compare on the next read; else ``None``.
        memo: what readers computed from these tables (:meth:`Store.derived`), shared by
            every :class:`Store` of the process that reads this parse.
    """

    key: tuple[int, ...] | None
    tables: dict[str, dict[str, Any]]
    data: bytes | None = None
    memo: dict[str, Any] = field(default_factory=dict, compare=False)


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _racy(st: os.stat_result, read_at: float) -> bool:
    """True when the file changed so shortly before ``read_at`` that another change could
    still come within the same timestamp tick and leave its identity as it is."""
    return st.st_mtime_ns >= (read_at - RACY_SECONDS) * 1e9 or st.st_ctime_ns >= (read_at - RACY_SECONDS) * 1e9


def current(path: Path, known: Parsed | None = None) -> Parsed:
    """The parse of the store file at ``path`` now: ``known`` itself when the file is still
    the one ``known`` parsed, else a new parse (the one rule of when the store is parsed).

    The file is the same when its identity (:attr:`Parsed.key`) is, and — while ``known`` was
    racy — its bytes are too. The identity is taken from the open file, so it describes the
    bytes parsed even when the file is replaced meanwhile.

    Raises:
        StoreDamagedError: the file is damaged. OSError: it cannot be read (not a missing
            file: that reads as an empty store).
    """
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # no store file (or no .memtui folder) yet
        return known if known is not None and known.key is None else Parsed(None, {})
    if known is not None and known.key == _identity(st) and known.data is None:
        return known
    read_at = time.time()
    try:
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            data = handle.read()
    except (FileNotFoundError, NotADirectoryError):  # replaced or removed since the stat: look again
        return current(path, None)
    racy = _racy(st, read_at)
    if known is not None and known.key == _identity(st) and known.data == data:
        return known if racy else Parsed(known.key, known.tables, None, known.memo)
    return Parsed(_identity(st), parse(data, path), data if racy else None)


#: The latest parse of each store file this process read (a few files: a session's store, a
#: test's workspaces), so every :class:`Store` of the process (the TUI's session, its audit,
#: its areas) shares one parse of an unchanged file.
_SHARED: OrderedDict[str, Parsed] = OrderedDict()
_SHARED_KEPT = 8
_SHARED_LOCK = threading.Lock()
_PATH_LOCKS: dict[str, threading.Lock] = {}


def shared(path: Path) -> Parsed:
    """:func:`current` for ``path``, starting from the parse this process last made of it
    (one thread parses a file at a time; the others then reuse its parse).

    Raises:
        StoreDamagedError, OSError: as :func:`current`.
    """
    name = os.path.abspath(path)
    with _SHARED_LOCK:
        lock = _PATH_LOCKS.setdefault(name, threading.Lock())
    with lock:
        with _SHARED_LOCK:
            known = _SHARED.get(name)
        fresh = current(path, known)
        with _SHARED_LOCK:
            _SHARED[name] = fresh
            _SHARED.move_to_end(name)
            while len(_SHARED) > _SHARED_KEPT:
                _PATH_LOCKS.pop(_SHARED.popitem(last=False)[0], None)
        return fresh


def _forget_shared(path: Path) -> None:
    with _SHARED_LOCK:
        _SHARED.pop(os.path.abspath(path), None)


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

    def __init__(self, path: str | os.PathLike[str], read_only_reason: str | None = None,
                 parsed: "Parsed | None" = None) -> None:
        self.path = Path(path)
        self.read_only_reason = read_only_reason
        #: the working copy of a batch (``None`` outside one)
        self._batch: dict[str, dict[str, Any]] | None = None
        #: the append-only tables as read when the batch began, to compare at commit
        self._append_only_seen: dict[str, dict[str, Any]] = {}
        self._dirty = False
        #: the file as last parsed (reused while the file is the same, :meth:`snapshot`)
        self._parsed: Parsed | None = parsed
        #: counts every change of what reads see (a new parse, a batch begun, changed or ended)
        self._generation = 0
        self._reading = threading.Lock()
        #: parses held by :meth:`Store.reading` blocks, by thread (the thread's reads reuse them)
        self._held: dict[int, Parsed | None] = {}

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        return parse(data, self.path)

    def snapshot(self) -> tuple[dict[str, dict[str, Any]], int, Parsed | None]:
        """What a read sees now: the batch's copy inside a batch, else the file's tables,
        parsed again only when the file is another than the one parsed (:func:`shared`).

        Returns:
            ``(tables, generation, parse)``; the generation changes whenever the tables may
            have (so anything computed from them can be kept until it changes); ``parse`` is
            the file's :class:`Parsed` outside a batch, ``None`` inside one. The tables are
            shared: callers never change them.

        Raises:
            StoreDamagedError: the file is damaged. OSError: it cannot be read.
        """
        with self._reading:
            if self._batch is not None:
                return self._batch, self._generation, None
            held = self._held.get(threading.get_ident())
            if held is not None:  # within Store.reading
                return held.tables, self._generation, held
            parsed = self._parsed
            fresh = shared(self.path)
            if parsed is None or fresh.tables is not parsed.tables:
                self._generation += 1
            self._parsed = fresh
            return fresh.tables, self._generation, fresh

    def read(self) -> dict[str, dict[str, Any]] | None:
        return self.snapshot()[0] or None

    def write(self, data: dict[str, dict[str, Any]]) -> None:
        if self._batch is None:
            # TinyDB changed the tables it read before calling write: forget that parse, so
            # no read sees a change that was refused
            self._forget()
        if self.read_only_reason:
            raise ReadOnlyError(self.read_only_reason)
        if self._batch is None:
            raise MemtuiError(
                "memtui's store is written only inside a guarded write (Session.write); "
                "nothing was written.")
        self._batch = data
        self._dirty = True
        self._generation += 1

    def _forget(self) -> None:
        with self._reading:
            self._parsed = None
            self._generation += 1
        _forget_shared(self.path)

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
        self._generation += 1

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
        self._generation += 1
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
        self._generation += 1


class Store:
    """The opened store of one workspace.

    Attributes:
        path: ``<workspace>/.memtui/store.json``.
        read_only: writes raise :class:`ReadOnlyError` (with :attr:`reason`).
        reason: why the store is read-only, or ``None``.
        damaged: the file could not be read; reads then see an empty store.
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
        self._derived: dict[str, tuple[int, Any]] = {}

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
        parsed = None
        try:
            parsed = shared(path)  # the one parse of this opening; reads reuse it
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
                    read_only_reason=storage_reason, parsed=parsed)
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

    def derived(self, name: str, build: Callable[[dict[str, dict[str, Any]]], T]) -> T:
        """``build(tables)`` computed once per state of the store and kept under ``name``
        until the store changes (another process's write, a batch's change): the one place
        a reader keeps something it computed from the tables, such as an index.

        Args:
            name: what is kept (one value per name; the same name, the same ``build``).
            build: makes the value from ``{table: {document id: document}}``; it must not
                change the tables, and its value is shared by every caller (treat it as
                read-only).

        Raises:
            StoreDamagedError, OSError: as a read of the file.
        """
        tables, generation, parsed = self.storage.snapshot()
        if parsed is not None:  # kept with the parse: shared by the process's stores
            if name not in parsed.memo:
                parsed.memo[name] = build(tables)
            return parsed.memo[name]
        kept = self._derived.get(name)  # inside a batch: until the batch changes
        if kept is not None and kept[0] == generation:
            return kept[1]
        value = build(tables)
        self._derived[name] = (generation, value)
        return value

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Within the block, this thread's reads see the store as it was at its first read
        (one look at the file for a group of reads, all of them consistent): for a screen
        that reads several things to show one record. Outside a batch only; blocks nest.
        """
        storage = self.storage
        me = threading.get_ident()
        if me in storage._held:  # noqa: SLF001 - a block within a block: the outer one holds
            yield
            return
        _, _, parsed = storage.snapshot()
        storage._held[me] = parsed  # noqa: SLF001 - None inside a batch: reads see the batch
        try:
            yield
        finally:
            storage._held.pop(me, None)  # noqa: SLF001

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

    def snapshot(self) -> tuple[dict[str, dict[str, Any]], int, Parsed | None]:
        return {}, 0, None

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


#: What :func:`audit_findings` reads: the store (``.memtui/store.json``) and the ``.memtui`` folder; the audit
#: after outside changes elsewhere keeps its last findings (:func:`memtui.core.audit.rerun`).
AUDIT_READS = (".memtui",)


def audit_findings(ws: Any) -> list[Finding]:
    """The store's own findings for the audit (:data:`memtui.core.audit.CHECKS`): a damaged or
    unreadable ``store.json`` (``store-damaged``: the workspace is then read-only, so the
    audit must not say "0 errors") and a ``.memtui`` or store leading
    outside the workspace (``symlink-outside``). Reads nothing through a link; never raises."""
    store = Store.open(ws, read_only=True)
    try:
        return list(store.findings)
    finally:
        store.close()

