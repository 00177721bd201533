"""Worker processes for CPU-bound work on large workspaces (the audit, the search index build).

Pure-Python work (YAML, Whoosh) holds the GIL, so threads do not add cores; processes do.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from multiprocessing.context import BaseContext

#: Most worker processes started for one job, whatever the core count.
MAX_WORKERS = 4


def worker_count() -> int:
    """Cores this process may use (``sched_getaffinity``), capped at :data:`MAX_WORKERS`; ≥ 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


def process_context() -> BaseContext:
    """The ``multiprocessing`` context to start workers with.

    ``fork`` is cheapest, but forking a process that runs other threads (the TUI works in
    worker threads) can copy a lock held by another thread and hang the child; then
    ``spawn``, which starts clean interpreters (about 0.3 s more per worker).
    """
    method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() \
        else "spawn"
    return multiprocessing.get_context(method)
