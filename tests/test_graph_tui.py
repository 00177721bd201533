"""The Graph screen, driven headless with Textual's Pilot: odd names, damaged files, a 50,000-entity graph, curating."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList, Static

from memtui.core import graph as g
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.graph.screen import GraphScreen
from memtui.ui.screens.graph.table import PAGE
from memtui.ui.widgets import Confirm


def _workspace(tmp_path: Path, source: Path | None = None, data: bytes | None = None) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    target = root / "memory" / "graph.jsonl"
    if source is not None:
        shutil.copyfile(source, target)
    else:
        target.write_bytes(data or b"")
    return root


def _as_written(data: bytes) -> bytes:
    """``data`` as memtui writes it back: its own writes end the file with a line end (the
    sample graph, as the MCP server writes it, has none), so an agent's append starts a line."""
    return data if not data or data.endswith(b"\n") else data + b"\n"


async def _open_graph(pilot, app) -> GraphScreen:
    await app.switch_mode("graph")
    screen = app.screen
    assert isinstance(screen, GraphScreen)
    await wait_for(pilot, lambda: screen.graph is not None)
    await pilot.pause()
    return screen


async def test_odd_names_show_literally_and_every_entity_opens(shared: Path, tmp_path: Path) -> None:
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
        screen.show_entity("[/]")
        listing = screen.query_one("#observations", OptionList)
        shown = " ".join(str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count))
        detail = str(screen.query_one("#entity-detail", Static).render())
        assert "[link=https://example.invalid]click[/link]" in shown and "links [to]" in detail


async def test_a_damaged_file_loads_and_an_edit_keeps_bad_lines_then_undo(shared: Path, tmp_path: Path) -> None:
    root = _workspace(tmp_path, shared / "bug-inputs" / "B15" / "memory.jsonl")
    path = root / "memory" / "graph.jsonl"
    original = path.read_bytes()
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_graph(pilot, app)
        assert screen.query_one("#entities", DataTable).row_count == 4
        assert {f.line for f in screen.findings if f.code == "graph-line-malformed"} == {5, 9, 12}
        screen.show_entity("tide-gauge")
        screen.save(screen.graph, g.AddObservation("tide-gauge", "checked in TUI"))
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
        screen.show_entity("node-00000")  # the hub: children capped, tree built lazily
        tree = screen.query_one("#neighbourhood")
        assert len(tree.root.children) <= 201


# -- curating through the app's session (write discipline) ---------------------------------------

from memtui.core.auditlog import AuditLog  # noqa: E402
from memtui.core.graph.provenance import Provenance, ProvenanceBook  # noqa: E402
from memtui.core.session import Session  # noqa: E402
from memtui.ui.screens.sessions import SessionsScreen
from memtui.ui.widgets import AskText  # noqa: E402
from tests.conftest import wait_for


async def _answer(pilot, app, text: str) -> None:
    await wait_for(pilot, lambda: isinstance(app.screen, AskText))
    app.screen.query_one("#ask-input").value = text
    await pilot.press("enter")


async def _confirm(pilot, app, screen) -> None:
    await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
    await pilot.press("y")
    await wait_for(pilot, lambda: isinstance(app.screen, GraphScreen) and not screen.saving)


async def test_read_only_session_shows_badge_and_refuses_before_asking(sample_copy: Path) -> None:
    path = sample_copy / "memory" / "graph.jsonl"
    original = path.read_bytes()
    ws = Workspace.open(sample_copy)
    app = MemtuiApp(ws, session=Session.open(ws, purpose="tui", read_only=True))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_graph(pilot, app)
        assert app.session.read_only
        assert "READ-ONLY" in str(screen.query_one("#graph-count", Static).render())
        for key in ("r", "m", "t", "l", "a", "d"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen, key  # no question asked
        refusals = [n for n in app._notifications if n.title == "Read-only"]
        assert refusals and all(n.message == app.session.reason for n in refusals)
        assert "--read-only" in app.session.reason  # the reason says why
    assert path.read_bytes() == original


async def test_merge_with_confirmation_is_audited_and_undone(sample_copy: Path) -> None:
    path = sample_copy / "memory" / "graph.jsonl"
    original = path.read_bytes()
    before = g.load(path)
    into, other = "DepotScan", "Depot Scan"
    assert before.find(into) and before.find(other)
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_graph(pilot, app)
        screen.show_entity(into)
        # the near-twin finding is marked on the entity in the neighbourhood tree (seed 002)
        assert screen.model.flags.get(into) and "⚠" in str(screen.query_one("#neighbourhood").root.label)
        await pilot.press("m")
        await _answer(pilot, app, other)
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("n")  # declined: nothing written
        await pilot.pause()
        assert path.read_bytes() == original
        await pilot.press("m")
        await _answer(pilot, app, other)
        await _confirm(pilot, app, screen)
        merged = g.load(path)
        assert not merged.find(other) and "alias: " + other in merged.entity(into).observations
        assert screen.current == into
        await pilot.press("u")
        await _confirm(pilot, app, screen)
        assert path.read_bytes() == _as_written(original)  # undone, ending with a line end as memtui writes
        actions = [e.action for e in AuditLog(app.session.store).entries(newest_first=False)
                   if e.action.startswith("graph.")]  # the sample store holds governance records too
        assert actions == ["graph.merge-entities", "graph.restore"]


async def _relate_from_the_first(pilot, app, source: str) -> GraphScreen:  # noqa: ANN001
    """Open the Graph area at ``source`` and answer the relate dialog's type with "feeds": the
    target question is next."""
    screen = await _open_graph(pilot, app)
    screen.show_entity(source)
    await pilot.press("l")
    await _answer(pilot, app, "feeds")
    return screen


@pytest.mark.slow
async def test_relate_unrelate_retype_and_observation_edits(sample_copy: Path) -> None:
    path = sample_copy / "memory" / "graph.jsonl"
    graph = g.load(path)
    source, target = graph.entities[0].name, graph.entities[1].name
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _relate_from_the_first(pilot, app, source)
        await _answer(pilot, app, target)
        await _confirm(pilot, app, screen)
        assert (source, target, "feeds") in {r.triple for r in g.load(path).relations}
        # unrelate: the relation chosen in the neighbourhood tree
        tree = screen.query_one("#neighbourhood")
        node = next(n for n in tree.root.children if n.data and n.data[2] and n.data[2].relation_type == "feeds")
        tree.move_cursor(node)
        await pilot.press("L")
        await _confirm(pilot, app, screen)
        assert (source, target, "feeds") not in {r.triple for r in g.load(path).relations}
        # edit and delete the highlighted observation
        first = g.load(path).entity(source).observations[0]
        screen.query_one("#observations", OptionList).highlighted = 0
        await pilot.press("e")
        await _answer(pilot, app, first + " (checked)")
        await _confirm(pilot, app, screen)
        assert g.load(path).entity(source).observations[0] == first + " (checked)"
        screen.query_one("#observations", OptionList).highlighted = 0
        await pilot.press("x")
        await _confirm(pilot, app, screen)
        assert first + " (checked)" not in g.load(path).entity(source).observations
        # retype across the variants of the type
        kind = g.load(path).entity(source).entity_type
        variants = g.type_variants(g.load(path), kind)
        await pilot.press("t")
        await _answer(pilot, app, "Machine")
        await _confirm(pilot, app, screen)
        after = g.load(path)
        assert all(e.entity_type == "Machine" for e in after.entities if e.name in
                   {x.name for x in graph.entities if x.entity_type in variants})
        assert not [e for e in after.entities if e.entity_type in variants]


async def test_provenance_is_shown_and_opens_the_session_history_at_the_line(sample_copy: Path) -> None:
    path = sample_copy / "memory" / "graph.jsonl"
    entity = g.load(path).entities[0]
    text = entity.observations[0]
    history = sorted((sample_copy / "sessions" / "durable").glob("*.jsonl"))[0]
    with Session.open(sample_copy) as session:
        session.write("test.seed", ".memtui/store.json", lambda tx: ProvenanceBook(session.store).record(
            Provenance(entity.name, text, history.stem, "2026-11-02T09:15:44Z", 2)))
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_graph(pilot, app)
        screen.show_entity(entity.name)
        listing = screen.query_one("#observations", OptionList)
        assert f"from session {history.stem}" in str(listing.get_option_at_index(0).prompt)
        listing.highlighted = 0
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen._history is not None
                       and app.screen._history.key == history.stem)
        turns = app.screen.query_one("#turns", OptionList)
        await wait_for(pilot, lambda: turns.highlighted == 1)  # line 2, the turn the observation came from
        detail = str(app.screen.query_one("#turn-detail").render())
        assert "line 2" in detail and "cited by" in detail and entity.name in detail


def _question(app) -> str:  # noqa: ANN001
    return str(app.screen.query_one("#ask-box Static").render())


@pytest.mark.slow
async def test_create_then_undo_twice_and_redo_with_future_tense_questions(sample_copy: Path) -> None:
    """The Graph area creates an entity and undoes more than one step; confirmations said "merged 1
    record" (past tense) and showed newlines as a literal ⏎ before anything was done."""
    path = sample_copy / "memory" / "graph.jsonl"
    original = path.read_bytes()
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_graph(pilot, app)
        await pilot.press("n")
        await _answer(pilot, app, "Ada Lovelace")
        await _answer(pilot, app, "Person")
        await _answer(pilot, app, "wrote the first program")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        question = _question(app)
        assert "This will create the entity 'Ada Lovelace' of type 'Person'." in question
        assert "⏎" not in question and "\n" in question, "app text keeps its newlines"
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GraphScreen) and not screen.saving)
        after_create = path.read_bytes()
        assert g.load(path).entity("Ada Lovelace").observations == ("wrote the first program",)
        screen.show_entity("Ada Lovelace")
        await pilot.press("a")
        await _answer(pilot, app, "line one")
        await _confirm(pilot, app, screen)
        assert "line one" in g.load(path).entity("Ada Lovelace").observations
        await pilot.press("u")  # undo the observation
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        assert "1 earlier step can be undone after it" in _question(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GraphScreen) and not screen.saving)
        assert path.read_bytes() == after_create
        await pilot.press("u")  # and the creation
        await _confirm(pilot, app, screen)
        assert path.read_bytes() == _as_written(original)  # undone, ending with a line end as memtui writes
        await pilot.press("U")  # redo the creation
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        assert "Redo" in _question(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GraphScreen) and not screen.saving)
        assert g.load(path).find("Ada Lovelace")
        assert len(screen.curator.history.undone) == 1, "the observation can still be redone"


async def test_redo_is_refused_when_the_graph_changed_after_the_undo(sample_copy: Path) -> None:
    path = sample_copy / "memory" / "graph.jsonl"
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_graph(pilot, app)
        name = screen.current
        await pilot.press("a")
        await _answer(pilot, app, "added")
        await _confirm(pilot, app, screen)
        await pilot.press("u")
        await _confirm(pilot, app, screen)
        with path.open("a", encoding="utf-8") as handle:  # an agent writes meanwhile
            handle.write('\n{"type": "entity", "name": "From the agent", "entityType": "Note", "observations": []}\n')
        screen.action_reload()
        await wait_for(pilot, lambda: screen.graph is not None and screen.graph.find("From the agent"),
                       what="the reload")
        await pilot.press("U")
        await pilot.pause()
        assert app.screen is screen, "refused before any question"
        assert "added" not in g.load(path).entity(name).observations


async def test_edit_observation_starts_with_the_old_text_and_the_cursor_after_it(sample_copy: Path) -> None:
    """A new user pressed e, typed, and the old observation was gone: it was pre-filled but
    selected, so the first key replaced it all. Every AskText with a value starts this way."""
    from memtui.ui.widgets import AskText

    path = sample_copy / "memory" / "graph.jsonl"
    source = g.load(path).entities[0].name
    first = g.load(path).entity(source).observations[0]
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_graph(pilot, app)
        screen.show_entity(source)
        screen.query_one("#observations", OptionList).highlighted = 0
        for key, old in (("e", first), ("r", source)):  # Edit observation, Rename
            await pilot.press(key)
            await wait_for(pilot, lambda: isinstance(app.screen, AskText), what="the question")
            box = app.screen.query_one("#ask-input")
            assert box.value == old and box.selection.is_empty and box.cursor_position == len(old)
            await pilot.press("space", "x")
            assert box.value == old + " x", "typing adds to the old text"
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen, what="back in the area")
        assert g.load(path).entity(source).observations[0] == first


@pytest.mark.slow
async def test_counts_are_never_cut_to_the_column(tmp_path: Path) -> None:
    """A new user saw `2000` in obs. for an entity of 20,000 observations (a 4-cell column)."""
    lines = [json.dumps({"type": "entity", "name": "Big", "entityType": "log",
                         "observations": [f"o{i}" for i in range(20_000)]})]
    lines += [json.dumps({"type": "entity", "name": f"E{i}", "entityType": "t", "observations": []})
              for i in range(3)]
    lines += [json.dumps({"type": "relation", "from": "Big", "to": f"E{i % 3}", "relationType": f"r{i}"})
              for i in range(12_345)]
    root = _workspace(tmp_path, data=("\n".join(lines) + "\n").encode())
    app = MemtuiApp(Workspace.open(root))
    for size in ((80, 24), (120, 40)):
        async with app.run_test(size=size) as pilot:
            screen = await _open_graph(pilot, app)
            table = screen.query_one("#entities", DataTable)
            row = next(table.get_row_at(i) for i in range(table.row_count) if str(table.get_row_at(i)[0]) == "Big")
            assert str(row[2]) == "20,000" and str(row[3]) == "12,345"
            assert table.columns["observations"].width >= len("20,000")
            assert table.columns["relations"].width >= len("12,345")
            assert table.size.width >= sum(c.get_render_width(table) for c in table.columns.values()), \
                "the counts fit on screen"
        app = MemtuiApp(Workspace.open(root))


async def test_the_new_entity_type_question_suggests_the_graphs_own_types(sample_copy: Path) -> None:
    """A new user was offered "Person, Organization" where the sample graph writes `system`,
    `role` (and the audit flags case variants of a type)."""
    graph = g.load(sample_copy / "memory" / "graph.jsonl")
    counts: dict[str, int] = {}
    for entity in graph.entities:
        counts[entity.entity_type] = counts.get(entity.entity_type, 0) + 1
    most = max(counts, key=lambda t: (counts[t], t))
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 40)) as pilot:
        await _open_graph(pilot, app)
        await pilot.press("n")
        await _answer(pilot, app, "Ada Lovelace")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText))
        prompt = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "the graph's types: " in prompt and most in prompt and "Person" not in prompt


async def test_a_mistyped_relation_target_is_asked_again_with_the_text_kept(sample_copy: Path) -> None:
    """A mistyped target threw the whole relate dialog away (a toast), and a quick retry once
    crashed the app (ScreenStackError) and lost the undo history."""
    path = sample_copy / "memory" / "graph.jsonl"
    graph = g.load(path)
    source, target = graph.entities[0].name, graph.entities[1].name
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _relate_from_the_first(pilot, app, source)
        await wait_for(pilot, lambda: isinstance(app.screen, AskText))
        first = app.screen
        box = first.query_one("#ask-input", Input)
        box.value = target + "x"
        for _ in range(2):  # Enter twice before the first answer is delivered: the second is ignored
            box.post_message(Input.Submitted(box, box.value))
        await wait_for(pilot, lambda: isinstance(app.screen, AskText) and app.screen is not first,
                       what="the target asked again")
        again = app.screen
        prompt = " ".join(str(w.render()) for w in again.query("Static"))
        assert "there is no entity named" in prompt and repr(target) in prompt  # the reason and a suggestion
        assert again.query_one("#ask-input").value == target + "x", "what was typed is kept"
        again.query_one("#ask-input").value = target
        await pilot.press("enter")
        await _confirm(pilot, app, screen)
        assert app.is_running
    assert (source, target, "feeds") in {r.triple for r in g.load(path).relations}
