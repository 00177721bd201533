"""Member notes: absent = empty, no lost update, three choices, BOM/CRLF, confinement, refusals."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core import atomic, notes
from memtui.core.auditlog import ClientIdConflict
from memtui.core.errors import ConfinementError, ConflictError, ReadOnlyError
from memtui.core.session import Session
from memtui.core.workspace import OPERATOR_FILES, Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    return Workspace.open(root)


@pytest.fixture
def session(ws: Workspace):
    s = Session.open(ws, profile="member.alice")
    yield s
    s.close()


def test_absent_file_is_an_empty_document_and_saving_creates_it(session: Session) -> None:
    note = notes.load(session.ws)
    assert note.exists is False and note.text == "" and note.hash is None and note.writable
    result = notes.save(session, note, "Prefer short answers.\n", note.hash)
    assert result.written and result.before is None
    path = session.ws.member_notes
    assert path.read_bytes() == b"Prefer short answers.\n"
    assert result.after == atomic.sha256(path.read_bytes())
    entry = session.audit.entries()[0]
    assert (entry.action, entry.target, entry.before, entry.after, entry.profile) == (
        "notes.set", "memory/MEMORY_CUSTOM.md", None, result.after, "member.alice")
    assert result.note.hash == result.after and result.note.exists


def test_change_on_disk_is_a_conflict_and_nothing_is_lost(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"line one\n")
    note = notes.load(session.ws)
    path.write_bytes(b"line one\nadded by the member in the chat client\n")  # someone else
    with pytest.raises(ConflictError) as exc:  # without merging (the merge has its own tests)
        notes.save(session, note, "line one\nmine\n", note.hash, merge_changes=False)
    conflict = exc.value
    assert path.read_bytes() == b"line one\nadded by the member in the chat client\n"
    assert conflict.current == path.read_bytes()
    assert conflict.current_hash == atomic.sha256(path.read_bytes())
    assert session.audit.entries() == [], "a refused write is not recorded"
    # show the difference: on disk now -> mine
    shown = notes.conflict_diff(note, conflict, "line one\nmine\n")
    assert "-added by the member in the chat client\n" in shown and "+mine\n" in shown
    # reload: the other writer's text is there
    assert "added by the member" in notes.load(session.ws).text
    # keep mine: overwrite knowingly, based on the bytes shown
    kept = notes.keep_mine(session, note, "line one\nmine\n", conflict)
    assert kept.written and path.read_bytes() == b"line one\nmine\n"
    assert kept.before == conflict.current_hash


def test_keep_mine_conflicts_again_if_the_file_changed_once_more(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"a\n")
    note = notes.load(session.ws)
    path.write_bytes(b"b\n")
    with pytest.raises(ConflictError) as exc:
        notes.save(session, note, "mine\n", note.hash)
    path.write_bytes(b"c\n")
    with pytest.raises(ConflictError):
        notes.keep_mine(session, note, "mine\n", exc.value)
    assert path.read_bytes() == b"c\n"


def test_deleted_file_is_a_conflict(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"x\n")
    note = notes.load(session.ws)
    path.unlink()
    with pytest.raises(ConflictError) as exc:
        notes.save(session, note, "y\n", note.hash)
    assert exc.value.current is None and exc.value.current_hash is None
    assert not path.exists()


def test_bom_and_crlf_are_kept(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"\xef\xbb\xbf# Notes\r\nfirst\r\n")
    note = notes.load(session.ws)
    assert note.bom and note.crlf and note.text == "# Notes\nfirst\n"
    assert not note.dirty(note.text), "loading and saving unchanged changes no byte"
    notes.save(session, note, note.text + "second\n", note.hash)
    assert path.read_bytes() == b"\xef\xbb\xbf# Notes\r\nfirst\r\nsecond\r\n"


def test_mixed_line_ends_are_left_as_they_are(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"a\r\nb\nc\n")
    note = notes.load(session.ws)
    assert not note.crlf and note.text == "a\r\nb\nc\n"
    assert not note.dirty(note.text)


def test_mode_is_kept(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"x\n")
    os.chmod(path, 0o600)
    note = notes.load(session.ws)
    notes.save(session, note, "y\n", note.hash)
    assert (path.stat().st_mode & 0o777) == 0o600


def test_unchanged_text_writes_and_records_nothing(session: Session) -> None:
    session.ws.member_notes.write_bytes(b"same\n")
    before = session.ws.member_notes.stat().st_ino
    note = notes.load(session.ws)
    result = notes.save(session, note, "same\n", note.hash)
    assert not result.written and session.audit.entries() == []
    assert session.ws.member_notes.stat().st_ino == before


def test_retry_with_same_client_id_is_not_doubled(session: Session) -> None:
    note = notes.load(session.ws)
    first = notes.save(session, note, "v1\n", note.hash, client_id="req-7")
    retry = notes.save(session, note, "v1\n", note.hash, client_id="req-7")
    assert first.written and not retry.written and retry.retried
    assert retry.entry == first.entry
    assert len(session.audit.entries()) == 1
    with pytest.raises(ClientIdConflict):
        notes.save(session, first.note, "v2\n", first.note.hash, client_id="req-7")
    assert session.ws.member_notes.read_bytes() == b"v1\n"
    assert len(session.audit.entries()) == 1


def test_symlink_outside_is_refused_for_read_and_write(ws: Workspace, tmp_path: Path) -> None:
    secret = tmp_path / "outside.md"
    secret.write_bytes(b"not yours\n")
    ws.member_notes.symlink_to(secret)
    note = notes.load(ws)
    assert note.text == "" and not note.writable
    assert [f.code for f in note.findings] == ["symlink-outside"]
    with Session.open(ws) as session:
        with pytest.raises(ReadOnlyError, match="outside"):
            notes.save(session, note, "overwrite\n", note.hash)
        # a note loaded before the link was swapped in is still confined at save time
        forged = notes.Note("custom", ws.member_notes, "memory/MEMORY_CUSTOM.md", exists=True,
                            data=b"not yours\n", hash=atomic.sha256(b"not yours\n"))
        with pytest.raises(ConfinementError):
            notes.save(session, forged, "overwrite\n", forged.hash)
    assert secret.read_bytes() == b"not yours\n"


def test_symlink_inside_is_followed_and_kept(session: Session) -> None:
    real = session.ws.memory / "real-notes.md"
    real.write_bytes(b"inside\n")
    session.ws.member_notes.symlink_to("real-notes.md")
    note = notes.load(session.ws)
    assert note.writable and note.text == "inside\n"
    notes.save(session, note, "changed\n", note.hash)
    assert session.ws.member_notes.is_symlink() and real.read_bytes() == b"changed\n"


@pytest.mark.parametrize("which", ["notebook", *OPERATOR_FILES])
def test_notebook_and_operator_files_are_never_written(session: Session, which: str) -> None:
    path, reason = notes.resolve(session.ws, which)
    path.write_bytes(b"operator text\n")
    note = notes.load(session.ws, which)
    assert note.text == "operator text\n" and not note.writable and "memtui" in reason and "read-only" in reason
    with pytest.raises(ReadOnlyError, match="read-only|never writes") as refused:
        notes.save(session, note, "changed\n", note.hash)
    assert refused.value.reference == "seed 002"
    assert path.read_bytes() == b"operator text\n"


def test_unknown_file_word_is_refused(ws: Workspace) -> None:
    with pytest.raises(ValueError, match="custom"):
        notes.resolve(ws, "../../etc/passwd")


def test_a_read_only_session_refuses_and_says_why(ws: Workspace) -> None:
    with Session.open(ws, purpose="tui", read_only=True) as reader:
        note = notes.load(ws)
        with pytest.raises(ReadOnlyError) as exc:
            notes.save(reader, note, "x\n", note.hash)
        assert "read-only" in str(exc.value)
        assert not ws.member_notes.exists()
        assert reader.audit.entries() == []


def test_two_sessions_saving_from_the_same_bytes_the_second_gets_the_conflict(ws: Workspace) -> None:
    """Two writers racing on one file: the second gets the lost-update conflict, never a
    silent overwrite (invariant 3)."""
    tui, agent = Session.open(ws, purpose="tui"), Session.open(ws, purpose="cli notes set")
    note = notes.load(ws)
    notes.save(agent, note, "the agent's line\n", note.hash)
    with pytest.raises(ConflictError) as exc:
        notes.save(tui, note, "the member's line\n", note.hash)
    assert exc.value.current == b"the agent's line\n"
    assert ws.member_notes.read_bytes() == b"the agent's line\n"


def test_bad_bytes_load_read_only(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"caf\xe9\n")
    note = notes.load(session.ws)
    assert not note.writable and [f.code for f in note.findings] == ["not-utf8"]
    with pytest.raises(ReadOnlyError):
        notes.save(session, note, "cafe\n", note.hash)
    assert path.read_bytes() == b"caf\xe9\n"


def test_over_the_limit_loads_read_only_and_is_never_cut(session: Session) -> None:
    path = session.ws.member_notes
    data = ("# heading\n" + "x" * 90 + "\n") * 100
    path.write_text(data)
    note = notes.load(session.ws, limit=1000)
    assert note.truncated and not note.writable and len(note.text) == 1000
    assert [f.code for f in note.findings] == ["file-too-large"]
    with pytest.raises(ReadOnlyError, match="cut short"):
        notes.save(session, note, note.text, note.hash)
    assert path.read_text() == data


def test_diff_is_unified_and_empty_when_equal() -> None:
    assert notes.diff("a\nb\n", "a\nb\n") == ""
    out = notes.diff("a\nb\n", "a\nc", "old", "new")
    assert out.startswith("--- old\n+++ new\n")
    assert "-b\n" in out and "+c\n\\ No newline at end of file\n" in out


def test_signature_changes_when_file_is_replaced(session: Session) -> None:
    path = session.ws.member_notes
    assert notes.signature(path) is None
    path.write_bytes(b"a")
    first = notes.signature(path)
    atomic.write_bytes(path, b"b")
    assert notes.signature(path) != first


# -- three-way merge ----------------------------------------------------------
def test_merge_combines_changes_to_different_lines() -> None:
    base = "one\ntwo\nthree\n"
    merged = notes.merge(base, "one (member)\ntwo\nthree\n", "one\ntwo\nthree (agent)\n")
    assert merged.clean and merged.resolve() == "one (member)\ntwo\nthree (agent)\n"


def test_merge_keeps_two_appends_at_the_end_file_first() -> None:
    merged = notes.merge("a\n", "a\nmember's line\n", "a\nagent's line\n")
    assert merged.clean
    assert merged.resolve() == "a\nagent's line\nmember's line\n"


def test_merge_of_the_same_line_changed_two_ways_is_a_conflict_resolved_per_hunk() -> None:
    base = "keep\nshared\nkeep too\nother\n"
    mine = "keep\nshared by member\nkeep too\nother by member\n"
    theirs = "keep\nshared by agent\nkeep too\nother by agent\n"
    merged = notes.merge(base, mine, theirs)
    assert len(merged.conflicts) == 2 and not merged.clean
    with pytest.raises(ValueError, match="conflict 2 has no choice"):
        merged.resolve({merged.conflicts[0]: "mine"})
    first, second = merged.conflicts
    assert merged.resolve({first: "mine", second: "theirs"}) == (
        "keep\nshared by member\nkeep too\nother by agent\n")
    assert merged.resolve({first: "both", second: "mine"}) == (
        "keep\nshared by agent\nshared by member\nkeep too\nother by member\n")
    marked = merged.with_markers()
    assert "<<<<<<< yours\nshared by member\n=======\nshared by agent\n>>>>>>> on disk\n" in marked


def test_save_merges_a_change_made_meanwhile_from_the_loaded_bytes(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"top\nmiddle\nbottom\n")
    note = notes.load(session.ws)
    path.write_bytes(b"top\nmiddle\nbottom\nagent appended\n")  # the agent, meanwhile
    result = notes.save(session, note, "top (member)\nmiddle\nbottom\n", note.hash, base_text=note.text)
    assert result.merged and result.written
    assert path.read_bytes() == b"top (member)\nmiddle\nbottom\nagent appended\n"
    assert result.note.hash == atomic.sha256(path.read_bytes())
    assert session.audit.entries()[0].detail.get("merged") is True


def test_save_with_overlapping_changes_raises_the_conflict_and_writes_nothing(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"rule: short answers\n")
    note = notes.load(session.ws)
    path.write_bytes(b"rule: long answers\n")
    with pytest.raises(notes.MergeConflict) as exc:
        notes.save(session, note, "rule: no answers\n", note.hash, base_text=note.text)
    assert path.read_bytes() == b"rule: long answers\n"
    assert session.audit.entries() == []
    (index,) = exc.value.merged.conflicts
    resolved = exc.value.merged.resolve({index: "mine"})
    kept = notes.save(session, note, resolved, exc.value.current_hash)
    assert kept.written and path.read_bytes() == b"rule: no answers\n"


def test_merge_keeps_crlf_files_line_for_line(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"a\r\nb\r\nc\r\n")
    note = notes.load(session.ws)
    path.write_bytes(b"a\r\nb\r\nc\r\nagent\r\n")
    result = notes.save(session, note, "a (member)\nb\nc\n", note.hash, base_text=note.text)
    assert result.merged and path.read_bytes() == b"a (member)\r\nb\r\nc\r\nagent\r\n"


def test_a_blind_save_is_based_on_what_memtui_last_saved(session: Session) -> None:
    """`notes set` without a base hash once replaced an agent's edit made since memtui's last
    save (exit 0): now it is based on that save, so the agent's line is merged in."""
    note = notes.load(session.ws)
    notes.save(session, note, "memtui saved this\n", note.hash)
    path = session.ws.member_notes
    path.write_bytes(b"memtui saved this\nthe agent's edit\n")
    note = notes.load(session.ws)
    assert notes.last_seen(session, note.shown) == (atomic.sha256(b"memtui saved this\n"), "memtui saved this\n")
    result = notes.save(session, note, "the member's first line\nmemtui saved this\n", notes.LAST_SEEN)
    assert result.merged
    assert path.read_bytes() == b"the member's first line\nmemtui saved this\nthe agent's edit\n"
    # and the copy kept is the latest save: one record per file
    records = session.store.table(notes.SEEN_TABLE).all()
    assert len(records) == 1 and records[0]["hash"] == atomic.sha256(path.read_bytes())


def test_a_blind_save_of_a_file_memtui_never_saved_replaces_it(session: Session) -> None:
    session.ws.member_notes.write_bytes(b"from before memtui\n")
    note = notes.load(session.ws)
    assert notes.last_seen(session, note.shown) is None
    result = notes.save(session, note, "mine\n", notes.LAST_SEEN)
    assert result.written and session.ws.member_notes.read_bytes() == b"mine\n"


# -- final line ends and glued lines ---------------------------------------------------------
def test_a_save_ends_the_file_with_a_line_end_so_an_append_starts_its_own_line(session: Session) -> None:
    path = session.ws.member_notes
    note = notes.load(session.ws)
    notes.save(session, note, "Answer in Bulgarian.", note.hash)
    assert path.read_bytes() == b"Answer in Bulgarian.\n"
    with open(path, "ab") as agent:  # the agent's `echo >>`
        agent.write(b"- 2026-12-02: prefers short answers\n")
    assert notes.load(session.ws).text.splitlines() == ["Answer in Bulgarian.", "- 2026-12-02: prefers short answers"]
    assert not [f for f in notes.load(session.ws).findings if f.code == "notes-lines-glued"]


def test_crlf_notes_end_with_crlf_and_saving_the_text_on_disk_writes_nothing(session: Session) -> None:
    path = session.ws.member_notes
    path.write_bytes(b"one\r\ntwo")  # another writer left no final line end
    note = notes.load(session.ws)
    assert note.crlf and not note.dirty(note.text)
    result = notes.save(session, note, note.text, note.hash)  # unchanged: nothing written, nothing added
    assert not result.written and path.read_bytes() == b"one\r\ntwo"
    notes.save(session, note, note.text + "\nthree", note.hash)
    assert path.read_bytes() == b"one\r\ntwo\r\nthree\r\n"


@pytest.mark.parametrize("member, agent", [
    ("Answer in Bulgarian.", "- 2026-12-02: prefers short answers"),
    ("Prefer metric units", "2026-12-02T10:15Z agent: noted the invoice"),
    ("Use formal tone.", "## Session notes"),
    ("tone: formal", "- Prefers tea"),
])
def test_a_member_line_glued_to_an_agents_line_is_a_finding(session: Session, member: str, agent: str) -> None:
    path = session.ws.member_notes
    path.write_bytes(f"# Notes\n{member}".encode())  # written by a tool that left no final line end
    with open(path, "ab") as handle:
        handle.write(f"{agent}\n".encode())
    found = [f for f in notes.load(session.ws).findings if f.code == "notes-lines-glued"]
    assert [(f.line, f.column) for f in found] == [(2, len(member) + 1)]
    from memtui.core import audit
    assert any(f.code == "notes-lines-glued" and f.path == "memory/MEMORY_CUSTOM.md"
               for f in audit.run(session.ws).findings)


def test_glued_lines_give_no_finding_on_the_shared_corpus(shared: Path) -> None:
    """Held to the real notebooks, node indexes and skills of the shared corpus: prose, tables,
    code spans, version numbers and dates in running text are not glued entries."""
    found = []
    for path in sorted((shared / "corpus").rglob("*.md")):
        found += [(path.name, line) for line, _ in notes.glued_lines(path.read_text(encoding="utf-8", errors="replace"))]
    assert found == []


def test_a_line_both_sides_appended_comes_out_once() -> None:
    """`notes show > mine.md` after an agent's append A, then the agent appends C: saving
    mine.md (based on the last save, before A) wrote A, C, A."""
    from memtui.core import notes

    assert notes.merge("x\n", "x\nA\n", "x\nA\nC\n").resolve() == "x\nA\nC\n"
    assert notes.merge("x\n", "x\nA\nX\n", "x\nA\n").resolve() == "x\nA\nX\n"
    assert notes.merge("x\n", "x\nM\n", "x\nA\n").resolve() == "x\nA\nM\n"  # different lines: both, the file's first
