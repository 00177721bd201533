"""A proposal keeps its class and reason: ``propose --class``, ``proposals list --class`` and the
Proposals area's class filter."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable

from memtui.core import classify
from memtui.core import governance as gov
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.proposals import ProposalsScreen
from tests.conftest import open_area, run_cli, wait_for


def _propose(capsys, ws: Path, tmp_path: Path, name: str, *extra: str) -> tuple[int, str, str]:
    src = tmp_path / f"{name}.md"
    src.write_text(f"# {name}\n\nThe depot searches for 48 hours.\n")
    return run_cli(capsys, "propose", "-w", str(ws), "--node", "support/parcels-lost", "--article", f"{name}.md",
                   "--from", str(src), "--case", "C1", "--source-request", "SR1", "--profile", "p", *extra)


def test_a_proposal_keeps_its_class_and_list_filters_by_it(sample_copy: Path, tmp_path: Path, capsys) -> None:
    assert _propose(capsys, sample_copy, tmp_path, "a", "--class", "mechanic", "--reason", "always done")[0] == 0
    assert _propose(capsys, sample_copy, tmp_path, "b", "--class", "article", "--reason", "a pattern")[0] == 0
    code, out, _ = run_cli(capsys, "proposals", "list", "-w", str(sample_copy), "--class", "mechanic", "--json")
    page = json.loads(out)
    assert code == 0 and [p["id"] for p in page["proposals"]] == ["support/parcels-lost/a.md@1"]
    assert page["proposals"][0]["classification"] == {"class": "mechanic", "reason": "always done"}
    assert page["total"] == 1 and page["class"] == "mechanic"
    code, out, _ = run_cli(capsys, "proposals", "list", "-w", str(sample_copy), "--class", "article")
    assert "support/parcels-lost/b.md@1" in out and "[article]" in out and "a.md@1" not in out
    code, out, _ = run_cli(capsys, "proposals", "list", "-w", str(sample_copy), "--class", "drop")
    assert code == 0 and "no proposed proposals of class drop" in out


def test_class_and_reason_go_together_and_the_class_is_checked(sample_copy: Path, tmp_path: Path, capsys) -> None:
    code, _, err = _propose(capsys, sample_copy, tmp_path, "c", "--class", "article")
    assert code == 2 and "--class and --reason go together" in err
    code, _, err = _propose(capsys, sample_copy, tmp_path, "c", "--class", "essay", "--reason", "x")
    assert code == 2 and "invalid choice" in err
    with Session.open(sample_copy, read_only=True) as s:
        assert not any(v.article.endswith("/c.md") for v in gov.Ledger(s.store).proposals())


def test_a_proposal_without_a_class_still_reads(sample_copy: Path) -> None:
    with Session.open(sample_copy, read_only=True) as s:
        queue = gov.Ledger(s.store).proposals()
    assert queue and all(v.classification is None for v in queue)
    assert classify.of_class(queue, "article") == []


async def test_the_proposals_area_filters_by_class(sample_copy: Path, tmp_path: Path, capsys) -> None:
    _propose(capsys, sample_copy, tmp_path, "a", "--class", "mechanic", "--reason", "always done")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_area(pilot, "7")
        assert isinstance(screen, ProposalsScreen)
        await wait_for(pilot, lambda: screen.current is not None)
        table = screen.query_one("#prop-queue", DataTable)
        assert table.row_count == 4
        await pilot.press("f")  # the first class: mechanic
        await wait_for(pilot, lambda: table.row_count == 1)
        assert screen.class_filter == "mechanic" and screen._rows[0].id == "support/parcels-lost/a.md@1"
        assert "class mechanic" in screen.count_line()
        await pilot.pause()
        assert "class: mechanic — always done" in str(screen._provenance(screen._rows[0], ""))
        await pilot.press("f")  # article: none
        await wait_for(pilot, lambda: table.row_count == 0)
        for _ in classify.CLASSES[1:]:
            await pilot.press("f")
        await wait_for(pilot, lambda: screen.class_filter is None and table.row_count == 4)
