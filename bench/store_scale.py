"""Measure memtui's store at scale: 10,000 proposals, then the CLI pages and the Proposals area.

Usage: python bench/store_scale.py [--proposals 10000] [--dir DIR] [--runs 3] [--keys 20]
       [--tui-timeout 300] [--skip-tui] [--reuse]

Builds a workspace (a copy of ``sample_workspace``) whose store holds ``--proposals``
proposals, then prints, each from a fresh process so imports and start-up count:

- ``memtui proposals list`` (the first page of the queue, text);
- ``memtui proposals list --json --limit 100 --cursor N`` (a page in the middle);
- ``memtui versions ARTICLE`` of an article with many versions (first page, and a middle page
  with ``--cursor``);
- ``memtui log --limit 100`` (first page, and a middle page with ``--cursor``);
- the TUI, headless through Textual's Pilot: seconds from the key that opens the Proposals
  area until its queue shows its first row (and, for reference, the same on the sample
  workspace's queue of 3: what opening the area costs whatever the store), then the time of
  each key: cursor moves (until the right side shows the new row's proposal), switching the
  right side's tabs (animations off: the pane switches at once, and the tab underline's
  0.3 s slide, which Pilot waits for, is decoration), and the next and previous page of the
  queue when the area has those keys.

How the store is built (honest, and fast): every version record is made by the same function
``propose`` uses (``_version_record``, against the store as it was before the batch), every
audit entry has the shape ``Session.write`` gives a ``governance.propose`` entry, and uses are
``Use`` records; they are written by one guarded write (``Session.write``, one atomic store
write). One article (``HOT``) gets a tenth of the proposals, numbered as ``propose`` numbers
them, so ``versions`` has a long history to page through. A fifth of the proposals get one or
two uses (some counting, some not), so eligibility has work to do. Filing 10,000 proposals one
by one through ``propose`` would rewrite the whole store each time (10,000 writes of up to
20 MB), which measures the build, not the reads.

Not a test: the figures depend on the machine and its load (printed with ``uptime``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "sample_workspace"
HOT_NAME = "hot-article.md"

TUI = r"""
import asyncio, json, sys, time
from textual.widgets import DataTable, Tabs
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp

WS, KEYS, TIMEOUT = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
out = {}

async def until(pilot, cond, limit):
    started = time.monotonic()
    while not cond():
        if time.monotonic() - started > limit:
            return None
        await pilot.pause(0.005)
    return time.monotonic() - started

async def main():
    app = MemtuiApp(Workspace.open(WS))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause(0.5)
        started = time.monotonic()
        await pilot.press("7")
        screen = app.screen
        queue = screen.query_one("#prop-queue", DataTable)
        got = await until(pilot, lambda: queue.row_count > 0 and screen.current is not None, TIMEOUT)
        out["first_rows_s"] = None if got is None else time.monotonic() - started
        out["rows_shown"] = queue.row_count
        out["count_line"] = str(screen.query_one("#prop-count").render())
        if got is None:
            print("TUI " + json.dumps(out), flush=True)
            app.exit()
            return
        queue.focus()
        await pilot.pause()
        moves = []
        for _ in range(KEYS):
            before = screen.current.id
            t = time.monotonic()
            await pilot.press("down")
            if await until(pilot, lambda: screen.current is not None and screen.current.id != before, TIMEOUT) is None:
                break
            moves.append(time.monotonic() - t)
        out["cursor_key_s"] = moves
        tabs = screen.query_one(Tabs)
        tabs.focus()
        app.animation_level = "none"  # the tab underline's slide: Pilot would wait for it
        await pilot.pause()
        switches = []
        for _ in range(min(KEYS, 10)):
            before = tabs.active
            t = time.monotonic()
            await pilot.press("right")
            if await until(pilot, lambda: tabs.active != before, TIMEOUT) is None:
                break
            switches.append(time.monotonic() - t)
        out["tab_key_s"] = switches
        queue.focus()
        await pilot.pause()
        keys = {b.action: b.key for b in screen.BINDINGS if hasattr(b, "action")}
        pages = []
        if "page(1)" in keys and "pages" in out["count_line"]:
            for key in (keys["page(1)"], keys["page(1)"], keys["page(-1)"]):
                before = str(screen.query_one("#prop-count").render())
                t = time.monotonic()
                await pilot.press(key)
                if await until(pilot, lambda: str(screen.query_one("#prop-count").render()) != before
                               and queue.row_count > 0, TIMEOUT) is None:
                    break
                pages.append(time.monotonic() - t)
            out["count_line_after_paging"] = str(screen.query_one("#prop-count").render())
        out["page_key_s"] = pages
        app.exit()
    print("TUI " + json.dumps(out), flush=True)

asyncio.run(main())
"""


def build(target: Path, proposals: int, seed: int = 7) -> dict[str, object]:
    """Copy the sample workspace to ``target`` and file ``proposals`` proposals in one write."""
    from memtui.core import atomic
    from memtui.core import governance as gov
    from memtui.core.auditlog import new_client_id, request_key
    from memtui.core.governance.intents import _version_record
    from memtui.core.session import Session
    from memtui.core.tree.model import MemoryTree

    rng = random.Random(seed)
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(SAMPLE, target, symlinks=True)
    session = Session.open(target, purpose="bench store-scale")
    ws = session.ws
    tree = MemoryTree(ws)
    nodes = [n for n in tree.walk_nodes() if n]
    bodies = [p.read_text("utf-8") for p in sorted((target / "memory").rglob("*.md"))
              if p.name != "AGENTS.md"][:40]
    ledger = gov.Ledger(session.store)
    hot_node = nodes[0]
    hot = f"{hot_node}/{HOT_NAME}"
    hot_count = max(1, proposals // 10)
    started = time.monotonic()
    versions, audit, uses, pins = [], [], [], []
    stamp = gov.now()
    for i in range(proposals):
        is_hot = i < hot_count
        node = hot_node if is_hot else rng.choice(nodes)
        article = hot if is_hot else f"{node}/bench-{i:05d}.md"
        content = (rng.choice(bodies) + f"\n\nBench proposal {i}: "
                   + " ".join(rng.choice(("parcel", "depot", "route", "scan", "label", "retry"))
                              for _ in range(40)) + "\n")
        case, sr = f"CASE-{100000 + i}", f"SR-{500000 + i}"
        prov = {"kind": "proposal", "case": case, "source_request": sr, "sources": [],
                "human_reviewed": False, "untrusted": rng.random() < 0.05}
        record = _version_record(ws, ledger, article, content, author="support.investigator",
                                 profile_version="3", provenance=prov, state="proposed")
        if is_hot:  # numbered as propose numbers successive proposals of one article
            record["number"] = i + 1
            record["id"] = f"{article}@{i + 1}"
        record["created"] = stamp
        versions.append(record)
        request = {"article": article, "sha256": record["sha256"], "case": case, "source_request": sr,
                   "profile": "support.investigator", "untrusted": prov["untrusted"], "new_node_owner": None}
        audit.append({"time": stamp, "profile": "support.investigator", "action": "governance.propose",
                      "target": f"memory/{article}", "before": None, "after": record["sha256"],
                      "client_id": new_client_id(),
                      "detail": {"version": record["id"], "case": case, "untrusted": prov["untrusted"]},
                      "request": request_key("governance.propose", f"memory/{article}", request)})
        if rng.random() < 0.2:
            for k in range(rng.choice((1, 2))):
                use = {"version": record["id"], "hash": record["sha256"], "case": f"CASE-U{i}-{k}",
                       "source_request": f"SR-U{i}-{k}", "origin": "independent", "origin_of": None,
                       "check": "reproduced on a test depot", "verdict": "pass", "time": stamp,
                       "by": "support.curator"}
                uses.append(use)
                pins.append({"case": use["case"], "version": use["version"], "hash": use["hash"],
                             "time": stamp})

    def change(tx) -> int:  # noqa: ANN001 - Tx
        tx.table(gov.T_VERSIONS).insert_multiple(versions)
        tx.table("audit").insert_multiple(audit)
        tx.table(gov.T_USES).insert_multiple(uses)
        tx.table(gov.T_PINS).insert_multiple(pins)
        tx.hashes(None, atomic.sha256(str(len(versions)).encode()))
        return len(versions)

    session.write("bench.seed", ".memtui/store.json", change, client_id=uuid.uuid4().hex)
    session.close()
    size = (target / ".memtui/store.json").stat().st_size
    return {"proposals": proposals, "hot": hot, "hot_versions": hot_count, "uses": len(uses),
            "audit_entries": len(audit), "store_bytes": size, "build_s": time.monotonic() - started}


def run(argv: list[str], env: dict[str, str], timeout: float) -> tuple[float | None, str, float]:
    """Wall seconds of one child process (``None`` when it passed ``timeout``), its stdout,
    and its CPU seconds (user + system: on a loaded machine, about its wall time alone)."""
    with tempfile.TemporaryFile("w+") as sink:
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.DEVNULL, text=True, env=env)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                return None, "", 0.0
            time.sleep(0.005)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - started
        sink.seek(0)
        return wall, sink.read(), usage.ru_utime + usage.ru_stime


def fmt(values: list[float | None]) -> str:
    done = [v for v in values if v is not None]
    if not done:
        return "timed out"
    runs = ", ".join("timeout" if v is None else f"{v:.2f}" for v in values)
    return f"{statistics.median(done):6.2f} s (runs: {runs})"


def keys(values: list[float]) -> str:
    if not values:
        return "not measured"
    ms = sorted(v * 1000 for v in values)
    return (f"median {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms, "
            f"p90 {ms[min(len(ms) - 1, int(len(ms) * 0.9))]:.0f} ms ({len(ms)} keys)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proposals", type=int, default=10_000)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "memtui-store-scale")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=300, help="seconds before a command counts as stalled")
    parser.add_argument("--skip-tui", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="reuse the workspace --dir holds (built before)")
    args = parser.parse_args()
    ws = args.dir.resolve()
    meta_path = ws / ".bench-store-scale.json"
    if args.reuse and meta_path.exists():
        meta = json.loads(meta_path.read_text("utf-8"))
    else:
        meta = build(ws, args.proposals)
        meta_path.write_text(json.dumps(meta), "utf-8")
    print(f"workspace {ws}: {meta['proposals']:,} proposals ({meta['hot_versions']:,} on {meta['hot']}), "
          f"{meta['uses']:,} uses, {meta['audit_entries']:,} audit entries; store "
          f"{int(meta['store_bytes']) / 1e6:.1f} MB (built in {float(meta['build_s']):.1f} s)")
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    env = {**os.environ, "MEMTUI_CACHE_DIR": tempfile.mkdtemp(prefix="memtui-cache-")}
    memtui = [sys.executable, "-m", "memtui"]
    middle = str(int(meta["proposals"]) // 2)
    hot_middle = str(int(meta["hot_versions"]) // 2)
    commands = [
        ("proposals list", ["proposals", "list", "-w", str(ws)]),
        (f"proposals list --json --limit 100 --cursor {middle}",
         ["proposals", "list", "-w", str(ws), "--json", "--limit", "100", "--cursor", middle]),
        ("versions HOT", ["versions", str(meta["hot"]), "-w", str(ws)]),
        (f"versions HOT --json --cursor {hot_middle}",
         ["versions", str(meta["hot"]), "-w", str(ws), "--json", "--cursor", hot_middle]),
        ("log --limit 100", ["log", "-w", str(ws), "--limit", "100"]),
        ("log --json --limit 100 --cursor 5000", ["log", "-w", str(ws), "--json", "--limit", "100", "--cursor", "5000"]),
    ]
    report: dict[str, object] = {"meta": meta}
    for label, argv in commands:
        walls, cpus = [], []
        for _ in range(args.runs):
            wall, out, cpu = run(memtui + argv, env, args.timeout)
            walls.append(wall)
            cpus.append(cpu)
            if wall is None:
                break
        report[label] = {"wall_s": walls, "cpu_s": cpus}
        done = [c for w, c in zip(walls, cpus, strict=True) if w is not None]
        print(f"{label:<48} {fmt(walls)}" + (f", CPU {statistics.median(done):.2f} s" if done else ""))
    if not args.skip_tui:
        reference = Path(tempfile.mkdtemp(prefix="memtui-sample-")) / "ws"
        shutil.copytree(SAMPLE, reference, symlinks=True)
        wall, out, _ = run([sys.executable, "-c", TUI, str(reference), "2", "60"], env, 180)
        line = next((ln for ln in out.splitlines() if ln.startswith("TUI ")), None)
        if line is not None:  # what the area costs whatever the store, with a queue of 3
            ref = json.loads(line[4:])
            report["tui_reference_sample"] = ref
            first = ref.get("first_rows_s")
            print(f"{'TUI, sample workspace (3 proposals): first rows':<48} "
                  + (f"{first:6.2f} s" if first is not None else "none")
                  + f"; cursor {keys(ref.get('cursor_key_s', []))}; tab {keys(ref.get('tab_key_s', []))}")
        wall, out, _ = run([sys.executable, "-c", TUI, str(ws), str(args.keys), str(args.timeout)], env,
                        args.timeout + 120)
        line = next((ln for ln in out.splitlines() if ln.startswith("TUI ")), None)
        if line is None:
            print("TUI: no answer" + (" (timed out)" if wall is None else ""))
        else:
            tui = json.loads(line[4:])
            report["tui"] = tui
            first = tui.get("first_rows_s")
            print(f"{'TUI: Proposals area, first rows':<48} "
                  + (f"{first:6.2f} s" if first is not None else f"none after {args.timeout:g} s")
                  + f" ({tui.get('rows_shown')} rows in the table; {tui.get('count_line')!r})")
            print(f"{'TUI: cursor key (down)':<48} {keys(tui.get('cursor_key_s', []))}")
            print(f"{'TUI: switch tab (right)':<48} {keys(tui.get('tab_key_s', []))}")
            print(f"{'TUI: next/previous page':<48} {keys(tui.get('page_key_s', []))}"
                  + (f" ({tui['count_line_after_paging']!r})" if tui.get("count_line_after_paging") else ""))
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    path = out_dir / f"store-scale-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(report, indent=1), "utf-8")
    print(f"figures written to {path}")


if __name__ == "__main__":
    main()
