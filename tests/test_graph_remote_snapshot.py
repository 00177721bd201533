"""A big remote graph's first page at once: the remote read builds the graph in one pass,
reads the reference server's graph resource when listed, and is kept as a snapshot in the user
cache folder that reads may answer from (``--cached``, marked) and writes never do; the Graph area
shows the snapshot labelled "as of HH:MM, reading the remote…" until the live read replaces it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from memtui.core import graph as g
from memtui.core.graph import remote as rg
from memtui.core.graph import snapshot
from memtui.core.mcp.client import Client, Endpoint
from memtui.core.workspace import Workspace
from tests.conftest import wait_for
from tests.remote_servers import start_gateway, start_token_server

NAMES = ["[/]", "--help", "line one\nline two", "tab\there", "zero\u200bwidth", "rtl \u202eevil", "emoji 🧭",
         "quote \" and backslash \\", "Zoë", "lone \udc80 surrogate", ""]


@pytest.fixture
def servers():
    started = []
    yield started
    for server in started:
        server.stop()


def _workspace(tmp_path: Path, url: str, name: str = "ws") -> Path:
    ws = tmp_path / name
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "AGENTS.md").write_text("# root\n", encoding="utf-8")
    (ws / "memtui.toml").write_text(f'[graph]\nremote = "{url}"\ntimeout = 20\n', encoding="utf-8")
    return ws


def _memtui(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "memtui"), *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=120)


def _call(url: str, tool: str, **arguments):
    with Client(Endpoint(url)) as client:
        return client.call_tool(tool, arguments)


def _view() -> dict:
    entities = [{"name": n, "entityType": "t [b]", "observations": [f"about {n}", "ünï", n]} for n in NAMES]
    entities.append({"name": "Zoë", "entityType": "dup", "observations": []})  # a name twice, as servers allow
    relations = [{"from": a, "to": b, "relationType": "knows"} for a, b in zip(NAMES, NAMES[1:], strict=False)]
    relations.append({"from": "Zoë", "to": "nobody", "relationType": "dangles"})
    return {"entities": entities, "relations": relations}


def test_a_remote_read_is_the_graph_the_server_form_lines_would_parse_to() -> None:
    view = rg.check_view(_view())
    built = rg.graph_of(view, "http://x/mcp")
    parsed = g.loads(rg.view_bytes(view), "http://x/mcp")
    assert [(line.kind, line.record, line.raw) for line in built.lines] == \
        [(line.kind, line.record, line.raw) for line in parsed.lines]
    assert built.to_bytes() == parsed.to_bytes()
    assert g.server_view(built) == view
    assert built.source_sha256 == rg.graph_of(rg.check_view(_view()), "other").source_sha256
    once = rg.read_graph_of(_view(), "http://x/mcp")  # the whole-read path: checked while built
    assert [(line.kind, line.record, line.raw) for line in once.lines] == \
        [(line.kind, line.record, line.raw) for line in parsed.lines]
    assert once.source_sha256 == built.source_sha256
    # an edit of a remote read writes the edited record in the server's form, and keeps the others
    changed = g.AddObservation("Zoë", "new").apply(built).graph
    assert changed.to_bytes() == g.AddObservation("Zoë", "new").apply(parsed).graph.to_bytes()


@pytest.mark.parametrize("bad", [{"entities": [{"name": 1, "entityType": "t", "observations": []}], "relations": []},
                                 {"entities": [{"name": "a", "entityType": "t", "observations": [None]}], "relations": []},
                                 {"entities": [], "relations": [{"from": "a", "to": "b"}]},
                                 {"entities": {}, "relations": []}])
def test_a_read_that_is_not_a_graph_is_refused_with_a_sentence(bad: dict) -> None:
    from memtui.core.mcp.errors import McpServerError

    with pytest.raises(McpServerError, match="answer"):
        rg.check_view(bad)
    with pytest.raises(McpServerError, match="answer"):
        rg.read_graph_of(bad, "http://x/mcp")


def test_the_reference_servers_graph_resource_is_read_and_equals_read_graph(tmp_path: Path, servers) -> None:
    gateway = start_gateway(tmp_path / "memory.jsonl")
    servers.append(gateway)
    _call(gateway.url, "create_entities", entities=_view()["entities"][:-1])
    _call(gateway.url, "create_relations", relations=_view()["relations"])
    remote = rg.RemoteGraph(Endpoint(gateway.url))
    graph = remote.load()
    remote.close()
    assert remote.read_via == f"resources/read {rg.GRAPH_RESOURCE}"
    assert g.server_view(graph) == _call(gateway.url, "read_graph")  # the same records, the same order


def test_a_long_answer_reports_its_bytes_while_it_streams_in(tmp_path: Path, servers) -> None:
    """The whole graph arrives as one server-sent event; progress is told its bytes chunk by chunk,
    not once at the end (the Graph area's count while a big read runs)."""
    gateway = start_gateway(tmp_path / "memory.jsonl")
    servers.append(gateway)
    entities = [{"name": f"e{i:04}", "entityType": "t", "observations": ["x" * 500]} for i in range(1500)]
    with Client(Endpoint(gateway.url)) as agent:  # one session: the gateway starts a server process per session
        for part in range(0, len(entities), 100):  # the gateway takes bodies up to 100 KB
            agent.call_tool("create_entities", {"entities": entities[part:part + 100]})
    seen: list[int] = []
    remote = rg.RemoteGraph(Endpoint(gateway.url))
    graph = remote.load(progress=seen.append)
    remote.close()
    assert len(graph.entities) == 1500
    assert len(seen) > 3 and seen == sorted(seen) and seen[0] < seen[-1]
    assert seen[-1] > 1500 * 500  # the last count is the whole answer's
    # on a terminal, the command line says it too (standard error), and clears the line after
    ws = _workspace(tmp_path, gateway.url)
    leader, follower = os.openpty()
    try:
        done = subprocess.run([str(Path(sys.executable).parent / "memtui"), "graph", "entities", "-w", str(ws),
                               "--limit", "1"], stdout=subprocess.PIPE, stderr=follower, text=True, timeout=120)
        os.close(follower)
        said = b""
        while chunk := _read_pty(leader):
            said += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0 and done.stdout.startswith("e0000")
    assert b"\rreading the remote graph\xe2\x80\xa6 " in said and b" MB\x1b[K" in said
    assert said.rindex(b"\r\x1b[K") > said.rindex(b" MB")  # cleared before anything else is said


def _read_pty(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the other end is closed
        return b""


def test_a_server_without_the_resource_is_read_with_read_graph(tmp_path: Path, servers) -> None:
    server = start_token_server(tmp_path / "g.jsonl", token=None)
    servers.append(server)
    _call(server.url, "create_entities", entities=[{"name": "Ada", "entityType": "person", "observations": ["x"]}])
    remote = rg.RemoteGraph(Endpoint(server.url))
    graph = remote.load()
    remote.close()
    assert remote.read_via == "read_graph" and [e.name for e in graph.entities] == ["Ada"]


def test_reads_may_answer_from_the_snapshot_and_say_so_writes_never(tmp_path: Path, servers) -> None:
    token = "snap-" + os.urandom(12).hex()
    server = start_token_server(tmp_path / "g.jsonl", token=token)
    servers.append(server)
    ws = _workspace(tmp_path, server.url)
    (ws / "memtui.toml").write_text("", encoding="utf-8")
    block = {"tools": {"mcp": {"servers": {rg.BLOCK_NAME: {"type": "http", "url": server.url,
                                                            "headers": {"Authorization": f"Bearer {token}"}}}}}}
    (ws / "config.json").write_text(json.dumps(block), encoding="utf-8")
    with Client(Endpoint(server.url, token=token)) as client:
        client.call_tool("create_entities", {"entities": [
            {"name": "Ada", "entityType": "person", "observations": ["writes programs"]},
            {"name": "Bob", "entityType": "person", "observations": []}]})
        client.call_tool("create_relations", {"relations": [{"from": "Ada", "to": "Bob", "relationType": "knows"}]})
    cold = _memtui(["graph", "entities", "-w", str(ws), "--cached", "--json"])  # nothing kept yet: read live
    assert cold.returncode == 0, cold.stderr
    assert json.loads(cold.stdout)["cached"] is False and "no usable earlier read" in cold.stderr
    live = _memtui(["graph", "entities", "-w", str(ws), "--json"])
    assert json.loads(live.stdout)["cached"] is False
    cache = Path(os.environ["MEMTUI_CACHE_DIR"])
    kept = list((cache / snapshot.FOLDER).iterdir())
    assert len(kept) == 1 and oct(kept[0].stat().st_mode & 0o777) == "0o600"
    assert not any("snapshot" in p.name or p.suffix == ".json" and p.parent.name == snapshot.FOLDER
                   for p in ws.rglob("*"))  # never in the workspace
    # an agent writes; the snapshot still holds the read before it
    with Client(Endpoint(server.url, token=token)) as client:
        client.call_tool("create_entities", {"entities": [{"name": "Cy", "entityType": "person", "observations": []}]})
    server.stop()  # the cached answers need no server at all
    for args, check in (
            (["entities", "--json"], lambda out: [e["name"] for e in out["entities"]] == ["Ada", "Bob"]
             and out["entities"][0]["relations"] == 1 and out["entities"][0]["observations"] == 1),
            (["entities", "--json", "--type", "person", "--match", "B"], lambda out: out["total"] == 1),
            (["show", "Ada", "--json"], lambda out: out["records"][0]["observations"] == ["writes programs"]),
            (["check", "--json"], lambda out: out["summary"]["entities"] == 2),
            (["search", "programs", "--json"], lambda out: [e["name"] for e in out["entities"]] == ["Ada"])):
        done = _memtui(["graph", args[0], "-w", str(ws), "--cached", *args[1:]])
        assert done.returncode == 0, (args, done.stderr)
        out = json.loads(done.stdout)
        assert out["cached"]["remote"] == server.url and out["cached"]["entities"] == 2, args
        assert check(out), (args, out)
        assert "cached:" in done.stderr and "as of" in done.stderr
    text = _memtui(["graph", "entities", "-w", str(ws), "--cached"])
    assert text.stdout.splitlines()[0].startswith("Ada\tperson") and "cached: the remote graph" in text.stderr
    # a write has no --cached, and reading the remote is what it does: the server is down, so exit 4
    write = _memtui(["graph", "add-observation", "-w", str(ws), "--cached", "Ada", "x"])
    assert write.returncode == 2 and "--cached" in write.stderr
    write = _memtui(["graph", "add-observation", "-w", str(ws), "Ada", "x"])
    assert write.returncode == 4 and "cannot reach" in write.stderr
    # without --cached a read is live: the server being down is said, not hidden behind the snapshot
    down = _memtui(["graph", "entities", "-w", str(ws)])
    assert down.returncode == 4 and "cannot reach" in down.stderr
    # the token is in no byte of the cache folder
    for path in cache.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path
    # another workspace on the same URL (another member's token) does not see this one's snapshot
    other = _workspace(tmp_path, server.url, "other")
    assert snapshot.find(other, server.url) is None
    assert snapshot.find(ws, server.url) is not None


def test_a_damaged_snapshot_is_not_shown(tmp_path: Path, servers) -> None:
    server = start_token_server(tmp_path / "g.jsonl", token=None)
    servers.append(server)
    _call(server.url, "create_entities", entities=[{"name": "Ada", "entityType": "person", "observations": []}])
    ws = _workspace(tmp_path, server.url)
    assert _memtui(["graph", "entities", "-w", str(ws)]).returncode == 0
    found = snapshot.find(ws, server.url)
    assert found is not None
    found.path.write_bytes(found.path.read_bytes()[:-20])  # cut off
    done = _memtui(["graph", "show", "-w", str(ws), "--cached", "Ada", "--json"])
    assert done.returncode == 0 and json.loads(done.stdout)["cached"] is False  # read live instead
    assert snapshot.find(ws, server.url).graph().entities[0].name == "Ada"  # and kept again


def _status(screen) -> str:  # noqa: ANN001
    return str(screen.query_one("#graph-count", Static).render())


async def test_the_graph_area_shows_the_snapshot_until_the_live_read_replaces_it(tmp_path: Path, servers) -> None:
    from memtui.ui.app import MemtuiApp
    from memtui.ui.screens.graph.screen import GraphScreen

    file = tmp_path / "g.jsonl"
    server = start_token_server(file, token=None)
    servers.append(server)
    _call(server.url, "create_entities", entities=[{"name": "Ada", "entityType": "person", "observations": []}])
    ws = _workspace(tmp_path, server.url)
    assert _memtui(["graph", "entities", "-w", str(ws)]).returncode == 0  # kept
    _call(server.url, "create_entities", entities=[{"name": "Bob", "entityType": "person", "observations": []}])
    server.stop()
    slow = start_token_server(file, token=None, slow="read_graph:6", port=server.port)
    servers.append(slow)
    app = MemtuiApp(Workspace.open(ws))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.switch_mode("graph")
        screen = app.screen
        assert isinstance(screen, GraphScreen)
        await wait_for(pilot, lambda: screen.graph is not None and screen.cached is not None)
        assert "as of" in _status(screen) and "reading the remote" in _status(screen)
        assert [e.name for e in screen.graph.entities] == ["Ada"]  # the kept read, while the server sleeps
        assert "not audited" in _status(screen)
        screen.propose(g.AddObservation("Ada", "x"))  # no change from a kept read
        assert not screen.saving
        await wait_for(pilot, lambda: screen.cached is None, timeout=30)
        assert sorted(e.name for e in screen.graph.entities) == ["Ada", "Bob"]
        assert "as of" not in _status(screen) and screen.query_one("#entities", DataTable).row_count == 2
        # the live read is kept as the next snapshot (by the same worker, after it is shown)
        await wait_for(pilot, lambda: snapshot.find(ws, server.url).entities == 2)
    assert [e.name for e in snapshot.find(ws, server.url).graph().entities] == ["Ada", "Bob"]


def test_the_reading_line_says_what_has_arrived_and_puts_the_url_last() -> None:
    """A gateway may send a big answer only once it is whole: the Graph area says nothing has
    arrived yet rather than counting zero bytes; once bytes come it counts them; the URL is last
    (at 80 columns it is what may not fit)."""
    import time

    from memtui.core.graph.remote import RemoteGraph
    from memtui.ui.screens.graph.status import ReadStatus

    status = ReadStatus()
    status.backend = RemoteGraph(Endpoint("http://127.0.0.1:9/mcp"))
    status.reading_since = time.monotonic() - 5
    status.received = 0
    assert status.reading_text() == "reading the remote… 5 s, nothing received yet · http://127.0.0.1:9/mcp"
    status.received = 12_345_678
    assert status.reading_text() == "reading the remote… 5 s, 12.3 MB · http://127.0.0.1:9/mcp"
    status.reading_since = time.monotonic()
    status.received = 0
    assert status.reading_text() == "reading the remote… 0 s · http://127.0.0.1:9/mcp"
