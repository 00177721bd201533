"""The knowledge graph: lossless reading and writing of ``memory/graph.jsonl`` (issue 4, seed 002).

The file is in the format of the MCP reference memory server (npm
``@modelcontextprotocol/server-memory``, observed at 2026.8.31, see
``../shared/corpus/README.md`` "Reference server"): one JSON object a line,
``{"type":"entity","name","entityType","observations":[...]}`` or
``{"type":"relation","from","to","relationType"}``.

Reading is lenient (DESIGN.md invariant 10, bug input B15): a BOM, CRLF, blank lines, no
final newline, extra keys and unknown record types are accepted; a bad line (cut off, two
objects on one line, an array, wrong field types, a missing field, not UTF-8) becomes a
:class:`~memtui.core.findings.Finding` with its line number and is *kept*, byte for byte.
The legacy single-object layout (``{"entities":[...],"relations":[...]}``) is recognised and
offered for conversion (:class:`ConvertLegacy`).

Writing is lossless (DESIGN.md §2, invariant 3): a :class:`Graph` is a list of
:class:`Line` objects that remember their bytes; an edit (an :class:`Operation`, a pure
function from graph to graph) replaces, inserts or removes whole lines, so every line it did
not touch keeps its bytes and its place. A line memtui writes is in the server's own form:
compact JSON, the server's key order, non-ASCII unescaped (as ``JSON.stringify`` does), with
any extra keys of an edited record kept after the known ones. :func:`commit` is the one place
that writes the file: it checks the file still has the bytes that were loaded (sha256), re-
applies the operation on the new content when an agent changed it meanwhile, or refuses with
a :class:`GraphConflictError` carrying a diff; never a silent overwrite.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from memtui.core import atomic
from memtui.core.errors import ConflictError, MemtuiError
from memtui.core.findings import Finding

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
        raw: the line's bytes without its terminator (and without the file's BOM).
        crlf: the line ended with ``\\r\\n`` (else ``\\n``, or nothing if it was last).
        kind: ``entity``, ``relation``, ``blank``, ``other`` (unknown record type, kept),
            ``legacy`` (a single-object-layout line), ``invalid`` (JSON object with missing
            or wrong-typed fields) or ``malformed`` (not one JSON object).
        record: the :class:`Entity` or :class:`Relation` for good records, else ``None``.
        problem: why an ``invalid``/``malformed`` line is bad, else ``""``.
        origin: the 1-based line number in the file as loaded, ``0`` for a line memtui made.
    """

    __slots__ = ("raw", "crlf", "kind", "record", "problem", "origin")

    def __init__(self, raw: bytes, crlf: bool, kind: str, record: Entity | Relation | None = None,
                 problem: str = "", origin: int = 0) -> None:
        self.raw = raw
        self.crlf = crlf
        self.kind = kind
        self.record = record
        self.problem = problem
        self.origin = origin

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Line({self.kind}, {self.raw[:60]!r}, origin={self.origin})"


# -- the server's form ------------------------------------------------------------------------

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
    """The keys of ``line``'s JSON object that the server does not know (in file order)."""
    try:
        obj = json.loads(line.raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(obj, dict):
        return {}
    known = ENTITY_KEYS if line.kind == ENTITY else RELATION_KEYS
    return {k: v for k, v in obj.items() if k not in known}


# -- reading ------------------------------------------------------------------------------------

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


_DECODER = json.JSONDecoder(parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))


def _diagnose(text: str) -> str:
    """Why ``text`` (one line that ``json.loads`` refused) is not one JSON object."""
    start = len(text) - len(text.lstrip())
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) or "Unterminated string" in exc.msg:
            return ("is cut off: the record ends before it is complete "
                    "(likely an interrupted write)")
        return f"is not valid JSON: {exc.msg} at column {exc.pos + 1}"
    except ValueError as exc:
        return f"is not valid JSON: {exc} is not a JSON number"
    rest = text[end:].strip()
    if not rest:  # pragma: no cover - json.loads would have accepted it
        return f"is {_kind_of_value(value)}"
    try:
        _DECODER.raw_decode(rest, 0)
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
        with ``problem`` set (B15).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Line(raw, crlf, MALFORMED, problem=(
            f"is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"), origin=number)
    if not text.strip():
        return Line(raw, crlf, BLANK, origin=number)
    body = text.strip(" \t\r\n")  # JSON's own whitespace
    try:  # one shared decoder: json.loads would build a new one per line (B23-size files)
        obj, end = _DECODER.raw_decode(body)
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
            if line.kind == ENTITY:
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
            raise GraphEditError(f"there is no entity named {name!r}{_suggest(self, name)}.")
        return found[0]

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
        cut-off line (B15); a new file ends with one.
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
        value = json.loads(line.raw.decode("utf-8")).get("type")
    except (ValueError, UnicodeDecodeError, AttributeError):
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
    return "; `memtui graph entities` lists them"


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
        obj = json.loads(legacy_lines[0].raw.decode("utf-8"))
        graph.legacy_entities, graph.legacy_relations, _ = _legacy_records(obj)
        graph.legacy = True
    elif lines and any(line.kind == MALFORMED for line in lines) and not any(
            line.kind in (ENTITY, RELATION) for line in lines):
        try:
            obj = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            obj = None
        if isinstance(obj, dict) and "type" not in obj and (
                isinstance(obj.get("entities"), list) or isinstance(obj.get("relations"), list)):
            graph.legacy_entities, graph.legacy_relations, _ = _legacy_records(obj)
            graph.legacy = True
            for line in lines:  # a pretty-printed memory.json: its lines are one value, not bad lines
                if line.kind == MALFORMED:
                    line.kind, line.problem = LEGACY, ""
    return graph


#: Largest graph file memtui loads (bytes); B23's 50,000-entity graph is about 55 MB.
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


# -- folding (shared by the audit and the operations) ------------------------------------------

def fold_name(name: str) -> str:
    """``name`` lower-cased (casefold) with runs of whitespace made one space and trimmed.

    Two names with the same fold are "equal after case and whitespace folding" (issue 4).
    """
    return " ".join(name.casefold().split())


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


# -- operations ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Change:
    """What an operation did: the new graph and a sentence for the user and the audit log.

    Attributes:
        graph: the graph after the operation (the input graph is unchanged).
        summary: one plain sentence (``"renamed 'a' to 'b'; 3 relations follow"``).
        changed: False when there was nothing to do (nothing is written then).
        notes: further plain sentences (relations dropped as duplicates, types that differed).
    """

    graph: Graph
    summary: str
    changed: bool = True
    notes: tuple[str, ...] = ()


class Operation:
    """A curating action: a pure function from a :class:`Graph` to a :class:`Change`.

    Operations are small values, so :func:`commit` can re-apply one on a file an agent
    changed meanwhile. ``apply`` raises :class:`GraphEditError` when the action does not fit
    the graph (no such entity, the new name is taken, a legacy file not yet converted).
    """

    def apply(self, graph: Graph) -> Change:  # pragma: no cover - interface
        raise NotImplementedError

    def _editable(self, graph: Graph) -> None:
        if graph.legacy:
            raise GraphEditError(
                f"{graph.shown} is in the legacy single-object layout; run `memtui graph convert` first.")


def _entity_positions(graph: Graph, name: str) -> list[int]:
    return [i for i, line in enumerate(graph.lines) if line.kind == ENTITY and line.record.name == name]


def _rewrite(line: Line, record: Entity | Relation, newline_crlf: bool | None = None) -> Line:
    """A new line holding ``record`` in server form, keeping ``line``'s extra keys and type value."""
    extra = _extra_keys(line)
    if isinstance(record, Entity):
        raw = entity_line(record, extra)
    else:
        raw = relation_line(record, extra)
    return Line(raw, line.crlf if newline_crlf is None else newline_crlf, line.kind, record,
                origin=line.origin)


def _new_line(graph: Graph, record: Entity | Relation) -> Line:
    crlf = graph.newline() == b"\r\n"
    if isinstance(record, Entity):
        return Line(entity_line(record), crlf, ENTITY, record)
    return Line(relation_line(record), crlf, RELATION, record)


def _insert_position(lines: list[Line], kind: str) -> int:
    """Where a new record goes: after the last line of its kind (server order: entities, then
    relations); a first entity goes before the first relation, a first relation at the end."""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].kind == kind:
            return index + 1
    if kind == ENTITY:
        for index, line in enumerate(lines):
            if line.kind == RELATION:
                return index
    end = len(lines)
    while end and lines[end - 1].kind == MALFORMED:  # never append after a cut-off line (B15)
        end -= 1
    return end


def _check_text(value: str, what: str) -> None:
    if not value or not value.strip():
        raise GraphEditError(f"the {what} is empty; give some text.")


@dataclass(frozen=True)
class CreateEntity(Operation):
    """Create an entity (refused if the name exists: seed 002 "search before you create")."""

    name: str
    entity_type: str
    observations: tuple[str, ...] = ()

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        _check_text(self.name, "entity name")
        _check_text(self.entity_type, "entityType")
        if graph.find(self.name):
            raise GraphEditError(f"an entity named {self.name!r} already exists; add observations to it instead.")
        observations = tuple(dict.fromkeys(self.observations))
        record = Entity(self.name, self.entity_type, observations)
        lines = list(graph.lines)
        lines.insert(_insert_position(lines, ENTITY), _new_line(graph, record))
        notes = ()
        similar = [e.name for e in graph.entities if fold_name(e.name) == fold_name(self.name)]
        if similar:
            notes = (f"names equal after case/space folding exist: {', '.join(map(repr, similar))}",)
        return Change(graph.replaced(lines), f"created entity {self.name!r} ({self.entity_type})", notes=notes)


@dataclass(frozen=True)
class AddObservation(Operation):
    """Add an observation to the (first) entity named ``entity``, as the server's ``add_observations``."""

    entity: str
    text: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        _check_text(self.text, "observation")
        target = graph.entity(self.entity)
        if self.text in target.observations:
            return Change(graph, f"{self.entity!r} already has that observation", changed=False)
        index = target.line - 1
        lines = list(graph.lines)
        record = Entity(target.name, target.entity_type, target.observations + (self.text,), target.line)
        lines[index] = _rewrite(lines[index], record)
        return Change(graph.replaced(lines), f"added an observation to {self.entity!r}")


@dataclass(frozen=True)
class EditObservation(Operation):
    """Replace the observation ``old`` of the entity by ``new`` (in place; every duplicate record)."""

    entity: str
    old: str
    new: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        _check_text(self.new, "new observation")
        graph.entity(self.entity)
        lines = list(graph.lines)
        hits = 0
        for index in _entity_positions(graph, self.entity):
            record: Entity = lines[index].record
            if self.old not in record.observations:
                continue
            observations: list[str] = []
            for text in record.observations:
                value = self.new if text == self.old else text
                if value not in observations:
                    observations.append(value)
            lines[index] = _rewrite(lines[index], Entity(record.name, record.entity_type, tuple(observations)))
            hits += 1
        if not hits:
            raise GraphEditError(f"{self.entity!r} has no observation {self.old!r}.")
        if self.old == self.new:
            return Change(graph, "the observation is unchanged", changed=False)
        return Change(graph.replaced(lines), f"edited an observation of {self.entity!r}")


@dataclass(frozen=True)
class DeleteObservation(Operation):
    """Delete the observation ``text`` from every record named ``entity`` (all its copies)."""

    entity: str
    text: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        graph.entity(self.entity)
        lines = list(graph.lines)
        removed = 0
        for index in _entity_positions(graph, self.entity):
            record: Entity = lines[index].record
            kept = tuple(t for t in record.observations if t != self.text)
            if len(kept) != len(record.observations):
                removed += len(record.observations) - len(kept)
                lines[index] = _rewrite(lines[index], Entity(record.name, record.entity_type, kept))
        if not removed:
            raise GraphEditError(f"{self.entity!r} has no observation {self.text!r}.")
        return Change(graph.replaced(lines), f"deleted an observation of {self.entity!r}"
                      + (f" ({removed} copies)" if removed > 1 else ""))


def _rewire(lines: list[Line], mapping: dict[str, str]) -> tuple[int, int, int]:
    """Point relation ends named in ``mapping`` at their new names, in ``lines`` (in place).

    A rewired relation that now equals another relation (same triple) is removed, and so is
    one that became a self-relation between two different merged names. Relations the
    mapping does not touch are left alone (duplicates among them included: not this edit's).

    Returns:
        ``(rewired, duplicates_dropped, self_relations_dropped)``.
    """
    untouched: set[tuple[str, str, str]] = set()
    for line in lines:
        if line.kind == RELATION:
            relation: Relation = line.record
            if relation.source not in mapping and relation.target not in mapping:
                untouched.add(relation.triple)
    rewired = duplicates = loops = 0
    seen: set[tuple[str, str, str]] = set()
    out: list[Line] = []
    for line in lines:
        if line.kind != RELATION or (line.record.source not in mapping and line.record.target not in mapping):
            out.append(line)
            continue
        relation = line.record
        source = mapping.get(relation.source, relation.source)
        target = mapping.get(relation.target, relation.target)
        if source == target and relation.source != relation.target:
            loops += 1
            continue
        triple = (source, target, relation.relation_type)
        if triple in untouched or triple in seen:
            duplicates += 1
            continue
        seen.add(triple)
        out.append(_rewrite(line, Relation(*triple)) if triple != relation.triple else line)
        rewired += 1
    lines[:] = out
    return rewired, duplicates, loops


@dataclass(frozen=True)
class RenameEntity(Operation):
    """Rename every record named ``old`` to ``new``; relations follow (refused if ``new`` exists)."""

    old: str
    new: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        _check_text(self.new, "new name")
        graph.entity(self.old)
        if self.old == self.new:
            return Change(graph, "the name is unchanged", changed=False)
        if graph.find(self.new):
            raise GraphEditError(
                f"an entity named {self.new!r} already exists; merge the two instead "
                f"(`memtui graph merge` / the Merge action).")
        lines = list(graph.lines)
        for index in _entity_positions(graph, self.old):
            record: Entity = lines[index].record
            lines[index] = _rewrite(lines[index], Entity(self.new, record.entity_type, record.observations))
        rewired, _dups, _loops = _rewire(lines, {self.old: self.new})
        return Change(graph.replaced(lines), f"renamed {self.old!r} to {self.new!r}; "
                      f"{rewired} relation{'s' if rewired != 1 else ''} follow")


#: Prefix of the observation that keeps a merged entity's former name findable (seed 002).
ALIAS_PREFIX = "alias: "


@dataclass(frozen=True)
class MergeEntities(Operation):
    """Merge the entities ``sources`` (and any duplicate records of ``into``) into ``into``.

    Observations are united in order without duplicates; each merged name different from
    ``into`` is kept as an observation ``alias: <old name>`` so "search before you create"
    (seed 002; the server's ``search_nodes`` is a substring match over observations) still
    finds it; relations are rewired to ``into`` and deduplicated; a relation between two
    merged entities (now a self-relation) is dropped and counted in the notes.
    """

    sources: tuple[str, ...]
    into: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        target = graph.entity(self.into)
        names = [s for s in dict.fromkeys(self.sources) if s != self.into]
        for name in names:
            graph.entity(name)
        positions = sorted({*(_entity_positions(graph, self.into)), *(p for n in names for p in _entity_positions(graph, n))})
        if len(positions) < 2:
            return Change(graph, f"nothing to merge into {self.into!r}", changed=False)
        lines = list(graph.lines)
        observations: list[str] = list(dict.fromkeys(target.observations))
        seen = set(observations)
        types: set[str] = set()
        for index in positions:
            record: Entity = lines[index].record
            types.add(record.entity_type)
            for text in record.observations:
                if text not in seen:
                    seen.add(text)
                    observations.append(text)
        for name in names:
            alias = ALIAS_PREFIX + name
            if alias not in seen:
                seen.add(alias)
                observations.append(alias)
        keep = target.line - 1
        merged = Entity(self.into, target.entity_type, tuple(observations))
        lines[keep] = _rewrite(lines[keep], merged)
        for index in reversed(positions):
            if index != keep:
                del lines[index]
        _rewired, duplicates, loops = _rewire(lines, {n: self.into for n in names})
        notes: list[str] = []
        if duplicates:
            notes.append(f"{duplicates} relation{'s' if duplicates != 1 else ''} dropped as duplicates")
        if loops:
            notes.append(f"{loops} relation{'s' if loops != 1 else ''} between merged entities dropped")
        if len(types) > 1:
            others = sorted(types - {target.entity_type})
            notes.append(f"kept entityType {target.entity_type!r}; merged records had {', '.join(map(repr, others))}")
        merged_count = len(positions) - 1
        return Change(graph.replaced(lines),
                      f"merged {merged_count} record{'s' if merged_count != 1 else ''} into {self.into!r}",
                      notes=tuple(notes))


@dataclass(frozen=True)
class Retype(Operation):
    """Set ``entityType`` to ``new`` on every entity whose type is one of ``old_types``."""

    old_types: tuple[str, ...]
    new: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        _check_text(self.new, "new entityType")
        wanted = set(self.old_types)
        lines = list(graph.lines)
        count = 0
        for index, line in enumerate(lines):
            if line.kind == ENTITY and line.record.entity_type in wanted and line.record.entity_type != self.new:
                record: Entity = line.record
                lines[index] = _rewrite(line, Entity(record.name, self.new, record.observations))
                count += 1
        if not count:
            if any(e.entity_type in wanted for e in graph.entities):
                return Change(graph, f"every entity of those types is already {self.new!r}", changed=False)
            raise GraphEditError(f"no entity has entityType {' or '.join(map(repr, self.old_types))}.")
        return Change(graph.replaced(lines), f"changed entityType to {self.new!r} on {count} entit{'ies' if count != 1 else 'y'}")


def type_variants(graph: Graph, entity_type: str) -> list[str]:
    """Every ``entityType`` spelling in ``graph`` with the same :func:`fold_type` key (sorted)."""
    key = fold_type(entity_type)
    return sorted({e.entity_type for e in graph.entities if fold_type(e.entity_type) == key})


@dataclass(frozen=True)
class CreateRelation(Operation):
    """Create the relation ``source --relation_type--> target`` (both ends must exist unless
    ``allow_dangling``; an identical relation makes it a no-op, as in the server)."""

    source: str
    target: str
    relation_type: str
    allow_dangling: bool = False

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        _check_text(self.relation_type, "relationType")
        if not self.allow_dangling:
            graph.entity(self.source)
            graph.entity(self.target)
        triple = (self.source, self.target, self.relation_type)
        if any(r.triple == triple for r in graph.relations):
            return Change(graph, "that relation exists already", changed=False)
        lines = list(graph.lines)
        lines.insert(_insert_position(lines, RELATION), _new_line(graph, Relation(*triple)))
        return Change(graph.replaced(lines),
                      f"related {self.source!r} --{self.relation_type}--> {self.target!r}")


@dataclass(frozen=True)
class DeleteRelation(Operation):
    """Delete every relation ``source --relation_type--> target`` (the server's ``delete_relations``)."""

    source: str
    target: str
    relation_type: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        triple = (self.source, self.target, self.relation_type)
        lines = [line for line in graph.lines if not (line.kind == RELATION and line.record.triple == triple)]
        removed = len(graph.lines) - len(lines)
        if not removed:
            raise GraphEditError(
                f"there is no relation {self.source!r} --{self.relation_type}--> {self.target!r}.")
        return Change(graph.replaced(lines), f"deleted the relation {self.source!r} --{self.relation_type}--> "
                      f"{self.target!r}" + (f" ({removed} copies)" if removed > 1 else ""))


@dataclass(frozen=True)
class DeleteEntity(Operation):
    """Delete every record named ``name`` and every relation touching it (as the server does)."""

    name: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        graph.entity(self.name)
        lines = []
        entities = relations = 0
        for line in graph.lines:
            if line.kind == ENTITY and line.record.name == self.name:
                entities += 1
                continue
            if line.kind == RELATION and self.name in (line.record.source, line.record.target):
                relations += 1
                continue
            lines.append(line)
        return Change(graph.replaced(lines), f"deleted entity {self.name!r} and {relations} "
                      f"relation{'s' if relations != 1 else ''}"
                      + (f" ({entities} records)" if entities > 1 else ""))


@dataclass(frozen=True)
class ImportRecords(Operation):
    """Bring another graph's records in, as the server's tools would, without duplicates.

    A new name is created (server form, appended after the last entity); an existing name
    gets the observations it lacks (on its first record, as ``add_observations`` does); a
    relation is created unless the same triple exists. Nothing in this graph is removed.
    """

    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        current = graph
        created = extended = related = 0
        for entity in self.entities:
            if current.find(entity.name):
                before = current.entity(entity.name).observations
                lines = list(current.lines)
                missing = tuple(o for o in dict.fromkeys(entity.observations) if o not in before)
                if missing:
                    target = current.entity(entity.name)
                    lines[target.line - 1] = _rewrite(
                        lines[target.line - 1], Entity(target.name, target.entity_type, before + missing))
                    current = current.replaced(lines)
                    extended += 1
            else:
                current = CreateEntity(entity.name, entity.entity_type, entity.observations).apply(current).graph
                created += 1
        existing = {r.triple for r in current.relations}
        lines = list(current.lines)
        for relation in self.relations:
            if relation.triple not in existing:
                existing.add(relation.triple)
                lines.insert(_insert_position(lines, RELATION), _new_line(current, Relation(*relation.triple)))
                related += 1
        if not (created or extended or related):
            return Change(graph, "every imported record is already in the graph", changed=False)
        return Change(current.replaced(lines), f"imported {created} new entit{'ies' if created != 1 else 'y'}, "
                      f"observations for {extended}, {related} new relation{'s' if related != 1 else ''}")


@dataclass(frozen=True, eq=False)
class Restore(Operation):
    """Undo: put back the lines of ``previous`` if the file is still exactly what the undone
    edit wrote (sha256 ``written``); otherwise refuse, since undoing would overwrite a later
    change (the TUI's "undo the last action", issue 4)."""

    previous: Graph
    written: str
    summary: str = "undid the last action"
    #: provenance records the undone edit moved, ``((doc id, previous fields), ...)``
    #: (:attr:`Saved.provenance_undo`); :func:`commit` puts them back.
    provenance_undo: tuple = ()

    def apply(self, graph: Graph) -> Change:
        if graph.source_sha256 != self.written:
            raise GraphEditError("the graph changed after the last action, so it cannot be undone "
                                 "without losing that change; reload and edit by hand.")
        return Change(graph.replaced(list(self.previous.lines)), self.summary)


@dataclass(frozen=True)
class ConvertLegacy(Operation):
    """Rewrite a legacy single-object file as one record a line, in the server's form."""

    def apply(self, graph: Graph) -> Change:
        if not graph.legacy:
            return Change(graph, "the file is already one record a line", changed=False)
        lines = [Line(entity_line(e), False, ENTITY, e) for e in graph.legacy_entities]
        lines += [Line(relation_line(r), False, RELATION, r) for r in graph.legacy_relations]
        new = Graph(lines, bom=False, final_newline=True, shown=graph.shown,
                    source_sha256=graph.source_sha256, exists=graph.exists)
        return Change(new, f"converted the legacy layout: {len(graph.legacy_entities)} entities, "
                      f"{len(graph.legacy_relations)} relations")


@dataclass(frozen=True)
class Repair(Operation):
    """Make the file readable by the MCP server without losing anything.

    Splits a line holding several JSON objects into one line each, drops the BOM, and
    moves every other bad line (cut off, not an object, invalid record) out of the file;
    the moved lines are returned in :attr:`Change.notes` and :func:`repair_rejects` so the
    caller keeps them in a backup (B15: "asks before dropping ... keeps a backup").
    """

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        lines: list[Line] = []
        split = moved = 0
        for line in graph.lines:
            if line.kind not in (MALFORMED, INVALID):
                lines.append(line)
                continue
            parts = _split_values(line.raw)
            if parts:
                split += 1
                lines.extend(parse_line(server_json(p), line.crlf, 0) for p in parts)
                continue
            moved += 1
        changed = bool(split or moved or graph.bom)
        if not changed:
            return Change(graph, "nothing to repair", changed=False)
        new = graph.replaced(lines)
        new.bom = False
        summary = []
        if graph.bom:
            summary.append("removed the byte order mark")
        if split:
            summary.append(f"split {split} line{'s' if split != 1 else ''} holding several records")
        if moved:
            summary.append(f"moved {moved} unreadable line{'s' if moved != 1 else ''} to the backup")
        return Change(new, "; ".join(summary))


def repair_rejects(graph: Graph) -> bytes:
    """The lines :class:`Repair` moves out of ``graph``, as bytes (``<line number>\\t<bytes>``)."""
    out = []
    for number, line in enumerate(graph.lines, 1):
        if line.kind in (MALFORMED, INVALID) and not _split_values(line.raw):
            out.append(str(number).encode() + b"\t" + line.raw + b"\n")
    return b"".join(out)


def _split_values(raw: bytes) -> list[dict]:
    """The JSON objects on a line holding two or more of them (each a valid record), else []."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return []
    values = []
    index = 0
    while True:
        while index < len(text) and text[index] in " \t\r":
            index += 1
        if index >= len(text):
            break
        try:
            value, index = _DECODER.raw_decode(text, index)
        except ValueError:
            return []
        values.append(value)
    if len(values) < 2:
        return []
    for value in values:
        if not isinstance(value, dict):
            return []
        line = parse_line(server_json(value), False, 0)
        if line.kind in (MALFORMED, INVALID):
            return []
    return values


# -- saving -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Saved:
    """The result of :func:`commit`.

    Attributes:
        graph: the graph as now written (its ``source_sha256`` is the new file's).
        change: the change applied (re-applied when the file had changed).
        reapplied: the file had changed on disk and the operation was applied to the new content.
        written: False when the operation changed nothing (nothing was written).
        audit_entry: the :class:`~memtui.core.auditlog.AuditEntry` of this write (for a
            retry: the entry first recorded under the client id), or ``None``.
        retried: the client id already recorded this very operation: nothing was done again.
        provenance_undo: provenance records the edit moved, ``((doc id, previous fields), ...)``,
            for :class:`Restore` (undo) to put back.
    """

    graph: Graph
    change: Change
    reapplied: bool = False
    written: bool = True
    audit_entry: object = None
    retried: bool = False
    provenance_undo: tuple = ()


def conflict_diff(before: bytes, after: bytes, name: str = "graph.jsonl") -> str:
    """A unified diff (text) from ``before`` to ``after``, at most :data:`DIFF_LIMIT` lines."""
    old = before.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.decode("utf-8", "replace").splitlines(keepends=True)
    lines: list[str] = []
    for item in difflib.unified_diff(old, new, f"{name} (loaded)", f"{name} (on disk now)"):
        lines.append(item if item.endswith("\n") else item + "\n")
        if len(lines) >= DIFF_LIMIT:
            lines.append(f"... (diff cut at {DIFF_LIMIT} lines)\n")
            break
    return "".join(lines)


def _read_current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def action_name(operation: Operation) -> str:
    """The audit-log action of ``operation``: ``graph.<verb>`` (``RenameEntity`` → ``graph.rename-entity``)."""
    name = type(operation).__name__
    return "graph." + "".join("-" + c.lower() if c.isupper() and k else c.lower() for k, c in enumerate(name))


def describe(operation: Operation) -> dict:
    """A JSON-safe description of ``operation`` for the audit log and client-id retries.

    ``{"operation": class name, <field>: value, ...}``; a graph field (the undo's snapshot)
    is left out, and a tuple of records (an import) becomes ``{"count", "sha256"}`` so the
    audit log stays small.
    """
    import dataclasses

    out: dict = {"operation": type(operation).__name__}
    for item in dataclasses.fields(operation):
        value = getattr(operation, item.name)
        if isinstance(value, Graph) or item.name == "provenance_undo":
            continue
        if isinstance(value, tuple) and value and isinstance(value[0], (Entity, Relation)):
            blob = json.dumps([r.to_json() for r in value], ensure_ascii=False, sort_keys=True)
            value = {"count": len(value), "sha256": hashlib.sha256(blob.encode("utf-8")).hexdigest()}
        elif isinstance(value, tuple):
            value = list(value)
        out[item.name] = value
    return out


def _shown_in(session, target: Path) -> str:
    from memtui.core.errors import ConfinementError
    from memtui.core.files import is_inside

    if not is_inside(session.ws.root, target):
        raise ConfinementError(f"{target} is outside the workspace {session.ws.root}; memtui writes only inside it.")
    return session.ws.shown(target)


def retry_of(session, path: str | os.PathLike[str], operation: Operation, client_id: str | None):
    """The audit entry when ``client_id`` already recorded this very operation on ``path``.

    A CLI call retried after a timeout sends the same ``--client-id``: it must not be done
    twice (seed 004). Call this before applying the operation (a retried rename no longer
    applies).

    Returns:
        The :class:`~memtui.core.auditlog.AuditEntry`, or ``None`` when the id is new or not given.

    Raises:
        ClientIdConflict: the id was used for a different action, file or operation.
        ConfinementError: ``path`` is outside the session's workspace.
    """
    from memtui.core.auditlog import ClientIdConflict

    if not client_id:
        return None
    existing = session.audit.find(client_id)
    if existing is None:
        return None
    shown = _shown_in(session, Path(path))
    if (existing.action, existing.target, existing.detail.get("operation")) == \
            (action_name(operation), shown, describe(operation)):
        return existing
    raise ClientIdConflict(
        f"client id {client_id!r} was already used on {existing.time} for {existing.action} on "
        f"{existing.target} with other content; that entry stays and nothing was written. Use a "
        "new client id for a new change.", existing)


def commit(path: str | os.PathLike[str], loaded: Graph, operation: Operation,
           loaded_bytes: bytes | None = None, *, session, client_id: str | None = None,
           provenance: Sequence = ()) -> Saved:
    """Apply ``operation`` to ``loaded`` and write the result to ``path`` atomically.

    This is the one function that writes a graph file (DESIGN.md §4 invariants 1–3, 7):

    1. ``session.require_writable()`` (the writer lock; refused read-only with the holder's
       sentence) and ``path`` must lie inside the session's workspace;
    2. a ``client_id`` that already recorded this very operation returns the first result
       without writing again (:func:`retry_of`; seed 004);
    3. the file's sha256 is compared with ``loaded.source_sha256`` (invariant 3). If an
       agent changed the file meanwhile, the file is re-read and ``operation`` re-applied
       to the new content; if it no longer applies, nothing is written and
       :class:`GraphConflictError` carries a diff;
    4. the new bytes are written atomically, then the store is updated: provenance records
       follow a rename, merge or observation edit (:meth:`ProvenanceBook.follow`; an undo
       puts them back), ``provenance`` records are added, and one audit-log entry
       ``graph.<verb>`` is appended (target the workspace-relative file, sha256 before and
       after, detail ``{"operation", "summary", "notes", "reapplied"}``).

    Args:
        path: the graph file, inside ``session.ws``.
        loaded: the graph the user was looking at.
        operation: the edit.
        loaded_bytes: the bytes ``loaded`` came from, for the conflict diff (optional).
        session: the open :class:`~memtui.core.session.Session` (keyword, required).
        client_id: the caller's id for this request (random when ``None``).
        provenance: :class:`~memtui.core.graph_provenance.Provenance` records of the
            observations this edit brings in (``memtui graph add-observation --session KEY``).

    Returns:
        :class:`Saved`.

    Raises:
        ReadOnlyError: the session may not write (nothing written).
        ConfinementError: ``path`` is outside the workspace (nothing written).
        ClientIdConflict: ``client_id`` names a different change (nothing written).
        GraphEditError: the operation does not fit ``loaded`` (nothing written).
        GraphConflictError: the file changed and the operation cannot be re-applied, or the
            file vanished although it existed when loaded (nothing written).
        OSError: the write failed (the old file is untouched: atomic write).
    """
    from memtui.core.graph_provenance import ProvenanceBook

    session.require_writable()
    target = Path(path)
    shown = _shown_in(session, target)
    previous = retry_of(session, target, operation, client_id)
    if previous is not None:
        summary = str(previous.detail.get("summary") or "that change")
        return Saved(loaded, Change(loaded, f"already done under this client id: {summary}", changed=False),
                     written=False, audit_entry=previous, retried=True)
    change = operation.apply(loaded)
    current = _read_current(target)
    current_sha = hashlib.sha256(current).hexdigest() if current is not None else ""
    reapplied = False
    if current_sha != loaded.source_sha256:
        if current is None:
            raise GraphConflictError(
                f"{loaded.shown} was deleted after memtui loaded it; nothing was written. "
                "Reload to start from the current state.")
        fresh = loads(current, loaded.shown)
        try:
            change = operation.apply(fresh)
        except GraphEditError as exc:
            diff = conflict_diff(loaded_bytes, current, target.name) if loaded_bytes is not None else ""
            raise GraphConflictError(
                f"{loaded.shown} changed on disk since memtui loaded it, and the edit no longer "
                f"applies ({exc}); nothing was written. Reload, look at the change, and try again.",
                diff) from exc
        reapplied = True
        if not change.changed:
            return Saved(fresh, change, reapplied=True, written=False)
    elif not change.changed:
        return Saved(loaded, change, written=False)
    data = change.graph.to_bytes()
    atomic.write_bytes(target, data)
    written = change.graph.replaced(change.graph.lines)
    written.source_sha256 = hashlib.sha256(data).hexdigest()
    written.exists = True
    book = ProvenanceBook(session.store)
    undo: list = []
    if isinstance(operation, Restore):
        book.put_back(operation.provenance_undo)
    else:
        book.follow(operation, undo=undo)
    for item in provenance:
        book.record(item)
    recorded = session.audit.record(
        action_name(operation), shown, current_sha or None, written.source_sha256, client_id=client_id,
        detail={"operation": describe(operation), "summary": change.summary, "notes": list(change.notes),
                "reapplied": reapplied})
    return Saved(written, change, reapplied=reapplied, audit_entry=recorded.entry,
                 provenance_undo=tuple(undo))


def iter_records(graph: Graph) -> Iterator[Entity | Relation]:
    """Every good record in file order (entities and relations interleaved as written)."""
    for line in graph.lines:
        if line.record is not None:
            yield line.record


def server_view(graph: Graph) -> dict:
    """``{"entities": [...], "relations": [...]}`` as the server's ``read_graph`` returns it
    for this file (entities, then relations, file order, only the known keys)."""
    return {
        "entities": [{"name": e.name, "entityType": e.entity_type, "observations": list(e.observations)}
                     for e in graph.entities],
        "relations": [{"from": r.source, "to": r.target, "relationType": r.relation_type}
                      for r in graph.relations],
    }
