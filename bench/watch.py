"""What following a workspace costs: idle CPU of the watcher, and outside write → refreshed view.

Usage: python bench/watch.py WORKSPACE [--samples N] [--idle SECONDS] [--profile PREFIX]

Prints, for the workspace given (build one with ``python bench/make_workspace.py 10000 DIR``):

- the time the watcher needs to start following (inotify watches on every folder);
- the CPU the watching process spends while nothing changes (``idle`` seconds, from
  ``resource.getrusage``; the watcher sleeps in the kernel, so this is the cost of being open);
- the time from a write by another process (a new article appended to a node, through a
  subprocess) to the watcher's batch (``event``), and to the open TUI's refreshed audit counts
  (``refreshed``: the Tree header and the counts follow the audit); ``N`` samples, median and max,
  with the CPU of the app's process over each; the first refresh after the start is printed
  apart (it sets up the secret scanner in the app's process). ``--profile`` writes cProfile
  files of the UI thread and of the audits over the samples and prints their top lines.

Anchor, in the same run: one polling pass over every file's ``stat`` (what a poller pays per
pass to notice the same change), so the event figure reads against the alternative.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memtui.core.watch import watch  # noqa: E402
from memtui.core.workspace import Workspace  # noqa: E402


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _outside_write(path: Path, text: str) -> None:
    subprocess.run([sys.executable, "-c", "import sys; open(sys.argv[1], 'w').write(sys.argv[2])",
                    str(path), text], check=True)


def watcher_figures(ws: Workspace, samples: int, idle: float) -> dict[str, float]:
    stop = threading.Event()
    arrived: list[tuple[float, set[str]]] = []
    started = time.perf_counter()
    ready = threading.Event()

    def follow() -> None:
        ready.set()
        for changes in watch(ws, stop):
            arrived.append((time.perf_counter(), changes.paths))

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    ready.wait()
    time.sleep(1.0)  # let it finish adding watches
    setup = time.perf_counter() - started
    cpu0, wall0 = _cpu(), time.perf_counter()
    time.sleep(idle)
    idle_cpu = (_cpu() - cpu0) / (time.perf_counter() - wall0)
    node = next(p for p in sorted(ws.memory.rglob("AGENTS.md")) if p.parent != ws.memory).parent
    latencies = []
    for i in range(samples):
        target = node / f"bench-watch-{i}.md"
        shown = ws.shown(target)
        before = time.perf_counter()
        _outside_write(target, f"# watched {i}\n")
        while not any(shown in paths for _, paths in arrived):
            if time.perf_counter() - before > 10:
                break
            time.sleep(0.002)
        at = next((t for t, paths in arrived if shown in paths), None)
        latencies.append((at - before) if at else float("nan"))
        target.unlink()
        time.sleep(0.3)
    stop.set()
    thread.join(timeout=5)
    files = sum(len(f) for _, _, f in os.walk(ws.root))
    poll_started = time.perf_counter()
    for folder, _dirs, names in os.walk(ws.root):
        for name in names:
            os.stat(os.path.join(folder, name))
    poll = time.perf_counter() - poll_started
    return {"setup_s": setup, "idle_cpu_share": idle_cpu, "event_median_ms": statistics.median(latencies) * 1000,
            "event_max_ms": max(latencies) * 1000, "files": files, "poll_pass_ms": poll * 1000}


async def refreshed_figures(ws: Workspace, samples: int, cpu: list[float] | None = None,
                            profile: str | None = None) -> list[float]:
    """Seconds from each outside write to the open TUI's refreshed counts; ``cpu`` gets the CPU
    seconds of the whole process (every thread) over each of them. The first refresh after the
    start is printed apart and not sampled (it sets up the secret scanner in the app's process).

    The wait is on the app's ``audit_ready`` signal, then one turn of the screen (its redraw),
    not a polling loop: ``pilot.pause(0.01)`` in a loop cost the process about 1 s of CPU per
    refresh of its own (every pause walks the screen's widgets), which the app does not spend.
    With ``profile`` (a path prefix), cProfile (CPU clock) records the UI thread over the
    samples (``PREFIX-ui.prof``) and each audit after a change in its worker thread
    (``PREFIX-audit.prof``)."""
    import cProfile

    from memtui.core import audit
    from memtui.ui.app import MemtuiApp

    audit_profile = cProfile.Profile(timer=time.thread_time) if profile else None
    real_rerun = audit.rerun

    def profiled_rerun(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        assert audit_profile is not None
        if ui_profile is None or ui_profile is not active[0]:
            return real_rerun(*args, **kwargs)  # the warm-up is not profiled
        audit_profile.enable()
        try:
            return real_rerun(*args, **kwargs)
        finally:
            audit_profile.disable()

    if audit_profile is not None:
        audit.rerun = profiled_rerun
    app = MemtuiApp(ws)
    out = []
    ready = asyncio.Event()
    ui_profile = cProfile.Profile(timer=time.thread_time) if profile else None
    active: list[object] = [None]  # the UI profile once the samples start
    async with app.run_test(size=(120, 40)) as pilot:
        while app.report is None:
            await pilot.pause(0.05)
        app.audit_ready.subscribe(app, lambda _report: ready.set())
        node = next(p for p in sorted(ws.memory.rglob("AGENTS.md")) if p.parent != ws.memory).parent

        async def until(count: int, limit: float) -> None:
            deadline = time.perf_counter() + limit
            while app.report.articles != count and time.perf_counter() < deadline:
                ready.clear()
                try:
                    await asyncio.wait_for(ready.wait(), max(0.01, deadline - time.perf_counter()))
                except asyncio.TimeoutError:
                    break
            await pilot.pause()  # the screens' redraw after the report

        # the first refresh sets up what later ones reuse (the scanner in this process)
        warm = node / "bench-refresh-warm.md"
        before, cpu0 = time.perf_counter(), _cpu()
        _outside_write(warm, "# warm\n")
        await until(app.report.articles + 1, 120)
        print(f"first refresh after the start (sets up the secret scanner in this process): "
              f"{time.perf_counter() - before:.2f} s wall, {_cpu() - cpu0:.2f} s CPU (not in the samples)")
        warm.unlink()
        await until(app.report.articles - 1, 120)
        if ui_profile is not None:
            active[0] = ui_profile
            ui_profile.enable()
        for i in range(samples):
            articles = app.report.articles
            target = node / f"bench-refresh-{i}.md"
            before, cpu0 = time.perf_counter(), _cpu()
            _outside_write(target, f"# refreshed {i}\n")
            await until(articles + 1, 60)
            out.append(time.perf_counter() - before)
            if cpu is not None:
                cpu.append(_cpu() - cpu0)
            target.unlink()
            await until(articles, 60)
        if ui_profile is not None:
            ui_profile.disable()
        while any(w.is_running and w.group != "watch" for w in app.workers):  # refills end before the app
            await pilot.pause(0.05)
    audit.rerun = real_rerun
    if profile and ui_profile is not None and audit_profile is not None:
        import pstats

        for name, prof in (("ui", ui_profile), ("audit", audit_profile)):
            prof.dump_stats(f"{profile}-{name}.prof")
            stats = pstats.Stats(prof)
            print(f"profile of the {name} thread over {samples} writes and their deletes "
                  f"({stats.total_tt:.2f} s of CPU; {profile}-{name}.prof):")
            stats.sort_stats("cumulative").print_stats(25)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace")
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--profile", metavar="PREFIX", help="write cProfile files PREFIX-ui.prof and "
                        "PREFIX-audit.prof of the refreshes and print their top lines")
    args = parser.parse_args()
    ws = Workspace.open(args.workspace)
    figures = watcher_figures(ws, args.samples, args.idle)
    print(f"workspace: {ws.root} ({figures['files']:,} files)")
    print(f"watcher start: {figures['setup_s']:.2f} s (includes a 1 s settle)")
    print(f"idle CPU while following: {figures['idle_cpu_share'] * 100:.3f} % of one core over {args.idle:g} s")
    print(f"outside write -> watcher batch: median {figures['event_median_ms']:.0f} ms, "
          f"max {figures['event_max_ms']:.0f} ms (watchfiles gathers a burst for up to 200 ms)")
    print(f"anchor: one stat() pass over every file (what a poller pays per pass): "
          f"{figures['poll_pass_ms']:.0f} ms")
    cpu: list[float] = []
    refreshed = asyncio.run(refreshed_figures(ws, max(3, args.samples // 2), cpu, args.profile))
    load = os.getloadavg()[0]
    print(f"outside write -> TUI audit counts refreshed: median {statistics.median(refreshed):.2f} s, "
          f"max {max(refreshed):.2f} s ({len(refreshed)} samples; load average {load:.1f})")
    print(f"row: outside write -> open TUI refreshed, {figures['files']:,} files | median "
          f"{statistics.median(refreshed):.2f} s wall, max {max(refreshed):.2f} s, median "
          f"{statistics.median(cpu):.2f} s CPU of the app's process | anchor: the watcher's batch median "
          f"{figures['event_median_ms']:.0f} ms, one stat() pass {figures['poll_pass_ms']:.0f} ms | load {load:.1f} "
          f"on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
