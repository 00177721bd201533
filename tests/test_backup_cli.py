"""`memtui backup`, `restore` and `verify` on the command line: output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backup_helpers import behind_remote, git, isolate_git, run, tree_bytes

SUB = "memtui-backup"


@pytest.fixture(autouse=True)
def _git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


def test_backup_restore_verify_round_trip(sample_copy: Path, tmp_path: Path, capsys) -> None:
    repo = str(tmp_path / "repo")
    code, out, _ = run(capsys, "backup", "-w", str(sample_copy), "--repo", repo, "--json")
    first = json.loads(out)
    assert code == 0 and first["changed"] and first["counts"]["files"] > 50
    code, out, _ = run(capsys, "backup", "-w", str(sample_copy), "--repo", repo)
    assert code == 0 and "nothing changed" in out
    code, out, _ = run(capsys, "verify", "--repo", repo)
    assert code == 0 and "zero differences" in out
    code, out, _ = run(capsys, "restore", "--repo", f"{repo}@{first['commit'][:8]}", "--to", str(tmp_path / "out"), "--json")
    assert code == 0 and json.loads(out)["ok"]
    assert tree_bytes(tmp_path / "out") == tree_bytes(sample_copy)
    code, _, err = run(capsys, "restore", "--repo", repo, "--to", str(tmp_path / "out"))
    assert code == 3 and "not empty" in err
    code, _, err = run(capsys, "restore", "--repo", f"{repo}@nosuchrev", "--to", str(tmp_path / "x"))
    assert code == 4 and "'nosuchrev' is not a commit" in err
    code, out, _ = run(capsys, "backup", "-w", str(sample_copy), "--repo", repo, "--history", "--json")
    history = json.loads(out)
    assert code == 0 and [h["commit"] for h in history["history"]] == [first["commit"]]
    assert (history["count"], history["total"], history["cursor"]) == (1, 1, None)
    code, out, _ = run(capsys, "backup", "-w", str(sample_copy), "--repo", repo, "--status")
    assert code == 0 and "last backup:" in out


def test_verify_exits_1_with_a_diff_when_the_backup_was_tampered(sample_copy: Path, tmp_path: Path, capsys) -> None:
    repo = tmp_path / "repo"
    assert run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo))[0] == 0
    target = repo / SUB / "files" / "memory" / "MEMORY.md"
    target.write_bytes(target.read_bytes() + b"edited by hand\n")
    git(repo, "commit", "-qam", "hand edit")
    code, out, _ = run(capsys, "verify", "--repo", str(repo))
    assert code == 1
    assert "files/memory/MEMORY.md" in out and "+edited by hand" not in out  # MANIFEST catches it
    assert "differs from the sha256" in out


def test_exit_codes_for_usage_refusal_and_git_failure(sample_copy: Path, tmp_path: Path, capsys,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = run(capsys, "backup", "-w", str(sample_copy))
    assert code == 2 and "no backup repository" in err
    repo = tmp_path / "repo"
    run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo))
    (sample_copy / "memory" / "MEMORY.md").write_text("two\n")
    run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo))
    git(repo, "checkout", "-q", "HEAD~1")
    code, _, err = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo))
    assert code == 3 and "detached HEAD" in err and "Traceback" not in err
    git(repo, "checkout", "-q", "master")
    isolate_git(monkeypatch, tmp_path / "nohome", identity=None)
    (sample_copy / "memory" / "MEMORY.md").write_text("three\n")
    code, _, err = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo))
    assert code == 3 and "never invents an author" in err
    code, _, err = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo), "--push")
    assert code == 3  # identity is checked before anything else happens


def test_a_rejected_push_exits_4_and_says_not_complete(sample_copy: Path, tmp_path: Path, capsys) -> None:
    repo = behind_remote(tmp_path)
    code, out, _ = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo), "--push")
    assert code == 4 and "backup NOT complete" in out and "rejected" in out


def test_memtui_toml_gives_the_repository_and_path(sample_copy: Path, tmp_path: Path, capsys) -> None:
    toml = sample_copy / "memtui.toml"
    toml.write_text(toml.read_text() + f'\n[backup]\nrepo = "{tmp_path / "configured"}"\npath = "ws-copy"\n')
    assert run(capsys, "backup", "-w", str(sample_copy))[0] == 0
    assert (tmp_path / "configured" / "ws-copy" / "MANIFEST").is_file()
    code, out, _ = run(capsys, "verify", "-w", str(sample_copy))
    assert code == 0 and "zero differences" in out


def test_backup_push_in_memtui_toml_pushes_from_the_cli(sample_copy: Path, tmp_path: Path, capsys) -> None:
    """`[backup] push = true` was ignored by `memtui backup` (the remote stayed empty)."""
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "remote", "add", "origin", str(bare))
    toml = sample_copy / "memtui.toml"
    toml.write_text(toml.read_text() + f'\n[backup]\nrepo = "{repo}"\npush = true\n')
    code, _out, err = run(capsys, "backup", "-w", str(sample_copy))
    assert code == 0, err
    pushed = git(bare, "log", "--oneline", "--all").decode()
    assert "memtui backup" in pushed, "the remote got the backup commit"
    head = git(repo, "rev-parse", "HEAD").strip()
    assert git(bare, "rev-parse", "--all").split() == [head]
    # --no-push overrides the setting for one run
    (sample_copy / "memory" / "MEMORY_CUSTOM.md").write_text("changed\n")
    assert run(capsys, "backup", "-w", str(sample_copy), "--no-push")[0] == 0
    assert git(bare, "rev-parse", "--all").split() == [head]


def test_restoring_a_commit_that_is_no_backup_is_a_problem_not_a_git_failure(sample_copy: Path, tmp_path: Path,
                                                                              capsys) -> None:
    """A new user restored `repo@<a commit before the first backup>` and got exit 4 ("an operation
    outside memtui failed"); git did not fail: the commit holds no backup (exit 1)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README").write_text("not a backup\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "first")
    target = tmp_path / "out"
    code, _, err = run(capsys, "restore", "--repo", f"{repo}@HEAD", "--to", str(target))
    assert code == 1 and "holds nothing under memtui-backup/" in err and "Traceback" not in err
    assert not target.exists() or not any(target.iterdir())
    code, out, _ = run(capsys, "backup", "--history", "-w", str(sample_copy), "--repo", str(repo))
    assert out.count("no backups yet") == 1


def test_status_of_a_repository_not_made_yet_says_the_first_backup_makes_it(sample_copy: Path, tmp_path: Path,
                                                                             capsys) -> None:
    """The TUI said "not ready: … does not exist" twice for a folder its prompt said the first
    backup would create."""
    code, out, _ = run(capsys, "backup", "--status", "-w", str(sample_copy), "--repo", str(tmp_path / "new"), "--json")
    state = json.loads(out)
    assert code == 0 and state["problem"] is None and "first backup creates" in state["state"]


def test_status_says_what_changed_since_the_last_backup(sample_copy: Path, tmp_path: Path, capsys) -> None:
    """In the CLI too: a new user found `backup --status` silent about an edit
    that was never backed up (the TUI said it)."""
    repo = tmp_path / "repo"
    assert run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo))[0] == 0
    code, out, _ = run(capsys, "backup", "--status", "-w", str(sample_copy), "--repo", str(repo), "--json")
    assert code == 0 and json.loads(out)["pending"]["count"] == 0
    with (sample_copy / "memory" / "MEMORY_CUSTOM.md").open("a", encoding="utf-8") as notes:
        notes.write("- one more line\n")
    code, out, _ = run(capsys, "backup", "--status", "-w", str(sample_copy), "--repo", str(repo))
    assert code == 0 and "1 file changed since the last backup" in out and "memory/MEMORY_CUSTOM.md" in out


def test_a_relative_repo_folder_is_created_where_it_is_named(sample_copy: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """`memtui backup --repo repo` made repo/repo (git resolved the path against the new folder)
    and then said "git made none"."""
    monkeypatch.chdir(sample_copy.parent)
    code, _out, err = run(capsys, "backup", "-w", sample_copy.name, "--repo", "repo")
    assert code == 0, err
    assert (sample_copy.parent / "repo" / ".git").is_dir() and not (sample_copy.parent / "repo" / "repo").exists()


def test_a_backup_repository_inside_the_memory_tree_is_refused(sample_copy: Path, capsys) -> None:
    """`--repo memory/x` was accepted: the audit then showed 47 findings and search found the
    backup's copies of every article."""
    code, _out, err = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(sample_copy / "memory" / "x"))
    assert code == 3 and "which memtui reads" in err
    assert not (sample_copy / "memory" / "x").exists()
