"""The graph file format: lossless reading of ``memory/graph.jsonl`` (seed 002).

The file is in the format of the MCP reference memory server (npm
``@modelcontextprotocol/server-memory``, observed at 2026.8.31, see
``../shared/corpus/README.md`` "Reference server"): one JSON object a line,
``{"type":"entity","name","entityType","observations":[...]}`` or
``{"type":"relation","from","to","relationType"}``.

Reading is lenient (DESIGN.md invariant 10: an agent's damaged file is read, never refused): a BOM, CRLF, blank lines, no
final newline, extra keys and unknown record types are accepted; a bad line (cut off, two
objects on one line, an array, wrong field types, a missing field, not UTF-8) becomes a
:class:`~memtui.core.findings.Finding` with its line number and is *kept*, byte for byte.
The legacy single-object layout (``{"entities":[...],"relations":[...]}``) is recognised and
offered for conversion (:class:`~memtui.core.graph.operations.ConvertLegacy`).

A :class:`Graph` is a list of :class:`Line` objects that remember their bytes, so writing it
back (:mod:`memtui.core.graph.commit`) keeps every line an edit did not touch. A line memtui
writes is in the server's own form: compact JSON, the server's key order, non-ASCII unescaped
(as ``JSON.stringify`` does), with any extra keys of an edited record kept after the known ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from memtui.core import jsonio
from memtui.core.errors import ConflictError, MemtuiError
from memtui.core.findings import Finding
from memtui.core.paging import Page
from memtui.core.text import final_newline


BOM = b"\xef\xbb\xbf"


#: The record kinds a :class:`Line` can have.
ENTITY, RELATION, BLANK, OTHER, LEGACY, INVALID, MALFORMED = (
    "entity", "relation", "blank", "other", "legacy", "invalid", "malformed")


#: Keys the server keeps, in the order it writes them (its ``saveGraph``).
ENTITY_KEYS = ("type", "name", "entityType", "observations")


RELATION_KEYS = ("type", "from", "to", "relationType")


class GraphEditError(MemtuiError):
    """An operation cannot be applied to this graph (no such entity, name taken, ...).

    ``str(exc)`` is a sentence saying what is wrong and what to do instead.
    """


class GraphConflictError(ConflictError):
    """The graph file changed on disk since it was loaded and the edit cannot be re-applied.

    Attributes:
        diff: a unified diff (text) from the loaded bytes to the bytes now on disk, cut to
            :data:`DIFF_LIMIT` lines; empty when the file vanished.
    """

    def __init__(self, message: str, diff: str = "") -> None:
        super().__init__(message)
        self.diff = diff


#: Longest conflict diff kept in :class:`GraphConflictError` (lines).
DIFF_LIMIT = 200


@dataclass(frozen=True, slots=True)
class Entity:
    """An entity record of the graph (server format).

    Attributes:
        name: the entity's name (any string, the empty one included; seed 002).
        entity_type: its ``entityType``.
        observations: its observations, in file order (duplicates kept as written).
        line: 1-based line number in the graph it belongs to (shifts after an edit).
    """

    name: str
    entity_type: str
    observations: tuple[str, ...]
    line: int = 0

    def to_json(self) -> dict:
        """``{"name", "entityType", "observations", "line"}`` for ``--json`` output."""
        return {"name": self.name, "entityType": self.entity_type,
                "observations": list(self.observations), "line": self.line}


@dataclass(frozen=True, slots=True)
class Relation:
    """A relation record: ``source --relation_type--> target`` (``from``, ``to``, ``relationType``).

    Attributes:
        source: the ``from`` entity name.
        target: the ``to`` entity name.
        relation_type: the ``relationType``.
        line: 1-based line number in the graph it belongs to.
    """

    source: str
    target: str
    relation_type: str
    line: int = 0

    @property
    def triple(self) -> tuple[str, str, str]:
        """``(from, to, relationType)``: the identity the server uses for relations."""
        return (self.source, self.target, self.relation_type)

    def to_json(self) -> dict:
        """``{"from", "to", "relationType", "line"}`` for ``--json`` output."""
        return {"from": self.source, "to": self.target, "relationType": self.relation_type,
                "line": self.line}


class Line:
    """One line of the graph file, with its bytes and what they mean.

    Attributes:
        raw: the line's bytes without its terminator (and without the file's BOM). A line built
            from a record (``raw=None``: a remote graph's records, :func:`record_line`) makes its
            server-form bytes on first use, so a 50,000-entity read does not serialise every
            record it may never write.
        crlf: the line ended with ``\\r\\n`` (else ``\\n``, or nothing if it was last).
        kind: ``entity``, ``relation``, ``blank``, ``other`` (unknown record type, kept),
            ``legacy`` (a single-object-layout line), ``invalid`` (JSON object with missing
            or wrong-typed fields) or ``malformed`` (not one JSON object).
        record: the :class:`Entity` or :class:`Relation` for good records, else ``None``.
        problem: why an ``invalid``/``malformed`` line is bad, else ``""``.
        origin: the 1-based line number in the file as loaded, ``0`` for a line memtui made.
    """

    __slots__ = ("_raw", "crlf", "kind", "record", "problem", "origin")

    def __init__(self, raw: bytes | None, crlf: bool, kind: str, record: Entity | Relation | None = None,
                 problem: str = "", origin: int = 0) -> None:
        if raw is None and record is None:
            raise TypeError("a Line needs its bytes or its record")
        self._raw = raw
        self.crlf = crlf
        self.kind = kind
        self.record = record
        self.problem = problem
        self.origin = origin

    @property
    def raw(self) -> bytes:
        """The line's bytes (made in the server's form from :attr:`record` when built without)."""
        if self._raw is None:
            record = self.record
            self._raw = entity_line(record) if isinstance(record, Entity) else relation_line(record)  # type: ignore[arg-type]
        return self._raw

    @raw.setter
    def raw(self, value: bytes) -> None:
        self._raw = value

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Line({self.kind}, {self.raw[:60]!r}, origin={self.origin})"

    @property
    def entity(self) -> "Entity":
        """The line's :class:`Entity` (call only on an ``entity`` line).

        Raises:
            TypeError: the line holds no entity (a programming error).
        """
        if not isinstance(self.record, Entity):
            raise TypeError(f"line {self.origin} is a {self.kind} line, not an entity")
        return self.record

    @property
    def relation(self) -> "Relation":
        """The line's :class:`Relation` (call only on a ``relation`` line).

        Raises:
            TypeError: the line holds no relation (a programming error).
        """
        if not isinstance(self.record, Relation):
            raise TypeError(f"line {self.origin} is a {self.kind} line, not a relation")
        return self.record


def server_json(obj: object) -> bytes:
    """Serialise ``obj`` as the server's ``JSON.stringify`` does, as UTF-8 bytes.

    Compact (``separators=(",", ":")``), non-ASCII written as is (``JSON.stringify`` does not
    escape it), control characters as ``\\n``/``\\t``/``\\u00XX`` escapes, and a lone
    surrogate as a ``\\udXXX`` escape (well-formed ``JSON.stringify``, ES2019).

    Raises:
        ValueError: ``obj`` holds NaN or an infinity (JSON has no such numbers).
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c
                       for c in text).encode("utf-8")


def entity_line(entity: Entity, extra: dict | None = None, type_value: str = "entity") -> bytes:
    """The server-form bytes of ``entity``; ``extra`` keys (``createdAt``...) follow the known ones."""
    obj = {"type": type_value, "name": entity.name, "entityType": entity.entity_type,
           "observations": list(entity.observations)}
    if extra:
        obj.update(extra)
    return server_json(obj)


def relation_line(relation: Relation, extra: dict | None = None, type_value: str = "relation") -> bytes:
    """The server-form bytes of ``relation``; ``extra`` keys follow the known ones."""
    obj = {"type": type_value, "from": relation.source, "to": relation.target,
           "relationType": relation.relation_type}
    if extra:
        obj.update(extra)
    return server_json(obj)


def _extra_keys(line: Line) -> dict:
    """The keys of ``line``'s JSON object that the server does not know (in file order); ``{}``
    at once for a line built from a record alone (it has none)."""
    if line._raw is None:
        return {}
    try:
        obj = jsonio.loads(line.raw)
    except ValueError:
        return {}
    if not isinstance(obj, dict):
        return {}
    known = ENTITY_KEYS if line.kind == ENTITY else RELATION_KEYS
    return {k: v for k, v in obj.items() if k not in known}


def record_extras(line: Line) -> dict:
    """The keys of a record line that the reference server does not know (``createdAt``,
    ``version`` of a fork...), in their order: what a lossless copy must carry beside the record."""
    return _extra_keys(line)


def served_line(kind: str, record: "Entity | Relation", served: dict, number: int) -> Line:
    """The :class:`Line` of one record a server answered (``served``, its JSON object), kept as
    losslessly as a local line: a record with keys beyond the known ones keeps them, in their
    place and order, in its bytes (the file form: ``type`` first unless the server placed it);
    a plain record makes its bytes only when used.

    Args:
        kind: :data:`ENTITY` or :data:`RELATION`.
        record: the record read from ``served``.
        served: the server's object for it.
        number: its 1-based position (the line number findings name).
    """
    known = ENTITY_KEYS if kind == ENTITY else RELATION_KEYS
    if len(served) <= len(known) and all(k in known for k in served):
        return Line(None, False, kind, record, origin=number)
    obj = served if "type" in served else {"type": kind, **served}
    return Line(server_json(obj), False, kind, record, origin=number)


def _kind_of_value(value: object) -> str:
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, str):
        return "a JSON string"
    if value is None:
        return "JSON null"
    if isinstance(value, bool):
        return "a JSON boolean"
    return "a JSON number"


def _diagnose(text: str) -> str:
    """Why ``text`` (one line that :func:`jsonio.decode` refused) is not one JSON object."""
    start = len(text) - len(text.lstrip())
    try:
        value, end = jsonio.decode(text, start)
    except jsonio.JSONError as exc:
        return str(exc)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) or "Unterminated string" in exc.msg:
            return ("is cut off: the record ends before it is complete "
                    "(likely an interrupted write)")
        return f"is not valid JSON: {exc.msg} at column {exc.pos + 1}"
    rest = text[end:].strip()
    if not rest:  # pragma: no cover - json.loads would have accepted it
        return f"is {_kind_of_value(value)}"
    try:
        jsonio.decode(rest, 0)
        return ("holds two JSON values on one line (records glued together, "
                "likely an append to a file without a final newline)")
    except ValueError:
        return f"has extra text after the JSON value, at column {end + 1}"


def _check_fields(obj: dict, keys: Sequence[str], what: str) -> str:
    """Empty string if ``obj`` has string fields ``keys`` (and a list of strings), else the reason."""
    for key in keys:
        if key not in obj:
            return f"is {what} without `{key}` (a missing field)"
        value = obj[key]
        if key == "observations":
            if not isinstance(value, list):
                return f"is {what} whose `observations` is {_kind_of_value(value)}, not a list of strings"
            for position, item in enumerate(value, 1):
                if not isinstance(item, str):
                    return (f"is {what} whose observation {position} is "
                            f"{_kind_of_value(item) if not isinstance(item, dict) else 'a JSON object'}, not a string")
        elif not isinstance(value, str):
            shown = "a JSON object" if isinstance(value, dict) else _kind_of_value(value)
            return f"is {what} whose `{key}` is {shown}, not a string"
    return ""


def parse_line(raw: bytes, crlf: bool, number: int) -> Line:
    """Interpret one line's bytes (no terminator, no BOM) as a graph record.

    Args:
        raw: the line's bytes.
        crlf: whether it ended with CRLF (kept for writing).
        number: its 1-based line number (set as ``origin`` and on the record).

    Returns:
        A :class:`Line`; never raises: bad input gives ``kind`` ``malformed`` or ``invalid``
        with ``problem`` set.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Line(raw, crlf, MALFORMED, problem=(
            f"is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"), origin=number)
    if not text.strip():
        return Line(raw, crlf, BLANK, origin=number)
    body = text.strip(" \t\r\n")  # JSON's own whitespace
    try:  # one shared decoder: json.loads would build a new one per line (50,000-entity files)
        obj, end = jsonio.decode(body)
    except jsonio.JSONError as exc:
        return Line(raw, crlf, MALFORMED, problem=str(exc), origin=number)
    except ValueError:
        return Line(raw, crlf, MALFORMED, problem=_diagnose(text), origin=number)
    if end != len(body):
        return Line(raw, crlf, MALFORMED, problem=_diagnose(text), origin=number)
    if not isinstance(obj, dict):
        return Line(raw, crlf, MALFORMED, problem=f"is {_kind_of_value(obj)}, not a JSON object",
                    origin=number)
    kind = obj.get("type")
    if kind == "entity":
        problem = _check_fields(obj, ENTITY_KEYS[1:], "an entity")
        if problem:
            return Line(raw, crlf, INVALID, problem=problem, origin=number)
        record = Entity(obj["name"], obj["entityType"], tuple(obj["observations"]), number)
        return Line(raw, crlf, ENTITY, record, origin=number)
    if kind == "relation":
        problem = _check_fields(obj, RELATION_KEYS[1:], "a relation")
        if problem:
            return Line(raw, crlf, INVALID, problem=problem, origin=number)
        return Line(raw, crlf, RELATION, Relation(obj["from"], obj["to"], obj["relationType"], number),
                    origin=number)
    if "type" not in obj and (isinstance(obj.get("entities"), list) or isinstance(obj.get("relations"), list)):
        return Line(raw, crlf, LEGACY, origin=number)
    return Line(raw, crlf, OTHER, origin=number)


def _split_lines(data: bytes) -> tuple[list[tuple[bytes, bool]], bool]:
    """Split file bytes (BOM removed) into ``(raw, crlf)`` pairs and the final-newline flag."""
    if not data:
        return [], True
    parts = data.split(b"\n")
    final_newline = parts[-1] == b""
    if final_newline:
        parts.pop()
    out: list[tuple[bytes, bool]] = []
    last = len(parts) - 1
    for index, part in enumerate(parts):
        if part.endswith(b"\r") and (index < last or final_newline):
            out.append((part[:-1], True))
        else:
            out.append((part, False))
    return out, final_newline


@dataclass(slots=True)
class Graph:
    """A loaded knowledge-graph file: its lines, the records they hold, and how it was written.

    Build one with :func:`load` / :func:`loads`; change it with an :class:`Operation`
    (which returns a new ``Graph`` and leaves this one as it was).

    Attributes:
        lines: every line of the file, in order, each with its bytes.
        bom: the file starts with a UTF-8 BOM (kept when writing).
        final_newline: the file ends with a line terminator (kept when writing; see
            :meth:`to_bytes` for the one exception).
        shown: the file's path as shown in findings (workspace-relative).
        source_sha256: hex sha256 of the bytes loaded (``""`` if the file did not exist).
        exists: the file existed when loaded.
        legacy: the file is in the legacy single-object layout (records in
            ``legacy_entities``/``legacy_relations``; convert before editing).
        legacy_entities: entities of a legacy-layout file (read-only view).
        legacy_relations: relations of a legacy-layout file.
    """

    lines: list[Line]
    bom: bool = False
    final_newline: bool = True
    shown: str = "memory/graph.jsonl"
    source_sha256: str = ""
    exists: bool = True
    legacy: bool = False
    legacy_entities: list[Entity] = field(default_factory=list)
    legacy_relations: list[Relation] = field(default_factory=list)
    _entities: list[Entity] | None = None
    _relations: list[Relation] | None = None
    _by_name: dict[str, list[int]] | None = None

    # -- views --------------------------------------------------------------------------------
    def _index(self) -> None:
        entities: list[Entity] = []
        relations: list[Relation] = []
        by_name: dict[str, list[int]] = {}
        for number, line in enumerate(self.lines, 1):
            record = line.record
            if record is None:
                continue
            if record.line != number:  # lines shift after an edit; the Line itself is shared
                record = _renumber(record, number)
            if isinstance(record, Entity):
                by_name.setdefault(record.name, []).append(len(entities))
                entities.append(record)
            else:
                relations.append(record)
        if self.legacy:
            entities, relations = list(self.legacy_entities), list(self.legacy_relations)
            by_name = {}
            for position, entity in enumerate(entities):
                by_name.setdefault(entity.name, []).append(position)
        self._entities, self._relations, self._by_name = entities, relations, by_name

    @property
    def entities(self) -> list[Entity]:
        """Every good entity record, in file order (duplicates by name included)."""
        if self._entities is None:
            self._index()
        return self._entities  # type: ignore[return-value]

    @property
    def relations(self) -> list[Relation]:
        """Every good relation record, in file order."""
        if self._relations is None:
            self._index()
        return self._relations  # type: ignore[return-value]

    def find(self, name: str) -> list[Entity]:
        """All entity records named exactly ``name`` (file order; empty if none)."""
        if self._by_name is None:
            self._index()
        entities = self.entities
        return [entities[i] for i in self._by_name.get(name, ())]  # type: ignore[union-attr]

    def entity(self, name: str) -> Entity:
        """The first entity named ``name`` (the one the server's ``add_observations`` changes).

        Raises:
            GraphEditError: there is none; the message suggests similar names.
        """
        found = self.find(name)
        if not found:
            raise GraphEditError(f"there is no entity named {name!r}{_suggest(self, name) or '.'}")
        return found[0]

    def record_key(self, entity: Entity) -> str:
        """The key of the record ``entity`` (an entity of this graph, by its line): the
        SHA-256 hex of the line's bytes. It picks one record of a name written several times
        (an edit goes to the record chosen), and stays valid while other lines change."""
        return hashlib.sha256(self.lines[entity.line - 1].raw).hexdigest()

    def record(self, name: str, key: str) -> Entity:
        """The record named ``name`` whose :meth:`record_key` is ``key``; ``key`` ``""`` gives
        the first record (the one the server's ``add_observations`` changes).

        Raises:
            GraphEditError: there is no entity ``name``, or none of its records has that key
                (it changed since it was loaded).
        """
        found = self.find(name)
        if not key:
            return self.entity(name)
        for entity in found:
            if self.record_key(entity) == key:
                return entity
        if not found:
            raise GraphEditError(f"there is no entity named {name!r}{_suggest(self, name) or '.'}")
        raise GraphEditError(
            f"the record of {name!r} that was selected changed or is gone since the graph was loaded "
            f"({len(found)} record{'s' if len(found) != 1 else ''} of that name now); reload and select it again.")

    def relations_of(self, name: str) -> tuple[list[Relation], list[Relation]]:
        """``(outgoing, incoming)`` relations of the entity ``name``."""
        out = [r for r in self.relations if r.source == name]
        inc = [r for r in self.relations if r.target == name]
        return out, inc

    def bad_lines(self) -> list[Line]:
        """Lines that are ``malformed`` or ``invalid`` (each one is a finding)."""
        return [line for line in self.lines if line.kind in (MALFORMED, INVALID)]

    # -- findings of reading ------------------------------------------------------------------
    def read_findings(self) -> list[Finding]:
        """What reading found: bad lines, unknown record types, the legacy layout, and whether
        the MCP server can read the file (it fails on a BOM or any bad line; corpus README).

        Returns:
            Findings with the line numbers of :attr:`lines` (1-based), file order.
        """
        out: list[Finding] = []
        breakers: list[int] = []
        if self.bom:
            breakers.append(1)
        for number, line in enumerate(self.lines, 1):
            if line.kind == MALFORMED:
                breakers.append(number)
                out.append(Finding.make(
                    "graph-line-malformed", self.shown, f"line {number} {line.problem}; it is kept as written",
                    "repair the line by hand or run `memtui graph repair` (two records on one line "
                    "are split; unreadable lines are moved to a backup)", line=number))
            elif line.kind == INVALID:
                breakers.append(number)
                out.append(Finding.make(
                    "graph-record-invalid", self.shown, f"line {number} {line.problem}; it is kept as written "
                    "but not shown as a record", "correct the field by hand, or delete the line",
                    line=number))
            elif line.kind == OTHER:
                out.append(Finding.make(
                    "graph-record-unknown", self.shown,
                    f"line {number} is a record of unknown type {_type_label(line)}; memtui keeps it "
                    "(the MCP memory server ignores it and drops it on its next write)",
                    "nothing to do unless another tool needs it to survive server writes", line=number))
        if self.legacy:
            out.append(Finding.make(
                "graph-legacy-layout", self.shown,
                f"is in the legacy single-object layout ({len(self.legacy_entities)} entities, "
                f"{len(self.legacy_relations)} relations); the MCP memory server reads it as an empty graph",
                "run `memtui graph convert` to rewrite it as one record a line (a backup is kept)"))
        elif breakers:
            where = ", ".join(str(n) for n in breakers[:10]) + (" ..." if len(breakers) > 10 else "")
            why = "a byte order mark and " if self.bom else ""
            out.append(Finding.make(
                "graph-server-unreadable", self.shown,
                f"the MCP memory server cannot read this file ({why}bad lines: {where}); every "
                "tool call of the agent fails until it is fixed",
                "run `memtui graph repair`, or fix the listed lines", line=breakers[0]))
        return out

    # -- writing ------------------------------------------------------------------------------
    def newline(self) -> bytes:
        """The terminator for new lines: CRLF if most terminated lines use it, else LF."""
        crlf = sum(1 for line in self.lines if line.crlf)
        return b"\r\n" if crlf * 2 > len(self.lines) and crlf else b"\n"

    def to_bytes(self) -> bytes:
        """The file's bytes: BOM if loaded with one, each line's bytes and own terminator.

        The final newline is kept as loaded (the server writes none), except that a file
        whose last line is malformed gets one, so the next appender cannot glue a record to a
        cut-off line; a new file ends with one.
        """
        if not self.lines:
            return BOM if self.bom else b""
        chunks: list[bytes] = [BOM] if self.bom else []
        for line in self.lines:
            chunks.append(line.raw)
            chunks.append(b"\r\n" if line.crlf else b"\n")
        if not self.final_newline:
            if self.lines[-1].kind == MALFORMED:
                chunks[-1] = self.newline()
            else:
                chunks.pop()
        return b"".join(chunks)

    def file_bytes(self) -> bytes:
        """The bytes memtui writes for this graph: :meth:`to_bytes` ending with a line end
        (:func:`memtui.core.text.final_newline`), so an agent's next ``echo >>`` starts a line
        of its own instead of joining memtui's last record. The server writes no final newline
        and reads a file with one; a file it wrote is read and kept as it is until memtui
        writes it."""
        return final_newline(self.to_bytes()) if self.lines else self.to_bytes()

    def replaced(self, lines: list[Line]) -> "Graph":
        """A new graph with ``lines`` and this graph's file conventions (BOM, newline, path)."""
        return Graph(lines, bom=self.bom, final_newline=self.final_newline, shown=self.shown,
                     source_sha256=self.source_sha256, exists=self.exists)

    def summary(self) -> dict:
        """Counts: ``{"entities", "distinct_names", "relations", "observations", "lines",
        "bad_lines", "unknown_records", "legacy"}``."""
        return {
            "entities": len(self.entities),
            "distinct_names": len({e.name for e in self.entities}),
            "relations": len(self.relations),
            "observations": sum(len(e.observations) for e in self.entities),
            "lines": len(self.lines),
            "bad_lines": len(self.bad_lines()),
            "unknown_records": sum(1 for line in self.lines if line.kind == OTHER),
            "legacy": self.legacy,
        }


def _renumber(record: Entity | Relation, number: int) -> Entity | Relation:
    if isinstance(record, Entity):
        return Entity(record.name, record.entity_type, record.observations, number)
    return Relation(record.source, record.target, record.relation_type, number)


def _type_label(line: Line) -> str:
    try:
        value = jsonio.loads(line.raw).get("type")
    except (ValueError, AttributeError):
        return "(unreadable)"
    return "(none)" if value is None else repr(value)


def _suggest(graph: Graph, name: str) -> str:
    folded = fold_name(name)
    close = [e.name for e in graph.entities if fold_name(e.name) == folded and e.name != name][:3]
    if not close:
        try:
            from rapidfuzz import fuzz, process
            hits = process.extract(name, list({e.name for e in graph.entities}), scorer=fuzz.ratio,
                                   limit=3, score_cutoff=75)
            close = [hit[0] for hit in hits]
        except ImportError:  # pragma: no cover
            close = []
    if close:
        return "; did you mean " + " or ".join(repr(c) for c in close) + "?"
    return "; `memtui graph entities` lists them."


def _legacy_records(obj: dict) -> tuple[list[Entity], list[Relation], int]:
    entities: list[Entity] = []
    relations: list[Relation] = []
    skipped = 0
    for item in obj.get("entities") or []:
        if isinstance(item, dict) and not _check_fields(item, ENTITY_KEYS[1:], "an entity"):
            entities.append(Entity(item["name"], item["entityType"], tuple(item["observations"])))
        else:
            skipped += 1
    for item in obj.get("relations") or []:
        if isinstance(item, dict) and not _check_fields(item, RELATION_KEYS[1:], "a relation"):
            relations.append(Relation(item["from"], item["to"], item["relationType"]))
        else:
            skipped += 1
    return entities, relations, skipped


def loads(data: bytes, shown: str = "memory/graph.jsonl", exists: bool = True) -> Graph:
    """Parse the bytes of a graph file leniently.

    Args:
        data: the whole file.
        shown: the path to name in findings.
        exists: False for a file that is absent (an empty graph that a save will create).

    Returns:
        A :class:`Graph`; never raises on bad content: see :meth:`Graph.read_findings`.
    """
    digest = hashlib.sha256(data).hexdigest() if exists else ""
    bom = data.startswith(BOM)
    body = data[len(BOM):] if bom else data
    pairs, final_newline = _split_lines(body)
    lines = [parse_line(raw, crlf, number) for number, (raw, crlf) in enumerate(pairs, 1)]
    graph = Graph(lines, bom=bom, final_newline=final_newline, shown=shown, source_sha256=digest,
                  exists=exists)
    legacy_lines = [line for line in lines if line.kind == LEGACY]
    if len(legacy_lines) == 1 and not any(line.kind in (ENTITY, RELATION) for line in lines):
        obj = jsonio.loads(legacy_lines[0].raw)
        graph.legacy_entities, graph.legacy_relations, _ = _legacy_records(obj)
        graph.legacy = True
    elif lines and any(line.kind == MALFORMED for line in lines) and not any(
            line.kind in (ENTITY, RELATION) for line in lines):
        try:
            obj = jsonio.loads(body)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "type" not in obj and (
                isinstance(obj.get("entities"), list) or isinstance(obj.get("relations"), list)):
            graph.legacy_entities, graph.legacy_relations, _ = _legacy_records(obj)
            graph.legacy = True
            for line in lines:  # a pretty-printed memory.json: its lines are one value, not bad lines
                if line.kind == MALFORMED:
                    line.kind, line.problem = LEGACY, ""
    return graph


#: Largest graph file memtui loads (bytes); a 50,000-entity graph is about 55 MB.
MAX_GRAPH_BYTES = 512 * 1024 * 1024


def load(path: str | os.PathLike[str], shown: str | None = None) -> Graph:
    """Read and parse the graph file at ``path`` (an absent file is an empty graph).

    Args:
        path: the file (already confined by the caller, e.g. ``Workspace.graph_file``).
        shown: the path to name in findings (default: ``path`` as given).

    Raises:
        GraphEditError: the file is larger than :data:`MAX_GRAPH_BYTES`, or is a folder.
        OSError: it cannot be read (permissions).
    """
    target = Path(path)
    shown = shown if shown is not None else str(path)
    try:
        size = target.stat().st_size
    except FileNotFoundError:
        return loads(b"", shown, exists=False)
    if target.is_dir():
        raise GraphEditError(f"{shown} is a folder, not a graph file.")
    if size > MAX_GRAPH_BYTES:
        raise GraphEditError(f"{shown} is {size:,} bytes, over memtui's {MAX_GRAPH_BYTES:,}-byte graph limit.")
    return loads(target.read_bytes(), shown)


def fold_name(name: str) -> str:
    """``name`` in Unicode compatibility form (NFKC), lower-cased (casefold), with runs of
    whitespace made one space and trimmed.

    Two names with the same fold are "equal after case and whitespace folding" (seed 002);
    NFKC makes a decomposed ``é`` (``e`` + U+0301) and a fullwidth ``Ａ`` fold like the
    plain letters (two such names look the same to a person).
    """
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


_IRREGULAR = {"people": "person", "persons": "person", "children": "child", "men": "man",
              "women": "woman", "data": "datum", "indices": "index", "indexes": "index"}


def fold_type(entity_type: str) -> str:
    """The variant key of an ``entityType``: case, separators and plural folded.

    ``Person``, ``person``, ``people``, ``Persons`` and ``PERSON`` all give ``person``;
    ``code_module`` and ``Code Module`` give ``code module`` (seed 002: keep entityType
    consistent, because the member filters by it).
    """
    words = entity_type.replace("_", " ").replace("-", " ").casefold().split()
    if not words:
        return ""
    last = words[-1]
    if last in _IRREGULAR:
        last = _IRREGULAR[last]
    elif len(last) > 4 and last.endswith("ies"):
        last = last[:-3] + "y"
    elif len(last) > 4 and last.endswith(("sses", "ches", "shes", "xes")):
        last = last[:-2]
    elif len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is")):
        last = last[:-1]
    words[-1] = last
    return " ".join(words)


def degrees(graph: Graph) -> dict[str, int]:
    """``{entity name: relations it is an end of}`` (a relation from a name to itself counts
    once); names in no relation are absent."""
    out: dict[str, int] = {}
    for relation in graph.relations:
        out[relation.source] = out.get(relation.source, 0) + 1
        if relation.target != relation.source:
            out[relation.target] = out.get(relation.target, 0) + 1
    return out


def entity_filter(types: Sequence[str] = (), match: str = ""):  # noqa: ANN201 - a predicate
    """The rule of ``memtui graph entities --type/--match``: a predicate ``(name, entityType) ->
    bool`` keeping entities of one of ``types`` (exactly; all when empty) whose name contains
    ``match`` (case-insensitive; all when empty). Shared by :func:`entity_page` and the remote
    snapshot's pages (:mod:`memtui.core.graph.snapshot`)."""
    wanted = set(types)
    needle = match.casefold()

    def keep(name: str, entity_type: str) -> bool:
        return (not wanted or entity_type in wanted) and (not needle or needle in name.casefold())

    return keep


def entity_page(graph: Graph, types: Sequence[str] = (), match: str = "", offset: int = 0,
                limit: int | None = None) -> Page[tuple[Entity, int]]:
    """One page of the entity list (``memtui graph entities``): ``(entity, relation count)``
    in file order, duplicates by name included.

    Args:
        types: only entities of these ``entityType`` values, exactly (all when empty).
        match: only names containing this text, case-insensitive (all when empty).
        offset: the first item of the page within the filtered list.
        limit: most items on the page (1 or more; all the rest when ``None``).

    Returns:
        A :class:`~memtui.core.paging.Page` whose ``total`` counts the filtered list.

    Raises:
        ValueError: ``offset`` below 0 or ``limit`` below 1.
    """
    keep = entity_filter(types, match)
    rows = graph.entities if not (types or match) else [e for e in graph.entities if keep(e.name, e.entity_type)]
    page = Page.of(rows, offset, limit)
    degree = degrees(graph)
    return Page([(e, degree.get(e.name, 0)) for e in page.items], page.total, page.next)


def server_view(graph: Graph) -> dict:
    """``{"entities": [...], "relations": [...]}`` as the server's ``read_graph`` returns it
    for this file (entities, then relations, file order, only the known keys)."""
    return {
        "entities": [{"name": e.name, "entityType": e.entity_type, "observations": list(e.observations)}
                     for e in graph.entities],
        "relations": [{"from": r.source, "to": r.target, "relationType": r.relation_type}
                      for r in graph.relations],
    }
