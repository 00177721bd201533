"""``memtui notes``, ``memtui log`` and ``memtui store``: exit codes, conflicts, refusals, two writers at once."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core import atomic
from memtui.core.session import Session
from memtui.core.store import parse

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    return root


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    fake = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", fake)


def _run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # _common.fail exits
        return int(exc.code)


def test_show_absent_then_set_creates_and_logs(ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["notes", "show", "-w", str(ws), "--hash"]) == 0
    assert capsys.readouterr().out.strip() == "absent"
    source = tmp_path / "new.md"
    source.write_text("Answer in Bulgarian.\n", encoding="utf-8")
    assert _run(["notes", "set", "-w", str(ws), "--from", str(source), "--expect-hash", "absent"]) == 0
    assert (ws / "memory" / "MEMORY_CUSTOM.md").read_bytes() == b"Answer in Bulgarian.\n"
    capsys.readouterr()
    assert _run(["log", "-w", str(ws), "--json"]) == 0
    log = json.loads(capsys.readouterr().out)
    assert [e["action"] for e in log["entries"]] == ["notes.set"]
    assert log["entries"][0]["after"] == atomic.sha256(b"Answer in Bulgarian.\n")


def test_set_with_stale_hash_is_a_conflict_with_the_diff(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    notes_file = ws / "memory" / "MEMORY_CUSTOM.md"
    notes_file.write_bytes(b"kept by the member\n")
    _stdin(monkeypatch, b"mine\n")
    code = _run(["notes", "set", "-w", str(ws), "--from", "-", "--expect-hash", "absent"])
    out = capsys.readouterr()
    assert code == 1
    assert "-kept by the member\n" in out.out and "+mine\n" in out.out
    assert "changed on disk" in out.err
    assert notes_file.read_bytes() == b"kept by the member\n"
    # with the current hash it goes through ("keep mine")
    _stdin(monkeypatch, b"mine\n")
    current = atomic.sha256(notes_file.read_bytes())
    assert _run(["notes", "set", "-w", str(ws), "--from", "-", "--expect-hash", current]) == 0
    assert notes_file.read_bytes() == b"mine\n"


def test_conflict_json(ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "memory" / "MEMORY_CUSTOM.md").write_bytes(b"theirs\n")
    _stdin(monkeypatch, b"mine\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", "-", "--expect-hash", "absent", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["conflict"] is True and data["expected"] is None
    assert data["current"] == atomic.sha256(b"theirs\n") and "+mine" in data["diff"]


def test_bad_hash_and_missing_source_are_usage_errors(ws: Path, tmp_path: Path) -> None:
    assert _run(["notes", "set", "-w", str(ws), "--from", str(tmp_path / "nope.md")]) == 2
    src = tmp_path / "a.md"
    src.write_bytes(b"x\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", str(src), "--expect-hash", "abc"]) == 2
    src.write_bytes(b"\xff\xfe")
    assert _run(["notes", "set", "-w", str(ws), "--from", str(src)]) == 2
    assert not (ws / "memory" / "MEMORY_CUSTOM.md").exists()


def test_an_open_tui_does_not_block_notes_set(ws: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "a.md"
    src.write_bytes(b"x\n")
    with Session.open(ws, purpose="tui"):
        assert _run(["notes", "set", "-w", str(ws), "--from", str(src)]) == 0
    assert (ws / "memory" / "MEMORY_CUSTOM.md").read_bytes() == b"x\n"


def test_a_busy_workspace_is_a_named_conflict_with_exit_1(ws: Path, tmp_path: Path, monkeypatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Another process keeping the lock past the wait: exit 1, the holder named, nothing written."""
    from memtui.core import lock, session as session_mod

    src = tmp_path / "a.md"
    src.write_bytes(b"x\n")
    monkeypatch.setattr(session_mod, "LOCK_WAIT", 0.2)
    held = lock.acquire(ws, "cli backup")
    try:
        assert _run(["notes", "set", "-w", str(ws), "--from", str(src)]) == 1
    finally:
        held.release()
    err = capsys.readouterr().err
    assert f"process {os.getpid()}" in err and str(ws / ".memtui" / "lock") in err and "busy" in err
    assert not (ws / "memory" / "MEMORY_CUSTOM.md").exists()


def test_retry_with_client_id_is_applied_once(ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "a.md"
    src.write_bytes(b"v1\n")
    args = ["notes", "set", "-w", str(ws), "--from", str(src), "--client-id", "hook-42"]
    assert _run(args) == 0 and _run(args) == 0
    assert "already saved" in capsys.readouterr().out
    src.write_bytes(b"v2\n")
    assert _run(args) == 1, "a reused client id with other content is a conflict"
    assert (ws / "memory" / "MEMORY_CUSTOM.md").read_bytes() == b"v1\n"
    capsys.readouterr()
    _run(["log", "-w", str(ws), "--json"])
    assert len(json.loads(capsys.readouterr().out)["entries"]) == 1


def test_operator_file_and_symlink_outside_are_refused(ws: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"private\n")
    (ws / "memory" / "MEMORY_CUSTOM.md").symlink_to(outside)
    src = tmp_path / "a.md"
    src.write_bytes(b"x\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", str(src)]) == 3
    assert "outside" in capsys.readouterr().err
    assert outside.read_bytes() == b"private\n"
    assert _run(["notes", "show", "-w", str(ws)]) == 1
    out = capsys.readouterr()
    assert "private" not in out.out and "symlink-outside" in out.err
    assert _run(["notes", "show", "-w", str(ws), "--file", "nonsense"]) == 2


def test_diff_exit_codes(ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "memory" / "MEMORY_CUSTOM.md").write_bytes(b"a\n")
    same, other = tmp_path / "same.md", tmp_path / "other.md"
    same.write_bytes(b"a\n")
    other.write_bytes(b"b\n")
    assert _run(["notes", "diff", "-w", str(ws), "--from", str(same)]) == 0
    assert capsys.readouterr().out == ""
    assert _run(["notes", "diff", "-w", str(ws), "--from", str(other)]) == 1
    assert "+b" in capsys.readouterr().out


def test_edit_never_prompts_without_a_terminal(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _stdin(monkeypatch, b"")
    monkeypatch.setenv("EDITOR", "false")
    assert _run(["notes", "edit", "-w", str(ws)]) == 2
    assert "needs a terminal" in capsys.readouterr().err


def test_edit_saves_what_the_editor_wrote(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "ed.sh"
    script.write_text("#!/bin/sh\nprintf 'edited\\n' >> \"$1\"\n")
    script.chmod(0o755)
    (ws / "memory" / "MEMORY_CUSTOM.md").write_bytes(b"start\n")
    monkeypatch.setenv("EDITOR", str(script))
    monkeypatch.setattr("memtui.commands._common.interactive", lambda: True)
    assert _run(["notes", "edit", "-w", str(ws)]) == 0
    assert (ws / "memory" / "MEMORY_CUSTOM.md").read_bytes() == b"start\nedited\n"


def test_damaged_store_in_the_cli(shared: Path, ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Read commands say where it breaks; the writing command refuses; bytes kept; set-aside."""
    (ws / ".memtui").mkdir()
    store_file = ws / ".memtui" / "store.json"
    shutil.copyfile(shared / "bug-inputs" / "B01" / "store-truncated.json", store_file)
    original = store_file.read_bytes()
    assert _run(["log", "-w", str(ws)]) == 1
    err = capsys.readouterr().err
    assert "store-damaged" in err and "column" in err
    assert _run(["store", "check", "-w", str(ws)]) == 1
    src = tmp_path / "a.md"
    src.write_bytes(b"x\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", str(src)]) == 3
    assert "damaged" in capsys.readouterr().err
    assert store_file.read_bytes() == original and not (ws / "memory" / "MEMORY_CUSTOM.md").exists()
    assert _run(["store", "set-aside", "-w", str(ws)]) == 2, "no --yes and no terminal: a usage error"
    assert _run(["store", "set-aside", "-w", str(ws), "--yes"]) == 0
    kept = list((ws / ".memtui").glob("store.json.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == original
    capsys.readouterr()
    assert _run(["log", "-w", str(ws), "--json"]) == 0
    assert [e["action"] for e in json.loads(capsys.readouterr().out)["entries"]] == ["store.set-aside"]


@pytest.mark.slow
def test_two_cli_writers_lose_nothing(shared: Path, ws: Path, tmp_path: Path) -> None:
    """The bug inputs' hammer.sh (CLI writers in parallel): every call that reported success is in the audit log; the store stays JSON."""
    loops, count = 2, 15
    command = (f"printf 'note {{i}}\\n' | PYTHONPATH={shlex.quote(str(REPO))} "
               f"{shlex.quote(sys.executable)} -m memtui notes set -w {shlex.quote(str(ws))} --from -")
    proc = subprocess.run(["sh", str(shared / "bug-inputs" / "B04" / "hammer.sh"), str(loops), str(count), command],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    ok = int(re.search(r"calls that reported success: (\d+)", proc.stdout).group(1))
    failed = int(re.search(r"calls that reported failure: (\d+)", proc.stdout).group(1))
    assert ok + failed == loops * count
    tables = parse((ws / ".memtui" / "store.json").read_bytes(), Path("store.json"))
    entries = list(tables["audit"].values())
    assert len(entries) == ok, "every reported success is recorded, nothing more"
    assert failed == 0, "a CLI writer waits for another CLI writer instead of failing: " + proc.stdout
    last = (ws / "memory" / "MEMORY_CUSTOM.md").read_bytes()
    assert re.fullmatch(rb"note \d-\d+\n", last)
    assert not list((ws / ".memtui").glob(".*.tmp"))


def test_set_with_a_base_hash_merges_a_change_made_since(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`notes set --base-hash H` three-way merges from H's bytes (memtui's last save)."""
    notes_file = ws / "memory" / "MEMORY_CUSTOM.md"
    _stdin(monkeypatch, b"first\nsecond\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", "-", "--base-hash", "absent"]) == 0
    base = atomic.sha256(notes_file.read_bytes())
    notes_file.write_bytes(b"first\nsecond\nthe agent's line\n")
    _stdin(monkeypatch, b"first, edited\nsecond\n")
    capsys.readouterr()
    assert _run(["notes", "set", "-w", str(ws), "--from", "-", "--base-hash", base]) == 0
    assert notes_file.read_bytes() == b"first, edited\nsecond\nthe agent's line\n"
    assert "merged" in capsys.readouterr().out


def test_set_with_overlapping_changes_exits_1_with_the_conflict_marked(
        ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    notes_file = ws / "memory" / "MEMORY_CUSTOM.md"
    _stdin(monkeypatch, b"tone: formal\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", "-"]) == 0
    notes_file.write_bytes(b"tone: casual\n")
    _stdin(monkeypatch, b"tone: terse\n")
    capsys.readouterr()
    assert _run(["notes", "set", "-w", str(ws), "--from", "-", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["conflict"] is True and data["conflicts"] == [
        {"base": "tone: formal\n", "yours": "tone: terse\n", "on_disk": "tone: casual\n"}]
    assert "<<<<<<< yours\ntone: terse\n=======\ntone: casual\n" in data["text_with_markers"]
    assert notes_file.read_bytes() == b"tone: casual\n"


def test_set_without_a_base_hash_never_replaces_an_agents_edit(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`notes set` without --base-hash replaced the agent's edit made since memtui's
    last save (exit 0, against the README). Now it is based on that save: merged when it can be."""
    notes_file = ws / "memory" / "MEMORY_CUSTOM.md"
    _stdin(monkeypatch, b"line one\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", "-"]) == 0
    notes_file.write_bytes(b"line one\nadded by the agent\n")
    _stdin(monkeypatch, b"member's header\nline one\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", "-"]) == 0
    assert notes_file.read_bytes() == b"member's header\nline one\nadded by the agent\n"
    # the same line changed both ways: exit 1, the agent's text stays
    notes_file.write_bytes(b"member's header\nline one, agent\nadded by the agent\n")
    _stdin(monkeypatch, b"member's header\nline one, member\nadded by the agent\n")
    capsys.readouterr()
    assert _run(["notes", "set", "-w", str(ws), "--from", "-"]) == 1
    out = capsys.readouterr()
    assert "<<<<<<< yours" in out.out and "--base-hash" in out.err
    assert notes_file.read_bytes() == b"member's header\nline one, agent\nadded by the agent\n"


def _agent_appends(path: Path, line: str) -> None:
    """An agent's ``echo LINE >> MEMORY_CUSTOM.md``: a real append, no memtui involved."""
    subprocess.run(["sh", "-c", f"echo {shlex.quote(line)} >> {shlex.quote(str(path))}"], check=True)


def test_show_hash_edit_set_after_an_agents_append_keeps_both_lines(
        ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The documented script flow: `notes show --hash`, edit a copy, `notes set --base-hash H`,
    while an agent appended one line meanwhile. memtui kept the bytes it showed, so it merges:
    the member's edit and the agent's line are both in the file."""
    notes_file = ws / "memory" / "MEMORY_CUSTOM.md"
    notes_file.write_bytes(b"# Standing notes\nAnswer in Bulgarian.\n")  # written by the proxy, not memtui
    assert _run(["notes", "show", "-w", str(ws), "--hash"]) == 0
    base = capsys.readouterr().out.strip()
    assert _run(["notes", "show", "-w", str(ws)]) == 0
    mine = tmp_path / "mine.md"
    mine.write_text(capsys.readouterr().out.replace("Bulgarian.", "Bulgarian, formally."), encoding="utf-8")
    _agent_appends(notes_file, "2026-12-02 agent: the member prefers short answers")
    code = _run(["notes", "set", "-w", str(ws), "--from", str(mine), "--base-hash", base])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert notes_file.read_text(encoding="utf-8") == (
        "# Standing notes\nAnswer in Bulgarian, formally.\n2026-12-02 agent: the member prefers short answers\n")
    assert "merged" in out.out


def test_copies_of_shown_notes_live_in_the_user_cache_and_are_bounded(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The copies memtui keeps of what it showed are in the user cache folder (never in the
    workspace), keyed by hash, and pruned to the last few versions."""
    from memtui.core import shown as shown_copies

    monkeypatch.setattr(shown_copies, "SHOWN_KEEP", 3)
    notes_file = ws / "memory" / "MEMORY_CUSTOM.md"
    hashes = []
    for n in range(5):
        notes_file.write_bytes(f"version {n}\n".encode())
        assert _run(["notes", "show", "-w", str(ws), "--hash"]) == 0
        hashes.append(capsys.readouterr().out.strip())
    cache = Path(os.environ["MEMTUI_CACHE_DIR"])
    kept = sorted(p.name for p in cache.rglob("*") if p.is_file() and p.name in hashes)
    assert kept == sorted(hashes[-3:])
    assert not [p for p in ws.rglob("*") if p.is_file() and p.name in hashes]
    assert sorted(p.name for p in ws.rglob("*") if p.is_file() and ".memtui" not in p.parts) == ["MEMORY_CUSTOM.md"]


def test_an_unknown_base_names_the_lines_it_would_drop_and_never_advises_dropping_them(
        ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A base memtui never showed cannot be merged. The advice must not lead to deleting the
    agent's line: it lists the lines on disk that the file would remove, and removing them
    takes the explicit --keep-mine; following the advice (copying the line in) keeps it."""
    notes_file = ws / "memory" / "MEMORY_CUSTOM.md"
    notes_file.write_bytes(b"one\nthe agent's line\n")
    mine = tmp_path / "mine.md"
    mine.write_bytes(b"one, edited\n")
    unknown = "0" * 64
    assert _run(["notes", "set", "-w", str(ws), "--from", str(mine), "--base-hash", unknown]) == 1
    err = capsys.readouterr().err
    current = atomic.sha256(notes_file.read_bytes())
    assert "the agent's line" in err and "--keep-mine" in err
    assert f"--base-hash {current}" not in err  # no advice to overwrite with the current hash
    assert notes_file.read_bytes() == b"one\nthe agent's line\n"
    # following the advice: the lines to keep copied in, set again: saved, nothing on disk lost
    mine.write_bytes(b"one\nthe agent's line\none, edited\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", str(mine), "--base-hash", unknown]) == 0
    assert notes_file.read_bytes() == b"one\nthe agent's line\none, edited\n"
    # dropping lines knowingly takes the flag and the hash shown
    mine.write_bytes(b"only mine\n")
    current = atomic.sha256(notes_file.read_bytes())
    assert _run(["notes", "set", "-w", str(ws), "--from", str(mine), "--base-hash", unknown]) == 1
    capsys.readouterr()
    assert _run(["notes", "set", "-w", str(ws), "--from", str(mine), "--keep-mine", current]) == 0
    assert notes_file.read_bytes() == b"only mine\n"


def test_an_overlap_advises_the_marked_text_not_the_members_file(
        ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On overlapping changes the advice is to resolve the printed text (it holds the agent's
    other lines too), never to set the member's own file again over the current hash."""
    notes_file = ws / "memory" / "MEMORY_CUSTOM.md"
    notes_file.write_bytes(b"tone: formal\n")
    assert _run(["notes", "show", "-w", str(ws), "--hash"]) == 0
    base = capsys.readouterr().out.strip()
    notes_file.write_bytes(b"tone: casual\nthe agent's line\n")
    mine = tmp_path / "mine.md"
    mine.write_bytes(b"tone: terse\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", str(mine), "--base-hash", base]) == 1
    out = capsys.readouterr()
    assert "the agent's line" in out.out and "<<<<<<< yours" in out.out
    assert "text printed above" in out.err
    assert notes_file.read_bytes() == b"tone: casual\nthe agent's line\n"


def test_keep_mine_over_a_file_changed_again_names_the_lines_and_writes_nothing(
        ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes_file = ws / "memory" / "MEMORY_CUSTOM.md"
    notes_file.write_bytes(b"one\n")
    stale = atomic.sha256(b"one\n")
    _agent_appends(notes_file, "the agent's later line")
    mine = tmp_path / "mine.md"
    mine.write_bytes(b"only mine\n")
    assert _run(["notes", "set", "-w", str(ws), "--from", str(mine), "--keep-mine", stale]) == 1
    err = capsys.readouterr().err
    assert "the agent's later line" in err and "--keep-mine" in err
    assert notes_file.read_bytes() == b"one\nthe agent's later line\n"


def test_set_and_diff_take_file_as_the_argument_or_with_from(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """The help said `notes set FILE` and the command answered "required: --from"."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    src = tmp_path / "new.md"
    src.write_text("# Notes\nfirst\n")
    assert _run(["notes", "set", str(src), "-w", str(ws), "--base-hash", "absent"]) == 0
    assert (ws / "memory" / "MEMORY_CUSTOM.md").read_text() == "# Notes\nfirst\n"
    assert _run(["notes", "diff", str(src), "-w", str(ws)]) == 0
    assert _run(["notes", "diff", "--from", str(src), "-w", str(ws)]) == 0
    capsys.readouterr()
    assert _run(["notes", "set", "-w", str(ws)]) == 2
    assert "needs FILE" in capsys.readouterr().err
    assert _run(["notes", "set", str(src), "--from", str(tmp_path / "other.md"), "-w", str(ws)]) == 2
    assert "give one" in capsys.readouterr().err
