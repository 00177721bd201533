"""Bounds and odd answers of a remote graph server: an answer that trickles in forever or is huge
(real loopback HTTP servers doing just that), a server of the old SSE transport (the real
supergateway serving it), a tool that reports a failure after writing or before, an
``open_nodes`` that answers an error as plain text, and a backup whose remote cannot be read.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memtui.core import graph as g
from memtui.core.backup import commit as backup_commit, render as rd
from memtui.core import config as memtui_config
from memtui.core.graph import remote as rg
from memtui.core.mcp.client import Client, Endpoint
from memtui.core.mcp.errors import McpServerError, McpTimeout, McpUnreachable
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from tests.backup_helpers import isolate_git
from tests.conftest import run_cli
from tests.remote_servers import GATEWAY_ENTRY, MEMORY_ENTRY, NODE, _wait_for_port, free_port, need_gateway, \
    start_token_server


class _Answering:
    """A loopback MCP server (legacy era, JSON answers) whose ``tools/call`` answer is made by
    ``body(message_id)`` and sent by ``send(wfile, bytes)``: the test decides how it arrives."""

    def __init__(self, body, send, text: str | None = None) -> None:
        outer = self
        self.sent = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_DELETE(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                message = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                method = message.get("method")
                if method == "server/discover" or "id" not in message:
                    self.send_response(400 if method == "server/discover" else 202)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if method == "initialize":
                    result: dict = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "test", "version": "0"}}
                elif method == "tools/list":
                    result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in rg.READ_TOOLS]}
                else:
                    data = body(message["id"])
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    try:
                        send(self.wfile, data, outer)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    return
                data = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _graph_answer(message_id: int, text: str | None = None, pad: int = 0) -> bytes:
    graph = {"entities": [{"name": "x" * pad, "entityType": "t", "observations": []}], "relations": []}
    content = text if text is not None else json.dumps(graph)
    return json.dumps({"jsonrpc": "2.0", "id": message_id,
                       "result": {"content": [{"type": "text", "text": content}]}}).encode()


def _trickle(wfile, data: bytes, server: _Answering) -> None:
    for i in range(len(data)):  # a byte every 0.2 s: never silent long enough for the idle timeout
        wfile.write(data[i:i + 1])
        wfile.flush()
        server.sent += 1
        time.sleep(0.2)


def _all_at_once(wfile, data: bytes, server: _Answering) -> None:
    for i in range(0, len(data), 65536):
        wfile.write(data[i:i + 65536])
        server.sent += len(data[i:i + 65536])


def test_an_answer_that_trickles_in_is_given_up_at_the_deadline() -> None:
    server = _Answering(_graph_answer, _trickle)
    try:
        started = time.monotonic()
        with pytest.raises(McpTimeout) as caught, Client(Endpoint(server.url, timeout=5, deadline=1.5)) as client:
            client.call_tool("read_graph", {})
        took = time.monotonic() - started
    finally:
        server.stop()
    assert took < 4, took  # the idle timeout (5 s) never fired: the deadline did
    assert "after 1.5 s" in str(caught.value) and "[graph] deadline" in str(caught.value)


def test_an_answer_past_the_size_cap_is_refused_as_it_arrives() -> None:
    server = _Answering(lambda i: _graph_answer(i, pad=8_000_000), _all_at_once)
    try:
        with pytest.raises(McpServerError) as caught, Client(Endpoint(server.url, max_answer=1_000_000)) as client:
            client.call_tool("read_graph", {})
    finally:
        server.stop()
    assert "more than 1 MB" in str(caught.value) and "max_answer_mb" in str(caught.value)
    assert server.sent < 8_000_000  # memtui stopped reading: the server could not send it all


def test_the_deadline_and_the_cap_come_from_memtui_toml(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memtui.toml").write_text('[graph]\nremote = "http://127.0.0.1:9/mcp"\ndeadline = 7\nmax_answer_mb = 3\n',
                                    encoding="utf-8")
    endpoint = rg.resolve(Workspace.open(ws))
    assert endpoint is not None and endpoint.deadline == 7 and endpoint.max_answer == 3_000_000
    (ws / "memtui.toml").write_text('[graph]\nmax_answer_mb = 0\ndeadline = -1\n', encoding="utf-8")
    config, findings = memtui_config.load(ws / "memtui.toml")
    assert config.graph.max_answer_mb == 512 and config.graph.deadline == 600  # the defaults kept
    assert {"max_answer_mb", "deadline"} <= {w for f in findings for w in ("max_answer_mb", "deadline") if w in f.message}


def test_open_nodes_answering_an_error_as_text_is_refused_quoting_it() -> None:
    said = "Error: the graph file is locked by another process " + "x" * 2000
    server = _Answering(lambda i: _graph_answer(i, text=said), _all_at_once)
    try:
        remote = rg.RemoteGraph(Endpoint(server.url))
        with pytest.raises(McpServerError) as caught:
            remote.open(["Ada"])
        remote.close()
    finally:
        server.stop()
    message = str(caught.value)
    assert "the graph file is locked by another process" in message and "open_nodes" in message
    assert len(message) < 600  # quoted, bounded


def test_a_server_of_the_old_sse_transport_gets_a_sentence_naming_what_to_use(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess

    need_gateway()
    port = free_port()
    env = dict(os.environ, MEMORY_FILE_PATH=str(tmp_path / "m.jsonl"))
    proc = subprocess.Popen([str(NODE), str(GATEWAY_ENTRY), "--stdio", f"{NODE} {MEMORY_ENTRY}", "--outputTransport",
                             "sse", "--port", str(port), "--logLevel", "none"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_for_port(port, proc)
        with pytest.raises(McpUnreachable) as caught, Client(Endpoint(f"http://127.0.0.1:{port}/sse")) as client:
            client.tools()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    message = str(caught.value)
    assert "old MCP transport" in message and "streamable HTTP" in message and "/mcp" in message


@pytest.fixture
def failing_server(request, tmp_path: Path):
    server = start_token_server(tmp_path / "g.jsonl", token=None, fail=request.param)
    with Client(Endpoint(server.url)) as client:
        client.call_tool("create_entities", {"entities": [{"name": "Ada", "entityType": "person", "observations": []}]})
    yield server
    server.stop()


@pytest.mark.parametrize("failing_server", ["add_observations:after"], indirect=True)
def test_a_failure_reported_after_the_write_is_read_back_and_believed_only_then(tmp_path: Path,
                                                                                failing_server) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    remote = rg.RemoteGraph(Endpoint(failing_server.url))
    with Session.open(ws, purpose="test") as session:
        saved = remote.save(remote.load(), g.AddObservation("Ada", "kept"), session=session)
        assert saved.written and remote.pending(session) is None
    remote.close()
    with Client(Endpoint(failing_server.url)) as client:
        assert client.call_tool("read_graph", {})["entities"][0]["observations"] == ["kept"]


@pytest.mark.parametrize("failing_server", ["add_observations:before"], indirect=True)
def test_a_refused_write_that_applied_nothing_says_so_and_offers_no_resume(tmp_path: Path, failing_server,
                                                                           capsys) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    code, out, err = run_cli(capsys, "graph", "add-observation", "Ada", "refused", "-w", str(ws),
                             "--remote", failing_server.url)
    assert code == 4, (out, err)
    assert "nothing was applied" in err and "half-way" not in err and "resume" not in err
    assert "Error executing tool add_observations" in err  # the server's own words
    code, out, _ = run_cli(capsys, "graph", "resume", "-w", str(ws), "--remote", failing_server.url, "--yes")
    assert code == 0 and "nothing to do" in out


def test_a_backup_whose_remote_cannot_be_read_backs_up_the_rest_and_says_so(tmp_path: Path, monkeypatch,
                                                                            capsys) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "MEMORY.md").write_text("# notes\n", encoding="utf-8")
    server = _Answering(_graph_answer, _all_at_once)  # lists open_nodes and read_graph only: no read_graph is
    server.stop()  # ... moot: it is stopped, so the remote is unreachable
    (ws / "memtui.toml").write_text(f'[graph]\nremote = "{server.url}"\ntimeout = 2\n', encoding="utf-8")
    code, out, err = run_cli(capsys, "backup", "-w", str(ws), "--repo", str(tmp_path / "repo"))
    assert code == 1, (out, err)
    assert "backup NOT complete" in out and "is NOT in this backup" in out and "cannot reach" in out
    done = backup_commit.backup(Workspace.open(ws), tmp_path / "repo")
    tree = tmp_path / "repo" / done.path
    assert (tree / "files" / "memory" / "MEMORY.md").is_file() or any(tree.rglob("MEMORY.md"))
    assert not (tree / rd.REMOTE_GRAPH.decode()).exists()


def test_pull_dry_run_prints_its_diff_as_lines_in_full(tmp_path: Path, capsys) -> None:
    server = start_token_server(tmp_path / "g.jsonl", token=None)
    try:
        with Client(Endpoint(server.url)) as client:
            client.call_tool("create_entities", {"entities": [
                {"name": f"entity {i}", "entityType": "thing", "observations": [f"fact {i}\twith a tab"]}
                for i in range(150)]})
        ws = tmp_path / "ws"
        (ws / "memory").mkdir(parents=True)
        code, out, _ = run_cli(capsys, "graph", "pull", "-w", str(ws), "--remote", server.url, "--dry-run")
    finally:
        server.stop()
    assert code == 0
    added = [line for line in out.splitlines() if line.startswith('+{"type":"entity"')]
    assert len(added) == 150 and len(out) > 4096  # every line, not one line cut at 4,096 characters
    assert "\\t" in added[0] and "\t" not in out  # a control character inside a line is still shown escaped
