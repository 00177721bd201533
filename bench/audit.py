"""The audit's cost at N articles, this checkout against a reference checkout, interleaved.

Usage: python bench/audit.py WORKSPACE [--base DIR] [--runs N] [--no-wall] [--profile OUT]

``WORKSPACE`` is a folder made by ``bench/make_workspace.py`` (``python bench/make_workspace.py
10000 /tmp/ws10k``). ``--base`` is a checkout of the reference code with its own ``.venv``
(the target compares with the audit before it, commit 4949762:
``git worktree add /tmp/memtui-base 4949762`` and a venv there); without it only this
checkout is measured.

For every run, in a fresh process for each checkout, alternating (so a busy neighbour slows
both alike):

- **cold CPU**: ``time.process_time()`` of ``audit.run(Workspace.open(W), parallel=False,
  use_cache=False)`` — serial and uncached, so the figure is the work done, not the cores
  or the noise of a shared machine;
- **warm CPU**: the same serial audit with the article cache, after one audit filled it
  (a re-audit of an unchanged workspace);
- **cold / warm wall** (unless ``--no-wall``): wall time of the real ``memtui audit --json``
  with a fresh ``MEMTUI_CACHE_DIR`` (cold), then again with that cache (warm); the process's
  start-up and its worker processes are included.

Prints each run and the medians, and the ratios this/base. ``--profile OUT`` writes a
cProfile of one cold serial audit of this checkout to OUT (read it with ``python -m pstats``).
Issue 17's target: cold at most 1.5x the base, warm at most 1.2x.
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

HERE = Path(__file__).resolve().parent.parent

#: Run in the measured checkout's own interpreter: prints {"cold": s, "warm": s, "findings": n}.
_CHILD = r"""
import json, os, sys, tempfile, time
os.environ["MEMTUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="memtui-bench-cache-")
from memtui.core import audit
from memtui.core.workspace import Workspace
ws_path = sys.argv[1]
started = time.process_time()
report = audit.run(Workspace.open(ws_path), parallel=False, use_cache=False)
cold = time.process_time() - started
audit.run(Workspace.open(ws_path), parallel=False, use_cache=True)  # fills the cache
started = time.process_time()
again = audit.run(Workspace.open(ws_path), parallel=False, use_cache=True)
warm = time.process_time() - started
assert len(again.findings) == len(report.findings), "the warm audit found something else"
print(json.dumps({"cold": cold, "warm": warm, "findings": len(report.findings),
                  "articles": report.articles}))
"""


def _python(checkout: Path) -> str:
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def cpu(checkout: Path, workspace: Path) -> dict:
    """One cold and one warm serial audit in a fresh process of ``checkout``."""
    out = subprocess.run([_python(checkout), "-c", _CHILD, str(workspace)], cwd=checkout, check=True,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(checkout)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def wall(checkout: Path, workspace: Path) -> tuple[float, float]:
    """Wall seconds of ``memtui audit --json``: cold (fresh cache folder), then warm."""
    memtui = checkout / ".venv" / "bin" / "memtui"
    with tempfile.TemporaryDirectory(prefix="memtui-bench-cache-") as cache:
        env = {**os.environ, "MEMTUI_CACHE_DIR": cache, "PYTHONPATH": str(checkout)}
        times = []
        for _ in range(2):
            started = time.perf_counter()
            done = subprocess.run([str(memtui), "audit", "--json", "-w", str(workspace)], cwd=checkout,
                                  capture_output=True, env=env)
            times.append(time.perf_counter() - started)
            if done.returncode not in (0, 1):
                raise SystemExit(f"{memtui} audit failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return times[0], times[1]


def profile(workspace: Path, out: Path) -> None:
    """A cProfile of one cold serial audit of this checkout, written to ``out``."""
    code = ("import cProfile, os, sys, tempfile\n"
            "os.environ['MEMTUI_CACHE_DIR'] = tempfile.mkdtemp()\n"
            "from memtui.core import audit\nfrom memtui.core.workspace import Workspace\n"
            "ws = Workspace.open(sys.argv[1])\n"
            "cProfile.run('audit.run(ws, parallel=False, use_cache=False)', sys.argv[2])\n")
    subprocess.run([_python(HERE), "-c", code, str(workspace), str(out)], cwd=HERE, check=True,
                   env={**os.environ, "PYTHONPATH": str(HERE)})
    print(f"profile written to {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--base", type=Path, help="reference checkout (with its .venv)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-wall", action="store_true", help="skip the wall time of `memtui audit --json`")
    parser.add_argument("--profile", type=Path, help="write a cProfile of one cold serial audit here")
    args = parser.parse_args()
    if args.profile:
        profile(args.workspace, args.profile)
        return
    sides = [("this", HERE)] + ([("base", args.base.resolve())] if args.base else [])
    got: dict[str, dict[str, list[float]]] = {name: {"cold": [], "warm": [], "cold wall": [], "warm wall": []}
                                              for name, _ in sides}
    for run in range(args.runs):
        for name, checkout in (sides if run % 2 == 0 else sides[::-1]):
            figures = cpu(checkout, args.workspace)
            got[name]["cold"].append(figures["cold"])
            got[name]["warm"].append(figures["warm"])
            line = (f"run {run + 1} {name}: cold {figures['cold']:.2f} s, warm {figures['warm']:.2f} s CPU "
                    f"({figures['articles']} articles, {figures['findings']} findings)")
            if not args.no_wall:
                cold, warm = wall(checkout, args.workspace)
                got[name]["cold wall"].append(cold)
                got[name]["warm wall"].append(warm)
                line += f"; memtui audit --json: cold {cold:.2f} s, warm {warm:.2f} s wall"
            print(line, flush=True)
    print()
    medians = {name: {k: statistics.median(v) for k, v in figures.items() if v} for name, figures in got.items()}
    for name, figures in medians.items():
        print(f"median {name}: " + ", ".join(f"{k} {v:.2f} s" for k, v in figures.items()))
    if "base" in medians:
        ratios = {k: medians["this"][k] / medians["base"][k] for k in medians["this"]}
        print("this / base: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))
        print("target: cold CPU <= 1.5x, warm CPU <= 1.2x")


if __name__ == "__main__":
    main()
