"""A workspace whose path is not UTF-8 (bytes such as 0xFF, which Linux allows in a name) opens
in the TUI like any other: it starts, visits every area, and follows changes made by other
processes (the CLI already worked there)."""

from __future__ import annotations

import os
import shutil
import tempfile
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtui.core.watch import watch
from memtui.core.workspace import Workspace
from tests.conftest import SAMPLE, until_watched


@pytest.fixture
def odd_root() -> Iterator[Path]:
    """A copy of the sample workspace in a folder named with bytes that are not UTF-8, under a
    short temporary folder: the header shows the whole path, which pytest's own folders (under
    xdist) made too long for it, cutting the odd bytes off."""
    short = tempfile.mkdtemp(prefix="m")
    raw = os.fsencode(short) + b"/ws-\xff\xfe-\xc3"
    shutil.copytree(os.fsencode(SAMPLE), raw, symlinks=True)
    root = Path(os.fsdecode(raw))
    assert "\udcff" in str(root)
    yield root
    shutil.rmtree(os.fsencode(short), ignore_errors=True)


async def test_the_tui_opens_a_workspace_whose_path_is_not_utf8(odd_root: Path) -> None:
    from memtui.ui.app import MemtuiApp
    from tests.test_json_strings import visit_every_area

    app = MemtuiApp(Workspace.open(odd_root))
    async with app.run_test(size=(120, 40)) as pilot:
        await visit_every_area(pilot, app)
        assert app.is_running
    app.session.close()


def test_changes_are_followed_in_a_workspace_whose_path_is_not_utf8(odd_root: Path) -> None:
    ws = Workspace.open(odd_root)
    stop = threading.Event()
    seen: list = []
    failed: list = []

    def follow() -> None:
        try:
            for changes in watch(ws, stop):
                seen.append(changes)
                if "notes" in changes.topics:
                    stop.set()
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            failed.append(exc)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    until_watched(odd_root / "memory", seen, thread)  # its watches are registered before the write
    notes = os.fsencode(odd_root / "memory" / "MEMORY_CUSTOM.md")
    subprocess.run([sys.executable, "-c", "import os, sys; open(os.fsencode(sys.argv[1]), 'a').write('agent line\\n')",
                    os.fsdecode(notes)], check=True)
    thread.join(timeout=20)
    stop.set()
    assert not failed, failed
    assert any("memory/MEMORY_CUSTOM.md" in c.of("notes") for c in seen)


@pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")
def test_the_real_tui_draws_a_workspace_whose_path_is_not_utf8(odd_root: Path, tmp_path: Path) -> None:
    """``memtui PATH`` in a real terminal: it draws (the path's bad bytes shown as ``\\xff``)
    and ends without a traceback."""
    from tests.test_tui_escapes import _run_in_terminal, drawn_text

    written = _run_in_terminal(odd_root, ["4", "9"], tmp_path, until=b"ws-\\xff\\xfe")
    shown = drawn_text(written).decode("utf-8", "replace")
    at = max(shown.find("Traceback"), shown.find("Error"))
    assert at < 0, shown[max(at - 300, 0):at + 6000]  # the whole traceback, to find what failed
    assert "ws-\\xff\\xfe" in shown, "the header names the workspace, its bad bytes shown"
