"""A restored remote graph is readable offline: every graph read command (``--cached``) and the
Graph area answer from the backup's snapshot of it, labelled with the backup's date, when the
server is gone and the user cache is fresh; a live read that fails says that ``--cached`` would
answer; a live read made since the backup wins over it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from memtui.core.backup import commit as backup_commit
from memtui.core.backup.restore import restore
from memtui.core.graph import snapshot
from memtui.core.mcp.client import Client, Endpoint
from memtui.core.workspace import Workspace
from tests.backup_helpers import isolate_git
from tests.conftest import run_cli, wait_for
from tests.remote_servers import start_token_server


@pytest.fixture
def restored(tmp_path: Path, monkeypatch) -> tuple[Path, str]:
    """A workspace whose graph is remote, backed up, the server stopped, restored into a new
    folder with a fresh user cache: ``(restored root, the remote's URL)``."""
    isolate_git(monkeypatch, tmp_path / "home")
    token = "rs-" + os.urandom(8).hex()
    monkeypatch.setenv("MEMTUI_GRAPH_TOKEN", token)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("MEMTUI_CACHE_DIR", str(tmp_path / "cache-before"))
    server = start_token_server(tmp_path / "g.jsonl", token=token)
    try:
        with Client(Endpoint(server.url, token=token)) as client:
            client.call_tool("create_entities", {"entities": [
                {"name": "Zoë", "entityType": "person", "observations": ["likes [tea]"]},
                {"name": "harbour", "entityType": "place", "observations": ["windy"]}]})
            client.call_tool("create_relations", {"relations": [{"from": "Zoë", "to": "harbour",
                                                                 "relationType": "visits"}]})
        ws_root = tmp_path / "ws"
        (ws_root / "memory").mkdir(parents=True)
        (ws_root / "memory" / "AGENTS.md").write_text("# root\n", encoding="utf-8")
        (ws_root / "memtui.toml").write_text(f'[graph]\nremote = "{server.url}"\ntimeout = 3\n', encoding="utf-8")
        done = backup_commit.backup(Workspace.open(ws_root), tmp_path / "repo")
    finally:
        server.stop()
    monkeypatch.delenv("MEMTUI_GRAPH_TOKEN")
    monkeypatch.setenv("MEMTUI_CACHE_DIR", str(tmp_path / "fresh-cache"))
    target = tmp_path / "restored"
    restore(tmp_path / "repo", None, done.path, target)
    return target, server.url


READS = [(["entities", "--json"], lambda out: [e["name"] for e in out["entities"]] == ["Zoë", "harbour"]),
         (["show", "Zoë", "--json"], lambda out: out["records"][0]["observations"] == ["likes [tea]"]),
         (["check", "--json"], lambda out: out["summary"]["entities"] == 2),
         (["search", "wind", "--json"], lambda out: [e["name"] for e in out["entities"]] == ["harbour"])]


@pytest.mark.parametrize("args,check", READS, ids=[r[0][0] for r in READS])
def test_every_graph_read_answers_offline_from_the_restored_backup(restored, capsys, args, check) -> None:
    target, url = restored
    code, out, err = run_cli(capsys, "graph", args[0], "-w", str(target), "--cached", *args[1:])
    assert code == 0, err
    answer = json.loads(out)
    assert check(answer), answer
    assert answer["cached"]["from"] == "backup" and answer["cached"]["remote"] == url
    assert answer["cached"]["backup"]["commit"]
    assert "from the backup of" in err


def test_export_and_the_text_listing_read_the_restored_backup(restored, capsys) -> None:
    target, _url = restored
    code, out, err = run_cli(capsys, "graph", "entities", "-w", str(target), "--cached")
    assert code == 0 and out.splitlines()[0].startswith("Zoë\tperson") and "from the backup of" in err
    code, out, err = run_cli(capsys, "graph", "export", "-w", str(target), "--cached", "--format", "mermaid")
    assert code == 0, err
    assert "harbour" in out and "visits" in out


def test_a_failed_live_read_says_the_backup_answers_with_cached(restored, capsys) -> None:
    target, _url = restored
    code, _out, err = run_cli(capsys, "graph", "entities", "-w", str(target))
    assert code == 4 and "cannot reach" in err  # a live read stays live
    assert "--cached" in err and "from the backup of" in err


def test_a_live_read_newer_than_the_backup_wins(restored, tmp_path: Path) -> None:
    target, url = restored
    root = Workspace.open(target).root
    found = snapshot.find(root, url)
    assert found is not None and found.backup is not None and "from the backup of" in found.label()
    graph = found.graph()
    from memtui.core.graph.format import loads

    newer = loads(b'{"type":"entity","name":"Ada","entityType":"person","observations":[]}', "live")
    snapshot.save(root, url, newer, found.read_at + 60, "read_graph")
    again = snapshot.find(root, url)
    assert again is not None and again.backup is None and [r.name for r in again.rows()] == ["Ada"]
    assert [e.name for e in graph.entities] == ["Zoë", "harbour"]


async def test_the_graph_area_shows_the_restored_graph_offline(restored) -> None:
    from memtui.ui.app import MemtuiApp
    from memtui.ui.screens.graph.screen import GraphScreen

    target, _url = restored
    app = MemtuiApp(Workspace.open(target))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.switch_mode("graph")
        screen = app.screen
        assert isinstance(screen, GraphScreen)
        status = lambda: str(screen.query_one("#graph-count", Static).render())  # noqa: E731
        await wait_for(pilot, lambda: "from the backup of" in status())  # at once, while the live read runs
        assert screen.query_one("#entities", DataTable).row_count == 2
        await wait_for(pilot, lambda: "offline" in status(), what="the failed live read said")


def test_search_finds_the_restored_graph_s_entities_offline(restored, capsys) -> None:
    target, _url = restored
    code, out, err = run_cli(capsys, "search", "harbour", "-w", str(target), "--json")
    assert code == 0, err
    hits = json.loads(out)["hits"]
    assert [h["title"] for h in hits if h["kind"] == "entity"] == ["harbour"], hits
