"""The Graph area: entities table (windowed), entity detail, neighbourhood, findings (issue 4).

The graph loads and is audited in a worker thread. The entity table shows one page of
:data:`PAGE` rows of the filtered, sorted list ("1–500 of 50,000"; ``[``/``]`` page), because
a DataTable costs ~1.4 s per 10,000 rows (LIBRARY-NOTES; B23). The neighbourhood tree is
built lazily on expand, children capped at :data:`MAX_CHILDREN`; an entity with findings is
marked there (``⚠ n``) as in the table. Observations are a list (a long one cut, ``v``
shows all of it) showing each one's provenance (which session, when;
:mod:`memtui.core.graph.provenance`); ``h`` opens that turn in the Sessions area. Every user
string goes through
:func:`memtui.ui.text.safe` (B17: never markup).

Curating (seed 002; issue 4): add / edit / delete an observation, rename, merge, retype a
type across its variants, relate, unrelate, delete an entity. Each is tried on the loaded
graph first, then confirmed with its summary, then saved in a worker thread through
:func:`memtui.core.graph.commit` with the app's writer session (``app.session``: the lock,
the audit log, provenance); ``n`` creates an entity; ``u`` undoes the last action and ``U``
redoes it, through a history of :data:`UNDO_DEPTH` steps (an editor's undo: each step is
undone only while the file still holds what that step wrote). A read-only session shows a
``READ-ONLY`` badge and refuses with the holder sentence before asking anything.

The graph is the local file or the member's remote graph over MCP (issue 16;
:func:`memtui.core.graph.backend.open_graph`), browsed and curated the same way. A remote that
cannot be reached shows its sentence here; what was last read stays visible, labelled
``offline, as of HH:MM``, and an empty table is never shown as if it were the graph. ``F5``
reads the graph again.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Header, Input, OptionList, Static, Tree
from textual.widgets.option_list import Option
from textual.widgets.tree import TreeNode

from memtui.core import graph as g
from memtui.core.text import plural
from memtui.core.errors import MemtuiError, ReadOnlyError
from memtui.core.findings import Finding, Severity
from memtui.core.graph.audit import audit
from memtui.core.graph.backend import LocalGraph
from memtui.core.graph.remote import RemoteGraph
from memtui.core.graph.provenance import Provenance, ProvenanceBook, find_in_sessions, session_position
from memtui.ui.widgets import KeyFooter
from memtui.ui.widgets import AreaBar, AskText, Confirm, ValueViewer, escape_box
from memtui.ui.text import as_data, for_tui, join, safe, severity_text
from memtui.ui.screens.base import AreaScreen

#: Rows of the entity table drawn at once.
PAGE = 500
#: Observations / relations listed in the detail pane before "… N more".
MAX_LISTED = 200
#: Children of one neighbourhood tree node before "… N more".
MAX_CHILDREN = 200
#: Characters of an observation shown in the list; ``v`` shows all of it (issue 15 item 8).
OBSERVATION_SHOWN = 600
#: Steps of the undo history.
UNDO_DEPTH = 50
#: Graphs with more entities skip the fuzzy near-duplicate search when re-audited after an edit.
NEAR_AFTER_EDIT = 20_000

_MARK_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}

_SORTS = {
    "name": lambda r: r[0].name.casefold(),
    "type": lambda r: (r[0].entity_type.casefold(), r[0].name.casefold()),
    "observations": lambda r: (-len(r[0].observations), r[0].name.casefold()),
    "relations": lambda r: (-r[1], r[0].name.casefold()),
}


class GraphScreen(AreaScreen):
    """Browse, audit and curate ``memory/graph.jsonl`` (see the module docstring)."""

    DEFAULT_CSS = """
    GraphScreen #graph-bar { height: 3; }
    GraphScreen #graph-filter { width: 1fr; }
    GraphScreen #graph-count { width: 2fr; padding: 1 1 0 1; }
    GraphScreen #entities { width: 1fr; }
    GraphScreen #graph-side { width: 1fr; }
    GraphScreen #entity-scroll { height: 1fr; }
    GraphScreen #observations { height: 1fr; }
    GraphScreen #neighbourhood { height: 1fr; border-top: solid $primary; }
    """

    #: in order of importance: the footer shows the first that fit, ? lists them all
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", id="graph.filter"),
        Binding("n", "create", "New entity", id="graph.create"),
        Binding("a", "add_observation", "Add obs.", tooltip="Add an observation to the entity", id="graph.add-observation"),
        Binding("e", "edit_observation", "Edit obs.", tooltip="Edit the highlighted observation",
                id="graph.edit-observation"),
        Binding("x", "delete_observation", "Delete obs.", tooltip="Delete the highlighted observation",
                id="graph.delete-observation"),
        Binding("r", "rename", "Rename", id="graph.rename"),
        Binding("m", "merge", "Merge", tooltip="Merge another entity into this one", id="graph.merge"),
        Binding("l", "relate", "Relate", tooltip="Create a relation from this entity", id="graph.relate"),
        Binding("L", "unrelate", "Unrelate", key_display="L",
                tooltip="Delete the relation chosen in the neighbourhood tree", id="graph.unrelate"),
        Binding("t", "retype", "Retype", tooltip="Set the entityType of every entity of this type",
                id="graph.retype"),
        Binding("d", "delete", "Delete", tooltip="Delete the entity and its relations", id="graph.delete"),
        Binding("D", "delete_record", "Delete record", key_display="D",
                tooltip="Delete the selected record of a name written several times", id="graph.delete-record"),
        Binding("v", "show_all", "Show all", tooltip="Show the whole highlighted observation", id="graph.show-all"),
        Binding("u", "undo", "Undo", id="graph.undo"),
        Binding("U", "redo", "Redo", key_display="U", id="graph.redo"),
        Binding("s", "cycle_sort", "Sort", id="graph.sort"),
        Binding("h", "history", "Session", tooltip="Open the session history the observation came from",
                id="graph.history"),
        Binding("right_square_bracket", "page(1)", "Next page", id="graph.next-page"),
        Binding("left_square_bracket", "page(-1)", "Previous page", id="graph.previous-page"),
        Binding("f5", "reload", "Reload", tooltip="Read the graph again", id="graph.reload"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="graph.clear-filter"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.graph: g.Graph | None = None
        self.findings: list[Finding] = []
        self._by_line: dict[int, list[Finding]] = defaultdict(list)
        #: worst severity and count of findings per entity name (marks in table and tree)
        self._flags: dict[str, tuple[Severity, int]] = {}
        self._degree: dict[str, int] = {}
        self._out: dict[str, list[g.Relation]] = defaultdict(list)
        self._in: dict[str, list[g.Relation]] = defaultdict(list)
        self._rows: list[tuple[g.Entity, int]] = []
        self._page = 0
        self._sort = "name"
        self._current: str | None = None
        #: the line of the record selected in the table when its name is written several times
        #: (edits go to that record: issue 15 item 10), else ``None``
        self._record_line: int | None = None
        #: provenance of the graph's observations, ``{entity: {observation: [Provenance]}}``
        self._provenance: dict[str, dict[str, list[Provenance]]] = {}
        #: the observations listed, by option index: ``(entity, text)``
        self._observations: list[tuple[str, str]] = []
        #: the undo history, newest last: ``(graph before, sha written, summary, provenance undo, operation)``
        self._undo: list[tuple[g.Graph, str, str, tuple, g.Operation]] = []
        #: undone actions, newest last: ``(operation, sha the undo wrote, summary)``
        self._redo: list[tuple[g.Operation, str, str]] = []
        #: what the save in flight is: "do" (a new action), "undo" or "redo"
        self._doing = "do"
        #: True while a save runs in its worker (a second action waits for it)
        self.saving = False
        #: the graph's backend (local file or remote server), opened in the load worker
        self.backend: LocalGraph | RemoteGraph | None = None
        #: redraws "reading the remote… N s" while a live read runs
        self._tick: Timer | None = None
        #: when the shown graph was read (``time.time()``), and why the remote is offline ("" when not)
        self.read_at: float | None = None
        self.offline = ""
        #: the remote's snapshot shown until the live read replaces it (None: what is shown is live)
        self.cached = None
        #: when the running remote read started (``time.monotonic()``), and the bytes it has received
        self._reading_since: float | None = None
        self._received = 0
        #: the file line a jump (an audit finding) asked for before the graph was read
        self._wanted_line: int | None = None
        #: the count line of the snapshot's listing (shown before its records are read)
        self._listing = Text("")

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        with Horizontal(id="graph-bar"):
            yield Input(placeholder="filter: words in names, type:Person", id="graph-filter")
            yield Static(id="graph-count")
        with Horizontal(id="graph-main"):
            yield DataTable(id="entities", cursor_type="row", zebra_stripes=True)
            with Vertical(id="graph-side"):
                with VerticalScroll(id="entity-scroll"):
                    yield Static(id="entity-detail")
                yield OptionList(id="observations")
                yield Tree(Text("neighbourhood"), id="neighbourhood")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._make_columns()
        table = self.query_one("#entities", DataTable)
        self.query_one("#observations", OptionList).border_title = "observations (provenance)"
        self._status(Text("loading the graph…", style="dim"))
        table.focus()
        if hasattr(self.app, "workspace_changed"):
            self.app.workspace_changed.subscribe(self, self._on_changes)
        self.load_graph()

    def _on_changes(self, changes) -> None:  # noqa: ANN001 - memtui.core.watch.Changes
        """The graph file changed (an agent, the MCP server, the CLI): read it again unless it
        holds what this screen already shows (its own save). An edit confirmed later is still
        checked against the file (``commit`` re-applies it or reports the conflict)."""
        if "graph" not in changes.topics or self.graph is None:
            return
        import hashlib

        try:
            current = hashlib.sha256(self.app.ws.graph_file.read_bytes()).hexdigest()
        except OSError:
            current = ""
        if current != self.graph.source_sha256:
            self.load_graph()

    @property
    def session(self):
        """The app's writer session (``app.session``)."""
        return self.app.session

    def _status(self, text: Text) -> None:
        """Show ``text`` in the count line, after a ``READ-ONLY`` badge when writes are refused."""
        widget = self.query_one("#graph-count", Static)
        if self.session.read_only:
            text = join(Text(" READ-ONLY ", style="bold reverse"), Text(" "), text)
            widget.tooltip = self.session.reason
        widget.update(text)

    # -- loading (worker thread) ------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="graph-load")
    def load_graph(self) -> None:
        """Read the graph (and audit it) in this worker. A remote graph first shows its snapshot,
        the last read kept in the user cache (:mod:`memtui.core.graph.snapshot`): the listing at
        once, then its records, labelled "as of HH:MM, reading the remote…"; the live read
        replaces it and is kept as the next snapshot."""
        from memtui.core.graph import snapshot
        from memtui.core.graph.backend import open_graph
        from memtui.core.mcp.client import throttled

        ws = self.app.ws
        try:
            if self.backend is None:
                self.backend = open_graph(ws, getattr(self.app, "graph_remote", None))
            backend = self.backend
            if backend.kind == "remote":
                self.app.call_from_thread(self._reading, 0)
                if self.graph is None:
                    self._show_snapshot(snapshot.find(ws.root, backend.shown))

                def progress(count: int) -> None:
                    self.app.call_from_thread(self._reading, count)

                graph = backend.load(progress=throttled(progress))  # call_from_thread waits on the UI
            else:
                graph = backend.load()
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a crash
            where = self.backend.shown if self.backend is not None else ws.shown(ws.graph_file)
            message = str(exc) if isinstance(exc, MemtuiError) else f"cannot read {where}: {exc}"
            self.app.call_from_thread(self._failed, message)
            return
        findings = audit(graph)
        provenance = self._read_provenance()
        read_at = getattr(backend, "read_at", None) or time.time()
        self.app.call_from_thread(self._read, graph, findings, provenance, read_at)
        if isinstance(backend, RemoteGraph):
            snapshot.save(ws.root, backend.shown, graph, read_at, backend.read_via)

    def _show_snapshot(self, found) -> None:  # noqa: ANN001 - Snapshot | None; in the load worker
        """Show ``found`` while the live read runs: its listing's first page, then its records."""
        from memtui.core.graph import snapshot

        if found is None:
            return
        try:
            rows = found.rows()
            self.app.call_from_thread(self._cached_rows, found, rows)
            graph = found.graph()
        except snapshot.SnapshotError:
            return
        self.app.call_from_thread(self._cached_graph, found, graph)

    def _cached_rows(self, found, rows: list) -> None:  # noqa: ANN001 - Snapshot
        """The snapshot's first page (by name), before its records are read: names and counts."""
        if self.graph is not None:
            return
        self.cached, self.read_at = found, found.read_at
        self._listed_counts = (max((r.observations for r in rows), default=0),
                               max((r.relations for r in rows), default=0))
        self._fit_columns()
        table = self.query_one("#entities", DataTable)
        table.clear()
        rows = sorted(rows, key=lambda r: r.name.casefold())
        for i, row in enumerate(rows[:PAGE]):
            table.add_row(safe(row.name), safe(row.entity_type), Text(f"{row.observations:,}", justify="right"),
                          Text(f"{row.relations:,}", justify="right"), key=str(i))
        self._listing = Text(f"1–{min(PAGE, len(rows)):,} of {len(rows):,} entities · sorted by name")
        self._draw_status(self._listing)
        self.query_one("#entity-detail", Static).update(Text("reading the kept records…", style="dim"))

    def _cached_graph(self, found, graph: g.Graph) -> None:  # noqa: ANN001 - Snapshot
        """The snapshot's records: browsable (not audited) until the live read replaces them."""
        if self.graph is not None and self.cached is None:
            return  # the live read came first
        self.cached, self.read_at = found, found.read_at
        self._loaded(graph, [])

    def _reading(self, count: int) -> None:
        """A remote read runs (``count`` bytes so far): say so in the count line, with the time."""
        if self._reading_since is None:
            self._reading_since = time.monotonic()
            self._tick = self.set_interval(1.0, self._redraw_reading)
        self._received = count
        self._redraw_reading()

    def _redraw_reading(self) -> None:
        if self._reading_since is None:
            return
        if self.graph is not None:
            self._draw_status()
        elif self.cached is not None:  # the snapshot's listing, before its records
            self._draw_status(self._listing)
        else:
            self._status(join(Text(self._reading_text(), style="dim")))

    def _reading_text(self) -> str:
        backend = self.backend
        where = f" · {backend.shown}" if backend is not None and not self.cached else ""  # last: it may not fit
        seconds = time.monotonic() - (self._reading_since or time.monotonic())
        got = f", {self._received / 1e6:,.1f} MB" if self._received >= 100_000 else ""
        if not self._received and seconds >= 3:  # a gateway may send a big answer only once it is whole
            got = ", nothing received yet"
        return f"reading the remote… {seconds:.0f} s{got}{where}"

    def _read_done(self) -> None:
        self._reading_since = None
        tick = getattr(self, "_tick", None)
        if tick is not None:
            tick.stop()
            self._tick = None

    def _read(self, graph: g.Graph, findings: list[Finding], provenance: dict, read_at: float | None = None) -> None:
        self._read_done()
        self.read_at, self.offline, self.cached = read_at or time.time(), "", None
        self._loaded(graph, findings, provenance)

    def action_reload(self) -> None:
        """Read the graph again (after an agent wrote, or when the remote is back)."""
        self._status(Text("reading the graph again…", style="dim"))
        self.load_graph()

    def on_unmount(self) -> None:
        if self.backend is not None:
            try:
                self.backend.close()  # a remote session ends with DELETE
            except Exception:  # noqa: BLE001 - leaving the screen never fails
                pass

    def _read_provenance(self) -> dict[str, dict[str, list[Provenance]]]:
        try:
            return ProvenanceBook(self.session.store).grouped()
        except Exception:  # noqa: BLE001 - a damaged store shows no provenance, never a crash
            return {}

    def _failed(self, message: str, notify: bool = True) -> None:
        """The graph could not be read: say why, and never show an empty table as the graph."""
        self._read_done()
        self.offline = message
        if self.graph is not None:
            self._draw_page()  # what was last read stays, labelled offline
            if notify:
                self.notify(message, title="Graph offline", severity="error", markup=False, timeout=12)
            return
        self._status(Text(as_data(message), style="red"))
        self.query_one("#entities", DataTable).clear()
        self.query_one("#entity-detail", Static).update(join(
            Text("No graph is shown, because it could not be read:\n\n", style="bold"), Text(as_data(message), style="red"),
            Text("\n\nF5 tries again.", style="dim")))

    def _loaded(self, graph: g.Graph, findings: list[Finding],
                provenance: dict[str, dict[str, list[Provenance]]] | None = None) -> None:
        self.graph = graph
        self.findings = findings
        if provenance is not None:
            self._provenance = provenance
        self._by_line = defaultdict(list)
        self._flags = {}
        for finding in findings:
            if finding.line is not None:
                self._by_line[finding.line].append(finding)
                if 0 < finding.line <= len(graph.lines):
                    record = graph.lines[finding.line - 1].record
                    if isinstance(record, g.Entity):
                        worst, count = self._flags.get(record.name, (finding.severity, 0))
                        if finding.severity.rank < worst.rank:
                            worst = finding.severity
                        self._flags[record.name] = (worst, count + 1)
        self._out, self._in, self._degree = defaultdict(list), defaultdict(list), {}
        for relation in graph.relations:
            self._out[relation.source].append(relation)
            self._in[relation.target].append(relation)
            self._degree[relation.source] = self._degree.get(relation.source, 0) + 1
            if relation.target != relation.source:
                self._degree[relation.target] = self._degree.get(relation.target, 0) + 1
        self._fit_columns()  # the counts' columns are as wide as the largest count
        self._refill(keep_page=True)
        if self._wanted_line is not None and self.cached is None:  # the live graph: its lines are the file's
            line, self._wanted_line = self._wanted_line, None
            self.reveal_line(line)

    # -- jumps from other areas -------------------------------------------------------------
    def reveal_line(self, line: int) -> None:
        """Show the record at file ``line`` (1-based; an audit finding's place): an entity is
        selected in the table (that record when its name is written several times); a relation
        selects the entity at one end, its source when that is an entity, with the relation
        highlighted in the neighbourhood tree. A line that is neither (a line that is not JSON)
        is said in a notice. Before the graph is read, the jump waits for it."""
        if self.graph is None or self.cached is not None:
            self._wanted_line = line
            return
        graph = self.graph
        record = graph.lines[line - 1].record if 0 < line <= len(graph.lines) else None
        if isinstance(record, g.Entity):
            self._select(record.name, record.line)
            self.query_one("#entities", DataTable).focus()
            return
        if isinstance(record, g.Relation):
            end = next((n for n in (record.source, record.target) if graph.find(n)), None)
            if end is None:
                self.notify(f"line {line} is the relation {record.source} —{record.relation_type}→ "
                            f"{record.target}; neither end is an entity", severity="warning", markup=False)
                return
            self._select(end, None)
            tree = self.query_one("#neighbourhood", Tree)
            node = next((n for n in tree.root.children if n.data and n.data[2] is not None
                         and n.data[2].line == record.line), None)
            if node is not None:  # once the tree has laid out its new lines
                self.call_after_refresh(tree.move_cursor, node)
            tree.focus()
            return
        said = "; ".join(f.message for f in self._by_line.get(line, [])) or "it holds no entity or relation"
        self.notify(f"line {line} of {graph.shown} is not an entity or a relation: {said}",
                    severity="warning", markup=False, timeout=8)

    def _select(self, name: str, line: int | None) -> None:
        """Select entity ``name`` (its record at ``line``) in the table, on its page; the filter
        is cleared when it hides the entity."""
        box = self.query_one("#graph-filter", Input)
        if box.value and not any(e.name == name for e, _ in self._rows):
            with self.prevent(Input.Changed):
                box.value = ""
            self._rows = self._matching()
        index = next((i for i, (e, _) in enumerate(self._rows) if e.name == name and (line is None or e.line == line)),
                     None)
        several = line is not None and self.graph is not None and len(self.graph.find(name)) > 1
        self._current, self._record_line = name, line if several else None
        if index is not None:
            self._page = index // PAGE
        self._draw_page()

    # -- the table ------------------------------------------------------------------------------
    def _count_widths(self) -> tuple[int, int]:
        """Widths of the two count columns: the largest count of the whole graph written with
        thousands separators (a column of 4 showed 20,000 observations as ``2000``), at least
        the header's 4."""
        if self.graph is None:  # the kept snapshot's listing, when one is shown
            most_obs, most_rel = getattr(self, "_listed_counts", (0, 0))
        else:
            most_obs = max((len(e.observations) for e in self.graph.entities), default=0)
            most_rel = max(self._degree.values(), default=0)
        return max(4, len(f"{most_obs:,}")), max(4, len(f"{most_rel:,}"))

    def _widths(self) -> tuple[int, int, int, int]:
        """Name, type, observation-count and relation-count column widths that fit the table
        now (issue 19 item 5: at 80 columns the name column took the whole table and the
        counts were off-screen); the counts are never cut, the name and type give way."""
        width = self.query_one("#entities", DataTable).size.width or self.app.size.width // 2
        obs_w, rel_w = self._count_widths()
        spare = max(20, width - 2 - 4 * 2 - obs_w - rel_w)  # scrollbar, cell padding, the counts
        kind = min(18, max(6, spare // 3))
        return spare - kind, kind, obs_w, rel_w

    def _make_columns(self) -> None:
        table = self.query_one("#entities", DataTable)
        name_w, type_w, obs_w, rel_w = self._widths()
        self._column_fit = (name_w, type_w, obs_w, rel_w)
        table.add_column("name", key="name", width=name_w)
        table.add_column("type", key="type", width=type_w)
        table.add_column("obs.", key="observations", width=obs_w)
        table.add_column("rel.", key="relations", width=rel_w)

    def _fit_columns(self) -> bool:
        """Make the columns again when the widths that fit changed; True when they were."""
        if self._widths() == getattr(self, "_column_fit", None):
            return False
        table = self.query_one("#entities", DataTable)
        table.clear(columns=True)
        self._make_columns()
        return True

    def on_resize(self) -> None:
        if self._fit_columns() and self.graph is not None:
            self._draw_page()

    def _matching(self) -> list[tuple[g.Entity, int]]:
        assert self.graph is not None
        words = self.query_one("#graph-filter", Input).value.casefold().split()
        types = [w[5:] for w in words if w.startswith("type:")]
        plain = [w for w in words if not w.startswith("type:")]
        rows = []
        for entity in self.graph.entities:
            if types and not any(t == entity.entity_type.casefold() for t in types):
                continue
            if plain:
                name = entity.name.casefold()
                if not all(w in name for w in plain):
                    continue
            rows.append((entity, self._degree.get(entity.name, 0)))
        rows.sort(key=_SORTS[self._sort])
        return rows

    def _refill(self, keep_page: bool = False) -> None:
        if self.graph is None:
            return
        self._rows = self._matching()
        pages = max(1, -(-len(self._rows) // PAGE))
        self._page = min(self._page, pages - 1) if keep_page else 0
        self._draw_page()

    def _draw_page(self) -> None:
        table = self.query_one("#entities", DataTable)
        table.clear()
        start = self._page * PAGE
        for i, (entity, degree) in enumerate(self._rows[start:start + PAGE]):
            flag = self._flags.get(entity.name)
            name = safe(entity.name, "bold red" if flag and flag[0] is not Severity.INFO else "")
            name.truncate(self._column_fit[0], overflow="ellipsis")
            kind = safe(entity.entity_type)
            kind.truncate(self._column_fit[1], overflow="ellipsis")
            table.add_row(name, kind, Text(f"{len(entity.observations):,}", justify="right"),
                          Text(f"{degree:,}", justify="right"), key=str(start + i))
        self._draw_status()
        current = self._current
        if current is not None and self.graph is not None and self.graph.find(current):
            self._show_entity(current, self._record_line)
            row = next((i for i, (entity, _) in enumerate(self._rows[start:start + PAGE])
                        if entity.name == current and (self._record_line is None or entity.line == self._record_line)),
                       None)
            if row is not None:  # keep the table's cursor on it (after an edit reloads the page)
                table.move_cursor(row=row, animate=False)
        elif self._rows[start:start + PAGE]:
            self._show_entity(self._rows[start][0].name, self._rows[start][0].line)
        else:
            self._current = None
            self.query_one("#entity-detail", Static).update(Text("No entity matches.", style="dim"))
            self.query_one("#observations", OptionList).clear_options()
            self.query_one("#neighbourhood", Tree).clear()

    def _draw_status(self, counts: Text | None = None) -> None:
        """The count line: what is shown (``counts``, default the page's), where it comes from, and
        whether it is live, the kept snapshot while the remote is read, or offline."""
        from memtui.core.graph.snapshot import as_of

        if counts is None:
            assert self.graph is not None
            start = self._page * PAGE
            shown_to = min(start + PAGE, len(self._rows))
            findings = plural(len(self.findings), "finding") if self.cached is None else "not audited"
            counts = Text(f"{start + 1 if self._rows else 0:,}–{shown_to:,} of {plural(len(self._rows), 'entity', 'entities')}"
                          f" · {plural(len(self.graph.relations), 'relation')} · {findings} · sorted by {self._sort}")
            if len(self._rows) > PAGE:
                counts.append(Text("  ([ ] pages)", style="dim"))
        status = counts
        if self.backend is not None and self.backend.kind == "remote":  # last: the counts matter more at 80 columns
            status = join(status, Text(" · "), Text("remote ", style="bold"), safe(self.backend.shown))
        stamp = as_of(self.read_at) if self.read_at is not None else ""
        # memtui's last read ("as of 10:04"), or a restored backup's graph ("from the backup of …")
        since = self.cached.label() if self.cached is not None else f"as of {stamp}"
        if self.offline and self.read_at is not None:
            status = join(Text(f" offline, {since} ", style="bold reverse red"), Text(" F5 retries · "), status)
        elif self.cached is not None:
            label = self._reading_text() if self._reading_since is not None else "kept"
            status = join(Text(f" {since}, {label} ", style="bold reverse yellow"), Text(" "), status)
        self._status(status)
        kept = ("the graph of the restored backup, kept in the user cache; the live read replaces it"
                if self.cached is not None and self.cached.backup is not None else
                "memtui's last read of the remote, kept in the user cache; the live read replaces it")
        self.query_one("#graph-count", Static).tooltip = self.offline or (kept if self.cached is not None else None)

    def action_page(self, step: int) -> None:
        pages = max(1, -(-len(self._rows) // PAGE))
        self._page = max(0, min(pages - 1, self._page + step))
        self._current = None
        self._draw_page()

    def action_cycle_sort(self) -> None:
        names = list(_SORTS)
        self._sort = names[(names.index(self._sort) + 1) % len(names)]
        self._refill()

    @on(DataTable.HeaderSelected, "#entities")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        self._sort = str(event.column_key.value)
        self._refill()

    @on(Input.Changed, "#graph-filter")
    def _filter_changed(self) -> None:
        self._current = None
        self._refill()

    @on(Input.Submitted, "#graph-filter")
    def _filter_submitted(self) -> None:
        self.query_one("#entities").focus()

    def action_focus_filter(self) -> None:
        self.query_one("#graph-filter").focus()

    def action_clear_filter(self) -> None:
        """Escape: leave the filter box (kept), or clear it from the table (:func:`escape_box`)."""
        escape_box(self, self.query_one("#graph-filter", Input), self.query_one("#entities"))

    @on(DataTable.RowHighlighted, "#entities")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        index = self._page * PAGE + event.cursor_row
        if 0 <= index < len(self._rows):
            entity = self._rows[index][0]
            if entity.name == self._current and self._record_line in (None, entity.line):
                return  # shown already (the table's own late highlight after a page is drawn)
            self._show_entity(entity.name, entity.line)

    # -- detail and neighbourhood ---------------------------------------------------------------
    def _mark(self, name: str) -> Text:
        """``" ⚠ n"`` in the colour of the worst finding of entity ``name`` (empty when none)."""
        flag = self._flags.get(name)
        if not flag:
            return Text("")
        return Text(f" ⚠ {flag[1]}", style=_MARK_STYLE[flag[0]])

    def _show_entity(self, name: str, line: int | None = None) -> None:
        """Show entity ``name``; when it is written several times, the record at ``line`` (else
        its first) is the selected one: its observations are listed and edits go to it."""
        if self.graph is None:
            return
        self._current = name
        records = self.graph.find(name)
        selected = next((r for r in records if r.line == line), records[0] if records else None)
        self._record_line = selected.line if selected is not None and len(records) > 1 else None
        text = Text()
        for record in records:
            chosen = len(records) > 1 and record is selected
            text.append(join(Text("▶ " if chosen else ""), safe(record.name, "bold"), Text("  "),
                             safe(record.entity_type, "italic"),
                             Text(f"  line {record.line}  ·  {plural(len(record.observations), 'observation')}"
                                  + ("  (selected: edits go to this record; D deletes it)" if chosen else "")
                                  + "\n", style="dim")))
            for finding in self._by_line.get(record.line, []):
                text.append(join(severity_text(finding.severity.value), Text(" "), safe(for_tui(finding.message)), Text("\n")))
        out, inc = self._out.get(name, []), self._in.get(name, [])
        text.append(Text(f"relations: {len(out):,} out, {len(inc):,} in\n", style="bold"))
        for relation in out[:MAX_LISTED]:
            text.append(join(Text("  —"), safe(relation.relation_type), Text("→ "), safe(relation.target), Text("\n")))
        for relation in inc[:MAX_LISTED]:
            text.append(join(Text("  ←"), safe(relation.relation_type), Text("— "), safe(relation.source), Text("\n")))
        if len(out) > MAX_LISTED or len(inc) > MAX_LISTED:
            text.append(Text("  … more in the neighbourhood tree\n", style="dim"))
        self.query_one("#entity-detail", Static).update(text)
        self._list_observations(name, [selected] if self._record_line is not None and selected else records)
        tree = self.query_one("#neighbourhood", Tree)
        tree.clear()
        tree.root.set_label(join(safe(name, "bold"), self._mark(name)))
        tree.root.data = (name, 0, None)
        self._add_neighbours(tree.root)
        tree.root.expand()

    def _list_observations(self, name: str, records: list[g.Entity]) -> None:
        listing = self.query_one("#observations", OptionList)
        listing.clear_options()
        self._observations = []
        origins = self._provenance.get(name, {})
        seen: set[str] = set()
        options: list[Option] = []
        texts = [t for record in records for t in record.observations]
        for text in texts:
            if text in seen:
                continue
            seen.add(text)
            if len(self._observations) >= MAX_LISTED:
                break
            prompt = join(Text("• "), safe(text, limit=OBSERVATION_SHOWN))
            if len(text) > OBSERVATION_SHOWN:
                prompt.append(Text("  (v shows all)", style="dim"))
            items = origins.get(text, [])
            if items:
                last = items[-1]
                where = f", line {last.line}" if last.line else ""
                prompt.append(Text(f"\n    from session {last.session} at {last.at}{where}"
                                   f"{f' (+{len(items) - 1} earlier)' if len(items) > 1 else ''}", style="dim"))
            options.append(Option(prompt, id=str(len(self._observations))))
            self._observations.append((name, text))
        if len(seen) < len(set(texts)):
            options.append(Option(Text(f"… {len(set(texts)) - len(seen):,} more observations", style="dim"),
                                  disabled=True))
        listing.add_options(options)
        if self._observations:
            listing.highlighted = 0

    def _add_neighbours(self, node: TreeNode) -> None:
        if node.data is None:
            return
        name, depth, _relation = node.data
        if depth >= 2:
            return
        links = [(r, r.target, "→") for r in self._out.get(name, [])]
        links += [(r, r.source, "←") for r in self._in.get(name, [])]
        assert self.graph is not None
        for relation, other, arrow in links[:MAX_CHILDREN]:
            label = join(Text(f"{arrow} "), safe(relation.relation_type, "dim"), Text(" "), safe(other),
                         self._mark(other))
            if not self.graph.find(other):
                label.append(Text("  (not an entity)", style="red"))
            node.add(label, data=(other, depth + 1, relation), allow_expand=depth + 1 < 2)
        if len(links) > MAX_CHILDREN:
            node.add_leaf(Text(f"… {len(links) - MAX_CHILDREN:,} more", style="dim"), data=None)

    @on(Tree.NodeExpanded, "#neighbourhood")
    def _expanded(self, event: Tree.NodeExpanded) -> None:
        node = event.node
        if node.data and not node.children and node is not self.query_one("#neighbourhood", Tree).root:
            self._add_neighbours(node)

    @on(Tree.NodeSelected, "#neighbourhood")
    def _go_to(self, event: Tree.NodeSelected) -> None:
        if event.node.data and event.node.data[1] > 0 and self.graph is not None:
            name = event.node.data[0]
            if self.graph.find(name):
                self._show_entity(name)
            else:
                self.notify("that end is not an entity (a dangling relation)", markup=False)

    @on(OptionList.OptionSelected, "#observations")
    def _observation_chosen(self) -> None:
        self.action_history()

    # -- session history ------------------------------------------------------------------------
    def _highlighted_observation(self) -> tuple[str, str] | None:
        listing = self.query_one("#observations", OptionList)
        index = listing.highlighted
        if index is None or not (0 <= index < len(self._observations)):
            return None
        return self._observations[index]

    def action_show_all(self) -> None:
        """Show all of the highlighted observation (the list cuts long ones)."""
        chosen = self._highlighted_observation()
        if chosen is None:
            self.notify("choose an observation first", markup=False)
            return
        entity, text = chosen
        self.app.push_screen(ValueViewer(f"observation of {entity}", text))

    def action_history(self) -> None:
        """Open the session history the highlighted observation came from, at that point."""
        chosen = self._highlighted_observation()
        if chosen is None:
            self.notify("choose an observation first", markup=False)
            return
        entity, text = chosen
        items = self._provenance.get(entity, {}).get(text, [])
        self.open_history(entity, text, items[-1] if items else None)

    @work(thread=True, exclusive=True, group="graph-history")
    def open_history(self, entity: str, text: str, item: Provenance | None) -> None:
        """Find the place (the recorded one, else the first session line mentioning ``text``)
        in a thread; then open that turn in the Sessions area."""
        root = self.app.ws.root
        notice = ""
        try:
            if item is None:
                hits = find_in_sessions(root, text, limit=1)
                if not hits:
                    self.app.call_from_thread(
                        self.notify, "no provenance is recorded for this observation, and no session "
                        "history mentions it", markup=False)
                    return
                key, line, ts = hits[0]
                item = Provenance(entity, text, key, ts, line, "agent")
                notice = "no provenance recorded; showing the first session line that mentions it"
            path, line = session_position(root, item)
        except (MemtuiError, OSError) as exc:
            self.app.call_from_thread(self.notify, str(exc), title="Session history", severity="warning",
                                      markup=False)
            return

        async def show() -> None:
            if notice:
                self.notify(notice, markup=False)
            # the turn in the Sessions area (issue 17), where the history reads as turns
            await self.app.switch_mode("sessions")
            reveal = getattr(self.app.screen, "reveal", None)  # the Sessions area's
            if reveal is not None:
                reveal(path.stem, line)

        self.app.call_from_thread(show)  # type: ignore[arg-type]  # Textual awaits a coroutine function

    # -- curating -----------------------------------------------------------------------------
    def _writable(self) -> bool:
        """True when the session may write; otherwise say why (the holder sentence)."""
        if self.session.read_only:
            self.notify(self.session.reason or "read-only", title="Read-only", severity="warning",
                        markup=False, timeout=10)
            return False
        if self.saving:
            self.notify("the last change is still being saved", markup=False)
            return False
        if self.cached is not None:
            self.notify("this is the remote graph kept by memtui, "
                        f"{self.cached.label()}; a change waits for the live read (F5 reads again)",
                        title="Not live yet", severity="warning", markup=False, timeout=10)
            return False
        if self.graph is None:
            self.notify("the graph is still being read; try again in a moment", markup=False)
            return False
        return True

    def propose(self, operation: g.Operation, question: Text | str = "", doing: str = "do",
                again: Callable[[str], None] | None = None) -> None:
        """Try ``operation`` on the loaded graph, ask to confirm what it will do, then save it.

        ``question`` is app text (``str``) or a :class:`Text` composed with ``safe()`` names;
        the confirmation adds the operation's future-tense sentence (``Change.will``) and notes.
        ``again``: when the operation is not possible (a mistyped name), called with the reason
        instead of a toast, so the question that asked for the value asks again with it kept.
        """
        if not self._writable():
            return
        assert self.graph is not None
        try:
            change = operation.apply(self.graph)
        except g.GraphEditError as exc:
            if again is not None:
                again(str(exc))
            else:
                self.notify(str(exc), title="Not possible", severity="warning", markup=False, timeout=10)
            return
        if not change.changed:
            self.notify(change.summary + " (nothing to do)", markup=False)
            return
        will = change.will or change.summary
        text = question if isinstance(question, Text) else Text(question or "Go ahead?")
        text = join(text, f"\n\nThis {will}.")
        for note in change.notes:
            text.append(f"\nNote: {note}.")

        def done(yes: bool | None) -> None:
            if yes:
                self._apply(operation, doing)

        self.app.push_screen(Confirm(text), done)

    def _apply(self, operation: g.Operation, doing: str = "do") -> None:
        """Save ``operation`` in a worker thread (commit, re-audit, provenance) and reload the views."""
        if self.graph is None:
            return
        self.saving = True
        self._doing = doing
        self._save(self.graph, operation)

    @work(thread=True, exclusive=True, group="graph-save")
    def _save(self, before: g.Graph, operation: g.Operation) -> None:
        from memtui.core.mcp.errors import McpError

        path = self.app.ws.graph_file
        try:
            if self.backend is not None and self.backend.kind == "remote":
                saved = self.backend.save(before, operation, session=self.session)
            else:
                saved = g.commit(path, before, operation, session=self.session)
        except (MemtuiError, OSError) as exc:  # refused, conflict, edit error, client id, write failure
            title = "Read-only" if isinstance(exc, ReadOnlyError) else "Not saved"
            if isinstance(exc, McpError):
                self.app.call_from_thread(self._failed, str(exc), False)
            self.app.call_from_thread(self._save_failed, str(exc), title)
            return
        findings = audit(saved.graph, near=len(saved.graph.entities) < NEAR_AFTER_EDIT)
        provenance = self._read_provenance()
        self.app.call_from_thread(self._saved, before, operation, saved, findings, provenance)

    def _save_failed(self, message: str, title: str) -> None:
        self.saving = False
        self.notify(message, title=title, severity="error", markup=False, timeout=12)

    def _saved(self, before: g.Graph, operation: g.Operation, saved: g.Saved, findings: list[Finding],
               provenance: dict) -> None:
        self.saving = False
        if saved.written:
            self.read_at, self.offline = time.time(), ""
            index_saved = getattr(self.app, "index_saved", None)  # searchable at once (issue 8)
            if index_saved is not None and (self.backend is None or self.backend.kind == "local"):
                index_saved([self.app.ws.shown(self.app.ws.graph_file)])
        doing, self._doing = self._doing, "do"
        if doing == "undo" and saved.written and self._undo:
            undone = self._undo.pop()
            self._redo.append((undone[4], saved.graph.source_sha256, undone[2]))
        elif saved.written and saved.reapplied:  # applied to an agent's newer file: no safe undo
            self._undo.clear()
            self._redo.clear()
        elif saved.written:
            self._undo.append((before, saved.graph.source_sha256, saved.change.summary, saved.provenance_undo,
                               operation))
            del self._undo[:-UNDO_DEPTH]
            if doing == "redo" and self._redo:
                self._redo.pop()
            else:
                self._redo.clear()
        message = saved.change.summary + ("" if saved.written else " (nothing written)")
        if saved.reapplied:
            message += " — the file had changed on disk; the edit was applied to the new content"
        self.notify(message, markup=False)
        if isinstance(operation, g.RenameEntity) and self._current == operation.old:
            self._current = operation.new
        elif isinstance(operation, g.MergeEntities) and self._current in operation.sources:
            self._current = operation.into
        self._loaded(saved.graph, findings, provenance)

    def _ask(self, prompt: Text | str, then, value: str = "") -> None:
        def done(text: str | None) -> None:
            if text is not None:
                then(text)

        self.app.push_screen(AskText(prompt, value), done)

    def _ask_operation(self, prompt: Text | str, build: Callable[[str], g.Operation],
                       question: Callable[[str], Text | str], value: str = "", reason: str = "") -> None:
        """Ask for one value, then :meth:`propose` the operation ``build(value)`` makes, with the
        confirmation ``question(value)``. A value the operation refuses (a mistyped entity name)
        asks again with the value kept and the reason above the prompt, instead of dropping
        what was typed."""
        shown = join(safe(reason, "bold yellow"), "\n", prompt) if reason else prompt

        def answered(text: str) -> None:
            self.propose(build(text), question(text),
                         again=lambda why: self._ask_operation(prompt, build, question, text, why))

        self._ask(shown, answered, value)

    def _record(self) -> tuple[str, str]:
        """``(record key, " (record at line N)")`` of the selected record of a name written
        several times, else ``("", "")`` (an edit of every record, as before)."""
        if self.graph is None or self._current is None or self._record_line is None:
            return "", ""
        chosen = next((r for r in self.graph.find(self._current) if r.line == self._record_line), None)
        if chosen is None:
            return "", ""
        return self.graph.record_key(chosen), f" (the record at line {chosen.line})"

    def _type_examples(self) -> tuple[Text | str, ...]:
        """``"the graph's types: system, role, team"`` (its three most used entityTypes, as
        written), or a generic example for an empty graph: the audit flags case variants, so
        the prompt never suggests a spelling the graph does not use."""
        counts: dict[str, int] = {}
        for entity in self.graph.entities if self.graph is not None else ():
            counts[entity.entity_type] = counts.get(entity.entity_type, 0) + 1
        common = sorted(counts, key=lambda t: (-counts[t], t))[:3]
        if not common:
            return ("for example person, organization",)
        parts: list[Text | str] = ["the graph's types: "]
        for i, entity_type in enumerate(common):
            parts += [", " if i else "", safe(entity_type, limit=40)]
        return tuple(parts)

    def action_create(self) -> None:
        """Create an entity: its name, then its type (and an optional first observation)."""
        if not self._writable():
            return

        def with_name(name: str) -> None:
            if not name.strip():
                self.notify("an entity needs a name; nothing was created", severity="warning", markup=False)
                return

            def with_type(entity_type: str) -> None:
                if not entity_type.strip():
                    self.notify("an entity needs a type; nothing was created",
                                severity="warning", markup=False)
                    return

                def with_observation(text: str) -> None:
                    observations = (text,) if text.strip() else ()
                    self._current = name
                    self.propose(g.CreateEntity(name, entity_type, observations),
                                 join("Create ", safe(name, "bold"), " (", safe(entity_type), ")",
                                      *((" with the observation ", safe(text)) if observations else ()), "?"))

                self._ask(join("A first observation about ", safe(name), " (empty: none):"), with_observation)

            self._ask(join("The type of ", safe(name), " (", *self._type_examples(), "):"), with_type)

        self._ask("Name of the new entity:", with_name)

    def action_add_observation(self) -> None:
        if not self._current or not self._writable():
            return
        name = self._current
        key, which = self._record()
        self._ask(join("New observation for ", safe(name), which, ":"),
                  lambda text: self.propose(g.AddObservation(name, text, key),
                                            join("Add to ", safe(name, "bold"), which, ": ", safe(text), "?")))

    def action_edit_observation(self) -> None:
        chosen = self._highlighted_observation()
        if chosen is None or not self._writable():
            return
        name, old = chosen
        key, which = self._record()
        self._ask(join("Edit the observation of ", safe(name), which, ":"),
                  lambda new: self.propose(g.EditObservation(name, old, new, key),
                                           join("Replace ", safe(old), "\nwith ", safe(new), "\non ",
                                                safe(name, "bold"), which, "?")), old)

    def action_delete_observation(self) -> None:
        chosen = self._highlighted_observation()
        if chosen is None or not self._writable():
            return
        name, text = chosen
        key, which = self._record()
        self.propose(g.DeleteObservation(name, text, key),
                     join("Delete the observation ", safe(text), " of ", safe(name, "bold"), which, "?"))

    def action_delete_record(self) -> None:
        """Delete the selected record of a name written several times (its relations stay)."""
        if not self._current or not self._writable():
            return
        key, which = self._record()
        if not key:
            self.notify(f"{self._current} is written once; d deletes the entity", markup=False)
            return
        assert self.graph is not None
        count = len(self.graph.find(self._current))
        self.propose(g.DeleteRecord(self._current, key),
                     join("Delete ", safe(self._current, "bold"), which, f", one of its {count} records? Its relations stay."))

    def action_rename(self) -> None:
        if not self._current or not self._writable():
            return
        name = self._current
        self._ask_operation(join("Rename ", safe(name), " to:"), lambda new: g.RenameEntity(name, new),
                            lambda new: join("Rename ", safe(name, "bold"), " to ", safe(new, "bold"), "?"), name)

    def action_merge(self) -> None:
        if not self._current or not self._writable():
            return
        into = self._current

        def operation(text: str) -> g.Operation:
            source = text.strip()
            return g.MergeEntities((source,) if source else (), into)

        def question(text: str) -> Text:
            source = text.strip()
            what = (join("Merge ", safe(source, "bold"), " into ", safe(into, "bold")) if source
                    else join("Merge the duplicate records of ", safe(into, "bold")))
            return join(what, "? Their observations will be united, their relations rewired, and the old name "
                        "kept as an alias.")

        self._ask_operation(join("Merge which entity into ", safe(into), "? (empty: only its own duplicate records)"),
                            operation, question)

    def action_retype(self) -> None:
        if not self._current or not self._writable():
            return
        assert self.graph is not None
        current = self.graph.entity(self._current).entity_type
        variants = g.type_variants(self.graph, current)
        count = sum(1 for e in self.graph.entities if e.entity_type in set(variants))
        shown = safe(", ".join(repr(v) for v in variants))
        self._ask_operation(join(f"Set the entityType of all {plural(count, 'entity', 'entities')} of type ", shown,
                                 " to:"),
                            lambda new: g.Retype(tuple(variants), new),
                            lambda new: join("Set the entityType ", safe(repr(new)), " on every entity of type ",
                                             shown, "?"), current)

    def action_relate(self) -> None:
        if not self._current or not self._writable():
            return
        source = self._current

        def target_for(relation_type: str) -> None:
            self._ask_operation(join(safe(source), " —", safe(relation_type), "→ which entity?"),
                                lambda target: g.CreateRelation(source, target, relation_type),
                                lambda target: join("Create the relation ", safe(source, "bold"), " —",
                                                    safe(relation_type), "→ ", safe(target, "bold"), "?"))

        self._ask(join("Relation type from ", safe(source), " (for example works_at):"), target_for)

    def action_unrelate(self) -> None:
        if not self._writable():
            return
        node = self.query_one("#neighbourhood", Tree).cursor_node
        relation = node.data[2] if node is not None and node.data else None
        if relation is None:
            self.notify("choose a relation in the neighbourhood tree first", markup=False)
            return
        self.propose(g.DeleteRelation(relation.source, relation.target, relation.relation_type),
                     join("Delete the relation ", safe(relation.source, "bold"), " —", safe(relation.relation_type),
                          "→ ", safe(relation.target, "bold"), "?"))

    def action_delete(self) -> None:
        if not self._current or not self._writable():
            return
        name = self._current
        count = len(self._out.get(name, [])) + len(self._in.get(name, []))
        self.propose(g.DeleteEntity(name), join("Delete the entity ", safe(name, "bold"), " and its ",
                                                plural(count, "relation"), "?"))

    def action_undo(self) -> None:
        """Undo the newest action of the history (while the file holds what it wrote)."""
        if not self._undo:
            self.notify("nothing to undo", markup=False)
            return
        if not self._writable():
            return
        previous, written, summary, provenance_undo, _operation = self._undo[-1]
        more = len(self._undo) - 1
        self.propose(g.Restore(previous, written, f"undid: {summary}", provenance_undo),
                     f"Undo the last action ({summary})?" + (f" {plural(more, 'earlier step')} can be undone after it."
                                                             if more else ""), doing="undo")

    def action_redo(self) -> None:
        """Do again the action undone last (while the file holds what the undo wrote)."""
        if not self._redo:
            self.notify("nothing to redo", markup=False)
            return
        if not self._writable():
            return
        assert self.graph is not None
        operation, written, summary = self._redo[-1]
        if self.graph.source_sha256 != written:
            self._redo.clear()
            self.notify("the graph changed after the undo, so it cannot be redone without losing that change",
                        severity="warning", markup=False)
            return
        self.propose(operation, f"Redo the action undone last ({summary})?", doing="redo")
