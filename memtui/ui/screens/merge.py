"""Resolving a notes merge conflict hunk by hunk.

:class:`MergeScreen` shows each conflict of a :class:`memtui.core.notes.Merged`: the lines both
sides started from, yours and the file's, side by side when the terminal is wide enough and
one above the other when it is not. For each conflict you keep yours (``m``), the file's
(``t``) or both (``b``, the file's first); ``n``/``p`` (or ``j``/``k``) move between conflicts;
``ctrl+s`` saves once every conflict has a choice; Escape goes back to the editor with nothing
changed. The screen dismisses with the resolved text, or ``None``.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from memtui.ui.widgets import KeyFooter

from memtui.core.notes import Merged
from memtui.ui.text import safe

#: below this width the three versions are stacked instead of side by side
SIDE_BY_SIDE_MIN = 110

_LABEL = {"mine": "yours", "theirs": "the file's", "both": "both (the file's first)"}


def _lines(lines: tuple[str, ...], style: str) -> Text:
    if not lines:
        return Text("(nothing)", style="dim italic")
    out = Text()
    for line in lines:
        out.append_text(safe(line.rstrip("\r\n"), style))
        out.append("\n")
    out.rstrip()
    return out


class MergeScreen(ModalScreen[str | None]):
    """The conflicts of one merge; dismisses with the resolved text or ``None`` (see module)."""

    DEFAULT_CSS = """
    MergeScreen { align: center middle; }
    MergeScreen > Vertical { width: 96%; height: 92%; background: $surface; border: thick $warning; }
    MergeScreen #merge-head { height: auto; padding: 0 1; background: $warning 20%; }
    MergeScreen #merge-body { height: 1fr; }
    MergeScreen .merge-side { width: 1fr; height: auto; padding: 0 1; }
    MergeScreen .merge-side.chosen { background: $success 20%; }
    MergeScreen #merge-sides { height: auto; }
    MergeScreen #merge-sides.stacked { layout: vertical; }
    MergeScreen .merge-title { text-style: bold; }
    MergeScreen #merge-context-before, MergeScreen #merge-context-after { padding: 0 1; }
    """

    BINDINGS = [
        Binding("m", "choose('mine')", "Yours", tooltip="keep your lines for this conflict", id="merge.mine"),
        Binding("t", "choose('theirs')", "The file's", tooltip="keep the file's lines", id="merge.theirs"),
        Binding("b", "choose('both')", "Both", tooltip="keep both, the file's first", id="merge.both"),
        Binding("ctrl+s", "apply", "Save", tooltip="save the result once every conflict has a choice",
                id="merge.save"),
        Binding("escape", "cancel", "Back", tooltip="back to the editor, nothing changed", id="merge.cancel"),
        Binding("n,j", "move(1)", "Next", tooltip="the next conflict", id="merge.next"),
        Binding("p,k", "move(-1)", "Previous", tooltip="the previous conflict", id="merge.previous"),
    ]

    def __init__(self, merged: Merged, shown: str) -> None:
        super().__init__()
        self.merged = merged
        self.shown = shown
        self.choices: dict[int, str] = {}
        self.at = 0  # index into merged.conflicts

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="merge-head")
            with VerticalScroll(id="merge-body"):
                yield Static(id="merge-context-before")
                with Horizontal(id="merge-sides"):
                    with Vertical(classes="merge-side", id="merge-mine"):
                        yield Static(Text("Yours (m)", style="bold"), classes="merge-title")
                        yield Static(id="merge-mine-text")
                    with Vertical(classes="merge-side", id="merge-theirs"):
                        yield Static(Text("The file's (t)", style="bold"), classes="merge-title")
                        yield Static(id="merge-theirs-text")
                    with Vertical(classes="merge-side", id="merge-base"):
                        yield Static(Text("Both started from", style="bold"), classes="merge-title")
                        yield Static(id="merge-base-text")
                yield Static(id="merge-context-after")
            yield KeyFooter()

    def on_mount(self) -> None:
        self._show()

    def on_resize(self) -> None:
        self._show()

    def _show(self) -> None:
        conflicts = self.merged.conflicts
        index = conflicts[self.at]
        hunk = self.merged.hunks[index]
        chosen = self.choices.get(index)
        done = len(self.choices)
        head = Text()
        head.append(f"Conflict {self.at + 1} of {len(conflicts)}", style="bold")
        head.append(" in ")
        head.append_text(safe(self.shown))
        head.append(": you and the file on disk changed the same lines. ")
        head.append(f"Chosen: {_LABEL[chosen]}. " if chosen else "No choice yet. ")
        if done == len(conflicts):
            head.append("Every conflict has a choice: ctrl+s will save the result.", style="bold")
        else:
            head.append(f"{len(conflicts) - done} still to choose; ctrl+s saves when none is left.")
        self.query_one("#merge-head", Static).update(head)
        wide = self.app.size.width >= SIDE_BY_SIDE_MIN
        self.query_one("#merge-sides").set_class(not wide, "stacked")
        self.query_one("#merge-mine-text", Static).update(_lines(hunk.mine, "green"))
        self.query_one("#merge-theirs-text", Static).update(_lines(hunk.theirs, "yellow"))
        self.query_one("#merge-base-text", Static).update(_lines(hunk.base, "dim"))
        self.query_one("#merge-mine").set_class(chosen in ("mine", "both"), "chosen")
        self.query_one("#merge-theirs").set_class(chosen in ("theirs", "both"), "chosen")
        before = self.merged.hunks[index - 1].merged[-3:] if index > 0 else ()
        after = self.merged.hunks[index + 1].merged[:3] if index + 1 < len(self.merged.hunks) else ()
        self.query_one("#merge-context-before", Static).update(
            _lines(before, "dim") if before else Text("(start of the file)", style="dim italic"))
        self.query_one("#merge-context-after", Static).update(
            _lines(after, "dim") if after else Text("(end of the file)", style="dim italic"))

    def action_choose(self, choice: str) -> None:
        self.choices[self.merged.conflicts[self.at]] = choice
        if self.at + 1 < len(self.merged.conflicts) and self.merged.conflicts[self.at + 1] not in self.choices:
            self.at += 1
        self._show()

    def action_move(self, step: int) -> None:
        self.at = max(0, min(len(self.merged.conflicts) - 1, self.at + step))
        self._show()

    def action_apply(self) -> None:
        missing = [n + 1 for n, i in enumerate(self.merged.conflicts) if i not in self.choices]
        if missing:
            self.notify(f"choose for conflict {', '.join(map(str, missing))} first (m, t or b)",
                        severity="warning", markup=False)
            self.at = missing[0] - 1
            self._show()
            return
        self.dismiss(self.merged.resolve(self.choices))

    def action_cancel(self) -> None:
        self.dismiss(None)
