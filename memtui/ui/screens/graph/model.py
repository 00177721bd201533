"""What the Graph area's panes show of one read of the graph, built once per read.

:class:`GraphModel` holds the graph with its findings and provenance, and what the panes look
up often: the findings of each file line, the worst finding of each entity (the ``⚠ n`` marks
of the table and the tree), and the relations of each entity in both directions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from rich.text import Text

from memtui.core import graph as g
from memtui.core.findings import Finding, Severity
from memtui.core.graph.provenance import Provenance

_MARK_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}

#: The table's orders, by the key of its column.
SORTS: dict[str, Callable[[tuple[g.Entity, int]], object]] = {
    "name": lambda r: r[0].name.casefold(),
    "type": lambda r: (r[0].entity_type.casefold(), r[0].name.casefold()),
    "observations": lambda r: (-len(r[0].observations), r[0].name.casefold()),
    "relations": lambda r: (-r[1], r[0].name.casefold()),
}

#: Provenance of the graph's observations, ``{entity: {observation: [Provenance]}}``.
ProvenanceMap = dict[str, dict[str, list[Provenance]]]


@dataclass
class GraphModel:
    """One read of the graph as the panes show it (build it with :meth:`of`).

    Attributes:
        graph: the graph read.
        findings: its audit's findings (none for a kept snapshot, which is not audited).
        provenance: where its observations came from.
        by_line: the findings of each file line.
        flags: worst severity and count of the findings of each entity name.
        degree: relations of each entity name (both ends counted once).
        outgoing: the relations from each name; ``incoming``: the relations to it.
    """

    graph: g.Graph
    findings: list[Finding] = field(default_factory=list)
    provenance: ProvenanceMap = field(default_factory=dict)
    by_line: dict[int, list[Finding]] = field(default_factory=dict)
    flags: dict[str, tuple[Severity, int]] = field(default_factory=dict)
    degree: dict[str, int] = field(default_factory=dict)
    outgoing: dict[str, list[g.Relation]] = field(default_factory=dict)
    incoming: dict[str, list[g.Relation]] = field(default_factory=dict)

    @classmethod
    def of(cls, graph: g.Graph, findings: list[Finding], provenance: ProvenanceMap | None = None) -> GraphModel:
        """The model of ``graph`` with its ``findings`` and ``provenance`` (none: no records)."""
        by_line: dict[int, list[Finding]] = defaultdict(list)
        flags: dict[str, tuple[Severity, int]] = {}
        for finding in findings:
            if finding.line is None:
                continue
            by_line[finding.line].append(finding)
            if 0 < finding.line <= len(graph.lines):
                record = graph.lines[finding.line - 1].record
                if isinstance(record, g.Entity):
                    worst, count = flags.get(record.name, (finding.severity, 0))
                    if finding.severity.rank < worst.rank:
                        worst = finding.severity
                    flags[record.name] = (worst, count + 1)
        outgoing: dict[str, list[g.Relation]] = defaultdict(list)
        incoming: dict[str, list[g.Relation]] = defaultdict(list)
        degree: dict[str, int] = {}
        for relation in graph.relations:
            outgoing[relation.source].append(relation)
            incoming[relation.target].append(relation)
            degree[relation.source] = degree.get(relation.source, 0) + 1
            if relation.target != relation.source:
                degree[relation.target] = degree.get(relation.target, 0) + 1
        return cls(graph, findings, provenance or {}, by_line, flags, degree, outgoing, incoming)

    def mark(self, name: str) -> Text:
        """``" ⚠ n"`` in the colour of the worst finding of entity ``name`` (empty when none)."""
        flag = self.flags.get(name)
        if not flag:
            return Text("")
        return Text(f" ⚠ {flag[1]}", style=_MARK_STYLE[flag[0]])

    def flagged(self, name: str) -> bool:
        """True when entity ``name`` has a finding worse than a note (its name is shown red)."""
        flag = self.flags.get(name)
        return bool(flag) and flag is not None and flag[0] is not Severity.INFO

    def relations_of(self, name: str) -> int:
        """How many relations lead from or to ``name``."""
        return len(self.outgoing.get(name, [])) + len(self.incoming.get(name, []))

    def matching(self, query: str, sort: str) -> list[tuple[g.Entity, int]]:
        """``(entity, relation count)`` of the entities ``query`` keeps, in the order ``sort``.

        ``query``: words that must all be in the name (case-insensitive), and ``type:T`` words
        of which the entityType must be one.
        """
        words = query.casefold().split()
        types = [w[5:] for w in words if w.startswith("type:")]
        plain = [w for w in words if not w.startswith("type:")]
        rows = []
        for entity in self.graph.entities:
            if types and not any(t == entity.entity_type.casefold() for t in types):
                continue
            if plain:
                name = entity.name.casefold()
                if not all(w in name for w in plain):
                    continue
            rows.append((entity, self.degree.get(entity.name, 0)))
        rows.sort(key=SORTS[sort])  # type: ignore[arg-type]  # each key gives comparable values
        return rows

    def largest_counts(self) -> tuple[int, int]:
        """The most observations of one entity, and the most relations of one entity."""
        return (max((len(e.observations) for e in self.graph.entities), default=0),
                max(self.degree.values(), default=0))
