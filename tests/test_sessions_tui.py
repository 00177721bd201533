"""The Sessions area: histories as turns, JSON on demand, mark as seen."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable, OptionList

from memtui.core import sessions
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.sessions import SessionsScreen
from tests.conftest import wait_for


async def _open(pilot, app) -> SessionsScreen:  # noqa: ANN001
    await pilot.press("9")
    await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen._histories)
    return app.screen


async def test_histories_are_listed_and_read_as_turns(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, app)
        table = screen.query_one("#histories", DataTable)
        assert table.row_count == 2
        turns = screen.query_one("#turns", OptionList)
        await wait_for(pilot, lambda: turns.option_count == 13)
        first = str(turns.get_option_at_index(0).prompt)
        assert "user" in first and "{" not in first  # a turn, not raw JSON
        tool = str(turns.get_option_at_index(3).prompt)
        assert "▸ billinghub.get_cod" in tool
        turns.focus()
        turns.highlighted = 3
        await pilot.pause()
        detail = str(screen.query_one("#turn-detail").render())
        assert "result billinghub.get_cod" in detail and '"role"' not in detail
        await pilot.press("o")
        await wait_for(pilot, lambda: '"role": "tool"' in str(screen.query_one("#turn-detail").render()))


async def test_mark_seen_records_the_histories_through_the_guarded_write(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, app)
        await pilot.press("m")
        await wait_for(pilot, lambda: sessions.last_seen(Session.open(sample_copy).store))
    seen = sessions.last_seen(Session.open(sample_copy).store)
    assert set(seen) == {p.stem for p in (sample_copy / "sessions/durable").glob("*.jsonl")}
    entries = [e for e in Session.open(sample_copy).audit.entries() if e.action == "sessions.seen"]
    assert len(entries) == 1


async def test_a_rewritten_history_is_marked_and_a_bad_line_kept(sample_copy: Path) -> None:
    history = sample_copy / "sessions/durable/tg-4411-2026-11-02.jsonl"
    with Session.open(sample_copy) as session:
        sessions.record(session)
    lines = history.read_text().splitlines(keepends=True)
    history.write_text("".join(lines[:2]) + json.dumps({"role": "user", "content": "changed"}) + "\n{bad\n")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, app)
        status = str(screen.query_one("#sessions-status").render())
        assert "1 error" in status
        turns = screen.query_one("#turns", OptionList)
        await wait_for(pilot, lambda: turns.option_count == 4)
        assert "▲" in str(turns.get_option_at_index(2).prompt)  # the first changed line
        assert "{bad" in str(turns.get_option_at_index(3).prompt)  # kept as written


async def test_a_session_search_hit_opens_at_its_turn(sample_copy: Path) -> None:
    from memtui.core.search import index as index_mod
    from memtui.core.search.query import search
    from memtui.ui.screens.search import open_hit

    ws = Workspace.open(sample_copy)
    index = index_mod.SearchIndex(ws)
    index.update()
    hits = search(index, "kind:session payout").hits
    assert hits and all(h.kind == "session" and h.path.startswith("sessions/durable/") for h in hits)
    hit = next(h for h in hits if h.line and h.line > 1)
    app = MemtuiApp(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await open_hit(app, hit)
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen._history is not None)
        turns = app.screen.query_one("#turns", OptionList)
        await wait_for(pilot, lambda: turns.highlighted is not None
                       and app.screen._turn(turns.highlighted).line == hit.line)


async def test_the_area_follows_a_growing_history(sample_copy: Path) -> None:
    history = sample_copy / "sessions/durable/tg-4411-2026-11-02.jsonl"
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, app)
        turns = screen.query_one("#turns", OptionList)
        await wait_for(pilot, lambda: turns.option_count == 13)
        with open(history, "a", encoding="utf-8") as handle:  # the agent appends a turn
            handle.write(json.dumps({"ts": "2026-11-02T09:19:00Z", "role": "user", "content": "one more"}) + "\n")
        await wait_for(pilot, lambda: turns.option_count == 14)
