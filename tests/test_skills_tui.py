"""The Skills area, driven headless with Textual's Pilot."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Markdown, Static, TabbedContent

from memtui.core.skills import load_folder
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from tests.conftest import open_area, wait_for


def static_text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_skills_area_lists_catalogue_details_and_budget(sample_copy: Path) -> None:
    expected = load_folder(sample_copy)
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_area(pilot, "3")
        table = screen.query_one("#skills-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == len(expected.skills))
        assert static_text(screen, "#skills-count") == expected.count_line()
        shadowed = [i for i, s in enumerate(expected.skills) if s.shadowed_by]
        assert shadowed and str(table.get_row_at(shadowed[0])[3]) == "shadowed"
        # moving the cursor shows that skill's body, findings and head
        bad = next(i for i, s in enumerate(expected.skills) if s.has_problems)
        table.move_cursor(row=bad)
        await pilot.pause()
        skill = expected.skills[bad]
        md = screen.query_one("#skill-body", Markdown)
        source = md.source if hasattr(md, "source") else md._markdown
        assert source == skill.body and not source.startswith("---")
        findings = static_text(screen, "#skill-findings")
        assert all(f.code in findings for f in skill.findings)
        await pilot.press("b")
        assert screen.query_one("#skill-tabs", TabbedContent).active == "tab-budget"
        budget = static_text(screen, "#skill-budget")
        assert "of 8,192 bytes" in budget and "Not offered to agents" in budget
        await pilot.press("minus")
        assert "of 7,168 bytes" in static_text(screen, "#skill-budget")


async def test_markup_like_skill_names_show_literally(shared: Path) -> None:
    app = MemtuiApp(Workspace.open(shared / "bug-inputs" / "B17"))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_area(pilot, "3")
        table = screen.query_one("#skills-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        names = {str(table.get_row_at(i)[0]) for i in range(2)}
        assert names == {"[/] cleanup", "reports/weekly"}
        descriptions = {str(table.get_row_at(i)[4]) for i in range(2)}
        assert any("[bold]logs[/bold]" in d for d in descriptions)


async def test_versions_tab_shows_binding_state_versions_and_test_results(sample_copy: Path, tmp_path: Path) -> None:
    import json
    import shutil

    from memtui.core.session import Session
    from memtui.core.skills import versions as sv
    from memtui.core.skills.content import read_content
    from memtui.core.skills.edit import set_metadata_field

    skill_md = sample_copy / "skills/parcel-trace/SKILL.md"
    skill_md.write_text(set_metadata_field(skill_md.read_text(), "memory-node", "support/parcels-lost"))
    draft = tmp_path / "draft"
    shutil.copytree(sample_copy / "skills/parcel-trace", draft)
    (draft / "test_skill.py").write_text("print('ok')\n")
    (draft / "skill-manifest.json").write_text(json.dumps({
        "inputs": [], "read_set": [], "classification": {"outcomes": ["x"]}, "write_packet": {"writes": []},
        "verification": [{"check": "y"}], "tests": {"command": "python3", "args": ["test_skill.py"]}}))
    with Session.open(sample_copy) as s:
        sv.adopt(s, "parcel-trace")
        sv.propose(s, "parcel-trace", read_content(draft).files, case="C-1", source_request="SR-1",
                   profile="support.agent")
        sv.test(s, "parcel-trace@2")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_area(pilot, "3")
        table = screen.query_one("#skills-table", DataTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        row = next(i for i, s in enumerate(screen._rows) if s.key == "parcel-trace" and s.root == "skills")
        table.move_cursor(row=row)
        await pilot.pause()
        await pilot.press("v")
        assert screen.query_one("#skill-tabs", TabbedContent).active == "tab-versions"
        text = static_text(screen, "#skill-governance")
        assert "support/parcels-lost (front matter)" in text and "owner     support.parcels-lost" in text
        assert "state     published (skill:parcel-trace@1)" in text
        assert "@2 proposed  proposal  tests passed" in text and "@1 active  baseline  not tested" in text


async def test_a_skill_with_a_broken_manifest_is_not_valid_in_the_area(sample_copy: Path) -> None:
    (sample_copy / "skills/parcel-trace/skill-manifest.json").write_text('{"classification": "answered"}')
    expected = load_folder(sample_copy)
    row = next(i for i, s in enumerate(expected.skills) if s.path == "skills/parcel-trace/SKILL.md")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_area(pilot, "3")
        table = screen.query_one("#skills-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == len(expected.skills))
        assert str(table.get_row_at(row)[2]) == "NO"
        table.move_cursor(row=row)
        await pilot.pause()
        assert "skill-manifest-invalid" in static_text(screen, "#skill-findings")
