"""Measure opening a workspace: first painted tree (headless), `memtui audit`, peak RSS.

Usage: python bench/open.py WORKSPACE [--runs 3]

Each figure comes from a fresh process, so imports and start-up count:
- first paint: seconds from the process start until the Tree area's first frame has been
  displayed with the tree's top level loaded (Textual's ``Ready`` event), headless;
- audit: wall seconds of ``memtui audit -w WORKSPACE`` (the whole process);
- peak RSS (MiB) of each, from ``resource.getrusage(RUSAGE_CHILDREN)`` per child.
Prints the median of the runs. Not a test: targets live in the issue (issue 2: first paint
< 1.0 s and audit < 10 s at 100,000 articles).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

PAINT = r"""
import sys, time
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp

class Bench(MemtuiApp):
    def on_ready(self) -> None:
        tree = self.screen.query_one("#nodes")
        print(f"PAINT {time.time() - START:.3f} {len(tree.root.children)}", flush=True)
        self.exit()

app = Bench(Workspace.open(sys.argv[1]))
app.run(headless=True, size=(120, 40))
"""


def child(code_or_args: list[str]) -> tuple[float, str, float]:
    """Run a child process; return (wall seconds, stdout, peak RSS MiB of that child)."""
    import resource

    started = time.time()
    proc = subprocess.Popen(code_or_args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out = proc.stdout.read()
    proc.stdout.close()
    proc.stderr.close()
    wall = time.time() - started
    return wall, out, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    ws = str(args.workspace.resolve())
    articles = sum(1 for _ in args.workspace.rglob("*.md"))
    paints, paint_rss, audits, audit_rss = [], [], [], []
    for _ in range(args.runs):
        started = time.time()
        code = f"START = {started!r}\n" + PAINT
        _, out, rss = child([sys.executable, "-c", code, ws])
        line = next((l for l in out.splitlines() if l.startswith("PAINT")), None)
        if line is None:
            raise SystemExit(f"the app did not paint: {out}")
        paints.append(float(line.split()[1]))
        paint_rss.append(rss)
        wall, out, rss = child([sys.executable, "-m", "memtui", "audit", "-w", ws])
        audits.append(wall)
        audit_rss.append(rss)
    print(f"workspace: {ws} ({articles:,} .md files)")
    print(f"first painted tree: {statistics.median(paints):.2f} s (runs: {', '.join(f'{p:.2f}' for p in paints)}), "
          f"peak RSS {max(paint_rss):.0f} MiB")
    print(f"memtui audit:       {statistics.median(audits):.2f} s (runs: {', '.join(f'{a:.2f}' for a in audits)}), "
          f"peak RSS {max(audit_rss):.0f} MiB")
    print(f"audit summary: {out.strip().splitlines()[-1] if out.strip() else '(none)'}")


if __name__ == "__main__":
    main()
