"""Exports of the knowledge graph: JSONL (server form), Graphviz DOT and Mermaid.

Every name and text is escaped for the target language, so a name such as ``[/]``,
``"quoted"``, ``A/B`` or one holding a newline can never break the output or inject
syntax; node identifiers are generated (``n0``, ``n1``...), never made from names.
"""

from __future__ import annotations

from memtui.core.graph.format import ENTITY, RELATION, Entity, Graph, Relation, entity_line, record_extras, relation_line
from memtui.core.text import visible


def to_jsonl(graph: Graph) -> bytes:
    """The graph's good records in the server's own form: entities, then relations, one per
    line, with a final newline, every record's other fields (``createdAt``, ``version``...) kept after
    the known ones in their order. Bad and unknown lines are not exported (they stay in the file)."""
    entities = [entity_line(line.record, record_extras(line)) for line in graph.lines
                if line.kind == ENTITY and isinstance(line.record, Entity)]
    relations = [relation_line(line.record, record_extras(line)) for line in graph.lines
                 if line.kind == RELATION and isinstance(line.record, Relation)]
    lines = entities + relations
    return b"".join(line + b"\n" for line in lines)


def _node_ids(graph: Graph) -> dict[str, str]:
    ids: dict[str, str] = {}
    for entity in graph.entities:
        ids.setdefault(entity.name, f"n{len(ids)}")
    for relation in graph.relations:
        for end in (relation.source, relation.target):
            ids.setdefault(end, f"n{len(ids)}")
    return ids


def _dot_text(text: str) -> str:
    """Text inside a DOT double-quoted string: hidden characters made visible, ``\\`` and ``"`` escaped."""
    return visible(text).replace("\\", "\\\\").replace('"', '\\"')


def to_dot(graph: Graph) -> str:
    """Graphviz DOT text: one node per distinct name (label ``name\\n(entityType)``), one edge
    per relation labelled with its type; a dangling end becomes a dashed node."""
    ids = _node_ids(graph)
    types: dict[str, str] = {}
    for entity in graph.entities:
        types.setdefault(entity.name, entity.entity_type)
    out = ["digraph memory {", "  node [shape=box];"]
    for name, node in ids.items():
        if name in types:
            out.append(f'  {node} [label="{_dot_text(name)}\\n({_dot_text(types[name])})"];')
        else:
            out.append(f'  {node} [label="{_dot_text(name)}", style=dashed];')
    for relation in graph.relations:
        out.append(f"  {ids[relation.source]} -> {ids[relation.target]} "
                   f'[label="{_dot_text(relation.relation_type)}"];')
    out.append("}")
    return "\n".join(out) + "\n"


def _mermaid_text(text: str) -> str:
    """Text for a quoted Mermaid label: quotes and markup-like characters as entity codes."""
    text = visible(text)
    replace = {'"': "#quot;", "#": "#35;", "<": "#lt;", ">": "#gt;", "\n": " ", "\r": " ", "\t": " ",
               "[": "#91;", "]": "#93;", "|": "#124;", "`": "#96;"}
    return "".join(replace.get(c, c if c >= " " else " ") for c in text)


def to_mermaid(graph: Graph) -> str:
    """Mermaid ``flowchart LR`` text: quoted node labels and edge labels, escaped."""
    ids = _node_ids(graph)
    types: dict[str, str] = {}
    for entity in graph.entities:
        types.setdefault(entity.name, entity.entity_type)
    out = ["flowchart LR"]
    for name, node in ids.items():
        label = _mermaid_text(name) + (f" ({_mermaid_text(types[name])})" if name in types else "")
        out.append(f'  {node}["{label}"]')
    for relation in graph.relations:
        out.append(f'  {ids[relation.source]} -->|"{_mermaid_text(relation.relation_type)}"| {ids[relation.target]}')
    return "\n".join(out) + "\n"
