"""Worker processes started from inside the TUI (memtui/core/procs.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import sys, threading
    from pathlib import Path
    import memtui.core.search.engine.index as index_mod
    from memtui.core.audit import run
    from memtui.core.workspace import Workspace

    class TextualLikeStderr:  # Textual swaps sys.stderr for an object like this
        def write(self, text): return len(text)
        def flush(self): pass
        def fileno(self): return -1

    root = Path(sys.argv[1])
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()  # threads running: spawn, as in the TUI
    sys.stderr = TextualLikeStderr()
    index_mod.PARALLEL_SOURCES = 2
    index_mod.worker_count = lambda: 2
    ws = Workspace.open(root)
    report = index_mod.SearchIndex(ws).update(rebuild=True)
    audit = run(ws, parallel=True, use_cache=False)
    stop.set()
    print(report.added, audit.articles)
""")


def test_workers_start_when_stderr_is_replaced_as_in_the_tui(tmp_path: Path) -> None:
    """Inside the TUI, creating a worker pool crashed the app ("bad value(s) in
    fds_to_keep"): the resource tracker was handed Textual's stderr, fileno -1."""
    mem = tmp_path / "ws" / "memory"
    mem.mkdir(parents=True)
    lines = ["# Memory", ""]
    for i in range(4):
        (mem / f"a{i}.md").write_text(f"---\ntitle: a{i}\n---\nparcel {i}\n", "utf-8")
        lines.append(f"- [a{i}](a{i}.md) — parcel {i}")
    (mem / "AGENTS.md").write_text("\n".join(lines) + "\n", "utf-8")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "ws")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    added, articles = done.stdout.split()
    assert int(added) == 5 and int(articles) == 4
