"""The Consolidate area, driven with Textual's Pilot."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from memtui.core import governance as gov
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.consolidate import ConsolidateScreen
from memtui.ui.widgets import AskText, Confirm
from tests.conftest import open_area, wait_for
from tests.test_consolidate import OTHER, SUPPORT, seeded


async def _open(pilot, app) -> ConsolidateScreen:  # noqa: ANN001
    screen = await open_area(pilot, "0")
    assert isinstance(screen, ConsolidateScreen)
    await wait_for(pilot, lambda: screen.report is not None, what="the consolidation pass")
    return screen


def _select(screen: ConsolidateScreen, key: str) -> None:
    screen.query_one("#cons-table", DataTable).move_cursor(row=[c.key for c in screen._rows].index(key))


async def test_a_non_owner_is_refused_before_any_question(tmp_path: Path) -> None:
    root = seeded(tmp_path / "ws")
    app = MemtuiApp(Workspace.open(root), session=Session.open(root, purpose="tui", profile=OTHER))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, app)
        assert {c.kind for c in screen._rows} == {"duplicate", "conflict", "stale", "one-liner"}
        _select(screen, "one-liner:support/vpn.md")
        await pilot.press("o")
        await pilot.pause()
        assert not isinstance(app.screen, (Confirm, AskText)), "refused before asking"
        assert any(f"owned by {SUPPORT}" in n.message for n in app._notifications)


async def test_the_owner_refreshes_a_one_liner_contests_and_resolves(tmp_path: Path) -> None:
    root = seeded(tmp_path / "ws")
    index = root / "memory/support/AGENTS.md"
    before = index.read_bytes()
    app = MemtuiApp(Workspace.open(root), session=Session.open(root, purpose="tui", profile=SUPPORT))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, app)
        _select(screen, "one-liner:support/vpn.md")
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        assert f"acting as {SUPPORT}" in app.screen._question
        await pilot.press("y")
        await wait_for(pilot, lambda: "one-liner:support/vpn.md" not in [c.key for c in screen._rows],
                       what="the refreshed line to leave the list")
        assert b"site VPN; client profiles are per office" in index.read_bytes()
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_for(pilot, lambda: index.read_bytes() == before, what="the undo")
        _select(screen, "stale:support/vpn.md")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText))
        await pilot.press(*"CASE-8", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText) and "Why" in app.screen._prompt)
        await pilot.press(*"profiles changed", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_for(pilot, lambda: "contested:support/vpn.md" in [c.key for c in screen._rows])
        assert gov.Ledger(app.session.store).marks("support/vpn.md") == ("contested",)
        _select(screen, "contested:support/vpn.md")
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText))
        await pilot.press(*"checked again", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_for(pilot, lambda: "contested:support/vpn.md" not in [c.key for c in screen._rows])
        actions = [e.action for e in app.session.audit.entries(limit=4)][::-1]
        assert actions == ["consolidate.refresh-line", "consolidate.refresh-line-undo", "consolidate.contest",
                           "consolidate.resolve"]
        _select(screen, "stale:support/vpn.md")
        await pilot.press("p")
        await wait_for(pilot, lambda: screen.query_one("#pins-table", DataTable).row_count == 0
                       and "support/vpn.md@1" in str(screen.query_one("#pins-head").render()))
