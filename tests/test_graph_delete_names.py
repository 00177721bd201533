"""Deleting an entity that relations point to names those relations before anything is deleted,
in the TUI's confirmation and in the CLI (a bounded list, then "and N more"): a Yes/No alone
deleted relations no one was shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.core import graph as g
from memtui.core.graph.operations import NAMED_RELATIONS
from memtui.core.workspace import Workspace
from tests.conftest import run_cli, wait_for


def _hub(tmp_path: Path, spokes: int) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    lines = [{"type": "entity", "name": "Hub", "entityType": "system", "observations": []}]
    lines += [{"type": "entity", "name": f"Spoke {i:02d}", "entityType": "system", "observations": []}
              for i in range(spokes)]
    lines += [{"type": "relation", "from": f"Spoke {i:02d}", "to": "Hub", "relationType": f"feeds{i:02d}"}
              for i in range(spokes)]
    lines.append({"type": "relation", "from": "Hub", "to": "Spoke 00", "relationType": "answers\x1b[2J"})
    (root / "memory" / "graph.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return root


def test_the_delete_names_each_relation_that_goes_bounded(tmp_path: Path) -> None:
    graph = g.load(_hub(tmp_path, NAMED_RELATIONS + 4) / "memory" / "graph.jsonl")
    change = g.DeleteEntity("Hub").apply(graph)
    said = " ".join(change.notes)
    assert "'Spoke 00' --feeds00--> 'Hub'" in said and "'Spoke 09' --feeds09--> 'Hub'" in said
    assert "Spoke 10" not in said and "and 5 more" in said, said
    small = g.DeleteEntity("Hub").apply(g.load(_hub(tmp_path / "small", 2) / "memory" / "graph.jsonl"))
    assert "more" not in " ".join(small.notes) and "'Hub' --answers\\u001b[2J--> 'Spoke 00'" in " ".join(small.notes)
    alone = g.DeleteEntity("Spoke 05").apply(graph)
    assert alone.notes and "feeds05" in alone.notes[0] and "feeds04" not in alone.notes[0]


def test_the_cli_delete_names_the_relations_it_would_take(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = _hub(tmp_path, 3)
    before = (root / "memory" / "graph.jsonl").read_bytes()
    code, _out, err = run_cli(capsys, "graph", "delete", "-w", str(root), "Hub")
    assert code == 2, err  # no terminal to ask on and no --yes: the command line is incomplete
    assert "'Spoke 01' --feeds01--> 'Hub'" in err and "'Hub' --answers\\u001b[2J--> 'Spoke 00'" in err
    assert (root / "memory" / "graph.jsonl").read_bytes() == before, "nothing was deleted"


async def test_the_tui_confirmation_names_the_relations(tmp_path: Path) -> None:
    from memtui.ui.app import MemtuiApp
    from memtui.ui.widgets import Confirm
    from tests.test_graph_tui import _open_graph

    root = _hub(tmp_path, NAMED_RELATIONS + 2)
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await _open_graph(pilot, app)
        screen.show_entity("Hub")
        await pilot.pause()
        screen.action_delete()
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="the confirmation")
        question = str(app.screen._question)
        assert "'Spoke 03' --feeds03--> 'Hub'" in question and "and 3 more" in question, question
        await pilot.press("n")
        await pilot.pause()
    app.session.close()
