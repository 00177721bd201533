"""The Sessions area (key 9): the agents' session histories, read as turns (seed 002).

The left table lists every history (``sessions/durable/<key>.jsonl``) with its turns, size,
first and last time and problems; the middle list shows the chosen history as turns — role,
time and the first line of the text, tool calls and results folded to one line; the pane
below shows the highlighted turn whole: its text, its tool calls and results, the graph facts
and proposals that cite it, and the findings on it (a malformed line, a rewrite, a claimed
graph write the graph lacks). ``o`` shows the turn's JSON as written instead (``j``/``k`` move); ``m`` records
what memtui sees now as "last seen" (the append-only check, an audited write); ``H`` shows the
harvest of the history's case (learned, reused, missing; nothing proposed).

From the Graph area, ``h`` on an observation with provenance opens its turn here
(:meth:`SessionsScreen.reveal`). Reading happens in worker threads; user text is never markup.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Header, OptionList, Static
from textual.widgets.option_list import Option

from memtui.core import harvest
from memtui.core import sessions as core
from memtui.core.errors import MemtuiError
from memtui.core.findings import Finding, Severity
from memtui.core.text import clip
from memtui.ui.text import as_data, join, safe, severity_text
from memtui.ui.widgets import KeyFooter, left_behind
from memtui.ui.widgets import AreaBar
from memtui.ui.screens.base import AreaScreen
from memtui.ui.screens.harvest_report import show_harvest

#: Turns listed at once; a longer history is paged with [ and ].
PAGE = 1000
_ROLE_STYLE = {"user": "bold cyan", "assistant": "bold green", "tool": "magenta", "system": "dim"}


def turn_label(turn: core.Turn, width: int = 90, marked: bool = False) -> Text:
    """One line for a turn: ``[line] role · time · first line`` (tool calls folded)."""
    head = Text(f"{turn.line:>4} ", style="dim", no_wrap=True, overflow="ellipsis")
    if marked:
        head.append(Text("▲ ", style="yellow"))
    head.append(safe(turn.role, _ROLE_STYLE.get(turn.role, "bold")))
    if turn.time:
        head.append(safe(f" {turn.time[11:19] if len(turn.time) >= 19 else turn.time}", "dim"))
    head.append(Text("  "))
    if turn.role == "tool" and turn.tools:
        call = turn.tools[0]
        head.append(Text("▸ ", style="magenta"))
        name = clip(call.name or "result", 40)
        rest = call.text[len(call.name):] if call.name and call.text.startswith(call.name) else call.text
        head.append(safe(name, "magenta"))
        head.append(safe(clip(rest, max(8, width - len(name) - 3)), "dim"))
        return head
    head.append(safe(clip(turn.text, width)))
    for call in turn.tools:
        head.append(Text("  ▸ ", style="magenta"))
        head.append(safe(clip(call.name or "call", 30), "magenta"))
    return head


class SessionsScreen(AreaScreen):
    """Every session history, and one of them as turns."""

    DEFAULT_CSS = """
    SessionsScreen #sessions-main { height: 1fr; }
    SessionsScreen #histories { width: 34; }
    SessionsScreen #turns-side { width: 1fr; }
    SessionsScreen #turns { height: 1fr; }
    SessionsScreen #turn-scroll { height: 12; border-top: solid $primary; }
    SessionsScreen #sessions-status { height: 1; }
    """

    BINDINGS = [
        Binding("o", "toggle_raw", "JSON", tooltip="show the turn's JSON as written, or the turn again",
                id="sessions.toggle-raw"),
        Binding("m", "mark_seen", "Mark seen", id="sessions.mark-seen"),
        Binding("H", "harvest", "Harvest", key_display="H",
                tooltip="what the history's case learned, reused and missed (nothing is proposed)",
                id="sessions.harvest"),
        Binding("right_square_bracket", "page(1)", "Next page", show=False, id="sessions.next-page"),
        Binding("left_square_bracket", "page(-1)", "Previous page", show=False, id="sessions.previous-page"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._histories: list[core.History] = []
        self._history: core.History | None = None
        self._findings: dict[str, list[Finding]] = {}
        self._page = 0
        self._raw = False
        self._pending: tuple[str, int | None] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        yield Static(id="sessions-status")
        with Horizontal(id="sessions-main"):
            yield DataTable(id="histories", cursor_type="row", zebra_stripes=True)
            with Vertical(id="turns-side"):
                yield OptionList(id="turns")
                with VerticalScroll(id="turn-scroll"):
                    yield Static(id="turn-detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#histories", DataTable)
        for name in ("key", "turns", "day"):
            table.add_column(name, key=name)
        self.query_one("#sessions-status", Static).update(Text("reading the session histories…", style="dim"))
        if hasattr(self.app, "workspace_changed"):  # the TUI follows the workspace (its watcher)
            self.app.workspace_changed.subscribe(self, self._on_changes)
        self.load()

    def _on_changes(self, changes) -> None:  # noqa: ANN001 - memtui.core.watch.Changes
        """A history grew (an agent is writing), or the store changed (last seen, provenance):
        read them again, keeping the open history and turn."""
        if changes.topics & {"sessions", "store", "graph"}:
            if self._history is not None:
                turn = self._turn(self.query_one("#turns", OptionList).highlighted)
                self._pending = (self._history.key, turn.line if turn else None)
            self.load()

    # -- loading --------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="sessions-load")
    def load(self) -> None:
        """Read every history and its findings (malformed lines, rewrites, claims) in a thread."""
        ws = self.app.ws
        histories = core.histories(ws)
        try:
            found = core.audit_findings(ws)
        except (MemtuiError, OSError):
            found = []
        by_path: dict[str, list[Finding]] = {}
        for finding in found:
            by_path.setdefault(finding.path, []).append(finding)
        self.from_worker(self._loaded, histories, by_path)

    def _loaded(self, histories: list[core.History], findings: dict[str, list[Finding]]) -> None:
        self._histories = histories
        if self._pending is None and self._history is not None:
            self._history = next((h for h in histories if h.key == self._history.key), None)
        self._findings = findings
        table = self.query_one("#histories", DataTable)
        table.clear()
        for i, h in enumerate(histories):
            problems = findings.get(h.path, [])
            key = safe(h.key, "bold red" if any(f.severity is Severity.ERROR for f in problems)
                       else "yellow" if problems else "")
            table.add_row(key, Text(f"{len(h.turns):,}"), safe((h.last or "")[5:10]), key=str(i))
        errors = sum(1 for fs in findings.values() for f in fs if f.severity is Severity.ERROR)
        status = Text(f"{len(histories)} session histories in {core.FOLDER}/", style="bold")
        if errors:
            status.append(Text(f" · {errors} error{'s' if errors != 1 else ''} (rewritten histories)", style="bold red"))
        status.append(Text("  ·  Enter: open · o: JSON · m: mark seen", style="dim"))
        if self.app.session.read_only:
            status.append(Text("  · READ-ONLY", style="bold yellow"))
        self.query_one("#sessions-status", Static).update(status)
        if not histories:
            self.query_one("#turn-detail", Static).update(Text(
                f"No session histories: the harness keeps them in {core.FOLDER}/<session-key>.jsonl.", style="dim"))
            return
        pending, self._pending = self._pending, None
        if pending is not None:
            self._open(pending[0], pending[1])
        elif self._history is None:
            self._open(histories[0].key, None)
        table.focus()

    # -- showing a history ----------------------------------------------------------------------
    def reveal(self, key: str, line: int | None = None) -> None:
        """Open history ``key`` at turn ``line`` (from the Graph area's ``h``)."""
        if not self._histories:
            self._pending = (key, line)
            return
        self._open(key, line)

    def _open(self, key: str, line: int | None) -> None:
        index = next((i for i, h in enumerate(self._histories) if h.key == key), None)
        if index is None:
            self.notify(f"there is no session history {key}", severity="warning", markup=False)
            return
        self._history = self._histories[index]
        table = self.query_one("#histories", DataTable)
        if table.cursor_row != index:
            table.move_cursor(row=index)
        turns = self._history.turns
        at = next((i for i, t in enumerate(turns) if line is not None and t.line >= line), 0)
        self._page = at // PAGE
        self._fill(at - self._page * PAGE)
        if line is not None:
            self.query_one("#turns", OptionList).focus()

    def _fill(self, highlight: int = 0) -> None:
        history = self._history
        listing = self.query_one("#turns", OptionList)
        listing.clear_options()
        if history is None:
            return
        marked = {f.line for f in self._findings.get(history.path, []) if f.line}
        start = self._page * PAGE
        turns = history.turns[start:start + PAGE]
        room = max(20, (listing.size.width or 80) - 4)  # one line a turn: cut to fit

        def label(turn: core.Turn) -> Text:
            text = turn_label(turn, room, marked=turn.line in marked)
            text.truncate(room, overflow="ellipsis")
            return text

        listing.add_options([Option(label(t), id=str(t.line)) for t in turns])
        if len(history.turns) > PAGE:
            self.notify(f"turns {start + 1:,}–{start + len(turns):,} of {len(history.turns):,} ([ and ] page)",
                        markup=False)
        if turns:
            listing.highlighted = max(0, min(highlight, len(turns) - 1))
            self._show_turn(turns[listing.highlighted])

    def on_resize(self) -> None:
        if self._history is not None:
            self._fill(self.query_one("#turns", OptionList).highlighted or 0)

    @on(DataTable.RowHighlighted, "#histories")
    def _history_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if left_behind(event):
            return
        if 0 <= event.cursor_row < len(self._histories):
            chosen = self._histories[event.cursor_row]
            if self._history is None or chosen.key != self._history.key:
                self._history = chosen
                self._page = 0
                self._fill()

    @on(DataTable.RowSelected, "#histories")
    def _history_selected(self) -> None:
        self.query_one("#turns", OptionList).focus()

    @on(OptionList.OptionHighlighted, "#turns")
    def _turn_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        turn = self._turn(event.option_index)
        if turn is not None:
            self._show_turn(turn)

    def _turn(self, index: int | None) -> core.Turn | None:
        if self._history is None or index is None:
            return None
        position = self._page * PAGE + index
        turns = self._history.turns
        return turns[position] if 0 <= position < len(turns) else None

    def _show_turn(self, turn: core.Turn) -> None:
        history = self._history
        assert history is not None
        detail = self.query_one("#turn-detail", Static)
        text = join(safe(history.key, "bold"), Text(f"  line {turn.line}  "),
                    safe(turn.role, _ROLE_STYLE.get(turn.role, "bold")))
        if turn.time:
            text.append(safe(f"  {turn.time}", "dim"))
        text.append(safe(f"  ({len(history.turns):,} turns, {history.size:,} bytes, {history.first or '?'} .. "
                         f"{history.last or '?'})", "dim"))
        text.append(Text("\n"))
        for finding in self._findings.get(history.path, []):
            if finding.line == turn.line:
                text.append(join(severity_text(finding.severity.value), Text(" "), safe(finding.message), Text("\n")))
        if self._raw:
            text.append(safe(turn.source))
            detail.update(text)
            return
        if turn.text and not (turn.role == "tool" and any(c.text == turn.text for c in turn.tools)):
            text.append(Text(as_data(turn.text)))  # plain Text (never markup), controls made visible
            text.append(Text("\n"))
        for call in turn.tools:
            text.append(Text(f"▸ {'result' if call.result else 'call'} ", style="magenta"))
            text.append(safe(call.name or "?", "magenta"))
            text.append(Text("\n"))
            text.append(Text(as_data(call.text)))
            text.append(Text("\n"))
        cited = core.citing(self.app.session.store, history.key, turn.line)
        if cited:
            text.append(Text("cited by:\n", style="bold"))
            for item in cited:
                if item["kind"] == "observation":
                    text.append(join(Text("  graph: "), safe(item["entity"], "bold"), Text(" — "),
                                     safe(clip(str(item["observation"]), 80)), Text("\n")))
                else:
                    text.append(join(Text("  proposal: "), safe(item["version"], "bold"),
                                     Text(f" ({item['state']})\n", style="dim")))
        detail.update(text)

    # -- actions ---------------------------------------------------------------------------------
    def action_toggle_raw(self) -> None:
        self._raw = not self._raw
        turn = self._turn(self.query_one("#turns", OptionList).highlighted)
        if turn is not None:
            self._show_turn(turn)

    def action_page(self, step: int) -> None:
        if self._history is None:
            return
        pages = max(1, -(-len(self._history.turns) // PAGE))
        page = min(max(0, self._page + step), pages - 1)
        if page != self._page:
            self._page = page
            self._fill()

    def action_harvest(self) -> None:
        """The harvest of the open history's case (:func:`memtui.core.harvest.case_of`), a dry run."""
        if self._history is None:
            self.notify("no session history selected", markup=False)
            return
        show_harvest(self, harvest.case_of(self._history))

    def action_mark_seen(self) -> None:
        session = self.app.session
        if session.read_only:
            self.notify(session.reason or "read-only", title="Read-only", severity="warning", markup=False)
            return
        self.mark_seen()

    def mark_seen(self) -> None:
        """Record what memtui sees of every history as "last seen" (audited), in a worker."""
        session = self.app.session

        def recorded(done) -> None:  # noqa: ANN001 - Written
            names = (done.result or {}).get("recorded", [])
            self.notify(f"recorded {len(names)} histor{'y' if len(names) == 1 else 'ies'} as seen"
                        if names else "nothing new to record", markup=False)
            self.load()

        self.run_core(lambda: core.record(session), recorded, group="sessions-mark", title="Not recorded")
