"""A backup scans only what changed since the last one: the secrets scan's results are kept by
content (files by their bytes, store records by their rendered text), a change is scanned
again and still refused when it holds a secret, and the kept results never outlive the rule
set that made them or a write cut short."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.core import scan
from memtui.core.backup import commit as backup
from memtui.core.scan import backup as scan_backup
from memtui.core.session import Session
from memtui.core.workspace import Workspace

from tests.backup_helpers import isolate_git

GITHUB = "ghp_" + "Zx9QmV3kP7LrT2nW8yB4cD6fH1jK5sA0uE3i"
ARTICLE = "memory/support/courier-app/gps-drift.md"


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The places the secrets scan reads, in order (a spy on the one scan entry point)."""
    places: list[str] = []
    real = scan.secret_findings

    def spy(text: str, shown: str, first_line: int = 1):  # noqa: ANN202
        places.append(shown)
        return real(text, shown, first_line)

    monkeypatch.setattr(scan, "secret_findings", spy)
    return places


def _backup(ws: Workspace, repo: Path) -> backup.BackupResult:
    with Session.open(ws) as session:
        return backup.backup(ws, repo, session=session)


def test_a_second_backup_scans_only_the_changed_file(sample_copy: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch, counted: list[str]) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    assert ARTICLE in counted and any(p == ".memtui/store.json" for p in counted)  # the first scans all
    counted.clear()
    path = sample_copy / ARTICLE
    path.write_text(path.read_text("utf-8") + "\nOne more line about tunnels.\n", "utf-8")
    result = _backup(ws, repo)
    assert result.commit
    files = [p for p in counted if p != ".memtui/store.json"]
    assert files == [ARTICLE]  # no unchanged file was scanned again
    # the store's records changed only by what the first backup's session recorded, if anything
    assert counted.count(".memtui/store.json") < 5


def test_a_secret_added_to_a_scanned_file_is_still_refused(sample_copy: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    path = sample_copy / ARTICLE
    path.write_text(path.read_text("utf-8") + f"\nThe deploy token is {GITHUB}\n", "utf-8")
    with pytest.raises(backup.BackupBlocked) as refused:
        _backup(ws, repo)
    assert ARTICLE in {f.path for f in refused.value.findings}
    assert GITHUB not in str(refused.value)
    committed = (repo / "memtui-backup" / "files" / ARTICLE).read_text("utf-8")
    assert GITHUB not in committed  # nothing was written


def test_a_secret_in_a_new_store_record_is_found_with_the_cache_warm(sample_copy: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    with Session.open(ws) as session:
        session.write("graph.add-observation", "memory/graph.jsonl", lambda tx: tx.table("provenance").insert(
            {"entity": "RouteCore", "observation": f"token {GITHUB}", "session": "s-1"}))
    with pytest.raises(backup.BackupBlocked) as refused:
        _backup(ws, repo)
    assert any(f.path == ".memtui/store.json" and "table provenance" in f.message for f in refused.value.findings)


def test_a_cut_cache_file_is_ignored_and_the_scan_is_whole(sample_copy: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch, counted: list[str]) -> None:
    """A kill in the middle of writing the cache cannot leave half a file (it is written to a
    temporary file and renamed); and should a cut file be found anyway, it is read as empty."""
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    files = [scan_backup.BackupScanCache._file(ws), scan_backup.cache_file(scan_backup.StoreScanCache.FOLDER, ws)]
    for file in files:
        assert file.is_file()
        assert not [p for p in file.parent.iterdir() if p != file]  # no temporary file left beside it
        data = file.read_bytes()
        file.write_bytes(data[: len(data) // 2])
    assert scan_backup.StoreScanCache.load(ws).tables == {}
    counted.clear()
    path = sample_copy / ARTICLE
    path.write_text(path.read_text("utf-8") + f"\n{GITHUB}\n", "utf-8")
    with pytest.raises(backup.BackupBlocked):
        _backup(ws, repo)
    assert ARTICLE in counted and "memory/MEMORY_CUSTOM.md" in counted  # everything scanned again


def test_a_changed_rule_set_drops_the_kept_results(sample_copy: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, counted: list[str]) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    ws, repo = Workspace.open(sample_copy), tmp_path / "repo"
    _backup(ws, repo)
    assert scan_backup.StoreScanCache.load(ws).tables
    monkeypatch.setattr(scan, "_FINGERPRINT", "another-rule-set")
    assert scan_backup.StoreScanCache.load(ws).tables == {}
    assert scan_backup.BackupScanCache.load(ws).entries == {}
    counted.clear()
    _backup(ws, repo)
    assert ARTICLE in counted and ".memtui/store.json" in counted


def test_the_rule_fingerprint_follows_the_rule_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    first = scan.rules_fingerprint()
    monkeypatch.setattr(scan, "_FINGERPRINT", None)
    assert scan.rules_fingerprint() == first  # stable for the same rules
    monkeypatch.setattr(scan, "_FINGERPRINT", None)
    monkeypatch.setattr(scan, "_RULE_FILES", (*scan._RULE_FILES, "a-rule-file-that-is-not-there.py"))
    assert scan.rules_fingerprint() != first
