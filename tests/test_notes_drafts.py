"""Unsaved text in the Notes editor survives a closed terminal: a real TUI
process (headless, Textual's run_test) is stopped by a real signal, and the next start offers
the draft, which restores and saves (or restores as a conflict over a file changed since)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memtui.core import drafts
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.notes import NotesScreen
from tests.conftest import REPO, click, wait_for

TYPED = "kept across the signal "

_CHILD = textwrap.dedent("""
    import asyncio, sys
    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp

    async def main(path, typed):
        app = MemtuiApp(Workspace.open(path))
        async with app.run_test(size=(100, 30)) as pilot:
            await app.switch_mode("notes")
            while getattr(app.screen, "note", None) is None:
                await pilot.pause(0.02)
            app.screen.action_edit()
            await pilot.press(*typed)
            while not app.screen.dirty:
                await pilot.pause(0.02)
            print("typed", flush=True)
            while app.return_code is None:
                await pilot.pause(0.02)
        print("exited", app.return_code, flush=True)

    asyncio.run(main(sys.argv[1], sys.argv[2]))
""")


def _ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "MEMORY_CUSTOM.md").write_text("# Notes\n\nold line\n")
    return root


def _stop(root: Path, sig: signal.Signals) -> subprocess.CompletedProcess:
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(root), TYPED], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "typed", (line, proc.stderr.read() if proc.poll() is not None else "")
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stop_signal_keeps_the_unsaved_text_as_a_draft(tmp_path: Path, sig: signal.Signals) -> None:
    root = _ws(tmp_path)
    before = (root / "memory" / "MEMORY_CUSTOM.md").read_bytes()
    done = _stop(root, sig)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode in (0, 128 + sig), done
    draft = drafts.load(str(root.resolve()), "memory/MEMORY_CUSTOM.md")
    assert draft is not None and TYPED in draft.text and draft.why == sig.name
    assert draft.base is not None
    assert (root / "memory" / "MEMORY_CUSTOM.md").read_bytes() == before, "nothing saved without asking"
    assert not list((root).rglob("*draft*")), "the draft is not in the workspace"


def test_a_killed_editor_keeps_the_draft_it_wrote_while_typing(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(root), TYPED], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None and proc.stdout.readline().strip() == "typed"
    from tests.torture import wait_until

    def typed_draft() -> bool:  # a draft written after the first key holds only that key: wait for all of it
        draft = drafts.load(str(root.resolve()), "memory/MEMORY_CUSTOM.md")
        return draft is not None and TYPED in draft.text

    wait_until(typed_draft, what="the typing draft with every typed key")
    proc.kill()
    proc.wait()
    assert TYPED in drafts.load(str(root.resolve()), "memory/MEMORY_CUSTOM.md").text


async def _offered(app: MemtuiApp, pilot) -> NotesScreen:  # noqa: ANN001
    await app.switch_mode("notes")
    screen = app.screen
    assert isinstance(screen, NotesScreen)
    await wait_for(pilot, lambda: screen.note is not None and screen._draft is not None, what="the draft offer")
    assert screen.query_one("#notes-draft").has_class("shown")
    # the bar is laid out on a later refresh: a click before that lands where it is not yet
    await wait_for(pilot, lambda: screen.query_one("#draft-discard").region.area > 0
                   and screen.query_one("#draft-restore").region.area > 0, what="the draft bar laid out")
    return screen


async def test_the_next_start_offers_the_draft_and_saves_it(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    notes_file = root / "memory" / "MEMORY_CUSTOM.md"
    from memtui.core.atomic import sha256

    drafts.save(str(root.resolve()), "memory/MEMORY_CUSTOM.md", sha256(notes_file.read_bytes()),
                "# Notes\n\nmy unsaved line\n", "SIGHUP")
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _offered(app, pilot)
        await click(pilot, "#draft-restore")
        await wait_for(pilot, lambda: screen.dirty and "my unsaved line" in screen.editor.text)
        assert not screen.query_one("#notes-conflict").has_class("shown")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "my unsaved line" in notes_file.read_text())
        await wait_for(pilot, lambda: drafts.load(str(root.resolve()), "memory/MEMORY_CUSTOM.md") is None,
                       what="the draft removed after the save")


async def test_a_draft_over_a_file_changed_since_restores_as_a_conflict(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    notes_file = root / "memory" / "MEMORY_CUSTOM.md"
    from memtui.core.atomic import sha256

    drafts.save(str(root.resolve()), "memory/MEMORY_CUSTOM.md", sha256(notes_file.read_bytes()),
                "# Notes\n\nmine\n", "SIGTERM")
    notes_file.write_text("# Notes\n\nan agent's line\n")  # changed after the draft was kept
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _offered(app, pilot)
        await click(pilot, "#draft-restore")
        await wait_for(pilot, lambda: screen.query_one("#notes-conflict").has_class("shown"))
        await pilot.press("ctrl+s")
        await pilot.pause()
        await wait_for(pilot, lambda: all(w.is_finished for w in screen.app.workers if w.group == "notes-save"),
                       what="the save to end")
        assert notes_file.read_text() == "# Notes\n\nan agent's line\n", "never a silent overwrite"
        await click(pilot, "#conflict-keep")  # asks first (it drops the agent's line), then writes
        from memtui.ui.widgets import Confirm

        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="Keep mine asking first")
        assert "an agent's line" in str(app.screen.query_one("Static").render())
        await pilot.press("y")
        await wait_for(pilot, lambda: notes_file.read_text() == "# Notes\n\nmine\n")


async def test_discarding_the_draft_removes_it(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    drafts.save(str(root.resolve()), "memory/MEMORY_CUSTOM.md", None, "x", "SIGHUP")
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        await _offered(app, pilot)
        await click(pilot, "#draft-discard")
        await wait_for(pilot, lambda: drafts.load(str(root.resolve()), "memory/MEMORY_CUSTOM.md") is None)
