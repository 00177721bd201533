"""The entity table of the Graph area: one page of the filtered, sorted entities.

The table shows :data:`PAGE` rows at a time ("1–500 of 50,000"; ``[``/``]`` page), because a
DataTable costs about 1.4 s per 10,000 rows (LIBRARY-NOTES). Moving the cursor posts
:class:`~.messages.EntitySelected`; the screen shows that entity in the detail pane.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from memtui.core import graph as g
from memtui.core.text import plural
from memtui.ui.screens.graph.messages import EntitySelected
from memtui.ui.screens.graph.model import SORTS, GraphModel
from memtui.ui.text import safe
from memtui.ui.widgets import left_behind

#: Rows of the entity table drawn at once.
PAGE = 500


class EntityTable(DataTable):
    """The paged entity table (see the module docstring).

    Attributes:
        model: the read shown (``None`` before the first, or while a snapshot's listing is).
        matches: the entities the filter keeps, in the table's order, with their relation counts.
        page: the page shown (0-based).
        order: the key of the column the rows are sorted by.
    """

    DEFAULT_CSS = """
    EntityTable { width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.model: GraphModel | None = None
        self.matches: list[tuple[g.Entity, int]] = []
        self.page = 0
        self.order = "name"
        #: the largest counts of a snapshot's listing, shown before its records are read
        self.listed_counts = (0, 0)
        self._column_fit: tuple[int, int, int, int] | None = None

    def on_mount(self) -> None:
        self._make_columns()

    # -- columns --------------------------------------------------------------------------------
    def _count_widths(self) -> tuple[int, int]:
        """Widths of the two count columns: the largest count of the whole graph written with
        thousands separators (a column of 4 showed 20,000 observations as ``2000``), at least
        the header's 4."""
        most_obs, most_rel = self.model.largest_counts() if self.model is not None else self.listed_counts
        return max(4, len(f"{most_obs:,}")), max(4, len(f"{most_rel:,}"))

    def _widths(self) -> tuple[int, int, int, int]:
        """Name, type, observation-count and relation-count column widths that fit the table
        now (at 80 columns a wide name column pushed the counts off-screen); the counts are
        never cut, the name and type give way."""
        width = self.size.width or self.app.size.width // 2
        obs_w, rel_w = self._count_widths()
        spare = max(20, width - 2 - 4 * 2 - obs_w - rel_w)  # scrollbar, cell padding, the counts
        kind = min(18, max(6, spare // 3))
        return spare - kind, kind, obs_w, rel_w

    def _make_columns(self) -> None:
        name_w, type_w, obs_w, rel_w = self._column_fit = self._widths()
        self.add_column("name", key="name", width=name_w)
        self.add_column("type", key="type", width=type_w)
        self.add_column("obs.", key="observations", width=obs_w)
        self.add_column("rel.", key="relations", width=rel_w)

    def fit_columns(self) -> bool:
        """Make the columns again when the widths that fit changed; True when they were."""
        if self._widths() == self._column_fit:
            return False
        self.clear(columns=True)
        self._make_columns()
        return True

    # -- rows -----------------------------------------------------------------------------------
    def show_listing(self, rows: list) -> Text:  # noqa: ANN001 - snapshot listing rows
        """A kept snapshot's listing, before its records are read: its first page by name.
        Returns the count line to show."""
        self.listed_counts = (max((r.observations for r in rows), default=0),
                              max((r.relations for r in rows), default=0))
        self.fit_columns()
        self.clear()
        rows = sorted(rows, key=lambda r: r.name.casefold())
        for i, row in enumerate(rows[:PAGE]):
            self.add_row(safe(row.name), safe(row.entity_type), Text(f"{row.observations:,}", justify="right"),
                         Text(f"{row.relations:,}", justify="right"), key=str(i))
        return Text(f"1–{min(PAGE, len(rows)):,} of {len(rows):,} entities · sorted by name")

    def refill(self, query: str, keep_page: bool = False) -> None:
        """Take the rows ``query`` keeps from the model (the first page, or the same page when
        ``keep_page``); draw them with :meth:`draw_page`."""
        if self.model is None:
            return
        self.matches = self.model.matching(query, self.order)
        pages = max(1, -(-len(self.matches) // PAGE))
        self.page = min(self.page, pages - 1) if keep_page else 0

    def turn(self, step: int) -> None:
        """Go ``step`` pages on (back when negative), within the pages there are."""
        pages = max(1, -(-len(self.matches) // PAGE))
        self.page = max(0, min(pages - 1, self.page + step))

    def next_sort(self) -> None:
        """Sort by the next column's key (name, type, observations, relations, name…)."""
        names = list(SORTS)
        self.order = names[(names.index(self.order) + 1) % len(names)]

    def holds(self, name: str) -> bool:
        """True when the filter keeps entity ``name``."""
        return any(e.name == name for e, _ in self.matches)

    def go_to(self, name: str, line: int | None) -> None:
        """Turn to the page of entity ``name`` (its record at ``line`` when given)."""
        index = next((i for i, (e, _) in enumerate(self.matches) if e.name == name and (line is None or e.line == line)),
                     None)
        if index is not None:
            self.page = index // PAGE

    def draw_page(self, current: str | None, record_line: int | None) -> tuple[str, int | None] | None:
        """Draw the page; keep the cursor on ``current`` (its record at ``record_line``) when it
        is on the page. Returns the entity to show, ``(name, line)``: ``current`` while it is in
        the graph, else the page's first; ``None`` when no entity matches."""
        assert self.model is not None and self._column_fit is not None
        graph = self.model.graph
        self.clear()
        start = self.page * PAGE
        shown = self.matches[start:start + PAGE]
        for i, (entity, degree) in enumerate(shown):
            name = safe(entity.name, "bold red" if self.model.flagged(entity.name) else "")
            name.truncate(self._column_fit[0], overflow="ellipsis")
            kind = safe(entity.entity_type)
            kind.truncate(self._column_fit[1], overflow="ellipsis")
            self.add_row(name, kind, Text(f"{len(entity.observations):,}", justify="right"),
                         Text(f"{degree:,}", justify="right"), key=str(start + i))
        if current is not None and graph.find(current):
            row = next((i for i, (entity, _) in enumerate(shown)
                        if entity.name == current and (record_line is None or entity.line == record_line)), None)
            if row is not None:  # keep the cursor on it (after an edit reloads the page)
                self.move_cursor(row=row, animate=False)
            return current, record_line
        if shown:
            return shown[0][0].name, shown[0][0].line
        return None

    def counts(self, cached: bool) -> Text:
        """The count line of the page: which rows of how many, relations, findings (``cached``:
        a kept snapshot, not audited), the order, and the page keys when there are pages."""
        assert self.model is not None
        start = self.page * PAGE
        shown_to = min(start + PAGE, len(self.matches))
        findings = "not audited" if cached else plural(len(self.model.findings), "finding")
        text = Text(f"{start + 1 if self.matches else 0:,}–{shown_to:,} of {plural(len(self.matches), 'entity', 'entities')}"
                    f" · {plural(len(self.model.graph.relations), 'relation')} · {findings} · sorted by {self.order}")
        if len(self.matches) > PAGE:
            text.append(Text("  ([ ] pages)", style="dim"))
        return text

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The cursor moved to a row: say which entity (the screen shows it)."""
        event.stop()
        if left_behind(event):  # showing it would replace the entity a jump chose, and its relation
            return
        index = self.page * PAGE + event.cursor_row
        if self.model is not None and 0 <= index < len(self.matches):
            entity = self.matches[index][0]
            self.post_message(EntitySelected(entity.name, entity.line))
