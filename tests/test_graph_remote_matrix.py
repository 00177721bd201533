"""The remote graph on the servers and gateways members run (tests/remote_servers.py SERVERS x
GATEWAYS): the pinned server-memory, an older release whose ``open_nodes`` answers only relations
between the names asked, and a fork that adds ``createdAt``/``version`` to every record; each behind
supergateway and mcp-proxy. One server process per pair for the whole module (the graph is
emptied between tests); a focused set per pair: the ten edits with undo and redo, no false
conflict and a real one still seen, pull/push and export keeping every field, backup, restore and
verify keeping every field.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memtui.core import graph as g
from memtui.core.backup import commit as backup_commit, render as rd
from memtui.core.backup.restore import restore
from memtui.core.backup.verify import verify
from memtui.core.graph import remote as rg
from memtui.core.mcp.client import Client, Endpoint
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from tests.backup_helpers import isolate_git
from tests.conftest import run_cli
from tests.remote_servers import GATEWAYS, SERVERS, start_pair

PAIRS = [(server, gateway) for server in SERVERS for gateway in GATEWAYS]
FORK = "mcp-knowledge-graph-1.0.7"


#: The outside session of each running server (the tests' own reads, an agent's writes), kept
#: open while the server runs: a stateful gateway starts a server process for every session, so a
#: session per call cost a process start per read. memtui's own sessions stay its own.
_OUTSIDE: dict[str, Client] = {}


@pytest.fixture(scope="module", params=PAIRS, ids=[f"{s}+{gw}" for s, gw in PAIRS])
def pair(request, tmp_path_factory):
    server, gateway = request.param
    folder = tmp_path_factory.mktemp("server")
    running = start_pair(server, gateway, folder / "memory.jsonl")
    _OUTSIDE[running.url] = Client(Endpoint(running.url))
    yield server, running
    _OUTSIDE.pop(running.url).close()
    running.stop()


@pytest.fixture
def url(pair) -> str:
    _server, running = pair
    _reset(running.url)
    return running.url


def _call(url: str, tool: str, **arguments):
    """``tool`` called on the server at ``url`` from its outside session (the one of :data:`_OUTSIDE`)."""
    return _OUTSIDE[url].call_tool(tool, arguments)


def _read(url: str) -> dict:
    return rg.check_view(_call(url, "read_graph"))


def _core(view: dict) -> dict:
    """The fields every memory server keeps (sorted: servers differ in where a rewrite puts a record)."""
    return {"entities": sorted((e["name"], e["entityType"], tuple(e["observations"])) for e in view["entities"]),
            "relations": sorted((r["from"], r["to"], r["relationType"]) for r in view["relations"])}


def _reset(url: str) -> None:
    view = _read(url)
    if view["relations"]:
        _call(url, "delete_relations", relations=[{k: r[k] for k in ("from", "to", "relationType")}
                                                  for r in view["relations"]])
    if view["entities"]:
        _call(url, "delete_entities", entityNames=[e["name"] for e in view["entities"]])


def _seed(url: str) -> None:
    """Ada and Bob related to entities the edits never name (Hub), so every open_nodes of the
    edited names meets a relation leading outside them."""
    _call(url, "create_entities", entities=[
        {"name": n, "entityType": "person", "observations": [f"about {n}"]} for n in ("Ada", "Bob", "Cy", "Hub")])
    _call(url, "create_relations", relations=[
        {"from": "Ada", "to": "Hub", "relationType": "works at"}, {"from": "Hub", "to": "Bob", "relationType": "employs"},
        {"from": "Cy", "to": "Hub", "relationType": "visits"}])


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    return ws


TEN_EDITS = [
    g.CreateEntity("Dee", "person", ("new here",)),
    g.AddObservation("Ada", "likes tea"),
    g.EditObservation("Ada", "likes tea", "likes green tea"),
    g.DeleteObservation("Ada", "likes green tea"),
    g.CreateRelation("Ada", "Bob", "knows"),
    g.RenameEntity("Bob", "Robert"),
    g.Retype(("person",), "Person"),
    g.MergeEntities(("Cy",), "Dee"),
    g.DeleteRelation("Ada", "Robert", "knows"),
    g.DeleteEntity("Robert"),
]


def test_the_ten_edits_undo_and_redo_with_no_false_conflict(tmp_path: Path, url: str) -> None:
    _seed(url)
    remote = rg.RemoteGraph(Endpoint(url))
    with Session.open(_workspace(tmp_path), purpose="test") as session:
        for op in TEN_EDITS:
            graph = remote.load()  # a fresh whole read each time: any conflict would be a false one
            saved = remote.save(graph, op, session=session)
            assert saved.written, op
            assert not [n for n in saved.change.notes if "another writer" in n], (op, saved.change.notes)
            assert _core(_read(url)) == _core(rg.view_of(saved.graph)) if isinstance(op, g.CreateEntity) else True
            expected = _core(rg.view_of(op.apply(graph).graph))
            assert _core(_read(url)) == expected, op
        # undo the last edit (the deletion), then redo it
        before_delete = remote.load()
        undone = remote.save(before_delete, g.Restore(graph, before_delete.source_sha256, "undid: delete"),
                             session=session)
        assert _core(_read(url)) == _core(rg.view_of(graph))
        assert "Robert" in {e["name"] for e in _read(url)["entities"]}
        remote.save(remote.load(), g.Restore(before_delete, undone.graph.source_sha256, "redid: delete"),
                    session=session)
        assert _core(_read(url)) == _core(rg.view_of(before_delete))
    remote.close()
    names = {e["name"] for e in _read(url)["entities"]}
    assert names == {"Ada", "Dee", "Hub"}
    dee = next(e for e in _read(url)["entities"] if e["name"] == "Dee")
    assert "alias: Cy" in dee["observations"] and dee["entityType"] == "Person"


def test_cli_edits_read_only_what_they_touch_and_an_agent_write_still_stops_them(tmp_path: Path, url: str,
                                                                                  capsys) -> None:
    _seed(url)
    ws = _workspace(tmp_path)
    for argv in (["create", "Eve", "person", "first"], ["add-observation", "Ada", "from the cli"],
                 ["relate", "Ada", "knows", "Eve"], ["rename", "Eve", "Eva"], ["delete", "Eva", "-y"]):
        code, out, err = run_cli(capsys, "graph", *argv, "-w", str(ws), "--remote", url)
        assert code == 0, (argv, out, err)
    view = _read(url)
    assert "from the cli" in next(e for e in view["entities"] if e["name"] == "Ada")["observations"]
    assert {e["name"] for e in view["entities"]} == {"Ada", "Bob", "Cy", "Hub"}
    # a real change by another writer is still seen, on every kind of open_nodes: a relation of
    # Ada's leading outside the edited names was deleted after memtui read
    remote = rg.RemoteGraph(Endpoint(url))
    loaded = remote.load()
    _call(url, "delete_relations", relations=[{"from": "Ada", "to": "Hub", "relationType": "works at"}])
    with Session.open(ws, purpose="test") as session, pytest.raises(g.GraphConflictError) as caught:
        remote.save(loaded, g.RenameEntity("Ada", "Ada L."), session=session)
    remote.close()
    assert "works at" in caught.value.diff and "Ada" in str(caught.value)
    assert "Ada" in {e["name"] for e in _read(url)["entities"]}  # nothing was sent


def _records(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def test_pull_push_and_export_keep_every_field(pair, tmp_path: Path, url: str, capsys) -> None:
    server, _running = pair
    _seed(url)
    ws = _workspace(tmp_path)
    code, out, err = run_cli(capsys, "graph", "pull", "-w", str(ws), "--remote", url, "--yes")
    assert code == 0, err
    pulled = _records((ws / "memory" / "graph.jsonl").read_bytes())
    served = _read(url)
    assert [{k: v for k, v in r.items() if k != "type"} for r in pulled] == \
        [{k: v for k, v in r.items() if k != "type"} for r in served["entities"] + served["relations"]]
    if server == FORK:  # the fork's own fields came along, in their place
        assert all("createdAt" in r and r["version"] == 1 for r in pulled)
        assert list(pulled[0])[:4] == ["type", "name", "entityType", "observations"]
    code, out, _ = run_cli(capsys, "graph", "export", "-w", str(ws), "--remote", url)
    assert code == 0 and _records(out.encode()) == pulled
    # the dry run shows the difference as lines
    (ws / "memory" / "graph.jsonl").write_bytes(b"")
    code, out, _ = run_cli(capsys, "graph", "pull", "-w", str(ws), "--remote", url, "--dry-run")
    assert code == 0 and "\n+{" in out and "\\n" not in out
    # push a local record holding fields of its own: sent along, kept by a server that keeps them
    local = pulled + [{"type": "entity", "name": "Zed", "entityType": "person", "observations": ["pushed"],
                       "createdAt": "2020-01-01T00:00:00.000Z", "version": 7}]
    (ws / "memory" / "graph.jsonl").write_text("\n".join(json.dumps(r) for r in local) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "graph", "push", "-w", str(ws), "--remote", url, "--yes")
    assert code == 0, err
    zed = next(e for e in _read(url)["entities"] if e["name"] == "Zed")
    assert zed["observations"] == ["pushed"]
    if server == FORK:
        assert zed["version"] == 7
    code, out, _ = run_cli(capsys, "graph", "push", "-w", str(ws), "--remote", url, "--yes")
    assert code == 0 and "nothing to do" in out


def test_backup_restore_and_verify_keep_every_field(pair, tmp_path: Path, url: str, monkeypatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    _seed(url)
    ws_root = _workspace(tmp_path)
    (ws_root / "memtui.toml").write_text(f'[graph]\nremote = "{url}"\n', encoding="utf-8")
    done = backup_commit.backup(Workspace.open(ws_root), tmp_path / "repo")
    assert not done.remote_missing
    snapshot = (tmp_path / "repo" / done.path / os.fsdecode(rd.REMOTE_GRAPH)).read_bytes()
    served = _read(url)
    assert _records(snapshot) == [dict({"type": "entity"}, **e) if "type" not in e else e for e in served["entities"]] \
        + [dict({"type": "relation"}, **r) if "type" not in r else r for r in served["relations"]]
    assert verify(tmp_path / "repo", None, done.path).ok
    target = tmp_path / "restored"
    restore(tmp_path / "repo", None, done.path, target)
    assert (target / rd.REMOTE_STATE).read_bytes() == snapshot
    if pair[0] == FORK:
        assert all("createdAt" in r for r in _records(snapshot))
