"""An MCP client over streamable HTTP (DESIGN.md §5): what memtui needs to reach the
member's remote graph, and nothing it does not.

:mod:`memtui.core.mcp.client` speaks the protocol (both eras of the current specification,
2026-07-28: per-request metadata, and the initialize/session handshake of 2025-03-26 … 2025-11-25
that older servers still answer); :mod:`memtui.core.mcp.errors` holds its failures, each a
sentence with exit code 4. It knows nothing of graphs: :mod:`memtui.core.graph.remote` uses it.
"""
