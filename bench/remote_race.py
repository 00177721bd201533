"""Whose race loses an observation when two writers curate one remote graph at once.

Usage::

    MEMTUI_MCP_SERVER_DIR=DIR PYTHONPATH=. python bench/remote_race.py [--writers 2] [--each 40]
        [--server server-memory-2026.8.31] [--gateway supergateway]

Two experiments on the same real server and gateway (tests/remote_servers.py), each with
``--writers`` threads adding ``--each`` observations to one entity:

- ``bare``: each writer a bare MCP client (its own session) sending ``add_observations`` and
  nothing else: no memtui at all. An observation missing at the end was lost by the server (its
  read-modify-write of the whole file, with no lock, across the server processes the gateway
  starts per session), since ``add_observations`` appends to what the server reads.
- ``memtui``: each writer :meth:`RemoteGraph.save` of an ``AddObservation`` (check, journal, call,
  read back). Counts what memtui reported saved, what it reported as a conflict (an agent wrote in
  between, or the read-back shows the write lost) and what is missing at the end; a missing
  observation that memtui reported as saved would be memtui's fault.

Not a test: the counts depend on timing. Prints one line per experiment.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
from pathlib import Path

from memtui.core import graph as g
from memtui.core.errors import MemtuiError
from memtui.core.graph.remote import RemoteGraph
from memtui.core.mcp.client import Client, Endpoint
from memtui.core.session import Session
from tests.remote_servers import start_pair


def _final(url: str) -> set[str]:
    with Client(Endpoint(url)) as client:
        answer = client.call_tool("open_nodes", {"names": ["Target"]})
    return set(answer["entities"][0]["observations"]) if answer["entities"] else set()


def _together(write, writers: int) -> None:  # noqa: ANN001 - a function of the writer's number
    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def bare(url: str, writers: int, each: int) -> tuple[int, int]:
    sent: list[str] = []

    def write(w: int) -> None:
        with Client(Endpoint(url)) as client:
            for i in range(each):
                text = f"bare {w}-{i}"
                client.call_tool("add_observations", {"observations": [{"entityName": "Target", "contents": [text]}]})
                sent.append(text)

    _together(write, writers)
    have = _final(url)
    return len(sent), len([s for s in sent if s not in have])


def through_memtui(url: str, ws: Path, writers: int, each: int) -> dict:
    saved: list[str] = []
    refused: list[str] = []

    def write(w: int) -> None:
        remote = RemoteGraph(Endpoint(url))
        mine = ws / f"writer-{w}"  # a workspace each, as two memtui processes of two members
        (mine / "memory").mkdir(parents=True, exist_ok=True)
        for i in range(each):
            text = f"memtui {w}-{i}"
            for _attempt in range(5):  # what a person does after a conflict: reload and try again
                try:
                    with Session.open(mine, purpose="race") as session:
                        remote.save(remote.load_records(["Target"]) or remote.load(), g.AddObservation("Target", text),
                                    session=session)
                    saved.append(text)
                    break
                except g.GraphConflictError:
                    refused.append(text)
                except MemtuiError:
                    refused.append(text)
        remote.close()

    _together(write, writers)
    have = _final(url)
    return {"saved": len(saved), "conflicts": len(refused),
            "saved but missing": len([s for s in saved if s not in have])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--each", type=int, default=40)
    parser.add_argument("--server", default="server-memory-2026.8.31")
    parser.add_argument("--gateway", default="supergateway")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-race-"))
    (folder / "memory.jsonl").write_text('{"type":"entity","name":"Target","entityType":"t","observations":[]}',
                                         encoding="utf-8")
    running = start_pair(args.server, args.gateway, folder / "memory.jsonl")
    try:
        sent, lost = bare(running.url, args.writers, args.each)
        print(f"bare clients ({args.server} behind {args.gateway}): {sent} observations sent, {lost} lost by the server")
        ws = folder / "ws"
        result = through_memtui(running.url, ws, args.writers, args.each)
        print(f"memtui ({args.server} behind {args.gateway}): {result}")
    finally:
        running.stop()


if __name__ == "__main__":
    main()
