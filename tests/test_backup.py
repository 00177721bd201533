"""Backup to git, restore offline, verify the round trip (seed 004).

Every seed 004 lesson is a test named ``test_seed004_*``; the bug inputs are read in place
from ``../shared/bug-inputs``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from backup_helpers import IDENTITY, fill_store, git, isolate_git, tree_bytes
from memtui.core.backup import render as rd
from memtui.core.backup.commit import backup, prepare, status
from memtui.core.backup.commit import settings as backup_settings
from memtui.core.backup.git import BackupRefused, BackupRepo, split_spec
from memtui.core.backup.restore import restore, restore_tree
from memtui.core.backup.verify import verify, verify_tree
from memtui.core.store import STORE_NAME, StoreDamagedError, parse as parse_store
from memtui.core.workspace import Workspace

SUB = "memtui-backup"


@pytest.fixture(autouse=True)
def _git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


def make_ws(root: Path) -> Path:
    """A small workspace with nasty bytes everywhere a restore could lose them."""
    (root / "memory" / "platform").mkdir(parents=True)
    (root / "memory" / "AGENTS.md").write_bytes(b"# Memory\n\n- [Platform](platform/AGENTS.md) \xe2\x80\x94 platform\n")
    (root / "memory" / "platform" / "AGENTS.md").write_bytes(b"# Platform\r\n\r\n- [Crlf](crlf.md) - crlf\r\n")
    (root / "memory" / "platform" / "crlf.md").write_bytes(b"line one\r\nline two\r\n")
    (root / "memory" / "platform" / "no-newline.md").write_bytes(b"no newline at the end")
    (root / "memory" / "platform" / "latin1.md").write_bytes(b"caf\xe9 is not UTF-8\n")
    (root / "memory" / "platform" / "empty.md").write_bytes(b"")
    (root / "memory" / "MEMORY_CUSTOM.md").write_bytes("\ufeffbom and кирилица\n".encode())
    (root / "memory" / "graph.jsonl").write_bytes(b'{"type":"entity","name":"a","entityType":"t","observations":[]}')
    (root / "skills" / "run").mkdir(parents=True)
    (root / "skills" / "run" / "SKILL.md").write_bytes(b"---\nname: run\ndescription: Use when running\n---\n")
    script = root / "skills" / "run" / "run.sh"
    script.write_bytes(b"#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    (root / "sessions" / "durable").mkdir(parents=True)
    (root / "sessions" / "durable" / "k1.jsonl").write_bytes(b'{"role":"user"}\n')
    (root / "sessions" / "empty-folder").mkdir()
    return root


STORE_TABLES = {
    "versions": [
        {"article": "memory/platform/crlf.md", "number": 1, "state": "retired", "hash": "ab" * 32,
         "content": "line one\r\nline two\r\n", "created": "2026-01-02T03:04:05.000006+00:00",
         "provenance": {"case": "C-1", "human_reviewed": True, "untrusted_chain": False, "sources": []}},
        {"article": "memory/platform/crlf.md", "number": 2, "state": "active", "hash": "cd" * 32,
         "content": "# Title\n\n```python\nprint('x')\n```\n", "created": "2026-02-02T00:00:00+00:00",
         "provenance": None},
        {"article": "memory/new.md", "number": 1, "state": "rejected", "hash": "ef" * 32,
         "content": "rejected text without a final newline", "score": 0.5, "weight": 1.0, "count": 1,
         "tags": ["a", 1, 1.0, None, True, {"k": []}]},
    ],
    "uses": [{"case": "C-9", "verdict": "helped", "version": 2, "id_text": "2"}],
    "pins": [],
}


def make_full_ws(root: Path) -> Path:
    make_ws(root)
    fill_store(root, STORE_TABLES, audit=3)
    return root


def do_backup(ws_root: Path, repo: Path, **kw):
    return backup(Workspace.open(ws_root), repo, SUB, **kw)


# -- the store as markdown ---------------------------------------------------------------------

def test_table_round_trip_keeps_every_json_type() -> None:
    table = {"1": {"int": 1, "str_one": "1", "float_one": 1.0, "true": True, "null": None, "zero": 0,
                   "false": False, "list": [1, "1", 1.5, None], "dict": {"a": {"b": [True]}},
                   "text": "a\nb\n", "text_no_end": "a\n\nb", "ticks": "````\n```text\n",
                   "crlf": "a\r\nb\r\n", "nl_only": "\n", "empty": "", "tabs": "a\tb\nc",
                   "unicode": "кирилица 日本語 🚀\n", "surrogate": "bad \udce5 byte", "neg_zero": -0.0,
                   "big": 2 ** 70, "exp": 1e-300, "key with \"quotes\"\n": "v"},
             "3": {}, "10": {"only": "after 3 in number order"}}
    data = rd.render_table("versions", table)
    back = rd.parse_table(data)
    assert back == table
    assert list(back) == ["1", "3", "10"]
    for key, value in table["1"].items():
        assert type(back["1"][key]) is type(value), key
    assert str(back["1"]["neg_zero"]) == "-0.0"
    assert "```text\na\nb\n```" in data.decode()  # multi-line text is readable, not escaped


def test_table_parse_refuses_a_cut_or_edited_file() -> None:
    data = rd.render_table("t", {"1": {"a": 1}, "2": {"a": 2}})
    with pytest.raises(rd.BackupFormatError, match="says 2 records but holds 1"):
        rd.parse_table(data[: data.index(b"## Record 2")])
    with pytest.raises(rd.BackupFormatError, match="unexpected line"):
        rd.parse_table(data.replace(b"## Record 1", b"stray words\n## Record 1"))
    with pytest.raises(rd.BackupFormatError, match="not JSON"):
        rd.parse_table(data.replace(b'"a": 1', b'"a": one'))


def test_render_is_deterministic_and_writes_nothing(tmp_path: Path) -> None:
    ws = make_full_ws(tmp_path / "ws")
    before = tree_bytes(ws)
    first, second = rd.render(ws), rd.render(ws)
    assert {p: e.data for p, e in first.files.items()} == {p: e.data for p, e in second.files.items()}
    assert tree_bytes(ws) == before
    assert first.files[b"files/skills/run/run.sh"].executable
    assert b"files/.memtui/store.json" not in first.files
    assert set(first.tables) == {"versions", "uses", "pins", "audit", "audit_head"}


# -- seed 004 lessons --------------------------------------------------------------------------

def test_seed004_trailing_newline_kept_and_its_absence(tmp_path: Path) -> None:
    ws = make_full_ws(tmp_path / "ws")
    do_backup(ws, tmp_path / "repo")
    restore(tmp_path / "repo", None, SUB, tmp_path / "out")
    out = tmp_path / "out"
    assert (out / "memory/platform/no-newline.md").read_bytes() == b"no newline at the end"
    assert (out / "memory/platform/crlf.md").read_bytes() == b"line one\r\nline two\r\n"
    assert (out / "memory/graph.jsonl").read_bytes().endswith(b"[]}")
    store = parse_store((out / ".memtui" / STORE_NAME).read_bytes(), out)
    contents = [r["content"] for r in store["versions"].values()]
    assert contents == [r["content"] for r in STORE_TABLES["versions"]]
    assert contents[2].endswith("newline") and contents[1].endswith("```\n")


def test_seed004_ids_and_timestamps_preserved(tmp_path: Path) -> None:
    ws = make_full_ws(tmp_path / "ws")
    from memtui.core.session import Session

    def gap(tx) -> None:  # leave a gap in the doc ids
        tx.table("uses").insert({"case": "C-10"})
        tx.table("uses").insert({"case": "C-11"})
        tx.table("uses").remove(doc_ids=[2])

    with Session.open(ws, purpose="test") as session:
        session.write("test.seed", ".memtui/store.json", gap)
    original = parse_store((ws / ".memtui" / STORE_NAME).read_bytes(), ws)
    do_backup(ws, tmp_path / "repo")
    restore(tmp_path / "repo", None, SUB, tmp_path / "out")
    restored = parse_store((tmp_path / "out/.memtui" / STORE_NAME).read_bytes(), tmp_path)
    assert restored == original
    assert list(restored["uses"]) == ["1", "3"]
    assert [r["time"] for r in restored["audit"].values()] == [r["time"] for r in original["audit"].values()]
    assert [r["client_id"] for r in restored["audit"].values()] == [r["client_id"] for r in original["audit"].values()]


def test_seed004_a_record_keeps_its_kind(tmp_path: Path) -> None:
    """A document stays a document: every record comes back in its own table (seed 004 round 1)."""
    ws = make_full_ws(tmp_path / "ws")
    do_backup(ws, tmp_path / "repo")
    restore(tmp_path / "repo", None, SUB, tmp_path / "out")
    restored = parse_store((tmp_path / "out/.memtui" / STORE_NAME).read_bytes(), tmp_path)
    assert set(restored) == {"versions", "uses", "pins", "audit", "audit_head"}
    assert restored["pins"] == {}
    assert [r["state"] for r in restored["versions"].values()] == ["retired", "active", "rejected"]


def test_seed004_retired_and_rejected_versions_keep_their_content(tmp_path: Path) -> None:
    ws = make_full_ws(tmp_path / "ws")
    do_backup(ws, tmp_path / "repo")
    restore(tmp_path / "repo", None, SUB, tmp_path / "out")
    restored = parse_store((tmp_path / "out/.memtui" / STORE_NAME).read_bytes(), tmp_path)["versions"]
    by_state = {r["state"]: r for r in restored.values()}
    assert by_state["retired"] == STORE_TABLES["versions"][0]
    assert by_state["rejected"] == STORE_TABLES["versions"][2]


def test_seed004_no_banner_is_imported_as_content(tmp_path: Path) -> None:
    """The table heading, the count line and MANIFEST's title never become content."""
    ws = make_full_ws(tmp_path / "ws")
    tree = rd.render(ws)
    result = restore_tree(tree.files, tmp_path / "out")
    assert result.ok
    restored = parse_store((tmp_path / "out/.memtui" / STORE_NAME).read_bytes(), tmp_path)
    flat = json.dumps(restored, ensure_ascii=False)
    assert "# Table" not in flat and "records." not in flat and "memtui backup tree" not in flat
    assert not (tmp_path / "out" / "MANIFEST").exists() and not (tmp_path / "out" / "store").exists()
    assert tree_bytes(ws) == tree_bytes(tmp_path / "out")


def test_seed004_an_empty_store_verifies_cleanly(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws")
    (ws / ".memtui").mkdir()
    (ws / ".memtui" / STORE_NAME).write_bytes(b"{}")
    do_backup(ws, tmp_path / "repo")
    result = verify(tmp_path / "repo", None, SUB)
    assert result.ok, result.differences
    restore(tmp_path / "repo", None, SUB, tmp_path / "out")
    assert parse_store((tmp_path / "out/.memtui" / STORE_NAME).read_bytes(), tmp_path) == {}


def test_seed004_a_first_boot_folder_verifies_cleanly(tmp_path: Path) -> None:
    """A workspace with nothing in it yet (no memory/, no store) is not drift (seed 004 round 6)."""
    ws = tmp_path / "fresh"
    ws.mkdir()
    result = do_backup(ws, tmp_path / "repo")
    assert result.commit and result.counts["files"] == 0
    checked = verify(tmp_path / "repo", None, SUB)
    assert checked.ok and checked.files == 0
    restore(tmp_path / "repo", None, SUB, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_seed004_verify_finds_every_difference_with_a_diff(tmp_path: Path) -> None:
    """verify compares the backup tree and can fail: a tampered backup is reported file by file."""
    ws = make_full_ws(tmp_path / "ws")
    tree = rd.render(ws)
    assert verify_tree(tree.files).ok
    tampered = dict(tree.files)
    tampered[b"files/memory/platform/crlf.md"] = rd.Entry(b"line one\nline two\n")
    result = verify_tree(tampered)
    assert not result.ok
    assert any(f.code == "restore-mismatch" and "crlf.md" in f.path for f in result.findings)
    edited = dict(tree.files)
    edited[b"store/uses.md"] = rd.Entry(edited[b"store/uses.md"].data.replace(b'"C-9"', b'"C-8"'))
    result = verify_tree(edited)
    assert [d.path for d in result.differences] == ["MANIFEST"]
    assert "-" in result.differences[0].diff and "store/uses.md" in result.differences[0].diff


# -- the repository ------------------------------------------------------------------------------

def test_backup_commits_only_the_backup_path_and_leaves_other_changes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README").write_text("one\n")
    (repo / "notes.txt").write_text("tracked\n")
    git(repo, "add", "README", "notes.txt")
    git(repo, "commit", "-qm", "start")
    (repo / "README").write_text("staged change\n")
    git(repo, "add", "README")
    (repo / "notes.txt").write_text("unstaged change\n")
    (repo / "untracked.txt").write_text("new\n")
    before = (git(repo, "diff", "--cached"), git(repo, "diff"), git(repo, "status", "--porcelain"))
    result = do_backup(make_full_ws(tmp_path / "ws"), repo)
    assert result.commit
    after = (git(repo, "diff", "--cached"), git(repo, "diff"), git(repo, "status", "--porcelain"))
    assert after == before
    names = git(repo, "show", "--name-only", "--format=", "HEAD").decode().split()
    assert names and all(n.startswith(SUB + "/") for n in names)
    message = git(repo, "log", "-1", "--format=%B").decode()
    assert "files: 11" in message and "table versions: 3" in message


def test_backup_makes_no_commit_when_nothing_changed(tmp_path: Path) -> None:
    ws = make_full_ws(tmp_path / "ws")
    first = do_backup(ws, tmp_path / "repo")
    head = git(tmp_path / "repo", "rev-parse", "HEAD")
    second = do_backup(ws, tmp_path / "repo")
    assert first.commit and second.commit is None and second.written == []
    assert git(tmp_path / "repo", "rev-parse", "HEAD") == head


def test_backup_rewrites_only_changed_files(tmp_path: Path) -> None:
    ws = make_full_ws(tmp_path / "ws")
    do_backup(ws, tmp_path / "repo")
    (ws / "memory/platform/crlf.md").write_bytes(b"changed\r\n")
    (ws / "memory/platform/empty.md").unlink()
    result = do_backup(ws, tmp_path / "repo")
    assert result.written == ["MANIFEST", "files/memory/platform/crlf.md"]
    assert result.removed == ["files/memory/platform/empty.md"]
    changed = git(tmp_path / "repo", "show", "--name-only", "--format=", "HEAD").decode().split()
    assert sorted(changed) == sorted(f"{SUB}/{p}" for p in ["MANIFEST", "files/memory/platform/crlf.md",
                                                             "files/memory/platform/empty.md"])
    assert status(tmp_path / "repo", SUB)["history"][0]["changed"] == 3


def test_restoring_an_older_commit_gives_that_days_workspace_and_store(tmp_path: Path) -> None:
    ws = make_full_ws(tmp_path / "ws")
    first = do_backup(ws, tmp_path / "repo")
    day_one = tree_bytes(ws)
    (ws / "memory/MEMORY.md").write_text("day two\n")
    fill_store(ws, {"pins": [{"article": "x", "pinned": True}]}, audit=1)
    do_backup(ws, tmp_path / "repo")
    result = restore(tmp_path / "repo", first.commit, SUB, tmp_path / "old")
    assert result.commit == first.commit
    old = tree_bytes(tmp_path / "old")
    assert old == day_one
    repo, rev = split_spec(f"{tmp_path / 'repo'}@{first.commit[:8]}")
    assert (repo, rev) == (str(tmp_path / "repo"), first.commit[:8])


def test_restore_refuses_a_non_empty_folder_unless_forced(tmp_path: Path) -> None:
    ws = make_full_ws(tmp_path / "ws")
    do_backup(ws, tmp_path / "repo")
    target = tmp_path / "busy"
    target.mkdir()
    (target / "mine.txt").write_text("keep me")
    with pytest.raises(BackupRefused, match="not empty"):
        restore(tmp_path / "repo", None, SUB, target)
    assert [p.name for p in target.iterdir()] == ["mine.txt"]
    assert restore(tmp_path / "repo", None, SUB, target, force=True).ok
    assert (target / "mine.txt").read_text() == "keep me"


def test_restore_refuses_entries_outside_the_target_and_writes_nothing_through_links(tmp_path: Path) -> None:
    tree = rd.render(make_ws(tmp_path / "ws")).files
    evil = dict(tree)
    for path in (b"files/../escape.txt", b"files//etc/passwd-copy", b"files/a/.git/config", b"files/.GIT/hooks/x",
                 b"files/.memtui/store.json", b"elsewhere/file", b"files/a/./b"):
        evil[path] = rd.Entry(b"evil")
    result = restore_tree(evil, tmp_path / "out")
    refused = sorted(f.path for f in result.findings if f.code == "restore-refused")
    assert refused == sorted(rd.shown(p) for p in evil if p not in tree)
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "out/a").exists()
    # --force into a folder holding a link: nothing is written through it
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "linked"
    target.mkdir()
    (target / "memory").symlink_to(outside)
    result = restore_tree(tree, target, force=True)
    assert any(f.code == "restore-refused" and f.path.startswith("files/memory/") for f in result.findings)
    assert list(outside.iterdir()) == []


def test_restore_refuses_a_symlink_committed_in_the_backup(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws")
    repo = tmp_path / "repo"
    do_backup(ws, repo)
    (repo / SUB / "files" / "memory" / "link.md").symlink_to("/etc/passwd")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a link sneaks in")
    result = restore(repo, None, SUB, tmp_path / "out")
    assert [f.path for f in result.findings if f.code == "restore-refused"] == ["files/memory/link.md"]
    assert not os.path.lexists(tmp_path / "out/memory/link.md")


def test_workspace_symlinks_are_skipped_with_a_finding(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws")
    (ws / "memory" / "outside.md").symlink_to("/etc/hostname")
    tree = rd.render(ws)
    assert b"files/memory/outside.md" not in tree.files
    assert [f.path for f in tree.findings if f.code == "backup-skipped"] == ["memory/outside.md"]


def test_workspace_gitattributes_and_gitignore_cannot_change_the_copies(tmp_path: Path) -> None:
    """A workspace's own `* text` or `.gitignore` must not convert or drop files in the backup."""
    ws = make_ws(tmp_path / "ws")
    (ws / ".gitattributes").write_bytes(b"* text eol=lf\n*.md filter=lfs\n")
    (ws / ".gitignore").write_bytes(b"*.md\n")
    do_backup(ws, tmp_path / "repo")
    assert verify(tmp_path / "repo", None, SUB).ok
    restore(tmp_path / "repo", None, SUB, tmp_path / "out")
    assert tree_bytes(tmp_path / "out") == tree_bytes(ws)


def test_repo_inside_the_workspace_skips_itself(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws")
    git(ws, "init", "-q")  # memtui makes a repository only in a new folder, never in a workspace
    result = do_backup(ws, ws)
    assert result.commit
    files = git(ws, "ls-files", "-z", SUB).split(b"\0")
    assert not any(b"/.git/" in f or f.startswith(f"{SUB}/files/{SUB}".encode()) for f in files)
    assert do_backup(ws, ws).commit is None  # its own output is not a change
    assert verify(ws, None, SUB).ok


def test_a_damaged_store_stops_the_backup(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws")
    (ws / ".memtui").mkdir()
    (ws / ".memtui" / STORE_NAME).write_bytes(b'{"audit": {"1": ')
    with pytest.raises(StoreDamagedError):
        do_backup(ws, tmp_path / "repo")
    assert git(tmp_path / "repo", "rev-parse", "-q", "--verify", "HEAD", check=False) == b""


def test_git_fsck_passes_on_the_backup_repository(tmp_path: Path, shared: Path) -> None:
    ws = make_full_ws(tmp_path / "ws")
    subprocess.run([sys.executable, str(shared / "bug-inputs/B13/make_odd_names.py"), str(ws / "odd")],
                   check=True, capture_output=True)
    do_backup(ws, tmp_path / "repo")
    (ws / "memory/MEMORY.md").write_text("second\n")
    do_backup(ws, tmp_path / "repo")
    ok, output = BackupRepo.open(tmp_path / "repo").fsck()
    assert ok, output
    done = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=tmp_path / "repo", capture_output=True)
    assert done.returncode == 0, done.stderr


# -- push --------------------------------------------------------------------------------------

def test_push_to_an_empty_bare_repository_creates_the_branch(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    repo = tmp_path / "repo"
    do_backup(make_ws(tmp_path / "ws"), repo)
    git(repo, "remote", "add", "origin", str(bare))
    result = do_backup(tmp_path / "ws", repo, push=True)
    assert result.push is not None and result.push.ok, result.push
    assert git(bare, "rev-parse", result.branch) == git(repo, "rev-parse", "HEAD")


def test_a_rejected_push_is_a_failed_backup_and_never_forced(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    ws = make_ws(tmp_path / "ws")
    repo = tmp_path / "repo"
    do_backup(ws, repo)
    git(repo, "remote", "add", "origin", str(bare))
    assert do_backup(ws, repo, push=True).push.ok
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    (other / "theirs.txt").write_text("someone else's commit\n")
    git(other, "add", "theirs.txt")
    git(other, "commit", "-qm", "theirs")
    git(other, "push", "-q", "origin", "master")
    theirs = git(bare, "rev-parse", "master")
    (ws / "memory/MEMORY.md").write_text("changed\n")
    result = do_backup(ws, repo, push=True)
    assert result.commit and not result.ok
    assert "rejected" in result.push.message and "never force-pushes" in result.push.message
    assert git(bare, "rev-parse", "master") == theirs


def test_the_token_reaches_git_without_a_file_and_never_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "ghp_SECRET_token_1234567890"
    monkeypatch.setenv("MEMTUI_GIT_TOKEN", token)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    ws = make_ws(tmp_path / "ws")
    repo = tmp_path / "repo"
    do_backup(ws, repo)
    git(repo, "remote", "add", "origin", "https://127.0.0.1:9/nobody/backup.git")
    (ws / "memory/MEMORY.md").write_text("x\n")
    result = do_backup(ws, repo, push=True)
    assert not result.push.ok
    shown = json.dumps(result.to_json())
    assert token not in shown
    assert any("environment" in n for n in result.notes)
    for folder in (repo, ws, tmp_path / "home"):
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert token.encode() not in path.read_bytes(), path


# repositories in ordinary odd states ----------------------------------------------------

@pytest.fixture
def odd_repos(tmp_path: Path, shared: Path) -> Path:
    target = tmp_path / "repos-odd_repos"
    subprocess.run(["sh", str(shared / "bug-inputs/B10/make_repos.sh"), str(target)], check=True, capture_output=True)
    return target


def test_empty_repo_first_backup_then_push(odd_repos: Path, tmp_path: Path) -> None:
    repo = odd_repos / "empty-repo"
    state = status(repo, SUB)
    assert state["history"] == [] and "no backups yet" in state["state"]
    untracked_before = git(repo, "status", "--porcelain")
    result = do_backup(make_ws(tmp_path / "ws"), repo)
    assert result.commit
    assert status(repo, SUB)["history"][0]["commit"] == result.commit
    # the repository's own files stay untracked, exactly as they were
    assert git(repo, "status", "--porcelain") == untracked_before
    git(repo, "remote", "add", "origin", str(odd_repos / "bare-backup.git"))
    pushed = do_backup(tmp_path / "ws", repo, push=True)
    assert pushed.push.ok
    assert git(odd_repos / "bare-backup.git", "rev-parse", result.branch) == result.commit.encode() + b"\n"


def test_detached_head_is_refused_with_advice_and_restore_still_works(odd_repos: Path, tmp_path: Path) -> None:
    repo = odd_repos / "detached-repo"
    state = status(repo, SUB)
    assert state["detached"] and "detached HEAD at" in state["state"]
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(BackupRefused, match=r"detached HEAD at commit [0-9a-f]{7}.*switch"):
        do_backup(make_ws(tmp_path / "ws"), repo)
    assert git(repo, "rev-parse", "HEAD") == head
    # memtui's own backups: three of them, then a detached checkout of the second
    ws = make_ws(tmp_path / "ws2")
    mine = tmp_path / "mine"
    commits = []
    for n in (1, 2, 3):
        (ws / "memory" / "MEMORY.md").write_text(f"backup {n}\n")
        commits.append(do_backup(ws, mine, message=f"backup {n}").commit)
    git(mine, "checkout", "-q", commits[1])
    assert [h["subject"] for h in status(mine, SUB)["history"]] == ["backup 2", "backup 1"]
    result = restore(mine, commits[2], SUB, tmp_path / "out")
    assert result.ok and (tmp_path / "out/memory/MEMORY.md").read_text() == "backup 3\n"


def test_unborn_main_beside_master_keeps_master(odd_repos: Path, tmp_path: Path) -> None:
    repo = odd_repos / "unborn-main"
    master = git(repo, "rev-parse", "master")
    with pytest.raises(BackupRefused, match="switch master"):
        do_backup(make_ws(tmp_path / "ws"), repo)
    assert git(repo, "rev-parse", "master") == master
    assert git(repo, "symbolic-ref", "HEAD") == b"refs/heads/main\n"
    assert status(repo, SUB)["state"].startswith("on branch main, which has no commits")


# no git identity ---------------------------------------------------------------------

def test_no_identity_stops_before_anything_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "empty-home", identity=None)
    ws = make_full_ws(tmp_path / "ws")
    before = tree_bytes(ws)
    with pytest.raises(BackupRefused) as caught:
        do_backup(ws, tmp_path / "repo")
    message = str(caught.value)
    assert "user.name and user.email not set" in message and "memtui.toml" in message
    assert "git config --global user.email" in message
    assert tree_bytes(ws) == before
    assert not (tmp_path / "repo").exists()  # identity is checked before `git init`


def test_memtui_toml_supplies_the_author(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "empty-home", identity=None)
    ws = make_ws(tmp_path / "ws")
    (ws / "memtui.toml").write_text('[git]\nname = "Ops Curator"\nemail = "ops@example.invalid"\n')
    conf_ws = Workspace.open(ws)
    result = backup(conf_ws, tmp_path / "repo", SUB, git_table=backup_settings(conf_ws).git)
    assert result.identity.source == "memtui.toml [git]"
    log = git(tmp_path / "repo", "log", "--format=%an <%ae> | %cn <%ce>").decode().strip()
    assert log == "Ops Curator <ops@example.invalid> | Ops Curator <ops@example.invalid>"


# odd names ----------------------------------------------------------------------------

def test_odd_names_back_up_change_and_restore_byte_for_byte(tmp_path: Path, shared: Path) -> None:
    ws = tmp_path / "names-b13"
    subprocess.run([sys.executable, str(shared / "bug-inputs/B13/make_odd_names.py"), str(ws)], check=True,
                   capture_output=True)
    originals = tree_bytes(ws)
    assert b"notes/bokm\xe5l.md" in originals and b"notes/-starts-with-dash.md" in originals
    nfd = unicodedata.normalize("NFD", "notes/café-NFD.md").encode()
    assert nfd in originals
    repo = tmp_path / "repo"
    first = do_backup(ws, repo)
    assert first.commit and first.counts["files"] == len(originals) and not first.findings
    shown = set(first.written)
    assert "files/notes/заметка о проекте.md" in shown and "files/notes/bokm\\xe5l.md" in shown
    # change the Cyrillic note and the one in the folder with a space
    cyr = ws / "notes" / "заметка о проекте.md"
    cyr.write_text("changed cyrillic\n")
    (ws / "skills" / "weekly report" / "SKILL.md").write_text("changed\n")
    second = do_backup(ws, repo)
    assert sorted(second.written) == sorted(["MANIFEST", "files/notes/заметка о проекте.md",
                                             "files/skills/weekly report/SKILL.md"])
    assert status(repo, SUB)["history"][0]["changed"] == 3
    # delete the notes folder, restore the previous backup: same names, NFD included, same bytes
    shutil.rmtree(ws / "notes")
    restore(repo, first.commit, SUB, tmp_path / "restored")
    assert tree_bytes(tmp_path / "restored") == originals
    assert verify(repo, None, SUB).ok and verify(repo, first.commit, SUB).ok


# -- real workspaces ---------------------------------------------------------------------------

def _round_trip(ws: Path, tmp_path: Path) -> None:
    original_files = tree_bytes(ws)
    store_file = ws / ".memtui" / STORE_NAME
    original_store = parse_store(store_file.read_bytes(), ws) if store_file.exists() else None
    result = do_backup(ws, tmp_path / "repo")
    assert result.commit
    checked = verify(tmp_path / "repo", None, SUB)
    assert checked.ok, [d.path for d in checked.differences] + [f.message for f in checked.findings]
    restore(tmp_path / "repo", None, SUB, tmp_path / "out")
    restored = tree_bytes(tmp_path / "out")
    restored.pop(b".memtui/" + STORE_NAME.encode(), None)
    original_files.pop(b".memtui/" + STORE_NAME.encode(), None)
    assert restored == original_files
    if original_store is not None:
        assert parse_store((tmp_path / "out/.memtui" / STORE_NAME).read_bytes(), tmp_path) == original_store


def test_sample_workspace_round_trip(sample_copy: Path, tmp_path: Path) -> None:
    fill_store(sample_copy, STORE_TABLES, audit=5)
    _round_trip(sample_copy, tmp_path)


def test_corpus_workspace_round_trip(shared: Path, tmp_path: Path) -> None:
    """A workspace made of real files: an AGENTS.md tree, skills, a graph and a notebook."""
    corpus = shared / "corpus"
    ws = tmp_path / "corpus-ws"
    shutil.copytree(corpus / "agents-trees" / "microsoft__agent-framework", ws / "memory")
    shutil.copytree(corpus / "skills" / "anthropics__skills", ws / "skills")
    graph = next(p for p in sorted((corpus / "graphs").rglob("*")) if p.is_file())
    shutil.copyfile(graph, ws / "memory" / "graph.jsonl")
    notebook = next(p for p in sorted((corpus / "notebooks").rglob("*")) if p.is_file())
    shutil.copyfile(notebook, ws / "memory" / "MEMORY.md")
    fill_store(ws, {"provenance": [{"entity": "x", "observation": 0, "session": "s-1"}]}, audit=2)
    _round_trip(ws, tmp_path)


def test_prepare_names_the_repository_state_without_tracebacks(tmp_path: Path) -> None:
    (tmp_path / "outer").mkdir()
    git(tmp_path / "outer", "init", "-q")
    (tmp_path / "outer" / "sub").mkdir()
    from memtui.core.backup.git import GitError

    with pytest.raises(GitError, match="inside the git repository"):
        prepare(tmp_path / "outer" / "sub", SUB)
    with pytest.raises(BackupRefused, match="must be a folder inside the repository"):
        prepare(tmp_path / "outer", "../escape")
    assert IDENTITY[0] in str(prepare(tmp_path / "outer", SUB)[3])


def test_the_askpass_helper_holds_no_secret_and_no_helper_may_store_it(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The token goes to git through one command's environment: the script only echoes a variable."""
    token = "tok_abcdefghijklmnop"
    repo = BackupRepo.open(tmp_path / "repo", create=True)
    git(tmp_path / "repo", "remote", "add", "origin", "https://example.invalid/x.git")
    seen = {}

    def fake_git(*args, env=None, stdin=None, check=True, secret=None, config=None):
        if "push" not in args:
            return BackupRepo.git(repo, *args, env=env, stdin=stdin, check=check, secret=secret, config=config)
        script = Path(env["GIT_ASKPASS"])
        seen["args"], seen["script"], seen["path"], seen["config"] = args, script.read_text(), script, config
        run = lambda prompt: subprocess.run([str(script), prompt], capture_output=True, text=True,  # noqa: E731
                                            env={**os.environ, **env}).stdout
        seen["user"], seen["password"] = run("Username for 'https://example.invalid': "), run("Password: ")
        return 128, b"", f"fatal: could not read from https://x:{token}@example.invalid".encode()

    monkeypatch.setattr(repo, "git", fake_git)
    result = repo.push("origin", "master", token)
    assert not result.ok and token not in result.message and "***" in result.message
    assert token not in seen["script"]
    assert (seen["user"], seen["password"]) == ("x-access-token\n", token + "\n")
    # every credential helper dropped (yours too), so none stores the token
    assert [p for p in seen["config"] if p[0].endswith(".helper")] == [("credential.helper", "")]
    assert "--force" not in seen["args"]
    assert not any(a.startswith("+") for a in seen["args"] if isinstance(a, str))
    assert token not in (tmp_path / "repo" / ".git" / "config").read_text()
    assert not seen["path"].exists()  # the helper folder is gone after the push


def test_a_file_named_with_a_colon_second_is_not_an_absolute_path() -> None:
    """Hypothesis found `_:` refused as "an absolute path" (a Windows drive check on POSIX)."""
    from memtui.core.backup.restore import unsafe_reason

    assert unsafe_reason(b"_:") is None
    assert unsafe_reason(b"a:b/notes.md") is None
    assert unsafe_reason(b"/etc/passwd") == "is an absolute path"
    assert unsafe_reason(b"../x") is not None


def test_commit_message_escapes_table_names_git_would_refuse() -> None:
    """Hypothesis found a store table named with a NUL: git refused the commit message."""
    from types import SimpleNamespace

    from memtui.core.backup.commit import message_for

    tree = SimpleNamespace(counts=lambda: {"files": 1, "bytes": 2, "empty_folders": 0, "records": 1,
                                           "tables": {"a\x00b\nc": 1}})
    message = message_for(tree, 1, 0, "sub\x00ject")
    assert "\x00" not in message and "table a\\u0000b\\nc: 1" in message
    assert message.startswith("sub\\u0000ject\n")
