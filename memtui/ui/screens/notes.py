"""The Notes area: edit the member notes safely; show the notebook and operator files read-only.

- ``MEMORY_CUSTOM.md`` in a :class:`TextArea` with Markdown highlighting, line numbers,
  undo/redo (``ctrl+z``/``ctrl+y``), find (``ctrl+f``, ``f3`` next), a live preview
  (``ctrl+t``), a dirty marker, and ``ctrl+s`` to save. An absent file is an empty document;
  saving creates it (seed 002).
- The file is watched (its signature polled every second): a clean editor reloads with a
  notice; a dirty one shows a conflict bar with the choices: merge (``m``: merge and save, or
  resolve conflict by conflict), show the difference (``d``), reload (``r``) and keep mine
  (``w``); reload and keep mine drop someone's text, so they ask first and say which lines
  will be lost (DESIGN.md §4 invariant 3, :mod:`memtui.core.notes`). While the bar is shown,
  ctrl+s says to resolve first, Escape and Tab go to its buttons, and Tab skips the editor
  (``e`` edits).
- ``ctrl+o`` opens the file selector (notebook, operator files).
- ``MEMORY.md`` and the operator files open read-only with a badge saying why; so does every
  file when another memtui holds the writer lock (the badge names the process and lock file).
- Leaving the area (area keys, ``q``) with unsaved changes asks first.
- Unsaved text is kept as a draft in the user data folder (:mod:`memtui.core.drafts`) a moment
  after each change and at once when the TUI is stopped by SIGINT, SIGTERM or SIGHUP (a closed
  terminal); the next time the file opens, a bar offers to restore or discard it. A draft over a file that changed since restores as a conflict, never a silent
  overwrite.
- Big notes: highlighting and soft wrap are turned off over
  :data:`PLAIN_OVER` bytes, the preview shows at most :data:`PREVIEW_CAP` characters with a
  notice, and saving and reading run in worker threads; the file itself is never cut.

The writable session (lock + store + audit) is the app's ``session`` attribute when the app
has one; otherwise the screen opens one with purpose ``"tui"`` on first use and keeps it on
the app for the rest of its life.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Header, Input, Markdown, Select, Static, TextArea
from textual.document._wrapped_document import WrappedDocument
from textual.timer import Timer
from textual.widgets.text_area import Document, Selection

from memtui.core import drafts, notes
from memtui.core.errors import ConflictError, MemtuiError
from memtui.core.session import Session
from memtui.core.text import plural, removed_lines
from memtui.ui.widgets import KeyFooter
from memtui.ui.widgets import Answer, AreaBar, ButtonDialog, Confirm, DataMarkdown, DataTextArea
from memtui.ui.areas import AREAS
from memtui.ui.text import join, safe, to_editor
from memtui.ui.screens.base import AreaScreen

#: Characters of the note shown in the live preview. Textual's Markdown builds its widgets
#: on the UI thread, measured at about 1.2 s for 10,000 characters of a big note (tables and
#: code blocks) and 15 s for 100,000, so the preview stops here with a notice.
PREVIEW_CAP = 8_000
#: Over this many bytes the editor shows plain text without soft wrap.
PLAIN_OVER = 1_000_000
#: Seconds between two looks at the file's signature.
POLL_SECONDS = 1.0
#: Seconds after the last change before the unsaved text is kept as a draft.
DRAFT_DELAY = 1.0
#: Lines that will be lost listed in a Reload / Keep mine confirmation (then "… and N more").
LOST_SHOWN = 8

_FILES = [("Member notes — MEMORY_CUSTOM.md", "custom"), ("Notebook — MEMORY.md (read-only)", "notebook")] + [
    (f"{name} (operator, read-only)", name) for name in notes.OPERATOR_FILES]


def _these(lost: list[str], whose: str) -> str:
    """``"This line of yours will be lost:"`` / ``"These 3 lines of yours will be lost:"``."""
    return (f"This line {whose} will be lost:" if len(lost) == 1
            else f"These {len(lost):,} lines {whose} will be lost:")


class _CountedOnceWrappedDocument(WrappedDocument):
    """A :class:`WrappedDocument` whose height is counted once per change.

    Textual 8.2.8 recounts the wrapped height (a sum over every line) for each line it draws,
    so a frame of a 4.6 MB note cost about a second; cached, a key press is quick again.
    The cache is dropped by every method that changes the wrap offsets.
    """

    _height_cache: int | None = None

    @property
    def height(self) -> int:
        if self._height_cache is None:
            self._height_cache = WrappedDocument.height.fget(self)  # type: ignore[attr-defined]
        return self._height_cache

    def wrap(self, width: int, tab_width: int | None = None) -> None:
        self._height_cache = None
        super().wrap(width, tab_width)
        self._height_cache = None

    def wrap_range(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - Textual's signature
        self._height_cache = None
        try:
            return super().wrap_range(*args, **kwargs)
        finally:
            self._height_cache = None


class NotesEditor(DataTextArea):
    """The notes :class:`TextArea`, with the wrapped height counted once per change.

    Escape is left to the screen's "Stop editing" key: Textual's TextArea (Tab indents) moves
    focus to the next widget on Escape, which put a new user on the file selector or a
    conflict button without a visible word."""

    async def _on_key(self, event) -> None:  # noqa: ANN001 - events.Key
        if event.key == "escape":
            event.prevent_default()  # not TextArea's handler; the screen's binding runs
            return
        await super()._on_key(event)

    def _set_document(self, text: str, language: str | None) -> None:
        super()._set_document(text, language)
        if type(self.wrapped_document) is WrappedDocument:
            self.wrapped_document.__class__ = _CountedOnceWrappedDocument


def session_for(app) -> Session:  # noqa: ANN001 - the running App
    """The app's writable session, opened with purpose ``"tui"`` on first use."""
    session = getattr(app, "session", None)
    if session is None:
        session = Session.open(app.ws, purpose="tui")
        app.session = session
    return session


class LeaveQuestion(ButtonDialog[str]):
    """"You have unsaved changes": answers ``"save"`` (``s``), ``"discard"`` (``d``) or
    ``"stay"`` (Escape; focused first, so an Enter pressed by habit neither saves nor drops)."""

    def __init__(self, shown: str) -> None:
        super().__init__(join(safe(shown), " has unsaved changes."),
                         [Answer("save", "Save", "s", "primary", "leave-save"),
                          Answer("discard", "Discard", "d", "error", "leave-discard"),
                          Answer("stay", "Stay", "", "default", "leave-stay")], safe=2)


class NotesScreen(AreaScreen):
    """The member notes editor (see the module docstring).

    Args:
        session: the session to write through; default :func:`session_for` the app.
    """

    DEFAULT_CSS = """
    #notes-head { height: 3; }
    #notes-file { width: 44; }
    #notes-status { width: 1fr; padding: 1 1 0 1; }
    #notes-conflict { height: auto; max-height: 60%; display: none; background: $warning 20%; padding: 0 1; }
    #notes-conflict.shown { display: block; }
    #notes-conflict-diff { height: auto; max-height: 16; }
    #notes-conflict Horizontal { height: auto; }
    #notes-conflict Button { margin-right: 1; }
    #notes-draft { height: auto; display: none; background: $accent 20%; padding: 0 1; }
    #notes-draft.shown { display: block; }
    #notes-draft Horizontal { height: auto; }
    #notes-draft Button { margin-right: 1; }
    #notes-find { display: none; }
    #notes-find.shown { display: block; }
    #notes-body { height: 1fr; }
    #notes-editor { width: 1fr; }
    #notes-preview-box { width: 1fr; display: none; border-left: tall $panel; }
    #notes-preview-box.shown { display: block; }
    #notes-preview-note { height: auto; color: $warning; }
    """

    #: nothing has focus on arrival: number keys switch areas until `e` (or a click) starts editing
    AUTO_FOCUS = ""  # "" (not None, which inherits the app's "*") focuses nothing

    #: the conflict bar's choices: keys shown (first in the footer) only while the bar is
    CONFLICT_ACTIONS = frozenset({"conflict_merge", "conflict_diff", "conflict_reload", "conflict_keep"})

    BINDINGS = [
        Binding("m", "conflict_merge", "Merge", id="notes.conflict-merge",
                tooltip="merge the change made on disk with yours and save (choose conflict by conflict "
                        "when they overlap)"),
        Binding("d", "conflict_diff", "Difference", id="notes.conflict-diff",
                tooltip="show what differs between the file on disk and your text"),
        Binding("r", "conflict_reload", "Reload", id="notes.conflict-reload",
                tooltip="reload the file from disk, dropping your unsaved changes (asks first)"),
        Binding("w", "conflict_keep", "Keep mine", id="notes.conflict-keep",
                tooltip="write your text over the file on disk, dropping the change made there (asks first)"),
        Binding("ctrl+s", "save", "Save", id="notes.save"),
        Binding("ctrl+f", "find", "Find", id="notes.find"),
        Binding("f3", "find_next", "Next", show=False, id="notes.find-next"),
        Binding("ctrl+t", "toggle_preview", "Preview", id="notes.toggle-preview"),
        Binding("e", "edit", "Edit", id="notes.edit"),
        Binding("ctrl+o", "choose_file", "Open file", id="notes.open-file",
                tooltip="choose the notes file to show: member notes, the notebook, operator files"),
        Binding("escape", "close_find", "Stop editing", id="notes.close-find"),
        *(Binding(a.key, f"leave('{a.mode}')", a.title, show=False, id=f"area.{a.mode}") for a in AREAS),
        Binding("q", "leave('')", "Quit", show=False, id="notes.quit"),
    ]

    def __init__(self, session: Session | None = None) -> None:
        super().__init__()
        self._given_session = session
        self.session: Session | None = session
        self.note: notes.Note | None = None
        self.dirty = False
        self._signature: tuple[int, int, int] | None = None
        self._conflict: ConflictError | None = None
        self._diff_shown = False
        self._loading = False
        #: the draft offered for the file shown (restore / discard), else ``None``
        self._draft: drafts.Draft | None = None
        #: the hash a save must find on disk when it is not the loaded file's (a restored
        #: draft written over another version of the file), else ``None``
        self._save_base: str | None = None
        self._draft_timer: Timer | None = None

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        with Horizontal(id="notes-head"):
            yield Select([(Text(label), value) for label, value in _FILES], value="custom",
                         allow_blank=False, id="notes-file")
            yield Static(id="notes-status")
        with Vertical(id="notes-conflict"):
            yield Static(id="notes-conflict-text")
            yield Static(id="notes-conflict-diff")
            with Horizontal():
                yield Button("Resolve conflicts…", id="conflict-resolve", variant="primary")
                yield Button("Merge and save", id="conflict-merge", variant="primary")
                yield Button("Show difference", id="conflict-diff")
                yield Button("Reload (drop mine)", id="conflict-reload")
                yield Button("Keep mine", id="conflict-keep", variant="warning")
        with Vertical(id="notes-draft"):
            yield Static(id="notes-draft-text")
            with Horizontal():
                yield Button("Restore the draft", id="draft-restore", variant="primary")
                yield Button("Discard the draft", id="draft-discard", variant="error")
        yield Input(placeholder="find (Enter: next match, Esc: close)", id="notes-find")
        with Horizontal(id="notes-body"):
            yield NotesEditor("", language="markdown", show_line_numbers=True, soft_wrap=True,
                           tab_behavior="indent", id="notes-editor")
            with VerticalScroll(id="notes-preview-box"):
                yield Static(id="notes-preview-note")
                yield DataMarkdown("", id="notes-preview", open_links=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        if self.session is None:
            try:
                self.session = session_for(self.app)
            except MemtuiError as exc:  # pragma: no cover - Workspace already opened
                self.notify(str(exc), severity="error", markup=False)
        self.load_note("custom")
        self.set_interval(POLL_SECONDS, self._poll)
        if hasattr(self.app, "workspace_changed"):
            self.app.workspace_changed.subscribe(self, self._on_changes)

    def _on_changes(self, changes) -> None:  # noqa: ANN001 - memtui.core.watch.Changes
        """A notes file changed (any process): look at once, not at the next poll."""
        if "notes" in changes.topics:
            self._poll()

    @property
    def editor(self) -> NotesEditor:
        return self.query_one("#notes-editor", NotesEditor)

    @property
    def which(self) -> str:
        return self.note.which if self.note else "custom"

    # -- keys while a conflict is shown ----------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The conflict keys exist (footer, keys) only while the conflict bar is shown."""
        if action in self.CONFLICT_ACTIONS:
            return self._conflict is not None
        return True

    def why_unavailable(self, action: str) -> str | None:
        """Why ``action`` does nothing now (the palette says it instead of nothing), else ``None``."""
        if action in self.CONFLICT_ACTIONS and self._conflict is None:
            return "there is no conflict to resolve: these keys work while the Notes area shows one"
        return None

    @property
    def focus_chain(self) -> list:  # noqa: D102 - Screen's
        """Tab and Shift+Tab go round the file selector and the conflict bar's buttons while it
        is shown: the editor (where Tab indents) is entered with ``e``, never by Tab."""
        chain = super().focus_chain
        if self._conflict is not None:
            chain = [w for w in chain if not isinstance(w, NotesEditor) or w is self.focused]
        return chain

    def _key(self, action: str) -> str:
        """How the key of this screen's ``action`` is shown (after the user's ``[keys]``)."""
        from memtui.ui.widgets import key_label

        keymap = dict(getattr(self.app, "_keymap", {}) or {})
        binding = next(b for b in self.BINDINGS if isinstance(b, Binding) and b.action == action)
        return key_label(self.app, binding, keymap)

    def conflict_keys(self) -> str:
        """The conflict choices with their keys, as a sentence's tail (``m merge · d …``)."""
        merged = getattr(self, "_merged", None)
        merge = "merge and save" if merged is not None and merged.clean else "resolve conflicts"
        return (f"{self._key('conflict_merge')} {merge} · {self._key('conflict_diff')} show difference · "
                f"{self._key('conflict_reload')} reload (drop mine) · {self._key('conflict_keep')} keep mine")

    def _first_conflict_button(self) -> Button:
        for button_id in ("#conflict-resolve", "#conflict-merge", "#conflict-diff"):
            button = self.query_one(button_id, Button)
            if button.display:
                return button
        return self.query_one("#conflict-diff", Button)  # pragma: no cover - diff is always shown

    # -- loading ---------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="notes-load")
    def load_note(self, which: str, notice: str | None = None) -> None:
        """Read ``which`` in a thread (big files) and show it."""
        session = self.session
        ws = session.ws if session else self.app.ws
        note = notes.load(ws, which)
        signature = notes.signature(note.path)
        self.from_worker(self._show_note, note, signature, notice)

    def _show_note(self, note: notes.Note, signature, notice: str | None) -> None:  # noqa: ANN001
        self.note = note
        self._signature = signature
        self._save_base = None
        self._hide_conflict()
        editor = self.editor
        big = len(note.data) > PLAIN_OVER
        editor.language = None if big else "markdown"
        editor.soft_wrap = not big
        self._loading = True
        editor.load_text(note.text)
        editor.read_only = not self._writable() or not editor.keeps_text
        if not editor.keeps_text:
            self.notify(f"{note.shown} holds characters of the private plane memtui uses to show control "
                        "characters safely; it is shown read-only here so saving cannot change them",
                        severity="warning", markup=False)
        elif to_editor(note.text) is not note.text:
            self.notify(f"{note.shown} holds control or direction characters; they are shown as ␛, ␦ … in "
                        "reverse and saved exactly as they are", markup=False)
        self._loading = False
        self.dirty = False
        if big:
            self.notify(f"{note.shown} is {len(note.data):,} bytes: highlighting and wrapping are off "
                        "so typing stays quick", timeout=6, markup=False)
        self._offer_draft(note)
        for finding in note.findings:
            self.notify(f"{finding.place}: {finding.message}", severity="warning", markup=False, timeout=8)
        if notice:
            self.notify(notice, markup=False)
        self._refresh_status()
        self._refresh_preview()

    def _read_only_reason(self) -> str | None:
        if self.note is None:
            return "loading"
        if self.note.read_only_reason:
            return self.note.read_only_reason
        if self.session is None:
            return "no session"
        return self.session.reason

    def _writable(self) -> bool:
        return self._read_only_reason() is None

    def _refresh_status(self) -> None:
        status = self.query_one("#notes-status", Static)
        if self.note is None:
            status.update(Text("loading…"))
            return
        parts: list[Text | str] = [safe(self.note.shown, "bold")]
        if not self.note.exists:
            parts.append(Text("  (absent: an empty document; saving creates it)", style="dim"))
        if self.dirty:
            parts.append(Text("  ● unsaved", style="bold yellow"))
        reason = self._read_only_reason()
        if reason:
            parts.append(Text("  READ-ONLY ", style="bold reverse"))
            parts.append(Text(" "))
            parts.append(safe(reason, "italic"))
        elif self.focused is self.editor:  # Tab inserted spaces without a word
            parts.append(Text(f"  editing · Tab indents ({self.editor.indent_width} spaces) · Esc stops",
                              style="dim"))
        else:
            parts.append(Text("  e or a click to edit", style="dim"))
        status.update(join(*parts))
        status.tooltip = reason

    def on_descendant_focus(self) -> None:
        self._refresh_status()

    def on_descendant_blur(self) -> None:
        self.call_after_refresh(self._refresh_status)

    @on(Select.Changed, "#notes-file")
    def _file_chosen(self, event: Select.Changed) -> None:
        which = str(event.value)
        if self.note is None or which == self.which:
            return
        if self.dirty:
            self.app.push_screen(LeaveQuestion(self.note.shown),
                                 lambda answer: self._after_question(answer, lambda: self.load_note(which),
                                                                     revert_select=True))
            return
        self.load_note(which)

    def action_choose_file(self) -> None:
        """Open the file selector (``ctrl+o``): the notebook and the operator files are one key
        away, not only a click."""
        select = self.query_one("#notes-file", Select)
        select.focus()
        select.expanded = True

    # -- editing ---------------------------------------------------------------------------
    @on(TextArea.Changed, "#notes-editor")
    def _changed(self, _event: TextArea.Changed) -> None:
        if self._loading or self.note is None:
            return
        # a read-only editor holds nothing typed (a binary file shows no text: not a change)
        dirty = not self.editor.read_only and self.note.dirty(self.editor.text)
        if dirty != self.dirty:
            self.dirty = dirty
            self._refresh_status()
        self._schedule_draft()
        if self.query_one("#notes-preview-box").has_class("shown"):
            self._schedule_preview()

    def _schedule_preview(self) -> None:
        timer = getattr(self, "_preview_timer", None)
        if timer is not None:
            timer.stop()
        delay = 0.6 if len(self.editor.document.lines) < 2000 else 2.0
        self._preview_timer = self.set_timer(delay, self._refresh_preview)

    def _refresh_preview(self) -> None:
        if not self.query_one("#notes-preview-box").has_class("shown"):
            return
        text = self.editor.text
        note = self.query_one("#notes-preview-note", Static)
        if len(text) > PREVIEW_CAP:
            note.update(Text(f"Preview shows the first {PREVIEW_CAP:,} of {len(text):,} characters; "
                             "the editor holds the whole file and saves all of it."))
            text = text[:PREVIEW_CAP]
        else:
            note.update(Text(""))
        self.query_one("#notes-preview", Markdown).update(text)

    def action_toggle_preview(self) -> None:
        box = self.query_one("#notes-preview-box")
        box.toggle_class("shown")
        self._refresh_preview()

    # -- drafts ----------------------------------------------------------------------------
    def _workspace_root(self) -> str:
        return str(self.session.ws.root if self.session else self.app.ws.root)

    def _schedule_draft(self) -> None:
        if self._draft_timer is not None:
            self._draft_timer.stop()
        self._draft_timer = self.set_timer(DRAFT_DELAY, self._keep_draft_now)

    def _keep_draft_now(self) -> None:
        self._draft_timer = None
        if self.note is None or not self._writable() or self._draft is not None:
            return  # a draft still offered is not overwritten before the member has chosen
        if self.dirty:
            self.write_draft(self._workspace_root(), self.note.shown, self._save_base or self.note.hash,
                             self.editor.text)
        else:
            self.write_draft(self._workspace_root(), self.note.shown, None, None)

    @work(thread=True, exclusive=True, group="notes-draft")
    def write_draft(self, root: str, shown: str, base: str | None, text: str | None) -> None:
        """Keep (``text``) or drop (``None``) the draft, in a thread (big notes)."""
        try:
            if text is None:
                drafts.discard(root, shown)
            else:
                drafts.save(root, shown, base, text)
        except OSError:
            pass  # the user data folder is not writable: the editor still holds the text

    def keep_draft(self, why: str) -> bool:
        """Keep the unsaved text as a draft now (called by the app on a stop signal); True
        when there was unsaved text."""
        if self.note is None or not self.dirty or not self._writable():
            return False
        try:
            drafts.save(self._workspace_root(), self.note.shown, self._save_base or self.note.hash,
                        self.editor.text, why)
        except OSError:
            return False
        return True

    def _offer_draft(self, note: notes.Note) -> None:
        bar = self.query_one("#notes-draft")
        draft = drafts.load(self._workspace_root(), note.shown) if note.writable else None
        if draft is not None and draft.text == note.text:
            drafts.discard(draft.workspace, draft.shown)  # the draft was saved after all
            draft = None
        self._draft = draft
        if draft is None:
            bar.remove_class("shown")
            return
        how = "while you were typing" if draft.why == "typing" else f"when memtui was stopped ({draft.why})"
        changed = "" if draft.base == note.hash else (
            "  The file changed on disk since: restoring shows the conflict before anything is saved.")
        self.query_one("#notes-draft-text", Static).update(join(
            Text("Unsaved draft: ", style="bold"), safe(note.shown),
            Text(f" has a draft of {len(draft.text):,} characters kept {how}, "
                 f"{draft.saved_at.replace('T', ' ')[:16]} UTC."
                 f"{changed}")))
        bar.add_class("shown")

    @on(Button.Pressed, "#draft-restore")
    def _restore_draft(self) -> None:
        draft, note = self._draft, self.note
        if draft is None or note is None:
            return
        self._draft = None
        self.query_one("#notes-draft").remove_class("shown")
        self.editor.load_text(draft.text)  # marks the editor dirty (TextArea.Changed)
        if draft.base != note.hash:
            self._save_base = draft.base
            current = note.data if note.exists else None
            self._show_conflict(ConflictError(
                f"{note.shown} changed on disk after this draft was kept.", path=note.path, current=current,
                current_hash=note.hash))
        self.notify("draft restored: it is unsaved until you save it", markup=False, timeout=4)

    @on(Button.Pressed, "#draft-discard")
    def _discard_draft(self) -> None:
        draft = self._draft
        self._draft = None
        self.query_one("#notes-draft").remove_class("shown")
        if draft is not None:
            drafts.discard(draft.workspace, draft.shown)

    # -- find ------------------------------------------------------------------------------
    def action_find(self) -> None:
        box = self.query_one("#notes-find", Input)
        box.add_class("shown")
        box.focus()

    def action_edit(self) -> None:
        """Put the cursor in the editor (the area opens without focus, so number keys switch areas)."""
        self.editor.focus()

    def action_close_find(self) -> None:
        """Escape: close the find box, or else leave the editor so number keys switch areas
        again; while a conflict is shown, focus goes to its first choice (its keys work there)."""
        box = self.query_one("#notes-find", Input)
        if box.has_class("shown"):
            box.remove_class("shown")
            self.editor.focus()
        elif self._conflict is not None and self.focused is self.editor:
            self._first_conflict_button().focus()
        elif self.focused is not None:
            self.set_focus(None)

    @on(Input.Submitted, "#notes-find")
    def _find_submitted(self, _event: Input.Submitted) -> None:
        self.action_find_next()

    def action_find_next(self) -> None:
        """Select the next match (case-insensitive) after the cursor, wrapping around."""
        query = self.query_one("#notes-find", Input).value
        if not query:
            return
        editor = self.editor
        text = editor.text
        lowered = text.lower()
        if len(lowered) == len(text) and len(query.lower()) == len(query):
            haystack, needle = lowered, query.lower()
        else:  # lower-casing changed lengths (rare scripts): match exactly so offsets stay right
            haystack, needle = text, query
        document = editor.document
        assert isinstance(document, Document)  # a plain TextArea's document, never a syntax tree's
        start = document.get_index_from_location(editor.selection.end)
        found = haystack.find(needle, start)
        if found < 0:
            found = haystack.find(needle)
        if found < 0:
            self.notify(f"not found: {query}", severity="warning", markup=False)
            return
        begin = document.get_location_from_index(found)
        end = document.get_location_from_index(found + len(needle))
        editor.selection = Selection(begin, end)
        editor.scroll_cursor_visible()

    # -- saving ----------------------------------------------------------------------------
    def action_save(self) -> None:
        if self.note is None:
            return
        reason = self._read_only_reason()
        if reason:
            self.notify(reason, title="Not saved", severity="error", markup=False, timeout=8)
            return
        merged = getattr(self, "_merged", None)
        if self._conflict is not None and merged is not None and merged.clean:
            self._conflict_merge()  # changes to different lines: merged when you save, as said
            return
        if self._conflict is not None:  # ctrl+s said nothing and re-showed the same bar
            self._first_conflict_button().focus()
            self.notify(f"resolve the conflict first: {self.conflict_keys()}", title="Not saved",
                        severity="warning", markup=False, timeout=8)
            return
        self.save_text(self.editor.text, self._save_base or self.note.hash, then=None)

    def save_text(self, text: str, base: str | None, then=None) -> None:  # noqa: ANN001
        """Save in a worker; a change made on disk since the loaded bytes is merged in when it
        does not overlap, else the conflict bar is shown; a refusal is a toast."""
        assert self.session is not None and self.note is not None
        session, note = self.session, self.note

        def conflict(exc: Exception) -> bool:
            if isinstance(exc, ConflictError):  # MergeConflict too: the bar offers "Resolve conflicts…"
                self._show_conflict(exc)
                return True
            return False

        self.run_core(lambda: notes.save(session, note, text, base, base_text=note.text if base == note.hash else None),
                      lambda result: self._saved(result, text, then), group="notes-save", title="Not saved",
                      errors=(MemtuiError, OSError), failed=conflict)

    def _saved(self, result: notes.SaveResult, text: str, then) -> None:  # noqa: ANN001
        self.note = result.note
        self._signature = notes.signature(result.note.path)
        self._save_base = None
        if not self.note.dirty(self.editor.text):
            self.write_draft(self._workspace_root(), self.note.shown, None, None)
        self._hide_conflict()
        if result.merged and self.editor.text == text:  # show the merged text (nothing typed meanwhile)
            self._replace_text(result.note.text)
        self.dirty = self.note.dirty(self.editor.text)
        self._refresh_status()
        if result.merged:
            message = f"saved {result.note.shown}, merged with the change made on disk meanwhile"
        else:
            message = f"saved {result.note.shown}" if result.written else "nothing changed"
        self.notify(message, markup=False, timeout=4)
        index_saved = getattr(self.app, "index_saved", None)  # searchable at once
        if result.written and index_saved is not None:
            index_saved([result.note.shown])
        if then is not None:
            then()

    # -- watching and conflicts ------------------------------------------------------------
    def _poll(self) -> None:
        if self.note is None or self._loading:
            return
        signature = notes.signature(self.note.path)
        if signature == self._signature:
            return
        self._signature = signature
        self.check_disk()

    @work(thread=True, exclusive=True, group="notes-check")
    def check_disk(self) -> None:
        """Compare the file's hash with the loaded one (the signature only hints)."""
        note = self.note
        if note is None:
            return
        current, current_hash = notes.read_current(note.path)
        if current_hash == note.hash:
            return
        self.from_worker(self._changed_on_disk, note, current, current_hash)

    def _changed_on_disk(self, note: notes.Note, current: bytes | None, current_hash: str | None) -> None:
        if note is not self.note:
            return
        if not self.dirty:
            self.load_note(note.which, notice=f"{note.shown} changed on disk; reloaded")
            return
        if self._conflict is not None and self._conflict.current_hash == current_hash:
            return  # the conflict shown is about these very bytes
        self._show_conflict(ConflictError(
            f"{note.shown} changed on disk while you were editing it.", path=note.path,
            current=current, current_hash=current_hash))

    def _replace_text(self, text: str) -> None:
        """Put ``text`` in the editor as one undoable edit, the cursor kept where it was."""
        editor = self.editor
        cursor = editor.cursor_location
        editor.replace(text, editor.document.start, editor.document.end)
        row = min(cursor[0], editor.document.line_count - 1)
        editor.cursor_location = (row, min(cursor[1], len(editor.document.get_line(row))))

    def _show_conflict(self, conflict: ConflictError) -> None:
        """The bar over the editor: what happened and what each choice will do.

        When the loaded bytes are known, the three-way merge decides what is offered: "Merge
        and save" when the changes do not overlap, "Resolve conflicts…" when they do."""
        self._conflict = conflict
        bar = self.query_one("#notes-conflict")
        merged = getattr(conflict, "merged", None)
        if merged is None and self.note is not None and self.session is not None:
            # merged from what the editor's text started from: a restored draft's base, not the
            # file loaded since (from that, the agent's lines looked like nobody's and were dropped)
            base = notes.base_text(self.session, self.note, self._save_base)
            if base is not None:
                merged = notes.merge(base, self.editor.text, notes.text_of(self.note, conflict.current))
        self._merged = merged
        shown = self.note.shown if self.note else "the file"
        if merged is not None and merged.clean:
            what = Text(f"{shown} changed on disk while you were editing it. Your changes and that change "
                        "touch different lines: Merge and save will keep both. ")
        elif merged is not None:
            count = len(merged.conflicts)
            what = Text(f"{shown} changed on disk while you were editing it, and {count} of its changes "
                        f"{'overlaps' if count == 1 else 'overlap'} yours. Resolve conflicts… will let you "
                        "choose, for each, yours, the file's or both. ")
        else:
            what = join(safe(str(conflict)), " ")
        self.query_one("#notes-conflict-text", Static).update(join(
            Text("Conflict: ", style="bold"), what,
            Text("Reload drops your changes, Keep mine the file's (both ask first). "),
            Text("Esc leaves the editor; then the key on a button.", style="dim")))
        labels = {"conflict-resolve": ("Resolve conflicts…", "conflict_merge"),
                  "conflict-merge": ("Merge and save", "conflict_merge"),
                  "conflict-diff": ("Show difference", "conflict_diff"),
                  "conflict-reload": ("Reload (drop mine)", "conflict_reload"),
                  "conflict-keep": ("Keep mine", "conflict_keep")}
        for button_id, (label, action) in labels.items():  # the key on the button, as Confirm's (y)
            self.query_one(f"#{button_id}", Button).label = Text(f"{label} {self._key(action)}")
        self.query_one("#conflict-merge").display = merged is not None and merged.clean
        self.query_one("#conflict-resolve").display = merged is not None and not merged.clean
        self.query_one("#notes-conflict-diff", Static).update(Text(""))
        self._diff_shown = False
        bar.add_class("shown")
        self.refresh_bindings()

    def _hide_conflict(self) -> None:
        self._conflict = None
        self.query_one("#notes-conflict").remove_class("shown")
        self.refresh_bindings()

    def action_conflict_merge(self) -> None:
        """``m``: merge and save when the changes do not overlap, else resolve them one by one."""
        merged = getattr(self, "_merged", None)
        if self._conflict is None or merged is None:
            return
        if merged.clean:
            self._conflict_merge()
        else:
            self._conflict_resolve()

    def action_conflict_diff(self) -> None:
        """``d``: show (or hide) the difference between the file on disk and your text."""
        self._conflict_show_diff()

    def action_conflict_reload(self) -> None:
        """``r``: reload from disk, after saying which of your lines will be dropped."""
        self._conflict_reload()

    def action_conflict_keep(self) -> None:
        """``w``: write your text over the file, after saying which of its lines will be lost."""
        self._conflict_keep()

    @on(Button.Pressed, "#conflict-merge")
    def _conflict_merge(self) -> None:
        conflict = self._conflict
        if conflict is None or self.note is None or self.session is None:
            return
        # merged from the editor's text as it is now: the merge computed when the bar appeared
        # left out what was typed since (it was saved without those keys)
        base = notes.base_text(self.session, self.note, self._save_base)
        merged = None if base is None else notes.merge(base, self.editor.text,
                                                        notes.text_of(self.note, conflict.current))
        if merged is None or not merged.clean:
            self._show_conflict(conflict)  # what is offered now (the typing may have made them overlap)
            return
        self._replace_text(merged.resolve())
        self.notify(f"{self.note.shown} changed on disk in other lines: merged with yours, saving",
                    markup=False, timeout=6)
        self.save_text(self.editor.text, conflict.current_hash, then=None)

    @on(Button.Pressed, "#conflict-resolve")
    def _conflict_resolve(self) -> None:
        from memtui.ui.screens.merge import MergeScreen

        merged = getattr(self, "_merged", None)
        if self._conflict is None or merged is None or self.note is None:
            return
        conflict = self._conflict

        def resolved(text: str | None) -> None:
            if text is None:
                return  # based on the bytes the merge was made against: a newer change conflicts again
            self._replace_text(text)
            self.save_text(text, conflict.current_hash, then=None)

        self.app.push_screen(MergeScreen(merged, self.note.shown), resolved)

    @on(Button.Pressed, "#conflict-diff")
    def _conflict_show_diff(self) -> None:
        if self._conflict is None or self.note is None:
            return
        box = self.query_one("#notes-conflict-diff", Static)
        if self._diff_shown:  # shown: the key (or the button) hides it again
            self._diff_shown = False
            box.update(Text(""))
            return
        self._diff_shown = True
        shown = notes.conflict_diff(self.note, self._conflict, self.editor.text) or "(no difference)\n"
        styled = Text()
        for line in shown.splitlines(keepends=True)[:400]:
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
            styled.append(line, style=style)
        box.update(styled)

    def _lost_lines(self, heading: str, lost: list[str], none: str) -> Text:
        """``heading`` then the lines that will be lost (at most :data:`LOST_SHOWN`), or ``none``."""
        if not lost:
            return Text(none)
        out = Text(heading)
        for line in lost[:LOST_SHOWN]:
            out.append("\n- ", style="red")
            out.append_text(safe(line, "red", limit=200))
        if len(lost) > LOST_SHOWN:
            out.append(f"\n  … and {plural(len(lost) - LOST_SHOWN, 'more line')}")
        return out

    @on(Button.Pressed, "#conflict-reload")
    def _conflict_reload(self) -> None:
        conflict, note = self._conflict, self.note
        if conflict is None or note is None:
            return
        lost = removed_lines(self.editor.text, notes.text_of(note, conflict.current))
        question = join(
            "Reload ", safe(note.shown), " from disk? Your unsaved changes will be dropped. ",
            self._lost_lines(_these(lost, "of yours"), lost,
                             "No line of yours is lost: your changes only removed lines."))

        def done(yes: bool | None) -> None:
            if yes and self.note is note:
                self.load_note(note.which, notice="reloaded from disk; your changes were dropped")

        self.app.push_screen(Confirm(question, yes="Reload"), done)

    @on(Button.Pressed, "#conflict-keep")
    def _conflict_keep(self) -> None:
        conflict, note = self._conflict, self.note
        if conflict is None or note is None:
            return
        text = self.editor.text
        lost = removed_lines(notes.text_of(note, conflict.current), text) if conflict.current is not None else []
        none = ("The file was deleted on disk: keeping yours writes it again." if conflict.current is None
                else "No line of the file on disk is lost (its change only removed lines).")
        question = join(
            "Keep mine: write your text over ", safe(note.shown), "? The change made on disk will be lost. ",
            self._lost_lines(_these(lost, "of the file on disk"), lost, none))

        def done(yes: bool | None) -> None:
            # based on the bytes shown in the question: a further change made meanwhile conflicts again
            if yes and self.note is note and self._conflict is not None:
                self.save_text(self.editor.text, conflict.current_hash, then=None)

        self.app.push_screen(Confirm(question, yes="Keep mine"), done)

    # -- leaving ---------------------------------------------------------------------------
    def action_leave(self, mode: str) -> None:
        """Switch to area ``mode`` (``""``: quit), asking first when there are unsaved changes."""
        def go() -> None:
            if mode:
                self.app.switch_mode(mode)
            else:
                self.app.exit()

        if mode == getattr(self.app, "current_mode", None):
            return
        if not self.dirty or self.note is None:
            go()
            return
        self.app.push_screen(LeaveQuestion(self.note.shown), lambda answer: self._after_question(answer, go))

    def _after_question(self, answer: str | None, go, revert_select: bool = False) -> None:  # noqa: ANN001
        if answer == "save" and self.note is not None:
            self.save_text(self.editor.text, self.note.hash, then=go)
        elif answer == "discard":
            self.dirty = False
            if self.note is not None:
                drafts.discard(self._workspace_root(), self.note.shown)
            go()
        elif revert_select:
            with self.prevent(Select.Changed):
                self.query_one("#notes-file", Select).value = self.which
