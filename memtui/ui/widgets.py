"""Small widgets shared by every area: the area bar, the footer of keys, and the modal questions
(one line of text, a choice, buttons)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import Button, DataTable, Footer, Input, Markdown, Static, TextArea
from textual.widgets._footer import FooterKey

from memtui.ui.areas import AREAS
from memtui.ui.text import EDITOR_PLANE, as_data, editor_can_keep, from_editor, safe, stand_in, to_editor

ResultT = TypeVar("ResultT")

class AreaBar(Static):
    """One line under the header naming every area and its key, the current one marked.

    The area keys are not repeated in each footer (it had no room left for the screen's own
    keys at 120 columns); this bar shows them instead. It fits its width (at
    80 columns "Backup" fell off): full titles when they fit, else short ones (the current area
    always in full), else the keys alone; never a title cut in half. A click on an area opens
    it, as its key does.
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
        self.update(self.bar(self.app.size.width - 2))

    def on_resize(self) -> None:
        self.update(self.bar(self.size.width or self.app.size.width - 2))

    def bar(self, width: int) -> Text:
        """The bar's text for ``width`` cells (the widest form that fits)."""
        current = getattr(self.app, "current_mode", None)
        forms = [(True, " ", "  ? keys · ctrl+p commands"), (True, " ", "  ? keys"), (True, "", "  ? keys"),
                 (True, "", ""), ("tight", "", "  ? keys"), ("tight", "", ""),
                 (False, " ", "   ? names the areas"), (False, " ", ""), (False, "", "")]
        for titles, gap, hint in forms:
            bar = Text()
            spans: list[tuple[int, int, str]] = []
            for area in AREAS:
                start = len(bar)
                if area.mode == current:
                    bar.append(f" {area.key} {area.title} ", style="bold reverse")
                else:
                    bar.append(f" {area.key}", style="bold")
                    if titles == "tight":
                        bar.append(f" {area.title}")
                    else:
                        bar.append(f" {area.title} " if titles else " ")
                spans.append((start, len(bar), area.mode))
                bar.append(gap)
            if hint:
                bar.append(hint, style="dim")
            if bar.cell_len <= width:
                break
        self._spans = spans  # where each area stands, for a click
        return bar

    async def on_click(self, event: events.Click) -> None:
        """A click on an area opens it, as its key does (the app asks first where a screen must)."""
        x = event.x - self.styles.padding.left
        for start, end, mode in getattr(self, "_spans", []):
            if start <= x < end:
                event.stop()
                await self.app.run_action(f"area('{mode}')")
                return


def escape_box(screen, box: Input, results, what: str = "filter") -> None:  # noqa: ANN001 - Screen, a widget
    """The one Escape rule of every filter and query box (Audit, Graph, Search):
    in the box, Escape leaves it and keeps what was typed (focus goes to ``results``, so the
    area keys work again); Escape twice in a row clears it. A single Escape outside the box
    only says so: coming back to an area, the first Escape cleared the old query without a
    word (a new user's second try)."""
    if screen.focused is box:
        if getattr(results, "row_count", 1):
            results.focus()
        else:
            screen.set_focus(None)
    elif box.value and getattr(screen.app, "previous_key", None) == "escape":
        box.value = ""
    elif box.value:
        screen.app.notify(f"Esc again clears the {what}; / edits it", timeout=3, markup=False)


_MODAL_CSS = """
{name} {{ align: center middle; }}
{name} #ask-box {{ width: 70%; height: auto; border: thick $primary; padding: 1 2; background: $surface; }}
{name} Horizontal {{ height: auto; }}
"""


def left_behind(event: DataTable.RowHighlighted) -> bool:
    """True when ``event`` highlights a row the table's cursor has already left.

    A table refilled and then put on another row (the newest version, the entity a jump chose)
    posts a highlight for each; handled late, the first would show that row's details over the
    row the cursor is on. Every area's row handler ignores such a message.
    """
    return event.cursor_row != event.data_table.cursor_row


def message(value: "str | Text") -> Text:
    """A sentence for a widget: a ``str`` is app text, shown literally (never markup, never the
    user-text sanitiser, so its newlines stay newlines); a :class:`Text` was composed with
    :func:`memtui.ui.text.safe` for each user value in it, and is shown as it is."""
    return value if isinstance(value, Text) else Text(value)


class AnswersOnce:
    """A dialog answers once: an answer given while the first is still being delivered (Enter
    pressed twice, a key and a click at once) is ignored. Without this the second dismissal
    found the dialog no longer on top, because the first answer's callback had already pushed
    the next question (a relation's target asked again), and raised ``ScreenStackError``."""

    _answered = False

    def answer(self, value: object) -> None:
        if self._answered:
            return
        self._answered = True
        self.dismiss(value)  # type: ignore[attr-defined]


class AskText(AnswersOnce, ModalScreen[str | None]):
    """Ask for one line of text; dismisses with the text, or ``None`` on Escape.

    Args:
        prompt: app text (``str``) or a :class:`Text` composed with ``safe()`` user values.
        value: the text to start with (user text: edited, not shown as a sentence), with the
            cursor after it and nothing selected: typing adds to it (Textual's Input selects
            all on focus, so the first key pressed replaced a whole observation).
        required: what the answer is (``"a reason"``) when an empty one is not an answer: Enter
            on an empty box then says so and the dialog stays open (it closed, and the next keys
            typed went to the area as its commands).
    """

    DEFAULT_CSS = _MODAL_CSS.format(name="AskText")

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ask.cancel")]

    def __init__(self, prompt: "str | Text", value: str = "", *, required: str = "") -> None:
        super().__init__()
        self._prompt = prompt
        self._value = value
        self._required = required

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-box"):
            yield Static(message(self._prompt))
            yield Input(value=self._value, select_on_focus=False, id="ask-input")
            yield Static(Text("Enter: OK · Escape: cancel", style="dim"), id="ask-hint")

    def on_mount(self) -> None:
        box = self.query_one("#ask-input", Input)
        box.cursor_position = len(box.value)
        box.focus()

    @on(Input.Submitted, "#ask-input")
    def _submitted(self, event: Input.Submitted) -> None:
        if self._required and not event.value.strip():
            self.query_one("#ask-hint", Static).update(
                Text(f"Type {self._required} first (Escape cancels).", style="bold yellow"))
            return
        self.answer(event.value)

    def action_cancel(self) -> None:
        self.answer(None)


class Choose(AnswersOnce, ModalScreen[int | None]):
    """Choose one of a few lines; dismisses with its index, or ``None`` on Escape.

    Args:
        prompt: app text (``str``) or a composed :class:`Text`.
        choices: the lines (compose user text with ``safe()``).
    """

    DEFAULT_CSS = _MODAL_CSS.format(name="Choose") + "Choose OptionList { height: auto; max-height: 20; }\n"

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="choose.cancel")]

    def __init__(self, prompt: "str | Text", choices: list[Text]) -> None:
        super().__init__()
        self._prompt = prompt
        self._choices = choices

    def compose(self) -> ComposeResult:
        from textual.widgets import OptionList

        with Vertical(id="ask-box"):
            yield Static(message(self._prompt))
            yield OptionList(*self._choices, id="choose-list")

    def on_mount(self) -> None:
        self.query_one("#choose-list").focus()

    def on_option_list_option_selected(self, event) -> None:  # noqa: ANN001 - OptionList.OptionSelected
        self.answer(event.option_index)

    def action_cancel(self) -> None:
        self.answer(None)


@dataclass(frozen=True)
class Answer(Generic[ResultT]):
    """One button of a :class:`ButtonDialog`: the value it answers with, its label, the key
    that presses it (shown on the button as ``Label (k)``; ``""`` for none), its Textual button
    variant and its widget id (default ``answer-N``)."""

    value: ResultT
    label: str
    key: str = ""
    variant: str = "default"
    id: str = ""


class ButtonDialog(AnswersOnce, ModalScreen[ResultT]):
    """A question answered by one of a few buttons: the base of every button dialog.

    Every dialog behaves the same way, so none can surprise: each button shows its key
    (``Save (s)``), the key answers at once, Left/Right (and Tab) move between the buttons, and
    the focus starts on the safe answer, so an Enter pressed by habit loses nothing; Escape
    gives the safe answer too.

    Args:
        question: app text (``str``, shown literally) or a :class:`Text` composed with
            ``safe()`` user values.
        answers: the buttons, in order.
        safe: the index in ``answers`` of the safe answer.
    """

    DEFAULT_CSS = _MODAL_CSS.format(name="ButtonDialog") + "ButtonDialog Button { margin-right: 1; }\n"

    BINDINGS = [Binding("left", "move(-1)", "Previous", show=False, id="dialog.previous"),
                Binding("right", "move(1)", "Next", show=False, id="dialog.next"),
                Binding("escape", "answer_safe", "Cancel", id="dialog.cancel")]

    def __init__(self, question: "str | Text", answers: "list[Answer[ResultT]]", safe: int) -> None:
        super().__init__()
        self._question = question
        self._answers = answers
        self._safe = safe
        self._ids = [answer.id or f"answer-{n}" for n, answer in enumerate(answers)]

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-box"):
            yield Static(message(self._question))
            with Horizontal():
                for answer, widget_id in zip(self._answers, self._ids, strict=True):
                    label = f"{answer.label} ({answer.key})" if answer.key else answer.label
                    yield Button(Text(label), id=widget_id, variant=answer.variant)  # type: ignore[arg-type]
            yield Static(Text(f"←/→ move · Enter answers · Escape: {self._answers[self._safe].label}",
                              style="dim"))

    def on_mount(self) -> None:
        self.query_one(f"#{self._ids[self._safe]}", Button).focus()

    def on_key(self, event: events.Key) -> None:
        for answer in self._answers:
            if answer.key and event.key == answer.key:
                event.stop()
                self.answer(answer.value)
                return

    def action_move(self, step: int) -> None:
        buttons = list(self.query(Button))
        at = next((n for n, button in enumerate(buttons) if button.has_focus), self._safe)
        buttons[(at + step) % len(buttons)].focus()

    def action_answer_safe(self) -> None:
        self.answer(self._answers[self._safe].value)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.answer(self._answers[self._ids.index(event.button.id or "")].value)


class Confirm(ButtonDialog[bool]):
    """Ask yes/no before a change: ``y`` confirms; ``n``, Escape, or an Enter pressed by habit
    (No has the focus first) changes nothing.

    Args:
        question: what *will* happen, in the future tense: app text (``str``, shown literally)
            or a :class:`Text` composed with ``safe()`` user values.
        yes: the Yes button's label (its key ``y`` is added).
    """

    DEFAULT_CSS = _MODAL_CSS.format(name="Confirm") + "Confirm Button { margin-right: 1; }\n"

    def __init__(self, question: "str | Text", *, yes: str = "Yes") -> None:
        super().__init__(question, [Answer(True, yes, "y", "warning", "yes"), Answer(False, "No", "n", id="no")],
                         safe=1)


class ValueViewer(ModalScreen[None]):
    """All of one long user value, read-only ("show all"), a page at a time.

    A value of many megabytes in one ``TextArea`` with soft wrap takes half a minute to lay
    out; a page of :data:`PAGE_CHARS` takes a fraction of a second, so the value is shown in
    pages (``]`` next, ``[`` previous).

    Args:
        title: what the value is (user text inside is shown safely).
        text: the whole value.
    """

    #: Characters of the value shown on one page.
    PAGE_CHARS = 256 * 1024

    DEFAULT_CSS = """
    ValueViewer { align: center middle; }
    ValueViewer #value-box { width: 90%; height: 90%; border: thick $primary; background: $surface; }
    ValueViewer #value-title { height: 1; }
    ValueViewer TextArea { height: 1fr; }
    """

    BINDINGS = [Binding("escape,q", "close", "Close"),
                Binding("right_square_bracket", "page(1)", "Next page"),
                Binding("left_square_bracket", "page(-1)", "Prev page")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self._title = title
        self._text = text
        self.pages = max(1, -(-len(text) // self.PAGE_CHARS))
        self.page = 0

    def compose(self) -> ComposeResult:

        with Vertical(id="value-box"):
            yield Static(id="value-title")
            yield DataTextArea(self._page_text(), read_only=True, soft_wrap=True, id="value")

    def _page_text(self) -> str:
        start = self.page * self.PAGE_CHARS
        return self._text[start:start + self.PAGE_CHARS]

    def _show_title(self) -> None:
        where = f"  {len(self._text):,} characters · read-only · Esc closes"
        if self.pages > 1:
            where = f"  page {self.page + 1:,} of {self.pages:,} ([ ] pages) ·" + where
        self.query_one("#value-title", Static).update(Text.assemble(safe(self._title, "bold", limit=200),
                                                                     Text(where, style="dim")))

    def on_mount(self) -> None:
        self._show_title()
        self.query_one("#value").focus()

    def action_page(self, step: int) -> None:
        from textual.widgets import TextArea

        page = max(0, min(self.pages - 1, self.page + step))
        if page != self.page:
            self.page = page
            self.query_one("#value", TextArea).load_text(self._page_text())
            self._show_title()

    def action_close(self) -> None:
        self.dismiss(None)


#: The global key that opens :class:`KeysHelp` (both keys share this id).
HELP_ID = "app.help"


def keys_of(binding: Binding, keymap: dict[str, str]) -> list[str]:
    """The keys ``binding`` answers to once ``keymap`` is applied."""
    if binding.id and binding.id in keymap:
        return keymap[binding.id].split(",")
    return [k.strip() for k in binding.key.split(",")]


def key_label(app, binding: Binding, keymap: dict[str, str]) -> str:  # noqa: ANN001
    """How the keys of ``binding`` are shown (``"?, f1"``, ``"ctrl+s"``)."""
    if binding.key_display and not (binding.id and binding.id in keymap):
        return binding.key_display
    return ", ".join(app.get_key_display(Binding(k, binding.action)) for k in keys_of(binding, keymap))


def _width(key_display: str, description: str) -> int:
    """Cells a non-compact :class:`FooterKey` takes: `` key `` then ``description ``."""
    return cell_len(key_display) + 2 + (cell_len(description) + 1 if description else 0)


#: Cells kept on the right for the palette key (``^p palette`` with its border and padding).
PALETTE_CELLS = 14


class KeyFooter(Footer):
    """The footer: the screen's keys, most important first (declaration order; the app's last),
    as many *whole* labels as the width allows, then ``? Keys`` (``? N more``) so the rest are
    one key away. Redrawn when the terminal is resized."""

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        app = self.app
        active = self.screen.active_bindings
        seen: set[str] = set()
        items: list[tuple[Binding, bool, str]] = []
        help_item: tuple[Binding, bool, str] | None = None
        for _node, binding, enabled, tooltip in active.values():
            if binding.id == HELP_ID:
                if help_item is None:
                    help_item = (binding, enabled, tooltip)
                continue
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            items.append((binding, enabled, tooltip))
        width = (self.size.width or app.size.width) - (PALETTE_CELLS if self.show_command_palette else 0)
        help_width = _width("?", "99 more keys") if help_item else 0
        used, shown = 0, 0
        for binding, enabled, tooltip in items:
            cells = _width(app.get_key_display(binding), binding.description)
            if used + cells > width - help_width:
                break
            used += cells
            shown += 1
            yield FooterKey(binding.key, app.get_key_display(binding), binding.description, binding.action,
                            disabled=not enabled, tooltip=tooltip or binding.tooltip).data_bind(compact=Footer.compact)
        if help_item is not None:
            binding, enabled, tooltip = help_item
            hidden = len(items) - shown
            label = f"{hidden} more" if hidden else binding.description
            if used + _width(app.get_key_display(binding), label) <= width:
                yield FooterKey(binding.key, app.get_key_display(binding), label, binding.action,
                                disabled=not enabled, tooltip="every key of this area").data_bind(
                                    compact=Footer.compact)
        if self.show_command_palette and app.ENABLE_COMMAND_PALETTE:
            try:
                _node, binding, enabled, tooltip = active[app.COMMAND_PALETTE_BINDING]
            except KeyError:
                pass
            else:
                yield FooterKey(binding.key, app.get_key_display(binding), binding.description, binding.action,
                                classes="-command-palette", disabled=not enabled,
                                tooltip=binding.tooltip or binding.description)

    def on_resize(self) -> None:
        if self._bindings_ready:
            self.call_after_refresh(self.recompose)


class DataTextArea(TextArea):
    """A :class:`TextArea` for user text that never sends a control, escape or bidi-override
    character to the terminal, and never changes the text it was given.

    Each such character (``memtui.ui.text.to_editor``) is kept in the document as a private
    stand-in, one character for one, so positions, line numbers and undo are those of the
    text; it is drawn as a one-cell symbol in reverse video (``␛``, ``␇``, ``␦``). ``text``
    (and so saving) gives the original characters back: an agent's escape byte or a direction
    mark in the notes is kept as it is, never replaced by the symbol. A text that already holds
    characters of that private plane cannot make the round trip: ``keeps_text`` is then
    ``False`` and the editor must be read-only (the notes screen says so).
    Rejected: showing ``⟨U+001B⟩`` in the document (the symbol would be saved over the byte),
    and refusing to open such a file (an agent's stray byte would lock the member out).
    """

    keeps_text = True

    def _set_document(self, text: str, language: str | None) -> None:
        current = getattr(self, "document", None)
        if current is not None and text == current.text:  # a new language over the same document
            super()._set_document(text, language)
            return
        self.keeps_text = editor_can_keep(text)
        super()._set_document(to_editor(text) if self.keeps_text else as_data(text), language)

    @property
    def text(self) -> str:
        """The whole text, every kept character as it was given."""
        return from_editor(self.document.text)

    @text.setter
    def text(self, value: str) -> None:
        self.load_text(value)

    @property
    def selected_text(self) -> str:
        start, end = self.selection
        return from_editor(self.get_text_range(start, end))

    def insert(self, text: str, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - TextArea's signature
        return super().insert(to_editor(text), *args, **kwargs)

    def replace(self, insert: str, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - TextArea's signature
        return super().replace(to_editor(insert), *args, **kwargs)

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if not any(_has_kept(segment.text) for segment in strip):
            return strip
        from rich.segment import Segment
        from rich.style import Style

        marked = Style(reverse=True)
        out: list[Segment] = []
        for segment in strip:
            if segment.control or not _has_kept(segment.text):
                out.append(segment)
                continue
            run: list[str] = []
            kept = False
            for char in segment.text:
                is_kept = ord(char) >= EDITOR_PLANE
                if run and is_kept != kept:
                    out.append(Segment("".join(run), (segment.style + marked) if kept and segment.style else
                                       marked if kept else segment.style))
                    run = []
                kept = is_kept
                run.append(stand_in(char) if is_kept else char)
            if run:
                out.append(Segment("".join(run), (segment.style + marked) if kept and segment.style else
                                   marked if kept else segment.style))
        return Strip(out, strip.cell_length)


def _has_kept(text: str) -> bool:
    return bool(text) and not editor_can_keep(text)


class DataMarkdown(Markdown):
    """A :class:`Markdown` view of user text (an article, notes, a skill): the source is made
    :func:`memtui.ui.text.as_data` before it is parsed, so a control, escape or bidi-override
    character is shown as ``⟨U+001B⟩`` and never reaches the terminal; the text elsewhere
    (links, saving) is the original."""

    def __init__(self, markdown: str | None = None, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(as_data(markdown) if markdown else markdown, *args, **kwargs)

    def update(self, markdown: str):  # noqa: ANN201 - Markdown's AwaitComplete
        return super().update(as_data(markdown))
