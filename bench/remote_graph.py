"""Figures of the remote graph on loopback: a big remote graph's first page (cold: nothing
kept; warm: memtui's last read kept in the user cache), the full read, and memtui's own share of it
against the gateway's, with anchors on the same graph in the same run, interleaved.

Usage::

    MEMTUI_MCP_SERVER_DIR=DIR python bench/remote_graph.py [--entities N] [--rounds R]
        [--baseline OTHER_MEMTUI] [--all]

It writes B23's graph (``../shared/bug-inputs/B23/make_big_graph.py``, 50,000 entities by default)
into a temporary folder, serves it with the real ``supergateway`` + ``@modelcontextprotocol/
server-memory`` on a loopback port, and per round measures, in this order:

- ``stdio``: server-memory's ``read_graph`` over plain stdio (no gateway): the server's own cost;
- ``gateway read_graph`` / ``gateway resources/read``: the gateway's answer, read raw by httpx
  (no parsing), to its last byte — what any client waits for;
- ``gateway search_nodes`` (a query nothing matches) / ``gateway open_nodes`` (a page's 500 names):
  the server's tools with a bounded answer, raw — what a first page without ``read_graph`` costs;
- ``cold``: ``memtui graph entities --limit 500`` with no snapshot, to its first line of output;
- ``warm``: the same with ``--cached`` once a snapshot is kept, to its first line;
- ``full read``: :meth:`RemoteGraph.load` in this process (after the session is set up, timed
  apart: the gateway starts a server process per session), with the time of the answer's last byte
  (from the progress calls), so ``memtui's share`` = the time after the last byte (checking the
  records and making the graph) and its CPU seconds;
- ``Graph area`` (``--tui``): a headless app switched to the Graph area with a snapshot kept: its
  first page, the snapshot's records, the live read in place;
- ``baseline``: ``--baseline`` (another memtui, e.g. main's) cold, to its first line.

``--all`` adds, once, one edit's round trip and a backup that includes the graph. ``--edits
[--sizes 2000,20000] [--rounds R]`` times instead one edit's round trip per server x gateway of
the interop matrix beside a bare client's (:func:`edit_round_trips`). Prints one line
per measurement and a summary (median, min–max). Not a test: the numbers depend on the machine and
its load (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from memtui.core.graph.remote import RemoteGraph
from memtui.core.mcp.client import Endpoint

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("MEMTUI_SHARED", HERE.parent.parent / "shared"))
MODULES = Path(os.environ.get("MEMTUI_MCP_SERVER_DIR", "")) / "node_modules"
MEMORY = MODULES / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
GATEWAY = MODULES / "supergateway" / "dist" / "index.js"
MEMTUI = str(Path(sys.executable).parent / "memtui")


def _port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_gateway(file: Path) -> tuple[subprocess.Popen, str]:
    port = _port()
    proc = subprocess.Popen(["node", str(GATEWAY), "--stdio", f"node {MEMORY}", "--outputTransport", "streamableHttp",
                             "--port", str(port), "--stateful", "--logLevel", "none"],
                            env=dict(os.environ, MEMORY_FILE_PATH=str(file)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}/mcp"
    for _ in range(200):
        try:
            httpx.get(url, timeout=1)
            return proc, url
        except httpx.HTTPError:
            time.sleep(0.05)
    raise RuntimeError("the gateway did not start")


def stdio_read(file: Path) -> float:
    """server-memory's read_graph over stdio: seconds to its answer line."""
    proc = subprocess.Popen(["node", str(MEMORY)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=dict(os.environ, MEMORY_FILE_PATH=str(file)))
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    proc.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    start = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_graph", "arguments": {}}})
    proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.kill()
    proc.wait()
    return elapsed


def raw_read(url: str, method: str, params: dict) -> tuple[float, int]:
    """One request in a fresh legacy session, its answer read raw to the last byte: (seconds, bytes)."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(timeout=600) as http:
        answer = http.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        headers |= {"mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        http.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        start = time.perf_counter()
        size = 0
        with http.stream("POST", url, headers=headers,
                         json={"jsonrpc": "2.0", "id": 2, "method": method, "params": params}) as response:
            for chunk in response.iter_raw():
                size += len(chunk)
        elapsed = time.perf_counter() - start
        http.delete(url, headers=headers)
    return elapsed, size


#: a query no record of B23's graph holds: search_nodes' cost with an empty answer (the server's scan)
NO_MATCH = "\u2603 no such text \u2603"


def first_names(file: Path, count: int) -> list[str]:
    """The first ``count`` entity names of ``file`` by name (a page as the Graph area sorts it)."""
    names = []
    with open(file, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("type") == "entity":
                names.append(record["name"])
    return sorted(names)[:count]


def first_line(command: list[str], env: dict) -> tuple[float, int]:
    """Seconds from start to the first line ``command`` prints, and its exit code."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    proc.stdout.readline()
    first = time.perf_counter() - start
    proc.stdout.read()
    return first, proc.wait()


def full_read(url: str) -> dict:
    """RemoteGraph.load(): total seconds, the answer's last byte, memtui's share after it, CPU."""
    remote = RemoteGraph(Endpoint(url, timeout=600))
    last = [0.0]

    def progress(_count: int) -> None:
        last[0] = time.perf_counter()

    start = time.perf_counter()
    client = remote.client()
    client.tools(), client.resources()  # the session (the gateway starts a server for it): timed apart
    setup = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    graph = remote.load(progress=progress)
    end = time.perf_counter()
    cpu = time.process_time() - cpu
    remote.close()
    return {"setup": setup, "total": end - start, "last_byte": last[0] - start, "share": end - last[0], "cpu": cpu,
            "entities": len(graph.entities), "via": remote.read_via}


def tui_times(ws: Path, size: tuple[int, int] = (120, 40)) -> dict:
    """The Graph area on ``ws`` in a headless app: seconds from switching to it until the
    snapshot's first page is drawn (rows), its records are shown, and the live read replaced them."""
    import asyncio

    from textual.widgets import DataTable

    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp

    async def run() -> dict:
        app = MemtuiApp(Workspace.open(ws))
        out: dict = {}
        async with app.run_test(size=size) as pilot:
            start = time.perf_counter()
            await app.switch_mode("graph")
            screen = app.screen
            table = screen.query_one("#entities", DataTable)
            while "live" not in out:
                await pilot.pause(0.01)
                now = time.perf_counter() - start
                if getattr(screen, "offline", "") or now > 600:
                    raise RuntimeError(f"the Graph area did not read the remote: {getattr(screen, 'offline', '')!r}")
                if "rows" not in out and table.row_count:
                    out["rows"] = now
                if "records" not in out and getattr(screen, "graph", None) is not None:
                    out["records"] = now
                if getattr(screen, "graph", None) is not None and getattr(screen, "cached", None) is None:
                    out["live"] = now
        return out

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", help="another memtui executable to time cold (e.g. main's)")
    parser.add_argument("--all", action="store_true", help="also one edit's round trip and a backup")
    parser.add_argument("--tui", action="store_true", help="also the Graph area's warm first page (headless)")
    args = parser.parse_args()
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a killed bench still stops its gateway
    if not MEMORY.is_file() or not GATEWAY.is_file():
        sys.exit("set MEMTUI_MCP_SERVER_DIR to a folder with server-memory and supergateway (.ci/install-mcp-server.sh)")
    tmp = Path(tempfile.mkdtemp(prefix="memtui-bench-remote-"))
    try:
        subprocess.run([sys.executable, str(SHARED / "bug-inputs" / "B23" / "make_big_graph.py"), str(tmp / "big"),
                        str(args.entities)], check=True, stdout=subprocess.DEVNULL)
        file = tmp / "big" / "memory.jsonl"
        shutil.rmtree(tmp / "big" / "skills", ignore_errors=True)
        proc, url = start_gateway(file)
        ws = tmp / "ws"
        (ws / "memory").mkdir(parents=True)
        (ws / "memory" / "AGENTS.md").write_text("# root\n", encoding="utf-8")
        (ws / "memtui.toml").write_text(f'[graph]\nremote = "{url}"\ntimeout = 600\n', encoding="utf-8")
        cache = tmp / "cache"
        env = dict(os.environ, MEMTUI_CACHE_DIR=str(cache))
        os.environ["MEMTUI_CACHE_DIR"] = str(cache)
        page = ["graph", "entities", "-w", str(ws), "--limit", "500"]
        page_names = first_names(file, 500)
        print(f"{args.entities:,} entities ({file.stat().st_size:,} bytes) behind supergateway at {url}; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        figures: dict[str, list[float]] = {}

        def record(name: str, value: float, note: str = "") -> None:
            figures.setdefault(name, []).append(value)
            print(f"  {name}: {value:.2f} s{note}", flush=True)

        try:
            for round_no in range(1, args.rounds + 1):
                print(f"round {round_no} (load {os.getloadavg()[0]:.1f})", flush=True)
                record("stdio read_graph (no gateway)", stdio_read(file))
                seconds, size = raw_read(url, "tools/call", {"name": "read_graph", "arguments": {}})
                record("gateway read_graph, raw", seconds, f" ({size:,} bytes)")
                seconds, size = raw_read(url, "resources/read", {"uri": "memory://knowledge-graph"})
                record("gateway resources/read, raw", seconds, f" ({size:,} bytes)")
                seconds, size = raw_read(url, "tools/call", {"name": "search_nodes", "arguments": {"query": NO_MATCH}})
                record("gateway search_nodes (matching nothing), raw", seconds, f" ({size:,} bytes)")
                seconds, size = raw_read(url, "tools/call", {"name": "open_nodes", "arguments": {"names": page_names}})
                record(f"gateway open_nodes ({len(page_names)} names: a page), raw", seconds, f" ({size:,} bytes)")
                shutil.rmtree(cache, ignore_errors=True)
                seconds, code = first_line([MEMTUI, *page], env)
                record("memtui first page, cold", seconds, f" (exit {code})")
                seconds, code = first_line([MEMTUI, *page, "--cached"], env)
                record("memtui first page, warm (--cached)", seconds, f" (exit {code})")
                read = full_read(url)
                record("memtui session set-up", read["setup"])
                record("memtui full read", read["total"], f" ({read['entities']:,} entities via {read['via']})")
                record("  of which the answer's last byte", read["last_byte"])
                record("  of which memtui's share after it", read["share"], f" ({read['cpu']:.2f} s CPU in all)")
                if args.tui:
                    shown = tui_times(ws)
                    record("Graph area, warm: first page (the snapshot's listing)", shown["rows"])
                    record("Graph area, warm: the snapshot's records", shown["records"])
                    record("Graph area, warm: the live read in place", shown["live"])
                if args.baseline:
                    seconds, code = first_line([args.baseline, *page], env)
                    record("baseline first page, cold", seconds, f" (exit {code})")
            print("summary (median, min–max):")
            for name, values in figures.items():
                print(f"  {name}: {statistics.median(values):.2f} s ({min(values):.2f}–{max(values):.2f})")
            if args.all:
                extra(url, ws)
        finally:
            os.killpg(proc.pid, 9)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def extra(url: str, ws: Path) -> None:
    """One edit's round trip and a backup that includes the remote graph (once)."""
    from memtui.core import graph as g
    from memtui.core.backup import commit as backup_commit
    from memtui.core.session import Session
    from memtui.core.workspace import Workspace

    remote = RemoteGraph(Endpoint(url, timeout=600))
    loaded = remote.load()
    with Session.open(ws, purpose="bench") as session:
        name = loaded.entities[len(loaded.entities) // 2].name
        start = time.perf_counter()
        saved = remote.save(loaded, g.AddObservation(name, f"bench {time.time()}"), session=session)
        print(f"one edit's round trip (add-observation: plan, open_nodes check, journal, tool call, read-back, "
              f"journal): {time.perf_counter() - start:.2f} s, written={saved.written}")
    remote.close()
    with tempfile.TemporaryDirectory() as repo:
        steps: list[tuple[str, float]] = []
        start = time.perf_counter()
        done = backup_commit.backup(Workspace.open(ws), Path(repo) / "repo",
                                    progress=lambda what, _fraction: steps.append((what, time.perf_counter())))
        elapsed = time.perf_counter() - start
        for (what, at), (_next, until) in zip(steps, [*steps[1:], ("end", start + elapsed)], strict=True):
            print(f"  backup step {what}: {until - at:.2f} s")
        tree = Path(repo) / "repo" / done.path
        size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
        print(f"backup including the remote graph: {elapsed:.2f} s, backup tree {size:,} bytes "
              f"(remote/graph.jsonl {(tree / 'remote' / 'graph.jsonl').stat().st_size:,} bytes)")


def _edit_graph(file: Path, count: int) -> list[str]:
    """A graph of ``count`` entities (3 observations each, a chain of relations) in the server's file form."""
    names = [f"entity-{i:06d}" for i in range(count)]
    lines = [json.dumps({"type": "entity", "name": n, "entityType": "bench", "observations": [
        f"observation {j} of {n}" for j in range(3)]}, separators=(",", ":")) for n in names]
    lines += [json.dumps({"type": "relation", "from": a, "to": b, "relationType": "next"}, separators=(",", ":"))
              for a, b in zip(names, names[1:], strict=False)]
    file.write_text("\n".join(lines), encoding="utf-8")
    return names


def edit_round_trips(sizes: list[int], rounds: int, servers: list[str], gateways: list[str]) -> None:
    """One edit's round trip (``add-observation`` on an entity in the middle of the graph) per
    server x gateway x size, beside a bare client's edit through the same gateway, interleaved:

    - ``bare``: connect (initialize), one ``tools/call add_observations``, close: the least any
      client can do;
    - ``memtui core``: :meth:`RemoteGraph.load_records` + :meth:`RemoteGraph.save` in this
      process, connection included (what the CLI and the Graph area pay beyond Python's start);
    - ``memtui CLI``: ``memtui graph add-observation --remote URL`` as a process (start-up included);
    - ``whole read``: the former way, :meth:`RemoteGraph.load` then the same save (for reference).
    """
    sys.path.insert(0, str(HERE.parent))
    from memtui.core import graph as g
    from memtui.core.mcp.client import Client
    from memtui.core.session import Session
    from tests.remote_servers import start_pair

    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"(1/5/15 min), {os.cpu_count()} cores")
    rows: list[tuple] = []
    for size in sizes:
        for server in servers:
            for gateway in gateways:
                folder = Path(tempfile.mkdtemp(prefix="memtui-edit-bench-"))
                names = _edit_graph(folder / "memory.jsonl", size)
                running = start_pair(server, gateway, folder / "memory.jsonl")
                ws = folder / "ws"
                (ws / "memory").mkdir(parents=True)
                target = names[len(names) // 2]
                times: dict[str, list[float]] = {"bare": [], "memtui core": [], "memtui CLI": [], "whole read": []}
                try:
                    for r in range(rounds):
                        start = time.perf_counter()
                        with Client(Endpoint(running.url, timeout=600)) as client:
                            client.call_tool("add_observations", {"observations": [
                                {"entityName": target, "contents": [f"bare {r} {time.time()}"]}]})
                        times["bare"].append(time.perf_counter() - start)
                        start = time.perf_counter()
                        remote = RemoteGraph(Endpoint(running.url, timeout=600))
                        with Session.open(ws, purpose="bench") as session:
                            loaded = remote.load_records([target])
                            assert loaded is not None
                            remote.save(loaded, g.AddObservation(target, f"core {r} {time.time()}"), session=session)
                        remote.close()
                        times["memtui core"].append(time.perf_counter() - start)
                        start = time.perf_counter()
                        done = subprocess.run([MEMTUI, "graph", "add-observation", "-w", str(ws), "--remote",
                                               running.url, target, f"cli {r} {time.time()}"], capture_output=True)
                        times["memtui CLI"].append(time.perf_counter() - start)
                        assert done.returncode == 0, done.stderr
                        if r == 0:  # once: the whole-read way is the slow reference
                            start = time.perf_counter()
                            remote = RemoteGraph(Endpoint(running.url, timeout=600))
                            with Session.open(ws, purpose="bench") as session:
                                remote.save(remote.load(), g.AddObservation(target, f"whole {time.time()}"),
                                            session=session)
                            remote.close()
                            times["whole read"].append(time.perf_counter() - start)
                finally:
                    running.stop()
                    shutil.rmtree(folder, ignore_errors=True)
                med = {k: statistics.median(v) for k, v in times.items() if v}
                rows.append((size, server, gateway, med))
                print(f"{size:>6,} {server:<27} {gateway:<12} bare {med['bare']:.3f} s | memtui core "
                      f"{med['memtui core']:.3f} s ({med['memtui core'] / med['bare']:.2f}x) | memtui CLI "
                      f"{med['memtui CLI']:.3f} s ({med['memtui CLI'] / med['bare']:.2f}x) | whole read "
                      f"{med['whole read']:.3f} s", flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min)")


if __name__ == "__main__":
    if "--edits" in sys.argv:  # the edit round trips (a mode of its own)
        edit_parser = argparse.ArgumentParser(description=edit_round_trips.__doc__.split("\n\n")[0])
        edit_parser.add_argument("--edits", action="store_true")
        edit_parser.add_argument("--sizes", default="2000,20000", help="entity counts, comma-separated")
        edit_parser.add_argument("--rounds", type=int, default=3)
        edit_parser.add_argument("--servers", default="", help="keys of tests/remote_servers.SERVERS (default all)")
        edit_parser.add_argument("--gateways", default="supergateway,mcp-proxy")
        edit_args = edit_parser.parse_args()
        from tests.remote_servers import SERVERS

        edit_round_trips([int(x) for x in edit_args.sizes.split(",")], edit_args.rounds,
                         edit_args.servers.split(",") if edit_args.servers else list(SERVERS),
                         edit_args.gateways.split(","))
    else:
        main()
