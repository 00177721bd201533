"""Keys you can find: ids on every binding, [keys] rebinding, the help screen,
the palette's `Area: Action` commands, a footer that never cuts a label, j/k in lists."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static
from textual.widgets._footer import FooterKey

from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.areas import AREAS
from memtui.ui.keys import NOT_IN_PALETTE, KeysHelp, all_ids, bindings_of, keymap_from
from memtui.ui.widgets import AreaBar, AskText, KeyFooter
from tests.conftest import open_area, settle, wait_for


def test_every_binding_has_an_id_and_ids_are_unique_per_screen() -> None:
    from memtui.ui.screens.merge import MergeScreen
    from memtui.ui.widgets import Choose, Confirm

    for source in [MemtuiApp, AskText, Choose, Confirm, MergeScreen, KeysHelp, *(a.load() for a in AREAS)]:
        ids = [b.id for b in bindings_of(source)]
        assert all(ids), f"{source.__name__} has a binding without an id"
        assert len(ids) == len(set(ids)), f"{source.__name__} repeats an id"
    assert {"graph.merge", "proposals.approve", "app.help", "area.backup"} <= set(all_ids(MemtuiApp))


def test_keymap_from_the_user_config_reports_what_it_ignores() -> None:
    keymap, warnings = keymap_from({"graph.merge": "M", "graph.nope": "x", "app.quit": 3}, all_ids(MemtuiApp))
    assert keymap == {"graph.merge": "M"}
    assert any("'graph.nope' is not a key of memtui" in w for w in warnings)
    assert any("'app.quit' should be a key" in w for w in warnings)
    assert keymap_from("M", all_ids(MemtuiApp))[1], "a [keys] that is not a table is said, not fatal"


async def _start(ws: Path, size=(120, 40)):  # noqa: ANN202
    app = MemtuiApp(Workspace.open(ws))
    return app, app.run_test(size=size)


async def test_help_on_question_mark_and_f1_lists_the_area_and_the_global_keys(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_area(pilot, "5")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, KeysHelp))
        text = app.screen.render_text().plain
        assert text.splitlines()[0].startswith("esc") and "close this list" in text.splitlines()[0], \
            "how to close it is said first, above the fold"
        for expected in ("Graph area", "Merge another entity into this one", "graph.merge", "Lists and tables",
                         "Everywhere", "the Backup area", "area.backup", "[keys]"):
            assert expected in text
        assert text.index("Graph area") < text.index("Lists and tables") < text.index("Everywhere")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, KeysHelp))
        await open_area(pilot, "2")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, KeysHelp))
        text = app.screen.render_text().plain
        assert "Audit area" in text and "Merge another entity" not in text
    app.session.close()


async def test_keys_rebound_in_the_user_config(sample_copy: Path, tmp_path: Path) -> None:
    from memtui import userconfig

    userconfig.path().parent.mkdir(parents=True, exist_ok=True)
    userconfig.path().write_text('[keys]\n"graph.merge" = "M"\n"graph.typo" = "z"\n', encoding="utf-8")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        assert any("'graph.typo' is not a key" in n.message for n in app._notifications)
        await pilot.press("5")
        await wait_for(pilot, lambda: app.current_mode == "graph" and app.screen.is_mounted and app.screen.graph is not None)
        await pilot.press("m")
        await pilot.pause()
        assert not isinstance(app.screen, AskText), "m no longer merges"
        await pilot.press("M")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText), what="the merge question on M")
        await pilot.press("escape")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, KeysHelp))
        line = next(x for x in app.screen.render_text().plain.splitlines() if "graph.merge" in x)
        assert line.split()[0] == "M", "the help shows the key as rebound"
    app.session.close()


async def test_every_action_of_every_area_is_in_the_palette(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        titles = {c.title: c for c in app.get_system_commands(app.screen)}
        for area in AREAS:
            for binding in bindings_of(area.load()):
                if binding.action not in NOT_IN_PALETTE and not binding.action.startswith(("leave(", "switch_mode(")):
                    assert f"{area.title}: {binding.description}" in titles, (area.title, binding.description)
        assert "Proposals: Approve" in titles and "Graph: Unrelate" in titles
        await pilot.press("5")
        await wait_for(pilot, lambda: app.current_mode == "graph" and app.screen.is_mounted and app.screen.graph is not None)
        await pilot.press("1")
        await app._run_in_area("graph", "create")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText), what="Graph: New entity from the palette")
        assert app.current_mode == "graph"
    app.session.close()


async def test_the_palette_screenshot_is_saved_under_the_data_folder_and_said(sample_copy: Path) -> None:
    from memtui.paths import data_dir

    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        path = app.save_screen_picture()
        assert path is not None and Path(path).parent == data_dir() / "screenshots" and Path(path).is_file()
        await wait_for(pilot, lambda: any(path in n.message for n in app._notifications), what="the path said")
    app.session.close()


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_footer_and_area_bar_never_cut_a_label(sample_copy: Path, size: tuple[int, int]) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=size) as pilot:
        for area in AREAS:
            await pilot.press(area.key)
            if area.mode == "search":
                await pilot.press("escape")  # leave the query box
            await wait_for(pilot, lambda area=area: app.current_mode == area.mode and app.screen.is_mounted
                           and bool(app.screen.query_one(KeyFooter).query(FooterKey)),
                           what=f"the {area.mode} area's footer keys")
            footer = app.screen.query_one(KeyFooter)
            keys = list(footer.query(FooterKey))
            assert keys and all(k.region.right <= size[0] for k in keys), area.mode
            shown = [str(k.description) for k in keys]
            assert any(d == "Keys" or d.endswith("more") for d in shown), (area.mode, shown)
            # the first key the area offers now (the Notes conflict keys come first while a conflict is shown)
            first = next(b for b in bindings_of(area.load())
                         if b.show and app.screen.check_action(b.action.partition("(")[0], ()) is not False)
            assert first.description in shown, f"{area.mode}: the most important key comes first"
            bar = app.screen.query_one(AreaBar)
            text = str(bar.render())
            assert bar.bar(size[0] - 2).cell_len <= size[0] - 2
            assert area.title in text and all(f" {a.key}" in text for a in AREAS), text
    app.session.close()


async def test_j_and_k_move_in_tables(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        await wait_for(pilot, lambda: app.report is not None and app.current_mode == "audit" and app.screen.is_mounted)
        table = app.screen.query_one("#findings", DataTable)
        await wait_for(pilot, lambda: table.row_count > 2)
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("j", "j")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1
    app.session.close()


async def test_escape_leaves_the_search_box_so_area_keys_work(sample_copy: Path) -> None:
    """After 6 the digits typed into the query and Esc only cleared it."""
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_area(pilot, "6")
        box = app.screen.query_one("#search-query")
        await wait_for(pilot, lambda: app.screen.focused is box)
        await pilot.press(*"route")
        await pilot.press("escape")
        assert app.screen.focused is not box and box.value == "route", "Esc leaves the box, text kept"
        await pilot.press("escape")
        assert box.value == "", "a second Esc clears it"
        await pilot.press("2")
        await wait_for(pilot, lambda: app.current_mode == "audit" and app.screen.is_mounted, what="the area key after Esc")
        # the same rule in Audit's filter
        audit_box = app.screen.query_one("#audit-filter")
        await pilot.press("slash", *"link")
        await pilot.press("escape")
        assert app.screen.focused is not audit_box and audit_box.value == "link"
        await pilot.press("escape")
        assert audit_box.value == ""
    app.session.close()


async def test_back_in_search_the_first_escape_keeps_the_query(sample_copy: Path) -> None:
    """A new user came back with 6: typing went nowhere and the first Esc cleared the old query.
    With a query, its results keep the focus and the status says how to reach the box; one
    Escape outside the box only says that a second clears it (the same in Audit's filter);
    with an empty query, the box has the focus."""
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_area(pilot, "6")
        search_screen = app.screen
        box = search_screen.query_one("#search-query")
        await wait_for(pilot, lambda: search_screen.focused is box)
        await pilot.press(*"waybill", "enter")
        results = search_screen.query_one("#search-results", DataTable)
        await wait_for(pilot, lambda: results.row_count > 0 and search_screen.focused is results, what="results")
        await open_area(pilot, "2")
        await open_area(pilot, "6")
        await wait_for(pilot, lambda: app.screen is search_screen and app.focused is results,
                       what="the Search area resumed with its results focused")
        await pilot.pause()  # the resumed screen's pending messages handled: keys reach it
        status = str(search_screen.query_one("#search-status", Static).render())
        assert search_screen.focused is results and "/ edits the query" in status
        await pilot.press("escape")
        await wait_for(pilot, lambda: any("Esc again clears the query" in n.message for n in app._notifications),
                       what="the word about a second Escape")
        assert box.value == "waybill", "one Escape outside the box keeps the query"
        await pilot.press("escape")
        assert box.value == "", "Escape twice clears it"
        await open_area(pilot, "2")
        audit_box = app.screen.query_one("#audit-filter")
        await pilot.press("slash", *"link", "enter")  # Enter leaves the filter for the table
        await pilot.press("escape")
        assert audit_box.value == "link", "the same rule in Audit's filter"
        await open_area(pilot, "6")
        assert search_screen.focused is box, "an empty query: typing goes to the box"
    app.session.close()


async def test_a_click_on_the_area_bar_opens_the_area_as_its_key_does(sample_copy: Path) -> None:
    from memtui.ui.screens.notes import LeaveQuestion
    from textual.widgets import TextArea

    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)

        async def click(title: str) -> None:
            bar = app.screen.query_one(AreaBar)
            plain = bar.bar(bar.size.width).plain
            await pilot.click(AreaBar, offset=(1 + plain.index(title) + 1, 0))  # 1: the bar's padding
            await pilot.pause()

        await click("Graph")
        await wait_for(pilot, lambda: app.current_mode == "graph" and app.screen.is_mounted, what="the Graph area after a click")
        await click("Notes")
        await wait_for(pilot, lambda: app.current_mode == "notes" and app.screen.is_mounted)
        await settle(pilot)
        app.screen.query_one("#notes-editor", TextArea).focus()
        await pilot.press("x")
        await click("Audit")  # unsaved text: the click asks first, as the key does
        await wait_for(pilot, lambda: isinstance(app.screen, LeaveQuestion), what="the unsaved-notes question")


async def test_help_descriptions_wrap_under_themselves_at_80_columns(sample_copy: Path) -> None:
    """At 80 columns a long description wrapped back to column 0, under the keys."""
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, KeysHelp))
        text = app.screen.render_text()
        lines = text.plain.split("\n")
        # the first line says how to close the overlay; the rows follow
        body = [line for line in lines[1:-1] if line.strip() and not line.startswith(("Graph", "Tree", "Lists",
                                                                                       "Everywhere", "Rebind"))]
        assert body and all(line.startswith("  ") for line in body), [ln for ln in body if not ln.startswith("  ")]
        room = int(80 * 0.9) - 6  # border, padding and the scrollbar
        assert all(len(line) <= room for line in body), max(body, key=len)  # wrapped by memtui, indented
