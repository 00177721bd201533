"""What memtui says about a backup's remote: the remote's own words
and fitting advice for a refused push, no credentials of a URL in anything printed, and counts
against the remote that say how old they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backup_helpers import behind_remote, git, git_http_server, isolate_git, run
from memtui.core.text import mask_url

SECRET = "ghp_s3cretT0ken"


@pytest.fixture(autouse=True)
def _git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


def _hooked_remote(tmp_path: Path, hook: str, base_url: str) -> tuple[Path, Path]:
    """A remote served over HTTP whose pre-receive hook (run by the server) refuses with ``hook``'s words."""
    bare = tmp_path / "served" / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(bare, "config", "http.receivepack", "true")
    script = bare / "hooks" / "pre-receive"
    script.write_text("#!/bin/sh\n" + hook + "\nexit 1\n")
    script.chmod(0o755)
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "remote", "add", "origin", f"{base_url}/bare.git")
    return bare, repo


@pytest.mark.parametrize("hook,advice", [
    ('echo "GH006: Protected branch update failed for refs/heads/master." >&2', "protected branch"),
    ('echo "error: commit messages must name a ticket" >&2', "A hook of the remote refused it"),
])
def test_a_hook_rejection_shows_the_remote_s_words_and_no_fetch_advice(sample_copy: Path, tmp_path: Path, capsys,
                                                                     hook: str, advice: str) -> None:
    with git_http_server(tmp_path / "served") as base_url:
        _bare, repo = _hooked_remote(tmp_path, hook, base_url)
        code, out, _ = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo), "--push")
    assert code == 4 and "backup NOT complete" in out
    said = hook.split('"')[1]
    assert said in out, "the remote's own message is shown"
    assert advice in out
    assert "fetch and merge" not in out and "pull --no-rebase" not in out


def test_a_non_fast_forward_still_advises_fetch_and_merge(sample_copy: Path, tmp_path: Path, capsys) -> None:
    repo = behind_remote(tmp_path)
    code, out, _ = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo), "--push")
    assert code == 4 and "fetch and merge" in out


@pytest.mark.parametrize("url,shown", [
    (f"https://{SECRET}@example.invalid/team/memory.git", "https://***@example.invalid/team/memory.git"),
    (f"https://backup-bot:{SECRET}@example.invalid/m.git", "https://backup-bot:***@example.invalid/m.git"),
    (f"https://example.invalid/m.git?access_token={SECRET}", "https://example.invalid/m.git?access_token=***"),
])
def test_credentials_in_a_remote_url_are_masked_everywhere_it_is_printed(sample_copy: Path, tmp_path: Path, capsys,
                                                                       url: str, shown: str) -> None:
    repo = tmp_path / "repo"
    assert run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo))[0] == 0
    git(repo, "remote", "add", "origin", url)
    for args in (["--status"], ["--status", "--json"], ["--push"], ["--push", "--json"]):
        (sample_copy / "memory" / "MEMORY.md").write_text(f"change for {args}\n")
        _code, out, err = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo),
                              "--remote", "origin", *args)
        assert SECRET not in out + err, args
    _code, out, _ = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo), "--status", "--json")
    assert json.loads(out)["url"] == shown


def test_mask_url_keeps_what_is_no_secret() -> None:
    assert mask_url("ssh://git@github.com/o/r.git and git@github.com:o/r.git") == \
        "ssh://git@github.com/o/r.git and git@github.com:o/r.git"
    assert mask_url("see https://example.invalid/a@b/c") == "see https://example.invalid/a@b/c"
    assert mask_url(f"fatal: unable to access 'https://{SECRET}@h/r/': 403") == "fatal: unable to access 'https://***@h/r/': 403"


def test_counts_against_the_remote_say_when_they_were_last_compared(sample_copy: Path, tmp_path: Path, capsys) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "remote", "add", "origin", str(bare))
    assert run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo), "--push")[0] == 0
    code, out, _ = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo), "--status")
    assert code == 0 and "0 ahead, 0 behind as of the last push" in out and "never fetched since" in out
    git(repo, "fetch", "-q", "origin")
    code, out, _ = run(capsys, "backup", "-w", str(sample_copy), "--repo", str(repo), "--status")
    assert "0 ahead, 0 behind as of the last fetch" in out and "never fetched" not in out
