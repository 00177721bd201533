"""The Migrate area: a domain migrated end to end from the TUI, pass by pass, in a worker."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from memtui.core import migrate
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.migrate import MigrateScreen
from memtui.ui.widgets import AskText, Confirm
from tests.conftest import wait_for
from tests.v1corpus import FAIL_DOMAIN, PASS_DOMAIN, build


async def _answer(pilot, app, text: str) -> None:  # noqa: ANN001
    await wait_for(pilot, lambda: isinstance(app.screen, AskText), what="the question")
    box = app.screen.query_one("Input")
    box.value = text
    await pilot.press("enter")


async def _next(pilot, app, screen: MigrateScreen, step: str) -> None:  # noqa: ANN001
    await pilot.press("n")
    if step in ("classify", "index"):
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what=f"the {step} question")
        await pilot.press("y")
    await wait_for(pilot, lambda: not screen.running and screen.current is not None
                   and (screen.current.get("step") == step or screen.current.get("status") == migrate.NOT_MIGRATED),
                   what=f"the {step} pass")


async def test_a_domain_is_migrated_end_to_end_from_the_tui(tmp_path: Path) -> None:
    c = build(tmp_path / "c")
    ws = Workspace.open(c.workspace)
    app = MemtuiApp(ws, session=Session.open(ws, purpose="tui", profile="support.parcels-lost"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("M")
        screen = app.screen
        assert isinstance(screen, MigrateScreen)
        await pilot.press("i")
        await _answer(pilot, app, PASS_DOMAIN)
        await _answer(pilot, app, str(c.v1))
        await wait_for(pilot, lambda: not screen.running and screen.current is not None, what="the inventory")
        assert screen.current["step"] == "inventory"
        for step in ("classify", "rewrite", "index"):
            await _next(pilot, app, screen, step)
        await pilot.press("n")
        await _answer(pilot, app, str(c.cases[PASS_DOMAIN]))
        await wait_for(pilot, lambda: not screen.running and screen.current.get("gate"), what="the gate")
        assert screen.current["status"] == migrate.MIGRATED
        report = str(screen.query_one("#mig-report", Static).content)
        assert "beats the baseline: **yes**" in report and "Time of each pass" in report
    with Session.open(c.workspace, read_only=True) as s:
        assert migrate.state(s.store, PASS_DOMAIN)["status"] == migrate.MIGRATED


async def test_a_refusal_is_said_and_nothing_changes(tmp_path: Path) -> None:
    c = build(tmp_path / "c", filler=20)
    ws = Workspace.open(c.workspace)
    app = MemtuiApp(ws, session=Session.open(ws, purpose="tui", profile="someone.else"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("M")
        screen = app.screen
        await pilot.press("i")
        await _answer(pilot, app, FAIL_DOMAIN)
        await _answer(pilot, app, str(tmp_path / "nowhere"))
        await pilot.pause()
        assert screen.current is None  # nothing was started
        with migrate.running(Workspace.open(c.workspace), FAIL_DOMAIN):
            await pilot.press("i")
            await _answer(pilot, app, FAIL_DOMAIN)
            await _answer(pilot, app, str(c.v1))
            await wait_for(pilot, lambda: not screen.running and any(
                "already running" in n.message for n in app._notifications), what="the refusal")
        assert screen.current is None
