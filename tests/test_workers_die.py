"""Workers die with their parent: SIGKILL of ``memtui index --rebuild`` while
its worker processes build the index leaves no process behind, and the index lock they held
is free at once, so the next search is not refused."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import torture


def _tree(root: Path, articles: int) -> None:
    node = root / "memory" / "bulk"
    node.mkdir(parents=True)
    lines = ["# Bulk\n"]
    for i in range(articles):
        (node / f"a{i:05d}.md").write_text(f"# Article {i}\n\n" + f"parcel route depot word{i} " * 60 + "\n")
        lines.append(f"- [Article {i}](a{i:05d}.md) — number {i}\n")
    (node / "AGENTS.md").write_text("".join(lines))
    (root / "memory" / "AGENTS.md").write_text("# Root\n- [Bulk](bulk/AGENTS.md) — bulk\n")


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="the index builds in workers only with 2 cores")
def test_a_killed_rebuild_leaves_no_worker_and_no_lock(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _tree(root, 1500)
    tries = torture.scaled(3, least=2)
    survivors = refused = 0
    for _ in range(tries):
        shutil.rmtree(root / ".memtui" / "index", ignore_errors=True)  # a first build: in workers
        proc = subprocess.Popen([sys.executable, "-m", "memtui", "index", "--rebuild", "-w", str(root)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=torture.env(),
                                start_new_session=True)
        torture.wait_until(lambda proc=proc: len(torture.session_members(proc.pid)) >= 3 or proc.poll() is not None,
                           timeout=60,
                           what="the index workers")
        assert proc.poll() is None, "the rebuild ended before its workers were seen"
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 5
        while torture.session_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = torture.session_members(proc.pid)
        survivors += len(left)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        done = torture.memtui("search", "parcel", "-w", str(root), timeout=300)
        if done.returncode != 0 or b"being updated by another" in done.stderr:
            refused += 1
    torture.report("killed-index-rebuild", tries=tries, surviving_workers=survivors, searches_refused=refused)
    assert survivors == 0 and refused == 0
