"""The Backup screen, driven headless with Textual's Pilot."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static, TextArea

from backup_helpers import git, isolate_git, tree_bytes
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.backup import BackupScreen
from tests.conftest import wait_for


@pytest.fixture(autouse=True)
def _git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


def _configure(ws: Path, repo: Path) -> None:
    toml = ws / "memtui.toml"
    toml.write_text(toml.read_text() + f'\n[backup]\nrepo = "{repo}"\n')


#: A backup, verify or restore runs git and the secrets scan in a worker beside the app's own
#: start-up audit and index build: on a loaded 2-core CI machine (the torture tests start
#: processes meanwhile) one took over 20 s; a bound, not a speed assertion.
SLOW = 90.0


async def _open(pilot, app) -> BackupScreen:
    await app.switch_mode("backup")
    screen = app.screen
    assert isinstance(screen, BackupScreen)
    await wait_for(pilot, lambda: screen.state is not None)
    return screen


async def test_backup_history_verify_and_restore(sample_copy: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _configure(sample_copy, repo)
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _open(pilot, app)
        assert screen.state["exists"] is False
        status = str(screen.query_one("#backup-status", Static).render())
        assert "none yet" in status
        await pilot.press("b")
        await wait_for(pilot, lambda: not screen.busy and screen.state and screen.state["history"], timeout=SLOW)
        table = screen.query_one("#history", DataTable)
        assert table.row_count == 1
        assert int(str(table.get_row_at(0)[2])) > 50  # changed files of the first backup
        # a second backup after one change: two rows, the newest with 2 changed files
        (sample_copy / "memory" / "MEMORY.md").write_text("changed [/] not markup\n")
        await pilot.press("b")
        await wait_for(pilot, lambda: not screen.busy and len(screen.state["history"]) == 2, timeout=SLOW)
        assert str(table.get_row_at(0)[2]) == "2"
        await pilot.press("v")
        await wait_for(pilot, lambda: not screen.busy and "verified" in screen.last_message, timeout=SLOW)
        assert "zero differences" in screen.query_one("#diff", TextArea).text
        # restore the older backup into a new folder
        table.move_cursor(row=1)
        await pilot.press("r")
        await pilot.pause()
        ask = app.screen.query_one("#ask-input", Input)
        ask.value = str(tmp_path / "restored")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not screen.busy and "restored" in screen.last_message, timeout=SLOW)
        restored = tree_bytes(tmp_path / "restored")
        assert restored[b"memory/MEMORY.md"] != b"changed [/] not markup\n"
        assert set(restored) == set(tree_bytes(sample_copy))


async def test_a_detached_head_shows_a_sentence_and_backup_fails_with_its_reason(sample_copy: Path,
                                                                                  tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _configure(sample_copy, repo)
    from memtui.core.backup.commit import backup

    backup(Workspace.open(sample_copy), repo)
    (sample_copy / "memory" / "MEMORY.md").write_text("two\n")
    backup(Workspace.open(sample_copy), repo)
    git(repo, "checkout", "-q", "HEAD~1")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _open(pilot, app)
        assert "detached HEAD" in str(screen.query_one("#backup-status", Static).render())
        await pilot.press("b")
        await wait_for(pilot, lambda: not screen.busy and "backup failed" in screen.last_message, timeout=SLOW)
        assert "switch" in screen.last_message


async def test_the_repository_chosen_is_remembered_and_changes_since_the_backup_are_counted(
        sample_copy: Path, tmp_path: Path) -> None:
    """The repository chosen in the TUI was lost on restart, and neither the status
    nor verify said the workspace had changed since the last backup (verify said "zero
    differences" after an edit that was never backed up)."""
    from memtui.core.config import load

    repo = tmp_path / "chosen-repo"
    toml = sample_copy / "memtui.toml"
    comment = "# the team's settings\n"
    toml.write_text(comment + toml.read_text())
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _open(pilot, app)
        assert "press e" in str(screen.query_one("#backup-status", Static).render())
        await pilot.press("e")
        await wait_for(pilot, lambda: app.screen.query("#ask-input"))
        app.screen.query_one("#ask-input", Input).value = str(repo)
        await pilot.press("enter")
        await wait_for(pilot, lambda: load(toml)[0].backup.repo == str(repo), what="memtui.toml remembering it")
        assert toml.read_text().startswith(comment), "the file's comments are kept"
        assert any(e.action == "config.set" for e in app.session.audit.entries())
        await pilot.press("b")
        await wait_for(pilot, lambda: not screen.busy and screen.state and screen.state["history"]
                       and screen.state.get("pending") is not None, timeout=SLOW)
        status = str(screen.query_one("#backup-status", Static).render())
        assert "nothing changed since the last backup" in status
        (sample_copy / "memory" / "MEMORY.md").write_text("an edit never backed up\n")
        (sample_copy / "memory" / "new-note.md").write_text("another\n")
        screen.action_reload()
        await wait_for(pilot, lambda: "2 files changed since the last backup" in str(
            screen.query_one("#backup-status", Static).render()), what="the pending count", timeout=SLOW)
        await pilot.press("v")
        await wait_for(pilot, lambda: not screen.busy and "verified" in screen.last_message, timeout=SLOW)
        said = screen.query_one("#diff", TextArea).text
        assert "restored it into a temporary folder" in said and "zero differences" in said
        assert "not the workspace; in the workspace, 2 files changed since the last backup" in said
    app.session.close()
    again = MemtuiApp(Workspace.open(sample_copy))  # a restart keeps the choice
    async with again.run_test(size=(150, 45)) as pilot:
        screen = await _open(pilot, again)
        assert screen.repo == str(repo) and screen.state["history"]
    again.session.close()


async def test_a_bare_repository_is_said_at_once(sample_copy: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    _configure(sample_copy, bare)
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _open(pilot, app)
        assert "is a bare repository" in str(screen.query_one("#backup-status", Static).render())
    app.session.close()


async def test_a_backup_made_by_another_process_shows_without_a_key(sample_copy: Path, tmp_path: Path) -> None:
    """The backup repository lies outside the workspace the watcher follows: cron's or the CLI's
    backup must still reach the open area (a new user saw it only after ctrl+l)."""
    from memtui.core.backup.commit import backup

    repo = tmp_path / "repo"
    _configure(sample_copy, repo)
    backup(Workspace.open(sample_copy), repo)
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _open(pilot, app)
        await wait_for(pilot, lambda: len(screen.state["history"]) == 1, timeout=SLOW)
        (sample_copy / "memory" / "MEMORY.md").write_text("changed by an agent\n")
        backup(Workspace.open(sample_copy), repo)  # as `memtui backup` from cron would
        await wait_for(pilot, lambda: len(screen.state["history"]) == 2, timeout=SLOW,
                       what="the other process's backup in the history")
        assert screen.query_one("#history", DataTable).row_count == 2


async def test_push_with_push_off_asks_and_pushes_once(sample_copy: Path, tmp_path: Path) -> None:
    from memtui.core.backup.commit import backup
    from memtui.ui.widgets import Confirm

    repo, remote = tmp_path / "repo", tmp_path / "remote.git"
    _configure(sample_copy, repo)
    backup(Workspace.open(sample_copy), repo)
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="the one-off push question")
        await pilot.press("enter")  # by habit: No has the focus, nothing is pushed
        await wait_for(pilot, lambda: app.screen is screen)
        assert git(remote, "branch", "--list") == b""
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_for(pilot, lambda: not screen.busy and "push" in screen.last_message.lower(), timeout=SLOW)
    assert git(remote, "rev-parse", "HEAD").strip() == git(repo, "rev-parse", "HEAD").strip()
    assert "push = true" not in (sample_copy / "memtui.toml").read_text(), "the setting is unchanged"
