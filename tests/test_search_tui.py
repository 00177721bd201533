"""The Search area, background indexing and the palette search, driven with Textual's Pilot."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Select, Static, TextArea, Tree

from memtui.core.frontmatter import split
from memtui.core.search.query import Snippet, search
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.areas import AREAS
from memtui.ui.screens.search import DEBOUNCE_SECONDS, MATCH_STYLE, SearchCommands, SearchScreen, open_hit, snippet_text
from tests.conftest import settle, wait_for

ARTICLE = "memory/support/cod-payments/cod-mismatch.md"


async def _search_area(pilot, app: MemtuiApp) -> SearchScreen:  # noqa: ANN001
    await wait_for(pilot, lambda: app.index_report is not None)
    key = next(a.key for a in AREAS if a.mode == "search")
    await pilot.press(key)
    await pilot.pause()
    assert isinstance(app.screen, SearchScreen)
    return app.screen


async def _type(pilot, screen: SearchScreen, text: str, keys: bool = False) -> None:  # noqa: ANN001
    box = screen.query_one("#search-query", Input)
    box.focus()
    box.value = ""
    if keys:  # as a user types: one key at a time
        await pilot.press(*text)
    else:
        box.value = text
    await pilot.pause(DEBOUNCE_SECONDS + 0.1)
    await settle(pilot)
    await pilot.pause(0.1)


async def test_app_indexes_on_open_and_results_come_as_you_type(sample_copy: Path) -> None:
    ws = Workspace.open(sample_copy)
    title = split((sample_copy / ARTICLE).read_text("utf-8")).meta["title"]
    app = MemtuiApp(ws)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _search_area(pilot, app)
        assert app.index_report.documents > 10, "the app built the index on open"
        assert (sample_copy / ".memtui" / "index").is_dir()
        word = max(title.split(), key=len).lower()
        await _type(pilot, screen, word, keys=True)
        paths = [h.path for h in screen._hits]
        assert ARTICLE in paths
        table = screen.query_one("#search-results", DataTable)
        assert table.row_count == len(paths)
        row = paths.index(ARTICLE)
        await pilot.press("down")  # from the query box into the results (new-user test)
        assert app.focused is table
        table.move_cursor(row=row)
        await pilot.pause()
        snippet = screen.query_one("#search-snippet", Static).render()
        assert ARTICLE in snippet.plain
        marked = [snippet.plain[s.start:s.end].lower() for s in snippet.spans if getattr(s.style, "reverse", False)]
        assert marked and all(word in m for m in marked), "the matched word is highlighted"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current_mode == "tree" and app.screen.is_mounted)
        await pilot.pause()
        tree = app.screen.query_one("#nodes", Tree)
        assert tree.cursor_node is not None and tree.cursor_node.data.path == "support/cod-payments"
    app.session.close()


async def test_filters_and_a_bad_query_says_what_is_wrong(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _search_area(pilot, app)
        await _type(pilot, screen, '"cod')
        status = screen.query_one("#search-status", Static).render()
        assert "quote" in str(status)
        await _type(pilot, screen, "parcel")
        kinds = {h.kind for h in screen._hits}
        assert len(kinds) > 1, "several kinds match before filtering"
        screen.query_one("#search-kind", Select).value = "skill"
        await pilot.pause(0.3)
        await settle(pilot)
        await pilot.pause(0.1)
        assert screen._hits and {h.kind for h in screen._hits} == {"skill"}
    app.session.close()


async def test_notes_save_is_searchable_at_once(sample_copy: Path) -> None:
    ws = Workspace.open(sample_copy)
    word = "zebrawombat"
    app = MemtuiApp(ws)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for(pilot, lambda: app.index_report is not None)
        assert not search(app.search_index, word).hits
        await pilot.press(next(a.key for a in AREAS if a.mode == "notes"))
        await settle(pilot)
        await pilot.pause()
        editor = app.screen.query_one("#notes-editor", TextArea)
        editor.focus()
        editor.move_cursor((0, 0))
        await pilot.press(*word, "space", "ctrl+s")
        await wait_for(pilot, lambda: bool(search(app.search_index, word).hits))
        hit = search(app.search_index, word).hits[0]
        assert hit.kind == "notes" and hit.path == ws.shown(ws.member_notes)
        # and Enter on it opens the member notes in the Notes area
        await open_hit(app, hit)
        assert app.current_mode == "notes"
    app.session.close()


async def test_palette_offers_results_and_opens_them(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for(pilot, lambda: app.index_report is not None)
        names = {c.title for c in app.get_system_commands(app.screen)}
        assert "Search: Find in the workspace" in names and "Search: Open" in names
        provider = SearchCommands(app.screen)
        hits = [h async for h in provider.search("RouteCore kind:entity")]
        assert hits, "typing in the palette searches the workspace"
        assert "RouteCore" in str(hits[0].match_display)
        await hits[0].command()
        await pilot.pause()
        assert app.current_mode == "graph"
        assert app.screen.query_one("#graph-filter", Input).value == "RouteCore"
        # too short or unusable queries offer nothing, never an error
        assert [h async for h in provider.search("ro")] == []
        assert [h async for h in provider.search('"open')] == []
    app.session.close()


def test_snippet_text_is_never_markup_and_highlights_whole_words() -> None:
    text = "[bold]x[/] не мога да издам полица\u200b ok"
    start = text.index("издам")
    snippet = Snippet(text, [(start, start + len("издам")), (text.index("ok"), len(text))], "body")
    out = snippet_text(snippet)
    assert out.plain.startswith("[bold]x[/] не мога")
    marked = [out.plain[s.start:s.end] for s in out.spans if str(s.style) == MATCH_STYLE]
    assert marked == ["издам", "ok"], "stand-ins for invisible characters do not shift highlights"
    assert "⟨U+200B⟩" in out.plain
    assert snippet_text(None).plain == ""


def test_no_search_while_the_first_build_creates_the_index(bare_sample_copy: Path) -> None:
    from types import SimpleNamespace

    from memtui.core.search.index import SearchIndex
    from memtui.ui.screens.search import _searchable

    index = SearchIndex(Workspace.open(bare_sample_copy))
    building = SimpleNamespace(index_report=None, search_index=index, index_existed=None)
    assert not _searchable(building), "not known yet whether an index exists: wait"
    building.index_existed = index.exists()
    assert not _searchable(building), "no index yet and the first build running: wait for it"
    index.update()
    building.index_existed = index.exists()
    assert _searchable(building), "an index from an earlier run is searched at once, even while catching up"


async def test_index_busy_on_open_is_a_notice_not_a_crash(sample_copy: Path, monkeypatch) -> None:  # noqa: ANN001
    from memtui.core.search import index as index_mod

    def busy(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        raise index_mod.IndexBusyError("the search index is being updated by another memtui process (pid 1)")

    monkeypatch.setattr(index_mod.SearchIndex, "update", busy)
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for(pilot, lambda: app.index_error is not None)
        assert "another memtui process" in app.index_error
        assert app.index_report is not None, "the Search area does not wait for ever"
        assert any("another memtui process" in str(n.message) for n in app._notifications)
    app.session.close()


async def test_query_box_keeps_its_width_in_a_narrow_terminal(sample_copy: Path) -> None:
    """At 40 columns the query box had no width (new-user test); the bar now stacks."""
    ws = Workspace.open(sample_copy)
    app = MemtuiApp(ws)
    async with app.run_test(size=(40, 40)) as pilot:
        screen = await _search_area(pilot, app)
        await pilot.pause()
        box = screen.query_one("#search-query")
        assert box.size.width >= 30
        assert screen.query_one("#search-kind").size.width >= 30
    app.session.close()


async def test_coming_back_to_search_puts_the_cursor_in_the_query_box(sample_copy: Path) -> None:
    """New-user test: back on the Search area, typing opened the kind list that had focus."""
    ws = Workspace.open(sample_copy)
    app = MemtuiApp(ws)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _search_area(pilot, app)
        screen.query_one("#search-kind").focus()
        await pilot.pause()
        tree_key = next(a.key for a in AREAS if a.mode == "tree")
        search_key = next(a.key for a in AREAS if a.mode == "search")
        await pilot.press(tree_key)
        await pilot.pause()
        await pilot.press(search_key)
        await pilot.pause()
        assert app.focused is screen.query_one("#search-query")
    app.session.close()


#: the search examples the README gives (they found nothing on the bundled sample)
README_EXAMPLES = ["RC-409", "platih no pishe v dostavka", "SMS-ът", '"proof of delivery"', "courier AND battery",
                   "reschedul*", "bateries~", "kind:experience courier", "node:support/courier-app\ndrift"]


def test_the_readme_search_examples_find_something_on_the_sample(sample_copy, capsys) -> None:  # noqa: ANN001
    import json

    from tests.conftest import REPO, run_cli

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Search"):readme.index("### Backup")]
    for example in README_EXAMPLES:
        assert f"`{example}`" in section or f'`memtui search "{example}"`' in section, example
        query = " ".join(example.split())
        code, out, _ = run_cli(capsys, "search", "-w", str(sample_copy), "--json", query)
        assert code == 0 and json.loads(out)["total"] > 0, query


@pytest.mark.parametrize("line_end", ["\r", "\r\n"], ids=["cr", "crlf"])
async def test_a_paste_with_cr_line_ends_keeps_its_lines_and_is_read_as_a_mail(sample_copy: Path,
                                                                               line_end: str) -> None:
    """Most terminals (and tmux's paste-buffer) send CR line ends: the box keeps every line as
    with LF, and the search reads the mail's structure."""
    from textual import events

    from memtui.ui.screens.search import PASTE_BREAK, query_text

    lines = ["Hello,", "the courier parcel never arrived and the COD payment is missing.", "",
             "Best regards,", "Ann", "", "On Mon, Dec 1, 2026 at 9:14 AM Bob <bob@example.com> wrote:",
             "> The parcel shows delivered but no cash on delivery was recorded."]
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _search_area(pilot, app)
        box = screen.query_one("#search-query", Input)
        box.focus()
        box.value = ""
        box.post_message(events.Paste(line_end.join(lines) + line_end))
        await wait_for(pilot, lambda: PASTE_BREAK in box.value, what="the pasted lines in the box")
        assert query_text(box.value) == "\n".join(lines), "every line kept, each line end read as one break"
        assert "\r" not in box.value
        await wait_for(pilot, lambda: "read the newest message" in str(
            screen.query_one("#search-status", Static).render()), what="what was read, in the status")
    app.session.close()


async def test_a_pasted_email_stays_whole_and_the_status_says_what_was_read(sample_copy: Path) -> None:
    """Textual's box keeps only a paste's first line; the query box keeps every line (shown
    with a mark), the search reads the mail's structure, and the status says what it read."""
    from textual import events

    from memtui.ui.screens.search import PASTE_BREAK, query_text

    mail = ("Hello,\nthe courier parcel never arrived and the COD payment is missing.\n\n"
            "Best regards,\nAnn\n\nOn Mon, Dec 1, 2026 at 9:14 AM Bob <bob@example.com> wrote:\n"
            "> The parcel shows delivered but no cash on delivery was recorded.\n")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await _search_area(pilot, app)
        box = screen.query_one("#search-query", Input)
        box.focus()
        box.value = ""
        box.post_message(events.Paste(mail))
        await wait_for(pilot, lambda: PASTE_BREAK in box.value, what="the pasted lines in the box")
        assert query_text(box.value) == mail.strip("\n"), "every line of the paste is kept"
        await wait_for(pilot, lambda: "read the newest message" in str(
            screen.query_one("#search-status", Static).render()), what="what was read, in the status")
        assert screen._hits, "the pasted e-mail found something"
    app.session.close()
