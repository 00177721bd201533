"""The graph's backend seam: the local file or the remote server, behind one face (issue 16).

:func:`open_graph` gives a :class:`LocalGraph` (``memory/graph.jsonl``, written by
:func:`memtui.core.graph.commit.commit`) or a :class:`~memtui.core.graph.remote.RemoteGraph`
(the member's graph over MCP, seed 002), chosen by :func:`memtui.core.graph.remote.resolve`.
Both read into a :class:`~memtui.core.graph.format.Graph` and save an
:class:`~memtui.core.graph.operations.Operation`, so the CLI and the Graph area browse, filter,
open, search, audit and curate the same way, with the same findings, on either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol, Sequence

from memtui.core.graph.commit import Saved, commit
from memtui.core.graph.format import Entity, Graph, load, loads
from memtui.core.graph.operations import Operation
from memtui.core.graph.remote import RemoteGraph, resolve


class GraphBackend(Protocol):  # pragma: no cover - typing only
    kind: str
    shown: str

    def load(self, progress: Callable[[int], None] | None = None) -> Graph: ...

    def save(self, loaded: Graph, operation: Operation, *, session, client_id: str | None = None,
             provenance: Sequence = ()) -> Saved: ...

    def search(self, query: str, semantic: bool = False) -> Graph: ...

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

    def save(self, loaded: Graph, operation: Operation, *, session, client_id: str | None = None,
             provenance: Sequence = (), also_write: Sequence[tuple[str, bytes]] = ()) -> Saved:
        """:func:`memtui.core.graph.commit.commit` on the file (same errors)."""
        return commit(self.path, loaded, operation, loaded_bytes=self.loaded_bytes, session=session,
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


def open_graph(ws, remote: str | None = None) -> "LocalGraph | RemoteGraph":  # noqa: ANN001 - Workspace
    """The workspace's graph: remote when ``remote``, ``[graph] remote`` or the ``config.json``
    memory block names one (``remote="local"`` forces the file), else the local file.

    Raises:
        ExternalError: the keyring failed (not for a missing token).
    """
    endpoint = resolve(ws, remote)
    if endpoint is None:
        return LocalGraph(ws)
    return RemoteGraph(endpoint)
