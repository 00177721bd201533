"""Real MCP servers for the remote-graph tests, started by the tests on loopback ports.

- :func:`start_gateway`: the real ``@modelcontextprotocol/server-memory`` (npm) served over
  streamable HTTP by the real ``supergateway`` (npm), stateful (sessions), as LIBRARY-NOTES
  "MCP streamable HTTP, measured with real parts" describes. Needs both installed by
  ``.ci/install-mcp-server.sh DIR`` and ``MEMTUI_MCP_SERVER_DIR=DIR``; skipped with the reason
  otherwise, and a failure in CI (``MEMTUI_REQUIRE_MCP``).
- :func:`start_token_server`: the official MCP Python SDK serving the same tools behind a
  bearer-token check (``tests/servers/token_graph_server.py``; the ``test`` extra installs it).
- :class:`FaultServer`: a stand-in for faults no real server produces on demand (a malformed
  event stream, HTTP 500, no route, a missing tool); the only fake, and it says so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

SERVER_DIR = os.environ.get("MEMTUI_MCP_SERVER_DIR", "")
MODULES = Path(SERVER_DIR) / "node_modules"
MEMORY_ENTRY = MODULES / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
GATEWAY_ENTRY = MODULES / "supergateway" / "dist" / "index.js"
NODE = shutil.which("node")
#: The servers of the interop matrix (``.ci/install-mcp-server.sh`` installs each, the older ones
#: side by side under npm aliases): the pinned server-memory, an older release whose ``open_nodes``
#: answers only relations between the names asked, and a fork that adds ``createdAt``/``version``.
SERVERS = {
    "server-memory-2026.8.31": MEMORY_ENTRY,
    "server-memory-2026.1.26": MODULES / "server-memory-2026.1.26" / "dist" / "index.js",
    "mcp-knowledge-graph-1.0.7": MODULES / "mcp-knowledge-graph-1.0.7" / "dist" / "index.js",
}
#: The gateways serving a stdio server over streamable HTTP: supergateway (npm) and mcp-proxy
#: (PyPI, in its own virtual environment under the same folder).
GATEWAYS = ("supergateway", "mcp-proxy")
MCP_PROXY = Path(SERVER_DIR) / "mcp-proxy" / "bin" / "mcp-proxy"
TOKEN_SERVER = Path(__file__).resolve().parent / "servers" / "token_graph_server.py"


def need_gateway() -> None:
    """Skip (or, under ``MEMTUI_REQUIRE_MCP``, fail) when the npm parts are absent."""
    missing = None
    if not SERVER_DIR:
        missing = "MEMTUI_MCP_SERVER_DIR is not set; run .ci/install-mcp-server.sh DIR and set it"
    elif NODE is None:
        missing = "Node.js is not installed, so the MCP memory server cannot run"
    elif not MEMORY_ENTRY.is_file() or not GATEWAY_ENTRY.is_file():
        missing = f"server-memory or supergateway is missing under {MODULES}; run .ci/install-mcp-server.sh {SERVER_DIR}"
    if missing:
        if os.environ.get("MEMTUI_REQUIRE_MCP"):
            pytest.fail(f"MEMTUI_REQUIRE_MCP is set but {missing}")
        pytest.skip(missing)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode} before listening")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {limit} s")


@dataclass
class Running:
    """A started server: its URL, its graph file and its process."""

    url: str
    file: Path
    proc: subprocess.Popen
    port: int

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)


def start_gateway(memory_file: Path, port: int | None = None, extra: tuple[str, ...] = ()) -> Running:
    """supergateway + server-memory on ``memory_file`` (absolute), stateful, on a loopback port."""
    need_gateway()
    port = port or free_port()
    command = f"{NODE} {MEMORY_ENTRY}"
    env = dict(os.environ, MEMORY_FILE_PATH=str(memory_file.resolve()))
    proc = subprocess.Popen([str(NODE), str(GATEWAY_ENTRY), "--stdio", command, "--outputTransport", "streamableHttp",
                             "--port", str(port), "--stateful", "--logLevel", "none", *extra],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    _wait_for_port(port, proc)
    return Running(f"http://127.0.0.1:{port}/mcp", memory_file, proc, port)


def need(server: str, gateway: str) -> None:
    """Skip (or, under ``MEMTUI_REQUIRE_MCP``, fail) when ``server`` or ``gateway`` is absent."""
    need_gateway()
    missing = None
    if not SERVERS[server].is_file():
        missing = f"{server} is missing under {MODULES}; run .ci/install-mcp-server.sh {SERVER_DIR}"
    elif gateway == "mcp-proxy" and not MCP_PROXY.is_file():
        missing = f"mcp-proxy is missing at {MCP_PROXY}; run .ci/install-mcp-server.sh {SERVER_DIR}"
    if missing:
        if os.environ.get("MEMTUI_REQUIRE_MCP"):
            pytest.fail(f"MEMTUI_REQUIRE_MCP is set but {missing}")
        pytest.skip(missing)


def start_pair(server: str, gateway: str, memory_file: Path, port: int | None = None) -> Running:
    """``server`` (a key of :data:`SERVERS`) on ``memory_file`` behind ``gateway`` (stateful
    sessions), on a loopback port; its URL ends in ``/mcp``."""
    need(server, gateway)
    port = port or free_port()
    entry = SERVERS[server]
    env = dict(os.environ, MEMORY_FILE_PATH=str(memory_file.resolve()))
    if gateway == "supergateway":
        argv = [str(NODE), str(GATEWAY_ENTRY), "--stdio", f"{NODE} {entry}", "--outputTransport", "streamableHttp",
                "--port", str(port), "--stateful", "--logLevel", "none"]
    else:
        argv = [str(MCP_PROXY), "--port", str(port), "--host", "127.0.0.1", "--pass-environment", "--",
                str(NODE), str(entry)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    _wait_for_port(port, proc)
    return Running(f"http://127.0.0.1:{port}/mcp", memory_file, proc, port)


def start_token_server(memory_file: Path, token: str | None, *, slow: str = "", semantic: bool = False,
                       port: int | None = None, fail: str = "") -> Running:
    """The SDK server on ``memory_file``; the token goes in its environment, not its arguments."""
    port = port or free_port()
    env = dict(os.environ)
    env.pop("MEMTUI_TEST_TOKEN", None)
    if token is not None:
        env["MEMTUI_TEST_TOKEN"] = token
    if slow:
        env["MEMTUI_TEST_SLOW"] = slow
    if semantic:
        env["MEMTUI_TEST_SEMANTIC"] = "1"
    if fail:
        env["MEMTUI_TEST_FAIL"] = fail
    proc = subprocess.Popen([sys.executable, str(TOKEN_SERVER), str(port), str(memory_file.resolve())], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    _wait_for_port(port, proc)
    return Running(f"http://127.0.0.1:{port}/mcp", memory_file, proc, port)


class FaultServer:
    """A loopback HTTP server answering as a faulty MCP server would (see the module docstring).

    ``mode``: ``"none"`` (404 text for everything: no route), ``"boom"`` (500), ``"malformed"``
    (a legacy server whose tool answers are an event stream with data that is not JSON),
    ``"missing"`` (a legacy server listing only ``read_graph``), ``"cut"`` (the stream ends
    before the answer).
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def _send(self, status: int, body: bytes, kind: str = "application/json", headers=()) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                for key, value in headers:
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def do_DELETE(self) -> None:  # noqa: N802
                self._send(200, b"")

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                message = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append((message.get("method"), dict(self.headers)))
                if outer.mode == "none":
                    return self._send(404, b"Cannot POST /v1/mcp", "text/html")
                if outer.mode == "boom":
                    return self._send(500, b"Internal Server Error", "text/plain")
                method = message.get("method")
                if method == "server/discover":
                    return self._send(400, b"")
                if "id" not in message:
                    return self._send(202, b"")
                if method == "initialize":
                    result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                              "serverInfo": {"name": "fault", "version": "0"}}
                elif method == "tools/list":
                    names = ["read_graph"] if outer.mode == "missing" else [
                        "read_graph", "open_nodes", "create_entities", "add_observations", "create_relations",
                        "delete_entities", "delete_observations", "delete_relations", "search_nodes"]
                    result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
                else:
                    if outer.mode == "malformed":
                        return self._send(200, b"event: message\ndata: {\"jsonrpc\": \"2.0\", \"id\": \n\n",
                                          "text/event-stream")
                    if outer.mode == "cut":
                        return self._send(200, b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":"
                                          b"\"notifications/progress\"}\n\n", "text/event-stream")
                    result = {"content": [{"type": "text", "text": "{\"entities\":[],\"relations\":[]}"}],
                              "structuredContent": {"entities": [], "relations": []}}
                body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                self._send(200, b"event: message\ndata: " + body + b"\n\n", "text/event-stream",
                           headers=[("mcp-session-id", "fault-session")])

        self.requests: list = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/mcp"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
