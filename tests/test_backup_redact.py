"""The graph's bearer token in the workspace's config.json never reaches the backup (DESIGN.md §4
invariant 8): the backup renders config.json with every Authorization header value left
out and marked, byte for byte otherwise; the redaction is idempotent so the round trip holds;
verify and restore say the restored copy has no token and how to put it back; and no git object of
the backup repository holds the token."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.backup import redact, render as rd
from memtui.core.backup.restore import restore_tree
from memtui.core.mcp.client import Client, Endpoint
from memtui.core.secrets import LEFT_OUT
from tests.backup_helpers import isolate_git
from tests.remote_servers import start_token_server

CONFIG = b"config.json"


def _jwt() -> str:
    """A token of the proxy's kind (workspace scope plus an HMAC), which no secret detector knows."""
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    return ".".join([part(b'{"alg":"HS256","typ":"JWT"}'), part(json.dumps({"ws": "w-" + os.urandom(4).hex()}).encode()),
                     part(os.urandom(32))])


def _picoclaw(url: str, token: str) -> bytes:
    """A picoclaw-shaped config.json as a person writes it: tabs, an odd key order, a CRLF file."""
    return ('{\r\n\t"agents": {"defaults": {"model": "x"}},\r\n\t"tools": {\r\n\t\t"mcp": {\r\n\t\t\t"enabled": true,'
            '\r\n\t\t\t"servers": {\r\n\t\t\t\t"memory": {"enabled": true, "type": "http", "url": "' + url + '",'
            '\r\n\t\t\t\t\t"headers": {"X-Trace": "keep me", "Authorization" :  "Bearer ' + token + '"}},'
            '\r\n\t\t\t\t"other": {"headers": {"authorization": "Basic ' + token[::-1] + '"}}\r\n\t\t\t}\r\n\t\t}\r\n\t}\r\n}'
            ).encode("utf-8")


def test_every_authorization_value_is_left_out_and_nothing_else_changes() -> None:
    token = _jwt()
    data = _picoclaw("http://127.0.0.1:1/mcp", token)
    out, count = redact.redact(CONFIG, data)
    assert count == 2 and token.encode() not in out and token[::-1].encode() not in out
    marker = json.dumps(LEFT_OUT).encode()
    assert out == data.replace(f'"Bearer {token}"'.encode(), marker).replace(f'"Basic {token[::-1]}"'.encode(), marker)
    assert redact.redact(CONFIG, out) == (out, 2)  # idempotent, and still counted
    assert redact.left_out(CONFIG, out) == 2
    assert redact.redact(b"memory/config.json", data) == (data, 0)  # only the workspace's own config.json


@pytest.mark.parametrize("text", [
    '{"mcpServers": {"memory": {"url": "u", "headers": {"Authoriz\\u0061tion": "Bearer SECRET"}}}}',  # an escaped key
    '{"h": {"Authorization": 42}, "k": {"AUTHORIZATION": ["Bearer SECRET"]}}',  # not strings
    '{"proxy": {"Proxy-Authorization": "Basic SECRET"}}'])
def test_values_the_text_pass_cannot_see_are_left_out_from_the_parsed_form(text: str) -> None:
    out, count = redact.redact(CONFIG, text.encode())
    assert b"SECRET" not in out and count >= 1
    assert redact.redact(CONFIG, out) == (out, count)
    parsed = json.loads(out)
    assert LEFT_OUT in json.dumps(parsed, ensure_ascii=False)


def test_a_config_that_is_not_json_still_loses_its_token() -> None:
    data = b'{ // picoclaw comment\n "headers": {"Authorization": "Bearer SECRET\\"x"}, }\n'
    out, count = redact.redact(CONFIG, data)
    assert count == 1 and b"SECRET" not in out and out.startswith(b"{ // picoclaw comment\n")


def test_the_render_round_trip_holds_with_the_token_left_out(tmp_path: Path) -> None:
    token = _jwt()
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "config.json").write_bytes(_picoclaw("http://127.0.0.1:1/mcp", token))
    first = rd.render(ws)
    assert token.encode() not in first.files[rd.FILES + CONFIG].data and first.left_out == {CONFIG: 2}
    target = tmp_path / "restored"
    restored = restore_tree(first.files, target)
    assert restored.ok and restored.left_out == ["config.json"]
    assert "memtui secret set graph-token" in restored.notes()[0] and "no token" in restored.notes()[0]
    again = rd.render(target)
    assert {p: e.data for p, e in again.files.items()} == {p: e.data for p, e in first.files.items()}


def _memtui(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "memtui"), *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_no_git_object_of_the_backup_holds_the_token_and_restore_says_how_to_put_it_back(
        tmp_path: Path, monkeypatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    token = _jwt()
    server = start_token_server(tmp_path / "g.jsonl", token=token)
    try:
        with Client(Endpoint(server.url, token=token)) as client:
            client.call_tool("create_entities", {"entities": [{"name": "Ada", "entityType": "person",
                                                               "observations": ["writes programs"]}]})
        ws = tmp_path / "ws"
        (ws / "memory").mkdir(parents=True)
        (ws / "memory" / "AGENTS.md").write_text("# root\n", encoding="utf-8")
        (ws / "config.json").write_bytes(_picoclaw(server.url, token))
        env = dict(os.environ, PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
        env.pop("MEMTUI_GRAPH_TOKEN", None)
        repo = tmp_path / "repo"
        for _ in range(2):  # a second backup of an unchanged workspace changes nothing
            done = _memtui(["backup", "-w", str(ws), "--repo", str(repo), "--json"], env)
            assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["changed"] is False
        first = _memtui(["log", "-w", str(ws), "--json"], env)
        assert token not in first.stdout
        verified = _memtui(["verify", "-w", str(ws), "--repo", str(repo)], env)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "zero differences" in verified.stdout and "config.json has no token" in verified.stdout
    finally:
        server.stop()
    # every object of the repository, loose or packed, decompressed
    objects = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True, check=True).stdout
    assert objects and token.encode() not in objects and token[::-1].encode() not in objects
    assert json.dumps(LEFT_OUT).encode() in objects
    target = tmp_path / "restored"
    restored = _memtui(["restore", "-w", str(ws), "--repo", str(repo), "--to", str(target)], env)
    assert restored.returncode == 0, restored.stderr
    assert "note: config.json has no token" in restored.stdout and "memtui secret set graph-token" in restored.stdout
    assert token.encode() not in (target / "config.json").read_bytes()
    # the restored workspace names the remote but has no token, and says why rather than "wrong token"
    server = start_token_server(tmp_path / "g.jsonl", token=token, port=server.port)
    try:
        refused = _memtui(["graph", "entities", "-w", str(target)], env)
        assert refused.returncode == 4 and "came from a backup" in refused.stderr
        assert "memtui secret set graph-token" in refused.stderr
        put_back = _memtui(["graph", "entities", "-w", str(target)], dict(env, MEMTUI_GRAPH_TOKEN=token))
        assert put_back.returncode == 0 and put_back.stdout.startswith("Ada\t")
    finally:
        server.stop()
