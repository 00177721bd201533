"""A workspace whose graph is remote backs it up: a deterministic snapshot in the backup
tree, restored offline, covered by verify; the token appears nowhere in the tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core import graph as g
from memtui.core.backup import commit as backup_commit, render as rd
from memtui.core.backup.restore import restore
from memtui.core.backup.verify import verify
from memtui.core.graph import remote as rg
from memtui.core.graph.backend import open_graph
from memtui.core.mcp.client import Client, Endpoint
from memtui.core.workspace import Workspace
from tests.backup_helpers import isolate_git
from tests.remote_servers import start_token_server


def test_the_remote_graph_is_backed_up_restored_offline_and_verified(tmp_path: Path, monkeypatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    token = "bk-" + os.urandom(10).hex()
    monkeypatch.setenv("MEMTUI_GRAPH_TOKEN", token)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    server = start_token_server(tmp_path / "g.jsonl", token=token)
    try:
        with Client(Endpoint(server.url, token=token)) as client:
            client.call_tool("create_entities", {"entities": [
                {"name": "Zoë", "entityType": "person", "observations": ["likes [tea]", "line\nbreak"]},
                {"name": "harbour", "entityType": "place", "observations": []}]})
            client.call_tool("create_relations", {"relations": [{"from": "Zoë", "to": "harbour", "relationType": "visits"}]})
            served = client.call_tool("read_graph", {})
        ws_root = tmp_path / "ws"
        (ws_root / "memory").mkdir(parents=True)
        (ws_root / "memtui.toml").write_text(f'[graph]\nremote = "{server.url}"\n', encoding="utf-8")
        ws = Workspace.open(ws_root)
        done = backup_commit.backup(ws, tmp_path / "repo")
        snapshot = (tmp_path / "repo" / done.path / os.fsdecode(rd.REMOTE_GRAPH)).read_bytes()
        assert snapshot == rg.view_bytes(rg.check_view(served))  # the server's own file form, deterministic
        again = rd.render(ws_root, remote_graph=snapshot)
        assert again.files[rd.REMOTE_GRAPH].data == snapshot
        for path in (tmp_path / "repo" / done.path).rglob("*"):
            if path.is_file():
                assert token.encode() not in path.read_bytes(), path
        assert verify(tmp_path / "repo", None, done.path).ok
    finally:
        server.stop()
    # offline: the server is gone; the restored workspace holds the graph
    target = tmp_path / "restored"
    restore(tmp_path / "repo", None, done.path, target)
    kept = (target / rd.REMOTE_STATE).read_bytes()
    assert kept == snapshot
    restored = Workspace.open(target)
    assert rd.render(target).files[rd.REMOTE_GRAPH].data == snapshot  # the round trip holds offline
    graph = g.loads(kept, "snapshot")
    assert [e.name for e in graph.entities] == ["Zoë", "harbour"]
    with pytest.raises(Exception) as offline:
        open_graph(restored).load()
    assert "cannot reach" in str(offline.value)


def test_a_backup_whose_remote_cannot_be_read_says_the_remote_part_is_missing(tmp_path: Path, monkeypatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws_root = tmp_path / "ws"
    (ws_root / "memory").mkdir(parents=True)
    (ws_root / "memtui.toml").write_text('[graph]\nremote = "http://127.0.0.1:9/mcp"\ntimeout = 2\n', encoding="utf-8")
    done = backup_commit.backup(Workspace.open(ws_root), tmp_path / "repo")
    assert "is NOT in this backup" in done.remote_missing and "cannot reach" in done.remote_missing
    assert done.commit and rd.REMOTE_GRAPH not in rd.render(ws_root).files  # the rest was backed up
