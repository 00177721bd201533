"""Restore checks every MANIFEST sum, and a failed restore leaves nothing half-written."""

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


# -- restore checks every MANIFEST sum; a failed restore leaves nothing half-written ---------------
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
