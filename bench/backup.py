"""Benchmark backup, incremental backup, restore and verify at the sizes a maintainer meets (10,000 articles, a big graph and store).

Usage: python bench/backup.py [--articles N] [--observations N] [--audit N] [--keep DIR]

Builds a workspace with ``bench/make_workspace.py`` (N articles), a ``graph.jsonl`` holding
the given number of observations (10 per entity) with one ``provenance`` store record per
observation, and an ``audit`` table of the given size (written straight into the store file
in the shape the audit log writes, since 20,000 single inserts would measure TinyDB, not
the backup). Then it times, into a fresh git repository:

1. the first backup (target: under 15 s at 10,000 + 50,000 + 20,000);
2. a backup after changing 10 articles (target: under 2 s, touching only those files), wall
   and CPU of this process and of its git children, beside two anchors on the same 10 edits:
   plain ``git add -A && git commit`` in a git repository of a copy of the workspace, and
   ``cp -a`` of the whole workspace;
3. restore + verify of the last backup (target: under 20 s).

Prints the figures; it is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_workspace import build  # noqa: E402

from memtui.core.backup.commit import backup  # noqa: E402
from memtui.core.backup.restore import restore  # noqa: E402
from memtui.core.backup.verify import verify  # noqa: E402
from memtui.core.workspace import Workspace  # noqa: E402


def add_graph_and_store(ws: Path, observations: int, audit: int) -> None:
    lines = []
    provenance = {}
    per_entity = 10
    for e in range(max(1, observations // per_entity)):
        obs = [f"observation {e}-{k}: parcel depot route {k * e}" for k in range(per_entity)]
        lines.append(json.dumps({"type": "entity", "name": f"entity-{e}", "entityType": "system",
                                 "observations": obs}, ensure_ascii=False, separators=(",", ":")))
        for k in range(per_entity):
            provenance[str(len(provenance) + 1)] = {"entity": f"entity-{e}", "observation": obs[k],
                                                    "session": f"s-{e % 97}", "time": "2026-11-01T00:00:00+00:00"}
    for r in range(observations // 20):
        lines.append(json.dumps({"type": "relation", "from": f"entity-{r}", "to": f"entity-{r + 1}",
                                 "relationType": "calls"}, separators=(",", ":")))
    (ws / "memory" / "graph.jsonl").write_text("\n".join(lines), encoding="utf-8")
    audit_table = {str(i + 1): {"time": f"2026-10-{1 + i % 28:02d}T00:00:{i % 60:02d}.{i:06d}+00:00",
                                "profile": "bench.curator", "action": "notes.set",
                                "target": "memory/MEMORY_CUSTOM.md", "before": f"{i:064x}",
                                "after": f"{i + 1:064x}", "client_id": f"{i:032x}", "detail": {"bytes": i}}
                   for i in range(audit)}
    (ws / ".memtui").mkdir(exist_ok=True)
    (ws / ".memtui" / "store.json").write_text(
        json.dumps({"audit": audit_table, "provenance": provenance}, ensure_ascii=False), encoding="utf-8")


def timed(label: str, fn):
    started = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - started
    print(f"{label:<44} {seconds:7.2f} s")
    return value, seconds


def cpu() -> float:
    """CPU seconds of this process and its finished children so far."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=10_000)
    parser.add_argument("--observations", type=int, default=50_000)
    parser.add_argument("--audit", type=int, default=20_000)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="memtui-bench-backup-"))
    base.mkdir(parents=True, exist_ok=True)
    ws, repo, out = base / "ws", base / "repo", base / "restored"
    try:
        started = time.perf_counter()
        build(args.articles, ws)
        add_graph_and_store(ws, args.observations, args.audit)
        print(f"workspace: {args.articles} articles, {args.observations} observations, {args.audit} audit "
              f"records, built in {time.perf_counter() - started:.1f} s")
        workspace = Workspace.open(ws)
        first, t1 = timed("first backup (render, write, add, commit, gc)", lambda: backup(workspace, repo))
        print(f"  {first.counts['files']} files, {first.counts['records']} records, "
              f"{len(first.written)} backup files written")
        plain = base / "plain"  # the anchor: the same workspace in a plain git repository
        shutil.copytree(ws, plain, symlinks=True)
        for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "first"]):
            subprocess.run(["git", *argv], cwd=plain, check=True, capture_output=True)
        articles = sorted((ws / "memory").rglob("a0*.md"))[:10]
        for path in articles:
            for root in (ws, plain):
                target = root / path.relative_to(ws)
                target.write_bytes(target.read_bytes() + b"\nchanged for the benchmark\n")
        cpu0 = cpu()
        second, t2 = timed("backup after changing 10 articles", lambda: backup(workspace, repo))
        c2 = cpu() - cpu0
        print(f"  CPU {c2:.2f} s (this process and its git children); load average {os.getloadavg()[0]:.1f}")
        cpu0 = cpu()
        _, ta = timed("anchor: git add -A && git commit (same edits)", lambda: subprocess.run(
            "git add -A && git commit -q -m edits", shell=True, cwd=plain, check=True, capture_output=True))
        ca = cpu() - cpu0
        cpu0 = cpu()
        _, tc = timed("anchor: cp -a of the whole workspace", lambda: subprocess.run(
            ["cp", "-a", str(ws), str(base / "copy")], check=True))
        cc = cpu() - cpu0
        print(f"  written: {len(second.written)} backup files ({', '.join(second.written[:3])}, …)")
        # what a cron job pays: `memtui backup` in a fresh process after 10 more edits
        for path in articles:
            path.write_bytes(path.read_bytes() + b"\nchanged again for the benchmark\n")
        cpu0 = cpu()
        _, tf = timed("memtui backup, a fresh process, 10 more edits", lambda: subprocess.run(
            [sys.executable, "-m", "memtui", "backup", "-w", str(ws), "--repo", str(repo)], check=True,
            capture_output=True))
        cf = cpu() - cpu0
        load = os.getloadavg()[0]
        print(f"row: incremental backup, 10 edits at {args.articles:,} articles | in process {t2:.2f} s wall, "
              f"{c2:.2f} s CPU | fresh process {tf:.2f} s wall, {cf:.2f} s CPU | anchor git add+commit "
              f"{ta:.2f} s wall, {ca:.2f} s CPU ({c2 / max(ca, 1e-3):.1f}x CPU) | anchor cp -a {tc:.2f} s wall, "
              f"{cc:.2f} s CPU ({c2 / max(cc, 1e-3):.1f}x CPU) | load {load:.1f} on {os.cpu_count()} cores")
        _, t3 = timed("restore", lambda: restore(repo, None, "memtui-backup", out))
        checked, t4 = timed("verify (restore to temp, render, compare)", lambda: verify(repo, None, "memtui-backup"))
        print(f"  verify: {'zero differences' if checked.ok else str(len(checked.differences)) + ' differences'}")
        print(f"restore + verify                             {t3 + t4:7.2f} s")
        print(f"targets: first < 15 s: {t1 < 15}; incremental < 2 s: {t2 < 2} "
              f"(only changed files: {len(second.written) == 11}); restore + verify < 20 s: {t3 + t4 < 20}")
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
