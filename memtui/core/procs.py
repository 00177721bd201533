"""Worker processes for CPU-bound work on large workspaces (the audit, the search index build).

Pure-Python work (YAML, Whoosh) holds the GIL, so threads do not add cores; processes do.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
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


_tracker_lock = threading.Lock()


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker with the process's real stderr.

    The tracker is started on first use and hands it ``sys.stderr.fileno()``; inside the TUI
    Textual has replaced ``sys.stderr`` with an object whose ``fileno()`` is -1, and creating
    a worker pool or queue failed with "ValueError: bad value(s) in fds_to_keep" (the app
    crashed when a large workspace was audited or indexed).
    """
    from multiprocessing import resource_tracker

    with _tracker_lock:
        saved = sys.stderr
        try:
            if sys.__stderr__ is not None:
                sys.stderr = sys.__stderr__
            resource_tracker.ensure_running()
        finally:
            sys.stderr = saved


def process_context() -> BaseContext:
    """The ``multiprocessing`` context to start workers with (its resource tracker running).

    ``fork`` is cheapest, but forking a process that runs other threads (the TUI works in
    worker threads) can copy a lock held by another thread and hang the child; then
    ``spawn``, which starts clean interpreters (about 0.3 s more per worker).
    """
    method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() \
        else "spawn"
    _start_resource_tracker()
    return multiprocessing.get_context(method)
