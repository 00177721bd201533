"""The TUI, driven headless with Textual's Pilot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable, Markdown, Static, TextArea, Tree

from memtui import userconfig
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from tests.conftest import open_area, settle, wait_for


def markdown_text(app) -> str:
    md = app.screen.query_one("#body", Markdown)
    return md.source if hasattr(md, "source") else md._markdown


def static_text(app, selector: str) -> str:
    widget = app.screen.query_one(selector, Static)
    return str(widget.render())


async def test_prefect_tree_expands_to_the_deepest_node_and_renders_it(shared: Path) -> None:
    ws = Workspace.open(shared / "corpus" / "agents-trees" / "PrefectHQ__prefect")
    model = MemoryTree(ws)
    deepest = max((n for n in model.walk_nodes() if model.index(n).exists), key=lambda n: n.count("/"))
    assert deepest.count("/") >= 4
    app = MemtuiApp(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None)
        app.screen.reveal(deepest)
        await pilot.pause()
        tree = app.screen.query_one("#nodes", Tree)
        await wait_for(pilot, lambda: tree.cursor_node is not None and tree.cursor_node.data.path == deepest)
        expected = model.index(deepest).body.strip().splitlines()[0]
        await wait_for(pilot, lambda: expected in markdown_text(app))
        assert "the node index" in static_text(app, "#article-head")


async def test_article_with_front_matter_and_link_following(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory/support").mkdir(parents=True)
    (root / "memory/AGENTS.md").write_text("---\nowner: root\n---\n# Root\n- [Support](support/AGENTS.md) — s\n")
    (root / "memory/support/AGENTS.md").write_text("# Support\n- [A](a.md) — first\n- [B](b.md) — second\n")
    (root / "memory/support/a.md").write_text("---\ntitle: Alpha\nsummary: first\nupdated: 2026-01-02\n---\n"
                                              "# Alpha\n\nSee [the other](b.md).\n")
    (root / "memory/support/b.md").write_text("---\ntitle: Beta\nsummary: second\n---\nBETA BODY\n")
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        screen.reveal("support", "support/a.md")
        await wait_for(pilot, lambda: "See [the other](b.md)" in markdown_text(app))
        meta = screen.query_one("#meta", DataTable)
        assert meta.row_count == 3
        assert "updated" in [str(meta.get_row_at(i)[0]) for i in range(meta.row_count)]
        screen.query_one("#body", Markdown).post_message(
            Markdown.LinkClicked(screen.query_one("#body", Markdown), "b.md"))
        await wait_for(pilot, lambda: "BETA BODY" in markdown_text(app))


async def test_links_are_followed_by_key_and_backspace_comes_back(tmp_path: Path) -> None:
    """Relative links could only be clicked, with no way back (frogmouth's model)."""
    from memtui.ui.widgets import Choose

    root = tmp_path / "ws"
    (root / "memory/support").mkdir(parents=True)
    (root / "memory/AGENTS.md").write_text("---\nowner: root\n---\n# Root\n- [Support](support/AGENTS.md) — s\n")
    (root / "memory/support/AGENTS.md").write_text("# Support\n- [A](a.md) — first\n- [B](b.md) — second\n")
    (root / "memory/support/a.md").write_text("# Alpha\n\nSee [the other](b.md) and [the web](https://example.invalid).\n")
    (root / "memory/support/b.md").write_text("BETA BODY\n")
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        screen.reveal("support", "support/a.md")
        await wait_for(pilot, lambda: "See [the other](b.md)" in markdown_text(app))
        assert screen.links() == [("the other", "b.md"), ("the web", "https://example.invalid")]
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, Choose))
        await pilot.press("enter")  # the first link
        await wait_for(pilot, lambda: "BETA BODY" in markdown_text(app), what="the linked article")
        await pilot.press("backspace")
        await wait_for(pilot, lambda: "See [the other](b.md)" in markdown_text(app), what="back to the first")


async def test_markup_like_names_show_literally(tmp_path: Path) -> None:
    """Names with [/], [bold] and control characters never crash nor get styled."""
    root = tmp_path / "ws"
    odd = "[bold red]urgent [link=x]"
    (root / "memory" / odd).mkdir(parents=True)
    (root / "memory/AGENTS.md").write_text("---\nowner: o\n---\n# Root [/]\n- [[/] title](x[1].md) — [link=x]y[/link]\n")
    (root / "memory/x[1].md").write_text("---\ntitle: \"[/] tab\\there\"\nsummary: \"[link=x]y[/link]\"\n---\n[/] body\n")
    (root / "memory" / odd / "AGENTS.md").write_text("# [/]\n")
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None)
        await pilot.pause()
        tree = app.screen.query_one("#nodes", Tree)
        labels = [str(node.label) for node in tree.root.children]
        assert any(odd in label for label in labels)
        table = app.screen.query_one("#entries", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1)
        assert str(table.get_row_at(0)[3]) == "[link=x]y[/link]"
        app.screen.query_one("#entries").focus()
        await wait_for(pilot, lambda: "[/] body" in markdown_text(app))
        assert "[/] tab⇥here" in static_text(app, "#article-head")
        await open_area(pilot, "2")
        assert app.screen.query_one("#findings", DataTable) is not None


@pytest.mark.slow
async def test_big_note_preview_is_capped_and_keys_stay_responsive(tmp_path: Path, shared: Path) -> None:
    """A 4.6 MB note shows its first part with a notice; the file is not changed."""
    work = tmp_path / "big"
    work.mkdir()
    subprocess.run([sys.executable, str(shared / "bug-inputs/B22/make_big_markdown.py")], cwd=work,
                   check=True, capture_output=True)
    big = next(work.rglob("big-notes.md"))
    root = tmp_path / "ws"
    (root / "memory/notes").mkdir(parents=True)
    (root / "memory/AGENTS.md").write_text("---\nowner: o\n---\n# Root\n")
    (root / "memory/notes/AGENTS.md").write_text("# Notes\n- [Big](big-notes.md) — big\n- [Small](small.md) — s\n")
    (root / "memory/notes/small.md").write_text("SMALL NOTE\n")
    target = root / "memory/notes/big-notes.md"
    target.write_bytes(big.read_bytes())
    before = target.read_bytes()
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        app.screen.reveal("notes", "notes/big-notes.md")
        await wait_for(pilot, lambda: "shown as plain text" in static_text(app, "#article-head"), timeout=30)
        assert "showing the first" in static_text(app, "#article-head")  # over max_file_bytes
        plain = app.screen.query_one("#plain", TextArea)
        assert plain.display and plain.text.lstrip().startswith("## Section 0")
        assert markdown_text(app) == ""
        await pilot.press("down")  # the latency is measured by bench/big_note_keys.py, not asserted here
        await wait_for(pilot, lambda: "SMALL NOTE" in markdown_text(app), what="the next article shown")
    assert target.read_bytes() == before


async def test_audit_screen_filters_sorts_and_jumps_to_the_place(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory/n").mkdir(parents=True)
    (root / "memory/AGENTS.md").write_text("---\nowner: o\n---\n# Root\n- [N](n/AGENTS.md) — n\n")
    (root / "memory/n/AGENTS.md").write_text("# N\n- [A](a.md) — one\n- [Gone](gone.md) — x\n")
    (root / "memory/n/a.md").write_text("---\nsummary: other\n---\nAAA\n")
    (root / "memory/n/stray.md").write_text("STRAY\n")
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None)
        await open_area(pilot, "2")
        table = app.screen.query_one("#findings", DataTable)
        await wait_for(pilot, lambda: table.row_count == 3)
        assert "error" in str(table.get_row_at(0)[0])  # errors sort first
        await pilot.press("slash")
        await pilot.press(*"code:unlisted")
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.press("enter")  # leave the filter
        await pilot.press("enter")  # jump
        await wait_for(pilot, lambda: app.current_mode == "tree" and app.screen.is_mounted)
        await wait_for(pilot, lambda: "STRAY" in markdown_text(app))
        tree = app.screen.query_one("#nodes", Tree)
        assert tree.cursor_node.data.path == "n"


async def test_unknown_theme_falls_back_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    app = MemtuiApp(Workspace.open(root), theme="no-such-theme")
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "memtui-dark"
        assert any("no-such-theme" in n.message for n in app._notifications)


async def test_changing_the_theme_is_remembered(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    app = MemtuiApp(Workspace.open(root), theme="memtui-dark",
                    remember_theme=lambda name: userconfig.set_value("theme", name))
    async with app.run_test() as pilot:
        app.theme = "memtui-high-contrast"
        await pilot.pause()
    assert userconfig.get("theme") == "memtui-high-contrast"


async def test_boot_preview_shows_the_own_index_and_every_domain(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        app.screen.reveal("support/courier-app")
        await pilot.pause()
        await pilot.press("b")
        plain = app.screen.query_one("#plain", TextArea)
        await wait_for(pilot, lambda: plain.display and "Index of every domain" in plain.text)
        own = (sample_copy / "memory/support/courier-app/AGENTS.md").read_text(encoding="utf-8")
        assert own.splitlines()[-1] in plain.text
        assert "connectors" in plain.text.split("Index of every domain", 1)[1]
        assert "Boot preview" in static_text(app, "#article-head")


async def test_a_second_memtui_opens_writable_and_read_only_only_when_asked(sample_copy: Path) -> None:
    from memtui.core.session import Session

    other = Session.open(sample_copy, purpose="tui")  # another TUI open on the same workspace
    try:
        app = MemtuiApp(Workspace.open(sample_copy))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert not app.session.read_only
            assert not app.screen.sub_title.startswith("READ-ONLY")
        ws = Workspace.open(sample_copy)
        app = MemtuiApp(ws, session=Session.open(ws, purpose="tui", read_only=True))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert app.session.read_only
            assert app.screen.sub_title.startswith("READ-ONLY")
            assert any("--read-only" in n.message for n in app._notifications)
    finally:
        other.close()


def test_no_argument_opens_a_copy_of_the_sample_never_the_bundled_folder() -> None:
    from memtui.paths import bundled
    from memtui.ui.launch import sample_copy

    copy = sample_copy()
    assert copy != bundled("sample_workspace")
    assert (copy / "memory/AGENTS.md").read_bytes() == (bundled("sample_workspace") / "memory/AGENTS.md").read_bytes()
    assert sample_copy() == copy  # made once, then reused


async def test_audit_jump_opens_the_unlisted_article_itself(sample_copy: Path) -> None:
    """A new-user test saw the node open with its first entry instead of the article."""
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None)
        await open_area(pilot, "2")
        await pilot.press("slash", *"code:article-unlisted", "enter")
        table = app.screen.query_one("#findings", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current_mode == "tree" and app.screen.is_mounted)
        await wait_for(pilot, lambda: "label-printers.md" in static_text(app, "#article-head"))
        await settle(pilot)  # what the jump started has finished, and the article is still the one shown
        assert "label-printers.md" in static_text(app, "#article-head")


async def test_audit_filter_explains_an_unknown_severity(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory/AGENTS.md").write_text("# Root\n")
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None)
        await open_area(pilot, "2")
        await pilot.press("slash", *"severity:bogus")
        await wait_for(pilot, lambda: "unknown 'severity:bogus'" in static_text(app, "#audit-count"))


async def _jump_to(pilot, app, query: str) -> None:  # noqa: ANN001
    """In the Audit area, filter to the one finding ``query`` names and press Enter on it."""
    await wait_for(pilot, lambda: app.report is not None)
    await open_area(pilot, "2")
    table = app.screen.query_one("#findings", DataTable)
    await pilot.press("slash", *query, "enter")
    await wait_for(pilot, lambda: table.row_count == 1, what=f"one finding for {query}")
    await pilot.press("enter")


async def test_audit_jump_to_a_graph_relation_opens_the_graph_at_it(sample_copy: Path) -> None:
    """A new user's Enter on graph-dangling-relation memory/graph.jsonl:58 opened the Tree at its root."""
    from memtui.core import graph as g

    line = next(r.line for r in g.load(sample_copy / "memory/graph.jsonl").relations if r.target == "PushGateway")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await _jump_to(pilot, app, "code:graph-dangling")
        await wait_for(pilot, lambda: app.current_mode == "graph" and app.screen.is_mounted and app.screen.current == "CourierApp",
                       what="the Graph area at the relation's source")
        tree = app.screen.query_one("#neighbourhood", Tree)
        await wait_for(pilot, lambda: tree.cursor_node is not None and tree.cursor_node.data
                       and tree.cursor_node.data[2] is not None and tree.cursor_node.data[2].line == line,
                       what="the relation highlighted")
        assert app.screen.focused is tree


async def test_audit_jump_to_a_graph_entity_selects_it_even_when_filtered_out(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.switch_mode("graph")
        await wait_for(pilot, lambda: app.screen.graph is not None)
        app.screen.query_one("#graph-filter").value = "BillingHub"  # hides the orphan
        await _jump_to(pilot, app, "code:graph-orphan")
        await wait_for(pilot, lambda: app.current_mode == "graph" and app.screen.is_mounted and app.screen.current == "Black Friday peak",
                       what="the orphan selected")
        table = app.screen.query_one("#entities", DataTable)
        await pilot.pause()
        assert "Black Friday peak" in str(table.get_row_at(table.cursor_row)[0])


async def test_audit_jump_to_a_skill_finding_opens_the_skills_area_at_it(sample_copy: Path) -> None:
    """It said "not in the memory tree; open it in your editor" though the Skills area shows it."""
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await _jump_to(pilot, app, "code:skill-name-invalid")
        await wait_for(pilot, lambda: app.current_mode == "skills" and app.screen.is_mounted and app.screen.catalogue is not None)
        table = app.screen.query_one("#skills-table", DataTable)
        await wait_for(pilot, lambda: app.screen._rows[table.cursor_row].path == "skills/Bad_Skill/SKILL.md",
                       what="Bad_Skill selected")


async def test_audit_jump_to_an_article_line_scrolls_to_it(sample_copy: Path) -> None:
    """An article finding with a line opened the article at its top."""
    article = sample_copy / "memory/support/long-read.md"
    filler = "".join(f"Paragraph {i} of the long read.\n\n" for i in range(120))
    article.write_text(f"---\nsummary: long\n---\n# Long read\n\n{filler}See [this](../../../../etc/shadow).\n",
                       encoding="utf-8")
    index = sample_copy / "memory/support/AGENTS.md"
    index.write_text(index.read_text(encoding="utf-8") + "- [Long read](long-read.md) — long\n", encoding="utf-8")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await _jump_to(pilot, app, "path:long-read code:link-outside")
        await wait_for(pilot, lambda: app.current_mode == "tree" and app.screen.is_mounted and "long-read.md" in static_text(app, "#article-head"))
        await wait_for(pilot, lambda: "scrolled to it" in static_text(app, "#article-head"), what="the line said")
        scroll = app.screen.query_one("#article-scroll")
        last = app.screen.query_one("#body", Markdown).children[-1]  # the link's paragraph
        await wait_for(pilot, lambda: scroll.scroll_y > 100 and scroll.region.y <= last.region.y < scroll.region.bottom,
                       what="the article scrolled to the link's paragraph")


def test_the_tui_acts_as_the_profile_given_with_as(sample_copy, monkeypatch) -> None:  # noqa: ANN001
    """`memtui PATH --as PROFILE` opens the TUI acting as that profile, as the CLI's --as does."""
    from memtui import cli
    from memtui.ui.app import MemtuiApp

    seen: list[str | None] = []
    monkeypatch.setattr(MemtuiApp, "run", lambda app, *a, **k: seen.append(app.session.profile))
    monkeypatch.setattr("memtui.ui.launch.has_terminal", lambda: True)
    assert cli.main([str(sample_copy), "--as", "connector.steward"]) == 0
    assert cli.main([str(sample_copy)]) == 0
    assert seen[0] == "connector.steward"
    assert seen[1] != "connector.steward"  # without --as: memtui.toml's [user] profile


async def test_at_80x24_an_article_with_a_finding_shows_the_finding_and_body_lines(sample_copy: Path) -> None:
    """A new user at 80x24 saw no body line of an article with a finding: the head and front
    matter filled the pane. Now each takes at most a share, the finding stays in view, and `z`
    gives the article the whole area."""
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.report is not None)
        app.screen.reveal("support/parcels-lost", "support/parcels-lost/address-mismatch.md")
        await wait_for(pilot, lambda: "Address and geocoding" in static_text(app, "#article-head"))
        await settle(pilot)
        head = app.screen.query_one("#article-head")
        scroll = app.screen.query_one("#article-scroll")
        assert "leads outside the workspace" in static_text(app, "#article-head")
        assert head.region.height >= 2, "the title and the finding are in view"
        assert scroll.region.height >= 3, f"the body has {scroll.region.height} lines"
        before = scroll.region.height
        await pilot.press("z")
        await pilot.pause()
        assert not app.screen.query_one("#nodes").display
        assert scroll.region.height > before + 5 and scroll.region.width > 70
        await pilot.press("z")
        await pilot.pause()
        assert app.screen.query_one("#nodes").display


def test_the_tui_without_a_terminal_says_so_and_exits_2(sample_copy: Path) -> None:
    """`memtui PATH </dev/null >file` wrote escape codes into the file until it was killed."""
    done = subprocess.run([sys.executable, "-m", "memtui", str(sample_copy)], stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=60)
    assert done.returncode == 2
    assert b"needs a terminal" in done.stderr and done.stdout == b""
