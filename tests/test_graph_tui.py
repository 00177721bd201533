"""The Graph screen, driven headless with Textual's Pilot (issue 4, B15, B17, B23)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from textual.widgets import DataTable, OptionList, Static

from memtui.core import graph as g
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.graph_screen import PAGE, Confirm, GraphScreen


async def wait_for(pilot, condition, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.05)


def _workspace(tmp_path: Path, source: Path | None = None, data: bytes | None = None) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    target = root / "memory" / "graph.jsonl"
    if source is not None:
        shutil.copyfile(source, target)
    else:
        target.write_bytes(data or b"")
    return root


async def _open_graph(pilot, app) -> GraphScreen:
    await app.switch_mode("graph")
    screen = app.screen
    assert isinstance(screen, GraphScreen)
    await wait_for(pilot, lambda: screen.graph is not None)
    await pilot.pause()
    return screen


async def test_b17_names_show_literally_and_every_entity_opens(shared: Path, tmp_path: Path) -> None:
    root = _workspace(tmp_path, shared / "bug-inputs" / "B17" / "memory.jsonl")
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_graph(pilot, app)
        table = screen.query_one("#entities", DataTable)
        assert table.row_count == 18
        names = {str(table.get_row_at(i)[0]) for i in range(table.row_count)}
        assert "[bold red]urgent[/bold red] fixes" in names and "[/]" in names
        for _ in range(table.row_count):  # move through every entity: no MarkupError
            await pilot.press("down")
        screen._show_entity("[/]")
        listing = screen.query_one("#observations", OptionList)
        shown = " ".join(str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count))
        detail = str(screen.query_one("#entity-detail", Static).render())
        assert "[link=https://example.invalid]click[/link]" in shown and "links [to]" in detail


async def test_b15_loads_and_an_edit_keeps_bad_lines_then_undo(shared: Path, tmp_path: Path) -> None:
    root = _workspace(tmp_path, shared / "bug-inputs" / "B15" / "memory.jsonl")
    path = root / "memory" / "graph.jsonl"
    original = path.read_bytes()
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_graph(pilot, app)
        assert screen.query_one("#entities", DataTable).row_count == 4
        assert {f.line for f in screen.findings if f.code == "graph-line-malformed"} == {5, 9, 12}
        screen._show_entity("tide-gauge")
        screen._apply(g.AddObservation("tide-gauge", "checked in TUI"))
        await wait_for(pilot, lambda: not screen.saving)
        after = g.load(path)
        assert after.entity("tide-gauge").observations[-1] == "checked in TUI"
        assert len(after.bad_lines()) == len(g.loads(original).bad_lines())
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_for(pilot, lambda: path.read_bytes().rstrip(b"\n") == original)


async def test_big_graph_is_paged(tmp_path: Path) -> None:
    n = PAGE * 3 + 7
    lines = [json.dumps({"type": "entity", "name": f"node-{i:05d}", "entityType": "x", "observations": ["o"]})
             for i in range(n)]
    lines += [json.dumps({"type": "relation", "from": "node-00000", "to": f"node-{i:05d}", "relationType": "r"})
              for i in range(1, n)]
    root = _workspace(tmp_path, data=("\n".join(lines) + "\n").encode())
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_graph(pilot, app)
        table = screen.query_one("#entities", DataTable)
        assert table.row_count == PAGE
        assert f"1–{PAGE} of {n:,} entities" in str(screen.query_one("#graph-count", Static).render())
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert str(table.get_row_at(0)[0]) == f"node-{PAGE:05d}"
        screen._show_entity("node-00000")  # the hub: children capped, tree built lazily
        tree = screen.query_one("#neighbourhood")
        assert len(tree.root.children) <= 201
