"""The Graph area on a remote graph: the same table and curation, an offline label
that keeps what was last read, and a sentence (never an empty graph) when nothing could be read."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from memtui.core import graph as g
from memtui.core.mcp.client import Client, Endpoint
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.graph.screen import GraphScreen
from memtui.ui.widgets import Confirm
from tests.conftest import wait_for
from tests.remote_servers import FaultServer, start_token_server


def _workspace(tmp_path: Path, url: str) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "AGENTS.md").write_text("# root\n", encoding="utf-8")
    (root / "memtui.toml").write_text(f'[graph]\nremote = "{url}"\ntimeout = 5\n', encoding="utf-8")
    return root


def _status(screen: GraphScreen) -> str:
    return str(screen.query_one("#graph-count", Static).render())


async def test_a_remote_graph_is_curated_and_stays_visible_offline(tmp_path: Path) -> None:
    server = start_token_server(tmp_path / "g.jsonl", token=None)
    try:
        with Client(Endpoint(server.url)) as client:
            client.call_tool("create_entities", {"entities": [{"name": "Ada", "entityType": "person",
                                                               "observations": ["writes programs"]}]})
        app = MemtuiApp(Workspace.open(_workspace(tmp_path, server.url)))
        async with app.run_test(size=(120, 40)) as pilot:
            await app.switch_mode("graph")
            screen = app.screen
            assert isinstance(screen, GraphScreen)
            await wait_for(pilot, lambda: screen.graph is not None)
            assert "remote" in _status(screen) and server.url in _status(screen)
            screen.propose(g.AddObservation("Ada", "new fact"))
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
            await pilot.press("y")
            await wait_for(pilot, lambda: not screen.saving and screen.graph.find("Ada")
                           and "new fact" in screen.graph.entity("Ada").observations)
            with Client(Endpoint(server.url)) as client:
                assert "new fact" in client.call_tool("open_nodes", {"names": ["Ada"]})["entities"][0]["observations"]
            server.stop()
            await pilot.press("f5")
            await wait_for(pilot, lambda: "offline, as of" in _status(screen))
            assert screen.query_one("#entities", DataTable).row_count == 1  # what was read stays
            assert "cannot reach" in (screen.status.offline or "")
    finally:
        server.stop()


async def test_nothing_read_is_a_sentence_not_an_empty_graph(tmp_path: Path) -> None:
    fault = FaultServer("none")
    try:
        app = MemtuiApp(Workspace.open(_workspace(tmp_path, fault.url)))
        async with app.run_test(size=(80, 24)) as pilot:
            await app.switch_mode("graph")
            screen = app.screen
            assert isinstance(screen, GraphScreen)
            detail = screen.query_one("#entity-detail", Static)
            await wait_for(pilot, lambda: "No graph is shown" in str(detail.render()))
            assert screen.graph is None and "no MCP route" in str(detail.render())
            assert "entities" not in _status(screen)
    finally:
        fault.stop()
