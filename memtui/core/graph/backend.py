"""The graph's backend seam: the local file or the remote server, behind one face.

:func:`open_graph` gives a :class:`LocalGraph` (``memory/graph.jsonl``, written by
:func:`memtui.core.graph.commit.commit`) or a :class:`~memtui.core.graph.remote.RemoteGraph`
(the member's graph over MCP, seed 002), chosen by :func:`memtui.core.graph.remote.resolve`.
Both read into a :class:`~memtui.core.graph.format.Graph` and save an
:class:`~memtui.core.graph.operations.Operation`, so the CLI and the Graph area browse, filter,
open, search, audit and curate the same way, with the same findings, on either.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from memtui.core.graph.commit import Saved, commit, retry_of
from memtui.core.graph.format import Entity, Graph, load, loads
from memtui.core.graph.operations import Operation
from memtui.core.graph.remote import RemoteGraph, resolve

if TYPE_CHECKING:
    from memtui.core.auditlog import AuditEntry
    from memtui.core.findings import Finding
    from memtui.core.graph.snapshot import Snapshot
    from memtui.core.session import Session
    from memtui.core.tree.audit import ArticleCache


class GraphBackend(Protocol):  # pragma: no cover - typing only
    """What the CLI and the Graph area call, the same way for the local file and a remote graph."""

    #: ``"local"`` or ``"remote"``, for what is shown (``--json``'s ``remote``, the status line)
    kind: str
    #: where the graph is, for people (the workspace-relative file, or the URL without secrets)
    shown: str
    #: the bytes of the last read (the local file's, for a conflict's diff; ``b""`` for a remote)
    loaded_bytes: bytes | None
    #: workspace files a save rewrites (the search index is told of them)
    files: tuple[str, ...]
    #: what the graph is called beside :attr:`shown` in a status line (``"remote"``; ``""`` for the file)
    label: str

    def load(self, progress: Callable[[int], None] | None = None) -> Graph: ...

    def load_records(self, names: Sequence[str], relations: bool = False) -> Graph | None: ...

    def retried(self, session: Session, operation: Operation, client_id: str | None) -> AuditEntry | None: ...

    def save(self, loaded: Graph, operation: Operation, *, session: Session, client_id: str | None = None,
             provenance: Sequence = (), also_write: Sequence[tuple[str, bytes]] = ()) -> Saved: ...

    def search(self, query: str, semantic: bool = False) -> Graph: ...

    def kept(self, root: Path) -> Snapshot | None: ...

    def keep(self, root: Path, graph: Graph) -> None: ...

    def close(self) -> None: ...


def search_records(graph: Graph, query: str) -> Graph:
    """The reference server's ``search_nodes`` on a local graph: entities whose name, type or an
    observation contains ``query`` (case-insensitive), and the relations with an end among them."""
    needle = query.lower()
    hits: list[Entity] = [e for e in graph.entities if needle in e.name.lower() or needle in e.entity_type.lower()
                          or any(needle in o.lower() for o in e.observations)]
    names = {e.name for e in hits}
    relations = [r for r in graph.relations if r.source in names or r.target in names]
    from memtui.core.graph.format import entity_line, relation_line

    data = b"\n".join([entity_line(e) for e in hits] + [relation_line(r) for r in relations])
    return loads(data, graph.shown)


class LocalGraph:
    """``memory/graph.jsonl`` of a workspace.

    Attributes:
        path: the file (confined by the workspace).
        shown: its workspace-relative path.
        loaded_bytes: the bytes of the last :meth:`load` (for the conflict diff).
    """

    kind = "local"
    semantic = False

    def __init__(self, ws) -> None:  # noqa: ANN001 - Workspace
        self.ws = ws
        self.path = Path(ws.graph_file)
        self.shown = ws.shown(self.path)
        self.loaded_bytes: bytes | None = None
        self.files: tuple[str, ...] = (self.shown,)
        #: what the graph is called beside its place in a status line (nothing: the file)
        self.label = ""

    def load(self, progress: Callable[[int], None] | None = None) -> Graph:
        """Read the file (an absent one is an empty graph).

        Raises:
            GraphEditError: too large or a folder. OSError: unreadable. ConfinementError: the
            file is (or lies behind) a symbolic link leading outside the workspace.
        """
        self.ws.path(self.shown)  # confined: a graph.jsonl leading outside is not read (strace found it)
        graph = load(self.path, self.shown)
        self.loaded_bytes = self.path.read_bytes() if graph.exists else b""
        return graph

    def load_records(self, names: Sequence[str], relations: bool = False) -> Graph | None:
        """``None``: an edit of the file reads the whole file (it is the one to rewrite)."""
        return None

    def retried(self, session: Session, operation: Operation, client_id: str | None) -> AuditEntry | None:
        """The audit entry when ``client_id`` already recorded this very ``operation`` on the
        file (:func:`memtui.core.graph.commit.retry_of`, same errors), else ``None``."""
        return retry_of(session, self.path, operation, client_id)

    def kept(self, root: Path) -> Snapshot | None:
        """``None``: the file is read each time; no earlier read is kept."""
        return None

    def keep(self, root: Path, graph: Graph) -> None:
        """Nothing: the file is its own copy."""

    def save(self, loaded: Graph, operation: Operation, *, session: Session, client_id: str | None = None,
             provenance: Sequence = (), also_write: Sequence[tuple[str, bytes]] = ()) -> Saved:
        """:func:`memtui.core.graph.commit.commit` on the file (same errors); a conflict's diff
        starts from the bytes ``loaded`` was read from (those of the last :meth:`load`, or, when
        the file was read again since, ``loaded``'s own bytes: reading is lossless)."""
        import hashlib

        read = self.loaded_bytes
        if read is None or (hashlib.sha256(read).hexdigest() != loaded.source_sha256 and (read or loaded.exists)):
            read = loaded.to_bytes()
        return commit(self.path, loaded, operation, loaded_bytes=read, session=session,
                      client_id=client_id, provenance=provenance, also_write=also_write)

    def search(self, query: str, semantic: bool = False) -> Graph:
        """:func:`search_records` on the file (there is no semantic search locally).

        Raises:
            GraphEditError: ``semantic`` (only a remote server may offer it).
        """
        if semantic:
            from memtui.core.graph.format import GraphEditError

            raise GraphEditError("semantic search is offered only by a remote graph server that lists "
                                 "semantic_search; this workspace's graph is the local file.")
        self.ws.path(self.shown)
        return search_records(load(self.path, self.shown), query)

    def close(self) -> None:
        """Nothing to close."""


class RemoteBackend(RemoteGraph):
    """The member's remote graph as a backend: :class:`~memtui.core.graph.remote.RemoteGraph`
    and the last read kept in the user cache (:mod:`memtui.core.graph.snapshot`, a layer above
    the remote module)."""

    def kept(self, root: Path) -> Snapshot | None:
        """memtui's last read of this remote kept in the user cache (or a restored backup's
        graph), or ``None`` (:func:`memtui.core.graph.snapshot.find`)."""
        from memtui.core.graph import snapshot

        return snapshot.find(root, self.shown)

    def keep(self, root: Path, graph: Graph) -> None:
        """Keep ``graph``, just read live, as this remote's snapshot (a failure is ignored:
        :func:`memtui.core.graph.snapshot.save`)."""
        import time

        from memtui.core.graph import snapshot

        snapshot.save(root, self.shown, graph, self.read_at or time.time(), self.read_via)


def open_graph(ws, remote: str | None = None) -> LocalGraph | RemoteBackend:  # noqa: ANN001 - Workspace
    """The workspace's graph: remote when ``remote``, ``[graph] remote`` or the ``config.json``
    memory block names one (``remote="local"`` forces the file), else the local file.

    Raises:
        ExternalError: the keyring failed (not for a missing token).
    """
    endpoint = resolve(ws, remote)
    if endpoint is None:
        return LocalGraph(ws)
    return RemoteBackend(endpoint)


def workspace_findings(ws, offline: bool = False) -> list[Finding]:  # noqa: ANN001 - Workspace
    """The graph's findings for ``memtui audit`` (an entry of :data:`memtui.core.audit.CHECKS`):
    the local file's (:func:`memtui.core.graph.audit.local_findings`), then the remote graph's
    when one is configured (:func:`remote_findings`).

    Args:
        ws: the opened :class:`~memtui.core.workspace.Workspace`.
        offline: read nothing over the network (the remote graph's last read kept is audited).
    """
    from memtui.core.graph.audit import local_findings

    return local_findings(ws) + remote_findings(ws, offline)


def remote_findings(ws, offline: bool = False) -> list[Finding]:  # noqa: ANN001 - Workspace
    """The remote graph's findings, as a local graph's: :func:`memtui.core.graph.audit.audit` of
    it and the secrets in its records (``secret``, line = the record's position in the server's order), each placed
    at the remote's shown URL (no user information, query or token).

    Which read is audited:

    - online (the default): the remote is read now, within ``[graph] timeout`` (seconds without
      an answer byte), and the read is kept as its snapshot (as ``memtui graph`` keeps it);
    - ``offline``, or when that read fails (no route, refused token, timeout): the last read
      kept (:mod:`memtui.core.graph.snapshot`), with a ``graph-remote-cached`` note saying why
      and as of when; with no read kept, one ``graph-remote-unread`` warning instead.

    Returns:
        ``[]`` when no remote graph is configured (``[graph] remote``, the ``config.json``
        memory block). Never raises for the network or the keyring: they are findings.
    """

    from memtui.core.errors import ExternalError
    from memtui.core.findings import Finding
    from memtui.core.graph import snapshot

    try:
        endpoint = resolve(ws)
    except ExternalError as exc:  # the keyring failed: the URL is not known here either
        return [Finding.make("graph-remote-unread", "remote graph", f"could not be opened: {exc}",
                             "fix the keyring (or set MEMTUI_GRAPH_TOKEN) and run `memtui audit` again")]
    if endpoint is None:
        return []
    shown = endpoint.shown
    reason = "offline: this audit reads nothing over the network"
    if not offline:
        backend = RemoteBackend(endpoint)
        try:
            graph = backend.load()
        except (ExternalError, OSError) as exc:
            reason = f"it could not be read: {exc}"
        else:
            backend.keep(ws.root, graph)
            return _remote_graph_findings(ws, graph)
        finally:
            backend.close()
    kept = snapshot.find(ws.root, shown)
    last: Graph | None = None
    if kept is not None:
        try:
            last = kept.graph()
        except snapshot.SnapshotError:
            last = None
    if kept is None or last is None:
        return [Finding.make(
            "graph-remote-unread", shown, f"was not audited: {reason}, and no earlier read of it is kept",
            "run `memtui audit` (or Re-audit, Ctrl+R, in memtui) where the remote graph can be reached")]
    note = Finding.make(
        "graph-remote-cached", shown, f"was not read now ({reason}); its findings are from its last read, "
        f"as of {kept.as_of()}", "for its findings now, run `memtui audit` (or Re-audit, Ctrl+R, in memtui) where the "
        "remote graph can be reached")
    return [note, *_remote_graph_findings(ws, last)]


@lru_cache(maxsize=1)
def _remote_scan_cache() -> "type[ArticleCache]":
    """The cache of the remote graphs' secret findings, keyed by (size, digest of the read), in a
    folder of its own (each audit check's cache keeps only the entries it met)."""
    from memtui.core.tree.audit import ArticleCache as Base

    class RemoteScanCache(Base):
        FOLDER = "remote-scan"

    return RemoteScanCache


def _remote_graph_findings(ws, graph: Graph) -> list[Finding]:  # noqa: ANN001 - Workspace
    """:func:`~memtui.core.graph.audit.audit` of a remote ``graph`` and the secrets in its
    records (cached by content: a re-audit of an unchanged remote graph scans nothing again)."""
    from memtui.core import scan
    from memtui.core.graph.audit import audit
    from memtui.core.graph.format import server_view
    from memtui.core.graph.remote import view_bytes
    from memtui.core.tree.audit import ArticleFacts

    data = view_bytes(server_view(graph))
    stamp = (len(data), int(graph.source_sha256[:12] or "0", 16))
    cache = _remote_scan_cache().load(ws)
    facts = cache.get(graph.shown, stamp)
    if facts is None:
        facts = ArticleFacts(scan.secret_findings(data.decode("utf-8", "surrogatepass"), graph.shown), None, "")
        cache.put(graph.shown, stamp, facts)
        cache.save(ws)
    return audit(graph) + list(facts.findings)
