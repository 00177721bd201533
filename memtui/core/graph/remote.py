"""The remote graph: the member's knowledge graph served over MCP streamable HTTP (seed 002).

Seed 002's members have no ``graph.jsonl``: the proxy serves their graph at ``/v1/mcp`` with
the tools of ``@modelcontextprotocol/server-memory``. This module makes that graph a
:class:`~memtui.core.graph.format.Graph` like a local one, so browsing, the audit and every
curating :class:`~memtui.core.graph.operations.Operation` work unchanged:

- **Where it is** (:func:`resolve`): ``--remote URL``, else ``[graph] remote`` in
  ``memtui.toml``, else the MCP server block named ``memory`` in the workspace's
  ``config.json`` (picoclaw's ``tools.mcp.servers.memory``, also ``tools.mcp.memory`` and
  ``mcpServers.memory``), read in place and never copied. The token: that block's
  ``Authorization`` header when the URL came from it, else the keyring
  (``memtui secret set graph-token``, environment fallback ``MEMTUI_GRAPH_TOKEN``).
- **Reading** (:meth:`RemoteGraph.load`): ``read_graph``, made into server-form lines
  (entities, then relations, as the server's own file), so line numbers of findings are record
  positions in the server's order.
- **Writing** (:meth:`RemoteGraph.save`): the operation is applied to the loaded graph, and the
  difference is turned into a sequence of the server's tools (:func:`plan`; rename, merge,
  edit and retype have no tool of their own). The plan is checked first on a model of the
  server (:func:`simulate`, the reference server's semantics), so a change the tools cannot
  express is refused before anything is sent. The server has no versions, so just before
  writing, memtui re-reads what it is about to change (``open_nodes``: the same call it read
  with, or, after a whole read, what that call answers on this server: :data:`TOUCHING` or
  :data:`BETWEEN`, learned from the answers) and stops with the difference when another writer
  changed it (DESIGN.md invariant 3). After the sequence it reads the same records back: a write
  that is not there is a conflict, never "saved". A CLI edit reads only the records it touches
  (:meth:`RemoteGraph.load_records`). Every field of a record (a server's ``createdAt``,
  ``version``) is kept in its line (:func:`~memtui.core.graph.format.served_line`).
- **The audit** (DESIGN.md invariants 2 and 7): the writer lock is never held while the network
  is waited for. Instead a remote write is *journalled*: one guarded write records the planned
  sequence (table ``remote-sequences``, with the audit entry of the request and its client id)
  before the first tool call, and a second one records the outcome right after the last. A
  sequence that fails half-way — or a memtui killed mid-sequence — therefore always leaves a
  record saying what was applied and what was not, and :meth:`RemoteGraph.resume` finishes it
  (or undoes what was applied). Neither record holds the token: only the URL without user
  information or query (:func:`memtui.core.mcp.client.shown_url`).

Observation order: the server appends observations and has no tool to put one at a place, so an
edited or restored observation goes last on a remote graph (the plan says so in its notes).
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from memtui.core import jsonio
from memtui.core.bulk import bulk
from memtui.core.errors import ExternalError, MemtuiError
from memtui.core.findings import Finding
from memtui.core.graph.commit import Saved, action_name, describe
from memtui.core.graph.format import (ENTITY, RELATION, Entity, Graph, GraphConflictError, GraphEditError, Line, Relation,
                                      record_extras, served_line, server_json, server_view)
from memtui.core.graph.operations import Change, Operation
from memtui.core.graph.provenance import follow_edit
from memtui.core.mcp.client import DEFAULT_DEADLINE, DEFAULT_MAX_ANSWER, DEFAULT_TIMEOUT, Client, Endpoint, shown_url
from memtui.core.mcp.errors import McpError, McpServerError
from memtui.core.text import unified_diff, visible

if TYPE_CHECKING:
    from memtui.core.auditlog import AuditEntry
    from memtui.core.session import Session

#: The workspace file whose ``memory`` MCP block names the remote graph (seed 002).
WORKSPACE_CONFIG = "config.json"
#: The name of that block (seed 002: "an MCP server block named memory").
BLOCK_NAME = "memory"
#: Largest ``config.json`` read (bytes).
MAX_CONFIG_BYTES = 4 * 1024 * 1024
#: The tools memtui's reading and curating need.
READ_TOOLS = ("read_graph", "open_nodes")
WRITE_TOOLS = ("create_entities", "add_observations", "create_relations", "delete_entities",
               "delete_observations", "delete_relations")
#: The tools that only add (a server skips what exists): they cannot overwrite another writer's records.
ADDITIVE = frozenset({"create_entities", "add_observations", "create_relations"})
#: Largest JSON arguments of one tool call (bytes): the reference gateway's body parser refuses
#: requests over 100 KB (express.json's default), so longer lists are sent in parts.
MAX_ARGUMENTS = 64 * 1024
#: The reference server's resource holding the whole graph once (server-memory 2026.8.31
#: ``registerKnowledgeGraphResource``: ``JSON.stringify(graph)``); read instead of ``read_graph``
#: when listed (:meth:`RemoteGraph.load`).
GRAPH_RESOURCE = "memory://knowledge-graph"
#: The store table of remote write sequences (the journal; see the module docstring).
TABLE = "remote-sequences"


class RemoteSequenceError(ExternalError):
    """A write sequence stopped half-way (exit 4): ``str(exc)`` says what was applied, what was
    not, and how to finish or undo it (``memtui graph resume``).

    Attributes:
        applied: the steps applied (their summaries).
        pending: the steps not applied.
    """

    def __init__(self, message: str, applied: list[str], pending: list[str]) -> None:
        super().__init__(message)
        self.applied, self.pending = applied, pending


# -- where the remote is ----------------------------------------------------------------------------

def memory_block(root) -> tuple[dict | None, Finding | None]:  # noqa: ANN001 - Path
    """The ``memory`` MCP server block of ``<root>/config.json``, read in place.

    Returns:
        ``(block, None)``; ``(None, None)`` when there is no file or no such block;
        ``(None, finding)`` when the file cannot be read as JSON (``config-invalid``).
    """
    from memtui.core.files import is_inside

    path = root / WORKSPACE_CONFIG
    if not path.is_file():
        return None, None
    if not is_inside(root, path):
        return None, Finding.make("symlink-outside", WORKSPACE_CONFIG, "is a link out of the workspace; not read",
                                  "replace the link with the file itself")
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ValueError(f"it is larger than {MAX_CONFIG_BYTES:,} bytes")
        data = jsonio.loads(path.read_bytes().decode("utf-8-sig"))
    except (OSError, ValueError) as exc:
        return None, Finding.make("config-invalid", WORKSPACE_CONFIG, f"cannot be read as JSON ({exc})",
                                  "fix the file; memtui uses the local graph meanwhile")
    def table(parent: object, key: str) -> dict:
        value = parent.get(key) if isinstance(parent, dict) else None
        return value if isinstance(value, dict) else {}

    mcp = table(table(data, "tools"), "mcp")
    candidates = [table(mcp, "servers").get(BLOCK_NAME), mcp.get(BLOCK_NAME), table(data, "mcpServers").get(BLOCK_NAME)]
    for block in candidates:
        if isinstance(block, dict) and isinstance(block.get("url"), str) and block["url"].strip():
            odd = _not_text(block)
            if odd or not block["url"].isprintable():
                what = (f"holds {odd}, which is not a character (a lone surrogate escape)" if odd else
                        f"has a url with a control character ({visible(block['url'])})")
                return None, Finding.make("config-invalid", WORKSPACE_CONFIG, f"its {BLOCK_NAME} block {what}",
                                          "fix the file; memtui uses the local graph meanwhile")
            return block, None
    return None, None


def _not_text(value: object) -> str:
    """The first lone surrogate in the strings of ``value`` (a JSON value) as ``U+D800``, or
    ``""``: a URL or header holding one cannot be sent (HTTP needs valid text)."""
    from memtui.core.text import well_formed

    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if well_formed(item) is not item:
                return next(f"U+{ord(c):04X}" for c in item if 0xD800 <= ord(c) <= 0xDFFF)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return ""


def resolve(ws, remote: str | None = None) -> Endpoint | None:  # noqa: ANN001 - Workspace
    """Where the workspace's graph lives: an :class:`Endpoint`, or ``None`` for the local file.

    Args:
        ws: the opened workspace.
        remote: ``--remote URL`` (wins over the settings); ``"local"`` forces the local file.

    Raises:
        ExternalError: the keyring failed in a way that is not "no keyring" (never for a
            missing token: the server then says it wants one).
    """
    from memtui.core import secrets

    settings = getattr(ws.config, "graph", None)
    timeout = getattr(settings, "timeout", DEFAULT_TIMEOUT)
    deadline = float(getattr(settings, "deadline", DEFAULT_DEADLINE))
    max_answer = int(getattr(settings, "max_answer_mb", DEFAULT_MAX_ANSWER // 1_000_000)) * 1_000_000
    if remote == "local":
        return None
    url, where, block = remote, "--remote", None
    if not url and getattr(ws.config.graph, "remote", None):
        url, where = ws.config.graph.remote, "[graph] remote in memtui.toml"
    if not url:
        block, _finding = memory_block(ws.root)
        if block is None:
            return None
        url, where = block["url"].strip(), f"the {BLOCK_NAME} block of {WORKSPACE_CONFIG}"
    token, source = None, ""
    headers: list[tuple[str, str]] = []
    left_out = False
    if block is not None and isinstance(block.get("headers"), dict):
        for key, value in block["headers"].items():
            if not isinstance(key, str) or not isinstance(value, str):
                continue
            if key.lower() == "authorization" and value == secrets.LEFT_OUT:
                left_out = True  # a restored backup's block: the token was left out of it
            elif key.lower() == "authorization":
                scheme, _, rest = value.partition(" ")
                if scheme.lower() == "bearer" and rest.strip():
                    token, source = rest.strip(), "config.json"
            elif key.lower() not in ("content-type", "accept", "mcp-session-id", "mcp-protocol-version"):
                headers.append((key, value))
    if token is None:
        found = secrets.get("graph-token")
        if found.value:
            token, source = found.value, found.source or "keyring"
        elif left_out:
            source = "left out"
    return Endpoint(url, token=token, token_source=source, where=where, timeout=timeout, headers=tuple(headers),
                    deadline=deadline, max_answer=max_answer)


# -- the server's model --------------------------------------------------------------------------

def _entity(e: Entity | dict) -> dict:
    if isinstance(e, Entity):
        return {"name": e.name, "entityType": e.entity_type, "observations": list(e.observations)}
    return {"name": e["name"], "entityType": e["entityType"], "observations": list(e["observations"])}


def _relation(r: Relation | dict) -> dict:
    if isinstance(r, Relation):
        return {"from": r.source, "to": r.target, "relationType": r.relation_type}
    return {"from": r["from"], "to": r["to"], "relationType": r["relationType"]}


def _triple(r: dict) -> tuple[str, str, str]:
    return (r["from"], r["to"], r["relationType"])


def view_of(graph: Graph, extras: bool = False) -> dict:
    """``{"entities": [...], "relations": [...]}``: ``graph`` as the server holds it (copies).

    Args:
        extras: also each record's keys the reference server does not know (``createdAt``,
            ``version``...), after the known ones: what a lossless copy (a push, a snapshot, a
            backup) carries. Comparisons never look at them.
    """
    if not extras:
        return {"entities": [_entity(e) for e in graph.entities], "relations": [_relation(r) for r in graph.relations]}
    entities: list[dict] = []
    relations: list[dict] = []
    for line in graph.lines:
        if line.kind == ENTITY and isinstance(line.record, Entity):
            entities.append({**_entity(line.record), **record_extras(line)})
        elif line.kind == RELATION and isinstance(line.record, Relation):
            relations.append({**_relation(line.record), **record_extras(line)})
    return {"entities": entities, "relations": relations}


def _checked(answer: Any, what: str) -> tuple[list, list]:
    """``answer``'s entity and relation records, checked to be a graph answer (lists of records
    whose fields are text): the one rule of :func:`check_view` and :func:`read_graph_of`.

    Raises:
        McpServerError: it is not (the server is not a memory server memtui understands).
    """
    if isinstance(answer, str):  # a server that reports a failure as plain text (not isError)
        raise McpServerError(f"the server answered {what} with text, not a graph, so memtui did not take it as one; "
                             f"it said: {visible(answer.strip(), limit=300)!r}")
    if not isinstance(answer, dict) or not isinstance(answer.get("entities"), list) or not isinstance(
            answer.get("relations"), list):
        raise McpServerError(f"the server's {what} answer is not a graph (entities and relations).")
    try:
        for e in answer["entities"]:
            name, kind, observations = e["name"], e["entityType"], e["observations"]
            if not (type(name) is str and type(kind) is str and type(observations) is list
                    and all(type(o) is str for o in observations)):
                raise McpServerError(f"the server's {what} answer holds an entity whose fields are not text.")
        for r in answer["relations"]:
            if not (type(r["from"]) is str and type(r["to"]) is str and type(r["relationType"]) is str):
                raise McpServerError(f"the server's {what} answer holds a relation whose fields are not text.")
    except (KeyError, TypeError):
        raise McpServerError(f"the server's {what} answer holds a record without its fields.") from None
    return answer["entities"], answer["relations"]


def check_view(view: Any, what: str = "read_graph") -> dict:
    """``view`` checked to be a graph answer (:func:`_checked`); copies of its records, every
    key kept in its order (a server's extra fields such as ``createdAt`` are data too).

    Raises:
        McpError: it is not (the server is not a memory server memtui understands).
    """
    entities, relations = _checked(view, what)
    return {"entities": [dict(e, observations=list(e["observations"])) for e in entities],
            "relations": [dict(r) for r in relations]}


def _file_line(kind: str, record: dict) -> bytes:
    """One record of a view as the server's file line: ``type`` first (unless the record places
    it), then its keys in their order."""
    core = _entity(record) if kind == ENTITY else _relation(record)
    extra = {k: v for k, v in record.items() if k not in core and k != "type"}
    obj = dict(record) if "type" in record else {"type": kind, **core, **extra}
    return server_json(obj)


def view_bytes(view: dict) -> bytes:
    """The server-form lines of ``view``, as the reference server writes its file (entities,
    then relations, ``\\n`` between lines, no final newline); a record's extra keys are kept."""
    lines = [_file_line(ENTITY, e) for e in view["entities"]]
    lines += [_file_line(RELATION, r) for r in view["relations"]]
    return b"\n".join(lines)


def view_digest(view: dict) -> str:
    """A sha256 of ``view`` (its compact JSON): the identity of one state of a remote graph, as
    ``source_sha256`` is a local file's (undo checks it)."""
    return hashlib.sha256(json.dumps(view, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass")).hexdigest()


def graph_of(view: dict, shown: str, digest: str | None = None) -> Graph:
    """A :class:`Graph` of the server's checked ``view`` (:func:`check_view`), named ``shown``
    (the URL) in findings: one server-form line a record, entities then relations (the server's
    file order), each line's bytes made only when used (:class:`~memtui.core.graph.format.Line`).

    Args:
        digest: the view's :func:`view_digest` when the caller has it (else computed).
    """
    lines: list[Line] = []
    number = 0
    for e in view["entities"]:
        number += 1
        lines.append(served_line(ENTITY, Entity(e["name"], e["entityType"], tuple(e["observations"]), number), e,
                                 number))
    for r in view["relations"]:
        number += 1
        lines.append(served_line(RELATION, Relation(r["from"], r["to"], r["relationType"], number), r, number))
    if digest is None:  # the identity of the records' known fields, as every read of this state has
        digest = view_digest({"entities": [_entity(e) for e in view["entities"]],
                              "relations": [_relation(r) for r in view["relations"]]})
    return Graph(lines, bom=False, final_newline=False, shown=shown, source_sha256=digest)


def read_graph_of(answer: Any, shown: str, what: str = "read_graph", digest: str | None = None) -> Graph:
    """:func:`graph_of` of a whole-graph answer, checked as :func:`check_view` checks it but
    without copying the records into a view first (a 50,000-entity read: its records are made
    into lines once).

    Args:
        answer: the decoded answer (``{"entities": [...], "relations": [...]}``).
        shown: the remote's URL, as findings name it.
        what: what was asked (in the error's sentence).
        digest: the identity of the answer (``source_sha256``) when known (a snapshot's);
            default :func:`view_digest` of the records, so every read of one state has one identity.

    Raises:
        McpError: it is not a graph (the sentences of :func:`check_view`).
    """
    entities, relations = _checked(answer, what)
    lines: list[Line] = []
    append = lines.append
    number = 0
    for e in entities:
        number += 1
        append(served_line(ENTITY, Entity(e["name"], e["entityType"], tuple(e["observations"]), number), e, number))
    for r in relations:
        number += 1
        append(served_line(RELATION, Relation(r["from"], r["to"], r["relationType"], number), r, number))
    graph = Graph(lines, bom=False, final_newline=False, shown=shown, source_sha256=digest or "")
    if digest is None:
        graph.source_sha256 = view_digest(server_view(graph))
    return graph


def simulate(view: dict, tool: str, arguments: dict) -> dict:
    """``view`` after ``tool`` with ``arguments``, as the reference memory server does it
    (``@modelcontextprotocol/server-memory`` 2026.8.31, ``KnowledgeGraphManager``); a new view.

    Raises:
        GraphEditError: the tool would fail (``add_observations`` to a missing entity).
    """
    entities = [dict(e, observations=list(e["observations"])) for e in view["entities"]]
    relations = [dict(r) for r in view["relations"]]
    if tool == "create_entities":
        names = {e["name"] for e in entities}
        entities += [_entity(e) for e in arguments["entities"] if e["name"] not in names]
    elif tool == "create_relations":
        known = {_triple(r) for r in relations}
        relations += [_relation(r) for r in arguments["relations"] if _triple(r) not in known]
    elif tool == "add_observations":
        for item in arguments["observations"]:
            target = next((e for e in entities if e["name"] == item["entityName"]), None)
            if target is None:
                raise GraphEditError(f"the server has no entity {item['entityName']!r} to add observations to.")
            before = list(target["observations"])
            target["observations"] += [c for c in item["contents"] if c not in before]
    elif tool == "delete_entities":
        gone = set(arguments["entityNames"])
        entities = [e for e in entities if e["name"] not in gone]
        relations = [r for r in relations if r["from"] not in gone and r["to"] not in gone]
    elif tool == "delete_observations":
        for item in arguments["deletions"]:
            target = next((e for e in entities if e["name"] == item["entityName"]), None)
            if target is not None:
                drop = set(item["observations"])
                target["observations"] = [o for o in target["observations"] if o not in drop]
    elif tool == "delete_relations":
        drop = {_triple(r) for r in arguments["relations"]}
        relations = [r for r in relations if _triple(r) not in drop]
    else:  # pragma: no cover - plan() makes only the tools above
        raise ValueError(f"unknown tool {tool}")
    return {"entities": entities, "relations": relations}


#: How a server's ``open_nodes`` answers relations: every relation with an end among the entities
#: found (server-memory from 2026.7.4), or only those with both ends among them (server-memory up
#: to 2026.1.26 and its forks, such as ``@itseasy21/mcp-knowledge-graph`` 1.0.7). Both report
#: ``memory-server 0.6.3`` in ``initialize``, so :class:`RemoteGraph` learns it from the answers.
TOUCHING, BETWEEN = "touching", "between"


def subset(view: dict, names: Iterable[str], mode: str = TOUCHING) -> dict:
    """What ``open_nodes(names)`` answers on ``view``: the entities named, and the relations
    with an end among the entities found (``mode`` :data:`TOUCHING`) or with both ends among
    them (:data:`BETWEEN`)."""
    wanted = set(names)
    entities = [e for e in view["entities"] if e["name"] in wanted]
    found = {e["name"] for e in entities}
    if mode == BETWEEN:
        relations = [r for r in view["relations"] if r["from"] in found and r["to"] in found]
    else:
        relations = [r for r in view["relations"] if r["from"] in found or r["to"] in found]
    return {"entities": entities, "relations": relations}


def _one_ended(view: dict) -> list[dict]:
    """The relations of an ``open_nodes`` answer with one end outside its entities."""
    found = {e["name"] for e in view["entities"]}
    return [r for r in view["relations"] if (r["from"] in found) != (r["to"] in found)]


# -- planning ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One tool call of a write sequence.

    Attributes:
        tool: the server's tool.
        arguments: its arguments.
        summary: what it does, for the user (``"create 2 entities"``).
    """

    tool: str
    arguments: dict
    summary: str

    def to_json(self) -> dict:
        """``{"tool", "arguments", "summary"}`` (for the journal)."""
        return {"tool": self.tool, "arguments": self.arguments, "summary": self.summary}

    @classmethod
    def from_json(cls, doc: dict) -> "Step":
        """The inverse of :meth:`to_json`."""
        return cls(str(doc["tool"]), dict(doc["arguments"]), str(doc.get("summary", "")))


@dataclass
class Plan:
    """The tool calls that turn one server state into another.

    Attributes:
        steps: in order (creations first, deletions last, so a failure half-way leaves extra
            records rather than lost ones, except while a retyped entity is recreated).
        names: every entity name whose records or relations the plan touches (re-read before
            writing: the lost-update check).
        expected: the server's state after the plan (:func:`simulate`).
        reordered: names whose observations end in another order than asked (the server
            appends; see the module docstring).
    """

    steps: list[Step]
    names: list[str]
    expected: dict
    reordered: list[str] = field(default_factory=list)
    #: the names the lost-update check read (``names``, or those of the partial read)
    check: list[str] = field(default_factory=list)
    #: the state the plan starts from
    before: dict = field(default_factory=lambda: {"entities": [], "relations": []})


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _chunks(items: list, size_of: Callable[[Any], int], limit: int = MAX_ARGUMENTS) -> list[list]:
    out: list[list] = []
    current: list = []
    used = 0
    for item in items:
        size = size_of(item)
        if current and used + size > limit:
            out.append(current)
            current, used = [], 0
        current.append(item)
        used += size
    if current:
        out.append(current)
    return out


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False)) + 1


def _split_contents(entity_name: str, contents: list[str], key: str) -> list[dict]:
    """``{"entityName", key: part}`` items whose JSON fits :data:`MAX_ARGUMENTS` each."""
    return [{"entityName": entity_name, key: part}
            for part in _chunks(contents, _size, MAX_ARGUMENTS - _size(entity_name) - 64)]


def _steps(tool: str, key: str, items: list, what: Callable[[list], str]) -> list[Step]:
    return [Step(tool, {key: part}, what(part)) for part in _chunks(items, _size)]


def _create_steps(records: list[dict], label: str = "create") -> list[Step]:
    """``create_entities`` of ``records``; an entity too large for one call is created with
    the observations that fit and given the rest by ``add_observations``."""
    small: list[dict] = []
    rest: list[dict] = []
    for record in records:
        if _size(record) <= MAX_ARGUMENTS:
            small.append(record)
            continue
        parts = _split_contents(record["name"], record["observations"], "contents")
        small.append(dict(record, observations=parts[0]["contents"]))
        rest.extend(parts[1:])
    steps = _steps("create_entities", "entities", small,
                   lambda part: f"{label} {_plural(len(part), 'entity', 'entities')}")
    steps += _steps("add_observations", "observations", rest,
                    lambda part: f"add the rest of the observations of {len(part)} large "
                                 f"entit{'y' if len(part) == 1 else 'ies'}")
    return steps


def plan(before: dict, after: dict) -> Plan:
    """The server tool calls that turn ``before`` into ``after`` (two views; see :class:`Plan`).

    Raises:
        GraphEditError: the difference cannot be made with the server's tools (for example one
            more copy of a relation that exists already); nothing should be sent.
    """
    by_before: dict[str, list[dict]] = {}
    for e in before["entities"]:
        by_before.setdefault(e["name"], []).append(e)
    by_after: dict[str, list[dict]] = {}
    for e in after["entities"]:
        by_after.setdefault(e["name"], []).append(e)
    order = list(dict.fromkeys([*by_before, *by_after]))
    creates: list[dict] = []
    adds: list[dict] = []
    removals: list[dict] = []
    replaces: list[str] = []
    gone: list[str] = []
    reordered: list[str] = []
    for name in order:
        old, new = by_before.get(name, []), by_after.get(name, [])
        if [_entity(e) for e in old] == [_entity(e) for e in new]:  # extra keys are carried, not compared
            continue
        if not old:
            creates.extend(new)
        elif not new:
            gone.append(name)
        elif (len(old) == 1 and len(new) == 1 and old[0]["entityType"] == new[0]["entityType"]
              and len(set(old[0]["observations"])) == len(old[0]["observations"])
              and len(set(new[0]["observations"])) == len(new[0]["observations"])):
            was, now = old[0]["observations"], new[0]["observations"]
            added = [o for o in now if o not in was]
            removed = [o for o in was if o not in now]
            if added:
                adds.extend(_split_contents(name, added, "contents"))
            if removed:
                removals.extend(_split_contents(name, removed, "observations"))
            if [o for o in was if o not in removed] + added != now:
                reordered.append(name)
        else:
            replaces.append(name)
    touched = set(replaces) | set(gone)
    before_triples = {_triple(r) for r in before["relations"]}
    after_triples = {_triple(r) for r in after["relations"]}

    def touches(r: dict, names: set[str]) -> bool:
        return r["from"] in names or r["to"] in names

    new_relations = [r for r in after["relations"] if _triple(r) not in before_triples and not touches(r, touched)]
    rebuilt = [r for r in after["relations"] if touches(r, set(replaces)) and not touches(r, set(gone))]
    rebuilt_gone = [r for r in after["relations"] if touches(r, set(gone))]
    dropped = [r for r in before["relations"] if _triple(r) not in after_triples and not touches(r, touched)]
    dropped = list({_triple(r): r for r in dropped}.values())

    def rel_text(part: list) -> str:
        return _plural(len(part), "relation")

    steps: list[Step] = []
    steps += _create_steps(creates)
    steps += _steps("add_observations", "observations", adds,
                    lambda part: f"add observations to {_plural(len(part), 'entity', 'entities')}")
    steps += _steps("create_relations", "relations", new_relations, lambda part: f"create {rel_text(part)}")
    if replaces:
        steps += _steps("delete_entities", "entityNames", replaces,
                        lambda part: f"delete {_plural(len(part), 'entity', 'entities')} to recreate them "
                                     "(the server has no tool to change them in place)")
        steps += _create_steps([e for e in after["entities"] if e["name"] in set(replaces)], "recreate")
        steps += _steps("create_relations", "relations", rebuilt, lambda part: f"recreate {rel_text(part)}")
    steps += _steps("delete_relations", "relations", dropped, lambda part: f"delete {rel_text(part)}")
    steps += _steps("delete_observations", "deletions", removals,
                    lambda part: f"delete observations of {_plural(len(part), 'entity', 'entities')}")
    steps += _steps("delete_entities", "entityNames", gone,
                    lambda part: f"delete {_plural(len(part), 'entity', 'entities')} and their relations")
    steps += _steps("create_relations", "relations", rebuilt_gone,
                    lambda part: f"recreate {rel_text(part)} to deleted names")
    expected = before
    for step in steps:
        expected = simulate(expected, step.tool, step.arguments)
    if _canonical(expected, set(reordered)) != _canonical(after, set(reordered)):
        raise GraphEditError("this change cannot be made with the remote server's tools (it would need, for "
                             "example, a second copy of an existing relation); nothing was sent.")
    names = {n for n in order if [_entity(e) for e in by_before.get(n, [])] != [_entity(e) for e in by_after.get(n, [])]}
    for r in [*new_relations, *rebuilt, *rebuilt_gone, *dropped]:
        names.update((r["from"], r["to"]))
    return Plan(steps, sorted(names), expected, reordered, before=before)


def _canonical(view: dict, loose: set[str]) -> tuple:
    """A comparable form of ``view``: entities by name (observations sorted for ``loose``
    names), relations as a sorted multiset."""
    entities: dict[str, list] = {}
    for e in view["entities"]:
        obs = sorted(e["observations"]) if e["name"] in loose else list(e["observations"])
        entities.setdefault(e["name"], []).append((e["entityType"], tuple(obs)))
    return (sorted(entities.items()), sorted(Counter(_triple(r) for r in view["relations"]).items()))


def _view_diff(loaded: dict, now: dict, shown: str) -> str:
    """A unified diff of two views' server-form lines (sorted, so order does not count)."""
    def lines(view: dict) -> bytes:
        return b"".join(sorted(line + b"\n" for line in view_bytes(view).split(b"\n") if line))

    return unified_diff(lines(loaded), lines(now), f"{shown} (loaded)", f"{shown} (now)", limit=200,
                        normalise_eol=False)


# -- the remote graph -----------------------------------------------------------------------------

ClientFactory = Callable[[Endpoint], Client]


class RemoteGraph:
    """The member's graph on a remote MCP server (see the module docstring).

    Args:
        endpoint: the server.
        client: makes a :class:`~memtui.core.mcp.client.Client` (tests give their own).

    Attributes:
        shown: the URL without user information or query (findings, messages, the audit log).
        semantic: True once a read found a ``semantic_search`` tool.
    """

    kind = "remote"

    def __init__(self, endpoint: Endpoint, client: ClientFactory = Client) -> None:
        self.endpoint = endpoint
        self.shown = endpoint.shown
        #: a remote read has no file bytes (its conflicts carry the server's lines)
        self.loaded_bytes: bytes | None = b""
        #: no workspace file changes when the remote graph is written
        self.files: tuple[str, ...] = ()
        #: what the graph is called beside its URL in a status line
        self.label = "remote"
        self._make = client
        self._client: Client | None = None
        self.semantic = False
        #: when the last :meth:`load` started (epoch seconds), and what it read (``"read_graph"``
        #: or the resource)
        self.read_at: float | None = None
        self.read_via = ""
        #: called with a step's summary before each tool call of a write (tests, progress)
        self.on_step: Callable[[int, Step], None] | None = None
        #: what this server's ``open_nodes`` includes (:data:`TOUCHING` or :data:`BETWEEN`), once
        #: an answer showed it; ``None`` until then (learned again for each connection's server)
        self.open_mode: str | None = None
        #: the last :meth:`load_records`: ``(graph, names, answer)``, the check's baseline
        self._partial: tuple[Graph, list[str], dict] | None = None

    # -- connection ------------------------------------------------------------------------------
    def client(self) -> Client:
        """The connection, opened on first use (kept for the next calls)."""
        if self._client is None:
            self._client = self._make(self.endpoint)
        return self._client

    def close(self) -> None:
        """End the session (legacy servers: ``DELETE``)."""
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None

    def _call(self, tool: str, arguments: dict, progress: Callable[[int], None] | None = None) -> Any:
        client = self.client()
        try:
            return client.call_tool(tool, arguments, progress=progress)
        except McpError:
            self.close()  # a broken connection is not reused
            raise

    # -- reading ---------------------------------------------------------------------------------
    def load(self, progress: Callable[[int], None] | None = None) -> Graph:
        """Read the whole graph: the reference server's graph resource (:data:`GRAPH_RESOURCE`)
        when the server lists it, else ``read_graph``.

        The resource holds the graph once, where ``read_graph`` answers it twice (as text and as
        ``structuredContent``); through a gateway whose cost grows faster than the answer
        (supergateway 4.0.0 re-splits its whole line buffer on every chunk) that is several times
        quicker (bench/remote_graph.py). A resource that cannot be read or is not a graph falls
        back to ``read_graph``. Sets :attr:`read_at` (when the read started, epoch seconds) and
        :attr:`read_via`.

        Args:
            progress: called with the bytes received so far.

        Raises:
            McpError: the server cannot be used (a sentence; exit 4).
        """
        client = self.client()
        try:
            client.require(*READ_TOOLS)
            self.semantic = "semantic_search" in client.tools()
            listed = GRAPH_RESOURCE in client.resources()
        except McpError:
            self.close()
            raise
        started = time.time()
        graph = None
        if listed:
            try:
                graph = self._read_resource(progress)
                self.read_via = f"resources/read {GRAPH_RESOURCE}"
            except McpServerError:
                graph = None
        if graph is None:
            answer = self._call("read_graph", {}, progress)
            with bulk():
                graph = read_graph_of(answer, self.shown)
            self.read_via = "read_graph"
        self.read_at = started
        return graph

    def _read_resource(self, progress: Callable[[int], None] | None) -> Graph:
        """The graph resource as a graph (checked; its identity is :func:`view_digest`'s, as a
        ``read_graph`` of the same state would have).

        Raises:
            McpServerError: the server failed to answer it, or its text is not a graph.
            McpError: the connection failed.
        """
        contents = self.client().read_resource(GRAPH_RESOURCE, progress)
        text = next((c.get("text") for c in contents if isinstance(c.get("text"), str)), None)
        if text is None:
            raise McpServerError(f"the graph resource of {self.shown} holds no text.")
        with bulk():  # the records are made here, from the text
            try:
                data = json.loads(text)
            except ValueError:
                raise McpServerError(f"the graph resource of {self.shown} is not JSON.") from None
            return read_graph_of(data, self.shown, f"resources/read {GRAPH_RESOURCE}")

    def open(self, names: Sequence[str]) -> dict:
        """``open_nodes(names)`` in parts that fit :data:`MAX_ARGUMENTS`; one view.

        Relations an answer repeats (an end in two parts) are counted once.
        """
        entities: list[dict] = []
        relations: Counter = Counter()
        first: dict[tuple, dict] = {}
        for part in _chunks(list(names), _size) or [[]]:
            answer = check_view(self._call("open_nodes", {"names": part}), "open_nodes")
            entities += answer["entities"]
            counts = Counter(_triple(r) for r in answer["relations"])
            for triple, count in counts.items():
                relations[triple] = max(relations[triple], count)
            for r in answer["relations"]:
                first.setdefault(_triple(r), r)
        seen: set[int] = set()
        unique = []
        for e in entities:  # an entity named twice in the list comes back once per part
            key = id(e)
            if key not in seen:
                seen.add(key)
                unique.append(e)
        view = {"entities": unique, "relations": [first[t] for t, n in relations.items() for _ in range(n)]}
        if self.open_mode is None and _one_ended(view):
            self.open_mode = TOUCHING  # only a server of that kind answers such a relation
        return view

    def load_records(self, names: Sequence[str], relations: bool = False) -> Graph | None:
        """The records of ``names`` (``open_nodes``), as a graph to edit without reading the whole
        graph: an edit then costs what it changes. :meth:`save` checks the same call again before
        writing (like with like).

        Args:
            names: every entity name the edit reads or writes.
            relations: the edit needs every relation of these entities, those leading outside
                the names included (a rename or merge recreates them): given only when the
                server's ``open_nodes`` is known to answer them (:data:`TOUCHING`), else ``None``.

        Returns:
            The graph (entities then relations, in the server's order), or ``None`` when it
            cannot serve this edit (read the whole graph with :meth:`load`).

        Raises:
            McpError: the server cannot be used.
        """
        client = self.client()
        try:
            client.require(*READ_TOOLS)
        except McpError:
            self.close()
            raise
        wanted = list(dict.fromkeys(names))
        answer = self.open(wanted)
        if relations and self.open_mode != TOUCHING:
            return None
        graph = graph_of(answer, self.shown)
        self._partial = (graph, wanted, answer)
        return graph

    def _same(self, was_view: dict, names: Sequence[str], now: dict, loose: set[str] | None = None) -> tuple[bool, dict]:
        """Whether ``now`` (``open_nodes(names)`` answered now) is what that call answers on
        ``was_view`` (what memtui read), for this server's kind of ``open_nodes``; and the view it
        was compared with (for the conflict's diff).

        A difference counts only when it is one under every kind the server may be: when only
        the relations leading outside ``names`` differ and the kind is not yet known, one more
        ``open_nodes`` of such a relation's two ends tells them apart (:meth:`_probe`), once.
        """
        modes = [self.open_mode] if self.open_mode else [TOUCHING, BETWEEN]
        loose = loose or set()
        first = None
        for mode in modes:
            was = subset(was_view, names, mode)
            first = first or was
            if _canonical(now, loose) == _canonical(was, loose):
                if mode == BETWEEN and self.open_mode is None:
                    touching = subset(was_view, names, TOUCHING)
                    if _canonical(touching, loose) != _canonical(was, loose):
                        verdict = self._probe(touching, now)
                        if verdict is False:
                            return False, touching
                return True, was
        return False, first if first is not None else subset(was_view, names)

    def _probe(self, touching: dict, now: dict) -> bool | None:
        """Tell the two kinds of ``open_nodes`` apart: ask for both ends of a relation memtui
        read that leads outside the names and that the answer left out. It comes back: the server
        answers only relations between the names asked (:data:`BETWEEN`, learned). It does not
        although both ends are entities: it is gone, an agent's change (``False``). ``None``:
        no relation could tell."""
        had = {_triple(r) for r in now["relations"]}
        for r in _one_ended(touching):
            if _triple(r) in had or r["from"] == r["to"]:
                continue
            answer = self.open([r["from"], r["to"]])
            found = {e["name"] for e in answer["entities"]}
            if r["from"] not in found or r["to"] not in found:
                continue  # an end is not an entity (now): this relation cannot tell
            if _triple(r) in {_triple(x) for x in answer["relations"]}:
                self.open_mode = BETWEEN
                return True
            return False
        return None

    def search(self, query: str, semantic: bool = False) -> Graph:
        """``search_nodes(query)`` (or ``semantic_search`` when asked and listed) as a graph.

        Raises:
            McpToolMissing: ``semantic`` and the server has no ``semantic_search``.
            McpError: other failures.
        """
        tool = "semantic_search" if semantic else "search_nodes"
        self.client().require(tool)
        return read_graph_of(self._call(tool, {"query": query}), self.shown, tool)

    # -- writing ---------------------------------------------------------------------------------
    def retried(self, session: Session, operation: Operation, client_id: str | None) -> AuditEntry | None:
        """The audit entry when ``client_id`` already recorded this very ``operation`` on this
        remote (:meth:`memtui.core.session.Session.earlier`), else ``None``; :meth:`save`
        applies the same rule.

        Raises:
            ClientIdConflict: the id was used for a different action, graph or operation.
        """
        return session.earlier(client_id, action_name(operation), self.shown, describe(operation))

    def save(self, loaded: Graph, operation: Operation, *, session: Session, client_id: str | None = None,
             provenance: Sequence = (), also_write: Sequence[tuple[str, bytes]] = ()) -> Saved:
        """Apply ``operation`` to the remote graph ``loaded`` was read from (see the module
        docstring: plan, lost-update check, journal, sequence, read-back).

        Args:
            loaded: the graph the user was looking at (from :meth:`load`).
            operation: the edit.
            session: the open :class:`~memtui.core.session.Session` (its store gets the journal,
                the audit entries and the provenance).
            client_id: the caller's id for this request: a retry returns the first result.
            provenance: :class:`~memtui.core.graph.provenance.Provenance` records to add.
            also_write: ``(workspace-relative path, bytes)`` of files written in the journal's
                first guarded write (copies kept under ``.memtui/backups/``).

        Returns:
            :class:`~memtui.core.graph.commit.Saved`; ``graph`` is the server's state after the
            write (its order), ``audit_entry`` the entry of the outcome.

        Raises:
            ReadOnlyError: the session may not write (nothing sent).
            ClientIdConflict: the id names another request (nothing sent).
            GraphEditError: the operation does not fit ``loaded``, or the server's tools cannot
                express it (nothing sent).
            GraphConflictError: an agent changed what the edit touches since ``loaded`` was read
                (``diff`` shows how; nothing sent); or, read back after the sequence, what memtui
                wrote is not there (another writer's overlapping write replaced it: the reference
                server rewrites its whole file with no lock), so it is not reported as saved.
            RemoteSequenceError: the sequence stopped half-way (recorded; see ``resume``).
            McpError: the server could not be used before anything was sent.
        """
        session.require_writable()
        action = action_name(operation)
        request = describe(operation)
        earlier = session.earlier(client_id, action, self.shown, request)
        if earlier is not None:
            summary = str(earlier.detail.get("summary") or "that change")
            record = _journal_of(session, earlier.detail.get("sequence"))
            if record is not None and record.get("state") != "done":
                raise RemoteSequenceError(
                    f"that request (client id {client_id!r}) was started on {earlier.time} and did not finish "
                    f"({record.get('applied', 0)} of {len(record.get('steps') or [])} steps applied); run "
                    f"`memtui graph resume` to finish it, or `memtui graph resume --undo`.", [], [])
            return Saved(loaded, Change(loaded, f"already done under this client id: {summary}", changed=False),
                         written=False, audit_entry=earlier, retried=True)
        change = operation.apply(loaded)
        if not change.changed:
            return Saved(loaded, change, written=False)
        before = view_of(loaded, extras=True)
        the_plan = plan(before, view_of(change.graph, extras=True))
        client = self.client()
        try:
            client.require(*READ_TOOLS, *{s.tool for s in the_plan.steps})
        except McpError:
            self.close()
            raise
        # The lost-update check: the server has no versions, so read again what the edit touches,
        # with the same call memtui read it with when it can (like with like).
        partial = self._partial if self._partial is not None and self._partial[0] is loaded else None
        check_names = partial[1] if partial is not None else the_plan.names
        if partial is not None and all(s.tool in ADDITIVE for s in the_plan.steps):
            # read just now by this same request (no person in between), and a plan that only
            # adds cannot overwrite what another writer made: the read-back is the check
            now = was = partial[2]
            same = True
        elif partial is not None:
            now, was = self.open(check_names), partial[2]
            same = _canonical(now, set()) == _canonical(was, set())
        else:
            now = self.open(check_names)
            same, was = self._same(before, check_names, now)
        if not same:
            raise GraphConflictError(
                f"the remote graph at {self.shown} changed since memtui read it (another writer changed "
                f"{', '.join(repr(n) for n in _changed_names(was, now)[:5]) or 'these records'}: the lines below "
                "marked - are what memtui read, + what the server holds now); nothing was sent. Reload, look at "
                "the change, and try again.", _view_diff(was, now, self.shown))
        the_plan.check = check_names
        notes = list(change.notes)
        if the_plan.reordered:
            notes.append("the server appends observations, so the edited one is now last on "
                         + ", ".join(repr(n) for n in the_plan.reordered[:3]))
        sequence = uuid.uuid4().hex
        summary = change.summary
        # First guarded write: the journal record and the request's audit entry, before any tool
        # call. The lock is released before the network is waited for (invariant 2).
        self._begin(session, sequence, action, request, client_id, summary, the_plan, was, operation,
                    also_write)
        self._run(session, sequence, the_plan.steps, 0, summary, before=before, names=check_names)
        back = self._read_back(the_plan)
        if back is not None and not back[1]:
            notes.append(back[0])
        elif back is not None:
            lost = _changed_names(subset(the_plan.expected, the_plan.check, self.open_mode or TOUCHING), back[1])
            self._finish(session, sequence, summary, len(the_plan.steps), len(the_plan.steps), notes=[back[0]],
                         operation=operation, provenance=provenance, phase="overwritten")
            raise GraphConflictError(
                f"{summary} was sent to {self.shown}, but reading it back shows the server holds something else "
                f"for {', '.join(repr(n) for n in lost[:5]) or 'these records'}: another writer wrote at the same "
                "time and one write replaced the other, so the change is NOT saved as memtui made it. Reload, look "
                "at the lines below (- what memtui wrote, + what the server holds), and make the change again if "
                "it is missing.", _view_diff(subset(the_plan.expected, the_plan.check, self.open_mode or TOUCHING),
                                             back[1], self.shown))
        # Second guarded write: the outcome, provenance following the edit, provenance records.
        undo: list = []
        entry = self._finish(session, sequence, summary, len(the_plan.steps), len(the_plan.steps), notes=notes,
                             operation=operation, provenance=provenance, undo=undo)
        new_graph = graph_of(the_plan.expected, self.shown)
        return Saved(new_graph, Change(new_graph, summary, notes=tuple(notes)), audit_entry=entry,
                     provenance_undo=tuple(undo))

    def _read_back(self, the_plan: Plan) -> tuple[str, dict] | None:
        """Read what was written again (the same call as the check): ``None`` when the server
        holds what memtui wrote; ``(sentence, {})`` for a note (it could not be read back, or
        another writer changed something beside the write); ``(sentence, what it holds)`` when
        the write is not there (lost: :meth:`save` raises a conflict)."""
        names = the_plan.check or the_plan.names
        try:
            back = self.open(names)
        except McpError as exc:
            return f"the change was sent but could not be read back ({exc}); reload to see whether it is there", {}
        same, _was = self._same(the_plan.expected, names, back, set(the_plan.reordered))
        if same:
            return None
        missing = _missing_effects(the_plan.before, the_plan.expected, back)
        if not missing:  # what memtui wrote is there; another writer changed something beside it
            return (f"another writer also changed "
                    f"{', '.join(repr(n) for n in _changed_names(subset(the_plan.expected, names), back)[:5])} "
                    "meanwhile; reload to see it", {})
        return (f"the server does not hold {', '.join(missing[:5])}", back)

    def _begin(self, session, sequence: str, action: str, request: dict, client_id: str | None, summary: str,
               the_plan: Plan, was: dict, operation: Operation, also_write: Sequence[tuple[str, bytes]] = ()):
        def record(tx) -> None:  # noqa: ANN001 - Tx
            for extra, data in also_write:
                tx.replace(extra, data, base=None)
            tx.table(TABLE).insert({
                "id": sequence, "remote": self.shown, "action": action, "summary": summary, "state": "running",
                "applied": 0, "steps": [s.to_json() for s in the_plan.steps], "before": was,
                "names": the_plan.names, "at": _now()})
            tx.hashes(_sha(was), _sha(subset(the_plan.expected, the_plan.names)))
            tx.detail.update({"remote": self.shown, "operation": describe(operation), "summary": summary,
                              "sequence": sequence, "steps": [s.summary for s in the_plan.steps],
                              "phase": "begun"})

        return session.write(action, self.shown, record, client_id=client_id, request=request)

    def _run(self, session, sequence: str, steps: list[Step], start: int, summary: str, *,
             before: dict | None = None, names: Sequence[str] = ()) -> int:
        """Send ``steps[start:]``; on a failure record how far it got and raise.

        Args:
            before: the state the steps start from, and ``names`` the records they touch: given,
                a step the server reports as failed (``isError``) is read back before it is
                believed (a server may write and then fail), and a sequence that provably applied
                nothing says so (no resume is offered).
        """
        done = start
        state = before
        for index in range(start, len(steps)):
            step = steps[index]
            if self.on_step is not None:
                self.on_step(index, step)
            after = simulate(state, step.tool, step.arguments) if state is not None else None
            try:
                self._call(step.tool, step.arguments)
            except (McpError, MemtuiError) as exc:
                verdict = self._landed(state, after, names) if state is not None and after is not None else None
                if verdict is True:  # the server wrote it and reported a failure: believe what it holds
                    state, done = after, index + 1
                    continue
                applied = [s.summary for s in steps[:done]]
                pending = [s.summary for s in steps[done:]]
                nothing = done == 0 and verdict is False
                self._finish(session, sequence, summary, done, len(steps), failure=str(exc),
                             phase="nothing applied" if nothing else "")
                if nothing:
                    raise RemoteSequenceError(
                        f"the change was not made on {self.shown} ({summary}: not applied): the server refused it "
                        "and, read back, holds "
                        f"what it held before, so nothing was applied. The server said: {exc} Fix the cause and "
                        "try again.", [], pending) from None
                first = "nothing was applied" if not done else f"applied {done} of {len(steps)} steps ({'; '.join(applied)})"
                raise RemoteSequenceError(
                    f"{summary} stopped half-way on {self.shown}: {first}; not applied: {'; '.join(pending)}. "
                    f"The server said: {exc} To finish it run `memtui graph resume`; to undo what was applied run "
                    "`memtui graph resume --undo` (both recorded in the audit log).", applied, pending) from None
            state = after
            done = index + 1
        return done

    def _landed(self, state: dict, after: dict, names: Sequence[str]) -> bool | None:
        """Whether a step the server reported as failed changed it: ``True`` (it holds the state
        after the step), ``False`` (the state before), ``None`` (neither, or unreadable)."""
        try:
            now = self.open(names)
        except McpError:
            return None
        if self._same(after, names, now)[0]:
            return True
        if self._same(state, names, now)[0]:
            return False
        return None

    def _finish(self, session, sequence: str, summary: str, applied: int, total: int, *, failure: str = "",
                notes: Sequence[str] = (), operation: Operation | None = None, provenance: Sequence = (),
                undo: list | None = None, phase: str = ""):
        """The guarded write after the network: the journal's outcome and its audit entry."""
        state = "done" if applied == total and not failure else "refused" if phase == "nothing applied" else "failed"

        def record(tx) -> None:  # noqa: ANN001 - Tx
            table = tx.table(TABLE)
            docs = [d for d in table.all() if d.get("id") == sequence]
            fields: dict = {"state": state, "applied": applied, "finished": _now()}
            if failure:
                fields["failure"] = failure
            if state == "done":  # a finished sequence keeps only its summary (the store stays small)
                fields.update({"steps": [], "before": {}, "names": []})
            if docs:
                table.update(fields, doc_ids=[d.doc_id for d in docs])
            if state == "done" and operation is not None:
                follow_edit(tx, operation, provenance, undo)
            tx.detail.update({"remote": self.shown, "summary": summary, "sequence": sequence,
                              "applied": applied, "steps": total, "state": phase or state, "notes": list(notes)})
            if failure:
                tx.detail["failure"] = failure

        done = session.write("graph.remote-sequence", self.shown, record)
        return done.entry

    # -- finishing an interrupted sequence ---------------------------------------------------------
    def pending(self, session) -> dict | None:
        """The latest sequence on this remote that did not finish (journal record), or ``None``."""
        records = [dict(d) for d in session.store.table(TABLE).all()
                   if d.get("remote") == self.shown and d.get("state") in ("running", "failed")]
        return max(records, key=lambda d: d.get("at", "")) if records else None

    def resume(self, session, undo: bool = False) -> tuple[str, int]:
        """Finish the latest interrupted sequence, or undo what it applied.

        Every tool of the reference server is safe to send twice (creations skip what exists,
        deletions of what is gone do nothing), so the steps not recorded as applied are sent
        again from the first one that may have failed. Undoing plans the way back from the
        state the applied steps made to the records as they were before (kept in the journal).

        Returns:
            ``(sentence, steps sent)``.

        Raises:
            GraphEditError: there is nothing to resume.
            RemoteSequenceError: it stopped again (recorded).
        """
        session.require_writable()
        record = self.pending(session)
        if record is None:
            raise GraphEditError(f"no interrupted write sequence is recorded for {self.shown}; nothing to do.")
        steps = [Step.from_json(s) for s in record.get("steps") or []]
        applied = int(record.get("applied") or 0)
        sequence = str(record["id"])
        if not undo:
            summary = f"finished: {record.get('summary', 'the interrupted change')}"
            self._run(session, sequence, steps, applied, summary)
            self._finish(session, sequence, summary, len(steps), len(steps), phase="finished")
            return summary, len(steps) - applied
        state = dict(record.get("before") or {"entities": [], "relations": []})
        for step in steps[:applied]:
            state = simulate(state, step.tool, step.arguments)
        if applied < len(steps):  # the failed step may have landed: look at the server
            state = self.open(record.get("names") or [])
        back = plan(state, record.get("before") or {"entities": [], "relations": []})
        summary = f"undid: {record.get('summary', 'the interrupted change')}"
        back_id = uuid.uuid4().hex

        def journal(tx) -> None:  # noqa: ANN001 - Tx
            tx.table(TABLE).insert({"id": back_id, "remote": self.shown, "action": "graph.resume-undo",
                                    "summary": summary, "state": "running", "applied": 0,
                                    "steps": [s.to_json() for s in back.steps], "before": state,
                                    "names": back.names, "at": _now()})
            docs = [d for d in tx.table(TABLE).all() if d.get("id") == sequence]
            tx.table(TABLE).update({"state": "undone"}, doc_ids=[d.doc_id for d in docs])
            tx.detail.update({"remote": self.shown, "summary": summary, "undoes": sequence,
                              "steps": [s.summary for s in back.steps], "phase": "begun"})

        session.write("graph.remote-undo", self.shown, journal)
        self._run(session, back_id, back.steps, 0, summary)
        self._finish(session, back_id, summary, len(back.steps), len(back.steps))
        return summary, len(back.steps)


def _journal_of(session, sequence: object) -> dict | None:
    if not isinstance(sequence, str):
        return None
    for doc in session.store.table(TABLE).all():
        if doc.get("id") == sequence:
            return dict(doc)
    return None


def _changed_names(a: dict, b: dict) -> list[str]:
    def by_name(view: dict) -> dict:
        out: dict[str, list] = {}
        for e in view["entities"]:
            out.setdefault(e["name"], []).append((e["entityType"], tuple(e["observations"])))
        for r in view["relations"]:
            for end in (r["from"], r["to"]):
                out.setdefault("\0rel:" + end, []).append(_triple(r))
        return out

    x, y = by_name(a), by_name(b)
    names = [k for k in sorted(set(x) | set(y)) if sorted(x.get(k, [])) != sorted(y.get(k, []))]
    return list(dict.fromkeys(k.removeprefix("\0rel:") for k in names))


def _missing_effects(before: dict, expected: dict, back: dict) -> list[str]:
    """What a write should have made and ``back`` (the server read back) does not show: added
    records or observations absent, deleted ones present. Empty: the write landed (whatever else
    another writer changed beside it)."""
    def entities(view: dict) -> dict[str, tuple[str, set]]:
        return {e["name"]: (e["entityType"], set(e["observations"])) for e in view["entities"]}

    was, want, have = entities(before), entities(expected), entities(back)
    missing: list[str] = []
    for name in set(was) | set(want):
        if was.get(name) == want.get(name):
            continue
        if name not in want:
            if name in have:
                missing.append(f"the deletion of {name!r}")
            continue
        kind, observations = want[name]
        if name not in have or have[name][0] != kind:
            missing.append(f"{name!r} as written")
            continue
        old = was.get(name, ("", set()))[1]
        if (observations - old) - have[name][1] or (old - observations) & have[name][1]:
            missing.append(f"the observations written to {name!r}")
    found = set(have)
    triples = {_triple(r) for r in back["relations"]}
    old_t = {_triple(r) for r in before["relations"]}
    new_t = {_triple(r) for r in expected["relations"]}
    for t in sorted(new_t - old_t):
        if t[0] in found and t[1] in found and t not in triples:
            missing.append(f"the relation {t[0]!r} {t[2]} {t[1]!r}")
    for t in sorted(old_t - new_t):
        if t in triples:
            missing.append(f"the removal of the relation {t[0]!r} {t[2]} {t[1]!r}")
    return missing


def _sha(view: dict) -> str:
    return hashlib.sha256(view_bytes(view)).hexdigest()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


__all__ = ["RemoteGraph", "RemoteSequenceError", "Plan", "Step", "plan", "simulate", "resolve", "memory_block",
           "graph_of", "view_of", "subset", "shown_url"]
