"""Key-press latency on B22's big note: the Notes editor and the Tree's plain-text view.

Usage: python bench/big_note_keys.py SHARED_DIR [--presses N]

Builds B22's 4.6 MB markdown note (``SHARED_DIR/bug-inputs/B22/make_big_markdown.py``) and, in
one run, interleaved, times N key presses (each until the app has handled it and refreshed):

- ``notes``: a character typed in the Notes editor holding the big note (memtui's editor, whose
  wrapped height is counted once per change);
- ``anchor``: the same key in a plain Textual ``TextArea`` holding the same text with soft wrap
  (Textual 8.2.8 recounts the wrapped height for every line it draws);

Prints median and max per kind in milliseconds. These figures replace the wall-clock
assertions the Pilot tests once had (a unit test asserts no time under 10 s, house rule).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.app import App, ComposeResult  # noqa: E402
from textual.widgets import TextArea  # noqa: E402

from memtui.core.session import Session  # noqa: E402
from memtui.core.workspace import Workspace  # noqa: E402


class Plain(App):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield TextArea(self.text, soft_wrap=True, id="plain")


async def _presses(app: App, focus, key: str, count: int, done=None) -> list[float]:  # noqa: ANN001
    times = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for _ in range(50):
            if focus(app):
                break
            await pilot.pause(0.1)
        for _ in range(count):
            started = time.perf_counter()
            await pilot.press(key)
            if done is not None:
                while not done(app):
                    await pilot.pause(0.01)
            await pilot.pause()
            times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shared", type=Path)
    parser.add_argument("--presses", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run([sys.executable, str(args.shared / "bug-inputs/B22/make_big_markdown.py"), str(work / "big")],
                       check=True, capture_output=True)
        big = (work / "big" / "big-notes.md").read_bytes()
        root = work / "ws"
        (root / "memory").mkdir(parents=True)
        (root / "memory" / "MEMORY_CUSTOM.md").write_bytes(big)
        ws = Workspace.open(root)
        from memtui.ui.screens.notes import NotesScreen

        class NotesApp(App):
            def __init__(self, session: Session) -> None:
                super().__init__()
                self.ws, self.session = session.ws, session

            def on_mount(self) -> None:
                self.push_screen(NotesScreen(self.session))

        def notes_ready(app: App) -> bool:
            screen = app.screen
            if not isinstance(screen, NotesScreen) or screen.note is None:
                return False
            screen.editor.focus()
            return True

        def plain_ready(app: App) -> bool:
            app.query_one("#plain").focus()
            return True

        results: dict[str, list[float]] = {"notes": [], "anchor": []}
        for _ in range(2):  # interleaved rounds
            with Session.open(ws, purpose="bench") as session:
                results["notes"] += asyncio.run(_presses(NotesApp(session), notes_ready, "Z", args.presses))
            results["anchor"] += asyncio.run(_presses(Plain(big.decode()), plain_ready, "Z", args.presses))
        for kind, times in results.items():
            print(f"{kind:7} median {statistics.median(times):8.1f} ms   max {max(times):8.1f} ms   n={len(times)}")


if __name__ == "__main__":
    main()
