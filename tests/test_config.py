"""memtui.toml: one typed reader; an unknown key or a wrong type is a finding with its line."""

from __future__ import annotations

from pathlib import Path

from memtui.core import config
from memtui.core.backup.commit import settings
from memtui.core.workspace import Workspace


def _load(tmp_path: Path, text: str):
    path = tmp_path / "memtui.toml"
    path.write_text(text, encoding="utf-8")
    return config.load(path)


def test_missing_file_is_all_defaults(tmp_path: Path) -> None:
    conf, findings = config.load(tmp_path / "memtui.toml")
    assert findings == [] and conf == config.Config()
    assert conf.backup.push is False and conf.backup.path == "memtui-backup"
    assert conf.limits.max_file_bytes == 2 * 1024 * 1024 and conf.profile is None


def test_typed_values_are_read(tmp_path: Path) -> None:
    conf, findings = _load(tmp_path, '[user]\nprofile = " support.curator "\n[owners]\n"support/" = "lead"\n'
                                     '[limits]\nmax_file_bytes = 1024\n[backup]\nrepo = "../r"\npush = true\n'
                                     '[git]\nname = "B"\nemail = "b@example.org"\n')
    assert findings == []
    assert conf.profile == "support.curator" and conf.owners == {"support": "lead"}
    assert conf.max_file_bytes == 1024 and conf.backup.push is True and conf.backup.repo == "../r"
    assert (conf.git.name, conf.git.email) == ("B", "b@example.org")


def test_unknown_keys_tables_and_wrong_types_are_findings_with_their_lines(tmp_path: Path) -> None:
    text = ('[user]\nprofile = "p"\n\n[backup]\npush = "yes"\npath = "b"\nrepo_url = "x"\n'
            '[limits]\nmax_file_bytes = -3\n[serach]\nx = 1\n[search]\nprecedent_threshold = 1.4\n')
    conf, findings = _load(tmp_path, text)
    found = {(f.line, f.message.split(" must")[0].split(" is")[0]) for f in findings}
    assert found == {(5, "[backup] push"), (7, "[backup] repo_url"), (9, "[limits] max_file_bytes"),
                     (10, "[serach]"), (13, "[search] precedent_threshold")}
    assert all(f.code == "config-invalid" and f.fix for f in findings)
    assert conf.backup.push is False, "a wrong type keeps the default, never a guess"
    assert conf.backup.path == "b" and conf.profile == "p", "the rest of the file still applies"
    assert conf.max_file_bytes == 2 * 1024 * 1024
    assert "settings of [backup] are: max_restore_bytes, max_restore_file_bytes, path, push, remote, repo" in next(f.fix for f in findings if f.line == 7)


def test_a_bool_is_not_a_number(tmp_path: Path) -> None:
    conf, findings = _load(tmp_path, "[limits]\nmax_file_bytes = true\n")
    assert [f.line for f in findings] == [2] and conf.max_file_bytes == 2 * 1024 * 1024


def test_backup_push_means_the_same_in_the_cli_and_the_tui(tmp_path: Path) -> None:
    """`[backup] push = true` was read (raw) only on the TUI's path; `memtui backup`
    ignored it. Both paths now ask core.backup.commit.settings."""
    (tmp_path / "memory").mkdir()
    (tmp_path / "memtui.toml").write_text('[backup]\nrepo = "repo"\npush = true\n')
    ws = Workspace.open(tmp_path)
    assert settings(ws).push is True
    assert settings(ws, push=False).push is False, "--no-push wins"
    assert settings(ws).repo == str((tmp_path / "repo").resolve())


def test_set_setting_writes_through_the_guarded_write_and_keeps_comments(tmp_path: Path) -> None:
    """The TUI remembers a choice in memtui.toml (typed, audited, comments kept)."""
    import pytest as _pytest

    from memtui.core.config import load, set_setting
    from memtui.core.session import Session

    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memtui.toml").write_text("# keep me\n[user]\nprofile = \"a.b\"\n", encoding="utf-8")
    with Session.open(root, purpose="test") as session:
        done = set_setting(session, "backup", "repo", "/srv/backups")
        assert done.written and done.entry.action == "config.set"
        with _pytest.raises(ValueError, match="must be"):
            set_setting(session, "backup", "push", "yes")
        with _pytest.raises(ValueError, match="not a memtui setting"):
            set_setting(session, "backup", "nope", 1)
    text = (root / "memtui.toml").read_text(encoding="utf-8")
    assert text.startswith("# keep me\n")
    config, findings = load(root / "memtui.toml")
    assert config.backup.repo == "/srv/backups" and config.user.profile == "a.b" and not findings
