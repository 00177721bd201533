"""Provenance of graph observations: which session an observation came from, and when.

The server's file format has no place for it (DESIGN.md §2), so it lives in memtui's store,
table ``provenance`` (seed 002: the graph "is the only [memory] that records which
conversation a fact came from"). One record per (entity, observation)::

    {"entity": str, "observation": str, "session": str, "at": "2026-11-02T09:15:44Z",
     "line": int | None, "source": "agent" | "memtui" | "import"}

:class:`ProvenanceBook` works on any *store-like* object: something with
``table(name)`` returning a table with ``insert(dict)``, ``all()`` (records with a
``doc_id``), ``update(fields, doc_ids=[...])`` and ``remove(doc_ids=[...])`` — the TinyDB
``Table`` API that ``memtui.core.store.Store.table`` returns; tests use an in-memory one.
After a rename, merge or observation edit, :meth:`ProvenanceBook.follow` moves the records
with the data, so provenance is not lost by curating.

:func:`session_position` turns a record into the place to open in the session history
(``sessions/durable/<key>.jsonl``, lines ``{"ts", "role", "content"}``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence, cast

from memtui.core import jsonio
from memtui.core.errors import ConfinementError, MemtuiError
from memtui.core.files import is_inside, text_name
from memtui.core.graph.operations import EditObservation, MergeEntities, Operation, RenameEntity, Restore

if TYPE_CHECKING:
    from memtui.core.session import Tx

TABLE = "provenance"
_SESSION_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


class TableLike(Protocol):  # pragma: no cover - typing only
    def insert(self, document: dict) -> int: ...
    def all(self) -> list[Any]: ...
    def update(self, fields: dict, doc_ids: Iterable[int] | None = None) -> list[int]: ...
    def remove(self, doc_ids: Iterable[int] | None = None) -> list[int]: ...


class StoreLike(Protocol):  # pragma: no cover - typing only
    def table(self, name: str) -> TableLike: ...


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where one observation came from.

    Attributes:
        entity: the entity name.
        observation: the observation text.
        session: the session key (``sessions/durable/<session>.jsonl``).
        at: ISO 8601 time the observation was made (UTC, as in session lines' ``ts``).
        line: 1-based line of the session history, when known.
        source: ``agent`` (an MCP tool call), ``memtui`` (a curating edit) or ``import``.
    """

    entity: str
    observation: str
    session: str
    at: str
    line: int | None = None
    source: str = "agent"

    def to_json(self) -> dict:
        """The stored record (see the module docstring)."""
        return {"entity": self.entity, "observation": self.observation, "session": self.session,
                "at": self.at, "line": self.line, "source": self.source}


class ProvenanceBook:
    """The provenance records of one store (the ``provenance`` table)."""

    def __init__(self, store: StoreLike) -> None:
        self.table = store.table(TABLE)

    def record(self, item: Provenance) -> None:
        """Store ``item`` (a later record for the same observation is kept too: history).

        Raises:
            ReadOnlyError: the store is read-only (raised by the store's storage).
        """
        self.table.insert(item.to_json())

    def _records(self) -> list[tuple[int, dict]]:
        return [(getattr(doc, "doc_id", i), dict(doc)) for i, doc in enumerate(self.table.all())]

    def of_entity(self, entity: str) -> dict[str, list[Provenance]]:
        """``{observation: [Provenance, ...]}`` for ``entity``, oldest first."""
        out: dict[str, list[Provenance]] = {}
        for _, doc in self._records():
            if doc.get("entity") == entity:
                out.setdefault(doc.get("observation", ""), []).append(_from_doc(doc))
        for items in out.values():
            items.sort(key=lambda p: p.at)
        return out

    def grouped(self) -> dict[str, dict[str, list[Provenance]]]:
        """Every record, ``{entity: {observation: [Provenance, ...]}}``, oldest first (one read)."""
        out: dict[str, dict[str, list[Provenance]]] = {}
        for _, doc in self._records():
            item = _from_doc(doc)
            out.setdefault(item.entity, {}).setdefault(item.observation, []).append(item)
        for by_text in out.values():
            for items in by_text.values():
                items.sort(key=lambda p: p.at)
        return out

    def of_observation(self, entity: str, observation: str) -> list[Provenance]:
        """Every record of one observation, oldest first (empty when unknown)."""
        return self.of_entity(entity).get(observation, [])

    def follow(self, operation: Operation, undo: list | None = None) -> int:
        """Move records along with a curating edit just saved; returns how many moved.

        ``RenameEntity`` and ``MergeEntities`` re-key the entity (merged names to ``into``);
        ``EditObservation`` re-keys the observation text. Other operations move nothing
        (records of deleted data are kept as history).

        Args:
            operation: the edit just saved.
            undo: when given, ``(doc id, previous fields)`` of every moved record is appended,
                for :meth:`put_back` (the TUI's undo).

        Raises:
            ReadOnlyError: the store is read-only.
        """
        if isinstance(operation, RenameEntity):
            names, into = {operation.old}, operation.new
        elif isinstance(operation, MergeEntities):
            names, into = set(operation.sources) - {operation.into}, operation.into
        elif isinstance(operation, EditObservation):
            moved = [(doc_id, doc) for doc_id, doc in self._records()
                     if doc.get("entity") == operation.entity and doc.get("observation") == operation.old]
            if moved:
                self.table.update({"observation": operation.new}, doc_ids=[i for i, _ in moved])
                if undo is not None:
                    undo.extend((i, {"observation": d.get("observation")}) for i, d in moved)
            return len(moved)
        else:
            return 0
        moved = [(doc_id, doc) for doc_id, doc in self._records() if doc.get("entity") in names]
        if moved:
            self.table.update({"entity": into}, doc_ids=[i for i, _ in moved])
            if undo is not None:
                undo.extend((i, {"entity": d.get("entity")}) for i, d in moved)
        return len(moved)

    def put_back(self, undo: Iterable[tuple[int, dict]]) -> int:
        """Give records moved by :meth:`follow` their previous fields again; returns how many.

        Records removed meanwhile are skipped.
        """
        present = {doc_id for doc_id, _ in self._records()}
        count = 0
        for doc_id, fields in undo:
            if doc_id in present:
                self.table.update(dict(fields), doc_ids=[doc_id])
                count += 1
        return count


def follow_edit(tx: Tx, operation: Operation, added: Sequence[Provenance] = (), undo: list | None = None) -> None:
    """Provenance follows a graph edit, inside the guarded write ``tx`` that records the edit, so
    the graph and its provenance never disagree: the one place for the local file's
    :func:`~memtui.core.graph.commit.commit` and the remote graph's
    :meth:`~memtui.core.graph.remote.RemoteGraph.save`.

    A :class:`~memtui.core.graph.operations.Restore` (an undo) puts back the records its edit
    moved; any other edit moves them with its data (:meth:`ProvenanceBook.follow`). Then the
    ``added`` records (the observations the edit brings in) are recorded.

    Args:
        tx: the open write of the edit (its store gets the changes).
        operation: the edit written.
        added: records to add (``memtui graph add-observation --session KEY``).
        undo: when given, receives ``(doc id, previous fields)`` of every moved record.

    Raises:
        ReadOnlyError: the store is read-only.
    """
    tx.table(TABLE)  # the provenance table changes in this same write
    book = ProvenanceBook(cast(StoreLike, tx.session.store))  # TinyDB's Table: update's 2nd parameter is cond
    if isinstance(operation, Restore):
        book.put_back(operation.provenance_undo)
    else:
        book.follow(operation, undo=undo)
    for item in added:
        book.record(item)


def _from_doc(doc: dict) -> Provenance:
    return Provenance(str(doc.get("entity", "")), str(doc.get("observation", "")), str(doc.get("session", "")),
                      str(doc.get("at", "")), doc.get("line") if isinstance(doc.get("line"), int) else None,
                      str(doc.get("source", "agent")))


def session_file(root: Path, session: str) -> Path:
    """``<root>/sessions/durable/<session>.jsonl`` for a session key.

    Raises:
        MemtuiError: the key is not a plain name (``/``, ``..``, control characters), so it
            could lead outside the sessions folder.
        ConfinementError: the sessions folder is a symbolic link leading outside the workspace.
    """
    if not _SESSION_KEY.fullmatch(session) or ".." in session:
        raise MemtuiError(f"{session!r} is not a session key (letters, digits, '.', '_', '-'); "
                          "the provenance record may be damaged.")
    path = root / "sessions" / "durable" / f"{session}.jsonl"
    if os.path.lexists(path.parent) and not is_inside(root, path):  # a linked root: read nothing out there
        raise ConfinementError(f"sessions/durable leads outside the workspace through a symbolic link; "
                               f"memtui reads no session history through it (session {session}).")
    return path


def session_position(root: Path, item: Provenance) -> tuple[Path, int]:
    """The session history file and the 1-based line to open it at for ``item``.

    The stored line when there is one (and the file is that long), else the first line whose
    ``ts`` is at or after ``item.at``, else the last line.

    Raises:
        MemtuiError: bad session key, or the session file does not exist.
    """
    path = session_file(root, item.session)
    if not path.is_file():
        raise MemtuiError(f"the session history {path.relative_to(root).as_posix()} does not exist "
                          "(it may have been removed); the observation's provenance remains recorded.")
    count = 0
    found = None
    with open(path, "rb") as handle:
        for count, raw in enumerate(handle, 1):
            if found is None and not item.line:
                try:
                    ts = jsonio.loads(raw).get("ts", "")
                except (ValueError, AttributeError):
                    continue
                if isinstance(ts, str) and ts >= item.at:
                    found = count
    if item.line and item.line <= count:
        return path, item.line
    return path, found or max(count, 1)


def find_in_sessions(root: Path, text: str, limit: int = 20) -> list[tuple[str, int, str]]:
    """Session lines whose content mentions ``text``: ``(session key, line, ts)``, at most
    ``limit``; a way to find where an observation with no recorded provenance came from."""
    folder = root / "sessions" / "durable"
    if not folder.is_dir() or not text or not is_inside(root, folder):  # never through a link out
        return []
    hits: list[tuple[str, int, str]] = []
    for path in sorted(folder.glob("*.jsonl")):
        if path.is_symlink() or not text_name(path.name):
            continue
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                try:
                    doc = jsonio.loads(raw)
                except ValueError:
                    continue
                content = doc.get("content") if isinstance(doc, dict) else None
                if isinstance(content, str) and text in content:
                    hits.append((path.stem, number, str(doc.get("ts", ""))))
                    if len(hits) >= limit:
                        return hits
    return hits
