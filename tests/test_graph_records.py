"""Duplicate records of one name are edited as selected: an edit of the
second record changes the second, one record can be deleted, and names equal after Unicode
normalisation and self-relations are findings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from memtui.core import graph as g
from memtui.core.graph.audit import audit
from tests.conftest import REPO

A1 = {"type": "entity", "name": "Dup", "entityType": "t", "observations": ["one"]}
A2 = {"type": "entity", "name": "Dup", "entityType": "t", "observations": ["two"]}
A3 = {"type": "entity", "name": "Dup", "entityType": "t", "observations": ["three"]}
REL = {"type": "relation", "from": "Dup", "to": "Other", "relationType": "uses"}
OTHER = {"type": "entity", "name": "Other", "entityType": "t", "observations": []}


def _file(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "memory" / "graph.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("pick", [0, 1, 2])
def test_an_edit_of_the_selected_record_changes_that_record_only(tmp_path: Path, graph_session, pick: int) -> None:
    path = _file(tmp_path, A1, A2, A3, OTHER, REL)
    graph = g.load(path, "memory/graph.jsonl")
    chosen = graph.find("Dup")[pick]
    key = graph.record_key(chosen)
    g.commit(path, graph, g.AddObservation("Dup", "added", key), session=graph_session)
    after = _records(path)
    assert [("added" in r["observations"]) for r in after[:3]] == [i == pick for i in range(3)]
    text = chosen.observations[0]
    graph = g.load(path, "memory/graph.jsonl")
    key = graph.record_key(graph.find("Dup")[pick])
    g.commit(path, graph, g.EditObservation("Dup", text, text + "!", key), session=graph_session)
    assert _records(path)[pick]["observations"][0] == text + "!"
    graph = g.load(path, "memory/graph.jsonl")
    key = graph.record_key(graph.find("Dup")[pick])
    g.commit(path, graph, g.DeleteObservation("Dup", "added", key), session=graph_session)
    assert [r["observations"] for r in _records(path)[:3]] == [
        [o + ("!" if i == pick else "")] for i, o in enumerate(["one", "two", "three"])]


def test_without_a_record_edits_keep_the_server_s_meaning(tmp_path: Path, graph_session) -> None:
    path = _file(tmp_path, A1, A2)
    g.commit(path, g.load(path), g.AddObservation("Dup", "x"), session=graph_session)
    assert [r["observations"] for r in _records(path)] == [["one", "x"], ["two"]]


def test_one_record_of_a_duplicate_is_deleted_and_relations_stay(tmp_path: Path, graph_session) -> None:
    path = _file(tmp_path, A1, A2, OTHER, REL)
    graph = g.load(path)
    g.commit(path, graph, g.DeleteRecord("Dup", graph.record_key(graph.find("Dup")[1])), session=graph_session)
    assert _records(path) == [A1, OTHER, REL]
    graph = g.load(path)
    with pytest.raises(g.GraphEditError, match="written once"):
        g.DeleteRecord("Dup", graph.record_key(graph.find("Dup")[0])).apply(graph)


def test_a_record_that_changed_since_it_was_selected_is_refused(tmp_path: Path, graph_session) -> None:
    path = _file(tmp_path, A1, A2)
    graph = g.load(path)
    key = graph.record_key(graph.find("Dup")[1])
    path.write_text(path.read_text().replace('"two"', '"two, edited by an agent"'))
    with pytest.raises(g.GraphConflictError, match="changed or is gone"):
        g.commit(path, graph, g.AddObservation("Dup", "x", key), session=graph_session)
    assert "x" not in path.read_text()


def test_the_cli_edits_and_deletes_the_record_at_a_line(tmp_path: Path) -> None:
    path = _file(tmp_path, A1, A2, OTHER, REL)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "memtui", "graph", *args, "-w", str(tmp_path)],
                              capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)

    assert cli("add-observation", "--line", "2", "Dup", "second").returncode == 0
    assert _records(path)[1]["observations"] == ["two", "second"] and _records(path)[0] == A1
    done = cli("add-observation", "--line", "3", "Dup", "x")
    assert done.returncode == 2 and "lines 1, 2" in done.stderr
    assert cli("delete-record", "--yes", "--line", "1", "Dup").returncode == 0
    assert [r["observations"] for r in _records(path) if r.get("name") == "Dup"] == [["two", "second"]]


def test_names_equal_after_normalisation_and_self_relations_are_findings() -> None:
    nfc = unicodedata.normalize("NFC", "Café Ёлка")
    nfd = unicodedata.normalize("NFD", "Café Ёлка")
    assert nfc != nfd
    lines = [{"type": "entity", "name": nfc, "entityType": "t", "observations": []},
             {"type": "entity", "name": nfd, "entityType": "t", "observations": []},
             {"type": "entity", "name": "\uff21pi", "entityType": "t", "observations": []},  # fullwidth A
             {"type": "entity", "name": "Api", "entityType": "t", "observations": []},
             {"type": "relation", "from": nfc, "to": nfc, "relationType": "is"}]
    graph = g.loads("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines).encode())
    found = {f.code: f for f in audit(graph, near=False)}
    assert "graph-unicode-twins" in found and "U+0301" in found["graph-unicode-twins"].message
    assert found["graph-unicode-twins"].line == 1
    assert "graph-similar-names" in found and "Api" in found["graph-similar-names"].message
    assert found["graph-self-relation"].line == 5
