"""Roots linked outside the workspace (``sessions``, ``skills``, ``shared-skills``, ``memory``) are
treated as the memory tree's own links are: a ``symlink-outside`` finding, and nothing behind
the link is opened, listed or shown (invariant 4).

Proof that nothing outside is read: every file behind the links holds a unique marker that must
not appear in any output, and a Python audit hook records every ``open``, ``os.scandir`` and
``os.listdir`` of the run, none of which may lead outside the workspace.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core import sessions
from memtui.core.errors import ConfinementError
from memtui.core.skills import load_catalogue
from memtui.core.workspace import Workspace
from tests.backup_helpers import isolate_git
from tests.conftest import SAMPLE

MARKER = "QZV-OUTSIDE-7731"

_SEEN: list[str] = []
_WATCHING: list[bool] = [False]


def _hook(event: str, args: tuple) -> None:
    if _WATCHING[0] and event in ("open", "os.scandir", "os.listdir") and args and args[0] is not None:
        path = args[0]
        if isinstance(path, (str, bytes, os.PathLike)):
            _SEEN.append(os.fsdecode(path))


sys.addaudithook(_hook)


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the sample workspace whose sessions/, skills/ and shared-skills/ are links to
    folders outside it, each file there holding :data:`MARKER`."""
    outside = tmp_path / "outside"
    (outside / "sessions" / "durable").mkdir(parents=True)
    (outside / "sessions" / "durable" / "s1.jsonl").write_text(
        json.dumps({"role": "user", "content": f"{MARKER} in a session"}) + "\n")
    for folder, name in (("skills", "outside-skill"), ("shared", "outside-shared")):
        (outside / folder / name).mkdir(parents=True)
        (outside / folder / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {MARKER}. Use when testing links.\n---\n{MARKER} body\n")
    ws = tmp_path / "ws"
    shutil.copytree(SAMPLE, ws, symlinks=True)
    for name in ("sessions", "skills", "shared-skills"):
        if os.path.lexists(ws / name):
            shutil.rmtree(ws / name)
    os.symlink(outside / "sessions", ws / "sessions")
    os.symlink(outside / "skills", ws / "skills")
    os.symlink(outside / "shared", ws / "shared-skills")
    return ws, outside


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    _SEEN.clear()
    _WATCHING[0] = True
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        _WATCHING[0] = False
    out = capsys.readouterr()
    return code, out.out + out.err


def _outside(outside: Path, ws: Path) -> list[str]:
    """Paths the run opened or listed that lie outside the workspace (through a link or not)."""
    real_out = os.path.realpath(outside)
    links = [str(ws / name) for name in ("sessions", "skills", "shared-skills")]
    return [p for p in _SEEN if os.path.realpath(p).startswith(real_out)
            or any(p == link or p.startswith(link + os.sep) for link in links)]


@pytest.mark.parametrize("argv", [
    ["audit"], ["skills", "list"], ["skills", "check"], ["skills", "index"], ["sessions", "list"],
    ["sessions", "check"], ["search", MARKER], ["search", "session"], ["notes", "show"], ["graph", "entities"],
])
def test_nothing_behind_a_linked_root_is_read_or_shown(
        linked: tuple[Path, Path], capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    ws, outside = linked
    _code, output = _run([*argv, "-w", str(ws)], capsys)
    assert MARKER not in output
    assert _outside(outside, ws) == []


def test_each_linked_root_is_a_finding(linked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    ws, outside = linked
    code, output = _run(["audit", "-w", str(ws), "--json"], capsys)
    data = json.loads(output[output.index("{"):])
    found = {f["path"] for f in data["findings"] if f["code"] == "symlink-outside"}
    assert {"sessions", "skills", "shared-skills"} <= found
    assert code == 1 and _outside(outside, ws) == []
    code, output = _run(["sessions", "check", "-w", str(ws)], capsys)
    assert code == 1 and "sessions: error: [symlink-outside]" in output
    code, output = _run(["skills", "check", "-w", str(ws)], capsys)
    assert code == 1 and "symlink-outside" in output and "skills:" in output


def test_backup_takes_nothing_from_behind_a_linked_root(
        linked: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    ws, outside = linked
    isolate_git(monkeypatch, tmp_path / "home")
    repo = tmp_path / "repo"
    _code, output = _run(["backup", "-w", str(ws), "--repo", str(repo)], capsys)
    assert MARKER not in output and _outside(outside, ws) == []
    for folder, _dirs, files in os.walk(repo):
        if ".git" in Path(folder).parts:
            continue
        for name in files:
            assert MARKER.encode() not in (Path(folder) / name).read_bytes(), name


def test_core_readers_refuse_a_linked_sessions_folder(linked: tuple[Path, Path]) -> None:
    ws, _outside = linked
    workspace = Workspace.open(ws)
    assert sessions.keys(workspace) == []
    with pytest.raises(ConfinementError):
        sessions.read(workspace, "s1")
    finding = sessions.folder_problem(workspace)
    assert finding is not None and finding.code == "symlink-outside" and finding.path == "sessions"
    cat = load_catalogue(workspace)
    assert not [s for s in cat.skills if MARKER in (s.description or "")]
    assert {f.path for f in cat.findings if f.code == "symlink-outside"} == {"skills", "shared-skills"}


def test_a_linked_root_inside_the_workspace_is_read(tmp_path: Path) -> None:
    """A link that stays inside the workspace is no fault: its histories are read."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "data" / "durable").mkdir(parents=True)
    (ws / "data" / "durable" / "s1.jsonl").write_text('{"role": "user", "content": "hello"}\n')
    (ws / "sessions").mkdir()
    os.symlink(ws / "data" / "durable", ws / "sessions" / "durable")
    workspace = Workspace.open(ws)
    assert sessions.folder_problem(workspace) is None
    assert sessions.keys(workspace) == ["s1"]


def test_a_memory_folder_linked_outside_is_a_finding_and_not_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "AGENTS.md").write_text(f"# Outside\n\n- [X](x.md) — {MARKER}\n")
    (outside / "MEMORY_CUSTOM.md").write_text(f"{MARKER} notes\n")
    (outside / "graph.jsonl").write_text(
        json.dumps({"type": "entity", "name": MARKER, "entityType": "t", "observations": []}) + "\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(outside, ws / "memory")
    code, output = _run(["audit", "-w", str(ws)], capsys)
    assert "memory: error: [symlink-outside]" in output and code == 1
    for argv in (["notes", "show"], ["graph", "entities"], ["search", MARKER], ["audit"]):
        _code, output = _run([*argv, "-w", str(ws)], capsys)
        assert MARKER not in output
        assert not [p for p in _SEEN if os.path.realpath(p).startswith(os.path.realpath(outside))
                    or p.startswith(str(ws / "memory") + os.sep)], argv
