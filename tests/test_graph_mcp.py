"""Interoperability with the real MCP reference memory server, driven over stdio.

Needs ``@modelcontextprotocol/server-memory`` installed by ``.ci/install-mcp-server.sh DIR``
and ``MEMTUI_MCP_SERVER_DIR=DIR``; the tests install nothing and are skipped with the reason
otherwise. The server is launched with an absolute ``MEMORY_FILE_PATH`` (a relative one is
resolved against the package folder; corpus README "Reference server").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memtui.core import graph as g

SERVER_DIR = os.environ.get("MEMTUI_MCP_SERVER_DIR", "")
ENTRY = Path(SERVER_DIR) / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
NODE = shutil.which("node")

if os.environ.get("MEMTUI_REQUIRE_MCP") and not (NODE and ENTRY.is_file()):
    raise RuntimeError(f"MEMTUI_REQUIRE_MCP is set but the MCP memory server is not at {ENTRY}")
if not SERVER_DIR:
    pytest.skip("MEMTUI_MCP_SERVER_DIR is not set; run .ci/install-mcp-server.sh DIR and set it",
                allow_module_level=True)
if NODE is None:
    pytest.skip("Node.js is not installed, so the MCP memory server cannot run", allow_module_level=True)
if not ENTRY.is_file():
    pytest.skip(f"{ENTRY} is missing; run .ci/install-mcp-server.sh {SERVER_DIR}", allow_module_level=True)


class Server:
    """The reference server over newline-delimited JSON-RPC 2.0 on stdio."""

    def __init__(self, memory_file: Path) -> None:
        env = dict(os.environ, MEMORY_FILE_PATH=str(memory_file.resolve()))
        self.proc = subprocess.Popen([NODE, str(ENTRY)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0
        reply = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "memtui-tests", "version": "0"}})
        assert reply["result"]["serverInfo"]["name"] == "memory-server"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed its output"
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply

    def call(self, tool: str, **arguments) -> dict:
        """A tool's result; ``{"isError": True, "text": ...}`` when the tool failed."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})["result"]
        text = result["content"][0]["text"] if result.get("content") else ""
        if result.get("isError"):
            return {"isError": True, "text": text}
        return json.loads(text) if text.startswith(("{", "[")) else {"text": text}

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def server_on(tmp_path: Path):
    started: list[Server] = []

    def start(memory_file: Path) -> Server:
        server = Server(memory_file)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def _sorted_view(view: dict) -> dict:
    return {"entities": view["entities"], "relations": view["relations"]}


B17_NAMES = ["[/]", "--help", "-rf", "../../outside", "line one\nline two", "tab\there", "zero\u200bwidth",
             "rtl \u202eevil.md", "emoji 🧭", "quote \" and backslash \\", "Zoë", "A/B testing notes"]


def test_graph_memtui_wrote_is_read_by_the_server(tmp_path: Path, server_on, graph_session) -> None:
    target = tmp_path / "graph.jsonl"
    graph = g.load(target)
    ops: list[g.Operation] = []
    for i, name in enumerate(B17_NAMES):
        ops.append(g.CreateEntity(name, "test-name", (f"observation {i} [bold]x[/bold] \x01", "ünïcödé")))
    ops += [g.CreateRelation("[/]", "--help", "links [to]"), g.CreateRelation("Zoë", "-rf", "knows"),
            g.AddObservation("-rf", "second"), g.RenameEntity("A/B testing notes", "A/B notes"),
            g.CreateRelation("A/B notes", "[/]", "r")]
    for op in ops:
        graph = g.commit(target, graph, op, session=graph_session).graph
    server = server_on(target)
    assert server.call("read_graph") == g.server_view(g.load(target))
    found = server.call("search_nodes", query="outside")
    assert [e["name"] for e in found["entities"]] == ["../../outside"]


def test_graph_the_server_wrote_reads_identically_and_stays_readable_after_memtui_edits(
        tmp_path: Path, server_on, graph_session) -> None:
    target = tmp_path / "graph.jsonl"
    server = server_on(target)
    server.call("create_entities", entities=[
        {"name": n, "entityType": "test-name", "observations": [f"about {n}"]} for n in B17_NAMES])
    server.call("create_relations", relations=[
        {"from": "[/]", "to": "--help", "relationType": "links [to]"},
        {"from": "-rf", "to": "emoji 🧭", "relationType": "knows"},
        {"from": "Zoë", "to": "-rf", "relationType": "knows"}])
    server.call("add_observations", observations=[{"entityName": "Zoë", "contents": ["öffentlich", "x\ty"]}])
    written = target.read_bytes()
    assert not written.endswith(b"\n")  # the server's convention
    loaded = g.loads(written)
    assert g.server_view(loaded) == server.call("read_graph")
    assert loaded.to_bytes() == written and loaded.read_findings() == []
    # memtui edits the server's file: only the touched lines change, the server still reads it
    saved = g.commit(target, loaded, g.AddObservation("--help", "added by memtui"), session=graph_session)
    after = target.read_bytes()
    changed = [i for i, (a, b) in enumerate(zip(written.split(b"\n"), after.split(b"\n"), strict=False)) if a != b]
    # memtui's write ends with a line end (an agent's `echo >>` then starts a record of its own);
    # the server reads that file as well (checked below)
    assert len(changed) == 1 and after.endswith(b"\n") and not after.endswith(b"\n\n")
    graph = g.commit(target, saved.graph, g.DeleteEntity("-rf"), session=graph_session).graph
    graph = g.commit(target, graph, g.MergeEntities(("Zoë",), "emoji 🧭"), session=graph_session).graph
    view = server.call("read_graph")
    assert "isError" not in view
    assert view == g.server_view(g.load(target))
    assert "added by memtui" in next(e for e in view["entities"] if e["name"] == "--help")["observations"]
    assert not any(r["from"] == "-rf" or r["to"] == "-rf" for r in view["relations"])
    # the server writes again over memtui's file; memtui reads it identically
    server.call("add_observations", observations=[{"entityName": "[/]", "contents": ["from the server"]}])
    assert g.server_view(g.load(target)) == server.call("read_graph")


def test_odd_names_read_the_same_in_memtui_and_the_server(shared: Path, tmp_path: Path, server_on, graph_session) -> None:
    target = tmp_path / "graph.jsonl"
    target.write_bytes((shared / "bug-inputs" / "B17" / "memory.jsonl").read_bytes())
    server = server_on(target)
    assert server.call("read_graph") == g.server_view(g.load(target))
    g.commit(target, g.load(target), g.DeleteEntity("--help"), session=graph_session)
    g.commit(target, g.load(target), g.RenameEntity("[bold red]urgent[/bold red] fixes", "[/]x"), session=graph_session)
    assert server.call("read_graph") == g.server_view(g.load(target))


def test_server_fails_on_a_damaged_file_until_memtui_repairs_it(shared: Path, tmp_path: Path, server_on, graph_session) -> None:
    target = tmp_path / "graph.jsonl"
    original = (shared / "bug-inputs" / "B15" / "memory.jsonl").read_bytes()
    target.write_bytes(original)
    server = server_on(target)
    assert server.call("read_graph").get("isError")  # what graph-server-unreadable warns about
    assert target.read_bytes() == original
    loaded = g.load(target)
    assert any(f.code == "graph-server-unreadable" for f in loaded.read_findings())
    g.commit(target, loaded, g.Repair(), session=graph_session)
    view = server.call("read_graph")
    assert "isError" not in view
    assert view == g.server_view(g.load(target))
    assert {"harbor-cron", "dock-alpha", "dock-beta", "port-log"} <= {e["name"] for e in view["entities"]}
