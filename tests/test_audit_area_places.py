"""The Audit area's table at 80 columns: each place keeps its file name and line number in view
(a long place is cut from the left, never from the right, where it would turn ``:13`` into
``:1``)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.audit import PLACE_WIDTH
from tests.conftest import wait_for


async def test_places_keep_their_end_in_view_at_80_columns(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.report is not None, what="the start-up audit")
        await pilot.press("2")
        table = app.screen.query_one("#findings", DataTable)
        await wait_for(pilot, lambda: table.row_count > 0, what="the findings table")
        shown = app.screen._shown  # the findings in row order
        long = 0
        for row, finding in enumerate(shown):
            cell = str(table.get_row_at(row)[2])
            assert finding.place.endswith(cell.lstrip("…")) and len(cell) <= PLACE_WIDTH, (cell, finding.place)
            long += cell.startswith("…")
        assert long, "the sample has places longer than the column: the test needs one"
        right_edge = sum(table.columns[key].get_render_width(table) for key in ("severity", "code", "place"))
        assert right_edge <= 80 - 2, "the place column ends inside an 80-column screen"
