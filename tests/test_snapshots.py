"""SVG snapshots of every area: each area at 80×24 and 120×40 in the default theme,
the help screen, a notes conflict, a side-by-side diff, and a tree whose names hold ``[``, ``]``
and control characters.

Deterministic: the sample workspace is copied to a path the screen never shows (the header's
workspace path is replaced by a fixed word), the TUI clock (:mod:`memtui.ui.clock`) is fixed,
every worker the test started is waited for (never a sleep), toasts are cleared and cursors do
not blink. Update after a deliberate change with ``pytest tests/test_snapshots.py
--snapshot-update`` and look at the SVGs (``__snapshots__/test_snapshots/``) before committing.
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
from pathlib import Path

import pytest

from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.areas import AREAS
from tests.conftest import SAMPLE, click, settle, wait_for

#: the clock the snapshots are taken at (ages in Proposals, the consolidation pass's today)
FIXED_NOW = _dt.datetime(2026, 6, 1, 12, 0, tzinfo=_dt.timezone.utc)
SIZES = [(80, 24), (120, 40)]


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.ui import clock

    monkeypatch.setattr(clock, "now", lambda: FIXED_NOW)
    monkeypatch.setattr(clock, "took", lambda seconds: "0.1 s")


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(SAMPLE, target, symlinks=True)
    return target


def _ready(area: str):  # noqa: ANN202
    """The condition under which ``area`` has shown its data."""
    def ready(app: MemtuiApp) -> bool:
        screen = app.screen
        if app.current_mode != area or app.report is None or app.index_report is None:
            return False
        if area == "graph":
            return screen.graph is not None
        if area == "backup":
            return screen.state is not None
        if area == "notes":
            return screen.note is not None
        if area == "proposals":
            return bool(getattr(screen, "_rows", None))
        if area == "sessions":  # the histories, then the first one's turns, each read in a worker
            return screen.query_one("#histories").row_count > 0 and screen.query_one("#turns").option_count > 0
        return True
    return ready


async def _still(pilot) -> None:  # noqa: ANN001
    """Settle the app for a picture: workers done, toasts gone, the path fixed, no blinking."""
    app = pilot.app
    for _ in range(3):
        await settle(pilot)
    app.clear_notifications()
    app.sub_title = "sample workspace"
    app.screen.sub_title = "sample workspace"
    for widget in app.screen.query("Input, TextArea"):
        widget.cursor_blink = False
    await pilot.pause()


def _open(area: str, then=None):  # noqa: ANN001, ANN202
    async def run_before(pilot) -> None:  # noqa: ANN001
        app = pilot.app
        await pilot.press(next(a.key for a in AREAS if a.mode == area))
        if area == "search":
            await pilot.press("escape")  # the query box is focused on arrival
        await wait_for(pilot, lambda: _ready(area)(app), what=f"the {area} area")
        if then is not None:
            await then(pilot)
        await _still(pilot)
    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("area", [a.mode for a in AREAS])
def test_area(snap_compare, sample: Path, area: str, size: tuple[int, int]) -> None:
    then = None
    if area == "search":
        async def then(pilot) -> None:  # noqa: ANN001 - a query that finds something in the sample
            box = pilot.app.screen.query_one("#search-query")
            box.value = "courier"
            await wait_for(pilot, lambda: pilot.app.screen.query_one("#search-results").row_count > 0,
                           what="search results")
            pilot.app.screen.query_one("#search-results").focus()
    app = MemtuiApp(Workspace.open(sample))
    try:
        assert snap_compare(app, terminal_size=size, run_before=_open(area, then))
    finally:
        app.session.close()


def test_help_screen(snap_compare, sample: Path) -> None:
    async def then(pilot) -> None:  # noqa: ANN001
        from memtui.ui.keys import KeysHelp

        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, KeysHelp))

    app = MemtuiApp(Workspace.open(sample))
    try:
        assert snap_compare(app, terminal_size=(120, 40), run_before=_open("graph", then))
    finally:
        app.session.close()


def test_side_by_side_diff(snap_compare, sample: Path) -> None:
    async def then(pilot) -> None:  # noqa: ANN001
        screen = pilot.app.screen
        screen.query_one("#prop-tabs").active = "tab-side"
        await pilot.pause()

    app = MemtuiApp(Workspace.open(sample))
    try:
        assert snap_compare(app, terminal_size=(160, 40), run_before=_open("proposals", then))
    finally:
        app.session.close()


def test_notes_conflict(snap_compare, sample: Path) -> None:
    """The member and an agent changed the same line: the bar offers to resolve, and the merge
    screen shows both sides of the conflict."""
    notes_file = sample / "memory" / "MEMORY_CUSTOM.md"
    notes_file.write_text("tone: formal\nkeep this line\n", encoding="utf-8")

    async def then(pilot) -> None:  # noqa: ANN001
        from memtui.ui.screens.merge import MergeScreen

        screen = pilot.app.screen
        await wait_for(pilot, lambda: screen.editor.text.startswith("tone: formal"))
        screen.editor.load_text("tone: terse\nkeep this line\n")
        screen.dirty = True
        notes_file.write_text("tone: casual\nkeep this line\n", encoding="utf-8")
        screen.action_save()
        await wait_for(pilot, lambda: screen.query_one("#notes-conflict").has_class("shown"))
        await click(pilot, "#conflict-resolve")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MergeScreen))

    app = MemtuiApp(Workspace.open(sample))
    try:
        assert snap_compare(app, terminal_size=(120, 40), run_before=_open("notes", then))
    finally:
        app.session.close()


@pytest.fixture
def odd_names_tree(tmp_path: Path, shared: Path) -> Path:
    """A memory tree whose folder names, titles and one-liners are the bug inputs' odd entity names (brackets, slashes, control characters)."""
    names = [json.loads(line)["name"] for line in (shared / "bug-inputs/B17/memory.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip() and json.loads(line).get("type") == "entity"]
    root = tmp_path / "b17"
    memory = root / "memory"
    memory.mkdir(parents=True)
    lines = ["---", "owner: team.b17", "---", "# B17 names", ""]
    for i, name in enumerate(n for n in names if n and len(n) < 80):
        if "/" not in name:  # a folder per name a folder can have (newline, tab, RTL, brackets)
            folder = memory / name
            folder.mkdir()
            (folder / "AGENTS.md").write_text(f"# {name}\n- [Entry](e.md) — {name}\n", encoding="utf-8")
            (folder / "e.md").write_text(f"# {name}\n\n{name}\n", encoding="utf-8")
        (memory / f"a{i:02}.md").write_text(f"# {name}\n", encoding="utf-8")
        lines.append(f"- [Article {i:02}](a{i:02}.md) — {name}")
    (memory / "AGENTS.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_odd_entity_names_in_the_tree(snap_compare, odd_names_tree: Path) -> None:
    async def then(pilot) -> None:  # noqa: ANN001
        tree = pilot.app.screen.query_one("#nodes")
        await wait_for(pilot, lambda: len(tree.root.children) > 5, what="the B17 folders")

    app = MemtuiApp(Workspace.open(odd_names_tree))
    try:
        assert snap_compare(app, terminal_size=(120, 40), run_before=_open("tree", then))
    finally:
        app.session.close()
