"""A backup reads only what changed since the last one: files whose ``stat`` is as the last backup
recorded are taken by their recorded SHA-256, an unchanged store is not parsed nor rendered, and
the backup folder's files the last backup wrote are not read back. What changed is still read,
scanned and refused when it holds a secret; a rewrite that keeps the size and modification time
is still seen (the change time and inode cannot be set back); a file that is not what its record
says makes the backup read everything again; the round trip still verifies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core.backup import commit as backup
from memtui.core.backup import render as rd
from memtui.core.backup import state as bstate
from memtui.core.backup.verify import verify
from memtui.core.session import Session
from memtui.core.workspace import Workspace

from tests.backup_helpers import isolate_git

GITHUB = "ghp_" + "Zx9QmV3kP7LrT2nW8yB4cD6fH1jK5sA0uE3i"
ARTICLE = "memory/support/courier-app/gps-drift.md"


@pytest.fixture()
def no_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written a moment before a backup count as settled (the 2 s margin against same-tick
    rewrites would otherwise make every file of a test too new to be taken on trust)."""
    monkeypatch.setattr(bstate, "MARGIN_NS", 0)


@pytest.fixture()
def reads(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The workspace files a render read on demand (entries taken on trust, then read)."""
    seen: list[bytes] = []
    real = rd._reader

    def spy(path: bytes):  # noqa: ANN202
        load = real(path)

        def counted() -> bytes:
            seen.append(path)
            return load()
        return counted

    monkeypatch.setattr(rd, "_reader", spy)
    return seen


def _backup(ws: Workspace, repo: Path) -> backup.BackupResult:
    with Session.open(ws) as session:
        return backup.backup(ws, repo, session=session)


def _state(ws: Workspace, repo: Path) -> bstate.BackupState:
    return bstate.BackupState.load(ws, repo / "memtui-backup")


def test_a_second_render_reads_only_the_changed_file(sample_copy: Path, tmp_path: Path, no_margin: None,
                                                     monkeypatch: pytest.MonkeyPatch, reads: list[bytes]) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    path = sample_copy / ARTICLE
    path.write_text(path.read_text("utf-8") + "\nOne more line about tunnels.\n", "utf-8")
    tree = rd.render(ws.root, skip=[repo / "memtui-backup"], known=_state(ws, repo))
    loaded = {p for p, e in tree.files.items() if p.startswith(rd.FILES) and e.loaded}
    top = {p for p in loaded if b"/" not in p[len(rd.FILES):]}  # top-level files are always read
    assert loaded - top == {rd.FILES + ARTICLE.encode()}
    assert tree.tables is None and tree.table_counts  # the store was not parsed
    assert rd.render_manifest(tree) == rd.render(ws.root, skip=[repo / "memtui-backup"]).files[rd.MANIFEST].data
    result = _backup(ws, repo)
    assert [rd.shown(p) for p in map(str.encode, result.written)] == ["MANIFEST", f"files/{ARTICLE}"]
    assert reads == []  # nothing taken on trust had to be read after all
    assert verify(repo, None, "memtui-backup").ok


def test_a_secret_in_a_changed_file_is_still_refused(sample_copy: Path, tmp_path: Path, no_margin: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    path = sample_copy / ARTICLE
    path.write_text(path.read_text("utf-8") + f"\nThe deploy token is {GITHUB}\n", "utf-8")
    with pytest.raises(backup.BackupBlocked) as refused:
        _backup(ws, repo)
    assert ARTICLE in {f.path for f in refused.value.findings}
    assert GITHUB not in (repo / "memtui-backup" / "files" / ARTICLE).read_text("utf-8")


def test_a_rewrite_keeping_size_and_modification_time_is_backed_up(sample_copy: Path, tmp_path: Path,
                                                                   no_margin: None,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    path = sample_copy / ARTICLE
    before = path.stat()
    data = path.read_bytes()
    changed = data.replace(b"e", b"E", 1)
    assert changed != data and len(changed) == len(data)
    with open(path, "r+b") as handle:  # in place: the same inode
        handle.write(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the old modification time back
    assert path.stat().st_mtime_ns == before.st_mtime_ns and path.stat().st_size == before.st_size
    result = _backup(ws, repo)
    assert f"files/{ARTICLE}" in result.written
    assert (repo / "memtui-backup" / "files" / ARTICLE).read_bytes() == changed


def test_a_file_just_written_is_read_even_when_its_stat_is_as_recorded(sample_copy: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Times within the margin of the record's start could hide a same-tick rewrite: read. (The
    margin is an hour here, so a slow machine cannot push the write out of it.)"""
    monkeypatch.setattr(bstate, "MARGIN_NS", 3600 * 10**9)
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    path = sample_copy / ARTICLE
    path.write_text(path.read_text("utf-8") + "\nfresh\n", "utf-8")
    _backup(ws, repo)
    tree = rd.render(ws.root, skip=[repo / "memtui-backup"], known=_state(ws, repo))
    assert tree.files[rd.FILES + ARTICLE.encode()].loaded


def test_a_file_that_is_not_what_its_record_says_makes_the_backup_read_everything(
        sample_copy: Path, tmp_path: Path, no_margin: None, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    known = _state(ws, repo)
    record = known.files[ARTICLE]
    record[5] = "0" * 64  # a record that lies about the bytes
    known.save(ws, repo / "memtui-backup")
    (repo / "memtui-backup" / "files" / ARTICLE).unlink()  # the copy must be written: the file is read
    result = _backup(ws, repo)
    assert f"files/{ARTICLE}" in result.written
    assert (repo / "memtui-backup" / "files" / ARTICLE).read_bytes() == (sample_copy / ARTICLE).read_bytes()
    assert verify(repo, None, "memtui-backup").ok


def test_a_changed_store_is_parsed_and_rendered_again(sample_copy: Path, tmp_path: Path, no_margin: None,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    with Session.open(ws) as session:
        session.write("graph.add-observation", "memory/graph.jsonl", lambda tx: tx.table("provenance").insert(
            {"entity": "RouteCore", "observation": f"token {GITHUB}", "session": "s-1"}))
    tree = rd.render(ws.root, skip=[repo / "memtui-backup"], known=_state(ws, repo))
    assert tree.tables is not None and "provenance" in tree.tables
    with pytest.raises(backup.BackupBlocked) as refused:
        _backup(ws, repo)
    assert any(f.path == ".memtui/store.json" and "table provenance" in f.message for f in refused.value.findings)


def test_an_edited_copy_in_the_backup_folder_is_rewritten(sample_copy: Path, tmp_path: Path, no_margin: None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    copy = repo / "memtui-backup" / "files" / ARTICLE
    original = copy.read_bytes()
    copy.write_bytes(original.replace(b"e", b"x", 1))
    result = _backup(ws, repo)
    assert f"files/{ARTICLE}" in result.written and copy.read_bytes() == original
