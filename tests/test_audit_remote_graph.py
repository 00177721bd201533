"""`memtui audit` covers a remote graph like a local one: its findings (graph rules and
secrets) in the report and the exit code, read live within the configured timeout; from the
last read kept when offline (`--offline`) or when the remote cannot be read, and said so.

Real parts: the npm memory server behind supergateway (tests/remote_servers.py)."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core import audit
from memtui.core.mcp.client import Client, Endpoint
from memtui.core.scan import secrets
from memtui.core.workspace import Workspace
from tests.remote_servers import start_gateway


def _key() -> str:
    rng = random.Random(11)
    return "sk-ant-api03-" + "".join(rng.choice(string.ascii_letters + string.digits + "_-") for _ in range(93)) + "AA"


@pytest.fixture
def remote(tmp_path: Path):
    """A real memory server holding a graph with a type variant and a key in an observation,
    and a workspace whose memtui.toml names it."""
    folder = tmp_path / "server"
    folder.mkdir()
    server = start_gateway(folder / "memory.jsonl")
    try:
        with Client(Endpoint(server.url)) as client:
            client.call_tool("create_entities", {"entities": [
                {"name": "Ada", "entityType": "Person", "observations": [f"api key {_key()}"]},
                {"name": "Grace", "entityType": "person", "observations": ["admiral"]}]})
            client.call_tool("create_relations", {"relations": [{"from": "Ada", "to": "Grace", "relationType": "knows"}]})
        ws = tmp_path / "ws"
        (ws / "memory").mkdir(parents=True)
        (ws / "memory" / "AGENTS.md").write_text("---\nowner: root.owner\n---\n# Root\n", encoding="utf-8")
        (ws / "memtui.toml").write_text(f'[graph]\nremote = "{server.url}"\ntimeout = 10\n', encoding="utf-8")
        yield ws, server
    finally:
        server.stop()


def _audit(ws: Path, *extra: str) -> tuple[int, dict, str]:
    done = subprocess.run([sys.executable, "-m", "memtui", "audit", "-w", str(ws), "--json", *extra],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def _remote_findings(report: dict, url: str) -> list[dict]:
    return [f for f in report["findings"] if f["path"] == url]


def test_the_audit_reads_the_remote_graph_and_its_findings_set_the_exit_code(remote) -> None:
    ws, server = remote
    code, report, _ = _audit(ws)
    found = _remote_findings(report, server.url)
    codes = {f["code"] for f in found}
    assert {"graph-type-variants", "secret"} <= codes, found
    secret = next(f for f in found if f["code"] == "secret")
    assert secrets.mask(_key()) in secret["message"] and _key() not in json.dumps(report)
    assert secret["line"] == 1  # the record's position in the server's order, as `graph check` numbers it
    assert code == 1  # the secret is an error finding
    assert "graph-remote-cached" not in codes


def test_offline_and_unreachable_audits_use_the_last_read_and_say_so(remote) -> None:
    ws, server = remote
    live_code, live, _ = _audit(ws)
    server.stop()
    for extra in ((), ("--offline",)):
        code, report, _ = _audit(ws, *extra)
        found = _remote_findings(report, server.url)
        note = [f for f in found if f["code"] == "graph-remote-cached"]
        assert len(note) == 1 and "as of" in note[0]["message"]
        if extra:
            assert "offline" in note[0]["message"]
        else:
            assert "could not be read" in note[0]["message"]
        same = sorted((f["code"], f["line"], f["message"]) for f in found if f["code"] != "graph-remote-cached")
        assert same == sorted((f["code"], f["line"], f["message"]) for f in _remote_findings(live, server.url))
        assert code == live_code == 1


def test_with_no_read_kept_the_audit_says_the_remote_graph_was_not_audited(remote, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    ws, server = remote
    monkeypatch.setenv("MEMTUI_CACHE_DIR", str(tmp_path / "empty-cache"))
    report = audit.run(Workspace.open(ws), offline=True)
    found = [f for f in report.findings if f.path == server.url]
    assert [f.code for f in found] == ["graph-remote-unread"]
    assert "offline" in found[0].message and "memtui audit" in found[0].fix
    assert found[0].severity.value == "warning"


def test_a_secret_of_the_remote_graph_opens_in_the_graph_area(tmp_path: Path) -> None:
    from memtui.core.findings import Finding
    from memtui.ui.screens.audit import area_of

    (tmp_path / "memory").mkdir()
    ws = Workspace.open(tmp_path)
    finding = Finding.make("secret", "https://proxy.example/v1/mcp", "holds what looks like a secret", line=3)
    assert area_of(ws, finding) == "graph"


def test_a_false_positive_in_the_remote_graph_is_allowed_like_a_local_one(remote) -> None:
    ws, server = remote
    code, _report, _ = _audit(ws)
    assert code == 1
    done = subprocess.run([sys.executable, "-m", "memtui", "audit", "-w", str(ws), "allow", "secret", f"{server.url}:1",
                           "--reason", "a test key of the vendor's documentation", "--as", "root.owner"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    code, report, _ = _audit(ws)
    assert "secret" not in {f["code"] for f in report["findings"]} and report["allowed"] == 1
    assert code == 0


async def test_the_tuis_audits_read_the_remote_graph_only_on_re_audit(tmp_path: Path) -> None:
    """The audits that follow start-up and file changes read no network; Re-audit (Ctrl+R) does."""
    from memtui.ui.app import MemtuiApp
    from tests.conftest import wait_for
    from tests.remote_servers import free_port

    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "AGENTS.md").write_text("---\nowner: root.owner\n---\n# Root\n", encoding="utf-8")
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens: a live read fails at once
    (root / "memtui.toml").write_text(f'[graph]\nremote = "{url}"\ntimeout = 5\n', encoding="utf-8")
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None)
        first = app.report
        [unread] = [f for f in first.findings if f.path == url]
        assert unread.code == "graph-remote-unread" and "offline" in unread.message
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.report is not first, what="the re-audit")
        [live] = [f for f in app.report.findings if f.path == url]
        assert live.code == "graph-remote-unread" and "could not be read" in live.message
