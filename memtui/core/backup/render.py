"""Render a workspace as a **backup tree** (DESIGN.md §1, §4 invariant 9; seed 004).

A backup tree is a mapping of relative paths (bytes, ``/``-separated) to file contents,
deterministic for a given workspace (the same workspace always renders to the same bytes):

``files/<workspace-relative path>``
    every workspace file byte for byte (memory tree, member notes, notebook, operator files,
    ``graph.jsonl``, skills, shared skills, session histories, ``memtui.toml``), except the
    secrets of ``config.json`` (the graph's bearer token in its ``Authorization`` header), whose
    values are left out and marked (:mod:`memtui.core.backup.redact`; invariant 8): CRLF,
    non-UTF-8 bytes, a missing final newline, empty files and odd names (spaces, Cyrillic,
    NFD, a leading ``-``, non-UTF-8 bytes) are kept as they are. Never
    ``.memtui/`` (the store is rendered below; the index is rebuilt; the lock is not data),
    never a ``.git`` folder, never the backup folder itself when it lies inside the
    workspace. Symbolic links and special files are skipped with a finding (a restore
    refuses them anyway: invariant 4).
``store/<table>.md``
    each table of ``.memtui/store.json`` as readable markdown (:func:`render_table`), every
    record with its doc id and every field with its JSON type, so a restore rebuilds the store
    record for record (:func:`parse_table`). New tables need no new code.
``remote/graph.jsonl``
    the member's remote graph (seed 002's graph over MCP), read at backup time and
    written in the reference server's own file form (entities, then relations, in the server's
    order), so a maintainer restoring offline gets the graph back. A restore puts it in
    ``.memtui/remote-graph.jsonl`` (:data:`REMOTE_STATE`), from where a render of the restored
    workspace takes it again (the round trip holds offline).
``MANIFEST``
    the format version, counts, empty folders, and ``sha256 mode size path`` per file.
``.gitattributes``
    ``* -text -filter -ident``: git must never convert line ends of the copies (a user's
    ``core.autocrlf`` or ``* text=auto`` would otherwise break the byte-for-byte promise).

Nothing in a table file is read back except record headings and field lines, so no banner
or header can be imported as content (seed 004, fourth round: "the export banner was
imported as the state preamble"); a multi-line text is split untrimmed, so its trailing
newline, or its absence, survives (same round: "every document lost its trailing newline").
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import stat
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import Any, Sequence

from memtui.core import atomic, jsonio, workspace
from memtui.core.files import is_inside
from memtui.core.backup.redact import redact
from memtui.core.findings import Finding
from memtui.core.store import STORE_NAME, StoreDamagedError, parse as parse_store

#: Version of the backup tree format written in ``MANIFEST``; restore refuses newer ones.
FORMAT = 1
MANIFEST = b"MANIFEST"
GITATTRIBUTES = b".gitattributes"
GITATTRIBUTES_TEXT = b"# memtui: keep every file of the backup tree byte for byte\n* -text -filter -ident\n"
FILES = b"files/"
STORE = b"store/"
#: The snapshot of a remote graph in the backup tree, and where a restore keeps it.
REMOTE_GRAPH = b"remote/graph.jsonl"
REMOTE_STATE = workspace.REMOTE_STATE
#: Beside it, what a restore knows of that snapshot: ``{"commit", "date"}`` of the backup (JSON; not
#: rendered, so the round trip is unchanged): :mod:`memtui.core.graph.snapshot` labels it with them.
REMOTE_ABOUT = ".memtui/remote-graph.json"
_MANIFEST_TITLE = "memtui backup tree"


class BackupFormatError(ValueError):
    """A backup tree file cannot be parsed; ``str(exc)`` names the file, line and reason."""


class StaleEntry(Exception):
    """A file a backup took as unchanged (by its ``stat``) holds other bytes when read: the
    caller renders the workspace again, reading every file (:mod:`memtui.core.backup.state`)."""


class Entry:
    """One file of a backup tree: its bytes and whether it is executable.

    ``Entry(data, executable)`` holds the bytes. ``Entry.known(load, digest, size, executable)``
    holds only what the last backup recorded of an unchanged file (its SHA-256 and size) and reads
    the bytes with ``load`` when asked for :attr:`data`; bytes that do not hash to ``digest``
    raise :class:`StaleEntry`.
    """

    __slots__ = ("_data", "executable", "_digest", "_size", "_load")

    def __init__(self, data: bytes, executable: bool = False) -> None:
        self._data: bytes | None = data
        self.executable = executable
        self._digest: str | None = None
        self._size = len(data)
        self._load: Callable[[], bytes] | None = None

    @classmethod
    def known(cls, load: Callable[[], bytes], digest: str, size: int, executable: bool = False) -> "Entry":
        entry = cls(b"", executable)
        entry._data, entry._digest, entry._size, entry._load = None, digest, size, load
        return entry

    @property
    def data(self) -> bytes:
        """The bytes (read now for an entry made by :meth:`known`).

        Raises:
            StaleEntry: they no longer hash to the recorded digest.
        """
        if self._data is None:
            assert self._load is not None
            data = self._load()
            if len(data) != self._size or hashlib.sha256(data).hexdigest() != self._digest:
                raise StaleEntry("a file changed while the backup read it")
            self._data = data
        return self._data

    @property
    def loaded(self) -> bool:
        """Whether the bytes are in memory (an entry made by :meth:`known` reads them on demand)."""
        return self._data is not None

    @property
    def digest(self) -> str:
        """SHA-256 of the bytes (hex), computed once."""
        if self._digest is None:
            self._digest = hashlib.sha256(self.data).hexdigest()
        return self._digest

    @property
    def size(self) -> int:
        """Length of the bytes."""
        return self._size

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entry):
            return NotImplemented
        return self.executable == other.executable and self.size == other.size and self.digest == other.digest

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Entry(size={self._size}, executable={self.executable})"


@dataclass(slots=True)
class BackupTree:
    """A rendered workspace.

    Attributes:
        files: backup-relative path (bytes, ``/``-separated) → :class:`Entry`, MANIFEST included.
        empty_folders: workspace-relative paths (bytes) of folders with nothing to back up in
            them (git cannot hold an empty folder; MANIFEST lists them and restore makes them).
        tables: the store as parsed: table name → {doc id (str): record}; ``None`` when the
            workspace has no store file.
        findings: what was skipped and why (symlinks, special files, unreadable files).
        left_out: workspace-relative path → how many secret values its copy leaves out
            (``config.json``'s ``Authorization`` headers: :mod:`memtui.core.backup.redact`).
    """

    files: dict[bytes, Entry] = field(default_factory=dict)
    empty_folders: list[bytes] = field(default_factory=list)
    tables: dict[str, dict[str, Any]] | None = None
    findings: list[Finding] = field(default_factory=list)
    left_out: dict[bytes, int] = field(default_factory=dict)
    #: records per table of a store taken as unchanged since the last backup (not parsed:
    #: :attr:`tables` is then ``None``), else ``None``
    table_counts: dict[str, int] | None = None
    #: the store records' secret findings as the last backup scanned them (an unchanged store)
    store_findings: list[Finding] | None = None
    #: what was read to render it: workspace-relative path → ``stat`` (for the next backup)
    stats: dict[bytes, os.stat_result] = field(default_factory=dict)

    @property
    def store_present(self) -> bool:
        """Whether the workspace has a store file."""
        return self.tables is not None or self.table_counts is not None

    def table_sizes(self) -> dict[str, int]:
        """Records per table."""
        if self.tables is not None:
            return {name: len(t) for name, t in self.tables.items()}
        return dict(self.table_counts or {})

    @property
    def workspace_files(self) -> int:
        """How many workspace files the tree holds (under ``files/``)."""
        return sum(1 for p in self.files if p.startswith(FILES))

    @property
    def records(self) -> int:
        """How many store records the tree holds."""
        return sum(self.table_sizes().values())

    def counts(self) -> dict[str, Any]:
        """``{"files", "bytes", "empty_folders", "tables": {name: records}, "records"}``."""
        return {
            "files": self.workspace_files,
            "bytes": sum(e.size for p, e in self.files.items() if p.startswith(FILES)),
            "empty_folders": len(self.empty_folders),
            "tables": self.table_sizes(),
            "records": self.records,
        }


def shown(path: bytes) -> str:
    """A path for people: UTF-8 as written (``заметка.md``), other bytes as ``\\xe5``."""
    return path.decode("utf-8", "backslashreplace")


def _json(value: Any) -> str:
    """One-line JSON; a lone surrogate comes out as its JSON escape (``\\udc80``), so the
    text always encodes as UTF-8 and parses back to the same value."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _path_json(path: bytes) -> str:
    """A path as a JSON string; non-UTF-8 bytes become ``\\udcXX`` (surrogateescape)."""
    return _json(os.fsdecode(path) if os.name != "nt" else path.decode("utf-8", "surrogateescape"))


def _path_from_json(text: str) -> bytes:
    return jsonio.loads(text).encode("utf-8", "surrogateescape")


# -- store tables ------------------------------------------------------------------------------

_ENCODER = json.JSONEncoder(ensure_ascii=False)
_BLOCK_END = {True: "text, ends with a newline", False: "text, no newline at the end"}
_BLOCK_FLAG = {v: k for k, v in _BLOCK_END.items()}


def _block_ok(value: Any) -> bool:
    """True when a string can be shown as a fenced text block and parsed back exactly."""
    if not isinstance(value, str) or "\n" not in value:
        return False
    for ch in value:
        code = ord(ch)
        if (code < 32 and ch not in "\n\t") or code == 127 or 0x80 <= code < 0xA0 \
                or ch in "\u2028\u2029" or 0xD800 <= code <= 0xDFFF:
            return False
    return True


def _sorted_ids(table: dict[str, Any]) -> list[str]:
    return sorted(table, key=lambda d: (0, int(d), "") if d.isdigit() else (1, 0, d))


def table_file(name: str) -> bytes:
    """The backup-relative path of table ``name``: ``store/<percent-encoded name>.md``."""
    return STORE + urllib.parse.quote(name, safe="-_").encode("ascii") + b".md"


def table_name(path: bytes) -> str:
    """The table name of a ``store/<name>.md`` path (inverse of :func:`table_file`)."""
    stem = path[len(STORE):-len(b".md")]
    return urllib.parse.unquote(stem.decode("ascii"))


def render_table(name: str, table: dict[str, Any]) -> bytes:
    """Render one store table as markdown.

    Args:
        name: the table's name (its kind: ``audit``, ``versions``, ``provenance``, …).
        table: ``{doc id: record}`` as in ``store.json``.

    Returns:
        UTF-8 bytes: a ``# Table`` heading, the record count, then per record (doc ids in
        numeric order) a ``## Record <id>`` heading and one ``- "key": <JSON>`` line per field
        in the record's own key order. A multi-line string is shown as a fenced block
        (``- "key": text, ends with a newline`` then the fence), everything else as JSON, so
        int, float, bool, null, str, list and dict keep their type (seed 004: a record keeps
        its kind; ids and timestamps preserved). A lone surrogate (only ever inside a JSON
        string here) is written as its JSON escape.
    """
    encode = _ENCODER.encode
    keys: dict[str, str] = {}
    out = [f"# Table {encode(name)}", "", f"{len(table)} records.", ""]
    append = out.append
    for doc_id in _sorted_ids(table):
        record = table[doc_id]
        append(f"## Record {doc_id if doc_id.isdigit() else encode(doc_id)}")
        append("")
        for key, value in record.items():
            shown_key = keys.get(key)
            if shown_key is None:
                shown_key = keys[key] = encode(key)
            if value.__class__ is str and "\n" in value and _block_ok(value):
                run, longest = 0, 0
                if "`" in value:
                    for ch in value:
                        run = run + 1 if ch == "`" else 0
                        longest = max(longest, run)
                fence = "`" * max(3, longest + 1)
                ends = value.endswith("\n")
                append(f"- {shown_key}: {_BLOCK_END[ends]}")
                append(fence + "text")
                append(value[:-1] if ends else value)
                append(fence)
            else:
                append(f"- {shown_key}: {encode(value)}")
        append("")
    return "\n".join(out).encode("utf-8", "backslashreplace")


def parse_table(data: bytes, shown_path: str = "store") -> dict[str, Any]:
    """Parse a file :func:`render_table` wrote back into ``{doc id: record}``.

    Only ``## Record`` headings and field lines carry data; the ``# Table`` heading and the
    count line are checked, never imported.

    Raises:
        BackupFormatError: the file is not UTF-8, a line is not of the format, a value is not
            JSON, a fenced block is not closed, or the record count differs from the file's.
    """
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise BackupFormatError(f"{shown_path}: byte {exc.start} is not UTF-8") from exc
    def bad(i: int, why: str) -> BackupFormatError:
        return BackupFormatError(f"{shown_path}:{i + 1}: {why}")

    if not lines or not lines[0].startswith("# Table "):
        raise bad(0, "the file does not start with its `# Table` heading")
    table: dict[str, Any] = {}
    known: dict[str, str] = {}
    record: dict[str, Any] | None = None
    expected: int | None = None
    i = 1
    while i < len(lines):
        line = lines[i]
        if line == "":
            i += 1
            continue
        if line.startswith("## Record "):
            doc_id = _record_id(line[len("## Record "):], i, bad)
            if doc_id in table:
                raise bad(i, f"record id {line[len('## Record '):]!r} is not valid or repeats")
            record = table[doc_id] = {}
        elif line.startswith("- ") and record is not None:
            key, end = _field_key(line, known, i, bad)
            rest = line[end + 2:]
            if rest in _BLOCK_FLAG:
                record[key], i = _text_block(lines, i, _BLOCK_FLAG[rest], bad)
                continue
            try:
                value, stop = jsonio.decode(rest, allow_nan=True)
            except json.JSONDecodeError as exc:
                raise bad(i, f"the value of {key!r} is not JSON ({exc.msg})") from exc
            if stop != len(rest):
                raise bad(i, f"the value of {key!r} is followed by other text")
            record[key] = value
        elif record is None and expected is None and line.endswith(" records.") \
                and line.split(" ", 1)[0].isdigit():
            expected = int(line.split(" ", 1)[0])
        else:
            raise bad(i, f"unexpected line {line[:60]!r}")
        i += 1
    if expected is None:
        raise bad(1, "the record count line is missing")
    if expected != len(table):
        raise BackupFormatError(f"{shown_path}: says {expected} records but holds {len(table)}; "
                                "the file was cut or edited")
    return table


def _record_id(ref: str, i: int, bad: Callable[[int, str], BackupFormatError]) -> str:
    """The doc id of a ``## Record`` heading: digits as written, else a JSON string."""
    try:
        doc_id = ref if ref.isdigit() else jsonio.loads(ref)
    except json.JSONDecodeError as exc:
        raise bad(i, f"record id {ref!r} is neither a number nor a JSON string") from exc
    if not isinstance(doc_id, str):
        raise bad(i, f"record id {ref!r} is not valid or repeats")
    return doc_id


def _field_key(line: str, known: dict[str, str], i: int,
               bad: Callable[[int, str], BackupFormatError]) -> tuple[str, int]:
    """The key of a field line ``- "key": value`` and where its literal ends. A JSON string
    literal is prefix-free, so a known key's literal followed by ``": "`` is that key; an
    unknown one is decoded once and remembered in ``known``."""
    cut = line.find('": ', 2)
    key = known.get(line[2:cut + 1]) if cut > 0 else None
    if key is not None:
        return key, cut + 1
    try:
        key, end = jsonio.decode(line, 2)
    except json.JSONDecodeError as exc:
        raise bad(i, "a field line does not start with a JSON key") from exc
    if not isinstance(key, str) or line[end:end + 2] != ": ":
        raise bad(i, "a field line is not `- \"key\": value`")
    known[line[2:end]] = key
    return key, end


def _text_block(lines: list[str], i: int, trailing_newline: bool,
                bad: Callable[[int, str], BackupFormatError]) -> tuple[str, int]:
    """The text of the fenced block after the field line ``i``, and the line after it."""
    fence_line = lines[i + 1] if i + 1 < len(lines) else ""
    fence = fence_line[:-len("text")] if fence_line.endswith("text") else ""
    if len(fence) < 3 or set(fence) != {"`"}:
        raise bad(i + 1, "a text block does not open with its fence")
    try:
        close = lines.index(fence, i + 2)
    except ValueError:
        raise bad(i + 1, "a text block is never closed") from None
    return "\n".join(lines[i + 2:close]) + ("\n" if trailing_newline else ""), close + 1


def render_store(tables: dict[str, dict[str, Any]] | None) -> dict[bytes, bytes]:
    """Every table as ``{store/<name>.md: bytes}`` (``{}`` when there is no store)."""
    return {table_file(name): render_table(name, t) for name, t in (tables or {}).items()}


def store_json(tables: dict[str, dict[str, Any]], order: list[str] | None = None) -> bytes:
    """The ``store.json`` bytes for ``tables`` as the store writes them (same JSON style).

    Tables come in ``order`` (MANIFEST keeps the store's own order), then any others by name;
    records in doc id order. For a store written by memtui this gives the same bytes back.
    """
    names = [n for n in (order or []) if n in tables] + sorted(set(tables) - set(order or []))
    ordered = {name: {d: tables[name][d] for d in _sorted_ids(tables[name])} for name in names}
    return json.dumps(ordered, ensure_ascii=False).encode("utf-8", "backslashreplace")


# -- the workspace -----------------------------------------------------------------------------

def _is_git_dir(name: bytes) -> bool:
    return name.lower() == b".git"


def _reader(path: bytes) -> Callable[[], bytes]:
    def load() -> bytes:
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError as exc:  # gone or unreadable since its stat: rendered again, reading everything
            raise StaleEntry(f"a file changed while the backup read it ({exc.strerror or exc})") from exc
    return load


def _walk(root: bytes, skip: set[bytes], tree: BackupTree, known: Known | None = None) -> None:
    """Add every regular file under ``root`` to ``tree`` (sorted, symlinks not followed); a file
    ``known`` vouches for by its ``stat`` is not read (:meth:`Entry.known`)."""
    stack: list[bytes] = [b""]
    while stack:
        rel_dir = stack.pop()
        folder = os.path.join(root, rel_dir) if rel_dir else root
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            tree.findings.append(Finding.make(
                "file-unreadable", shown(rel_dir) or ".", f"folder cannot be listed: {exc.strerror or exc}",
                "check its permissions; it is not in this backup"))
            continue
        kept = 0
        subdirs = []
        for entry in entries:
            name: bytes = entry.name
            rel = rel_dir + b"/" + name if rel_dir else name
            if not rel_dir and name == b".memtui":
                continue
            if _is_git_dir(name):
                tree.findings.append(Finding.make(
                    "backup-skipped", shown(rel), "is a git folder; it is not part of the backup",
                    "nothing to do (a restore refuses .git folders)"))
                kept += 1
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                tree.findings.append(Finding.make("file-unreadable", shown(rel), f"cannot be read: {exc}",
                                                  "check the file; it is not in this backup"))
                continue
            if stat.S_ISREG(st.st_mode) and atomic.is_leftover(os.fsdecode(name)):
                tree.findings.append(Finding.make(
                    "backup-skipped", shown(rel),
                    "is a temporary file an interrupted memtui write left behind; it is not backed up",
                    "delete it (it holds no data of its own), or let memtui's next write of its file remove it"))
                kept += 1
                continue
            if stat.S_ISLNK(st.st_mode):
                tree.findings.append(Finding.make(
                    "backup-skipped", shown(rel),
                    f"is a symbolic link (to {shown(os.readlink(entry.path))}); links are not backed up",
                    "replace the link with the file it points to if it should be backed up"))
                kept += 1
                continue
            if stat.S_ISDIR(st.st_mode):
                if os.path.realpath(entry.path) in skip:
                    kept += 1
                    continue
                subdirs.append(rel)
                kept += 1
                continue
            if not stat.S_ISREG(st.st_mode):
                tree.findings.append(Finding.make("backup-skipped", shown(rel),
                                                  "is not a regular file (a pipe, socket or device)",
                                                  "nothing to do; it is not in this backup"))
                kept += 1
                continue
            if rel_dir:  # a top-level file is always read (config.json's tokens are left out)
                tree.stats[rel] = st
                digest = known.file(rel, st) if known is not None else None
                if digest is not None:
                    tree.files[FILES + rel] = Entry.known(_reader(entry.path), digest, st.st_size,
                                                          bool(st.st_mode & stat.S_IXUSR))
                    kept += 1
                    continue
            try:
                with open(entry.path, "rb") as handle:
                    data = handle.read()
            except OSError as exc:
                tree.findings.append(Finding.make(
                    "file-unreadable", shown(rel), f"cannot be read: {exc.strerror or exc}",
                    "check its permissions; it is not in this backup"))
                continue
            if not rel_dir:  # config.json's tokens are left out (invariant 8; redact.py)
                data, secrets = redact(rel, data)
                if secrets:
                    tree.left_out[rel] = secrets
            tree.files[FILES + rel] = Entry(data, bool(st.st_mode & stat.S_IXUSR))
            kept += 1
        if kept == 0 and rel_dir:
            tree.empty_folders.append(rel_dir)
        stack.extend(reversed(subdirs))


def render_manifest(tree: BackupTree) -> bytes:
    """The ``MANIFEST`` of ``tree`` (every file but itself), deterministic."""
    counts = tree.counts()
    lines = [_MANIFEST_TITLE, f"format {FORMAT}", f"files {counts['files']}",
             f"bytes {counts['bytes']}", f"empty-folders {counts['empty_folders']}",
             f"store {'present' if tree.store_present else 'absent'}"]
    lines += [f"table {_json(name)} {n}" for name, n in counts["tables"].items()]
    lines += ["", "sha256 mode size path"]
    for path in sorted(tree.files):
        if path == MANIFEST:
            continue
        entry = tree.files[path]
        lines.append(f"{entry.digest} {'100755' if entry.executable else '100644'} {entry.size} {_path_json(path)}")
    lines += ["", "empty folders"]
    lines += [_path_json(p) for p in sorted(tree.empty_folders)]
    return ("\n".join(lines) + "\n").encode("utf-8")


@dataclass(slots=True)
class Manifest:
    """A parsed ``MANIFEST``.

    Attributes:
        format: the format version.
        store_present: whether the workspace had a store file.
        tables: table name → record count.
        files: backup-relative path → (sha256 hex, executable, size).
        empty_folders: workspace-relative folder paths.
    """

    format: int
    store_present: bool
    tables: dict[str, int]
    files: dict[bytes, tuple[str, bool, int]]
    empty_folders: list[bytes]


def parse_manifest(data: bytes) -> Manifest:
    """Parse ``MANIFEST`` bytes.

    Raises:
        BackupFormatError: not a memtui MANIFEST, a newer format, or a malformed line.
    """
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise BackupFormatError(f"MANIFEST: byte {exc.start} is not UTF-8") from exc
    if not lines or lines[0] != _MANIFEST_TITLE:
        raise BackupFormatError("MANIFEST: this is not a memtui backup tree (first line differs)")
    out = Manifest(0, False, {}, {}, [])
    section = "head"
    for number, line in enumerate(lines[1:], start=2):
        try:
            if line == "":
                continue
            if line == "sha256 mode size path":
                section = "files"
            elif line == "empty folders":
                section = "folders"
            elif section == "head":
                word, _, rest = line.partition(" ")
                if word == "format":
                    out.format = int(rest)
                    if out.format > FORMAT:
                        raise BackupFormatError(
                            f"MANIFEST: backup format {out.format} is newer than this memtui reads "
                            f"({FORMAT}); update memtui to restore it")
                elif word == "store":
                    out.store_present = rest == "present"
                elif word == "table":
                    name, end = jsonio.decode(rest)
                    out.tables[name] = int(rest[end:].strip())
            elif section == "files":
                digest, mode, size, path = line.split(" ", 3)
                out.files[_path_from_json(path)] = (digest, mode == "100755", int(size))
            else:
                out.empty_folders.append(_path_from_json(line))
        except BackupFormatError:
            raise
        except (ValueError, json.JSONDecodeError) as exc:
            raise BackupFormatError(f"MANIFEST:{number}: malformed line ({exc})") from exc
    return out


class Known:
    """What a renderer may take as unchanged without reading it (the interface
    :class:`memtui.core.backup.state.BackupState` implements; this base vouches for nothing)."""

    def file(self, rel: bytes, st: os.stat_result) -> str | None:
        """The SHA-256 of workspace file ``rel`` when its ``st`` says it is unchanged, else ``None``."""
        return None

    def store(self, st: os.stat_result) -> "KeptStore | None":
        """What the last backup rendered of ``store.json`` when ``st`` says it is unchanged."""
        return None

    def dest(self, path: bytes, st: os.stat_result) -> str | None:
        """The SHA-256 of backup-folder file ``path`` when its ``st`` says it is unchanged."""
        return None


@dataclass(frozen=True, slots=True)
class KeptStore:
    """An unchanged store as the last backup rendered it: ``tables`` name → (records, SHA-256 and
    size of its ``store/<name>.md``), in the store's order; ``findings``: its records' secret
    findings."""

    tables: dict[str, tuple[int, str, int]]
    findings: list[Finding]


def render(root: str | os.PathLike[str], *, skip: Sequence[str | os.PathLike[str]] = (),
           remote_graph: bytes | None = None, known: Known | None = None) -> BackupTree:
    """Render the workspace at ``root`` into a :class:`BackupTree` (read-only: writes nothing).

    Args:
        root: the workspace folder.
        skip: folders never to enter (the backup folder when it lies inside the workspace).
        remote_graph: the remote graph read at backup time, in server file form
            (:func:`memtui.core.graph.remote.view_bytes`); ``None``: the snapshot a restore left
            in :data:`REMOTE_STATE`, if any.
        known: what the last backup read, vouched for by ``stat`` (:mod:`memtui.core.backup.state`):
            such files and an unchanged store are not read; their entries read on demand and
            raise :class:`StaleEntry` when the bytes differ after all (render again without it).

    Returns:
        The tree, with ``MANIFEST`` and ``.gitattributes``; skipped entries are findings.

    Raises:
        StoreDamagedError: ``.memtui/store.json`` cannot be read; a backup without the store
            would claim a completeness it does not have, so the caller refuses.
    """
    root_b = os.fsencode(os.path.realpath(root))
    tree = BackupTree()
    store_path = Path(os.fsdecode(root_b)) / ".memtui" / STORE_NAME
    if store_path.is_symlink() or (os.path.lexists(store_path) and not is_inside(Path(os.fsdecode(root_b)), store_path)):
        raise StoreDamagedError(store_path, "it is (or lies behind) a symbolic link; memtui does not follow it")
    if store_path.exists():
        st = os.stat(store_path)
        tree.stats[b".memtui/" + STORE_NAME.encode()] = st
        unchanged = known.store(st) if known is not None else None
        if unchanged is None:
            tree.tables = parse_store(store_path.read_bytes(), store_path)
        else:
            _kept_store(tree, store_path, unchanged)
    _walk(root_b, {os.fsencode(os.path.realpath(s)) for s in skip}, tree, known)
    if remote_graph is None:
        kept = Path(os.fsdecode(root_b)) / REMOTE_STATE
        if kept.is_file() and not kept.is_symlink():
            remote_graph = kept.read_bytes()
    if remote_graph is not None:
        tree.files[REMOTE_GRAPH] = Entry(remote_graph)
    for path, data in render_store(tree.tables).items():
        tree.files[path] = Entry(data)
    tree.files[GITATTRIBUTES] = Entry(GITATTRIBUTES_TEXT)
    tree.empty_folders.sort()
    tree.files[MANIFEST] = Entry(render_manifest(tree))
    return tree


def _kept_store(tree: BackupTree, store_path: Path, kept: KeptStore) -> None:
    """Entries for the tables of an unchanged store, rendered only when read."""
    parsed: list[dict[str, dict[str, Any]]] = []

    def table(name: str) -> bytes:
        if not parsed:
            try:
                parsed.append(parse_store(store_path.read_bytes(), store_path))
            except (OSError, StoreDamagedError) as exc:
                raise StaleEntry("the store changed while the backup read it") from exc
        if name not in parsed[0]:
            raise StaleEntry("the store changed while the backup read it")
        return render_table(name, parsed[0][name])

    tree.table_counts = {name: count for name, (count, _digest, _size) in kept.tables.items()}
    tree.store_findings = list(kept.findings)
    for name, (_count, digest, size) in kept.tables.items():
        tree.files[table_file(name)] = Entry.known(functools.partial(table, name), digest, size)


# -- the backup folder on disk -----------------------------------------------------------------

@dataclass(slots=True)
class WriteStats:
    """What :func:`write_tree` did: paths written, removed, and left unchanged (counts), and the
    ``stat`` of every file of the tree in the folder afterwards (for the next backup)."""

    written: list[bytes] = field(default_factory=list)
    removed: list[bytes] = field(default_factory=list)
    unchanged: int = 0
    stats: dict[bytes, os.stat_result] = field(default_factory=dict)


def _existing(dest: bytes) -> dict[bytes, os.stat_result]:
    found: dict[bytes, os.stat_result] = {}
    stack = [b""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(os.path.join(dest, rel_dir) if rel_dir else dest) as it:
                for entry in it:
                    rel = rel_dir + b"/" + entry.name if rel_dir else entry.name
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(rel)
                    else:
                        found[rel] = st
        except FileNotFoundError:
            continue
    return found


def write_tree(tree: BackupTree, dest: str | os.PathLike[str], known: Known | None = None) -> WriteStats:
    """Make the folder ``dest`` hold exactly ``tree``, rewriting only files that changed.

    A file whose bytes and executable bit already match is not touched (so git sees no
    change and the repository grows by diffs); files no longer in the tree are
    removed, then the folders they leave empty. Symbolic links in ``dest`` are replaced, never
    followed. A file ``known`` vouches for by its ``stat`` (the last backup wrote it, and nothing
    touched it since) is compared by its recorded SHA-256, without reading it.

    Returns:
        :class:`WriteStats`.

    Raises:
        OSError: ``dest`` cannot be written.
    """
    dest_b = os.fsencode(dest)
    os.makedirs(dest_b, exist_ok=True)
    stats = WriteStats()
    existing = _existing(dest_b)
    for path in sorted(tree.files):
        entry = tree.files[path]
        full = os.path.join(dest_b, path)
        st = existing.get(path)
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == entry.size \
                and bool(st.st_mode & stat.S_IXUSR) == entry.executable:
            same = known is not None and known.dest(path, st) == entry.digest
            if not same:
                with open(full, "rb") as handle:
                    same = hashlib.sha256(handle.read()).hexdigest() == entry.digest
            if same:
                stats.unchanged += 1
                stats.stats[path] = st
                continue
        parent = os.path.dirname(full)
        if not os.path.isdir(parent) or os.path.islink(parent):
            _make_folder(dest_b, os.path.dirname(path))
        if st is not None or os.path.lexists(full):
            if os.path.isdir(full) and not os.path.islink(full):
                _remove_folder(full)
            else:
                os.unlink(full)
        fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o755 if entry.executable else 0o644)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(entry.data)
        except BaseException:  # a full disk: no half-written file is left for git to see
            os.unlink(full)
            raise
        os.chmod(full, 0o755 if entry.executable else 0o644)
        stats.written.append(path)
        stats.stats[path] = os.stat(full, follow_symlinks=False)
    for path in sorted(set(existing) - set(tree.files)):
        full = os.path.join(dest_b, path)
        if os.path.lexists(full) and not (os.path.isdir(full) and not os.path.islink(full)):
            os.unlink(full)
            stats.removed.append(path)
    if stats.removed or known is None:  # a folder is left empty only by a removal (or by hand)
        for folder, _dirs, _files in sorted(os.walk(dest_b, topdown=False), reverse=True):
            if folder != dest_b and not os.listdir(folder):
                os.rmdir(folder)
    return stats


def _make_folder(dest: bytes, rel: bytes) -> None:
    """Create ``dest/rel`` one part at a time, replacing files or links in the way."""
    current = dest
    for part in rel.split(b"/"):
        current = os.path.join(current, part)
        if os.path.islink(current) or (os.path.lexists(current) and not os.path.isdir(current)):
            os.unlink(current)
        if not os.path.isdir(current):
            os.mkdir(current)


def _remove_folder(path: bytes) -> None:
    shutil.rmtree(path)
