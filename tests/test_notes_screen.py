"""Pilot tests of the Notes area: type and save, conflict bar, clean reload, read-only, leave, a big note."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Select, Static, TextArea

from memtui.core import atomic
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from memtui.ui.screens.notes import PREVIEW_CAP, LeaveQuestion, NotesScreen
from memtui.ui.widgets import Confirm
from tests.conftest import click, open_area, settle, wait_for


class NotesApp(App):
    """The Notes screen alone, over one session."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.ws = session.ws
        self.session = session

    def on_mount(self) -> None:
        self.push_screen(NotesScreen(self.session))


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    return Workspace.open(root)


async def _settle(pilot) -> None:  # noqa: ANN001
    await settle(pilot)
    await pilot.pause()


def _status(app: App) -> str:
    return str(app.screen.query_one("#notes-status", Static).render())


async def test_type_save_and_the_file_on_disk_changes(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"# Notes\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test() as pilot:
            await _settle(pilot)
            editor = app.screen.query_one("#notes-editor", TextArea)
            assert editor.text == "# Notes\n" and editor.show_line_numbers and editor.language == "markdown"
            editor.focus()
            editor.move_cursor((1, 0))
            await pilot.press("h", "i")
            assert "unsaved" in _status(app)
            await pilot.press("ctrl+s")
            await _settle(pilot)
            # the save ends the file with a line end although the text typed has none, so an
            # agent's next `echo >>` starts a line of its own instead of joining "hi"
            assert ws.member_notes.read_bytes() == b"# Notes\nhi\n"
            assert "unsaved" not in _status(app)
            await pilot.press("ctrl+z")
            assert editor.text == "# Notes\n" and "unsaved" in _status(app)
        entries = session.audit.entries()
        assert [e.action for e in entries] == ["notes.set"]
        assert entries[0].after == atomic.sha256(b"# Notes\nhi\n")
    subprocess.run(["sh", "-c", f"echo 'agent: noted' >> '{ws.member_notes}'"], check=True)
    assert ws.member_notes.read_text(encoding="utf-8").splitlines() == ["# Notes", "hi", "agent: noted"]


async def test_absent_file_saves_by_creating_it(ws: Workspace) -> None:
    with Session.open(ws, purpose="tui") as session:
        async with NotesApp(session).run_test() as pilot:
            await _settle(pilot)
            assert "absent" in _status(pilot.app)
            pilot.app.screen.query_one("#notes-editor", TextArea).focus()
            await pilot.press("x", "ctrl+s")
            await _settle(pilot)
    assert ws.member_notes.read_bytes() == b"x\n"  # a save ends the file with a line end


async def test_dirty_editor_shows_conflict_bar_and_keep_mine(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"base\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 50)) as pilot:
            await _settle(pilot)
            screen = app.screen
            editor = screen.query_one("#notes-editor", TextArea)
            editor.focus()
            editor.move_cursor((1, 0))
            await pilot.press("m", "i", "n", "e")
            ws.member_notes.write_bytes(b"base\ntheirs\n")  # the chat client saved meanwhile
            screen._poll()
            await _settle(pilot)
            bar = screen.query_one("#notes-conflict")
            assert bar.has_class("shown")
            assert editor.text == "base\nmine", "the editor keeps the user's text"
            await click(pilot, "#conflict-diff")
            await _settle(pilot)
            shown = str(screen.query_one("#notes-conflict-diff", Static).render())
            assert "-theirs" in shown and "+mine" in shown
            assert ws.member_notes.read_bytes() == b"base\ntheirs\n", "nothing written yet"
            await click(pilot, "#conflict-keep")
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="Keep mine asking first")
            await pilot.press("y")
            await _settle(pilot)
            assert ws.member_notes.read_bytes() == b"base\nmine\n"
            assert not bar.has_class("shown")


async def test_save_over_a_change_is_refused_into_the_conflict_bar(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"base\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 50)) as pilot:
            await _settle(pilot)
            app.screen.query_one("#notes-editor", TextArea).focus()
            await pilot.press("z")
            ws.member_notes.write_bytes(b"changed by someone\n")
            await pilot.press("ctrl+s")  # before the poll noticed
            await _settle(pilot)
            assert app.screen.query_one("#notes-conflict").has_class("shown")
            assert ws.member_notes.read_bytes() == b"changed by someone\n"
            await click(pilot, "#conflict-reload")
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="Reload asking first")
            await pilot.press("y")
            await _settle(pilot)
            assert app.screen.query_one("#notes-editor", TextArea).text == "changed by someone\n"


async def test_save_merges_a_change_on_disk_that_does_not_overlap(ws: Workspace) -> None:
    """The conflict bar's "keep mine" dropped the agent's line and "reload" the member's, even for changes
    to different lines. ctrl+s now merges them and the editor shows the result."""
    ws.member_notes.write_bytes(b"first\nmiddle\nlast\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            await _settle(pilot)
            editor = app.screen.query_one("#notes-editor", TextArea)
            editor.focus()
            await pilot.press("M", "space")
            ws.member_notes.write_bytes(b"first\nmiddle\nlast\nthe agent's line\n")
            await pilot.press("ctrl+s")  # before the poll noticed
            await _settle(pilot)
            assert ws.member_notes.read_bytes() == b"M first\nmiddle\nlast\nthe agent's line\n"
            assert editor.text == "M first\nmiddle\nlast\nthe agent's line\n"
            assert "unsaved" not in _status(app)
            assert not app.screen.query_one("#notes-conflict").has_class("shown")


async def test_overlapping_changes_are_resolved_conflict_by_conflict(ws: Workspace) -> None:
    from memtui.ui.screens.merge import MergeScreen

    ws.member_notes.write_bytes(b"tone: formal\nkeep\nlength: short\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            await _settle(pilot)
            screen = app.screen
            editor = screen.query_one("#notes-editor", TextArea)
            editor.load_text("tone: terse\nkeep\nlength: long\n")
            screen.dirty = True
            ws.member_notes.write_bytes(b"tone: casual\nkeep\nlength: medium\n")
            screen.action_save()
            await _settle(pilot)
            assert screen.query_one("#conflict-resolve").display
            assert "2 of its changes overlap" in str(screen.query_one("#notes-conflict-text", Static).render())
            await click(pilot, "#conflict-resolve")
            await wait_for(pilot, lambda: isinstance(app.screen, MergeScreen), what="the merge screen")
            merge = app.screen
            assert "tone: terse" in str(merge.query_one("#merge-mine-text", Static).render())
            assert "tone: casual" in str(merge.query_one("#merge-theirs-text", Static).render())
            await pilot.press("ctrl+s")  # nothing chosen yet: refused, nothing written
            assert app.screen is merge
            await pilot.press("m")  # conflict 1: yours; moves on to conflict 2
            await pilot.press("t")  # conflict 2: the file's
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: app.screen is screen, what="back in the editor")
            await _settle(pilot)
            assert ws.member_notes.read_bytes() == b"tone: terse\nkeep\nlength: medium\n"
            assert editor.text == "tone: terse\nkeep\nlength: medium\n"
            assert not screen.query_one("#notes-conflict").has_class("shown")


async def test_clean_editor_reloads_when_the_file_changes(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"one\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test() as pilot:
            await _settle(pilot)
            atomic.write_bytes(ws.member_notes, b"two\n")
            app.screen._poll()
            await _settle(pilot)
            await _settle(pilot)
            assert app.screen.query_one("#notes-editor", TextArea).text == "two\n"
            assert not app.screen.query_one("#notes-conflict").has_class("shown")


async def test_read_only_session_says_why_and_saves_nothing(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"keep\n")
    reader = Session.open(ws, purpose="tui", read_only=True)
    app = NotesApp(reader)
    async with app.run_test(size=(160, 40)) as pilot:
        await _settle(pilot)
        editor = app.screen.query_one("#notes-editor", TextArea)
        assert editor.read_only
        status = _status(app)
        assert "READ-ONLY" in status and "--read-only" in status
        await pilot.press("ctrl+s")
        await _settle(pilot)
    reader.close()
    assert ws.member_notes.read_bytes() == b"keep\n"


async def test_another_open_memtui_does_not_make_the_editor_read_only(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"keep\n")
    with Session.open(ws, purpose="tui"):  # another TUI, open on the same workspace
        mine = Session.open(ws, purpose="tui")
        app = NotesApp(mine)
        async with app.run_test(size=(160, 40)) as pilot:
            await _settle(pilot)
            editor = app.screen.query_one("#notes-editor", TextArea)
            assert not editor.read_only and "READ-ONLY" not in _status(app)
        mine.close()


async def test_notebook_and_operator_files_are_read_only_with_a_badge(ws: Workspace) -> None:
    ws.notebook.write_bytes(b"agent [bold]notes[/]\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(160, 40)) as pilot:
            await _settle(pilot)
            app.screen.query_one("#notes-file", Select).value = "notebook"
            await _settle(pilot)
            editor = app.screen.query_one("#notes-editor", TextArea)
            assert editor.text == "agent [bold]notes[/]\n" and editor.read_only
            assert "READ-ONLY" in _status(app) and "notebook" in _status(app)
            app.screen.query_one("#notes-file", Select).value = "FILE_DELIVERY.md"
            await _settle(pilot)
            assert editor.read_only and "operator file" in _status(app)
    assert ws.notebook.read_bytes() == b"agent [bold]notes[/]\n"


async def test_leaving_with_unsaved_changes_asks(ws: Workspace) -> None:
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test() as pilot:
            await _settle(pilot)
            screen = app.screen
            screen.query_one("#notes-editor", TextArea).focus()
            await pilot.press("a")
            screen.action_leave("")
            await pilot.pause()
            assert isinstance(app.screen, LeaveQuestion)
            await click(pilot, "#leave-stay")
            await pilot.pause()
            assert app.screen is screen and app.is_running
            screen.action_leave("")
            await pilot.pause()
            await click(pilot, "#leave-save")
            await _settle(pilot)
    assert ws.member_notes.read_bytes() == b"a\n"


async def test_find_selects_the_next_match(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"alpha\nBeta\nbeta\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test() as pilot:
            await _settle(pilot)
            await pilot.press("ctrl+f")
            await pilot.press(*"beta", "enter")
            editor = app.screen.query_one("#notes-editor", TextArea)
            assert editor.selected_text == "Beta"
            await pilot.press("enter")
            assert editor.selection.start == (2, 0)


@pytest.mark.slow
async def test_big_note_stays_usable_and_saves_whole(shared: Path, ws: Workspace, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A 4.6 MB note loads plain, the preview is capped, and a key press costs one count of
    the wrapped height (Textual recounted it for every line drawn, about a second a frame); the
    latency itself is measured by bench/big_note_keys.py, not asserted here."""
    from textual.document._wrapped_document import WrappedDocument

    counted = WrappedDocument.height.fget
    counts: list[int] = []

    def counting(self):  # noqa: ANN001, ANN202
        counts.append(1)
        return counted(self)

    monkeypatch.setattr(WrappedDocument, "height", property(counting))
    subprocess.run([sys.executable, str(shared / "bug-inputs" / "B22" / "make_big_markdown.py"),
                    str(tmp_path / "big")], check=True, capture_output=True)
    big = (tmp_path / "big" / "big-notes.md").read_bytes()
    ws.member_notes.write_bytes(big)
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            started = time.monotonic()
            await _settle(pilot)
            assert time.monotonic() - started < 60  # settled at all: a layout of every line took minutes; not a speed figure
            editor = app.screen.query_one("#notes-editor", TextArea)
            assert editor.language is None and len(editor.text) == len(big.decode())
            await pilot.press("ctrl+t")
            await _settle(pilot)
            note = str(app.screen.query_one("#notes-preview-note", Static).render())
            assert f"first {PREVIEW_CAP:,}" in note
            editor.focus()
            await pilot.pause()
            counts.clear()
            await pilot.press("Z")
            await pilot.pause()
            assert editor.text.startswith("Z")
            assert 1 <= len(counts) <= 4, f"the wrapped height was counted {len(counts)} times for one key"
            await pilot.press("ctrl+s")
            await _settle(pilot)
    assert ws.member_notes.read_bytes() == b"Z" + big, "saved whole, not cut"


async def test_notes_is_an_area_of_the_app(ws: Workspace) -> None:
    from memtui.ui.app import MemtuiApp
    from memtui.ui.areas import AREAS

    ws.member_notes.write_bytes(b"from the app\n")
    app = MemtuiApp(ws)
    async with app.run_test() as pilot:
        key = next(a.key for a in AREAS if a.mode == "notes")
        await pilot.press(key)
        await _settle(pilot)
        assert isinstance(app.screen, NotesScreen)
        assert app.screen.query_one("#notes-editor", TextArea).text == "from the app\n"
        assert app.session is not None and not app.session.read_only
        assert not (ws.root / ".memtui" / "lock.holder.json").exists(), "nothing is held while browsing"
    app.session.close()


async def test_ctrl_q_with_unsaved_notes_asks_first(ws: Workspace) -> None:
    """ctrl+q (the app's quit) once dropped an unsaved note without a word."""
    from memtui.ui.app import MemtuiApp
    from memtui.ui.areas import AREAS

    ws.member_notes.write_bytes(b"keep me\n")
    app = MemtuiApp(ws)
    async with app.run_test() as pilot:
        await pilot.press(next(a.key for a in AREAS if a.mode == "notes"))
        await _settle(pilot)
        assert app.focused is None  # number keys still switch areas
        await pilot.press("e")  # start editing
        assert app.screen.query_one("#notes-editor", TextArea).has_focus
        await pilot.press("Z", "Z")
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, LeaveQuestion)
        assert app.is_running
        await click(pilot, "#leave-save")
        await _settle(pilot)
    assert ws.member_notes.read_bytes().startswith(b"ZZ")


async def test_number_keys_switch_areas_until_editing_starts_and_after_escape(ws: Workspace) -> None:
    """A new user pressed 4 then 5 and typed "5" into the note instead of opening Graph."""
    from memtui.ui.app import MemtuiApp

    ws.member_notes.write_bytes(b"notes\n")
    app = MemtuiApp(ws)
    async with app.run_test() as pilot:
        await pilot.press("4")
        await _settle(pilot)
        await open_area(pilot, "2")
        assert app.current_mode == "audit"
        await pilot.press("4")
        await _settle(pilot)
        await pilot.press("e", "x", "escape", "1")
        await pilot.pause()
        assert isinstance(app.screen, LeaveQuestion)  # unsaved "x": it asks before leaving
    assert ws.member_notes.read_bytes() == b"notes\n"


async def test_the_status_says_what_tab_does_while_editing(ws: Workspace) -> None:
    """Tab in the editor inserted spaces without a word."""
    ws.member_notes.write_bytes(b"x\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(140, 30)) as pilot:
            await _settle(pilot)
            assert "e or a click to edit" in _status(app)
            await pilot.press("e")
            await wait_for(pilot, lambda: "Tab indents (4 spaces)" in _status(app), what="the Tab hint")
            await pilot.press("tab")
            assert app.screen.query_one("#notes-editor", TextArea).text.startswith("    x")
            await pilot.press("escape")
            await wait_for(pilot, lambda: "e or a click to edit" in _status(app), what="the hint after Esc")


# -- the conflict bar by keyboard (a new user's data loss: Enter on an unseen "Keep mine") -----
async def _conflict(pilot, ws: Workspace, agent: bytes = b"base\nend\nthe agent's line\n") -> NotesScreen:  # noqa: ANN001
    """The member typed "mine" on line 1 while an agent wrote ``agent`` (by default it appended
    a line: changes that do not overlap, Merge and save is offered): the bar is shown and the
    editor still has focus."""
    screen = pilot.app.screen
    await _settle(pilot)
    await pilot.press("e", "m", "i", "n", "e")
    ws.member_notes.write_bytes(agent)
    screen._poll()
    await wait_for(pilot, lambda: screen.query_one("#notes-conflict").has_class("shown"), what="the conflict bar")
    assert screen.focused is screen.editor
    return screen


async def test_a_focused_conflict_button_is_visibly_marked(ws: Workspace) -> None:
    """Textual's focus style (a reversed label) could not be seen on the bar: the focused
    button gets a frame in the theme's text colour (memtui.tcss, so the whole app)."""
    from textual.color import Color

    from memtui.ui.app import MemtuiApp

    ws.member_notes.write_bytes(b"base\nend\n")
    app = MemtuiApp(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await wait_for(pilot, lambda: getattr(app.screen, "note", None) is not None, what="the note")
        screen = await _conflict(pilot, ws)
        keep = screen.query_one("#conflict-keep")
        before = (keep.styles.border_top, keep.styles.border_bottom)
        keep.focus()
        await pilot.pause()
        after = (keep.styles.border_top, keep.styles.border_bottom)
        assert after != before, "focus changes the button's frame, not only its label's style"
        foreground = Color.parse(app.current_theme.foreground)
        assert after[0][1] == foreground and after[1][1] == foreground


async def test_keep_mine_asks_first_and_names_the_lines_that_will_be_lost(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"base\nend\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await _conflict(pilot, ws)
            await pilot.press("escape")  # out of the editor: onto the bar's first choice
            assert screen.focused is screen.query_one("#conflict-merge")
            screen.query_one("#conflict-keep").focus()
            await pilot.press("enter")  # what the new user did: nothing is written yet
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="the question")
            question = str(app.screen.query_one("Static").render())
            assert "the agent's line" in question and "These 2 lines of the file on disk will be lost" in question
            assert ws.member_notes.read_bytes() == b"base\nend\nthe agent's line\n"
            await pilot.press("enter")  # No has focus: a second Enter by habit loses nothing
            await wait_for(pilot, lambda: app.screen is screen, what="back in the area")
            assert ws.member_notes.read_bytes() == b"base\nend\nthe agent's line\n"
            await pilot.press("w")  # the key does the same, asking first
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="the question again")
            await pilot.press("y")
            await _settle(pilot)
            assert ws.member_notes.read_bytes() == b"minebase\nend\n"
            assert not screen.query_one("#notes-conflict").has_class("shown")


async def test_reload_asks_first_and_names_your_lines_that_will_be_dropped(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"base\nend\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await _conflict(pilot, ws)
            await pilot.press("escape", "r")
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="the question")
            assert "minebase" in str(app.screen.query_one("Static").render())
            await pilot.press("n")
            await wait_for(pilot, lambda: app.screen is screen, what="back in the area")
            assert screen.editor.text == "minebase\nend\n"
            await pilot.press("r", "y")
            await wait_for(pilot, lambda: screen.editor.text == "base\nend\nthe agent's line\n", what="the reload")


async def test_conflict_keys_are_in_the_footer_the_help_and_the_palette(ws: Workspace) -> None:
    from memtui.ui.app import MemtuiApp
    from memtui.ui.keys import help_groups, palette_commands

    ids = {"notes.conflict-merge", "notes.conflict-diff", "notes.conflict-reload", "notes.conflict-keep"}
    ws.member_notes.write_bytes(b"base\nend\n")
    app = MemtuiApp(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await wait_for(pilot, lambda: getattr(app.screen, "note", None) is not None, what="the note")

        def footer_ids() -> set[str]:
            return {b.id for _n, b, enabled, _t in app.screen.active_bindings.values() if enabled and b.id}

        assert not ids & footer_ids(), "no conflict: its keys are not offered"
        await app._run_in_area("notes", "conflict_keep")  # the palette's "Notes: Keep mine" says why
        await wait_for(pilot, lambda: any("no conflict to resolve" in n.message for n in app._notifications),
                       what="the palette saying why nothing happened")
        screen = await _conflict(pilot, ws)
        await pilot.press("escape")
        assert ids <= footer_ids()
        helped = {row.id for _title, rows in help_groups(app, screen) for row in rows}
        assert ids | {"notes.open-file"} <= helped
        titles = {title for title, _help, mode, _action in palette_commands(app) if mode == "notes"}
        assert {"Notes: Merge", "Notes: Difference", "Notes: Reload", "Notes: Keep mine"} <= titles
        await pilot.press("d")  # the difference by key
        await pilot.pause()
        assert "+mine" in str(screen.query_one("#notes-conflict-diff", Static).render())


async def test_ctrl_s_merges_changes_to_different_lines_as_the_readme_says(ws: Workspace) -> None:
    """The README says changes to different lines are merged when you save; ctrl+s said
    "resolve the conflict first" and wanted m (found by a new user)."""
    ws.member_notes.write_bytes(b"base\nend\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            await _conflict(pilot, ws)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: b"the agent's line" in ws.member_notes.read_bytes()
                           and b"mine" in ws.member_notes.read_bytes(), what="the merged save")
            await wait_for(pilot, lambda: any("merged" in str(n.message) for n in app._notifications))
    assert ws.member_notes.read_bytes() == b"minebase\nend\nthe agent's line\n"


async def test_keys_typed_after_the_conflict_appeared_are_saved_with_the_merge(ws: Workspace) -> None:
    """The merge was computed when the bar appeared: ctrl+s (or m) then saved it without the
    keys typed since ("line oneabcdefghijklmno" was saved as "line onea")."""
    ws.member_notes.write_bytes(b"base\nend\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await _conflict(pilot, ws)  # "mine" typed, the agent's line appended
            await pilot.press(*"MORE")  # typed while the bar is shown
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: b"MORE" in ws.member_notes.read_bytes(), what="the later keys saved")
            assert screen.editor.cursor_location == (0, 8), "the cursor stays after what was typed"
    assert ws.member_notes.read_bytes() == b"mineMOREbase\nend\nthe agent's line\n"


async def test_ctrl_s_during_an_overlapping_conflict_says_to_resolve_it_first(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"base\nend\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await _conflict(pilot, ws, agent=b"the agent's base\nend\n")  # the same line: they overlap
            await pilot.press("ctrl+s")
            await pilot.pause()
            said = [n.message for n in app._notifications]
            assert any("resolve the conflict first" in m and "w keep mine" in m for m in said), said
            assert screen.focused is screen.query_one("#conflict-resolve"), "the keys work at once"
            assert ws.member_notes.read_bytes() == b"the agent's base\nend\n"


async def test_tab_goes_round_the_conflict_buttons_never_into_the_editor(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"base\nend\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await _conflict(pilot, ws)
            await pilot.press("escape")
            seen = []
            for key in ["tab"] * 6 + ["shift+tab"] * 6:
                await pilot.press(key)
                seen.append(screen.focused.id if screen.focused else None)
            assert "notes-editor" not in seen, seen
            assert {"conflict-merge", "conflict-diff", "conflict-reload", "conflict-keep", "notes-file"} <= set(seen)
            screen.query_one("#conflict-diff").focus()
            await pilot.press("enter", "tab", "enter")  # the difference, then Reload (asks)
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="Reload asking")
            await pilot.press("escape")
            assert screen.editor.text == "minebase\nend\n", "Tab and Enter typed nothing into the note"
            await pilot.press("e", "x")  # e still edits
            assert screen.editor.text.startswith("x") or "x" in screen.editor.text


async def test_ctrl_o_opens_the_file_selector(ws: Workspace) -> None:
    ws.member_notes.write_bytes(b"notes\n")
    with Session.open(ws, purpose="tui") as session:
        app = NotesApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            await _settle(pilot)
            await pilot.press("ctrl+o")
            select = app.screen.query_one("#notes-file", Select)
            await wait_for(pilot, lambda: select.expanded, what="the file list open")
            await pilot.press("down", "enter")
            await wait_for(pilot, lambda: app.screen.which == "notebook", what="the notebook shown")


def test_removed_lines_are_what_a_replacement_loses() -> None:
    from memtui.core.text import removed_lines

    assert removed_lines("a\nb\nc\n", "a\nc\nd\n") == ["b"]
    assert removed_lines("a\r\nb\r\n", "a\nb\n") == [], "line ends are not a loss"
    assert removed_lines("x\n", "") == ["x"] and removed_lines("", "y\n") == []
    assert removed_lines("one\ntwo\n", "one\nTWO\n") == ["two"]


def test_the_lost_lines_heading_counts_in_words() -> None:
    """At 80x24 the Keep mine question read "These 1 line of the file on disk will be lost"."""
    from memtui.ui.screens.notes import _these

    assert _these(["a"], "of yours") == "This line of yours will be lost:"
    assert _these(["a"] * 1200, "of the file on disk") == "These 1,200 lines of the file on disk will be lost:"
