"""The TUI starts on bad input of every class a new user met: a finding,
never an exit at start."""

from __future__ import annotations

from pathlib import Path

from memtui.core.workspace import Workspace
from tests.test_bad_input import DEEP, _bomb, _codes, _ws


async def test_the_tui_starts_and_visits_every_area_on_bad_input(tmp_path: Path) -> None:
    from memtui.ui.app import MemtuiApp
    from memtui.ui.areas import AREAS
    from tests.conftest import wait_for

    root = _ws(tmp_path)
    graph = root / "memory" / "graph.jsonl"
    graph.write_bytes(graph.read_bytes() + b'\n{"type":"entity","name":"d","entityType":"x","observations":' +
                      DEEP.encode() + b"}\n")
    article = root / "memory" / "support" / "triage-checklist.md"
    article.write_text(article.read_text().replace("---\n", "---\ndate: 2024-13-45\n", 1))
    (root / "skills" / "bomb-skill").mkdir()
    (root / "skills" / "bomb-skill" / "SKILL.md").write_text(_bomb())
    (root / "skills" / "parcel-utils" / "SKILL.md").write_text("---\n---\nname: parcel-utils\ndescription: x\n---\n")
    (root / "memory" / ".MEMORY.md.abcdefgh.tmp").write_bytes(b"x")
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None, what="the audit")
        await wait_for(pilot, lambda: app.index_report is not None or app.index_error is not None, what="the index")
        for area in AREAS:
            await pilot.press(area.key)
            await pilot.pause()
        assert {"graph-line-malformed", "front-matter-invalid", "front-matter-second-block",
                "temp-file-leftover"} <= _codes(app.report)
        assert app.index_error is None
