"""The Graph area with a huge observation and duplicate records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, OptionList, TextArea

from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.graph.detail import OBSERVATION_SHOWN
from memtui.ui.screens.graph.screen import GraphScreen
from memtui.ui.widgets import Confirm, ValueViewer
from tests.conftest import wait_for


def _ws(tmp_path: Path, *records: dict) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "graph.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records))
    return root


async def _graph(pilot, app) -> GraphScreen:  # noqa: ANN001
    await app.switch_mode("graph")
    screen = app.screen
    assert isinstance(screen, GraphScreen)
    await wait_for(pilot, lambda: screen.graph is not None and screen.current is not None)
    return screen


@pytest.mark.slow
async def test_a_huge_observation_is_shown_cut_and_all_of_it_on_request(tmp_path: Path) -> None:
    huge = "".join(f"part {i % 1000} of a long observation " for i in range(120_000))  # 3.5 MB, one observation
    root = _ws(tmp_path, {"type": "entity", "name": "Big", "entityType": "note", "observations": [huge, "short"]})
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _graph(pilot, app)
        listing = screen.query_one("#observations", OptionList)
        prompt = listing.get_option_at_index(0).prompt
        assert len(prompt.plain) < OBSERVATION_SHOWN + 200 and "more characters" in prompt.plain
        assert "v shows all" in prompt.plain
        listing.highlighted = 0
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ValueViewer))
        viewer = app.screen
        area = viewer.query_one("#value", TextArea)
        assert area.text == huge[:ValueViewer.PAGE_CHARS] and viewer.pages == -(-len(huge) // ValueViewer.PAGE_CHARS)
        await pilot.press("right_square_bracket")
        assert viewer.query_one("#value", TextArea).text == huge[ValueViewer.PAGE_CHARS:2 * ValueViewer.PAGE_CHARS]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, GraphScreen))


async def test_an_observation_added_to_the_selected_second_record_lands_there(tmp_path: Path) -> None:
    root = _ws(tmp_path, {"type": "entity", "name": "Dup", "entityType": "t", "observations": ["first"]},
               {"type": "entity", "name": "Dup", "entityType": "t", "observations": ["second"]})
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _graph(pilot, app)
        table = screen.query_one("#entities", DataTable)
        table.focus()
        table.move_cursor(row=1)
        await wait_for(pilot, lambda: screen.detail.record_line == 2)
        listing = screen.query_one("#observations", OptionList)
        assert [listing.get_option_at_index(i).prompt.plain for i in range(listing.option_count)] == ["• second"]
        await pilot.press("a")
        await pilot.pause()
        await pilot.press(*"added")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        path = root / "memory" / "graph.jsonl"
        await wait_for(pilot, lambda: "added" in path.read_text())
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert [r["observations"] for r in lines] == [["first"], ["second", "added"]]
        await wait_for(pilot, lambda: not screen.saving)
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_for(pilot, lambda: len(path.read_text().splitlines()) == 1)
        assert json.loads(path.read_text())["observations"] == ["first"]
