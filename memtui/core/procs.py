"""Worker processes for CPU-bound work on large workspaces (the audit, the search index build).

Pure-Python work (YAML, Whoosh) holds the GIL, so threads do not add cores; processes do.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from multiprocessing import context as mp_context
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


def _die_with_parent(parent: int | None) -> None:
    """In a worker: have the kernel kill it when the process that started it dies (Linux
    ``prctl(PR_SET_PDEATHSIG, SIGKILL)``), and end at once if that process is already gone.

    A worker that outlived a killed ``memtui index --rebuild`` kept the search index's write
    lock (an ``flock`` on a descriptor it inherited) and search was refused for minutes.
    The signal comes when the starting *thread* ends; memtui starts its
    workers from the thread that waits for them, so that is the same moment.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no prctl
            pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent died before the request took effect


class _DiesWithParent:
    """Mixed into a ``multiprocessing`` Process class: the started process dies with its parent."""

    _memtui_parent: int | None = None

    def start(self) -> None:
        self._memtui_parent = os.getpid()
        super().start()  # type: ignore[misc]

    def run(self) -> None:
        _die_with_parent(self._memtui_parent)
        super().run()  # type: ignore[misc]


class _ForkProcess(_DiesWithParent, mp_context.ForkProcess):
    pass


class _SpawnProcess(_DiesWithParent, mp_context.SpawnProcess):
    pass


class _ForkContext(mp_context.ForkContext):
    Process = _ForkProcess


class _SpawnContext(mp_context.SpawnContext):
    Process = _SpawnProcess


def spawn_context() -> BaseContext:
    """Like :func:`process_context`, but always ``spawn``: workers start as clean interpreters
    that do not carry this process's memory; each dies with the process that started it."""
    _start_resource_tracker()
    if not hasattr(mp_context, "SpawnContext"):  # pragma: no cover
        return multiprocessing.get_context("spawn")
    return _SpawnContext()


def process_context() -> BaseContext:
    """The ``multiprocessing`` context to start workers with (its resource tracker running);
    every worker it starts dies with the process that started it (:func:`_die_with_parent`).

    ``fork`` is cheapest, but forking a process that runs other threads (the TUI works in
    worker threads) can copy a lock held by another thread and hang the child; then
    ``spawn``, which starts clean interpreters (about 0.3 s more per worker).
    """
    fork = threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()
    _start_resource_tracker()
    if not hasattr(mp_context, "ForkContext"):  # pragma: no cover - Windows: spawn only
        return multiprocessing.get_context("spawn")
    return _ForkContext() if fork else _SpawnContext()
