"""Graph writes and the write discipline: lock, audit log, client ids, provenance (seed 004).

Also: ``memtui audit`` includes the graph's findings, and every command survives a reader
that closes the pipe early (``memtui graph list --json | head``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core import audit as audit_mod
from memtui.core import graph as g
from memtui.core.auditlog import AuditLog, ClientIdConflict
from memtui.core.errors import ConfinementError, ReadOnlyError
from memtui.core.graph.provenance import Provenance, ProvenanceBook, session_position
from memtui.core.session import Session
from memtui.core.store import Store
from memtui.core.workspace import Workspace

REPO = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def ws(sample_copy: Path) -> Path:
    """The sample workspace (its graph breaks each of seed 002's rules; it has session histories)."""
    return sample_copy


def _graph(ws: Path) -> Path:
    return ws / "memory" / "graph.jsonl"


def _entries(ws: Path) -> list:
    store = Store.open(ws, read_only=True)
    try:
        return [e for e in AuditLog(store).entries(newest_first=False) if e.action.startswith("graph.")]
    finally:
        store.close()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_cli_write_leaves_one_audit_entry_with_hashes(ws: Path, capsys) -> None:
    before = _sha(_graph(ws))
    code, out, err = run(capsys, "graph", "add-observation", "-w", str(ws), "--json", "RouteCore", "checked by hand")
    assert code == 0, err
    result = json.loads(out)
    assert result["written"] and not result["retried"]
    [entry] = _entries(ws)
    assert entry.action == "graph.add-observation" and entry.target == "memory/graph.jsonl"
    assert entry.before == before and entry.after == _sha(_graph(ws)) != before
    assert entry.detail["operation"] == {"operation": "AddObservation", "entity": "RouteCore", "text": "checked by hand"}
    assert result["audit_entry"]["id"] == entry.id


def test_retried_client_id_is_not_applied_twice(ws: Path, capsys) -> None:
    argv = ("graph", "rename", "-w", str(ws), "--client-id", "req-7", "RouteCore", "Route Core")
    assert run(capsys, *argv)[0] == 0
    after_first = _graph(ws).read_bytes()
    code, out, err = run(capsys, *argv)  # the caller timed out and sends the same request again
    assert code == 0, err
    assert "already done" in out
    assert _graph(ws).read_bytes() == after_first
    assert len(_entries(ws)) == 1
    # the same id for another change is a conflict: exit 1, nothing written, the entry stays
    code, _out, err = run(capsys, "graph", "rename", "-w", str(ws), "--client-id", "req-7", "DepotScan", "Depot")
    assert code == 1 and "req-7" in err and "nothing was written" in err
    assert _graph(ws).read_bytes() == after_first
    assert [e.client_id for e in _entries(ws)] == ["req-7"]


def test_an_open_tui_session_does_not_block_a_graph_command(ws: Path) -> None:
    holder = Session.open(ws, purpose="tui")
    try:
        assert not holder.read_only
        done = subprocess.run([sys.executable, "-m", "memtui", "graph", "rename", "-w", str(ws), "RouteCore", "X"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                              cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode == 0, done.stderr
        assert holder.audit.entries()[0].action == "graph.rename-entity", "the TUI sees it at once"
    finally:
        holder.close()
    assert b'"name":"X"' in _graph(ws).read_bytes()


def test_a_damaged_store_refuses_a_graph_command_with_exit_3(ws: Path) -> None:
    original = _graph(ws).read_bytes()
    (ws / ".memtui").mkdir(exist_ok=True)
    (ws / ".memtui" / "store.json").write_bytes(b'{"audit": {"1": {')
    done = subprocess.run([sys.executable, "-m", "memtui", "graph", "rename", "-w", str(ws), "RouteCore", "X"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 3, done.stderr
    assert "refused" in done.stderr and "damaged" in done.stderr
    assert _graph(ws).read_bytes() == original


def test_commit_refuses_a_read_only_session_and_a_file_outside(ws: Path, tmp_path: Path) -> None:
    path = _graph(ws)
    original = path.read_bytes()
    with Session.open(ws, read_only=True) as session, pytest.raises(ReadOnlyError):
        g.commit(path, g.load(path), g.AddObservation("RouteCore", "x"), session=session)
    assert path.read_bytes() == original
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(original)
    with Session.open(ws) as session:
        with pytest.raises(ConfinementError):
            g.commit(outside, g.load(outside), g.AddObservation("RouteCore", "x"), session=session)
        with pytest.raises(ClientIdConflict):
            g.commit(path, g.load(path), g.AddObservation("RouteCore", "x"), session=session, client_id="a")
            g.commit(path, g.load(path), g.AddObservation("RouteCore", "y"), session=session, client_id="a")
    assert outside.read_bytes() == original
    assert [e.detail["operation"]["text"] for e in _entries(ws)] == ["x"]


def test_provenance_recorded_by_the_cli_follows_rename_and_edit(ws: Path, capsys) -> None:
    key = "tg-4411-2026-11-02"
    code, _out, err = run(capsys, "graph", "add-observation", "-w", str(ws), "--session", key,
                          "--session-line", "3", "RouteCore", "reroutes on snow days")
    assert code == 0, err
    assert run(capsys, "graph", "rename", "-w", str(ws), "RouteCore", "Route Core")[0] == 0
    assert run(capsys, "graph", "edit-observation", "-w", str(ws), "Route Core", "reroutes on snow days",
               "reroutes on snow and ice days")[0] == 0
    code, out, _err = run(capsys, "graph", "show", "-w", str(ws), "--json", "Route Core")
    [item] = json.loads(out)["provenance"]["reroutes on snow and ice days"]
    assert item["session"] == key and item["line"] == 3 and item["source"] == "memtui"
    code, out, _err = run(capsys, "graph", "show", "-w", str(ws), "Route Core")
    assert f"from session {key}" in out and "line 3" in out
    # the place to open: the session history at that line
    path, line = session_position(ws, Provenance("Route Core", "x", key, item["at"], item["line"]))
    assert path == ws / "sessions" / "durable" / f"{key}.jsonl" and line == 3


def test_bad_session_key_is_a_usage_error_and_nothing_is_written(ws: Path, capsys) -> None:
    original = _graph(ws).read_bytes()
    code, _out, err = run(capsys, "graph", "add-observation", "-w", str(ws), "--session", "../etc/passwd",
                          "RouteCore", "x")
    assert code == 2 and "session key" in err
    assert _graph(ws).read_bytes() == original


def test_undo_puts_provenance_back(ws: Path) -> None:
    path = _graph(ws)
    with Session.open(ws) as session:
        saved = g.commit(path, g.load(path), g.AddObservation("RouteCore", "fact"), session=session,
                         provenance=[Provenance("RouteCore", "fact", "tg-1", "2026-11-02T09:00:00Z", 2, "memtui")])
        before = saved.graph
        renamed = g.commit(path, before, g.RenameEntity("RouteCore", "RC"), session=session)
        book = ProvenanceBook(session.store)
        assert book.of_observation("RC", "fact") and not book.of_observation("RouteCore", "fact")
        g.commit(path, renamed.graph, g.Restore(before, renamed.graph.source_sha256,
                                                provenance_undo=renamed.provenance_undo), session=session)
        assert book.of_observation("RouteCore", "fact") and not book.of_observation("RC", "fact")
        assert path.read_bytes() == before.to_bytes()
    assert [e.action for e in _entries(ws)] == ["graph.add-observation", "graph.rename-entity", "graph.restore"]


def test_memtui_audit_includes_graph_findings(ws: Path, tmp_path: Path) -> None:
    from memtui.core.graph.audit import audit

    report = audit_mod.run(Workspace.open(ws), parallel=False)
    expected = audit(g.load(_graph(ws), "memory/graph.jsonl"))
    assert expected  # the sample graph breaks seed 002's rules
    got = [f for f in report.findings if f.path == "memory/graph.jsonl"]
    assert sorted(map(repr, got)) == sorted(map(repr, expected))
    _graph(ws).unlink()
    report = audit_mod.run(Workspace.open(ws), parallel=False)
    assert not [f for f in report.findings if f.code.startswith("graph-")]


def test_audit_does_not_follow_a_graph_link_outside(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    shutil.move(_graph(ws), outside)
    _graph(ws).symlink_to(outside)
    from memtui.core.graph.backend import workspace_findings

    [finding] = workspace_findings(Workspace.open(ws))
    assert finding.code == "symlink-outside"


def test_a_reader_that_closes_the_pipe_early_is_not_an_error(tmp_path: Path) -> None:
    root = tmp_path / "big"
    (root / "memory").mkdir(parents=True)
    lines = [json.dumps({"type": "entity", "name": f"entity {i}", "entityType": "thing", "observations": ["o"]})
             for i in range(4000)]  # --json output far over a pipe buffer (64 KiB)
    (root / "memory" / "graph.jsonl").write_text("\n".join(lines) + "\n")
    for argv in (["graph", "list", "--json"], ["graph", "export"], ["audit", "--json"]):
        proc = subprocess.Popen([sys.executable, "-m", "memtui", *argv, "-w", str(root)], cwd=REPO,
                                env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.read(100)  # like `head -c 100`
        proc.stdout.close()
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=60)
        assert "Traceback" not in err and "BrokenPipe" not in err, (argv, err)
        assert code in (0, 1), (argv, code)  # audit exits 1 for error findings; never a crash
