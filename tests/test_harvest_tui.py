"""The harvest of a case from the Sessions and Consolidate areas: the report, and nothing proposed."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from memtui.core import consolidate
from memtui.core import governance as gov
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.consolidate import ConsolidateScreen
from memtui.ui.screens.sessions import SessionsScreen
from memtui.ui.widgets import ValueViewer
from tests.conftest import settle, wait_for
from tests.test_harvest import CASE, case_ws  # noqa: F401 - the fixture of a closed case

__all__ = ["case_ws"]


def _proposed(ws: Path) -> int:
    with Session.open(ws, read_only=True) as s:
        return len(gov.Ledger(s.store).versions())


async def test_h_in_sessions_shows_the_harvest_of_the_history_case(case_ws: Path) -> None:  # noqa: F811
    before = _proposed(case_ws)
    app = MemtuiApp(Workspace.open(case_ws))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("9")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen._histories)
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        row = next(i for i, h in enumerate(screen._histories) if h.key.startswith(CASE))
        screen.query_one("#histories", DataTable).move_cursor(row=row)
        await wait_for(pilot, lambda: screen._history is not None and screen._history.key.startswith(CASE))
        await pilot.press("H")
        await wait_for(pilot, lambda: isinstance(app.screen, ValueViewer), what="the harvest report")
        viewer = app.screen
        assert isinstance(viewer, ValueViewer)
        report = viewer._text
        assert f"# Harvest of case {CASE}" in report
        for section in ("## Learned", "## Reused", "## Missing"):
            assert section in report
        assert "pin-reset.md@1" in report  # learned: the proposal the case filed
        assert "gps-drift.md@2" in report  # reused: the version it used
        assert "вратичката не се отваря" in report  # missing: the search with no precedent
        await settle(pilot)
    assert _proposed(case_ws) == before  # a dry run: nothing filed


async def _consolidate(pilot, app) -> ConsolidateScreen:  # noqa: ANN001
    await pilot.press("0")
    await wait_for(pilot, lambda: isinstance(app.screen, ConsolidateScreen) and app.screen.report is not None)
    assert isinstance(app.screen, ConsolidateScreen)
    return app.screen


def _candidate(**detail) -> consolidate.Candidate:  # noqa: ANN003
    return consolidate.Candidate("skill-defect", "support/courier-app", None, ["skills/parcel-locker"],
                                 "a defect", "ask the owner", "memtui use …", [None], detail)


async def test_h_in_consolidate_shows_the_harvest_of_the_candidate_case(case_ws: Path) -> None:  # noqa: F811
    app = MemtuiApp(Workspace.open(case_ws))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _consolidate(pilot, app)
        screen._rows = [_candidate(case=CASE)]
        await pilot.press("H")
        await wait_for(pilot, lambda: isinstance(app.screen, ValueViewer), what="the harvest report")
        report = app.screen._text  # type: ignore[attr-defined]
        assert f"# Harvest of case {CASE}" in report and "## Missing" in report
        await settle(pilot)


async def test_h_in_consolidate_without_a_case_says_how_to_harvest(case_ws: Path) -> None:  # noqa: F811
    app = MemtuiApp(Workspace.open(case_ws))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _consolidate(pilot, app)
        screen._rows = [_candidate(cases=["CASE-1", "CASE-2"])]
        await pilot.press("H")
        await wait_for(pilot, lambda: any("memtui harvest CASE" in str(n.message) for n in app._notifications))
        assert not isinstance(app.screen, ValueViewer)
