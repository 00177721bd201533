"""The Graph area's panes alone, each mounted in a tiny app: what they show and the messages they
post; the undo history as a type; a save refused by another writer's change shows the difference."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from textual import on
from textual.app import App, ComposeResult
from textual.widget import Widget
from textual.widgets import Input, Static

from memtui.core import graph as g
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.graph.curation import ConflictBar, Curator, EditHistory
from memtui.ui.screens.graph.detail import EntityDetail
from memtui.ui.screens.graph.messages import EditConfirmed, EntitySelected
from memtui.ui.screens.graph.model import GraphModel
from memtui.ui.screens.graph.screen import GraphScreen
from memtui.ui.screens.graph.table import EntityTable
from memtui.ui.widgets import AskText, Confirm
from tests.conftest import wait_for

GRAPH = (b'{"type":"entity","name":"Ada","entityType":"person","observations":["wrote the first program"]}\n'
         b'{"type":"entity","name":"Babbage","entityType":"person","observations":["built engines"]}\n'
         b'{"type":"entity","name":"Engine","entityType":"machine","observations":[]}\n'
         b'{"type":"relation","from":"Ada","to":"Babbage","relationType":"knows"}\n'
         b'{"type":"relation","from":"Babbage","to":"Engine","relationType":"built"}\n')


def _model() -> GraphModel:
    return GraphModel.of(g.loads(GRAPH, "memory/graph.jsonl"), [])


class Host(App):
    """One pane alone, and the messages it posts (they bubble up to the app)."""

    def __init__(self, pane: Widget) -> None:
        super().__init__()
        self.pane = pane
        self.selected: list[tuple[str, int | None]] = []
        self.confirmed: list[EditConfirmed] = []

    def compose(self) -> ComposeResult:
        yield self.pane

    @on(EntitySelected)
    def _selected(self, event: EntitySelected) -> None:
        self.selected.append((event.name, event.line))

    @on(EditConfirmed)
    def _confirmed(self, event: EditConfirmed) -> None:
        self.confirmed.append(event)


async def test_the_entity_table_alone_posts_the_entity_under_its_cursor() -> None:
    table = EntityTable(id="entities")
    app = Host(table)
    async with app.run_test(size=(80, 12)) as pilot:
        table.model = _model()
        table.refill("")
        assert table.draw_page(None, None) == ("Ada", 1)
        table.focus()
        await pilot.press("down")
        await wait_for(pilot, lambda: app.selected and app.selected[-1] == ("Babbage", 2), what="Babbage posted")
        table.next_sort()  # by type: the machine first
        table.refill("")
        table.draw_page(None, None)
        assert [e.name for e, _ in table.matches] == ["Engine", "Ada", "Babbage"]
        table.refill("type:machine")
        assert [e.name for e, _ in table.matches] == ["Engine"]
        assert "1–1 of 1 entity" in str(table.counts(cached=False))


async def test_the_detail_pane_alone_posts_the_entity_chosen_in_the_neighbourhood() -> None:
    detail = EntityDetail(id="graph-side")
    app = Host(detail)
    async with app.run_test(size=(80, 24)) as pilot:
        detail.model = _model()
        detail.show("Ada")
        await pilot.pause()
        text = str(detail.query_one("#entity-detail", Static).render())
        assert "Ada" in text and "relations: 1 out, 0 in" in text
        assert detail.highlighted_observation() == ("Ada", "wrote the first program")
        tree = detail.neighbourhood
        tree.focus()
        await pilot.press("down", "enter")  # the first neighbour: Babbage
        await wait_for(pilot, lambda: ("Babbage", None) in app.selected, what="Babbage posted")


async def test_the_curator_alone_asks_again_after_a_mistyped_target_and_posts_the_confirmed_edit() -> None:
    graph = _model().graph
    curator = Curator(lambda: graph, id="graph-curator")
    app = Host(curator)
    async with app.run_test(size=(80, 24)) as pilot:
        curator.relate("Ada")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText), what="the relation type asked")
        await pilot.press(*"likes", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText) and app.screen._value == "", what="the target asked")
        await pilot.press(*"Engin", "enter")  # no such entity
        await wait_for(pilot, lambda: isinstance(app.screen, AskText) and app.screen._value == "Engin",
                       what="the target asked again, with what was typed")
        await pilot.press("e", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="the confirmation")
        assert not app.confirmed, "nothing is posted before the person confirms"
        await pilot.press("y")
        await wait_for(pilot, lambda: app.confirmed, what="the confirmed edit posted")
        event = app.confirmed[0]
        assert event.operation == g.CreateRelation("Ada", "Engine", "likes") and event.before is graph
        assert event.doing == "do"


_WRITES = itertools.count()


def _saved(before: g.Graph, operation: g.Operation) -> g.Saved:
    """What a save of ``operation`` on ``before`` returns, the file's new sha256 made up."""
    change = operation.apply(before)
    after = change.graph
    after.source_sha256 = f"sha of write {next(_WRITES)}"
    return g.Saved(after, change)


def test_the_edit_history_undoes_newest_first_and_forgets_redo_after_a_new_edit() -> None:
    history = EditHistory(depth=2)
    graph = _model().graph
    add = g.AddObservation("Ada", "one")
    first = _saved(graph, add)
    history.saved("do", graph, add, first)
    rename = g.RenameEntity("Engine", "Analytical Engine")
    second = _saved(first.graph, rename)
    history.saved("do", first.graph, rename, second)
    found = history.undo()
    assert found is not None
    restore, question = found
    assert restore.previous is first.graph and restore.written == second.graph.source_sha256
    assert "1 earlier step can be undone" in question
    undone = _saved(second.graph, restore)
    history.saved("undo", second.graph, restore, undone)
    assert [s.operation for s in history.steps] == [add] and [u.operation for u in history.undone] == [rename]
    assert history.redo(undone.graph) == (rename, f"Redo the action undone last ({second.change.summary})?")
    try:  # a graph that changed after the undo cannot be redone, and redo is forgotten
        history.redo(graph)
    except g.GraphEditError as exc:
        assert "changed after the undo" in str(exc)
    else:
        raise AssertionError("redo on a changed graph was not refused")
    assert history.undone == []
    for n in range(3):  # at most depth steps are kept
        op = g.AddObservation("Ada", f"more {n}")
        history.saved("do", graph, op, _saved(graph, op))
    assert len(history.steps) == 2 and history.steps[-1].operation == g.AddObservation("Ada", "more 2")


async def test_a_save_refused_by_another_writers_change_shows_the_difference(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.switch_mode("graph")
        screen = app.screen
        assert isinstance(screen, GraphScreen)
        await wait_for(pilot, lambda: screen.graph is not None)
        stale = screen.graph
        assert stale is not None
        name = stale.entities[0].name
        path = sample_copy / "memory" / "graph.jsonl"
        # another writer deletes the entity the edit is about
        path.write_bytes(b"".join(line + b"\n" for line in path.read_bytes().splitlines()
                                  if json.loads(line).get("name") != name))
        screen.save(stale, g.AddObservation(name, "added in memtui"))
        bar = screen.query_one(ConflictBar)
        await wait_for(pilot, lambda: bar.has_class("shown") and not screen.saving, what="the conflict bar")
        diff = str(bar.query_one("#graph-conflict-diff", Static).render())
        assert any(line.startswith("-") and name in line for line in diff.splitlines()), "the removed record is shown as a removed line"
        assert "changed on disk" in str(bar.query_one("#graph-conflict-text", Static).render())
        assert b"added in memtui" not in path.read_bytes()  # nothing was written
        screen.query_one("#entities").focus()
        await pilot.press("escape")  # Esc hides the bar, and leaves the filter alone
        assert not bar.has_class("shown") and screen.query_one("#graph-filter", Input).value == ""


def test_the_detail_pane_alone_draws_an_entity_its_observations_and_neighbourhood(snap_compare) -> None:
    """The pane as the Graph area shows it, without the area: the entity's record, its
    relations, its observations and the tree (SVG in ``__snapshots__/test_graph_panes/``)."""
    detail = EntityDetail(id="graph-side")

    async def show(pilot) -> None:  # noqa: ANN001
        detail.model = _model()
        detail.show("Babbage")
        await pilot.pause()

    assert snap_compare(Host(detail), terminal_size=(60, 16), run_before=show)
