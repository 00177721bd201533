"""No escape, control or bidi-override character from a workspace reaches the terminal from the
TUI: every text from the workspace is shown as data (DESIGN.md invariant 11).

Each C0 and C1 control, DEL, the bidi controls, and whole sequences (OSC title, CSI clear screen,
CSI with parameters, DCS, the 8-bit CSI) are written into an article (title and body), the member
notes, the notebook, a node index line, a skill, graph names and observations, a session
history, an experience entry and a proposal. Every area is visited, and every segment of text
the screen sends to the terminal (the compositor's strips, what the driver writes apart from
Textual's own control segments) is checked: none of those characters is in it, and their
visible stand-ins are. A second test runs the real TUI in a pseudo-terminal and reads every byte
it writes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.text import TERMINAL_UNSAFE
from tests.conftest import SAMPLE, run_cli, settle, wait_for

#: Sequences that change a terminal when written raw, each followed by a marker.
SEQUENCES = ["\x1b]0;PWNED-TITLE\x07", "\x1b[2J", "\x1b[38;5;196;1m", "\x1bP1$qm\x1b\\", "\x9b31m",
             "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"]
#: Every C0 control but TAB and LF, DEL, every C1 control, the bidi controls.
CHARS = ([chr(c) for c in range(0x20) if c not in (0x09, 0x0A)] + ["\x7f"] + [chr(c) for c in range(0x80, 0xA0)]
         + [chr(c) for c in range(0x202A, 0x202F)] + [chr(c) for c in range(0x2066, 0x206A)]
         + ["\u200e", "\u200f", "\u061c"])
PAYLOAD = "".join(SEQUENCES) + " ctl " + "".join(CHARS) + " end"
#: The payload for a markdown file: a NUL makes a file binary (a finding; not shown as text).
TEXT_PAYLOAD = PAYLOAD.replace("\x00", "")


def _hostile(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root, symlinks=True)
    mem = root / "memory"
    article = mem / "support" / "triage-checklist.md"
    text = article.read_text(encoding="utf-8")
    text = text.replace('title: "First-line triage checklist"', 'title: "First-line \\e]0;T\\a triage checklist"')
    article.write_text(text.replace("Most tickets", f"Zebra {TEXT_PAYLOAD}\n\nMost tickets", 1), encoding="utf-8")
    for name in ("MEMORY_CUSTOM.md", "MEMORY.md"):
        notes = mem / name
        notes.write_text(notes.read_text(encoding="utf-8") + f"- zebra {TEXT_PAYLOAD}\n", encoding="utf-8")
    index = mem / "support" / "AGENTS.md"
    index.write_text(index.read_text(encoding="utf-8").replace(
        "## Child nodes", f"- [Ghost {SEQUENCES[0]}x](ghost.md) — {''.join(SEQUENCES)} \u202e\u2066 end\n\n"
                          "## Child nodes"), encoding="utf-8")  # no line-breaking control: one index line
    skill = root / "skills" / "parcel-utils" / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8") + f"\nzebra {TEXT_PAYLOAD}\n", encoding="utf-8")
    import json

    graph = mem / "graph.jsonl"
    data = graph.read_bytes()
    data = (json.dumps(
        {"type": "entity", "name": f"Aa Zebra {SEQUENCES[0]}", "entityType": f"kind{SEQUENCES[1]}",
         "observations": [f"zebra {PAYLOAD}"]}) + "\n" + json.dumps(
        {"type": "relation", "from": f"Aa Zebra {SEQUENCES[0]}", "to": "RouteCore", "relationType": f"uses{SEQUENCES[4]}"})
        + "\n").encode("utf-8") + data  # first, so the Graph area shows it at once
    graph.write_bytes(data)
    history = root / "sessions" / "durable" / "tg-0000-zebra.jsonl"
    history.write_text(json.dumps({"ts": "2026-11-05T10:00:00Z", "role": "user", "content": f"zebra {PAYLOAD}"})
                       + "\n", encoding="utf-8")
    exp = mem / "support" / "experience" / "exp-001-cod-double-settlement.md"
    exp.write_text(exp.read_text(encoding="utf-8") + f"\nzebra {TEXT_PAYLOAD}\n", encoding="utf-8")
    return root


def _leaks(app) -> list[str]:  # noqa: ANN001
    """The unsafe characters in the text segments the screen would send to the terminal."""
    found = []
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        for segment in strip:
            if segment.control:
                continue
            bad = TERMINAL_UNSAFE.findall(segment.text)
            if bad:
                found.append(f"row {y}: {sorted({f'U+{ord(c):04X}' for c in bad})} in {segment.text[:60]!r}")
    return found


def _screen_text(app) -> str:  # noqa: ANN001
    return "\n".join("".join(s.text for s in strip) for strip in app.screen._compositor.render_strips())


def test_the_rule_covers_every_control_and_bidi_character() -> None:
    from memtui.core.text import shown_text

    for char in CHARS + ["\ud800"]:
        assert TERMINAL_UNSAFE.search(char), f"U+{ord(char):04X}"
        assert not TERMINAL_UNSAFE.search(shown_text(f"a{char}b")), f"U+{ord(char):04X}"
    assert shown_text("line one\n\tline two\n") == "line one\n\tline two\n", "text layout is kept"
    assert not TERMINAL_UNSAFE.search(shown_text(PAYLOAD))


@pytest.mark.slow
async def test_no_control_character_from_the_workspace_reaches_the_screen(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from textual.screen import ModalScreen
    from textual.widgets import DataTable, Tree

    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp
    from memtui.ui.areas import AREAS

    root = _hostile(tmp_path)
    body = tmp_path / "proposal.md"
    body.write_text(f"# Zebra {SEQUENCES[0]}\n\nzebra {TEXT_PAYLOAD}\n", encoding="utf-8")
    code, _out, err = run_cli(capsys, "propose", "-w", str(root), "--node", "support", "--article", "zebra.md",
                              "--from", str(body), "--case", "c-1", "--source-request", "r-1",
                              "--profile", "support.agent", "--title", f"Zebra {SEQUENCES[0]} title")
    assert code == 0, err
    app = MemtuiApp(Workspace.open(root))
    leaks: dict[str, list[str]] = {}
    shown: dict[str, str] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.report is not None, what="the audit")
        await wait_for(pilot, lambda: app.index_report is not None or app.index_error is not None, what="the index")
        for area in AREAS:
            await pilot.press(area.key)
            await settle(pilot)
            await pilot.pause()
            screen = app.screen
            # walk the area's list: each row or node shown in turn, with its details
            for widget in [*screen.query(DataTable), *screen.query(Tree)]:
                if not widget.display or area.mode == "notes":  # keys there would edit the notes
                    continue
                widget.focus()
                for _ in range(6):
                    await pilot.press("down")
                    await pilot.pause()
                    leaks.setdefault(area.mode, []).extend(_leaks(app))
                await pilot.press("enter")
                await settle(pilot)
                await pilot.pause()
                leaks.setdefault(area.mode, []).extend(_leaks(app))
            leaks.setdefault(area.mode, []).extend(_leaks(app))
            shown[area.mode] = _screen_text(app)
            while isinstance(app.screen, ModalScreen):  # a question or a detail opened by Enter
                await pilot.press("escape")
                await pilot.pause()
        # the hostile history (the first row) opened in the Sessions area
        await pilot.press(next(a.key for a in AREAS if a.mode == "sessions"))
        await settle(pilot)
        table = app.screen.query(DataTable).first()
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.pause()
        leaks.setdefault("sessions", []).extend(_leaks(app))
        shown["sessions"] = _screen_text(app)
        # the article itself, in the Tree area
        await pilot.press("1")
        app.screen.reveal("support", "support/triage-checklist.md")
        await settle(pilot)
        await pilot.pause(0.3)
        await settle(pilot)
        leaks.setdefault("article", []).extend(_leaks(app))
        shown["article"] = _screen_text(app)
        # a toast holding user text
        app.notify(f"external link (not opened): {PAYLOAD}", markup=False)
        await pilot.pause()
        toast = list(app._notifications)[-1].message
        assert "external link" in toast and not TERMINAL_UNSAFE.search(toast), toast
        leaks.setdefault("toast", []).extend(_leaks(app))
        # the Search area, on a word of the payload's lines
        from tests.test_search_tui import _search_area, _type

        screen = await _search_area(pilot, app)
        await _type(pilot, screen, "zebra")
        assert screen._hits, "the hostile texts are found"
        table = screen.query_one("#search-results", DataTable)
        table.focus()
        for _ in range(len(screen._hits)):
            await pilot.press("down")
            await pilot.pause()
            leaks.setdefault("search", []).extend(_leaks(app))
    app.session.close()
    bad = {mode: found[:5] for mode, found in leaks.items() if found}
    assert not bad, bad
    for mode in ("notes", "article", "graph", "sessions"):
        assert "Zebra" in shown[mode] or "zebra" in shown[mode], f"{mode}: the hostile text is on the screen"
        assert any(form in shown[mode] for form in ("␛", "U+001B", "\\u001b")), (
            mode, [line for line in shown[mode].splitlines() if "ebra" in line])


def drawn_text(written: bytes) -> bytes:
    """What a terminal shows of ``written``, roughly: its escape sequences (CSI, OSC, DCS and the
    two-byte ones) taken out, so a text Textual drew in pieces (a style change, a cursor move
    between two runs of one line) reads whole."""
    import re

    return re.sub(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1bP.*?\x1b\\|\x1b[@-_]", b"",
                  written, flags=re.S)


def _run_in_terminal(root: Path, keys: list[str], tmp_path: Path, until: bytes = b"Tree") -> bytes:
    """Run the real TUI (``python -m memtui ROOT``) in a pseudo-terminal of 160×50, type
    ``keys`` once it drew its area bar (waited for, up to a minute on a loaded machine, not a
    fixed time), quit, and return every byte it wrote."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    import time

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    env = {**torture_env(), "TERM": "xterm-256color", "COLORTERM": "truecolor",
           "MEMTUI_CONFIG_DIR": str(tmp_path / "cfg"), "MEMTUI_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen([sys.executable, "-m", "memtui", str(root)], stdin=slave, stdout=slave, stderr=slave,
                            env=env, close_fds=True, start_new_session=True)
    os.close(slave)
    out = bytearray()

    def read_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    out.extend(os.read(master, 65536))
                except OSError:
                    return

    try:
        deadline = time.monotonic() + 60.0
        while until not in drawn_text(bytes(out)) and time.monotonic() < deadline and proc.poll() is None:
            read_for(0.5)  # the first paint (the area bar names the areas), or what the caller waits for
        read_for(1.0)
        for key in keys:
            os.write(master, key.encode())
            read_for(3.0)
        os.write(master, b"\x11")  # ctrl+q
        read_for(2.0)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        os.close(master)
    return bytes(out)


def torture_env() -> dict[str, str]:
    from tests import torture

    return torture.env()


@pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")
def test_the_real_terminal_gets_no_escape_from_the_workspace(tmp_path: Path) -> None:
    """What the Textual driver really writes: the hostile sequences are not in it (their text
    after the escape is, as data), nor any C0/C1 control Textual itself never writes, nor a
    bidi override."""
    root = _hostile(tmp_path)
    written = _run_in_terminal(root, ["4", "9", "\r", "5"], tmp_path)
    assert b"PWNED-TITLE" in written, "the hostile text was drawn"
    text = written.decode("utf-8", "replace")
    for sequence in SEQUENCES:
        assert sequence not in text, f"{sequence!r} reached the terminal"
    assert "\x1b]0;PWNED" not in text and "\x1bP1$q" not in text and "\x9b" not in text
    own = {"\x1b", "\r", "\x07", "\x08"}  # Textual's own: escape sequences, line starts (checked above)
    raw = sorted({f"U+{ord(c):04X}" for c in CHARS if c not in own and c in text})
    assert not raw, raw


def _cli_in_terminal(*args: str) -> bytes:
    """Every byte ``memtui ARGS`` writes to a pseudo-terminal (standard output and error)."""
    import pty
    import select

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "memtui", *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=torture_env(), close_fds=True)
    os.close(slave)
    out = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out.extend(chunk)
    proc.wait(timeout=30)
    os.close(master)
    return bytes(out)


@pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")
def test_the_cli_on_a_terminal_shows_escapes_and_keeps_bytes_in_a_pipe(tmp_path: Path) -> None:
    """``memtui notes show`` printed an agent's ``ESC ] 0;…`` raw to the terminal (it retitled
    it); on a terminal every unsafe character is now shown, while a pipe still gets the file's
    bytes exactly (the command's output is data there)."""
    root = _hostile(tmp_path)
    notes = (root / "memory" / "MEMORY_CUSTOM.md").read_bytes()
    for args in (["notes", "show"], ["sessions", "show", "tg-0000-zebra"], ["sessions", "list"],
                 ["graph", "show", f"Aa Zebra {SEQUENCES[0]}"], ["search", "zebra"]):
        written = _cli_in_terminal(*args[:1], *args[1:-1], "-w", str(root), args[-1]) if len(args) > 2 else \
            _cli_in_terminal(*args, "-w", str(root))
        text = written.decode("utf-8", "replace")
        assert "Traceback" not in text, text[-800:]
        assert "\x1b" not in text and "\x9b" not in text, (args, text[:400])
        raw = sorted({f"U+{ord(c):04X}" for c in CHARS if c in text and c not in ("\r",)})
        assert not raw, (args, raw)
    assert "PWNED-TITLE" in _cli_in_terminal("notes", "show", "-w", str(root)).decode("utf-8", "replace")
    piped = subprocess.run([sys.executable, "-m", "memtui", "notes", "show", "-w", str(root)], capture_output=True,
                           stdin=subprocess.DEVNULL, env=torture_env(), timeout=60)
    assert piped.stdout == notes, "a pipe gets the file's bytes"


async def test_the_notes_editor_shows_stand_ins_and_saves_the_original_bytes(tmp_path: Path) -> None:
    """The notes editor draws an agent's escape, CR, form feed and direction override as
    one-cell symbols, and a save writes them back as they were (never the symbols): a member's
    edit elsewhere in the file changes only what the member typed."""
    from textual.widgets import TextArea

    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp
    from memtui.ui.areas import AREAS

    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root, symlinks=True)
    notes = root / "memory" / "MEMORY_CUSTOM.md"
    agent = "- agent \x1b]0;PWNED-TITLE\x07 cr\rff\x0c rtl \u202eabc\u202c ls\u2028end\n"
    original = notes.read_bytes() + agent.encode("utf-8")
    notes.write_bytes(original)
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press(next(a.key for a in AREAS if a.mode == "notes"))
        await settle(pilot)
        await pilot.pause()
        screen = app.screen
        editor = screen.query_one("#notes-editor", TextArea)
        assert not screen.dirty, "opening the file changes nothing"
        assert editor.text.encode("utf-8") == original, "the editor holds the file's text"
        drawn = _screen_text(app)
        assert "␛]0;PWNED-TITLE␇" in drawn and "cr␍ff␌" in drawn, "stand-ins are drawn"
        assert not _leaks(app)
        editor.focus()
        editor.move_cursor((0, 0))
        await pilot.press(*"Zq", "ctrl+s")
        await wait_for(pilot, lambda: notes.read_bytes() != original, what="the save")
        await settle(pilot)
    app.session.close()
    assert notes.read_bytes() == b"Zq" + original, "only the typed characters changed"
