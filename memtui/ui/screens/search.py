"""The Search area: results as you type, filters, highlighted snippets, Enter opens.

- The query box is searched :data:`DEBOUNCE_SECONDS` after the last key, in a worker thread
  (:func:`memtui.core.search.query.search`); a newer query makes older answers be dropped.
  The query language (words, ``"phrases"``, ``prefix*``, ``fuzzy~``, ``AND``, ``kind:``
  ``node:`` ``owner:`` ``state:`` ``tag:``) is the CLI's; a query that cannot be used shows
  what is wrong under the box, never a traceback.
- Filters beside the box: a kind, and "proposals and retired" (seed 000 §2 rule 7: hidden by
  default, DESIGN.md invariant 6).
- The app indexes the workspace in the background (:meth:`MemtuiApp.run_index`); its progress
  shows here, and the current query runs again when an update finishes.
- Snippets are :class:`rich.text.Text` built from the core's spans (whole Cyrillic
  words), never markup (DESIGN.md invariant 11).
- Enter opens the highlighted result in its own area: the Tree for articles, experience
  entries, nodes and index lines; Notes; Skills; Graph (:func:`open_hit`).
- A pasted ticket of several lines (an e-mail, a log) stays whole: the box shows each line
  break as :data:`PASTE_BREAK` and the search reads it back as a line break, so the core
  can read the mail's structure (:mod:`memtui.core.search.reading`); the status says what
  was read, and a ``possible`` result says why it was set apart.
- :class:`SearchCommands` lets the command palette search from anywhere.
"""

from __future__ import annotations

import asyncio
from functools import partial

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.command import Hit as PaletteHit
from textual.command import Hits, Provider
from textual.containers import Horizontal
from textual.timer import Timer
from textual import events
from textual.widgets import Checkbox, DataTable, Header, Input, ProgressBar, Select, Static
from textual.worker import get_current_worker

from memtui.core.errors import MemtuiError
from memtui.core.notes import OPERATOR_FILES
from memtui.core.search.query import Hit, QueryError, Results, Snippet, search
from memtui.core.search.sources import KINDS
from memtui.core.workspace import MEMBER_NOTES, NOTEBOOK
from memtui.ui import clock
from memtui.ui.widgets import KeyFooter, left_behind
from memtui.ui.widgets import AreaBar, escape_box
from memtui.ui.text import as_data, join, safe
from memtui.ui.screens.base import AreaScreen

#: Quiet time after the last key before the query runs (seconds).
DEBOUNCE_SECONDS = 0.15
#: Results asked for (and rows drawn) per query.
RESULT_LIMIT = 50
#: Results the command palette shows per query.
PALETTE_LIMIT = 8
#: Style of a matched word in a snippet.
MATCH_STYLE = "bold reverse"

_TREE_KINDS = ("article", "experience", "node", "index-line", "proposal")


def snippet_text(snippet: Snippet | None, style: str = MATCH_STYLE) -> Text:
    """A :class:`Text` of ``snippet`` with each span styled ``style`` (never markup).

    Args:
        snippet: from :func:`memtui.core.search.query.snippet_for`; ``None`` gives empty text.
        style: the Rich style of matched words.

    Returns:
        The excerpt with control characters made visible (:func:`memtui.ui.text.visible`);
        the pieces between spans are appended separately, so a stand-in such as
        ``⟨U+200B⟩`` never shifts a highlight.
    """
    out = Text()
    if snippet is None:
        return out
    pos = 0
    for start, end in snippet.spans:
        if start > pos:
            out.append(safe(snippet.text[pos:start]))
        out.append(safe(snippet.text[start:end], style))
        pos = end
    if pos < len(snippet.text):
        out.append(safe(snippet.text[pos:]))
    return out


def _where(hit: Hit) -> str:
    if hit.kind == "index-line":
        return f"{hit.path}:{hit.line} → {hit.target}" if hit.line else f"{hit.path} → {hit.target}"
    if hit.kind == "entity" and hit.line:
        return f"{hit.path.split('#', 1)[0]}:{hit.line}"
    if hit.kind == "session" and hit.line:
        return f"{hit.path}:{hit.line}"
    return hit.path


async def open_hit(app, hit: Hit) -> bool:  # noqa: ANN001 - the MemtuiApp
    """Open ``hit`` in its own area; returns ``False`` (with a notice) when it has none.

    Tree kinds go to the Tree area revealed at ``(node, article)`` (an index line opens the
    article it lists); member notes, notebook and operator files go to Notes (through its file
    chooser, so unsaved edits still get the leave question); a skill selects its row in
    Skills; an entity filters the Graph area to its name.
    """
    path = hit.target if hit.kind == "index-line" and hit.target else hit.path
    if hit.kind in _TREE_KINDS:
        node, article = app.tree_model.place(path)
        if node is None:
            app.notify(f"{path} is not in the memory tree; open it in your editor.", markup=False)
            return False
        await app.switch_mode("tree")
        app.screen.reveal(node, article)
        return True
    if hit.kind in ("notes", "notebook"):
        name = path.rsplit("/", 1)[-1]
        which = {MEMBER_NOTES: "custom", NOTEBOOK: "notebook"}.get(name, name if name in OPERATOR_FILES else "custom")
        await app.switch_mode("notes")
        chooser = app.screen.query("#notes-file")
        if chooser:
            chooser.first(Select).value = which
        return True
    if hit.kind == "skill":
        await app.switch_mode("skills")
        app.screen.reveal(path)
        return True
    if hit.kind == "session":  # a turn of a session history: the Sessions area, at that turn
        await app.switch_mode("sessions")
        app.screen.reveal(path.rsplit("/", 1)[-1].removesuffix(".jsonl"), hit.line)
        return True
    if hit.kind == "entity":
        await app.switch_mode("graph")
        box = app.screen.query("#graph-filter")
        if box:
            box.first(Input).value = hit.title
        return True
    if hit.kind == "proposal" or hit.state in ("proposed", "retired"):
        # a version from the governance store: the Proposals area holds its queue and history
        await app.switch_mode("proposals")
        version_id = path.split("/", 1)[1] if app.ws.memory_rel and path.startswith(app.ws.memory_rel + "/") else path
        rows = getattr(app.screen, "_rows", None) or []
        for i, version in enumerate(rows):
            if getattr(version, "id", None) == version_id:
                app.screen.query_one("#prop-queue", DataTable).move_cursor(row=i)
                break
        return True
    app.notify(f"{hit.kind} results have no area to open in.", markup=False)
    return False


def _searchable(app) -> bool:  # noqa: ANN001
    """False while the app's first index update builds an index that did not exist (searching
    then would open the folder the builder is creating); an existing index is searched at once.
    Cheap: the app's index worker found out whether the index existed (reading the
    manifest is disk work, not for the UI thread)."""
    return getattr(app, "index_report", True) is not None or bool(getattr(app, "index_existed", False))


def normalise_line_ends(text: str) -> str:
    """``text`` with each CR LF and each lone CR turned into LF (a paste's line ends differ by
    terminal: most send CR)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


#: How a line break of a pasted ticket shows in the one-line query box.
PASTE_BREAK = " \u23ce "


class TicketInput(Input):
    """The query box: a paste keeps every line (Textual's box keeps only the first), each
    line break shown as :data:`PASTE_BREAK`."""

    def _on_paste(self, event: events.Paste) -> None:
        # Terminals (and tmux's paste-buffer) send CR line ends: read CR LF and a lone CR as
        # line breaks before deciding whether the paste has more than one line.
        lines = normalise_line_ends(event.text).strip("\n")
        if "\n" not in lines:
            return  # one line: Input's own paste (handlers run for each class in turn)
        event.prevent_default()  # Input's own would insert the first line again
        text = PASTE_BREAK.join(lines.split("\n"))
        if self.selection.is_empty:
            self.insert_text_at_cursor(text)
        else:
            self.replace(text, *self.selection)
        event.stop()


def query_text(value: str) -> str:
    """The query the box's ``value`` stands for: :data:`PASTE_BREAK` read as a line break."""
    return value.replace(PASTE_BREAK, "\n")


#: How a hit's verdict looks: a likely answer in green, a possible one dimmed.
_VERDICT_STYLE = {"likely": "green", "possible": "yellow"}


def _answer_summary(results: Results) -> str:
    """One phrase for the whole answer: likely precedents, or only possible ones."""
    if results.hits and results.hits[0].verdict == "likely":
        return f"likely precedents first ({results.likelihood:.0%})"
    return f"no confident precedent ({results.likelihood:.0%}): the best are marked possible"


class SearchScreen(AreaScreen):
    """Search the whole workspace (see the module docstring)."""

    #: Under 80 columns the query box, kind list and checkbox stack (at 40 columns the query
    #: box had no width left: new-user test).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (80, "-wide")]

    DEFAULT_CSS = """
    #search-bar { height: 3; }
    SearchScreen.-narrow #search-bar { layout: vertical; height: auto; }
    SearchScreen.-narrow #search-bar > * { width: 100%; }
    #search-query { width: 1fr; }
    #search-kind { width: 22; }
    #search-proposed { width: auto; }
    #search-status { height: auto; padding: 0 1; }
    #search-progress { display: none; }
    #search-results { height: 1fr; }
    #search-snippet { height: auto; max-height: 12; padding: 0 1; border-top: tall $panel; }
    """

    BINDINGS = [
        Binding("slash", "focus_query", "Query", id="search.focus-query"),
        Binding("down", "focus_results", "Results", key_display="↓", id="search.focus-results"),
        Binding("escape", "clear_query", "Leave/clear the box", show=False, id="search.clear-query"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.results: Results | None = None
        self._hits: list[Hit] = []
        self._timer: Timer | None = None
        self._seq = 0

    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        with Horizontal(id="search-bar"):
            yield TicketInput(placeholder='words, "a phrase", prefix*, fuzzy~, a AND b, kind: node: owner: state: tag:',
                        id="search-query")
            yield Select([(Text(k), k) for k in KINDS], prompt="any kind", id="search-kind")
            yield Checkbox("proposals & retired", id="search-proposed")
        yield Static(Text(""), id="search-status")
        # a total from the start: an indeterminate bar animates 15 times a second even hidden
        yield ProgressBar(total=1, id="search-progress", show_eta=False)
        yield DataTable(id="search-results", cursor_type="row", zebra_stripes=True)
        yield Static(Text(""), id="search-snippet")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#search-results", DataTable)
        for name in ("", "kind", "title", "where", "confidence"):
            table.add_column(name or "answer", key=name or "verdict")
        app = self.app
        if hasattr(app, "index_ready"):
            app.index_ready.subscribe(self, self._on_index)
            app.index_progress.subscribe(self, self._on_progress)
        self._status_idle()
        self.query_one("#search-query").focus()

    def on_screen_resume(self) -> None:
        """Back on the Search area: with an empty query, typing goes to the query box (not to
        whatever widget had focus: keys opened the kind list); with a query, its results keep
        the focus (Enter opens one, the area keys work) and the status says how to reach the box."""
        focused = self.focused
        box = self.query_one("#search-query", Input)
        if focused is None or focused.id in ("search-kind", "search-proposed") or not box.value.strip():
            box.focus()

    # -- index state -----------------------------------------------------------------------
    def _indexing(self) -> bool:
        return getattr(self.app, "index_report", True) is None

    def _status_idle(self) -> None:
        if self.query_one("#search-query", Input).value.strip():
            return
        if self._indexing():
            text = Text("indexing the workspace… you can search already; results fill in as it finishes",
                        style="dim")
        else:
            report = getattr(self.app, "index_report", None)
            text = Text("type to search" + (f" · {report.documents:,} items indexed" if report and report.documents else ""),
                        style="dim")
        self.query_one("#search-status", Static).update(text)

    def _on_progress(self, progress: tuple[int, int]) -> None:
        done, total = progress
        bar = self.query_one("#search-progress", ProgressBar)
        bar.display = done < total
        bar.update(total=max(total, 1), progress=done)

    def _on_index(self, _report) -> None:  # noqa: ANN001
        self.query_one("#search-progress", ProgressBar).display = False
        if self.query_one("#search-query", Input).value.strip():
            self._start_search()
        else:
            self._status_idle()

    # -- querying --------------------------------------------------------------------------
    @on(Input.Changed, "#search-query")
    @on(Select.Changed, "#search-kind")
    @on(Checkbox.Changed, "#search-proposed")
    def _query_changed(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_SECONDS, self._start_search)

    def _start_search(self) -> None:
        self._timer = None
        text = query_text(self.query_one("#search-query", Input).value)
        kind = self.query_one("#search-kind", Select).value
        kinds = [str(kind)] if kind not in (Select.BLANK, None) and isinstance(kind, str) else []
        proposed = self.query_one("#search-proposed", Checkbox).value
        self._seq += 1
        if not text.strip() and not kinds:
            self._show(Results(), self._seq)
            self._status_idle()
            return
        if not _searchable(self.app):
            self.query_one("#search-status", Static).update(Text(
                "building the search index for the first time… the results come when it is ready", style="yellow"))
            return  # _on_index runs the query again
        self.run_search(text, kinds, proposed, self._seq)

    @work(thread=True, exclusive=True, group="search")
    def run_search(self, text: str, kinds: list[str], proposed: bool, seq: int) -> None:
        """Search in a thread; the answer (or what was wrong) comes back via ``call_from_thread``."""
        worker = get_current_worker()
        try:
            results = search(self.app.search_index, text, limit=RESULT_LIMIT, include_proposed=proposed,
                             kinds=kinds)
        except QueryError as exc:
            if not worker.is_cancelled:
                self.from_worker(self._problem, str(exc), seq)
            return
        except MemtuiError as exc:  # index busy or unwritable while repairing
            if not worker.is_cancelled:
                self.from_worker(self._problem, str(exc), seq)
            return
        except Exception as exc:  # noqa: BLE001 - a failed search must not close the app
            if not worker.is_cancelled:
                self.from_worker(
                    self._problem, f"the search failed ({type(exc).__name__}: {exc}); "
                    "try again, or rebuild the index: ctrl+p, then Search: Rebuild the index", seq)
            return
        if not worker.is_cancelled:
            self.from_worker(self._show, results, seq)

    def _problem(self, message: str, seq: int) -> None:
        if seq != self._seq:
            return
        self.query_one("#search-status", Static).update(Text(as_data(message), style="yellow"))

    def _show(self, results: Results, seq: int) -> None:
        if seq != self._seq:
            return  # a newer query is on its way
        self.results = results
        self._hits = list(results.hits)
        table = self.query_one("#search-results", DataTable)
        table.clear()
        from memtui.core import governance as gov

        ledger = gov.Ledger(self.app.session.store)
        for i, hit in enumerate(self._hits):
            title = safe(hit.title or hit.path, "bold")
            for mark in ledger.marks_at(self.app.ws, hit.target or hit.path):  # seed 000 §7.4b, §4.5
                title.append(Text(f" [{mark}]", style="bold red"))
            table.add_row(Text(hit.verdict, style=_VERDICT_STYLE.get(hit.verdict, "")),
                          safe(hit.kind, "dim" if hit.state != "active" else ""),
                          title, safe(_where(hit)),
                          Text(f"{hit.confidence:.2f}"), key=str(i))
        if self.query_one("#search-query", Input).value.strip() or self._hits:
            about = "at least " if results.at_least else "about " if results.estimated else ""
            status = Text(f"{len(self._hits):,} shown of {about}{results.total:,} · {clock.took(results.ms / 1000)}")
            if self._hits:
                status.append(Text(" · " + _answer_summary(results), style=_VERDICT_STYLE.get(self._hits[0].verdict, "")))
            if results.reading is not None and results.reading.summary:
                status.append(Text("\n"))
                status.append(safe(results.reading.summary, "dim"))
            if self._indexing():
                status.append(Text(" · still indexing: more may come", style="yellow"))
            status.append(Text(" · / edits the query", style="dim"))
            for finding in results.findings:
                status.append(Text("\n"))
                status.append(safe(getattr(finding, "message", finding), "yellow"))
            self.query_one("#search-status", Static).update(status)
        self._show_snippet(0)

    def _show_snippet(self, row: int) -> None:
        box = self.query_one("#search-snippet", Static)
        if not (0 <= row < len(self._hits)):
            box.update(Text("No result." if self.results and self.query_one("#search-query", Input).value.strip()
                            else "", style="dim"))
            return
        hit = self._hits[row]
        head = join(safe(hit.title or hit.path, "bold"), Text("  "), safe(_where(hit), "underline"),
                    Text(f"  {hit.kind} · {hit.state}" + (f" · node {hit.node}" if hit.node else ""), style="dim"))
        if hit.snippet is not None:
            head.append(Text(f"\n{hit.snippet.field}: ", style="dim italic"))
            head.append(snippet_text(hit.snippet))
        if hit.why:
            head.append(Text("\nset apart: ", style="yellow"))
            head.append(safe(hit.why))
        head.append(Text("\nEnter: open in its area", style="dim"))
        box.update(head)

    @on(DataTable.RowHighlighted, "#search-results")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if left_behind(event):
            return
        self._show_snippet(event.cursor_row)

    @on(Input.Submitted, "#search-query")
    def _submitted(self) -> None:
        if self._timer is not None:  # Enter before the pause: search now
            self._timer.stop()
            self._start_search()
        self.query_one("#search-results").focus()

    @on(DataTable.RowSelected, "#search-results")
    async def _selected(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self._hits):
            await open_hit(self.app, self._hits[event.cursor_row])

    def action_focus_query(self) -> None:
        self.query_one("#search-query").focus()

    def action_focus_results(self) -> None:
        """Down from the query box: into the results (the table keeps Down for itself)."""
        table = self.query_one("#search-results", DataTable)
        if table.row_count:
            table.focus()

    def action_clear_query(self) -> None:
        """Escape: leave the query box (kept, so the area keys work again), or clear it from
        the results (:func:`memtui.ui.widgets.escape_box`, the rule of every filter box)."""
        escape_box(self, self.query_one("#search-query", Input), self.query_one("#search-results", DataTable),
                   "query")


class SearchCommands(Provider):
    """Command-palette provider: what is typed is searched in the workspace.

    Each of the best :data:`PALETTE_LIMIT` results is offered as "open <title>"; choosing one
    opens it like Enter in the Search area (:func:`open_hit`). A query that cannot be used
    offers nothing (the palette's other commands still match).
    """

    async def search(self, query: str) -> Hits:
        app = self.app
        index = getattr(app, "search_index", None)
        if index is None or len(query.strip()) < 3 or not _searchable(app):
            return
        try:
            results = await asyncio.to_thread(search, index, query, limit=PALETTE_LIMIT, snippets=False)
        except MemtuiError:
            return
        count = len(results.hits)
        for i, hit in enumerate(results.hits):
            label = join(Text("search: ", style="dim"), safe(hit.title or hit.path, "bold"),
                         Text(f"  {hit.kind}", style="dim"))
            yield PaletteHit(1.0 - i / (count + 1), label, partial(open_hit, app, hit),
                             text=f"search: {hit.title or hit.path}", help=_where(hit))
