"""A row highlight handled after the cursor moved on is recognised, so no area shows the details
of a row the cursor has left (a refilled table posts one for its first row, then one for the
row the cursor is put on)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from memtui.ui.widgets import left_behind


class _Table(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable()


async def test_a_highlight_of_a_row_the_cursor_left_is_left_behind() -> None:
    app = _Table()
    async with app.run_test() as pilot:
        table = app.query_one(DataTable)
        table.add_column("n")
        keys = [table.add_row(str(i)) for i in range(3)]
        table.move_cursor(row=2)
        await pilot.pause()
        assert left_behind(DataTable.RowHighlighted(table, 0, keys[0]))
        assert not left_behind(DataTable.RowHighlighted(table, 2, keys[2]))
