"""One writer at a time, for one write at a time (invariant 2): the lock, the holder
sentence, dead holders, and sessions that hold nothing between writes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memtui.core import lock
from memtui.core.errors import BusyError, ReadOnlyError
from memtui.core.session import Session

REPO = Path(__file__).resolve().parent.parent

_HOLDER_CHILD = textwrap.dedent("""
    import sys, time
    from memtui.core import lock
    held = lock.acquire(sys.argv[1], sys.argv[2])
    print("held", flush=True)
    sys.stdin.readline()   # hold until the test closes stdin or kills us
""")


def _ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    return root


def _start_holder(root: Path, purpose: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER_CHILD, str(root), purpose],
                            env={**os.environ, "PYTHONPATH": str(REPO)},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"held"
    return proc


def test_acquire_records_holder_and_release_frees(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    held = lock.acquire(root, "cli test")
    holder = lock.holder_of(root)
    assert holder == held.holder and holder.pid == os.getpid() and holder.purpose == "cli test"
    assert holder.host == socket.gethostname()
    with pytest.raises(BusyError):
        lock.acquire(root, "cli other")
    held.release()
    assert lock.holder_of(root) is None
    assert (root / ".memtui" / "lock").exists(), "the lock file itself is never deleted"
    again = lock.acquire(root, "cli other")
    again.release()


def test_a_holder_kept_past_the_wait_is_named(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    proc = _start_holder(root, "tui")
    try:
        with pytest.raises(BusyError) as exc:
            lock.acquire(root, "cli notes set", wait=0.2)
        sentence = str(exc.value)
        assert f"process {proc.pid}" in sentence
        assert str(root / ".memtui" / "lock") in sentence
        assert "(tui)" in sentence and "nothing was written" in sentence
    finally:
        proc.kill()
        proc.wait()


def test_a_holder_is_waited_for(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    proc = _start_holder(root, "cli notes set")
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"\n")  # the other command finishes shortly after we start waiting
        proc.stdin.flush()
        held = lock.acquire(root, "cli notes set", wait=10)
        assert held.holder.pid == os.getpid()
        held.release()
    finally:
        proc.kill()
        proc.wait()


def test_lock_of_a_killed_process_is_recovered(tmp_path: Path) -> None:
    """A SIGKILLed holder leaves its record behind; the next memtui takes the lock at once."""
    root = _ws(tmp_path)
    proc = _start_holder(root, "tui")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stale = lock.holder_of(root)
    assert stale is not None and stale.pid == proc.pid and stale.alive() is False
    held = lock.acquire(root, "tui")
    assert lock.holder_of(root) == held.holder
    held.release()


def _note(tx, text: bytes = b"hello\n") -> None:
    tx.replace("memory/MEMORY_CUSTOM.md", text, base=tx.sha("memory/MEMORY_CUSTOM.md"))


def test_an_open_session_holds_no_lock(tmp_path: Path) -> None:
    """A TUI left open for hours blocks nobody: another process writes at once."""
    root = _ws(tmp_path)
    tui = Session.open(root, purpose="tui")
    assert not tui.read_only and tui.findings == []
    held = lock.acquire(root, "cli notes set", wait=0)  # would raise if the session held it
    held.release()
    other = Session.open(root, purpose="cli notes set")
    other.write("notes.set", "memory/MEMORY_CUSTOM.md", _note)
    tui.write("notes.set", "memory/MEMORY_CUSTOM.md", lambda tx: _note(tx, b"from the tui\n"))
    assert (root / "memory" / "MEMORY_CUSTOM.md").read_bytes() == b"from the tui\n"
    assert [e.action for e in tui.audit.entries()] == ["notes.set", "notes.set"]


def test_a_write_waits_for_another_write_and_says_who_when_it_gives_up(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    proc = _start_holder(root, "tui")
    try:
        session = Session.open(root, purpose="cli notes set", wait=0.2)
        assert not session.read_only, "a held lock is not a reason to be read-only"
        with pytest.raises(BusyError) as exc:
            session.write("notes.set", "memory/MEMORY_CUSTOM.md", _note)
        assert f"process {proc.pid}" in str(exc.value)
        assert not (root / "memory" / "MEMORY_CUSTOM.md").exists()
        assert not (root / ".memtui" / "store.json").exists()
        assert proc.stdin is not None
        proc.stdin.write(b"\n")  # the other write finishes
        proc.stdin.flush()
        proc.wait()
        session.write("notes.set", "memory/MEMORY_CUSTOM.md", _note)
        assert (root / "memory" / "MEMORY_CUSTOM.md").read_bytes() == b"hello\n"
        session.close()
    finally:
        proc.kill()
        proc.wait()


def test_read_only_flag_refuses_every_write(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    session = Session.open(root, read_only=True)
    assert session.read_only and "--read-only" in (session.reason or "")
    with pytest.raises(ReadOnlyError, match="read-only"):
        session.write("notes.set", "memory/MEMORY_CUSTOM.md", _note)
    assert not (root / "memory" / "MEMORY_CUSTOM.md").exists()


def test_unusable_state_folder_opens_read_only(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    (root / ".memtui").write_bytes(b"a file where memtui's folder should be")
    session = Session.open(root)
    assert session.read_only and "cannot create its writer lock" in session.reason
    assert (root / ".memtui").read_bytes().startswith(b"a file"), "left as it was"


def test_state_dir_symlink_outside_is_refused(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / ".memtui").symlink_to(outside)
    session = Session.open(root)
    assert session.read_only and "outside" in session.reason
    assert list(outside.iterdir()) == [], "nothing written through the link"


def test_a_write_removes_the_leftovers_of_the_files_it_writes_and_closes(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    (root / ".memtui").mkdir()
    leftover = root / ".memtui" / ".store.json.abcd.tmp"
    leftover.write_bytes(b"half a store")
    notes_leftover = root / "memory" / ".MEMORY_CUSTOM.md.x1y2.tmp"
    notes_leftover.write_bytes(b"half a note")
    with Session.open(root) as session:
        assert leftover.exists() and notes_leftover.exists(), "opening writes nothing"
        session.write("notes.set", "memory/MEMORY_CUSTOM.md", _note)
        assert not leftover.exists() and not notes_leftover.exists()
    with pytest.raises(ReadOnlyError):
        session.write("notes.set", "memory/MEMORY_CUSTOM.md", _note)
    with Session.open(root) as again:
        assert not again.read_only
        assert len(again.audit.entries()) == 1


def test_a_file_replaced_twice_in_one_write_is_one_change_with_the_last_bytes(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    session = Session.open(root)

    def twice(tx) -> None:
        tx.replace("memory/n.md", b"first\n", base=None)
        tx.replace("memory/n.md", b"second\n", base=tx.sha("memory/n.md"))  # based on the first
        assert tx.read("memory/n.md") == b"second\n"

    done = session.write("test.twice", "memory/n.md", twice)
    assert done.files == ["memory/n.md"]
    assert (root / "memory" / "n.md").read_bytes() == b"second\n"
    import hashlib

    assert (done.entry.before, done.entry.after) == (None, hashlib.sha256(b"second\n").hexdigest())


def test_opening_a_workspace_in_a_git_repository_leaves_git_status_clean(tmp_path) -> None:  # noqa: ANN001
    """Opening a git repository added `.memtui/` to its `git status`."""
    import subprocess

    from memtui.core.session import Session

    root = tmp_path / "repo"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "AGENTS.md").write_text("# Root\n", encoding="utf-8")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=root, check=True, env=env)
    with Session.open(root, purpose="tui") as session:
        assert not session.read_only
    assert (root / ".memtui" / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, check=True, env=env,
                            capture_output=True, text=True).stdout
    assert status == "", status
