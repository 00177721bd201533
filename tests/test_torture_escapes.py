"""Path escapes traced with ``strace -f`` (torture tests; DESIGN.md invariant 4).

A workspace is booby-trapped with symbolic links into a honeypot folder outside it: an
article, a node folder, the member notes, a skill folder, a session history, the graph file,
``.memtui`` itself, and relative links in article text. Every command that reads or writes the
workspace (and the TUI, headless, visiting every area) runs under ``strace -f -y``; no file
system call that opens, creates, renames, removes or changes a file may touch the honeypot.
A ``stat`` or ``readlink`` of a link (to find out where it leads) is allowed: it reads nothing.

Needs ``strace`` (Debian: ``apt-get install strace``); skipped without it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import torture
from tests.conftest import SAMPLE

STRACE = shutil.which("strace")
#: System calls that open, make, move, remove or change a file (stat and readlink are not here).
CALLS = ("open,openat,openat2,creat,truncate,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,"
         "rmdir,link,linkat,symlink,symlinkat,chmod,fchmodat,utimensat,execve")

_TUI = textwrap.dedent("""
    import asyncio, sys
    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp
    from memtui.ui.areas import AREAS

    async def main(path):
        app = MemtuiApp(Workspace.open(path))
        async with app.run_test(size=(120, 40)) as pilot:
            while app.report is None or (app.index_report is None and app.index_error is None):
                await pilot.pause(0.05)
            for area in AREAS:  # each area open until what it loads in its workers is loaded
                await pilot.press(area.key)
                started = [w for w in app.workers if w.group != "watch"]
                if started:
                    await app.workers.wait_for_complete(started)
                await pilot.pause()
    asyncio.run(main(sys.argv[1]))
""")


def _trap(tmp: Path, state_outside: bool) -> tuple[Path, Path]:
    honey = tmp / "honeypot"
    (honey / "dir").mkdir(parents=True)
    (honey / "secret.md").write_text("# Secret\n\nnever read\n")
    (honey / "dir" / "AGENTS.md").write_text("# Outside node\n- [S](s.md) — s\n")
    (honey / "dir" / "s.md").write_text("outside\n")
    (honey / "notes.md").write_text("outside notes\n")
    (honey / "skill").mkdir()
    (honey / "skill" / "SKILL.md").write_text("---\nname: evil\ndescription: Use when never\n---\n")
    (honey / "session.jsonl").write_text('{"ts": "2026-01-01", "role": "user", "content": "x"}\n')
    (honey / "graph.jsonl").write_text('{"type":"entity","name":"Out","entityType":"t","observations":[]}\n')
    root = tmp / "ws"
    shutil.copytree(SAMPLE, root, symlinks=True)
    mem = root / "memory"
    (mem / "support" / "linked.md").symlink_to(honey / "secret.md")
    (mem / "support" / "linked-node").symlink_to(honey / "dir")
    (mem / "MEMORY_CUSTOM.md").unlink()
    (mem / "MEMORY_CUSTOM.md").symlink_to(honey / "notes.md")
    (root / "skills" / "evil").symlink_to(honey / "skill")
    (root / "sessions" / "durable" / "tg-9999.jsonl").symlink_to(honey / "session.jsonl")
    (mem / "support" / "escape.md").write_text(
        "# Escape\n\n[a](../../../honeypot/secret.md) and [b](/" + str(honey / "secret.md").lstrip("/") + ")\n")
    if state_outside:
        (mem / "graph.jsonl").unlink()
        (mem / "graph.jsonl").symlink_to(honey / "graph.jsonl")
        shutil.move(str(root / ".memtui"), honey / "state")
        (root / ".memtui").symlink_to(honey / "state")
    return root, honey


def _traced(tmp: Path, name: str, argv: list[str]) -> tuple[subprocess.CompletedProcess, list[str]]:
    log = tmp / f"strace-{name}.log"
    done = subprocess.run([STRACE, "-f", "-y", "-qq", "-e", f"trace={CALLS}", "-o", str(log), *argv],
                          capture_output=True, stdin=subprocess.DEVNULL, env=torture.env(), timeout=600)
    return done, log.read_text(encoding="utf-8", errors="replace").splitlines()


@pytest.mark.slow
@pytest.mark.skipif(STRACE is None, reason="strace is not installed")
@pytest.mark.parametrize("state_outside", [False, True], ids=["links-inside", "state-and-graph-outside"])
def test_no_command_opens_anything_behind_a_link_leading_outside(tmp_path: Path, state_outside: bool) -> None:
    root, honey = _trap(tmp_path, state_outside)
    before = sorted((p.relative_to(honey).as_posix(), p.stat().st_mtime_ns) for p in honey.rglob("*"))
    notes = tmp_path / "new-notes.md"
    notes.write_text("new notes\n")
    repo = tmp_path / "backup-repo"
    py = [sys.executable, "-m", "memtui"]
    commands = {
        "audit": [*py, "audit", "--json", "-w", str(root)],
        "graph check": [*py, "graph", "check", "-w", str(root)],
        "graph add-observation": [*py, "graph", "add-observation", "-w", str(root), "RouteCore", "traced"],
        "skills list": [*py, "skills", "list", "--json", "-w", str(root)],
        "index": [*py, "index", "--rebuild", "-w", str(root)],
        "search": [*py, "search", "secret", "-w", str(root)],
        "boot": [*py, "boot", "support", "-w", str(root)],
        "notes show": [*py, "notes", "show", "-w", str(root)],
        "notes set": [*py, "notes", "set", "--from", str(notes), "-w", str(root)],
        "adopt": [*py, "adopt", "--yes", "-w", str(root)],
        "backup": [*py, "backup", "--repo", str(repo), "-w", str(root)],
        "tui": [sys.executable, "-c", _TUI, str(root)],
    }
    escapes: list[str] = []
    crashed: list[str] = []
    calls = 0
    honey_text = str(honey)
    for name, argv in commands.items():
        done, lines = _traced(tmp_path, name.replace(" ", "-"), argv)
        calls += len(lines)
        if b"Traceback" in done.stderr:
            crashed.append(f"{name}: {done.stderr.decode('utf-8', 'replace').strip().splitlines()[-1]}")
        for line in lines:
            if honey_text in line and not re.search(r"\bexecve\(", line):
                escapes.append(f"{name}: {line[:300]}")
    if repo.exists():  # a restore of that backup writes only inside its own target
        target = tmp_path / "restored"
        done, lines = _traced(tmp_path, "restore", [*py, "restore", "--repo", str(repo), "--to", str(target)])
        calls += len(lines)
        escapes.extend(f"restore: {line[:300]}" for line in lines if honey_text in line)
    after = sorted((p.relative_to(honey).as_posix(), p.stat().st_mtime_ns) for p in honey.rglob("*"))
    torture.report("strace-path-escapes", variant="state-and-graph-outside" if state_outside else "links-inside",
                   commands=len(commands) + 1, traced_calls=calls, opens_outside=len(escapes),
                   crashed=crashed, what=escapes[:10])
    assert not crashed, crashed
    assert not escapes, "\n".join(escapes[:20])
    assert before == after, "the honeypot is untouched"
