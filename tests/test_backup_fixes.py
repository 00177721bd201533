"""Defects a new-user tester found in backup and restore (issue 6), each as a test that failed first."""

from __future__ import annotations

from pathlib import Path

import pytest

from backup_helpers import isolate_git, run
from memtui.core.backup import render as rd
from memtui.core.backup.restore import restore_tree
from test_backup import make_full_ws, make_ws


@pytest.fixture(autouse=True)
def _git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


# -- 6: restore checks every MANIFEST sum; a failed restore leaves nothing half-written -------------------

def test_restore_flags_a_tampered_store_file_against_the_manifest(tmp_path: Path) -> None:
    files = dict(rd.render(make_full_ws(tmp_path / "ws")).files)
    [store_file] = [p for p in files if p.startswith(rd.STORE) and b"versions" in p]
    data = files[store_file].data
    files[store_file] = rd.Entry(data.replace(b"line two", b"line 2!!"))
    assert files[store_file].data != data
    result = restore_tree(files, tmp_path / "out")
    assert not result.ok
    assert [(f.code, f.path) for f in result.findings] == [("restore-mismatch", rd.shown(store_file))]


def test_restore_cli_exits_1_naming_a_tampered_store_file(tmp_path: Path, capsys) -> None:
    ws = make_full_ws(tmp_path / "ws")
    repo = tmp_path / "repo"
    assert run(capsys, "backup", "-w", str(ws), "--repo", str(repo))[0] == 0
    [table] = list((repo / "memtui-backup" / "store").glob("versions*.md"))
    table.write_bytes(table.read_bytes().replace(b"line two", b"line 2!!"))
    from backup_helpers import git
    git(repo, "commit", "-qam", "tamper")
    code, out, _ = run(capsys, "restore", "--repo", str(repo), "--to", str(tmp_path / "out"))
    assert code == 1 and "store/versions" in out and "MANIFEST" in out


def _broken_tree(tmp_path: Path) -> dict[bytes, rd.Entry]:
    """A tree whose last store file cannot be parsed (after files/ folders were made)."""
    files = dict(rd.render(make_full_ws(tmp_path / "ws")).files)
    last = max(p for p in files if p.startswith(rd.STORE))
    files[last] = rd.Entry(b"not a table at all\n")
    return files


def test_a_failed_restore_removes_the_folder_it_created(tmp_path: Path) -> None:
    target = tmp_path / "new" / "out"
    with pytest.raises(rd.BackupFormatError):
        restore_tree(_broken_tree(tmp_path), target)
    assert not target.exists()
    assert (tmp_path / "new").exists() is False or list((tmp_path / "new").iterdir()) == []


def test_a_failed_restore_empties_an_empty_folder_it_wrote_into(tmp_path: Path) -> None:
    target = tmp_path / "empty"
    target.mkdir()
    with pytest.raises(rd.BackupFormatError):
        restore_tree(_broken_tree(tmp_path), target)
    assert target.is_dir() and list(target.iterdir()) == []
    # and a restore of a good tree into it works now without --force
    assert restore_tree(rd.render(make_ws(tmp_path / "ws2")).files, target).ok


# -- 7: plurals; a repository is created only in a new folder, and said so; no identity, no repo -----------

def _counted_words_agree(text: str) -> bool:
    import re
    pairs = re.findall(r"\b(\d[\d,]*) (difference|file|store record|record)(s?)\b", text)
    return bool(pairs) and all((n == "1") == (s == "") for n, _w, s in pairs)


def test_verify_says_1_difference_not_1_differences(tmp_path: Path, capsys) -> None:
    ws = make_ws(tmp_path / "ws")
    repo = tmp_path / "repo"
    assert run(capsys, "backup", "-w", str(ws), "--repo", str(repo))[0] == 0
    target = repo / "memtui-backup" / "files" / "memory" / "platform" / "crlf.md"
    target.write_bytes(b"changed\n")
    from backup_helpers import git
    git(repo, "commit", "-qam", "tamper")
    code, out, _ = run(capsys, "verify", "--repo", str(repo))
    assert code == 1 and "1 differences" not in out and _counted_words_agree(out.splitlines()[-1])


def test_backup_creates_a_repository_only_in_a_new_folder_and_says_so(tmp_path: Path, capsys) -> None:
    ws = make_ws(tmp_path / "ws")
    repo = tmp_path / "new-repo"
    code, out, _ = run(capsys, "backup", "-w", str(ws), "--repo", str(repo))
    assert code == 0 and f"created a new git repository at {repo}" in out and (repo / ".git").is_dir()
    code, out, _ = run(capsys, "backup", "-w", str(ws), "--repo", str(repo))
    assert code == 0 and "created a new git repository" not in out
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("not a repository")
    code, _, err = run(capsys, "backup", "-w", str(ws), "--repo", str(busy))
    assert code == 3 and "not a git repository" in err and not (busy / ".git").exists()
    assert [p.name for p in busy.iterdir()] == ["mine.txt"]


def test_a_backup_refused_for_no_identity_leaves_no_new_repository(tmp_path: Path, capsys,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "nohome", identity=None)
    ws = make_ws(tmp_path / "ws")
    repo = tmp_path / "parent" / "repo"
    code, _, err = run(capsys, "backup", "-w", str(ws), "--repo", str(repo))
    assert code == 3 and "never invents an author" in err
    assert not repo.exists() and not (tmp_path / "parent").exists()
