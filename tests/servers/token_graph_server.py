"""A knowledge-graph MCP server on the official MCP Python SDK, behind a bearer-token check.

Test-only: it serves the tools of ``@modelcontextprotocol/server-memory`` over
streamable HTTP with the SDK's own server (so memtui's client meets a second, independent
implementation of the protocol), keeps the graph in a JSONL file as that server does, and
refuses any request whose ``Authorization`` is not ``Bearer $MEMTUI_TEST_TOKEN`` with 401.

Usage: ``python token_graph_server.py PORT GRAPH_FILE`` with, in the environment (never in the
arguments, which any process can read): ``MEMTUI_TEST_TOKEN`` (the accepted token; unset: no
check), ``MEMTUI_TEST_SLOW`` (``tool:seconds``, that tool answers late), ``MEMTUI_TEST_SEMANTIC``
(set: a ``semantic_search`` tool is listed too), ``MEMTUI_TEST_FAIL`` (``tool:before`` or
``tool:after``: that tool reports an error, ``isError``, before changing anything or after writing).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.responses import JSONResponse

PORT, FILE = int(sys.argv[1]), Path(sys.argv[2])
TOKEN = os.environ.get("MEMTUI_TEST_TOKEN")
SLOW_TOOL, _, SLOW_SECONDS = os.environ.get("MEMTUI_TEST_SLOW", "").partition(":")
FAIL_TOOL, _, FAIL_WHEN = os.environ.get("MEMTUI_TEST_FAIL", "").partition(":")


def failing(name: str, when: str) -> None:
    if name == FAIL_TOOL and when == FAIL_WHEN:
        raise ValueError(f"{name} failed on purpose ({when} writing)")

server = MCPServer("token-graph-server")


def load() -> dict:
    graph: dict = {"entities": [], "relations": []}
    if FILE.exists():
        for line in FILE.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            item = json.loads(line)
            if item.get("type") == "entity":
                graph["entities"].append({k: item[k] for k in ("name", "entityType", "observations")})
            elif item.get("type") == "relation":
                graph["relations"].append({k: item[k] for k in ("from", "to", "relationType")})
    return graph


def save(graph: dict) -> None:
    lines = [json.dumps({"type": "entity", **e}, ensure_ascii=False, separators=(",", ":")) for e in graph["entities"]]
    lines += [json.dumps({"type": "relation", **r}, ensure_ascii=False, separators=(",", ":")) for r in graph["relations"]]
    temp = FILE.with_suffix(".tmp")
    temp.write_text("\n".join(lines), encoding="utf-8")
    temp.replace(FILE)


async def slow(name: str) -> None:
    if name == SLOW_TOOL:
        await asyncio.sleep(float(SLOW_SECONDS))


@server.tool()
async def create_entities(entities: list[dict]) -> dict:
    graph = load()
    new = [e for e in entities if not any(x["name"] == e["name"] for x in graph["entities"])]
    graph["entities"] += new
    save(graph)
    return {"entities": new}


@server.tool()
async def create_relations(relations: list[dict]) -> dict:
    graph = load()
    new = [r for r in relations if r not in graph["relations"]]
    graph["relations"] += new
    save(graph)
    return {"relations": new}


@server.tool()
async def add_observations(observations: list[dict]) -> dict:
    failing("add_observations", "before")
    graph = load()
    results = []
    for item in observations:
        entity = next((e for e in graph["entities"] if e["name"] == item["entityName"]), None)
        if entity is None:
            raise ValueError(f"Entity with name {item['entityName']} not found")
        added = [c for c in item["contents"] if c not in entity["observations"]]
        entity["observations"] += added
        results.append({"entityName": item["entityName"], "addedObservations": added})
    save(graph)
    failing("add_observations", "after")
    return {"results": results}


@server.tool()
async def delete_entities(entityNames: list[str]) -> dict:  # noqa: N803 - the server's own argument name
    graph = load()
    graph["entities"] = [e for e in graph["entities"] if e["name"] not in entityNames]
    graph["relations"] = [r for r in graph["relations"] if r["from"] not in entityNames and r["to"] not in entityNames]
    save(graph)
    return {"success": True, "message": "Entities deleted successfully"}


@server.tool()
async def delete_observations(deletions: list[dict]) -> dict:
    graph = load()
    for item in deletions:
        entity = next((e for e in graph["entities"] if e["name"] == item["entityName"]), None)
        if entity is not None:
            entity["observations"] = [o for o in entity["observations"] if o not in item["observations"]]
    save(graph)
    return {"success": True, "message": "Observations deleted successfully"}


@server.tool()
async def delete_relations(relations: list[dict]) -> dict:
    graph = load()
    graph["relations"] = [r for r in graph["relations"] if r not in relations]
    save(graph)
    return {"success": True, "message": "Relations deleted successfully"}


@server.tool()
async def read_graph() -> dict:
    await slow("read_graph")
    return load()


def _subset(graph: dict, names: set[str]) -> dict:
    entities = [e for e in graph["entities"] if e["name"] in names]
    found = {e["name"] for e in entities}
    return {"entities": entities, "relations": [r for r in graph["relations"] if r["from"] in found or r["to"] in found]}


@server.tool()
async def search_nodes(query: str) -> dict:
    graph = load()
    q = query.lower()
    names = {e["name"] for e in graph["entities"] if q in e["name"].lower() or q in e["entityType"].lower()
             or any(q in o.lower() for o in e["observations"])}
    return _subset(graph, names)


@server.tool()
async def open_nodes(names: list[str]) -> dict:
    await slow("open_nodes")
    return _subset(load(), set(names))


if os.environ.get("MEMTUI_TEST_SEMANTIC"):
    @server.tool()
    async def semantic_search(query: str) -> dict:
        """Entities sharing a word with the query (a stand-in for embeddings)."""
        graph = load()
        words = set(query.lower().split())
        names = {e["name"] for e in graph["entities"]
                 if words & set(" ".join([e["name"], *e["observations"]]).lower().split())}
        return _subset(graph, names)


app = server.streamable_http_app()


class BearerCheck:
    """401 for any request without the right bearer token (the proxy's check, seed 002)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and TOKEN is not None:
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode("latin-1") != f"Bearer {TOKEN}":
                await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                return
        await self.inner(scope, receive, send)


if __name__ == "__main__":
    uvicorn.run(BearerCheck(app), host="127.0.0.1", port=PORT, log_level="error", lifespan="on")
