"""The TUI draws its first screen before it loads what that screen does not need: the other
areas, the search engine, the audit's scanners. A fresh interpreter opens the sample workspace
headless with the background work held back and lists what is imported at the first frame."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import json, sys
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp


class FirstFrame(MemtuiApp):
    def _start_background_work(self) -> None:  # the audit and index workers import their own modules
        pass

    def on_ready(self) -> None:
        tree = self.screen.query_one("#nodes")
        print(json.dumps({"modules": sorted(sys.modules), "screen": type(self.screen).__name__,
                          "top": [str(node.label) for node in tree.root.children]}))
        self.exit()


if __name__ == "__main__":
    FirstFrame(Workspace.open(sys.argv[1])).run(headless=True, size=(120, 40))
"""

#: what the first screen (the Tree area) must not wait for
NOT_AT_FIRST_PAINT = ("whoosh", "memtui.core.search.index", "memtui.ui.screens.search", "memtui.ui.screens.graph.screen",
                      "memtui.ui.screens.backup", "memtui.ui.screens.notes", "memtui.ui.keys", "detect_secrets",
                      "memtui.core.tree.audit", "rapidfuzz")


def test_the_first_screen_is_drawn_without_the_other_areas_the_search_engine_or_the_scanners(
        sample_copy: Path) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(sample_copy)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TERM": "xterm-256color"})
    assert done.returncode == 0, done.stderr
    frame = json.loads(done.stdout.strip().splitlines()[-1])
    assert frame["screen"] == "TreeScreen"
    assert frame["top"], "the tree's top level is drawn"
    loaded = [name for name in NOT_AT_FIRST_PAINT if name in frame["modules"]]
    assert not loaded, f"imported before the first frame: {loaded}"


def test_a_keys_table_is_still_checked_against_every_area(sample_copy: Path) -> None:
    """With a ``[keys]`` table the ids are checked at start (that needs every area's keys)."""
    config = Path(os.environ["MEMTUI_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text('[keys]\n"graph.typo" = "z"\n', encoding="utf-8")
    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp

    app = MemtuiApp(Workspace.open(sample_copy))
    try:
        assert any("'graph.typo' is not a key" in w for w in app._startup_warnings)
    finally:
        app.session.close()


@pytest.mark.parametrize("area, bar_id", [("search", "search-progress"), ("audit", "audit-progress"),
                                          ("consolidate", "cons-progress"), ("migrate", "mig-progress")])
async def test_an_areas_hidden_progress_bar_does_not_redraw_when_idle(sample_copy: Path, area: str, bar_id: str) -> None:
    """An indeterminate progress bar redraws 15 times a second even hidden: each area's bar has
    a total from the start (and again once hidden), so a TUI left idle after its work stays
    idle."""
    from textual.widgets._progress_bar import Bar

    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp
    from memtui.ui.areas import AREAS
    from tests.conftest import open_area, wait_for

    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None, what="the start-up audit")
        await open_area(pilot, next(a.key for a in AREAS if a.mode == area))
        bar = app.screen.query_one(f"#{bar_id}")
        # the bar shows while the area's work runs (a loaded machine is still at it here)
        await wait_for(pilot, lambda: app.index_report is not None, what="the start-up indexing")
        await wait_for(pilot, lambda: not bar.display, what="the progress bar hidden once the work is done")
        assert bar.query_one(Bar).auto_refresh is None
    app.session.close()
