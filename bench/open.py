"""Measure opening a workspace, cold and warm: first painted tree (headless), `memtui audit`,
and the TUI's memory with a search done.

Usage: python bench/open.py WORKSPACE [--runs 3] [--query parcel] [--out bench/out]
       [--no-drop-caches]

Each figure comes from a fresh process, so imports and start-up count:
- first paint: seconds from the process start until the Tree area's first frame has been
  displayed with the tree's top level loaded (Textual's ``Ready`` event), headless;
- audit: wall seconds of ``memtui audit -w WORKSPACE`` (the whole process);
- search: the TUI opened headless, the Search area shown, one query typed and its results
  shown (the app's start-up index catch-up done first); the TUI process's own peak RSS
  then, and apart the largest peak of its worker processes (the start-up audit's);
- peak RSS (MiB) of paint and audit, from ``os.wait4`` of that child (its workers included).

**Cold** runs get a new, empty cache folder (``MEMTUI_CACHE_DIR``: no audit cache) and, when
the process may (root on Linux), an emptied page cache (``/proc/sys/vm/drop_caches``), so
the files are read from disk; **warm** runs reuse the cache folder the cold run filled and
the page cache. Each kind runs ``--runs`` times; the median and every run are printed, and
the figures are written as JSON to ``--out``. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

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

SEARCH = r"""
import asyncio, resource, sys, time
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.areas import AREAS

async def main() -> None:
    app = MemtuiApp(Workspace.open(sys.argv[1]))
    async with app.run_test(size=(120, 40)) as pilot:
        while app.index_report is None:  # the start-up catch-up of the index
            await pilot.pause(0.05)
        await pilot.press(next(a.key for a in AREAS if a.mode == "search"))
        await pilot.pause()
        screen = app.screen
        box = screen.query_one("#search-query")
        box.value = sys.argv[2]
        started = time.time()
        while getattr(screen, "results", None) is None or not screen.results.hits:
            await pilot.pause(0.02)
            if time.time() - started > 60:
                raise SystemExit("no results in 60 s")
        answered = time.time() - started
        await pilot.pause(1.0)  # the results painted
        print(f"SEARCH {answered:.3f} {len(screen.results.hits)} "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} "
              f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}", flush=True)

asyncio.run(main())
"""


def child(args: list[str], env: dict[str, str]) -> tuple[float, str, float]:
    """Run a child process; return (wall seconds, stdout, peak RSS MiB of that child)."""
    with tempfile.TemporaryFile("w+") as sink:  # a file, not a pipe: a full pipe would block the child
        started = time.time()
        proc = subprocess.Popen(args, stdout=sink, stderr=subprocess.DEVNULL, text=True, env=env)
        _, _status, usage = os.wait4(proc.pid, 0)
        wall = time.time() - started
        sink.seek(0)
        out = sink.read()
    return wall, out, usage.ru_maxrss / 1024


def drop_page_cache() -> bool:
    """Empty the kernel's page cache (root on Linux); False when not allowed."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def one_run(ws: str, query: str, cache: str, cold: bool, drop: bool) -> dict[str, float]:
    env = {**os.environ, "MEMTUI_CACHE_DIR": cache}
    out: dict[str, float] = {}
    if cold and drop:
        drop_page_cache()
    started = time.time()
    _, text, rss = child([sys.executable, "-c", f"START = {started!r}\n" + PAINT, ws], env)
    line = next((ln for ln in text.splitlines() if ln.startswith("PAINT")), None)
    if line is None:
        raise SystemExit(f"the app did not paint: {text}")
    out["paint_s"], out["paint_rss_mb"] = float(line.split()[1]), rss
    if cold:
        for p in Path(cache).glob("**/*"):
            if p.is_file():
                p.unlink()
        if drop:
            drop_page_cache()
    wall, text, rss = child([sys.executable, "-m", "memtui", "audit", "-w", ws], env)
    out["audit_s"], out["audit_rss_mb"] = wall, rss
    out["audit_summary"] = text.strip().splitlines()[-1] if text.strip() else ""  # type: ignore[assignment]
    if cold and drop:
        drop_page_cache()
    wall, text, rss = child([sys.executable, "-c", SEARCH, ws, query], env)
    line = next((ln for ln in text.splitlines() if ln.startswith("SEARCH")), None)
    if line is None:
        raise SystemExit(f"the search did not answer: {text}")
    _, secs, hits, rss_self, rss_children = line.split()
    # the TUI process itself, and apart the largest of its worker processes (the audit's)
    out["search_s"], out["search_hits"], out["tui_rss_mb"] = float(secs), float(hits), float(rss_self)
    out["tui_workers_rss_mb"] = float(rss_children)
    out["tui_wall_s"] = wall
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--query", default="parcel")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--no-drop-caches", action="store_true", help="keep the page cache for cold runs")
    args = parser.parse_args()
    ws = str(args.workspace.resolve())
    articles = sum(1 for _ in args.workspace.rglob("*.md"))
    drop = not args.no_drop_caches and drop_page_cache()
    report: dict[str, object] = {"workspace": ws, "md_files": articles, "page_cache_dropped": drop}
    print(f"workspace: {ws} ({articles:,} .md files); cold runs: a new cache folder"
          + (" and an emptied page cache" if drop else " (page cache kept: not allowed to drop it)"))
    for kind in ("cold", "warm"):
        runs = []
        for _ in range(args.runs):
            if kind == "cold":
                cache = tempfile.mkdtemp(prefix="memtui-cache-")
            runs.append(one_run(ws, args.query, cache, kind == "cold", drop))
        report[kind] = runs
        for key, label, unit in (("paint_s", "first painted tree", "s"), ("audit_s", "memtui audit", "s"),
                                 ("search_s", f"TUI search {args.query!r}", "s")):
            vals = [r[key] for r in runs]
            rss_key = {"paint_s": "paint_rss_mb", "audit_s": "audit_rss_mb", "search_s": "tui_rss_mb"}[key]
            extra = (f" (the TUI process; its largest worker {max(r['tui_workers_rss_mb'] for r in runs):.0f} MiB)"
                     if key == "search_s" else "")
            print(f"{kind}  {label:<22} {statistics.median(vals):6.2f} {unit} (runs: "
                  f"{', '.join(f'{v:.2f}' for v in vals)}), peak RSS {max(r[rss_key] for r in runs):.0f} MiB{extra}")
    last = report["warm"][-1]  # type: ignore[index]
    print(f"audit summary: {last['audit_summary'] or '(none)'}")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"open-{articles}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(report, indent=1), "utf-8")
    print(f"figures written to {path}")


if __name__ == "__main__":
    main()
