"""The SDK twin of `memtui graph entities --remote URL` for bench/remote_graph.sh: the same
output lines, through the official MCP SDK's client (mcp 2.x) instead of memtui's own."""

from __future__ import annotations

import asyncio
import sys


async def main(url: str) -> None:
    from mcp import Client

    async with Client(url) as client:
        result = await client.call_tool("read_graph", {})
    graph = result.structured_content or {}
    degree: dict[str, int] = {}
    for r in graph.get("relations", []):
        degree[r["from"]] = degree.get(r["from"], 0) + 1
        degree[r["to"]] = degree.get(r["to"], 0) + 1
    for e in graph.get("entities", []):
        print(f"{e['name']}\t{e['entityType']}\t{len(e['observations'])} obs\t{degree.get(e['name'], 0)} rel")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
