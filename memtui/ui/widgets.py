"""Small widgets shared by every area."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from memtui.ui.areas import AREAS


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
        current = getattr(self.app, "current_mode", None)
        bar = Text()
        for area in AREAS:
            if area.mode == current:
                bar.append(f" {area.key} {area.title} ", style="bold reverse")
            else:
                bar.append(f" {area.key} ", style="bold")
                bar.append(f"{area.title} ")
            bar.append(" ")
        bar.append("  ctrl+p: commands", style="dim")
        self.update(bar)
