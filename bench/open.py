"""Measure opening the TUI in a real terminal, beside a bare Textual app: first paint, RSS after
a search, and the CPU of the whole idle process.

Usage: python bench/open.py WORKSPACE [WORKSPACE ...] [--runs 3] [--query parcel] [--idle 30]
       [--out bench/out]

Both apps run in tmux at 120×40, one after the other (the order swaps every run, so load
drifts hit both alike), each as a fresh process with compiled bytecode allowed:

- **memtui**: ``MemtuiApp`` on WORKSPACE, as ``memtui WORKSPACE`` opens it;
- **bare**: a bare Textual app (Header, a Tree of the memory folder's top-level folders, an
  Input, Footer), with nothing of memtui imported: what Textual itself costs to paint the
  same first content.

Figures, per app and run:

- **first paint**: seconds from launching the process until ``tmux capture-pane`` (polled
  every 20 ms) shows every top-level folder of the memory tree: the first frame with the
  area's content. Beside it the CPU seconds the process (all threads and child processes) had
  used by then, which load barely changes;
- **RSS after a search**: the area key ``6``, the query typed, and once the screen says
  "N shown of" (memtui; the bare app just echoes the text) and a second more, ``VmRSS`` and
  ``VmHWM`` of the process from ``/proc/PID/status`` (its worker processes apart);
- **idle CPU**: back in the first area (``escape``, ``1``), the process is left alone until its
  start-up work is over (three seconds in a row under 2 % of a core, at most ``--settle``
  seconds), then the CPU of the process, its threads and its child processes over ``--idle``
  seconds, as a percentage of one core.

The load average is printed with every run: on a shared machine wall seconds are inflated by
load; compare the ratio within a run, and the CPU seconds. The workspace's search index
should be built first (``memtui index -w WORKSPACE``), or the search waits for the
catch-up. The figures are written as JSON to ``--out``. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TICK = os.sysconf("SC_CLK_TCK")
SIZE = (120, 40)

MEMTUI = r"""
import sys
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp

if __name__ == "__main__":  # the audit's worker processes import this module again
    MemtuiApp(Workspace.open(sys.argv[1])).run()
"""

BARE = r"""
import os, sys
from textual.app import App
from textual.binding import Binding
from textual.widgets import Footer, Header, Input, Tree


class Bare(App):
    BINDINGS = [Binding("6", "ask", "Search"), Binding("escape", "tree", "Tree")]

    def compose(self):
        yield Header()
        yield Tree("memory", id="nodes")
        yield Input(id="query")
        yield Footer()

    def on_mount(self) -> None:
        tree = self.query_one(Tree)
        root = os.path.join(sys.argv[1], "memory")
        for entry in sorted(os.scandir(root), key=lambda e: e.name):
            if entry.is_dir():
                tree.root.add(entry.name)
        tree.root.expand()
        tree.focus()

    def action_ask(self) -> None:
        self.query_one(Input).focus()

    def action_tree(self) -> None:
        self.query_one(Tree).focus()


if __name__ == "__main__":
    Bare().run()
"""


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _stat(pid: int) -> tuple[int, int] | None:
    """``(parent pid, CPU ticks of the process and its reaped children)`` of ``pid``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), sum(int(f) for f in fields[11:15])  # utime stime cutime cstime


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid``, all its threads, its reaped children and its live descendants."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            got = _stat(int(entry))
            if got is not None:
                parents[int(entry)], ticks[int(entry)] = got
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        total += ticks.get(current, 0)
        todo.extend(child for child, parent in parents.items() if parent == current)
    return total / TICK


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


class Tmux:
    """A private tmux server, started once, so neither app pays for starting it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.socket = f"memtui-bench-{os.getpid()}"
        self.env = env
        self("new-session", "-d", "-s", "keep", "-x", str(SIZE[0]), "-y", str(SIZE[1]), "sleep", "1000000")

    def __call__(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], env=self.env,
                              capture_output=True, text=True, check=True).stdout

    def launch(self, name: str, argv: list[str]) -> int:
        out = self("new-session", "-d", "-s", name, "-x", str(SIZE[0]), "-y", str(SIZE[1]),
                   "-P", "-F", "#{pane_pid}", "--", *argv)
        return int(out.strip())

    def screen(self, name: str) -> str:
        return self("capture-pane", "-p", "-t", name)

    def keys(self, name: str, *keys: str, literal: bool = False) -> None:
        self("send-keys", "-t", name, *(["-l"] if literal else []), *keys)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def wait_screen(tmux: Tmux, name: str, ok, timeout: float, step: float = 0.02) -> float | None:  # noqa: ANN001
    started = time.time()
    while time.time() - started < timeout:
        try:
            if ok(tmux.screen(name)):
                return time.time()
        except subprocess.CalledProcessError:
            return None  # the pane is gone: the app ended
        time.sleep(step)
    return None


def one(tmux: Tmux, which: str, ws: str, folders: list[str], query: str, idle: float, settle: float,
        n: int, paint_only: bool = False) -> dict[str, object]:
    name = f"{which}{n}"
    script = MEMTUI if which == "memtui" else BARE
    out: dict[str, object] = {"app": which, "load_before": load()}
    started = time.time()
    pid = tmux.launch(name, [sys.executable, "-c", script, ws])
    shown = wait_screen(tmux, name, lambda text: all(f in text for f in folders), 120)
    if shown is None:
        raise SystemExit(f"{which} did not paint the tree in 120 s:\n{tmux.screen(name)}")
    out["paint_s"], out["paint_cpu_s"] = shown - started, tree_cpu(pid)
    if paint_only:
        out["load_after"] = load()
        tmux("kill-session", "-t", name)
        return out
    tmux.keys(name, "6")
    if which == "memtui" and wait_screen(tmux, name, lambda text: 'words, "a phrase"' in text, 120, 0.05) is None:
        raise SystemExit(f"memtui: no Search area:\n{tmux.screen(name)}")
    time.sleep(0.3)
    tmux.keys(name, query, literal=True)
    if which == "memtui":
        answered = wait_screen(tmux, name, lambda text: re.search(r"[\d,]+ shown of", text) is not None, 600, 0.1)
    else:
        answered = wait_screen(tmux, name, lambda text: query in text, 60, 0.1)
    if answered is None:
        raise SystemExit(f"{which}: no answer to the search:\n{tmux.screen(name)}")
    time.sleep(1.0)
    out["rss_mib"], out["hwm_mib"] = status_kib(pid, "VmRSS") / 1024, status_kib(pid, "VmHWM") / 1024
    tmux.keys(name, "Escape")
    time.sleep(0.3)
    tmux.keys(name, "1")
    quiet, last, waited = 0, tree_cpu(pid), 0.0
    while quiet < 3 and waited < settle:
        time.sleep(1.0)
        waited += 1.0
        now = tree_cpu(pid)
        quiet = quiet + 1 if now - last < 0.02 else 0
        last = now
    out["settled_s"], out["settled"] = waited, quiet >= 3
    before, t0 = tree_cpu(pid), time.time()
    time.sleep(idle)
    out["idle_pct"] = 100 * (tree_cpu(pid) - before) / (time.time() - t0)
    out["load_after"] = load()
    tmux("kill-session", "-t", name)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspaces", type=Path, nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--query", default="parcel")
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of idle CPU measured")
    parser.add_argument("--settle", type=float, default=300.0,
                        help="at most this many seconds waited for the start-up work to end")
    parser.add_argument("--paint-only", action="store_true",
                        help="first paint only (a workspace whose index is not built: the search would wait for it)")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is needed")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: bytecode cached
    env["MEMTUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="memtui-bench-cache-")
    env["MEMTUI_CONFIG_DIR"] = tempfile.mkdtemp(prefix="memtui-bench-config-")  # no user keys or theme
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "memtui")], env=env,
                   capture_output=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the tmux server is ended below
    tmux = Tmux(env)
    report: dict[str, object] = {"cpus": os.cpu_count(), "runs": []}
    try:
        for ws_path in args.workspaces:
            ws = str(ws_path.resolve())
            memory = Path(ws) / "memory"
            folders = sorted(e.name for e in os.scandir(memory) if e.is_dir())
            articles = sum(1 for _ in memory.rglob("*.md"))
            print(f"\n{ws_path.name}: {articles:,} .md files; {args.runs} runs, each app in tmux "
                  f"{SIZE[0]}×{SIZE[1]}, order swapped every run; {os.cpu_count()} cores", flush=True)
            rows: list[dict[str, object]] = []
            for n in range(args.runs):
                order = ("memtui", "bare") if n % 2 == 0 else ("bare", "memtui")
                for which in order:
                    row = one(tmux, which, ws, folders, args.query, args.idle, args.settle, n, args.paint_only)
                    row["workspace"], row["articles"] = ws, articles
                    rows.append(row)
                    rest = ("" if args.paint_only else
                            f"  RSS after search {row['rss_mib']:5.1f} MiB (peak {row['hwm_mib']:.1f})"
                            f"  idle {row['idle_pct']:.2f} % of a core"
                            f"{'' if row['settled'] else ' (start-up work not over)'}")
                    print(f"  run {n + 1} {which:<6} paint {row['paint_s']:5.2f} s ({row['paint_cpu_s']:.2f} CPU-s)"
                          f"{rest}  load {row['load_before']} → {row['load_after']}", flush=True)
            report["runs"].extend(rows)  # type: ignore[union-attr]

            def med(which: str, key: str, rows: list[dict[str, object]] = rows) -> float:
                return statistics.median(float(r[key]) for r in rows if r["app"] == which)  # type: ignore[arg-type]

            print(f"  median        {'memtui':>10} {'bare':>10} {'ratio':>7}")
            keys = [("paint_s", "first paint s"), ("paint_cpu_s", "  its CPU-s")]
            if not args.paint_only:
                keys += [("rss_mib", "RSS MiB"), ("idle_pct", "idle % core")]
            for key, label in keys:
                mine, bare = med("memtui", key), med("bare", key)
                ratio = f"{mine / bare:6.2f}×" if bare else "      -"
                print(f"  {label:<14}{mine:10.2f} {bare:10.2f} {ratio}")
    finally:
        tmux.close()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"open-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(report, indent=1), "utf-8")
    print(f"figures written to {path}")


if __name__ == "__main__":
    main()
