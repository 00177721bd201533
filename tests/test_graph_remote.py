"""The remote graph over MCP streamable HTTP, against real servers started here.

The real ``@modelcontextprotocol/server-memory`` behind the real ``supergateway`` (legacy era:
initialize, sessions), and the official MCP Python SDK behind a bearer check (modern era,
2026-07-28); faults from a stand-in only where no real server produces them on demand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core import graph as g
from memtui.core.graph import remote as rg
from memtui.core.graph.audit import audit
from memtui.core.mcp.client import Client, Endpoint
from memtui.core.mcp.errors import McpServerError, McpTimeout, McpToolMissing, McpUnreachable
from memtui.core.session import Session
from tests.remote_servers import FaultServer, start_gateway, start_token_server

B17_NAMES = ["[/]", "--help", "-rf", "../../outside", "line one\nline two", "tab\there", "zero\u200bwidth",
             "rtl \u202eevil.md", "emoji 🧭", "quote \" and backslash \\", "Zoë", "A/B testing notes"]


@pytest.fixture
def servers():
    started = []
    yield started
    for server in started:
        server.stop()


@pytest.fixture
def gateway(tmp_path: Path, servers):
    folder = tmp_path / "server"
    folder.mkdir()
    server = start_gateway(folder / "memory.jsonl")
    servers.append(server)
    return server


def _server_view(url: str, reader: Client | None = None) -> dict:
    """The server's own ``read_graph``: on ``reader`` (an outside session the test keeps open), or
    on a session of its own (a stateful gateway starts a server process for each session)."""
    if reader is not None:
        return reader.call_tool("read_graph", {})
    with Client(Endpoint(url)) as client:
        return client.call_tool("read_graph", {})


def _server_call(url: str, tool: str, **arguments):
    with Client(Endpoint(url)) as client:
        return client.call_tool(tool, arguments)


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    return ws


@pytest.mark.slow
def test_every_curation_memtui_sends_is_what_the_servers_own_read_graph_returns(tmp_path: Path, gateway) -> None:
    ws = _workspace(tmp_path)
    remote = rg.RemoteGraph(Endpoint(gateway.url))
    ops: list[g.Operation] = [g.CreateEntity(n, "test-name", (f"about {i} [b]x[/b]", "ünïcödé")) for i, n in enumerate(B17_NAMES)]
    ops += [g.CreateRelation("[/]", "--help", "links [to]"), g.CreateRelation("Zoë", "-rf", "knows"),
            g.CreateRelation("-rf", "emoji 🧭", "knows"), g.AddObservation("-rf", "second"),
            g.EditObservation("Zoë", "ünïcödé", "edited"), g.DeleteObservation("[/]", "ünïcödé"),
            g.RenameEntity("A/B testing notes", "A/B notes"), g.CreateRelation("A/B notes", "[/]", "r"),
            g.Retype(("test-name",), "TestName"), g.MergeEntities(("Zoë",), "emoji 🧭"),
            g.DeleteRelation("[/]", "--help", "links [to]"), g.DeleteEntity("--help")]
    # the outside reader: a session of its own, kept open for the whole sequence
    with Session.open(ws, purpose="test") as session, Client(Endpoint(gateway.url)) as reader:
        graph = remote.load()
        for op in ops:
            saved = remote.save(graph, op, session=session)
            assert saved.written, op
            graph = saved.graph
            # the server's own read_graph holds exactly what memtui says it wrote
            assert _server_view(gateway.url, reader) == g.server_view(graph), op
        # the server's file is one memtui reads identically
        assert g.server_view(g.load(gateway.file)) == _server_view(gateway.url, reader)
        undo_entry = session.audit.entries(newest_first=False)[-1]
    remote.close()
    names = {e["name"] for e in _server_view(gateway.url)["entities"]}
    assert "A/B notes" in names and "Zoë" not in names and "--help" not in names
    assert "alias: Zoë" in next(e for e in _server_view(gateway.url)["entities"] if e["name"] == "emoji 🧭")["observations"]
    assert undo_entry.target == gateway.url  # the audit names the remote, without any token


def test_what_the_server_wrote_is_curated_without_a_lost_line(tmp_path: Path, gateway) -> None:
    _server_call(gateway.url, "create_entities", entities=[
        {"name": n, "entityType": "test-name", "observations": [f"about {n}"]} for n in B17_NAMES])
    _server_call(gateway.url, "create_relations", relations=[
        {"from": "[/]", "to": "-rf", "relationType": "knows"}, {"from": "Zoë", "to": "-rf", "relationType": "knows"}])
    written = gateway.file.read_bytes().split(b"\n")
    ws = _workspace(tmp_path)
    remote = rg.RemoteGraph(Endpoint(gateway.url))
    with Session.open(ws, purpose="test") as session:
        remote.save(remote.load(), g.AddObservation("-rf", "added by memtui"), session=session)
    remote.close()
    after = gateway.file.read_bytes().split(b"\n")
    changed = [i for i, (a, b) in enumerate(zip(written, after, strict=False)) if a != b]
    assert len(written) == len(after) and len(changed) == 1  # only the edited record's line changed
    assert b"added by memtui" in after[changed[0]]


def test_an_agent_write_in_between_stops_the_edit_with_the_difference(tmp_path: Path, gateway) -> None:
    _server_call(gateway.url, "create_entities", entities=[{"name": "Ada", "entityType": "person", "observations": []}])
    ws = _workspace(tmp_path)
    remote = rg.RemoteGraph(Endpoint(gateway.url))
    loaded = remote.load()
    _server_call(gateway.url, "add_observations", observations=[{"entityName": "Ada", "contents": ["agent fact"]}])
    with Session.open(ws, purpose="test") as session, pytest.raises(g.GraphConflictError) as caught:
        remote.save(loaded, g.RenameEntity("Ada", "Ada L."), session=session)
    remote.close()
    assert "agent fact" in caught.value.diff and "Ada" in str(caught.value)
    names = [e["name"] for e in _server_view(gateway.url)["entities"]]
    assert names == ["Ada"]  # nothing was sent
    # an edit of another entity is not stopped by that agent write
    _server_call(gateway.url, "create_entities", entities=[{"name": "Bob", "entityType": "person", "observations": []}])
    loaded = remote.load()
    _server_call(gateway.url, "add_observations", observations=[{"entityName": "Ada", "contents": ["more"]}])
    with Session.open(ws, purpose="test") as session:
        assert remote.save(loaded, g.AddObservation("Bob", "x"), session=session).written
    remote.close()


def test_a_server_killed_mid_sequence_is_reported_and_resumed(tmp_path: Path, gateway, servers) -> None:
    _server_call(gateway.url, "create_entities", entities=[
        {"name": n, "entityType": "t", "observations": [n]} for n in ("a", "b", "c")])
    _server_call(gateway.url, "create_relations", relations=[{"from": "a", "to": "b", "relationType": "r"},
                                                              {"from": "c", "to": "a", "relationType": "r"}])
    ws = _workspace(tmp_path)
    remote = rg.RemoteGraph(Endpoint(gateway.url, timeout=5))

    def kill_before_the_delete(index: int, step: rg.Step) -> None:
        if step.tool == "delete_entities":
            gateway.stop()

    remote.on_step = kill_before_the_delete
    with Session.open(ws, purpose="test") as session:
        with pytest.raises(rg.RemoteSequenceError) as caught:
            remote.save(remote.load(), g.RenameEntity("a", "A"), session=session)
        message = str(caught.value)
        assert "applied 2 of 3 steps" in message and "not applied: delete 1 entity" in message
        assert "memtui graph resume" in message
        record = remote.pending(session)
        assert record is not None and record["state"] == "failed" and record["applied"] == 2
        actions = [e.action for e in session.audit.entries(newest_first=False)]
        assert actions[-2:] == ["graph.rename-entity", "graph.remote-sequence"]
        # the server comes back; the sequence is finished from where it stopped
        servers.append(start_gateway(gateway.file, port=gateway.port))
        remote.on_step = None
        summary, sent = remote.resume(session)
        assert sent == 1 and summary.startswith("finished")
        assert remote.pending(session) is None
    remote.close()
    view = _server_view(gateway.url)
    assert sorted(e["name"] for e in view["entities"]) == ["A", "b", "c"]
    assert sorted(rg._triple(r) for r in view["relations"]) == [("A", "b", "r"), ("c", "A", "r")]


def test_an_interrupted_sequence_can_be_undone(tmp_path: Path, gateway, servers) -> None:
    _server_call(gateway.url, "create_entities", entities=[
        {"name": "a", "entityType": "t", "observations": ["one"]}, {"name": "b", "entityType": "t", "observations": []}])
    _server_call(gateway.url, "create_relations", relations=[{"from": "a", "to": "b", "relationType": "r"}])
    before = _server_view(gateway.url)
    ws = _workspace(tmp_path)
    remote = rg.RemoteGraph(Endpoint(gateway.url, timeout=5))
    remote.on_step = lambda index, step: gateway.stop() if step.tool == "delete_entities" else None
    with Session.open(ws, purpose="test") as session:
        with pytest.raises(rg.RemoteSequenceError):
            remote.save(remote.load(), g.MergeEntities(("a",), "b"), session=session)
        servers.append(start_gateway(gateway.file, port=gateway.port))
        remote.on_step = None
        summary, _sent = remote.resume(session, undo=True)
        assert summary.startswith("undid")
    remote.close()
    after = _server_view(gateway.url)
    assert sorted(map(json.dumps, after["entities"])) == sorted(map(json.dumps, before["entities"]))
    assert after["relations"] == before["relations"]


def test_an_expired_session_is_opened_again_once(gateway) -> None:
    import httpx

    with Client(Endpoint(gateway.url)) as client:
        client.call_tool("read_graph", {})
        assert client.era == "legacy" and client.session_id
        httpx.delete(gateway.url, headers={"Mcp-Session-Id": client.session_id})  # the server forgets it
        assert client.call_tool("read_graph", {}) == {"entities": [], "relations": []}
        assert client.reinitialised == 1


def test_the_sdk_server_is_spoken_to_in_the_modern_era(tmp_path: Path, servers) -> None:
    server = start_token_server(tmp_path / "g.jsonl", token=None)
    servers.append(server)
    with Client(Endpoint(server.url)) as client:
        client.call_tool("create_entities", {"entities": [{"name": "x", "entityType": "t", "observations": []}]})
        assert client.era == "modern" and client.session_id is None
        assert client.call_tool("read_graph", {})["entities"][0]["name"] == "x"


def _memtui(args: list[str], env: dict, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "memtui"), *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=120)


def _keyring_env(tmp_path: Path) -> dict:
    """A real file keyring for a headless machine: keyrings.alt's plain file, which memtui
    refuses unless told, as here, that the risk is accepted (a test's throwaway token)."""
    env = dict(os.environ, PYTHON_KEYRING_BACKEND="keyrings.alt.file.PlaintextKeyring",
               MEMTUI_ALLOW_PLAINTEXT_KEYRING="1",
               XDG_DATA_HOME=str(tmp_path / "xdg-data"), HOME=str(tmp_path / "home"))
    env.pop("MEMTUI_GRAPH_TOKEN", None)
    return env


def test_a_token_from_the_keyring_works_and_wrong_or_missing_ones_say_which_key_to_set(tmp_path: Path, servers) -> None:
    token = "tok-" + os.urandom(12).hex()
    server = start_token_server(tmp_path / "g.jsonl", token=token)
    servers.append(server)
    ws = _workspace(tmp_path)
    env = _keyring_env(tmp_path)
    outputs = []
    missing = _memtui(["graph", "entities", "-w", str(ws), "--remote", server.url], env)
    outputs.append(missing)
    assert missing.returncode == 4 and "Traceback" not in missing.stderr
    assert "sent none" in missing.stderr and "memtui secret set graph-token" in missing.stderr
    stored = _memtui(["secret", "set", "graph-token"], env, stdin="wrong-" + token[:6] + "\n")
    assert stored.returncode == 0, stored.stderr
    wrong = _memtui(["graph", "entities", "-w", str(ws), "--remote", server.url], env)
    outputs.append(wrong)
    assert wrong.returncode == 4 and "refused the token" in wrong.stderr and "graph-token" in wrong.stderr
    assert _memtui(["secret", "set", "graph-token"], env, stdin=token + "\n").returncode == 0
    for args in (["create", "Ada", "person", "first"], ["add-observation", "Ada", "second"],
                 ["rename", "Ada", "Ada L."], ["entities", "--json"], ["check"], ["show", "Ada L."]):
        done = _memtui(["graph", args[0], "-w", str(ws), "--remote", server.url, *args[1:]], env)
        outputs.append(done)
        assert done.returncode == 0, done.stderr
    assert json.loads(outputs[-3].stdout)["entities"][0]["name"] == "Ada L."
    # the token appears nowhere but in the Authorization header
    for done in outputs:
        assert token not in done.stdout and token not in done.stderr
    for path in ws.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path
    log = _memtui(["log", "-w", str(ws), "--json"], env)
    assert log.returncode == 0 and token not in log.stdout and server.url in log.stdout


def test_the_memory_block_of_config_json_is_read_in_place(tmp_path: Path, servers) -> None:
    token = "blk-" + os.urandom(12).hex()
    server = start_token_server(tmp_path / "g.jsonl", token=token)
    servers.append(server)
    ws = _workspace(tmp_path)
    block = {"tools": {"mcp": {"enabled": True, "servers": {BLOCK: {
        "enabled": True, "type": "http", "url": server.url, "headers": {"Authorization": f"Bearer {token}"}}}}}}
    (ws / "config.json").write_text(json.dumps(block), encoding="utf-8")
    env = _keyring_env(tmp_path)
    created = _memtui(["graph", "create", "-w", str(ws), "Ada", "person"], env)
    assert created.returncode == 0, created.stderr
    assert _server_view_with(server.url, token)["entities"][0]["name"] == "Ada"
    assert token.encode() not in (ws / ".memtui" / "store.json").read_bytes()
    block["tools"]["mcp"]["servers"][BLOCK]["headers"]["Authorization"] = "Bearer revoked"
    (ws / "config.json").write_text(json.dumps(block), encoding="utf-8")
    refused = _memtui(["graph", "entities", "-w", str(ws)], env)
    assert refused.returncode == 4 and "config.json" in refused.stderr and "revoked" not in refused.stderr


BLOCK = rg.BLOCK_NAME


def _server_view_with(url: str, token: str) -> dict:
    with Client(Endpoint(url, token=token)) as client:
        return client.call_tool("read_graph", {})


def test_a_slow_answer_past_the_timeout_is_a_sentence(tmp_path: Path, servers) -> None:
    server = start_token_server(tmp_path / "g.jsonl", token=None, slow="read_graph:5")
    servers.append(server)
    ws = _workspace(tmp_path)
    (ws / "memtui.toml").write_text(f'[graph]\nremote = "{server.url}"\ntimeout = 0.5\n', encoding="utf-8")
    done = _memtui(["graph", "entities", "-w", str(ws)], dict(os.environ))
    assert done.returncode == 4 and "did not answer within 0.5 s" in done.stderr and "[graph] timeout" in done.stderr
    with pytest.raises(McpTimeout):
        rg.RemoteGraph(Endpoint(server.url, timeout=0.5)).load()


@pytest.mark.parametrize("mode, kind, words", [
    ("none", McpUnreachable, "no MCP route"), ("boom", McpServerError, "HTTP 500"),
    ("malformed", McpServerError, "malformed"), ("missing", McpToolMissing, "has no tool open_nodes"),
    ("cut", McpServerError, "ended without an answer")])
def test_faults_are_sentences(mode: str, kind: type, words: str) -> None:
    fault = FaultServer(mode)
    try:
        with pytest.raises(kind) as caught:
            rg.RemoteGraph(Endpoint(fault.url, token="secret-token")).load()
        assert words in str(caught.value) and "secret-token" not in str(caught.value)
    finally:
        fault.stop()


def test_no_route_from_the_cli_exits_4_without_a_traceback(tmp_path: Path) -> None:
    fault = FaultServer("none")
    try:
        done = _memtui(["graph", "entities", "-w", str(_workspace(tmp_path)), "--remote", fault.url], dict(os.environ))
    finally:
        fault.stop()
    assert done.returncode == 4 and "CRAB_MCP_TOKEN_SECRET" in done.stderr and "Traceback" not in done.stderr


def test_semantic_search_is_used_and_shown_when_the_server_lists_it(tmp_path: Path, servers) -> None:
    server = start_token_server(tmp_path / "g.jsonl", token=None, semantic=True)
    servers.append(server)
    _server_call(server.url, "create_entities", entities=[
        {"name": "harbour", "entityType": "place", "observations": ["ships dock here"]},
        {"name": "Ada", "entityType": "person", "observations": ["writes programs"]}])
    ws = _workspace(tmp_path)
    done = _memtui(["graph", "search", "-w", str(ws), "--remote", server.url, "--semantic", "ships at sea"],
                   dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert "semantic matches" in done.stdout and "harbour" in done.stdout and "Ada" not in done.stdout
    plain = _memtui(["graph", "search", "-w", str(ws), "--remote", server.url, "PROGRAM"], dict(os.environ))
    assert "search_nodes" in plain.stdout and "Ada" in plain.stdout


def test_the_same_findings_on_a_remote_graph_as_on_the_same_local_file(shared: Path, tmp_path: Path, gateway) -> None:
    source = g.load(shared / "bug-inputs" / "B17" / "memory.jsonl")
    _server_call(gateway.url, "create_entities", entities=[
        {"name": e.name, "entityType": e.entity_type, "observations": list(e.observations)} for e in source.entities])
    _server_call(gateway.url, "create_relations", relations=[
        {"from": r.source, "to": r.target, "relationType": r.relation_type} for r in source.relations])
    remote_graph = rg.RemoteGraph(Endpoint(gateway.url)).load()
    local_graph = g.load(gateway.file)
    codes = sorted((f.code, f.message) for f in audit(remote_graph))
    assert codes and codes == sorted((f.code, f.message) for f in audit(local_graph))


def test_push_then_pull_moves_a_graph_losslessly(shared: Path, tmp_path: Path, gateway) -> None:
    ws = _workspace(tmp_path)
    original = (shared / "bug-inputs" / "B17" / "memory.jsonl").read_bytes()
    (ws / "memory" / "graph.jsonl").write_bytes(original)
    env = dict(os.environ)
    dry = _memtui(["graph", "push", "-w", str(ws), "--remote", gateway.url, "--dry-run"], env)
    assert dry.returncode == 0 and "create_entities" in dry.stdout and _server_view(gateway.url)["entities"] == []
    pushed = _memtui(["graph", "push", "-w", str(ws), "--remote", gateway.url, "--yes"], env)
    assert pushed.returncode == 0, pushed.stderr
    local = g.load(ws / "memory" / "graph.jsonl")
    assert _server_view(gateway.url) == g.server_view(local)
    other = tmp_path / "other"
    (other / "memory").mkdir(parents=True)
    pulled = _memtui(["graph", "pull", "-w", str(other), "--remote", gateway.url, "--yes"], env)
    assert pulled.returncode == 0, pulled.stderr
    assert g.server_view(g.load(other / "memory" / "graph.jsonl")) == g.server_view(local)
    again = _memtui(["graph", "push", "-w", str(other), "--remote", gateway.url, "--yes"], env)
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_a_retried_client_id_is_not_sent_twice(tmp_path: Path, gateway) -> None:
    ws = _workspace(tmp_path)
    args = ["graph", "add-observation", "-w", str(ws), "--remote", gateway.url, "--client-id", "req-1"]
    assert _memtui(["graph", "create", "-w", str(ws), "--remote", gateway.url, "Ada", "person"],
                   dict(os.environ)).returncode == 0
    first = _memtui([*args, "Ada", "fact"], dict(os.environ))
    again = _memtui([*args, "Ada", "fact"], dict(os.environ))
    assert first.returncode == 0 and again.returncode == 0 and "already done" in again.stdout
    other = _memtui([*args, "Ada", "another"], dict(os.environ))
    assert other.returncode == 1 and "client id" in other.stderr


def test_provenance_follows_a_remote_edit_and_its_undo(tmp_path: Path, gateway) -> None:
    """The remote save moves provenance records with a rename and an observation edit, records
    the ones the edit brings in, and its undo puts them back, as the local file's save does (one
    rule: :func:`memtui.core.graph.provenance.follow_edit`)."""
    from memtui.core.graph.provenance import Provenance, ProvenanceBook

    _server_call(gateway.url, "create_entities", entities=[
        {"name": "Ada", "entityType": "person", "observations": ["wrote notes"]}])
    ws = _workspace(tmp_path)
    remote = rg.RemoteGraph(Endpoint(gateway.url))
    came = Provenance("Ada", "wrote notes", "s-1", "2026-11-02T09:15:44Z", 3, "agent")
    added = Provenance("Ada", "met Babbage", "s-2", "2026-11-03T10:00:00Z", None, "memtui")
    with Session.open(ws, purpose="test") as session:
        session.write("test.seed", "provenance", lambda tx: (tx.table("provenance"),
                                                              ProvenanceBook(tx.session.store).record(came)))
        graph = remote.load()
        graph = remote.save(graph, g.AddObservation("Ada", "met Babbage"), session=session,
                            provenance=[added]).graph
        graph = remote.save(graph, g.EditObservation("Ada", "wrote notes", "wrote the first program"),
                            session=session).graph
        before_rename = graph
        renamed = remote.save(graph, g.RenameEntity("Ada", "Ada Lovelace"), session=session)
        book = ProvenanceBook(session.store).grouped()
        assert "Ada" not in book
        assert [p.session for p in book["Ada Lovelace"]["wrote the first program"]] == ["s-1"]
        assert [p.session for p in book["Ada Lovelace"]["met Babbage"]] == ["s-2"]
        # the undo of the rename (a Restore) gives the records their name back
        remote.save(renamed.graph, g.Restore(before_rename, renamed.graph.source_sha256, "undid: rename",
                                             renamed.provenance_undo), session=session)
        book = ProvenanceBook(session.store).grouped()
        assert "Ada Lovelace" not in book
        assert sorted(book["Ada"]) == ["met Babbage", "wrote the first program"]
    remote.close()
