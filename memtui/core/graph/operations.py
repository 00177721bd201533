"""Graph edits: each an :class:`Operation`, a pure function from one :class:`~memtui.core.graph.format.Graph` to another.

An edit replaces, inserts or removes whole lines, so every line it did not touch keeps its
bytes and its place (DESIGN.md §2, invariant 3). Writing the result is
:func:`memtui.core.graph.commit.commit`'s job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence

from memtui.core import jsonio
from memtui.core.text import visible
from memtui.core.graph.format import ENTITY, Entity, Graph, GraphEditError, INVALID, Line, MALFORMED, RELATION, Relation, _extra_keys, entity_line, fold_name, fold_type, parse_line, relation_line, server_json


@dataclass(frozen=True)
class Change:
    """What an operation did: the new graph and a sentence for the user and the audit log.

    Attributes:
        graph: the graph after the operation (the input graph is unchanged).
        summary: one plain sentence, in the past tense, of what was done (``"renamed 'a' to
            'b'; 3 relations follow"``): the audit log and the report after the write.
        will: the same, in the future tense (``"will rename 'a' to 'b'; 3 relations will
            follow"``): what a confirmation says before anything is written; empty
            when the operation has none (then the confirmation says only its question).
        changed: False when there was nothing to do (nothing is written then).
        notes: further plain sentences (relations dropped as duplicates, types that differed).
    """

    graph: Graph
    summary: str
    changed: bool = True
    notes: tuple[str, ...] = ()
    will: str = ""


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
    return [i for i, line in enumerate(graph.lines) if line.kind == ENTITY and line.entity.name == name]


def _targets(graph: Graph, name: str, record: str) -> list[int]:
    """Line indexes an edit of entity ``name`` changes: every record of the name, or only the
    one whose :meth:`Graph.record_key` is ``record``.

    Raises:
        GraphEditError: no such entity, or no such record (see :meth:`Graph.record`).
    """
    if record:
        return [graph.record(name, record).line - 1]
    graph.entity(name)
    return _entity_positions(graph, name)


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
    while end and lines[end - 1].kind == MALFORMED:  # never append after a cut-off line: it would glue the record to it
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
        notes: tuple[str, ...] = ()
        similar = [e.name for e in graph.entities if fold_name(e.name) == fold_name(self.name)]
        if similar:
            notes = (f"names equal after case/space folding exist: {', '.join(map(repr, similar))}",)
        return Change(graph.replaced(lines), f"created entity {self.name!r} ({self.entity_type})", notes=notes,
                      will=f"will create the entity {self.name!r} of type {self.entity_type!r}")


@dataclass(frozen=True)
class AddObservation(Operation):
    """Add an observation to the (first) entity named ``entity``, as the server's
    ``add_observations``; with ``record`` (:meth:`Graph.record_key`), to that record of a name
    written several times."""

    entity: str
    text: str
    record: str = ""

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        _check_text(self.text, "observation")
        target = graph.record(self.entity, self.record)
        if self.text in target.observations:
            return Change(graph, f"{self.entity!r} already has that observation", changed=False)
        index = target.line - 1
        lines = list(graph.lines)
        record = Entity(target.name, target.entity_type, target.observations + (self.text,), target.line)
        lines[index] = _rewrite(lines[index], record)
        return Change(graph.replaced(lines), f"added an observation to {self.entity!r}",
                      will=f"will add an observation to {self.entity!r}")


@dataclass(frozen=True)
class EditObservation(Operation):
    """Replace the observation ``old`` of the entity by ``new`` (in place; every duplicate
    record, or only the one ``record`` names)."""

    entity: str
    old: str
    new: str
    record: str = ""

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        _check_text(self.new, "new observation")
        lines = list(graph.lines)
        hits = 0
        for index in _targets(graph, self.entity, self.record):
            record = lines[index].entity
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
        return Change(graph.replaced(lines), f"edited an observation of {self.entity!r}",
                      will=f"will replace an observation of {self.entity!r}")


@dataclass(frozen=True)
class DeleteObservation(Operation):
    """Delete the observation ``text`` from every record named ``entity`` (all its copies),
    or only from the one ``record`` names."""

    entity: str
    text: str
    record: str = ""

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        lines = list(graph.lines)
        removed = 0
        for index in _targets(graph, self.entity, self.record):
            record = lines[index].entity
            kept = tuple(t for t in record.observations if t != self.text)
            if len(kept) != len(record.observations):
                removed += len(record.observations) - len(kept)
                lines[index] = _rewrite(lines[index], Entity(record.name, record.entity_type, kept))
        if not removed:
            raise GraphEditError(f"{self.entity!r} has no observation {self.text!r}.")
        copies = f" ({removed} copies)" if removed > 1 else ""
        return Change(graph.replaced(lines), f"deleted an observation of {self.entity!r}{copies}",
                      will=f"will delete an observation of {self.entity!r}{copies}")


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
            relation = line.relation
            if relation.source not in mapping and relation.target not in mapping:
                untouched.add(relation.triple)
    rewired = duplicates = loops = 0
    seen: set[tuple[str, str, str]] = set()
    out: list[Line] = []
    for line in lines:
        if line.kind != RELATION or (line.relation.source not in mapping and line.relation.target not in mapping):
            out.append(line)
            continue
        relation = line.relation
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
                f"an entity named {self.new!r} already exists; merge the two instead.")
        lines = list(graph.lines)
        for index in _entity_positions(graph, self.old):
            record = lines[index].entity
            lines[index] = _rewrite(lines[index], Entity(self.new, record.entity_type, record.observations))
        rewired, _dups, _loops = _rewire(lines, {self.old: self.new})
        follow = f"{rewired} relation{'s' if rewired != 1 else ''}"
        return Change(graph.replaced(lines), f"renamed {self.old!r} to {self.new!r}; {follow} follow",
                      will=f"will rename {self.old!r} to {self.new!r}; {follow} will follow")


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
            record = lines[index].entity
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
            notes.append(f"{duplicates} duplicate relation{'s' if duplicates != 1 else ''}: "
                         "one of each is kept, the copies are dropped")
        if loops:
            notes.append(f"{loops} relation{'s' if loops != 1 else ''} between merged entities dropped "
                         "(each would point at itself)")
        if len(types) > 1:
            others = sorted(types - {target.entity_type})
            notes.append(f"the entityType is {target.entity_type!r}; merged records had {', '.join(map(repr, others))}")
        records = f"{len(positions) - 1} record{'s' if len(positions) != 2 else ''}"
        return Change(graph.replaced(lines), f"merged {records} into {self.into!r}", notes=tuple(notes),
                      will=f"will merge {records} into {self.into!r}")


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
            if line.kind == ENTITY and line.entity.entity_type in wanted and line.entity.entity_type != self.new:
                record = line.entity
                lines[index] = _rewrite(line, Entity(record.name, self.new, record.observations))
                count += 1
        if not count:
            if any(e.entity_type in wanted for e in graph.entities):
                return Change(graph, f"every entity of those types is already {self.new!r}", changed=False)
            raise GraphEditError(f"no entity has entityType {' or '.join(map(repr, self.old_types))}.")
        entities = f"{count} entit{'ies' if count != 1 else 'y'}"
        return Change(graph.replaced(lines), f"changed entityType to {self.new!r} on {entities}",
                      will=f"will change entityType to {self.new!r} on {entities}")


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
                      f"related {self.source!r} --{self.relation_type}--> {self.target!r}",
                      will=f"will relate {self.source!r} --{self.relation_type}--> {self.target!r}")


@dataclass(frozen=True)
class DeleteRelation(Operation):
    """Delete every relation ``source --relation_type--> target`` (the server's ``delete_relations``)."""

    source: str
    target: str
    relation_type: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        triple = (self.source, self.target, self.relation_type)
        lines = [line for line in graph.lines if not (line.kind == RELATION and line.relation.triple == triple)]
        removed = len(graph.lines) - len(lines)
        if not removed:
            raise GraphEditError(
                f"there is no relation {self.source!r} --{self.relation_type}--> {self.target!r}.")
        what = f"the relation {self.source!r} --{self.relation_type}--> {self.target!r}" + (
            f" ({removed} copies)" if removed > 1 else "")
        return Change(graph.replaced(lines), f"deleted {what}", will=f"will delete {what}")


@dataclass(frozen=True)
class DeleteRecord(Operation):
    """Delete one record of a name written several times (``record``: its
    :meth:`Graph.record_key`); the other records and every relation stay. The only record of a
    name is deleted with :class:`DeleteEntity` instead."""

    entity: str
    record: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        target = graph.record(self.entity, self.record)
        count = len(graph.find(self.entity))
        if count < 2:
            raise GraphEditError(
                f"{self.entity!r} is written once; delete the entity instead (it takes its relations along).")
        lines = list(graph.lines)
        del lines[target.line - 1]
        return Change(graph.replaced(lines), f"deleted record {target.line} of {self.entity!r} "
                      f"({count - 1} record{'s' if count - 1 != 1 else ''} of that name left)")


@dataclass(frozen=True)
class DeleteEntity(Operation):
    """Delete every record named ``name`` and every relation touching it (as the server does)."""

    name: str

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        graph.entity(self.name)
        lines = []
        entities = relations = 0
        gone: list[Relation] = []
        for line in graph.lines:
            if line.kind == ENTITY and line.entity.name == self.name:
                entities += 1
                continue
            if line.kind == RELATION and self.name in (line.relation.source, line.relation.target):
                relations += 1
                gone.append(line.relation)
                continue
            lines.append(line)
        what = (f"entity {self.name!r} and {relations} relation{'s' if relations != 1 else ''}"
                + (f" ({entities} records)" if entities > 1 else ""))
        notes = (relations_named(gone, "the relations that go with it: "),) if gone else ()
        return Change(graph.replaced(lines), f"deleted {what}", will=f"will delete {what}", notes=notes)


#: Relations a confirmation names before "and N more".
NAMED_RELATIONS = 10


def relations_named(relations: Sequence[Relation], lead: str = "", limit: int = NAMED_RELATIONS) -> str:
    """One sentence naming ``relations`` (``'A' --uses--> 'B'``, in file order, each part made
    visible), at most ``limit`` of them and then ``and N more``: what a confirmation says will
    go, so no one deletes relations they were not shown."""
    shown = [f"'{visible(r.source)}' --{visible(r.relation_type)}--> '{visible(r.target)}'" for r in relations[:limit]]
    more = len(relations) - len(shown)
    return lead + "; ".join(shown) + (f"; and {more:,} more" if more > 0 else "")


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
        # One pass, one new graph: creating entity by entity re-indexed the whole graph for each
        # (an import of 2,000 entities took ~50 s, 20,000 did not end in 10 minutes).
        self._editable(graph)
        lines = list(graph.lines)
        gained: dict[str, tuple[str, ...]] = {}  # existing name -> observations it lacks, in order
        new: dict[str, Entity] = {}  # new name -> its record, observations merged in order
        for entity in self.entities:
            if graph.find(entity.name):
                have = graph.entity(entity.name).observations + gained.get(entity.name, ())
                more = tuple(o for o in dict.fromkeys(entity.observations) if o not in have)
                if more:
                    gained[entity.name] = gained.get(entity.name, ()) + more
            elif entity.name in new:
                known = new[entity.name]
                more = tuple(o for o in dict.fromkeys(entity.observations) if o not in known.observations)
                new[entity.name] = Entity(known.name, known.entity_type, known.observations + more)
            else:
                _check_text(entity.name, "entity name")
                _check_text(entity.entity_type, "entityType")
                new[entity.name] = Entity(entity.name, entity.entity_type, tuple(dict.fromkeys(entity.observations)))
        for name, more in gained.items():
            target = graph.entity(name)
            lines[target.line - 1] = _rewrite(lines[target.line - 1],
                                              Entity(target.name, target.entity_type, target.observations + more))
        if new:
            at = _insert_position(lines, ENTITY)
            lines[at:at] = [_new_line(graph, record) for record in new.values()]
        created, extended, related = len(new), len(gained), 0
        current = graph.replaced(lines) if (created or extended) else graph
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
    change (the TUI's "undo the last action")."""

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
        return Change(graph.replaced(list(self.previous.lines)), self.summary,
                      will=f"will put the graph back as it was before: {self.summary.removeprefix('undid: ')}")


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
    caller keeps them in a backup (a repair asks before dropping a line, and keeps a copy).
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
            value, index = jsonio.decode(text, index)
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


@dataclass(frozen=True)
class ReplaceRecords(Operation):
    """Make the graph hold exactly ``entities`` and ``relations`` (``memtui graph pull`` and
    ``push``): the records in that order and in the server's form; lines that are not
    records (bad, unknown, blank) are kept, after them. Nothing changes when the graph already
    holds exactly these records in this order (its bytes stay as they are).

    :meth:`of` makes one from another graph's record lines, so every field of every record (a
    server's ``createdAt``, ``version``...) is kept, in its place and order."""

    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]
    #: the record lines the records come from (:meth:`of`), or ``()``: lines made in server form
    lines: tuple[Line, ...] = ()

    @classmethod
    def of(cls, graph: Graph) -> "ReplaceRecords":
        """The records of ``graph`` with their lines (every field kept)."""
        lines = tuple(line for line in graph.lines if line.kind in (ENTITY, RELATION) and line.record is not None)
        return cls(tuple(graph.entities), tuple(graph.relations), lines)

    def apply(self, graph: Graph) -> Change:
        self._editable(graph)
        def key(records) -> list:  # noqa: ANN001
            return [(r.name, r.entity_type, r.observations) if isinstance(r, Entity) else r.triple for r in records]

        def raws(lines) -> list:  # noqa: ANN001 - every field, in order (not the spacing of the bytes)
            return [list(json.loads(line.raw).items()) for line in lines
                    if line.kind in (ENTITY, RELATION) and line.record is not None]

        if key(graph.entities) == key(self.entities) and key(graph.relations) == key(self.relations) and (
                not self.lines or raws(graph.lines) == raws(self.lines)):
            return Change(graph, "the graph already holds exactly these records", changed=False)
        crlf = graph.newline() == b"\r\n"
        if self.lines:
            made = [Line(line.raw, crlf, line.kind, line.record) for line in self.lines]
            lines = [line for line in made if line.kind == ENTITY] + [line for line in made if line.kind == RELATION]
        else:
            lines = [Line(entity_line(e), crlf, ENTITY, e) for e in self.entities]
            lines += [Line(relation_line(r), crlf, RELATION, r) for r in self.relations]
        kept = [line for line in graph.lines if line.record is None and line.kind != "blank"]
        before_names = {e.name for e in graph.entities}
        after_names = {e.name for e in self.entities}
        summary = (f"replaced the records: {len(self.entities):,} entities ({len(after_names - before_names):,} new, "
                   f"{len(before_names - after_names):,} gone), {len(self.relations):,} relations")
        notes = (f"{len(kept)} lines that are not records are kept",) if kept else ()
        return Change(graph.replaced(lines + kept), summary, notes=notes)
