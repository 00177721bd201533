"""Figures of the remote graph (issue 16) on loopback: time to the first page of a big remote graph,
one edit's round trip, and the time and bytes of a backup that includes it.

Usage: ``python bench/remote_graph.py URL WORKSPACE`` (a server already serving the graph, e.g. B23's
50,000 entities behind supergateway; a workspace whose ``[graph] remote`` is URL). Prints one line
per figure. Not a test: numbers depend on the server (supergateway + server-memory re-reads and
re-writes the whole file on every tool call).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memtui.core import graph as g
from memtui.core.backup import commit as backup_commit
from memtui.core.graph.remote import RemoteGraph
from memtui.core.mcp.client import Endpoint
from memtui.core.session import Session
from memtui.core.workspace import Workspace


def main(url: str, workspace: str) -> None:
    memtui = str(Path(sys.executable).parent / "memtui")
    start = time.perf_counter()
    first = None
    proc = subprocess.Popen([memtui, "graph", "entities", "-w", workspace, "--remote", url, "--limit", "500"],
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None
    for _line in proc.stdout:
        if first is None:
            first = time.perf_counter() - start
    proc.wait()
    print(f"first page (memtui graph entities --remote --limit 500): {first:.2f} s, exit {proc.returncode}")
    remote = RemoteGraph(Endpoint(url, timeout=300))
    t0 = time.perf_counter()
    loaded = remote.load()
    print(f"read_graph of {len(loaded.entities):,} entities, {len(loaded.relations):,} relations: "
          f"{time.perf_counter() - t0:.2f} s")
    with Session.open(workspace, purpose="bench") as session:
        name = loaded.entities[len(loaded.entities) // 2].name
        t0 = time.perf_counter()
        saved = remote.save(loaded, g.AddObservation(name, f"bench {time.time()}"), session=session)
        print(f"one edit's round trip (add-observation on a loaded graph: plan, open_nodes check, journal, "
              f"tool call, read-back, journal): {time.perf_counter() - t0:.2f} s, written={saved.written}")
    remote.close()
    with tempfile.TemporaryDirectory() as repo:
        t0 = time.perf_counter()
        done = backup_commit.backup(Workspace.open(workspace), Path(repo) / "repo")
        elapsed = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in (Path(repo) / "repo" / done.path).rglob("*") if p.is_file())
        snapshot = (Path(repo) / "repo" / done.path / "remote" / "graph.jsonl").stat().st_size
        print(f"backup including the remote graph: {elapsed:.2f} s, backup tree {size:,} bytes "
              f"(remote/graph.jsonl {snapshot:,} bytes)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
