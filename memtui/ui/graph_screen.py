"""The Graph area: entities table (windowed), entity detail, neighbourhood, findings (issue 4).

The graph loads and is audited in a worker thread. The entity table shows one page of
:data:`PAGE` rows of the filtered, sorted list ("1–500 of 50,000"; ``[``/``]`` page), because
a DataTable costs ~1.4 s per 10,000 rows (LIBRARY-NOTES; B23). The neighbourhood tree is
built lazily on expand, children capped at :data:`MAX_CHILDREN`. Every user string goes
through :func:`memtui.ui.text.safe` (B17: never markup). Edits go through
:func:`memtui.core.graph.commit` after a confirmation; ``u`` undoes the last one.
"""

from __future__ import annotations

from collections import defaultdict

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Footer, Header, Input, Static, Tree
from textual.widgets.tree import TreeNode

from memtui.core import graph as g
from memtui.core.findings import Finding
from memtui.core.graph_audit import audit
from memtui.ui.text import join, safe, severity_text

#: Rows of the entity table drawn at once.
PAGE = 500
#: Observations / relations listed in the detail pane before "… N more".
MAX_LISTED = 200
#: Children of one neighbourhood tree node before "… N more".
MAX_CHILDREN = 200

_SORTS = {
    "name": lambda r: r[0].name.casefold(),
    "type": lambda r: (r[0].entity_type.casefold(), r[0].name.casefold()),
    "observations": lambda r: (-len(r[0].observations), r[0].name.casefold()),
    "relations": lambda r: (-r[1], r[0].name.casefold()),
}


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


class GraphScreen(Screen):
    """Browse, audit and curate ``memory/graph.jsonl``."""

    DEFAULT_CSS = """
    GraphScreen #graph-bar { height: 3; }
    GraphScreen #graph-filter { width: 1fr; }
    GraphScreen #graph-count { width: 2fr; padding: 1 1 0 1; }
    GraphScreen #entities { width: 1fr; }
    GraphScreen #graph-side { width: 1fr; }
    GraphScreen #entity-scroll { height: 2fr; }
    GraphScreen #neighbourhood { height: 1fr; border-top: solid $primary; }
    """

    BINDINGS = [
        Binding("slash", "focus_filter", "Filter"),
        Binding("s", "cycle_sort", "Sort"),
        Binding("right_square_bracket", "page(1)", "Next page"),
        Binding("left_square_bracket", "page(-1)", "Prev page"),
        Binding("a", "add_observation", "Add obs."),
        Binding("r", "rename", "Rename"),
        Binding("d", "delete", "Delete"),
        Binding("u", "undo", "Undo"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.graph: g.Graph | None = None
        self.findings: list[Finding] = []
        self._by_line: dict[int, list[Finding]] = defaultdict(list)
        self._degree: dict[str, int] = {}
        self._out: dict[str, list[g.Relation]] = defaultdict(list)
        self._in: dict[str, list[g.Relation]] = defaultdict(list)
        self._rows: list[tuple[g.Entity, int]] = []
        self._page = 0
        self._sort = "name"
        self._current: str | None = None
        self._undo: tuple[g.Graph, str, str] | None = None

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="graph-bar"):
            yield Input(placeholder="filter: words in names, type:Person", id="graph-filter")
            yield Static(id="graph-count")
        with Horizontal(id="graph-main"):
            yield DataTable(id="entities", cursor_type="row", zebra_stripes=True)
            with Vertical(id="graph-side"):
                with VerticalScroll(id="entity-scroll"):
                    yield Static(id="entity-detail")
                yield Tree(Text("neighbourhood"), id="neighbourhood")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#entities", DataTable)
        for name in ("name", "type", "observations", "relations"):
            table.add_column(name, key=name)
        self.query_one("#graph-count", Static).update(Text("loading the graph…", style="dim"))
        table.focus()
        self.load_graph()

    # -- loading (worker thread) ------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="graph-load")
    def load_graph(self) -> None:
        ws = self.app.ws
        path = ws.graph_file
        try:
            graph = g.load(path, ws.shown(path))
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a crash
            self.app.call_from_thread(self._failed, f"cannot read {ws.shown(path)}: {exc}")
            return
        findings = audit(graph)
        self.app.call_from_thread(self._loaded, graph, findings)

    def _failed(self, message: str) -> None:
        self.query_one("#graph-count", Static).update(Text(message, style="red"))

    def _loaded(self, graph: g.Graph, findings: list[Finding]) -> None:
        self.graph = graph
        self.findings = findings
        self._by_line = defaultdict(list)
        for finding in findings:
            if finding.line is not None:
                self._by_line[finding.line].append(finding)
        self._out, self._in, self._degree = defaultdict(list), defaultdict(list), {}
        for relation in graph.relations:
            self._out[relation.source].append(relation)
            self._in[relation.target].append(relation)
            self._degree[relation.source] = self._degree.get(relation.source, 0) + 1
            if relation.target != relation.source:
                self._degree[relation.target] = self._degree.get(relation.target, 0) + 1
        self._refill()

    # -- the table ------------------------------------------------------------------------------
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
            flagged = self._by_line.get(entity.line)
            name = safe(entity.name, "bold red" if flagged and any(f.severity.value != "info" for f in flagged) else "")
            table.add_row(name, safe(entity.entity_type), Text(str(len(entity.observations))),
                          Text(str(degree)), key=str(start + i))
        shown_to = min(start + PAGE, len(self._rows))
        status = Text(f"{start + 1 if self._rows else 0:,}–{shown_to:,} of {len(self._rows):,} entities"
                      f" · {len(self.graph.relations):,} relations · {len(self.findings):,} findings"
                      f" · sorted by {self._sort}")
        if len(self._rows) > PAGE:
            status.append(Text("  ([ ] pages)", style="dim"))
        self.query_one("#graph-count", Static).update(status)
        if self._rows[start:start + PAGE]:
            self._show_entity(self._rows[start][0].name)
        else:
            self.query_one("#entity-detail", Static).update(Text("No entity matches.", style="dim"))

    def action_page(self, step: int) -> None:
        pages = max(1, -(-len(self._rows) // PAGE))
        self._page = max(0, min(pages - 1, self._page + step))
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
        self._refill()

    @on(Input.Submitted, "#graph-filter")
    def _filter_submitted(self) -> None:
        self.query_one("#entities").focus()

    def action_focus_filter(self) -> None:
        self.query_one("#graph-filter").focus()

    def action_clear_filter(self) -> None:
        self.query_one("#graph-filter", Input).value = ""
        self.query_one("#entities").focus()

    @on(DataTable.RowHighlighted, "#entities")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        index = self._page * PAGE + event.cursor_row
        if 0 <= index < len(self._rows):
            self._show_entity(self._rows[index][0].name)

    # -- detail and neighbourhood ---------------------------------------------------------------
    def _show_entity(self, name: str) -> None:
        if self.graph is None:
            return
        self._current = name
        records = self.graph.find(name)
        text = Text()
        for record in records:
            text.append(join(safe(record.name, "bold"), Text("  "), safe(record.entity_type, "italic"),
                             Text(f"  line {record.line}\n", style="dim")))
            for obs in record.observations[:MAX_LISTED]:
                text.append(join(Text("  • "), safe(obs), Text("\n")))
            if len(record.observations) > MAX_LISTED:
                text.append(Text(f"  … {len(record.observations) - MAX_LISTED:,} more observations\n", style="dim"))
            for finding in self._by_line.get(record.line, []):
                text.append(join(severity_text(finding.severity.value), Text(" "), safe(finding.message), Text("\n")))
        out, inc = self._out.get(name, []), self._in.get(name, [])
        text.append(Text(f"\nrelations: {len(out):,} out, {len(inc):,} in\n", style="bold"))
        for relation in out[:MAX_LISTED]:
            text.append(join(Text("  —"), safe(relation.relation_type), Text("→ "), safe(relation.target), Text("\n")))
        for relation in inc[:MAX_LISTED]:
            text.append(join(Text("  ←"), safe(relation.relation_type), Text("— "), safe(relation.source), Text("\n")))
        if len(out) > MAX_LISTED or len(inc) > MAX_LISTED:
            text.append(Text("  … more in the neighbourhood tree\n", style="dim"))
        self.query_one("#entity-detail", Static).update(text)
        tree = self.query_one("#neighbourhood", Tree)
        tree.clear()
        tree.root.set_label(safe(name, "bold"))
        tree.root.data = (name, 0)
        self._add_neighbours(tree.root)
        tree.root.expand()

    def _add_neighbours(self, node: TreeNode) -> None:
        name, depth = node.data
        if depth >= 2:
            return
        links = [(r.relation_type, r.target, "→") for r in self._out.get(name, [])]
        links += [(r.relation_type, r.source, "←") for r in self._in.get(name, [])]
        for relation_type, other, arrow in links[:MAX_CHILDREN]:
            label = join(Text(f"{arrow} "), safe(relation_type, "dim"), Text(" "), safe(other))
            child = node.add(label, data=(other, depth + 1), allow_expand=depth + 1 < 2)
            del child
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

    # -- curating -----------------------------------------------------------------------------
    def _apply(self, operation: g.Operation) -> None:
        """Save ``operation`` through :func:`memtui.core.graph.commit` and reload the views."""
        if self.graph is None:
            return
        path = self.app.ws.graph_file
        before = self.graph
        try:
            saved = g.commit(path, before, operation)
        except (g.GraphEditError, g.GraphConflictError, OSError) as exc:
            self.notify(str(exc), title="Not saved", severity="error", markup=False, timeout=10)
            return
        if saved.written:
            index_saved = getattr(self.app, "index_saved", None)  # searchable at once (issue 8)
            if index_saved is not None:
                index_saved([self.app.ws.shown(path)])
            undo_from = before if not saved.reapplied else None
            self._undo = (undo_from, saved.graph.source_sha256, saved.change.summary) if undo_from else None
        message = saved.change.summary + ("" if saved.written else " (nothing written)")
        if saved.reapplied:
            message += " — the file had changed on disk; the edit was applied to the new content"
        self.notify(message, markup=False)
        self._loaded(saved.graph, audit(saved.graph, near=len(saved.graph.entities) < 20000))
        if self._current and saved.graph.find(self._current):
            self._show_entity(self._current)

    def action_add_observation(self) -> None:
        if not self._current:
            return
        name = self._current

        def done(text: str | None) -> None:
            if text:
                self._apply(g.AddObservation(name, text))

        self.app.push_screen(AskText(f"New observation for {name}:"), done)

    def action_rename(self) -> None:
        if not self._current:
            return
        name = self._current

        def done(new: str | None) -> None:
            if new is not None and new != name:
                self._current = new
                self._apply(g.RenameEntity(name, new))

        self.app.push_screen(AskText(f"Rename {name} to:", name), done)

    def action_delete(self) -> None:
        if not self._current:
            return
        name = self._current
        count = len(self._out.get(name, [])) + len(self._in.get(name, []))

        def done(yes: bool | None) -> None:
            if yes:
                self._apply(g.DeleteEntity(name))

        self.app.push_screen(Confirm(f"Delete the entity {name} and its {count} relations?"), done)

    def action_undo(self) -> None:
        if self._undo is None:
            self.notify("nothing to undo", markup=False)
            return
        previous, written, summary = self._undo

        def done(yes: bool | None) -> None:
            if yes:
                self._apply(g.Restore(previous, written, f"undid: {summary}"))
                self._undo = None

        self.app.push_screen(Confirm(f"Undo the last action ({summary})?"), done)
