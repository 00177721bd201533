#!/bin/sh
# Install the pinned MCP reference memory server and the streamable-HTTP gateway for the
# interop tests (tests/test_graph_mcp.py over stdio, tests/test_graph_remote*.py over HTTP).
# Usage: .ci/install-mcp-server.sh DIR   (or set MEMTUI_MCP_SERVER_DIR)
# Then run the tests with MEMTUI_MCP_SERVER_DIR=DIR; without it they are skipped with the reason.
set -eu
DIR="${1:-${MEMTUI_MCP_SERVER_DIR:-}}"
if [ -z "$DIR" ]; then
    echo "usage: $0 DIR (or set MEMTUI_MCP_SERVER_DIR)" >&2
    exit 2
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not installed; the MCP interop tests will be skipped" >&2
    exit 0
fi
mkdir -p "$DIR"
# supergateway serves the stdio server over streamable HTTP (LIBRARY-NOTES "MCP streamable HTTP").
# The interop matrix (tests/test_graph_remote_matrix.py) adds an older server-memory, whose
# open_nodes answers only relations between the names asked, and a fork that keeps createdAt and
# version on every record, side by side under npm aliases.
npm install --no-audit --no-fund --prefix "$DIR" @modelcontextprotocol/server-memory@2026.8.31 supergateway@4.0.0 \
    server-memory-2026.1.26@npm:@modelcontextprotocol/server-memory@2026.1.26 \
    mcp-knowledge-graph-1.0.7@npm:@itseasy21/mcp-knowledge-graph@1.0.7
# The second gateway, mcp-proxy (PyPI), in its own virtual environment: it pins its own MCP SDK,
# which must not meet the test extra's.
if command -v python3 >/dev/null 2>&1; then
    if [ ! -x "$DIR/mcp-proxy/bin/mcp-proxy" ]; then
        python3 -m venv "$DIR/mcp-proxy"
        "$DIR/mcp-proxy/bin/pip" install -q mcp-proxy==0.13.0
    fi
else
    echo "python3 is missing; the mcp-proxy half of the interop matrix will be skipped" >&2
fi
echo "installed; run the tests with MEMTUI_MCP_SERVER_DIR=$DIR"
