"""The last read of a remote graph, kept in the user cache folder (a 50,000-entity graph
must show its first page in under 1 s).

A remote read of a big graph takes as long as the server and its gateway need to answer it (a
whole-graph answer is the only read the reference server has: bench/remote_graph.py). So after
every full read memtui keeps what it read here, and the next start shows it at once, labelled
with its time ("as of HH:MM"), while the live read runs; the live read then replaces it. Reads
may answer from it when asked (``memtui graph … --cached``); writes never do: they read the
remote and re-read what they change (``open_nodes``) as always.

Where: ``<user cache>/remote-graphs/<key>.json`` (:func:`memtui.paths.cache_dir`, never the
workspace), ``key`` a sha256 of the remote's shown URL (no user information, query or fragment:
:func:`memtui.core.mcp.client.shown_url`) and the workspace's root. The same proxy URL serves each
member the graph their token scopes, so the workspace is part of the key; the token itself is in
no byte of the file, its name or its header. The file is the user's alone (0600).

The file is three JSON lines: a header (remote, workspace, when the read started, what it read,
counts, the records' digest), the entity listing (``[name, entityType, observation count,
relation count]`` a row, the server's order), and the records (``{"entities", "relations"}`` as
the server answers them). The first page needs the first two only (:meth:`Snapshot.rows`):
about a tenth of the file, read without decoding a single observation.

**A restored backup's graph.** A restore leaves the backup's snapshot of the remote graph in the
workspace (``.memtui/remote-graph.jsonl``, with the backup's commit and date beside it:
:data:`memtui.core.backup.render.REMOTE_ABOUT`). When the user cache holds no read of the remote
newer than that backup (a fresh cache, a new machine, offline), :func:`find` makes the cache's
snapshot from it, labelled "from the backup of <date>" (:meth:`Snapshot.label`), so every read
that answers from a snapshot (``--cached``, the Graph area) answers from the backup.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from memtui.core.bulk import bulk
from memtui.core.graph.format import Graph, degrees
from memtui.core.graph.remote import read_graph_of, view_of

#: The first key of a snapshot's header, and its version (another one is ignored).
FORMAT = "memtui-remote-graph-snapshot"
VERSION = 1
#: The cache subfolder.
FOLDER = "remote-graphs"


@dataclass(frozen=True, slots=True)
class Row:
    """One entity of a snapshot's listing: what a page shows, without the observations.

    Attributes:
        name, entity_type: the entity's.
        observations: how many it has.
        relations: how many relations it is an end of (as :func:`~memtui.core.graph.format.degrees`).
        line: its record's position in the server's order (1-based), as a read graph numbers it.
    """

    name: str
    entity_type: str
    observations: int
    relations: int
    line: int


@dataclass(frozen=True)
class Snapshot:
    """A snapshot file found for a remote (see the module docstring).

    Attributes:
        path: the file.
        remote: the remote's shown URL.
        read_at: when the read it holds started (epoch seconds).
        read_via: what that read asked (``read_graph`` or the graph resource).
        entities, relations: counts.
        digest: the graph's ``source_sha256`` when it was read (its identity).
        backup: ``{"commit", "date"}`` when it is a restored backup's graph, else ``None``.
    """

    path: Path
    remote: str
    read_at: float
    read_via: str
    entities: int
    relations: int
    digest: str
    backup: dict | None = None

    def as_of(self) -> str:
        """``HH:MM`` of :attr:`read_at` (local time), with the date when it is not today."""
        return as_of(self.read_at)

    def label(self) -> str:
        """Where it comes from, for people: ``as of 10:04`` (memtui's last read), or ``from the
        backup of 2026-12-01 10:04 (commit 1a2b3c4)`` (a restored backup's graph)."""
        if self.backup is None:
            return f"as of {self.as_of()}"
        commit = str(self.backup.get("commit") or "")[:7]
        return (f"from the backup of {time.strftime('%Y-%m-%d %H:%M', time.localtime(self.read_at))}"
                + (f" (commit {commit})" if commit else ""))

    def to_json(self) -> dict:
        """``{"as_of", "read_at", "remote", "entities", "relations", "from": "read" | "backup",
        "backup": {"commit", "date"} | None}`` for ``--json`` (``cached``)."""
        return {"as_of": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.read_at)),
                "read_at": self.read_at, "remote": self.remote, "entities": self.entities,
                "relations": self.relations, "from": "read" if self.backup is None else "backup",
                "backup": self.backup}

    def rows(self) -> list[Row]:
        """The entity listing (server order), from the file's first two lines only.

        Raises:
            SnapshotError: the file changed or is damaged since it was found.
        """
        try:
            with open(self.path, "rb") as handle:
                handle.readline()
                listing = json.loads(handle.readline())
            return [Row(str(n), str(t), int(o), int(d), i) for i, (n, t, o, d) in enumerate(listing, 1)]
        except (OSError, ValueError, TypeError) as exc:
            raise SnapshotError(f"the snapshot {self.path} cannot be read ({exc}).") from None

    def graph(self) -> Graph:
        """The whole graph it holds, as a remote read makes it (named :attr:`remote`).

        Raises:
            SnapshotError: the file changed or is damaged since it was found.
        """
        from memtui.core.mcp.errors import McpError

        try:
            with open(self.path, "rb") as handle, bulk():
                handle.readline()
                handle.readline()
                return read_graph_of(json.loads(handle.readline()), self.remote, "snapshot", self.digest)
        except (OSError, ValueError, McpError) as exc:
            raise SnapshotError(f"the snapshot {self.path} cannot be read ({exc}).") from None


class SnapshotError(Exception):
    """A snapshot file could not be read (internal: callers fall back to a live read)."""


def as_of(when: float) -> str:
    """``HH:MM`` of epoch seconds ``when`` in local time, ``YYYY-MM-DD HH:MM`` when not today."""
    stamp = time.localtime(when)
    if time.strftime("%Y-%m-%d", stamp) == time.strftime("%Y-%m-%d"):
        return time.strftime("%H:%M", stamp)
    return time.strftime("%Y-%m-%d %H:%M", stamp)


def _file(root: Path, remote: str) -> Path:
    from memtui.paths import cache_dir

    key = hashlib.sha256(f"{remote}\0{os.fspath(root)}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return cache_dir() / FOLDER / f"{key}.json"


def find(root: Path, remote: str) -> Snapshot | None:
    """The snapshot of ``remote`` (a shown URL) for the workspace at ``root``, or ``None`` when
    there is none, it is of another version, or its header does not name them.

    A restored backup's graph in the workspace (see the module docstring) is made the snapshot
    when the cache holds none, or one read before that backup was made, or one made from another
    restored graph; a failure to write the cache leaves ``None``.
    """
    found = _cached(root, remote)
    restored = _restored(root)
    if restored is None:
        return found
    state, when, about = restored
    if found is not None and (found.read_at > when or (found.read_at == when and found.backup == about)):
        return found
    try:
        from memtui.core.graph.format import loads

        with bulk():
            graph = loads(state.read_bytes(), "backup")
    except (OSError, ValueError, RecursionError):
        return found
    if save(root, remote, graph, when, "backup", backup=about) is None:
        return found
    return _cached(root, remote)


def _cached(root: Path, remote: str) -> Snapshot | None:
    """The snapshot file of ``remote`` for ``root`` in the user cache, if it is one (see :func:`find`)."""
    path = _file(root, remote)
    try:
        with open(path, "rb") as handle:
            head = json.loads(handle.readline())
    except (OSError, ValueError):
        return None
    if not isinstance(head, dict) or head.get("format") != FORMAT or head.get("version") != VERSION or \
            head.get("remote") != remote or head.get("workspace") != os.fspath(root):
        return None
    backup = head.get("backup")
    try:
        return Snapshot(path, remote, float(head["read_at"]), str(head.get("read_via", "")), int(head["entities"]),
                        int(head["relations"]), str(head["digest"]), backup if isinstance(backup, dict) else None)
    except (KeyError, TypeError, ValueError):
        return None


def _restored(root: Path) -> tuple[Path, float, dict] | None:
    """The remote graph a restore left in the workspace at ``root``: ``(its file, when the backup
    was made (epoch seconds), {"commit", "date", "file"})``, or ``None`` when there is none. The
    time comes from the restore's note beside it, else the file's modification time; ``file``
    (size and modification time) tells one restored file from another without reading it."""
    from memtui.core.backup.render import REMOTE_ABOUT, REMOTE_STATE

    state = root / REMOTE_STATE
    try:
        if state.is_symlink() or not state.is_file():
            return None
        stat = state.stat()
    except OSError:
        return None
    when = stat.st_mtime
    about: dict = {"commit": None, "date": None, "file": f"{stat.st_size}:{stat.st_mtime_ns}"}
    try:
        noted = json.loads((root / REMOTE_ABOUT).read_bytes())
        if isinstance(noted, dict):
            about.update({k: str(noted[k]) for k in ("commit", "date") if isinstance(noted.get(k), str)})
    except (OSError, ValueError):
        pass
    if about["date"]:
        try:
            when = _dt.datetime.fromisoformat(about["date"]).timestamp()
        except ValueError:
            about["date"] = None
    return state, when, about


def save(root: Path, remote: str, graph: Graph, read_at: float, read_via: str = "",
         backup: dict | None = None) -> Path | None:
    """Keep ``graph`` (a remote read, :meth:`RemoteGraph.load`) as the snapshot of ``remote``
    for the workspace at ``root``, atomically (a reader sees the old file or the new one). A
    failure to write is ignored (``None``): the snapshot only saves time.

    Args:
        read_at: when the read started (epoch seconds).
        read_via: what the read asked (shown nowhere but the header).
        backup: ``{"commit", "date", …}`` when ``graph`` is a restored backup's (:func:`find`).
    """
    from memtui.core.atomic import write_bytes

    def encode(value: object) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")

    view = view_of(graph, extras=True)  # every field of every record (a server's createdAt, version...)
    degree = degrees(graph)
    listing = [[e.name, e.entity_type, len(e.observations), degree.get(e.name, 0)] for e in graph.entities]
    head = {"format": FORMAT, "version": VERSION, "remote": remote, "workspace": os.fspath(root),
            "read_at": read_at, "read_via": read_via, "entities": len(view["entities"]),
            "relations": len(view["relations"]), "digest": graph.source_sha256}
    if backup is not None:
        head["backup"] = backup
    data = b"\n".join([encode(head), encode(listing), encode(view)]) + b"\n"
    path = _file(root, remote)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_bytes(path, data, mode=0o600)
    except (OSError, ValueError):
        return None
    return path


def forget(root: Path, remote: str) -> bool:
    """Remove the snapshot of ``remote`` for ``root``; True when there was one."""
    try:
        _file(root, remote).unlink()
    except FileNotFoundError:
        return False
    return True


def page_of(rows: list[Row], keep: Callable[[str, str], bool], offset: int = 0, limit: int | None = None):
    """The page of ``rows`` (server order) that ``keep(name, entityType)`` keeps: a
    :class:`~memtui.core.paging.Page` of :class:`Row`, as
    :func:`~memtui.core.graph.format.entity_page` gives of a read graph.

    Raises:
        ValueError: ``offset`` below 0 or ``limit`` below 1.
    """
    from memtui.core.paging import Page

    return Page.of([r for r in rows if keep(r.name, r.entity_type)], offset, limit)


__all__ = ["Snapshot", "Row", "SnapshotError", "find", "save", "forget", "as_of", "page_of"]
