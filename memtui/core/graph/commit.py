"""Writing a graph edit: the graph's share of the one guarded write (DESIGN.md §4 invariants 1–3, 7).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from memtui.core import atomic
from memtui.core.graph.format import DIFF_LIMIT, Entity, Graph, GraphConflictError, GraphEditError, Relation, loads
from memtui.core.graph.operations import Change, Operation, Restore


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
    from memtui.core.graph.provenance import ProvenanceBook

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
