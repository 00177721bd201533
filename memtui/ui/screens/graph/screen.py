"""The Graph area's screen: reads the graph, wires the panes, saves confirmed edits.

The graph is the local file or the member's remote graph over MCP
(:func:`memtui.core.graph.backend.open_graph`), read, browsed and curated the same way through
the backend. It is read and audited in a worker thread. A remote graph first shows its kept
snapshot (:mod:`memtui.core.graph.snapshot`), labelled "as of HH:MM, reading the remote…",
until the live read replaces it; a remote that cannot be reached shows its sentence, what was
last read stays visible labelled ``offline, as of HH:MM``, and an empty table is never shown
as if it were the graph. ``F5`` reads the graph again.

The panes (:mod:`memtui.ui.screens.graph`) post messages and this screen reacts: a chosen
entity (:class:`~.messages.EntitySelected`) is shown in the detail pane, a chosen observation
(:class:`~.messages.ObservationChosen`) opens the session turn it came from in the Sessions
area (``h``), and a confirmed edit (:class:`~.messages.EditConfirmed`) is saved in a worker
through the backend with the app's writer session (the lock, the audit log, provenance). A
save refused because the graph changed meanwhile shows the difference in the conflict bar. A
read-only session shows a ``READ-ONLY`` badge and refuses with the holder sentence before
asking anything.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Header, Input

from memtui.core import graph as g
from memtui.core.errors import MemtuiError
from memtui.core.findings import Finding
from memtui.core.graph.audit import audit
from memtui.core.graph.backend import GraphBackend
from memtui.core.graph.provenance import Provenance, ProvenanceBook, find_in_sessions, session_position
from memtui.core.graph.snapshot import Snapshot
from memtui.ui.screens.base import AreaScreen
from memtui.ui.screens.graph.curation import ConflictBar, Curator
from memtui.ui.screens.graph.detail import EntityDetail
from memtui.ui.screens.graph.messages import EditConfirmed, EntitySelected, ObservationChosen
from memtui.ui.screens.graph.model import GraphModel, ProvenanceMap
from memtui.ui.screens.graph.status import ReadStatus
from memtui.ui.screens.graph.table import EntityTable
from memtui.ui.text import as_data, join, safe
from memtui.ui.widgets import AreaBar, KeyFooter, ValueViewer, escape_box

if TYPE_CHECKING:
    from memtui.core.session import Session

#: Graphs with more entities skip the fuzzy near-duplicate search when re-audited after an edit.
NEAR_AFTER_EDIT = 20_000


class GraphScreen(AreaScreen):
    """Browse, audit and curate the knowledge graph (see the module docstring)."""

    DEFAULT_CSS = """
    GraphScreen #graph-bar { height: 3; }
    GraphScreen #graph-filter { width: 1fr; }
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
        #: what is shown: the live read, the kept snapshot's records, or ``None`` before either
        self.model: GraphModel | None = None
        #: True while a save runs in its worker (a second action waits for it)
        self.saving = False
        #: the graph's backend (local file or remote server), opened in the load worker
        self.backend: GraphBackend | None = None
        #: the file line a jump (an audit finding) asked for before the graph was read
        self._wanted_line: int | None = None

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        with Horizontal(id="graph-bar"):
            yield Input(placeholder="filter: words in names, type:Person", id="graph-filter")
            yield ReadStatus(id="graph-count")
        yield ConflictBar(id="graph-conflict")
        with Horizontal(id="graph-main"):
            yield EntityTable(id="entities")
            yield EntityDetail(id="graph-side")
        yield Curator(self._graph_to_edit, id="graph-curator")
        yield KeyFooter()

    @property
    def table(self) -> EntityTable:
        return self.query_one(EntityTable)

    @property
    def detail(self) -> EntityDetail:
        return self.query_one(EntityDetail)

    @property
    def curator(self) -> Curator:
        return self.query_one(Curator)

    @property
    def status(self) -> ReadStatus:
        return self.query_one(ReadStatus)

    @property
    def cached(self) -> Snapshot | None:
        """The remote's kept snapshot while it is shown (``None``: what is shown is live)."""
        return self.status.cached

    @property
    def graph(self) -> g.Graph | None:
        """The graph shown (``None`` before the first read)."""
        return self.model.graph if self.model is not None else None

    @property
    def findings(self) -> list[Finding]:
        """The findings of the graph shown."""
        return self.model.findings if self.model is not None else []

    @property
    def current(self) -> str | None:
        """The entity shown in the detail pane."""
        return self.detail.current

    def on_mount(self) -> None:
        self.status.read_only = (self.session.reason or "read-only") if self.session.read_only else ""
        self.status.say(Text("loading the graph…", style="dim"))
        self.table.focus()
        self.app.workspace_changed.subscribe(self, self._on_changes)
        self.load_graph()

    def _on_changes(self, changes) -> None:  # noqa: ANN001 - memtui.core.watch.Changes
        """The graph file changed (an agent, the MCP server, the CLI): read it again unless it
        holds what this screen already shows (its own save). An edit confirmed later is still
        checked against the file (the save re-applies it or reports the conflict)."""
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
    def session(self) -> Session:
        """The app's writer session (``app.session``)."""
        return self.app.session

    # -- loading (worker thread) ------------------------------------------------------------------
    def load_graph(self) -> None:
        """Read the graph (and audit it) in a worker. A remote graph first shows its snapshot,
        the last read kept in the user cache: the listing at once, then its records, labelled
        "as of HH:MM, reading the remote…"; the live read replaces it and is kept as the next
        snapshot. A read that fails shows its sentence (:meth:`_failed`)."""
        self.run_core(self._read_graph, lambda read: self._read(*read), group="graph-load",
                      errors=(Exception,), toast=False, failed=self._read_failed)

    def _read_graph(self) -> tuple[g.Graph, list[Finding], ProvenanceMap, float]:
        """In the load worker: open the backend (once), show its kept read, read it live."""
        from memtui.core.graph.backend import open_graph
        from memtui.core.mcp.client import throttled

        ws = self.app.ws
        if self.backend is None:
            self.backend = open_graph(ws)
        backend = self.status.backend = self.backend
        self.from_worker(self.status.reading, 0)
        found = backend.kept(ws.root) if self.graph is None else None
        if found is not None:  # a remote's last read, shown while it is read again
            self._show_snapshot(found)

        def progress(count: int) -> None:
            self.from_worker(self.status.reading, count)

        graph = backend.load(progress=throttled(progress))  # call_from_thread waits on the UI
        findings = audit(graph)
        provenance = self._read_provenance()
        read_at = getattr(backend, "read_at", None) or time.time()
        backend.keep(ws.root, graph)
        return graph, findings, provenance, read_at

    def _read_failed(self, exc: Exception) -> None:
        where = self.backend.shown if self.backend is not None else self.app.ws.shown(self.app.ws.graph_file)
        self._failed(str(exc) if isinstance(exc, MemtuiError) else f"cannot read {where}: {exc}")

    def _show_snapshot(self, found: Snapshot) -> None:
        """In the load worker: show ``found`` while the live read runs, its listing's first page,
        then its records."""
        from memtui.core.graph import snapshot

        try:
            rows = found.rows()
            self.from_worker(self._cached_rows, found, rows)
            graph = found.graph()
        except snapshot.SnapshotError:
            return
        self.from_worker(self._cached_graph, found, graph)

    def _cached_rows(self, found: Snapshot, rows: list) -> None:
        """The snapshot's first page (by name), before its records are read: names and counts."""
        if self.graph is not None:
            return
        self.status.cached, self.status.read_at = found, found.read_at
        self.status.draw(self.table.show_listing(rows))
        self.detail.say(Text("reading the kept records…", style="dim"))

    def _cached_graph(self, found: Snapshot, graph: g.Graph) -> None:
        """The snapshot's records: browsable (not audited) until the live read replaces them."""
        if self.graph is not None and self.cached is None:
            return  # the live read came first
        self.status.cached, self.status.read_at = found, found.read_at
        self._loaded(graph, [])

    def _read(self, graph: g.Graph, findings: list[Finding], provenance: ProvenanceMap,
              read_at: float | None = None) -> None:
        status = self.status
        status.read_done()
        status.read_at, status.offline, status.cached = read_at or time.time(), "", None
        self._loaded(graph, findings, provenance)

    def action_reload(self) -> None:
        """Read the graph again (after an agent wrote, or when the remote is back)."""
        self.query_one(ConflictBar).hide()
        self.status.say(Text("reading the graph again…", style="dim"))
        self.load_graph()

    def on_unmount(self) -> None:
        if self.backend is not None:
            try:
                self.backend.close()  # a remote session ends with DELETE
            except Exception:  # noqa: BLE001 - leaving the screen never fails
                pass

    def _read_provenance(self) -> ProvenanceMap:
        try:
            return ProvenanceBook(self.session.store).grouped()  # type: ignore[arg-type]  # TinyDB's Table
        except Exception:  # noqa: BLE001 - a damaged store shows no provenance, never a crash
            return {}

    def _failed(self, message: str, notify: bool = True) -> None:
        """The graph could not be read: say why, and never show an empty table as the graph."""
        self.status.read_done()
        self.status.offline = message
        if self.graph is not None:
            self._draw_page()  # what was last read stays, labelled offline
            if notify:
                self.notify(message, title="Graph offline", severity="error", markup=False, timeout=12)
            return
        self.status.forget_counts()
        self.status.say(Text(as_data(message), style="red"))
        self.table.clear()
        self.detail.say(join(
            Text("No graph is shown, because it could not be read:\n\n", style="bold"), Text(as_data(message), style="red"),
            Text("\n\nF5 tries again.", style="dim")))

    def _loaded(self, graph: g.Graph, findings: list[Finding], provenance: ProvenanceMap | None = None) -> None:
        if provenance is None:
            provenance = self.model.provenance if self.model is not None else {}
        self.model = self.table.model = self.detail.model = GraphModel.of(graph, findings, provenance)
        self.table.fit_columns()  # the counts' columns are as wide as the largest count
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
        if self.model is None or self.cached is not None:
            self._wanted_line = line
            return
        graph = self.model.graph
        record = graph.lines[line - 1].record if 0 < line <= len(graph.lines) else None
        if isinstance(record, g.Entity):
            self.select(record.name, record.line)
            self.table.focus()
            return
        if isinstance(record, g.Relation):
            end = next((n for n in (record.source, record.target) if graph.find(n)), None)
            if end is None:
                self.notify(f"line {line} is the relation {record.source} —{record.relation_type}→ "
                            f"{record.target}; neither end is an entity", severity="warning", markup=False)
                return
            self.select(end, None)
            self.detail.reveal_relation(record.line)
            return
        said = "; ".join(f.message for f in self.model.by_line.get(line, [])) or "it holds no entity or relation"
        self.notify(f"line {line} of {graph.shown} is not an entity or a relation: {said}",
                    severity="warning", markup=False, timeout=8)

    def select(self, name: str, line: int | None) -> None:
        """Select entity ``name`` (its record at ``line``) in the table, on its page; the filter
        is cleared when it hides the entity."""
        box = self.query_one("#graph-filter", Input)
        table = self.table
        if box.value and not table.holds(name):
            with self.prevent(Input.Changed):
                box.value = ""
            table.refill("", keep_page=True)
        several = line is not None and self.graph is not None and len(self.graph.find(name)) > 1
        self.detail.current, self.detail.record_line = name, line if several else None
        table.go_to(name, line)
        self._draw_page()

    # -- the table ------------------------------------------------------------------------------
    def on_resize(self) -> None:
        if self.table.fit_columns() and self.graph is not None:
            self._draw_page()

    def _refill(self, keep_page: bool = False) -> None:
        if self.model is None:
            return
        self.table.refill(self.query_one("#graph-filter", Input).value, keep_page)
        self._draw_page()

    def _draw_page(self) -> None:
        shown = self.table.draw_page(self.detail.current, self.detail.record_line)
        self.status.draw(self.table.counts(cached=self.cached is not None))
        if shown is None:
            self.detail.clear_entity(Text("No entity matches.", style="dim"))
        else:
            self.detail.show(*shown)

    def action_page(self, step: int) -> None:
        self.table.turn(step)
        self.detail.current = None
        self._draw_page()

    def action_cycle_sort(self) -> None:
        self.table.next_sort()
        self._refill()

    @on(DataTable.HeaderSelected, "#entities")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        self.table.order = str(event.column_key.value)
        self._refill()

    @on(Input.Changed, "#graph-filter")
    def _filter_changed(self) -> None:
        self.detail.current = None
        self._refill()

    @on(Input.Submitted, "#graph-filter")
    def _filter_submitted(self) -> None:
        self.table.focus()

    def action_focus_filter(self) -> None:
        self.query_one("#graph-filter").focus()

    def action_clear_filter(self) -> None:
        """Escape: hide the conflict bar when it is shown; else leave the filter box (kept), or
        clear it from the table (:func:`escape_box`)."""
        if self.query_one(ConflictBar).hide():
            return
        escape_box(self, self.query_one("#graph-filter", Input), self.table)

    @on(EntitySelected)
    def _entity_selected(self, event: EntitySelected) -> None:
        """A pane chose an entity: show it (unless it is shown already, as after a page is drawn)."""
        detail = self.detail
        if event.name == detail.current and detail.record_line in (None, event.line):
            return
        detail.show(event.name, event.line)

    def show_entity(self, name: str, line: int | None = None) -> None:
        """Show entity ``name`` (its record at ``line``) in the detail pane."""
        self.detail.show(name, line)

    # -- session history ------------------------------------------------------------------------
    def action_show_all(self) -> None:
        """Show all of the highlighted observation (the list cuts long ones)."""
        chosen = self.detail.highlighted_observation()
        if chosen is None:
            self.notify("choose an observation first", markup=False)
            return
        entity, text = chosen
        self.app.push_screen(ValueViewer(f"observation of {entity}", text))

    def action_history(self) -> None:
        """Open the session history the highlighted observation came from, at that point."""
        chosen = self.detail.highlighted_observation()
        if chosen is None:
            self.notify("choose an observation first", markup=False)
            return
        self.post_message(ObservationChosen(*chosen))

    @on(ObservationChosen)
    def _observation_chosen(self, event: ObservationChosen) -> None:
        items = self.model.provenance.get(event.entity, {}).get(event.text, []) if self.model is not None else []
        self.open_history(event.entity, event.text, items[-1] if items else None)

    def open_history(self, entity: str, text: str, item: Provenance | None) -> None:
        """Find the place (the recorded one, else the first session line mentioning ``text``)
        in a worker; then open that turn in the Sessions area."""
        root = self.app.ws.root

        def find() -> tuple[str, str, int] | None:
            notice, found = "", item
            if found is None:
                hits = find_in_sessions(root, text, limit=1)
                if not hits:
                    return None
                key, line, ts = hits[0]
                found = Provenance(entity, text, key, ts, line, "agent")
                notice = "no provenance recorded; showing the first session line that mentions it"
            path, line = session_position(root, found)
            return notice, path.stem, line

        async def show(place: tuple[str, str, int] | None) -> None:
            if place is None:
                self.notify("no provenance is recorded for this observation, and no session history mentions it",
                            markup=False)
                return
            notice, key, line = place
            if notice:
                self.notify(notice, markup=False)
            await self.app.switch_mode("sessions")  # the turn in the Sessions area, read as turns
            reveal = getattr(self.app.screen, "reveal", None)  # the Sessions area's
            if reveal is not None:
                reveal(key, line)

        self.run_core(find, show, group="graph-history", title="Session history", severity="warning",
                      errors=(MemtuiError, OSError))

    # -- curating -----------------------------------------------------------------------------
    def _graph_to_edit(self) -> g.Graph | None:
        """The graph when the session may write it now; otherwise ``None``, after saying why (the
        holder sentence, a save still running, a kept read that is not live, still reading)."""
        if self.session.read_only:
            self.notify(self.session.reason or "read-only", title="Read-only", severity="warning",
                        markup=False, timeout=10)
            return None
        if self.saving:
            self.notify("the last change is still being saved", markup=False)
            return None
        if self.cached is not None:
            self.notify("this is the remote graph kept by memtui, "
                        f"{self.cached.label()}; a change waits for the live read (F5 reads again)",
                        title="Not live yet", severity="warning", markup=False, timeout=10)
            return None
        if self.graph is None:
            self.notify("the graph is still being read; try again in a moment", markup=False)
            return None
        return self.graph

    def _entity_to_edit(self) -> tuple[g.Graph, str] | None:
        """``(graph, the entity shown)`` when both are there and the graph may be written."""
        if not self.detail.current:
            return None
        graph = self._graph_to_edit()
        return (graph, self.detail.current) if graph is not None else None

    def propose(self, operation: g.Operation, question: Text | str = "") -> None:
        """Try ``operation`` on the graph shown, ask to confirm, then save it
        (:meth:`Curator.propose`)."""
        self.curator.propose(operation, question)

    def _record(self) -> tuple[str, str]:
        """``(record key, " (the record at line N)")`` of the selected record of a name written
        several times, else ``("", "")`` (an edit of every record)."""
        current, line = self.detail.current, self.detail.record_line
        if self.graph is None or current is None or line is None:
            return "", ""
        chosen = next((r for r in self.graph.find(current) if r.line == line), None)
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
        if self._graph_to_edit() is not None:
            self.curator.create(self._type_examples())

    def action_add_observation(self) -> None:
        if (target := self._entity_to_edit()) is not None:
            self.curator.add_observation(target[1], *self._record())

    def action_edit_observation(self) -> None:
        chosen = self.detail.highlighted_observation()
        if chosen is not None and self._graph_to_edit() is not None:
            self.curator.edit_observation(*chosen, *self._record())

    def action_delete_observation(self) -> None:
        chosen = self.detail.highlighted_observation()
        if chosen is not None and self._graph_to_edit() is not None:
            self.curator.delete_observation(*chosen, *self._record())

    def action_delete_record(self) -> None:
        """Delete the selected record of a name written several times (its relations stay)."""
        if (target := self._entity_to_edit()) is None:
            return
        graph, name = target
        key, which = self._record()
        if not key:
            self.notify(f"{name} is written once; d deletes the entity", markup=False)
            return
        self.curator.delete_record(name, key, which, len(graph.find(name)))

    def action_rename(self) -> None:
        if (target := self._entity_to_edit()) is not None:
            self.curator.rename(target[1])

    def action_merge(self) -> None:
        if (target := self._entity_to_edit()) is not None:
            self.curator.merge(target[1])

    def action_retype(self) -> None:
        if (target := self._entity_to_edit()) is not None:
            self.curator.retype(*target)

    def action_relate(self) -> None:
        if (target := self._entity_to_edit()) is not None:
            self.curator.relate(target[1])

    def action_unrelate(self) -> None:
        if self._graph_to_edit() is None:
            return
        relation = self.detail.chosen_relation()
        if relation is None:
            self.notify("choose a relation in the neighbourhood tree first", markup=False)
            return
        self.curator.unrelate(relation)

    def action_delete(self) -> None:
        if (target := self._entity_to_edit()) is not None and self.model is not None:
            self.curator.delete(target[1], self.model.relations_of(target[1]))

    def action_undo(self) -> None:
        """Undo the newest action of the history (while the graph holds what it wrote)."""
        self.curator.undo()

    def action_redo(self) -> None:
        """Do again the action undone last (while the graph holds what the undo wrote)."""
        self.curator.redo()

    # -- saving -------------------------------------------------------------------------------
    @on(EditConfirmed)
    def _edit_confirmed(self, event: EditConfirmed) -> None:
        self.save(event.before, event.operation, event.doing)

    def save(self, before: g.Graph, operation: g.Operation, doing: str = "do") -> None:
        """Save ``operation`` on ``before`` in a worker through the backend (re-audit and
        provenance too), then show the graph saved; a refusal is a toast, a conflict shows
        the difference instead, a remote that fails is marked offline."""
        backend = self.backend
        if backend is None:
            return
        self.saving = True
        session = self.session

        def write() -> tuple[g.Saved, list[Finding], ProvenanceMap]:
            saved = backend.save(before, operation, session=session)
            findings = audit(saved.graph, near=len(saved.graph.entities) < NEAR_AFTER_EDIT)
            return saved, findings, self._read_provenance()

        def failed(exc: Exception) -> bool:
            from memtui.core.mcp.errors import McpError

            self.saving = False
            if isinstance(exc, McpError):
                self._failed(str(exc), False)
            if isinstance(exc, g.GraphConflictError) and exc.diff:  # the sentence and the difference
                self.query_one(ConflictBar).show(str(exc), exc.diff)
                return True
            return False

        self.run_core(write, lambda done: self._saved(doing, before, operation, *done), group="graph-save",
                      title="Not saved", errors=(MemtuiError, OSError), failed=failed)

    def _saved(self, doing: str, before: g.Graph, operation: g.Operation, saved: g.Saved, findings: list[Finding],
               provenance: ProvenanceMap) -> None:
        self.saving = False
        self.query_one(ConflictBar).hide()
        backend = self.backend
        if saved.written:
            self.status.read_at, self.status.offline = time.time(), ""
            if backend is not None and backend.files:
                self.app.index_saved(list(backend.files))  # searchable at once
        self.curator.history.saved(doing, before, operation, saved)
        message = saved.change.summary + ("" if saved.written else " (nothing written)")
        if saved.reapplied:
            message += " — the file had changed on disk; the edit was applied to the new content"
        self.notify(message, markup=False)
        detail = self.detail
        if isinstance(operation, g.RenameEntity) and detail.current == operation.old:
            detail.current = operation.new
        elif isinstance(operation, g.MergeEntities) and detail.current in operation.sources:
            detail.current = operation.into
        elif isinstance(operation, g.CreateEntity):
            detail.current = operation.name
        self._loaded(saved.graph, findings, provenance)
