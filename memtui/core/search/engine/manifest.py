"""The index manifest: which version of each source file the search index holds.

One SQLite table (stdlib ``sqlite3``) in ``.memtui/index/manifest.sqlite``: per source file
(workspace-relative path) its mtime (ns), size (bytes) and SHA-1, plus the schema version
and the time of the last update. A saved edit changes one row, so making a save searchable
costs the same at 100 or 100,000 articles; the JSON manifest it replaces was rewritten whole
at every save. Derived data like the index it describes
(DESIGN.md §2): a manifest that cannot be read counts as absent, and the index is rebuilt.
Callers hold the index's write lock while writing it (see
:meth:`memtui.core.search.engine.index.SearchIndex._locked`).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Iterable

#: ``(mtime in ns, size in bytes, SHA-1 hex)`` of one source file.
Entry = tuple[int, int, str]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS sources (rel TEXT PRIMARY KEY, mtime INTEGER, size INTEGER, sha TEXT) WITHOUT ROWID;
"""


class ManifestError(OSError):
    """The manifest could not be written (the message says why)."""


class Manifest:
    """The manifest file at ``path``; every call opens and closes its own connection, so
    threads and processes may share it (writers serialise on the index's lock)."""

    def __init__(self, path: Path, readable: bool = True) -> None:
        """``readable`` False: every read answers as for a missing manifest (the index folder
        leads outside the workspace)."""
        self.path = path
        self.readable = readable

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=5.0)
        # derived data: a crash of the process cannot cut a transaction (the journal holds),
        # and a crash of the machine at worst leaves a file that reads as damaged: rebuilt
        con.execute("PRAGMA synchronous=OFF")
        return con

    def _read(self, sql: str, args: tuple = ()) -> list[tuple]:
        if not self.readable or not self.path.is_file():
            return []
        try:
            con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5.0)
        except sqlite3.Error:
            return []
        try:
            return con.execute(sql, args).fetchall()
        except sqlite3.Error:  # damaged, or not a manifest: as if absent
            return []
        finally:
            con.close()

    def meta(self) -> dict[str, object]:
        """``{"schema": int, "updated": float}`` (keys absent when unknown)."""
        return dict(self._read("SELECT key, value FROM meta"))

    def schema(self) -> int | None:
        """The schema version the index was built with, or ``None`` (no readable manifest)."""
        value = self.meta().get("schema")
        return value if isinstance(value, int) else None

    def count(self) -> int:
        """How many source files the manifest lists."""
        rows = self._read("SELECT count(*) FROM sources")
        return int(rows[0][0]) if rows else 0

    def stamps(self, rels: Iterable[str] | None = None) -> dict[str, tuple[int, int]]:
        """``rel → (mtime ns, size)`` of every listed file (what a catch-up compares), or of
        the listed ones among ``rels`` (what a save compares: one row, not 100,000)."""
        if rels is None:
            return {rel: (mtime, size) for rel, mtime, size in self._read("SELECT rel, mtime, size FROM sources")}
        return {rel: (mtime, size) for rel, mtime, size in self._select("rel, mtime, size", rels)}

    def sha(self, rels: Iterable[str]) -> dict[str, str]:
        """``rel → SHA-1`` of the given listed files (those not listed are left out)."""
        return dict(self._select("rel, sha", rels))

    def _select(self, columns: str, rels: Iterable[str]) -> list[tuple]:
        wanted = list(rels)
        out: list[tuple] = []
        for i in range(0, len(wanted), 500):
            part = wanted[i:i + 500]
            out.extend(self._read(f"SELECT {columns} FROM sources WHERE rel IN ({','.join('?' * len(part))})",
                                  tuple(part)))
        return out

    def write(self, schema: int, changed: dict[str, Entry], removed: Iterable[str] = (),
              replace: bool = False) -> None:
        """Record ``changed`` entries, drop ``removed`` paths (``replace``: drop every other
        entry first), set the schema and the update time; one transaction.

        Raises:
            ManifestError: the file cannot be written (disk full, read-only folder, damage).
        """
        try:
            con = self._connect()
        except sqlite3.Error as exc:
            raise ManifestError(str(exc)) from exc
        try:
            with con:
                con.executescript(_SCHEMA)
                if replace:
                    con.execute("DELETE FROM sources")
                con.executemany("DELETE FROM sources WHERE rel = ?", [(r,) for r in removed])
                con.executemany("INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?)",
                                [(rel, *entry) for rel, entry in changed.items()])
                con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                [("schema", schema), ("updated", time.time())])
        except sqlite3.Error as exc:
            raise ManifestError(str(exc)) from exc
        finally:
            con.close()
