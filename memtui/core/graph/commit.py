"""Writing a graph edit: the graph's share of the one guarded write (DESIGN.md §4 invariants 1–3, 7).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from memtui.core.text import unified_diff
from memtui.core.graph.format import DIFF_LIMIT, Entity, Graph, GraphConflictError, GraphEditError, Line, Relation, loads
from memtui.core.graph.operations import Change, Operation
from memtui.core.graph.provenance import follow_edit

if TYPE_CHECKING:
    from memtui.core.auditlog import AuditEntry


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
    audit_entry: AuditEntry | None = None
    retried: bool = False
    provenance_undo: tuple = ()


def conflict_diff(before: bytes, after: bytes, name: str = "graph.jsonl") -> str:
    """A unified diff from ``before`` to ``after`` (line ends as they are), at most
    :data:`DIFF_LIMIT` lines (:func:`memtui.core.text.unified_diff`)."""
    return unified_diff(before, after, f"{name} (loaded)", f"{name} (on disk now)", limit=DIFF_LIMIT,
                        normalise_eol=False)


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
    for item in dataclasses.fields(operation):  # type: ignore[arg-type]  # every Operation is a dataclass
        value = getattr(operation, item.name)
        if isinstance(value, Graph) or item.name == "provenance_undo":
            continue
        if item.name == "record" and not value:  # no record chosen: the request as before records existed
            continue
        if isinstance(value, tuple) and value and isinstance(value[0], (Entity, Relation)):
            blob = json.dumps([r.to_json() for r in value], ensure_ascii=False, sort_keys=True)
            value = {"count": len(value), "sha256": hashlib.sha256(blob.encode("utf-8")).hexdigest()}
        elif isinstance(value, tuple) and value and isinstance(value[0], Line):  # the record lines of a pull
            value = {"count": len(value), "sha256": hashlib.sha256(b"\n".join(v.raw for v in value)).hexdigest()}
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
    """The audit entry when ``client_id`` already recorded this very operation on ``path``
    (:meth:`memtui.core.session.Session.earlier`), so a command can print the first result
    of a retry without asking again; :func:`commit` applies the same rule under the lock.

    Returns:
        The :class:`~memtui.core.auditlog.AuditEntry`, or ``None`` when the id is new or not given.

    Raises:
        ClientIdConflict: the id was used for a different action, file or operation.
        ConfinementError: ``path`` is outside the session's workspace.
    """
    shown = _shown_in(session, Path(path))
    return session.earlier(client_id, action_name(operation), shown, describe(operation))


def commit(path: str | os.PathLike[str], loaded: Graph, operation: Operation,
           loaded_bytes: bytes | None = None, *, session, client_id: str | None = None,
           provenance: Sequence = (), also_write: Sequence[tuple[str, bytes]] = ()) -> Saved:
    """Apply ``operation`` to ``loaded`` and write the result to ``path``: the graph's share of
    the one guarded write (:meth:`memtui.core.session.Session.write`; DESIGN.md §4 invariants
    1–3, 7).

    Under the writer lock, for this write alone:

    1. a ``client_id`` that already recorded this very operation returns the first result
       without writing again (seed 004);
    2. the file is read again and its sha256 compared with ``loaded.source_sha256``
       (invariant 3). If an agent changed the file meanwhile, ``operation`` is re-applied to
       the new content; if it no longer applies, nothing is written and
       :class:`GraphConflictError` carries a diff;
    3. the new bytes replace the file atomically, and in the same store write provenance
       records follow a rename, merge or observation edit (:meth:`ProvenanceBook.follow`; an
       undo puts them back), ``provenance`` records are added, and one audit-log entry
       ``graph.<verb>`` is appended (target the workspace-relative file, sha256 before and
       after, detail ``{"operation", "summary", "notes", "reapplied"}``).

    Args:
        path: the graph file, inside ``session.ws``.
        loaded: the graph the user was looking at.
        operation: the edit.
        loaded_bytes: the bytes ``loaded`` came from, for the conflict diff (optional).
        session: the open :class:`~memtui.core.session.Session` (keyword, required).
        client_id: the caller's id for this request (random when ``None``).
        provenance: :class:`~memtui.core.graph.provenance.Provenance` records of the
            observations this edit brings in (``memtui graph add-observation --session KEY``).
        also_write: ``(workspace-relative path, bytes)`` of new files written in the same
            change (``graph repair`` keeps the original or the rejected lines under
            ``.memtui/backups/``).

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
    session.require_writable()
    target = Path(path)
    shown = _shown_in(session, target)
    seen: Change | None = None  # the change on the graph the person saw (and confirmed)
    if session.earlier(client_id, action_name(operation), shown, describe(operation)) is None:
        seen = operation.apply(loaded)  # an edit that does not fit what the user saw is refused first
    undo: list = []

    def change_file(tx) -> tuple[Change, bool, Graph]:  # noqa: ANN001 - Tx
        current = tx.read(shown)
        current_sha = hashlib.sha256(current).hexdigest() if current is not None else ""
        base: Graph = loaded
        reapplied = False
        if current_sha != loaded.source_sha256:
            if current is None:
                raise GraphConflictError(
                    f"{loaded.shown} was deleted after memtui loaded it; nothing was written. "
                    "Reload to start from the current state.")
            base = loads(current, loaded.shown)
            reapplied = True
        try:
            change = operation.apply(base)
        except GraphEditError as exc:
            if not reapplied:
                raise
            diff = conflict_diff(loaded_bytes, current, target.name) if loaded_bytes is not None else ""
            raise GraphConflictError(
                f"{loaded.shown} changed on disk since memtui loaded it, and the edit no longer "
                f"applies ({exc}); nothing was written. Reload, look at the change, and try again.",
                diff) from exc
        if reapplied and seen is not None and (change.summary, change.notes) != (seen.summary, seen.notes):
            # on the file as it is now the edit does more (or less) than what was confirmed: an
            # agent's relation would go with a deleted entity that the question never named
            diff = conflict_diff(loaded_bytes, current, target.name) if loaded_bytes is not None else ""
            raise GraphConflictError(
                f"{loaded.shown} changed on disk since memtui loaded it, and on it the edit would do other "
                f"than what was confirmed: it {change.summary}, not only {seen.summary}; nothing was written. "
                "Reload, look at the change, and try again.", diff)
        if not change.changed:
            return change, reapplied, base
        # agents append lines to graph.jsonl without memtui's lock: what they append while
        # this write runs is carried into the new file, never lost
        tx.replace(shown, change.graph.file_bytes(), base=current_sha or None, carry_appends=True)
        for extra, data in also_write:
            tx.replace(extra, data, base=None)
        follow_edit(tx, operation, provenance, undo)
        tx.detail.update({"operation": describe(operation), "summary": change.summary,
                          "notes": list(change.notes), "reapplied": reapplied})
        return change, reapplied, base

    done = session.write(action_name(operation), shown, change_file, client_id=client_id,
                         request=describe(operation))
    if done.retried:
        entry = done.entry
        summary = str(entry.detail.get("summary") or "that change") if entry else "that change"
        return Saved(loaded, Change(loaded, f"already done under this client id: {summary}", changed=False),
                     written=False, audit_entry=entry, retried=True)
    change, reapplied, base = done.result
    if not change.changed:
        return Saved(base, change, reapplied=reapplied, written=False)
    installed = done.installed.get(shown)
    if installed is not None and installed != change.graph.file_bytes():  # others' appends were carried
        written = loads(installed, loaded.shown)
    else:
        data = change.graph.file_bytes()
        written = change.graph.replaced(change.graph.lines)
        written.final_newline = True
        written.source_sha256 = hashlib.sha256(data).hexdigest()
        written.exists = True
    return Saved(written, change, reapplied=reapplied, audit_entry=done.entry,
                 provenance_undo=tuple(undo))
