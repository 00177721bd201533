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
npm install --no-audit --no-fund --prefix "$DIR" @modelcontextprotocol/server-memory@2026.8.31 supergateway@4.0.0
echo "installed; run the tests with MEMTUI_MCP_SERVER_DIR=$DIR"
