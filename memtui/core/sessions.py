"""Session histories: ``sessions/durable/<session-key>.jsonl`` (seed 002).

Seed 002: "the complete history is preserved ... in workspace/sessions/durable/<session-key>.jsonl,
an append-only file that only ever grows". memtui reads a history leniently (a line that is not
one JSON object is a finding and is kept), shows it as **turns** (role, text, tool calls and
results), and checks that it only grew:

- **What memtui last saw** of each history is a store record (table :data:`T_SEEN`): its length in
  bytes and lines, its SHA-256, and a short hash per line (so a rewrite names its first changed
  line). It is written by :func:`record` through :meth:`~memtui.core.session.Session.write`
  (an audit entry ``sessions.seen``) at each ``memtui backup`` and when asked (``memtui sessions
  check --record``, ``r`` in the Sessions area) — never on opening a workspace, which writes
  nothing but the search index and the lock (DESIGN.md §2).
- A history that is shorter than that record, or whose first recorded bytes changed, is a
  ``session-rewritten`` error naming the first changed line; ``memtui backup`` refuses to commit
  it until the operator accepts the new content (``--accept-rewrite KEY``, an audit entry
  ``sessions.accept-rewrite`` with the old length and hash).
- "Never claim a save you did not make" (seed 002, MEMORY_ROUTING.md): a tool result of a graph
  write (``mcp_memory_create_entities``, ``add_observations``, …) naming an entity the graph does
  not hold is a ``session-claim-unbacked`` warning on that turn.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from memtui.core import jsonio
from memtui.core.errors import ConfinementError, MemtuiError
from memtui.core.files import is_inside
from memtui.core.findings import Finding
from memtui.core.workspace import Workspace

#: The histories' folder, relative to the workspace (seed 002).
FOLDER = "sessions/durable"
#: The store table of what memtui last saw of each history.
T_SEEN = "sessions_seen"
_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
#: Graph tools that write (seed 002 lists them with the ``mcp_memory_`` prefix).
GRAPH_WRITES = ("create_entities", "add_observations", "create_relations")
_LINE_HASH = 4  # bytes of BLAKE2b per line: names the first changed line, 4 bytes a line in the store


@dataclass(slots=True)
class ToolCall:
    """A tool call or a tool result inside a turn: ``name`` (may be ``""``), ``text`` (its
    arguments or result as written)."""

    name: str
    text: str
    result: bool = False


@dataclass(slots=True)
class Turn:
    """One line of a history, read as a turn.

    Attributes:
        line: 1-based line in the file.
        role: ``user``, ``assistant``, ``tool``, ``system`` or what the line says (``?`` if none).
        text: the message text (parts joined), ``""`` when there is none.
        time: the line's ``ts``/``timestamp``, if any.
        tools: the tool calls and results it holds.
        raw: the JSON object as parsed (``None`` for a malformed line).
        source: the line as written (text, for a malformed one).
    """

    line: int
    role: str
    text: str
    time: str | None = None
    tools: list[ToolCall] = field(default_factory=list)
    raw: dict[str, Any] | None = None
    source: str = ""


@dataclass(slots=True)
class History:
    """One session history.

    Attributes:
        key: the session key (file name without ``.jsonl``).
        path: workspace-relative path.
        size: bytes. turns: the lines read as turns. findings: malformed lines.
    """

    key: str
    path: str
    size: int
    turns: list[Turn]
    findings: list[Finding]

    @property
    def first(self) -> str | None:
        """The first turn's time, if any."""
        return next((t.time for t in self.turns if t.time), None)

    @property
    def last(self) -> str | None:
        """The last turn's time, if any."""
        return next((t.time for t in reversed(self.turns) if t.time), None)

    def summary(self) -> dict[str, Any]:
        """``{"key", "path", "turns", "bytes", "first", "last", "problems"}`` (JSON-ready)."""
        return {"key": self.key, "path": self.path, "turns": len(self.turns), "bytes": self.size,
                "first": self.first, "last": self.last, "problems": len(self.findings)}


def folder(ws: Workspace) -> Path:
    """``<workspace>/sessions/durable``."""
    return ws.root / FOLDER


def path_of(ws: Workspace, key: str) -> Path:
    """The file of history ``key``.

    Raises:
        MemtuiError: ``key`` is not a plain session key (it could lead outside the folder).
    """
    if not _KEY.fullmatch(key) or ".." in key:
        raise MemtuiError(f"{key!r} is not a session key (letters, digits, '.', '_', '-'); "
                          "`memtui sessions list` shows the keys.")
    return folder(ws) / f"{key}.jsonl"


def folder_problem(ws: Workspace) -> Finding | None:
    """The ``symlink-outside`` finding when the histories' folder (or ``sessions/``) is a
    symbolic link leading outside the workspace, whose files memtui then never reads; else
    ``None`` (:meth:`Workspace.linked_outside`)."""
    return ws.linked_outside(folder(ws))


def keys(ws: Workspace) -> list[str]:
    """The session keys of the workspace's histories, sorted (symbolic links left out; none
    when the folder leads outside the workspace, :func:`folder_problem`)."""
    base = folder(ws)
    if folder_problem(ws) is not None:
        return []
    try:
        with os.scandir(base) as it:
            names = [e.name for e in it if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False)]
    except OSError:
        return []
    return sorted(n[:-6] for n in names if _KEY.fullmatch(n[:-6]))


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return ""


_TOOL_TEXT = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\((.*)$", re.DOTALL)


def turn_of(doc: dict[str, Any], line: int, source: str) -> Turn:
    """Read one history record as a turn. Understands ``{"ts", "role", "content"}`` (the
    sample and picoclaw), a nested ``message`` object, OpenAI-style ``tool_calls`` and
    ``content`` part lists; anything else keeps its raw JSON."""
    nested = doc.get("message")
    message: dict[str, Any] = nested if isinstance(nested, dict) else doc
    role = str(message.get("role") or doc.get("type") or "?")
    text = _text_of(message.get("content"))
    time = doc.get("ts") or doc.get("timestamp") or doc.get("time")
    turn = Turn(line, role, text, str(time) if time is not None else None, raw=doc, source=source)
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            inner = call.get("function")
            function: dict[str, Any] = inner if isinstance(inner, dict) else call
            arguments = function.get("arguments", "")
            turn.tools.append(ToolCall(str(function.get("name") or ""),
                                       arguments if isinstance(arguments, str) else json.dumps(arguments)))
    if role == "tool":
        name = str(message.get("name") or "")
        match = _TOOL_TEXT.match(text) if not name else None
        if match:
            name = match.group(1)
        turn.tools.append(ToolCall(name, text, result=True))
    return turn


def read(ws: Workspace, key: str, limit: int | None = None) -> History:
    """Read history ``key`` (never raises for its content).

    Args:
        limit: the largest number of bytes read (default: ``[limits] max_file_bytes``).

    Raises:
        MemtuiError: bad key, or no such history.
    """
    path = path_of(ws, key)
    shown = ws.shown(path)
    problem = folder_problem(ws)
    if problem is not None or not is_inside(ws.root, path):
        raise ConfinementError(f"{problem.path if problem else shown} leads outside the workspace; "
                               "memtui reads no session history through it.")
    if not path.is_file():
        raise MemtuiError(f"there is no session history {shown}; `memtui sessions list` shows them.")
    data = path.read_bytes()
    return parse(key, shown, data[: (limit or ws.config.max_file_bytes)])


def parse(key: str, shown: str, data: bytes) -> History:
    """A :class:`History` of the bytes ``data`` of the file ``shown``."""
    turns: list[Turn] = []
    findings: list[Finding] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        source = raw.decode("utf-8", "replace")
        try:
            doc = jsonio.loads(raw)
        except ValueError as exc:
            doc = None
            problem = f"is not JSON ({str(exc).split(':')[0]})"
        else:
            problem = "" if isinstance(doc, dict) else "is not one JSON object"
        if problem or doc is None:
            findings.append(Finding.make(
                "session-line-malformed", shown, f"line {number} {problem}; kept as written",
                "leave it: the history is append-only; the agent's harness wrote it this way", line=number))
            turns.append(Turn(number, "?", source, source=source))
            continue
        turns.append(turn_of(doc, number, source))
    return History(key, shown, len(data), turns, findings)


def histories(ws: Workspace) -> list[History]:
    """Every history of the workspace, read (for ``memtui sessions list`` and the area)."""
    out = []
    for key in keys(ws):
        try:
            out.append(read(ws, key))
        except (MemtuiError, OSError):
            continue
    return out


# -- what memtui last saw --------------------------------------------------------------------------

def _line_hashes(data: bytes) -> list[bytes]:
    return [hashlib.blake2b(line, digest_size=_LINE_HASH).digest() for line in data.split(b"\n")]


def seen_record(key: str, data: bytes) -> dict[str, Any]:
    """The store record of what memtui saw of history ``key`` (its bytes ``data``)."""
    return {"key": key, "bytes": len(data), "lines": data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1),
            "sha256": hashlib.sha256(data).hexdigest(),
            "line_hashes": base64.b64encode(b"".join(_line_hashes(data))).decode("ascii")}


def rewrite(record: dict[str, Any], data: bytes) -> tuple[int, str] | None:
    """How ``data`` breaks append-only against ``record``: ``(first changed line, what
    happened)``, or ``None`` when ``data`` starts with exactly what was seen."""
    seen = int(record.get("bytes", 0))
    if len(data) >= seen and hashlib.sha256(data[:seen]).hexdigest() == record.get("sha256"):
        return None
    try:
        old = base64.b64decode(record.get("line_hashes", ""))
    except ValueError:
        old = b""
    old_hashes = [old[i:i + _LINE_HASH] for i in range(0, len(old), _LINE_HASH)]
    new_hashes = _line_hashes(data)
    first = next((i for i, (a, b) in enumerate(zip(old_hashes, new_hashes, strict=False)) if a != b),
                 min(len(old_hashes), len(new_hashes)))
    # the last seen line may have been incomplete and grown: only a change before it counts
    what = "shrank" if len(data) < seen else "was rewritten"
    return first + 1, what


def last_seen(store: Any) -> dict[str, dict[str, Any]]:
    """``{key: record}`` of :data:`T_SEEN` in ``store`` (``{}`` when none)."""
    if store is None or T_SEEN not in store.tables():
        return {}
    return {d["key"]: dict(d) for d in store.table(T_SEEN).all() if isinstance(d.get("key"), str)}


def rewrites(ws: Workspace, store: Any) -> list[Finding]:
    """``session-rewritten`` errors for histories that shrank or changed since :func:`record`."""
    out: list[Finding] = []
    if folder_problem(ws) is not None:  # read nothing through a link out (the link is the finding)
        return out
    for key, seen in sorted(last_seen(store).items()):
        try:
            path = path_of(ws, key)
        except MemtuiError:
            continue
        shown = ws.shown(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            out.append(Finding.make(
                "session-rewritten", shown, f"the history {key} is gone; memtui last saw {seen.get('lines')} lines "
                f"({seen.get('bytes')} bytes)", "restore it from the backup (`memtui restore`), or accept its "
                f"removal: `memtui backup --accept-rewrite {key}`"))
            continue
        except OSError:
            continue
        broken = rewrite(seen, data)
        if broken:
            line, what = broken
            out.append(Finding.make(
                "session-rewritten", shown,
                f"the history {what} since memtui last saw it ({seen.get('lines')} lines, {seen.get('bytes')} bytes): "
                f"line {line} is the first that differs; a history only ever grows",
                f"restore it from the backup, or accept the new content: `memtui backup --accept-rewrite {key}`",
                line=line))
    return out


def record(session: Any, accept: Iterable[str] = (), only: Iterable[str] | None = None) -> Any:
    """Record what memtui sees of every history now (one :meth:`Session.write`, action
    ``sessions.seen``; nothing is written when nothing changed).

    Args:
        session: a writable :class:`~memtui.core.session.Session`.
        accept: keys whose rewrite the operator accepts (``--accept-rewrite``): recorded anew, the
            old length and hash kept in the audit entry.
        only: record these keys only (default: all).

    Returns:
        The :class:`~memtui.core.session.Written` of the write.

    Raises:
        RefusedError: a history was rewritten and its key is not in ``accept`` (nothing is recorded).
    """
    from tinydb import Query

    from memtui.core.errors import RefusedError

    ws = session.ws
    accepted = set(accept)
    wanted = set(only) if only is not None else None

    def change(tx: Any) -> dict[str, Any]:
        table = tx.table(T_SEEN)
        seen = {d["key"]: d for d in table.all() if isinstance(d.get("key"), str)}
        done: dict[str, Any] = {"recorded": [], "accepted": []}
        refused = []
        for key in keys(ws):
            if wanted is not None and key not in wanted:
                continue
            data = path_of(ws, key).read_bytes()
            old = seen.get(key)
            if old is not None and old.get("sha256") == hashlib.sha256(data).hexdigest():
                continue
            if old is not None and rewrite(old, data):
                if key not in accepted:
                    refused.append(key)
                    continue
                done["accepted"].append({"key": key, "bytes": old.get("bytes"), "sha256": old.get("sha256"),
                                         "first_changed_line": rewrite(old, data)[0]})  # type: ignore[index]
            fresh = seen_record(key, data)
            if old is None:
                table.insert(fresh)
            else:
                table.update(fresh, Query().key == key)
            done["recorded"].append(key)
        for key in accepted - set(keys(ws)):  # an accepted removal
            if key in seen:
                table.remove(Query().key == key)
                done["accepted"].append({"key": key, "removed": True})
        if refused:
            raise RefusedError(
                f"session histories were rewritten since memtui last saw them: {', '.join(refused)}; nothing "
                "was recorded. Look at them (`memtui sessions check`); accept the new content with "
                "--accept-rewrite KEY.")
        tx.detail.update(done)
        return done

    action = "sessions.accept-rewrite" if accepted else "sessions.seen"
    return session.write(action, FOLDER, change, request={"accept": sorted(accepted), "only": sorted(wanted or [])})


# -- claims -----------------------------------------------------------------------------------------

_NAME = re.compile(r'"(?:name|entityName)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def claimed_entities(turn: Turn) -> list[str]:
    """Entity names a turn's graph-write tool result says were written (``[]`` if none)."""
    names: list[str] = []
    for tool in turn.tools:
        if not tool.result and turn.role != "tool":
            continue
        name = tool.name.rsplit(".", 1)[-1]
        if not any(name.endswith(w) for w in GRAPH_WRITES) and not any(w in tool.text[:200] for w in GRAPH_WRITES):
            continue
        if re.search(r"\b(error|failed|isError\"\s*:\s*true)\b", tool.text, re.IGNORECASE):
            continue
        for raw in _NAME.findall(tool.text.replace('\\"', '"')):
            try:
                value = json.loads(f'"{raw}"')
            except ValueError:
                value = raw
            if value and value not in names:
                names.append(value)
    return names


def claim_findings(ws: Workspace, history: History, entities: set[str] | None) -> list[Finding]:
    """``session-claim-unbacked`` warnings: a turn's graph write names an entity ``entities``
    (the graph's names; ``None`` when there is no graph) lacks."""
    out: list[Finding] = []
    for turn in history.turns:
        names = claimed_entities(turn)
        missing = [n for n in names if entities is None or n not in entities]
        if missing:
            out.append(Finding.make(
                "session-claim-unbacked", history.path,
                f"turn {turn.line} says the graph got {', '.join(repr(n) for n in missing[:5])}, but the graph "
                "has no such entity: an agent never claims a save it did not make",
                "check the graph (it may have been renamed or deleted since), or tell the member the save did not happen",
                line=turn.line))
    return out


def audit_findings(ws: Workspace) -> list[Finding]:
    """Session histories' findings for ``memtui audit`` (an entry of ``core.audit.CHECKS``):
    malformed lines, rewrites against the store's record, unbacked graph-write claims."""
    from memtui.core.store import Store

    found: list[Finding] = []
    problem = folder_problem(ws)
    if problem is not None:
        found.append(problem)
    all_keys = keys(ws)
    if not all_keys:
        store = Store.open(ws, read_only=True)
        return found + (rewrites(ws, store) if not store.damaged else [])
    entities: set[str] | None = None
    try:
        from memtui.core import graph as g

        if ws.graph_file.is_file() and is_inside(ws.root, ws.graph_file):  # never through a link out
            entities = {e.name for e in g.load(ws.graph_file).entities}
    except Exception:  # noqa: BLE001 - the graph's own check reports a bad graph
        entities = None
    for key in all_keys:
        try:
            history = read(ws, key)
        except (MemtuiError, OSError):
            continue
        found.extend(history.findings)
        found.extend(claim_findings(ws, history, entities))
    store = Store.open(ws, read_only=True)
    if not store.damaged:
        found.extend(rewrites(ws, store))
    return found


def citing(store: Any, key: str, line: int | None = None) -> list[dict[str, Any]]:
    """Graph facts and proposals that cite history ``key`` (at ``line`` when given):
    ``[{"kind": "observation"|"proposal", ...}]``."""
    out: list[dict[str, Any]] = []
    if store is None:
        return out
    if "provenance" in store.tables():
        for doc in store.table("provenance").all():
            if doc.get("session") == key and (line is None or doc.get("line") in (None, line)):
                out.append({"kind": "observation", "entity": doc.get("entity"), "observation": doc.get("observation"),
                            "line": doc.get("line"), "at": doc.get("at")})
    if "versions" in store.tables():
        for doc in store.table("versions").all():
            prov = doc.get("provenance") or {}
            text = json.dumps(prov, ensure_ascii=False)
            if key in text:
                out.append({"kind": "proposal", "version": doc.get("id"), "article": doc.get("article"),
                            "state": doc.get("state")})
    return out
