"""Every button dialog behaves the same way: keys shown on the buttons, Left/Right move between
them, the safe answer has the focus first (an Enter pressed by habit loses nothing), Escape
gives the safe answer, and a button's key answers at once."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import Button

from memtui.ui.screens.notes import LeaveQuestion
from memtui.ui.widgets import ButtonDialog, Confirm
from tests.conftest import wait_for


class _Host(App[None]):
    def __init__(self, dialog: ButtonDialog) -> None:
        super().__init__()
        self.dialog = dialog
        self.answers: list[object] = []

    def on_mount(self) -> None:
        self.push_screen(self.dialog, self.answers.append)


async def _answer(dialog: ButtonDialog, *keys: str) -> object:
    app = _Host(dialog)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.screen is dialog, what="the dialog showing")
        await pilot.press(*keys)
        await wait_for(pilot, lambda: bool(app.answers), what="an answer")
    return app.answers[0]


def _labels(dialog: ButtonDialog) -> list[str]:
    return [str(button.label) for button in dialog.query(Button)]


@pytest.mark.parametrize(("keys", "expected"), [(("enter",), False), (("escape",), False), (("n",), False),
                                                (("y",), True), (("left", "enter"), True),
                                                (("right", "enter"), True)])
async def test_confirm_is_safe_by_default_and_moves_by_arrows(keys: tuple[str, ...], expected: bool) -> None:
    assert await _answer(Confirm("Delete the entity 'x'?", yes="Delete"), *keys) is expected


@pytest.mark.parametrize(("keys", "expected"), [(("enter",), "stay"), (("escape",), "stay"), (("s",), "save"),
                                                (("d",), "discard"), (("left", "enter"), "discard"),
                                                (("left", "left", "enter"), "save")])
async def test_the_unsaved_notes_question_stays_unless_told_otherwise(keys: tuple[str, ...], expected: str) -> None:
    assert await _answer(LeaveQuestion("memory/MEMORY_CUSTOM.md"), *keys) == expected


async def test_every_button_shows_its_key() -> None:
    dialog = LeaveQuestion("memory/MEMORY_CUSTOM.md")
    app = _Host(dialog)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.screen is dialog, what="the dialog showing")
        assert _labels(dialog) == ["Save (s)", "Discard (d)", "Stay"]
        assert dialog.query_one("#leave-stay", Button).has_focus
