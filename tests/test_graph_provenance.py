"""Provenance of observations in a store-like object, following curating edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.core import graph as g
from memtui.core.errors import MemtuiError
from memtui.core.graph.provenance import Provenance, ProvenanceBook, find_in_sessions, session_file, session_position


class _Doc(dict):
    doc_id = 0


class MemoryTable:
    """The slice of TinyDB's Table API the book uses, in memory."""

    def __init__(self) -> None:
        self.docs: dict[int, dict] = {}

    def insert(self, document: dict) -> int:
        doc_id = len(self.docs) + 1
        self.docs[doc_id] = dict(document)
        return doc_id

    def all(self) -> list[dict]:
        out = []
        for doc_id, doc in self.docs.items():
            item = _Doc(doc)
            item.doc_id = doc_id
            out.append(item)
        return out

    def update(self, fields: dict, doc_ids=None) -> list[int]:
        for doc_id in doc_ids or []:
            self.docs[doc_id].update(fields)
        return list(doc_ids or [])

    def remove(self, doc_ids=None) -> list[int]:
        for doc_id in doc_ids or []:
            del self.docs[doc_id]
        return list(doc_ids or [])


class MemoryStore:
    def __init__(self) -> None:
        self.tables: dict[str, MemoryTable] = {}

    def table(self, name: str) -> MemoryTable:
        return self.tables.setdefault(name, MemoryTable())


def test_records_follow_rename_merge_and_edit() -> None:
    book = ProvenanceBook(MemoryStore())
    book.record(Provenance("bob", "plays chess", "tg-1", "2026-11-02T09:15:44Z", 4))
    book.record(Provenance("Bobby", "likes go", "tg-2", "2026-11-03T10:00:00Z"))
    assert book.follow(g.RenameEntity("bob", "Bob")) == 1
    assert book.of_observation("Bob", "plays chess")[0].session == "tg-1"
    assert book.of_entity("bob") == {}
    assert book.follow(g.MergeEntities(("Bobby",), "Bob")) == 1
    assert set(book.of_entity("Bob")) == {"plays chess", "likes go"}
    assert book.follow(g.EditObservation("Bob", "likes go", "likes the game of go")) == 1
    assert book.of_observation("Bob", "likes the game of go")[0].at == "2026-11-03T10:00:00Z"
    assert book.follow(g.DeleteEntity("Bob")) == 0  # history is kept


def test_session_position_and_search(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "durable"
    folder.mkdir(parents=True)
    lines = [{"ts": f"2026-11-02T09:1{i}:00Z", "role": "tool", "content": f"step {i}"} for i in range(5)]
    (folder / "tg-1.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    path, line = session_position(tmp_path, Provenance("a", "o", "tg-1", "2026-11-02T09:13:00Z"))
    assert path.name == "tg-1.jsonl" and line == 4
    assert session_position(tmp_path, Provenance("a", "o", "tg-1", "x", line=2))[1] == 2
    assert find_in_sessions(tmp_path, "step 3") == [("tg-1", 4, "2026-11-02T09:13:00Z")]
    with pytest.raises(MemtuiError, match="does not exist"):
        session_position(tmp_path, Provenance("a", "o", "tg-9", "x"))
    for bad in ("../../etc/passwd", "a/b", "", "x\n"):
        with pytest.raises(MemtuiError, match="not a session key"):
            session_file(tmp_path, bad)


def test_book_works_on_a_tinydb_table() -> None:
    tinydb = pytest.importorskip("tinydb", reason="TinyDB is the store's library (branch safety)")
    from tinydb.storages import MemoryStorage

    db = tinydb.TinyDB(storage=MemoryStorage)

    class Store:
        def table(self, name: str):
            return db.table(name, cache_size=0)

    book = ProvenanceBook(Store())
    book.record(Provenance("a", "o", "tg-1", "2026-01-01T00:00:00Z", 3))
    assert book.follow(g.RenameEntity("a", "b")) == 1
    assert book.of_observation("b", "o") == [Provenance("b", "o", "tg-1", "2026-01-01T00:00:00Z", 3)]
