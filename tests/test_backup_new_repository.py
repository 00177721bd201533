"""A backup creates a repository only in a new folder and says so (none when git has no
identity); counts are said with the right plural."""

from __future__ import annotations

from pathlib import Path

import pytest

from backup_helpers import isolate_git, run
from test_backup import make_ws


@pytest.fixture(autouse=True)
def _git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


# -- plurals; a repository is created only in a new folder, and said so; no identity, no repo ------
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
