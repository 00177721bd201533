"""``memtui graph ...``: output, exit codes, refusals, names starting with '-', damaged files and odd names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core import graph as g


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def ws_odd_names(shared: Path, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    shutil.copyfile(shared / "bug-inputs" / "B17" / "memory.jsonl", root / "memory" / "graph.jsonl")
    return root


@pytest.fixture
def ws_damaged(shared: Path, tmp_path: Path) -> Path:
    root = tmp_path / "ws15"
    (root / "memory").mkdir(parents=True)
    shutil.copyfile(shared / "bug-inputs" / "B15" / "memory.jsonl", root / "memory" / "graph.jsonl")
    return root


def test_delete_names_starting_with_dash_after_double_dash(ws_odd_names: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", None)
    w = str(ws_odd_names)
    code, _out, err = run(capsys, "graph", "delete", "-w", w, "--yes", "-rf")
    assert code == 2 and "go after '--'" in err
    code, _out, err = run(capsys, "graph", "delete", "-w", w, "--", "-rf")
    assert code == 2 and "--yes" in err and "standard input is not a terminal" in err
    assert g.load(ws_odd_names / "memory" / "graph.jsonl").find("-rf")  # refused: nothing changed
    for name in ("-rf", "--help"):
        code, out, _err = run(capsys, "graph", "delete", "-w", w, "--yes", "--", name)
        assert code == 0 and "deleted entity" in out
    graph = g.load(ws_odd_names / "memory" / "graph.jsonl")
    assert not graph.find("-rf") and not graph.find("--help") and len(graph.entities) == 16


def test_rename_to_markup_like_name_and_show_json(ws_odd_names: Path, capsys) -> None:
    w = str(ws_odd_names)
    code, out, _ = run(capsys, "graph", "rename", "-w", w, "--json", "--", "[bold red]urgent[/bold red] fixes", "[/]x")
    assert code == 0 and json.loads(out)["written"] is True
    code, out, _ = run(capsys, "graph", "show", "-w", w, "--json", "--", "[/]")
    data = json.loads(out)
    assert data["records"][0]["name"] == "[/]"
    assert data["outgoing"] == [{"from": "[/]", "to": "A/B testing notes", "relationType": "links [to]", "line": 19}]
    code, out, _ = run(capsys, "graph", "show", "-w", w, "--", "line one\nline two")
    assert code == 0 and out.startswith("line one\\nline two")  # a newline in a name is shown visibly
    code, _out, err = run(capsys, "graph", "show", "-w", w, "nothing-like-it")
    assert code == 1 and "no entity named" in err


def test_check_exit_codes_and_json(ws_damaged: Path, ws_odd_names: Path, capsys) -> None:
    code, out, _ = run(capsys, "graph", "check", "-w", str(ws_damaged), "--json")
    data = json.loads(out)
    assert code == 1  # bad lines are errors
    lines = {f["line"] for f in data["findings"] if f["code"] in ("graph-line-malformed", "graph-record-invalid")}
    assert lines == {5, 6, 7, 9, 12}
    assert data["summary"]["entities"] == 4
    code, out, _ = run(capsys, "graph", "audit", "-w", str(ws_odd_names))
    assert code == 0 and "graph-name-control" in out and "0 errors" in out


def test_edits_and_relations_round_trip_through_the_cli(ws_damaged: Path, capsys) -> None:
    w = str(ws_damaged)
    path = ws_damaged / "memory" / "graph.jsonl"
    before = path.read_bytes()
    assert run(capsys, "graph", "add-observation", "-w", w, "tide-gauge", "calibrated")[0] == 0
    assert run(capsys, "graph", "relate", "-w", w, "port-log", "mentions", "tide-gauge")[0] == 0
    assert run(capsys, "graph", "edit-observation", "-w", w, "tide-gauge", "calibrated", "recalibrated")[0] == 0
    graph = g.load(path)
    assert graph.entity("tide-gauge").observations == ("reads sensor data", "recalibrated")
    assert ("port-log", "tide-gauge", "mentions") in [r.triple for r in graph.relations]
    assert [line.raw for line in graph.lines if line.kind in ("malformed", "invalid", "other")] == [
        raw for raw in before[3:].split(b"\n") if raw and g.parse_line(raw, False, 0).kind in ("malformed", "invalid", "other")]
    code, _, err = run(capsys, "graph", "unrelate", "-w", w, "port-log", "nope", "tide-gauge")
    assert code == 1 and "no relation" in err


def test_repair_keeps_a_backup_of_the_moved_lines(ws_damaged: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", None)
    code, out, _ = run(capsys, "graph", "repair", "-w", str(ws_damaged), "--yes", "--json")
    result = json.loads(out)
    assert code == 0 and result["backup"].startswith(".memtui/backups/")
    backup = (ws_damaged / result["backup"]).read_bytes()
    assert b"cargo-scan" in backup and b"lighthouse" in backup
    assert g.load(ws_damaged / "memory" / "graph.jsonl").bad_lines() == []


def test_merge_retype_export_and_import(tmp_path: Path, capsys) -> None:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    w = str(root)
    assert run(capsys, "graph", "create", "-w", w, "Alice", "Person", "likes tea")[0] == 0
    assert run(capsys, "graph", "create", "-w", w, "alice", "person", "works at ACME")[0] == 0
    code, _, err = run(capsys, "graph", "create", "-w", w, "Alice", "Person")
    assert code == 1 and "already exists" in err
    assert run(capsys, "graph", "relate", "-w", w, "alice", "knows", "Alice")[0] == 0
    code, out, _ = run(capsys, "graph", "merge", "-w", w, "--yes", "Alice", "alice")
    assert code == 0 and "between merged entities dropped" in out  # a note, tense-neutral
    assert run(capsys, "graph", "retype", "-w", w, "--to", "person", "--variants", "PEOPLE")[0] == 0
    graph = g.load(root / "memory" / "graph.jsonl")
    assert [(e.name, e.entity_type, e.observations) for e in graph.entities] == [
        ("Alice", "person", ("likes tea", "works at ACME", "alias: alice"))]
    other = tmp_path / "other.jsonl"
    other.write_text('{"type":"entity","name":"Alice","entityType":"person","observations":["new fact"]}\n'
                     '{"type":"entity","name":"Bob","entityType":"person","observations":[]}\n'
                     '{"type":"relation","from":"Bob","to":"Alice","relationType":"knows"}\n', encoding="utf-8")
    code, out, _ = run(capsys, "graph", "import", "-w", w, str(other))
    assert code == 0 and "imported 1 new entity" in out
    code, out, _ = run(capsys, "graph", "export", "-w", w, "--format", "dot")
    assert 'n1 -> n0 [label="knows"];' in out
    code, out, _ = run(capsys, "graph", "export", "-w", w, "--format", "jsonl")
    assert [json.loads(x)["type"] for x in out.splitlines()] == ["entity", "entity", "relation"]


def test_graph_symlinked_outside_is_refused(tmp_path: Path, capsys) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text("", encoding="utf-8")
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "graph.jsonl").symlink_to(outside)
    code, _, err = run(capsys, "graph", "create", "-w", str(root), "x", "t")
    assert code == 3 and "outside the workspace" in err
    assert outside.read_text(encoding="utf-8") == ""
