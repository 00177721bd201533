"""The Audit area: every finding in a sortable, filterable table; Enter jumps to the place."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Header, Input, ProgressBar, Static

from memtui.core.audit import AuditReport
from memtui.core.files import is_inside
from memtui.core.findings import Finding, sort_key
from memtui.ui.widgets import KeyFooter, left_behind
from memtui.ui.widgets import AreaBar, escape_box
from memtui.ui.text import join, safe, severity_text
from memtui.ui.screens.base import AreaScreen

#: Rows drawn at once; DataTable costs ~1.4 s per 10,000 rows (LIBRARY-NOTES), so more are
#: reached by filtering.
MAX_ROWS = 2000

_SORTS = {
    "severity": sort_key,
    "code": lambda f: (f.code, sort_key(f)),
    "place": lambda f: (f.path, f.line or 0, f.severity.rank),
    "message": lambda f: (f.message.casefold(), sort_key(f)),
}


#: Characters of a place the table shows; a longer one keeps its end (the file and the line).
PLACE_WIDTH = 36


def _tail(place: str, width: int = PLACE_WIDTH) -> str:
    """``place`` cut from the left to ``width`` characters with a leading ``…``: the file name
    and the line number are what tell places apart (the detail pane shows the whole place)."""
    return place if len(place) <= width else "…" + place[-(width - 1):]


def matches(finding: Finding, query: str) -> bool:
    """True when ``finding`` passes the filter ``query``.

    The query is words separated by spaces; each must match. ``severity:error`` (or
    ``sev:``), ``code:…`` and ``path:…`` match those fields by prefix/substring; any other word
    matches case-insensitively anywhere in the place, code, message or fix.
    """
    for word in query.casefold().split():
        key, sep, value = word.partition(":")
        if sep and key in ("severity", "sev"):
            if not finding.severity.value.startswith(value):
                return False
        elif sep and key == "code":
            if value not in finding.code:
                return False
        elif sep and key == "path":
            if value not in finding.path.casefold():
                return False
        else:
            haystack = f"{finding.place} {finding.code} {finding.message} {finding.fix}".casefold()
            if word not in haystack:
                return False
    return True


class AuditScreen(AreaScreen):
    """Every finding of the last audit."""

    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", id="audit.focus-filter"),
        Binding("s", "cycle_sort", "Sort", id="audit.cycle-sort"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="audit.clear-filter"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._shown: list[Finding] = []
        self._sort = "severity"
        self._reverse = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        with Horizontal(id="audit-bar"):
            yield Input(placeholder="filter: words, severity:error, code:index, path:support/",
                        id="audit-filter")
            yield Static(id="audit-count")
        yield ProgressBar(total=1, id="audit-progress", show_eta=False)
        yield DataTable(id="findings", cursor_type="row", zebra_stripes=True)
        yield Static(id="finding-detail", classes="pane-head")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#findings", DataTable)
        for name in ("severity", "code", "place", "message"):
            table.add_column(name, key=name)
        self.app.audit_ready.subscribe(self, self._on_audit)
        self.app.audit_progress.subscribe(self, self._on_progress)
        if self.app.report is not None:
            self._on_audit(self.app.report)
        else:
            self.query_one("#audit-count", Static).update(Text("auditing…", style="dim"))
        table.focus()

    def _on_progress(self, progress: tuple[int, int]) -> None:
        done, total = progress
        bar = self.query_one("#audit-progress", ProgressBar)
        bar.display = True
        bar.update(total=total, progress=done)

    def _on_audit(self, report: AuditReport) -> None:
        """A new report: the table is filled again only when a finding changed (after an
        outside write that changed none, only the counts line follows)."""
        self.query_one("#audit-progress", ProgressBar).display = False
        self._refill(rows=getattr(self.app, "findings_changed", None) != set() or not self._filled)

    _filled = False

    def _refill(self, rows: bool = True) -> None:
        report: AuditReport | None = self.app.report
        if report is None:
            return
        query = self.query_one("#audit-filter", Input).value
        found = [f for f in report.findings if matches(f, query)]
        if rows:
            found.sort(key=_SORTS[self._sort], reverse=self._reverse)
            self._shown = found[:MAX_ROWS]
            table = self.query_one("#findings", DataTable)
            table.clear()
            for i, finding in enumerate(self._shown):
                table.add_row(severity_text(finding.severity.value), safe(finding.code), safe(_tail(finding.place)),
                              safe(finding.message), key=str(i))
            self._filled = True
        status = Text(f"{len(found):,} of {len(report.findings):,} shown · {report.summary()}"
                      f" · sorted by {self._sort}{' ↓' if self._reverse else ''}")
        bad = [w for w in query.casefold().split() if w.partition(":")[0] in ("severity", "sev")
               and w.partition(":")[1] and not any(s.startswith(w.partition(":")[2]) for s in ("error", "warning", "info"))]
        if bad:
            status.append(Text(f" · unknown {bad[0]!r}: use severity:error, warning or info", style="yellow"))
        if len(found) > MAX_ROWS:
            status.append(Text(f" · showing the first {MAX_ROWS}: filter to narrow", style="yellow"))
        self.query_one("#audit-count", Static).update(status)
        if rows:
            self._show_detail(0)

    def _show_detail(self, row: int) -> None:
        detail = self.query_one("#finding-detail", Static)
        if not (0 <= row < len(self._shown)):
            detail.update(Text("No finding matches." if self.app.report else "", style="dim"))
            return
        f = self._shown[row]
        text = join(severity_text(f.severity.value), Text(" "), safe(f.code, "bold"), Text("  "),
                    safe(f.place, "underline"), Text("\n"), safe(f.message))
        if f.fix:
            text.append(Text("\nfix: ", style="bold"))
            text.append(safe(f.fix))
        text.append(Text("\nEnter: go to the place", style="dim"))
        detail.update(text)

    @on(Input.Changed, "#audit-filter")
    def _filter_changed(self) -> None:
        self._refill()

    @on(Input.Submitted, "#audit-filter")
    def _filter_submitted(self) -> None:
        self.query_one("#findings").focus()

    @on(DataTable.RowHighlighted, "#findings")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if left_behind(event):
            return
        self._show_detail(event.cursor_row)

    @on(DataTable.HeaderSelected, "#findings")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        if key == self._sort:
            self._reverse = not self._reverse
        else:
            self._sort, self._reverse = key, False
        self._refill()

    def action_cycle_sort(self) -> None:
        names = list(_SORTS)
        self._sort = names[(names.index(self._sort) + 1) % len(names)]
        self._reverse = False
        self._refill()

    def action_focus_filter(self) -> None:
        self.query_one("#audit-filter").focus()

    def action_clear_filter(self) -> None:
        """Escape: leave the filter box (kept), or clear it from the table (:func:`escape_box`)."""
        escape_box(self, self.query_one("#audit-filter", Input), self.query_one("#findings"))

    @on(DataTable.RowSelected, "#findings")
    async def _selected(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self._shown):
            await open_finding(self.app, self._shown[event.cursor_row])


def area_of(ws, finding: Finding) -> str:  # noqa: ANN001 - Workspace
    """The area that shows ``finding``'s place: ``"graph"`` (the graph file, the remote graph
    (placed at its URL), ``graph-*`` codes), ``"skills"`` (a file under a skill root, ``skill-*``
    codes), ``"sessions"`` (a session history), else ``"tree"``."""
    path = finding.path
    if finding.code.startswith("graph-") or path == ws.shown(ws.graph_file) or "://" in path:
        return "graph"
    if finding.code.startswith("skill-"):
        return "skills"
    try:
        absolute = ws.root / path
        if any(is_inside(root, absolute) for root in ws.skill_roots.values()):
            return "skills"
    except (OSError, ValueError):
        pass
    if finding.code.startswith("session-") and path.endswith(".jsonl"):
        return "sessions"
    return "tree"


async def open_finding(app, finding: Finding) -> bool:  # noqa: ANN001 - the MemtuiApp
    """Go to ``finding``'s place in the area that shows it (:func:`area_of`): the Graph area at
    the entity or relation of its line, the Skills area at its skill, the Sessions area at its
    turn, the Tree at its node and article, scrolled to its line. Returns ``False`` (with a
    notice) when no area shows the place."""
    area = area_of(app.ws, finding)
    if area == "graph":
        await app.switch_mode("graph")
        if finding.line:
            app.screen.reveal_line(finding.line)
        return True
    if area == "skills":
        await app.switch_mode("skills")
        app.screen.reveal(finding.path)
        return True
    if area == "sessions":
        await app.switch_mode("sessions")
        app.screen.reveal(finding.path.rsplit("/", 1)[-1].removesuffix(".jsonl"), finding.line)
        return True
    node, article = app.tree_model.place(finding.path)
    if node is None:
        app.notify(f"{finding.path} is not shown by an area of memtui; open it in your editor.", markup=False)
        return False
    await app.switch_mode("tree")
    app.screen.reveal(node, article, finding.line)
    return True
