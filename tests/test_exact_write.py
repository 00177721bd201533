"""The exact replace: what a process outside memtui writes into a file while
memtui replaces it is carried into the new file (appends) or refused (anything else), never lost.

Outside writers are real processes, started at the named steps of ``atomic.replace_exact``
(its ``_checkpoint`` hook), so each window of the write is hit on purpose, not by luck.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memtui.core import atomic
from memtui.core.errors import BusyError, ConflictError
from memtui.core.session import Session

_APPEND = "import sys\nwith open(sys.argv[1], 'ab') as f: f.write(sys.argv[2].encode())\n"
_HOLD = textwrap.dedent("""
    import sys, time
    f = open(sys.argv[1], 'ab')
    print('open', flush=True)
    time.sleep(float(sys.argv[2]))
    f.write(sys.argv[3].encode()); f.close()
""")
_SERVER_WRITE = textwrap.dedent("""
    import os, sys
    tmp = sys.argv[1] + '.server-tmp'
    with open(tmp, 'wb') as f: f.write(sys.argv[2].encode())
    os.replace(tmp, sys.argv[1])
""")
_TRUNCATE = "import sys\nopen(sys.argv[1], 'wb').write(sys.argv[2].encode())\n"


def _run(script: str, *args: str) -> None:
    subprocess.run([sys.executable, "-c", script, *args], check=True, timeout=30)


def _at(monkeypatch: pytest.MonkeyPatch, step: str, action) -> list[str]:  # noqa: ANN001
    """Run ``action()`` once when replace_exact reaches ``step``."""
    seen: list[str] = []

    def checkpoint(name: str) -> None:
        seen.append(name)
        if name == step and seen.count(step) == 1:
            action()

    monkeypatch.setattr(atomic, "_checkpoint", checkpoint)
    return seen


def _replace(path: Path, new: bytes, carry: bool = True, wait: float = 5.0) -> atomic.Installed:
    snapshot = atomic.Snapshot.take(path)
    assert snapshot is not None
    try:
        return atomic.replace_exact(path, new, snapshot, carry=carry, wait=wait)
    finally:
        snapshot.close()


def test_an_append_made_after_the_read_is_carried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "graph.jsonl"
    target.write_bytes(b"a\nb\n")
    _at(monkeypatch, "staged", lambda: _run(_APPEND, str(target), "agent-1\n"))
    done = _replace(target, b"a\nB\n")
    assert target.read_bytes() == b"a\nB\nagent-1\n" == done.data
    assert done.carried == b"agent-1\n"
    assert atomic.leftovers(target) == []


def test_an_append_waiting_on_the_lease_lands_in_the_new_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that opens the file while memtui holds it leased (just before the swap) opens
    the old inode once the lease goes; what it writes there is drained into the new file."""
    target = tmp_path / "graph.jsonl"
    target.write_bytes(b"a\n")
    procs: list[subprocess.Popen] = []

    def start() -> None:
        procs.append(subprocess.Popen([sys.executable, "-c", _APPEND, str(target), "late\n"]))
        time.sleep(0.3)  # it is now inside open(), waiting for the lease

    _at(monkeypatch, "leased", start)
    done = _replace(target, b"A\n")
    assert procs[0].wait(timeout=30) == 0
    assert target.read_bytes() == b"A\nlate\n", "the late append was drained into the new file"
    assert done.carried == b"late\n"


def test_a_writer_holding_the_file_is_waited_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "graph.jsonl"
    target.write_bytes(b"a\n")
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(target), "0.5", "held\n"], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"open"
    _replace(target, b"A\n")
    assert holder.wait(timeout=30) == 0
    assert target.read_bytes() == b"A\nheld\n"


def test_a_writer_that_keeps_the_file_open_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    target = tmp_path / "graph.jsonl"
    target.write_bytes(b"a\n")
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(target), "30", "x"], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"open"
        with pytest.raises(atomic.RaceError) as caught:
            _replace(target, b"A\n", wait=0.3)
        assert caught.value.busy and holder.pid in caught.value.pids
        assert f"process {holder.pid}" in str(caught.value)
        assert target.read_bytes() == b"a\n" and atomic.leftovers(target) == []
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("step", ["staged", "leased"])
def test_a_replacement_by_another_writer_is_refused_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           step: str) -> None:
    """An MCP memory server writes the whole file through its own temporary file and rename."""
    target = tmp_path / "graph.jsonl"
    target.write_bytes(b"a\n")
    _at(monkeypatch, step, lambda: _run(_SERVER_WRITE, str(target), "server\n"))
    with pytest.raises(atomic.RaceError, match="replaced"):
        _replace(target, b"A\n")
    assert target.read_bytes() == b"server\n"
    assert atomic.leftovers(target) == []


@pytest.mark.parametrize("carry", [True, False])
def test_a_rewrite_in_place_is_refused_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, carry: bool) -> None:
    target = tmp_path / "notes.md"
    target.write_bytes(b"one\ntwo\n")
    _at(monkeypatch, "staged", lambda: _run(_TRUNCATE, str(target), "theirs\n"))
    with pytest.raises(atomic.RaceError, match="rewritten"):
        _replace(target, b"mine\n", carry=carry)
    assert target.read_bytes() == b"theirs\n"


def test_without_carry_an_append_is_a_conflict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "notes.md"
    target.write_bytes(b"one\n")
    _at(monkeypatch, "staged", lambda: _run(_APPEND, str(target), "two\n"))
    with pytest.raises(atomic.RaceError, match="written by another process"):
        _replace(target, b"mine\n", carry=False)
    assert target.read_bytes() == b"one\ntwo\n"


def test_carried_lines_are_never_glued(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The old file ended with a line break and memtui's new bytes do not (the MCP server's
    form): the carried line still starts a line. One that continued a line stays so."""
    target = tmp_path / "graph.jsonl"
    target.write_bytes(b"a\r\nb\r\n")
    _at(monkeypatch, "staged", lambda: _run(_APPEND, str(target), "c\r\n"))
    assert _replace(target, b"a\r\nB").data == b"a\r\nB\r\nc\r\n"
    target.write_bytes(b"a\nb")  # no final newline: the append glues in the old file, and here alike
    _at(monkeypatch, "staged", lambda: _run(_APPEND, str(target), "c\n"))
    assert _replace(target, b"a\nB").data == b"a\nBc\n"


def test_create_refuses_a_file_created_meanwhile(tmp_path: Path) -> None:
    target = tmp_path / "new.md"
    target.write_bytes(b"someone else's")
    with pytest.raises(atomic.RaceError):
        atomic.create_exact(target, b"mine")
    assert target.read_bytes() == b"someone else's" and atomic.leftovers(target) == []


# -- through the guarded write ------------------------------------------------------------------------

def _ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "MEMORY_CUSTOM.md").write_bytes(b"mine\n")
    return root


def test_the_guarded_write_turns_a_race_into_a_conflict_and_writes_no_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _ws(tmp_path)
    notes = root / "memory" / "MEMORY_CUSTOM.md"
    _at(monkeypatch, "staged", lambda: _run(_SERVER_WRITE, str(notes), "an agent's notes\n"))
    with Session.open(root) as session:
        base = atomic.sha256(b"mine\n")
        with pytest.raises(ConflictError, match="nothing was written") as caught:
            session.write("notes.set", "memory/MEMORY_CUSTOM.md",
                          lambda tx: tx.replace("memory/MEMORY_CUSTOM.md", b"new\n", base=base))
        assert caught.value.current == b"an agent's notes\n"
        assert session.audit.entries() == []
    assert notes.read_bytes() == b"an agent's notes\n"


def test_the_guarded_write_says_which_process_keeps_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _ws(tmp_path)
    notes = root / "memory" / "MEMORY_CUSTOM.md"
    monkeypatch.setattr(atomic, "WRITER_WAIT", 0.3)
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(notes), "30", "x"], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"open"
        with Session.open(root) as session:
            with pytest.raises(BusyError, match=f"process {holder.pid}"):
                session.write("notes.set", "memory/MEMORY_CUSTOM.md",
                              lambda tx: tx.replace("memory/MEMORY_CUSTOM.md", b"new\n", base=tx.sha(
                                  "memory/MEMORY_CUSTOM.md")))
            assert session.audit.entries() == []
    finally:
        holder.kill()
        holder.wait()
    assert notes.read_bytes() == b"mine\n"


def test_carried_appends_are_recorded_in_the_audit_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _ws(tmp_path)
    graph = root / "memory" / "graph.jsonl"
    graph.write_bytes(b'{"type":"entity","name":"a","entityType":"t","observations":[]}\n')
    line = '{"type":"entity","name":"agent","entityType":"t","observations":[]}\n'
    _at(monkeypatch, "staged", lambda: _run(_APPEND, str(graph), line))
    from memtui.core import graph as g

    with Session.open(root) as session:
        saved = g.commit(graph, g.load(graph, "memory/graph.jsonl"), g.AddObservation("a", "x"), session=session)
        assert [e.name for e in saved.graph.entities] == ["a", "agent"], "the written graph holds the carried line"
        assert saved.audit_entry.detail["carried"] == {"memory/graph.jsonl": {"bytes": len(line), "lines": 1}}
    assert graph.read_bytes().endswith(line.encode())
    assert sorted(os.listdir(graph.parent)) == ["MEMORY_CUSTOM.md", "graph.jsonl"], "no temporary file left"
