"""Small widgets shared by every area: the area bar, and the modal questions (one line of text, yes/no)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from memtui.ui.areas import AREAS
from memtui.ui.text import safe


class AreaBar(Static):
    """One line under the header naming every area and its key, the current one marked.

    The area keys are not repeated in each footer (it had no room left for the screen's own
    keys at 120 columns); this bar shows them instead.
    """

    DEFAULT_CSS = """
    AreaBar {
        height: 1;
        background: $panel;
        color: $text-muted;
        padding: 0 1;
    }
    """

    def on_mount(self) -> None:
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        """The widest form that fits: every title and the palette hint; every title; titles cut
        to 4, then 3 letters; the current title only (every key is always shown, so every area
        stays findable at 80 columns)."""
        current = getattr(self.app, "current_mode", None)
        room = (self.size.width or 200) - 2
        for form, hint in ((None, True), (None, False), (4, False), (3, False), (0, False)):
            bar = Text()
            for area in AREAS:
                if area.mode == current:
                    bar.append(f" {area.key} {area.title} ", style="bold reverse")
                else:
                    bar.append(f" {area.key}", style="bold")
                    title = area.title if form is None else area.title[:form]
                    bar.append(f" {title} " if title else " ")
                bar.append(" " if form != 0 else "")
            if hint:
                bar.append("  ctrl+p: commands", style="dim")
            if bar.cell_len <= room:
                break
        self.update(bar)


_MODAL_CSS = """
{name} {{ align: center middle; }}
{name} #ask-box {{ width: 70%; height: auto; border: thick $primary; padding: 1 2; background: $surface; }}
{name} Horizontal {{ height: auto; }}
"""


class AskText(ModalScreen[str | None]):
    """Ask for one line of text; dismisses with the text, or ``None`` on Escape."""

    DEFAULT_CSS = _MODAL_CSS.format(name="AskText")

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, prompt: str, value: str = "") -> None:
        super().__init__()
        self._prompt = prompt
        self._value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-box"):
            yield Static(safe(self._prompt))
            yield Input(value=self._value, id="ask-input")

    @on(Input.Submitted, "#ask-input")
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Confirm(ModalScreen[bool]):
    """Ask yes/no before a change; ``y``/Enter on Yes confirms, ``n``/Escape cancels."""

    DEFAULT_CSS = _MODAL_CSS.format(name="Confirm")

    BINDINGS = [Binding("escape,n", "no", "No"), Binding("y", "yes", "Yes")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self._question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-box"):
            yield Static(safe(self._question))
            with Horizontal():
                yield Button(Text("Yes (y)"), id="yes", variant="warning")
                yield Button(Text("No (n)"), id="no")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)
