"""Running a skill's own tests: exactly the command its manifest names, as a subprocess with no
shell, a timeout, a restricted environment, standard input closed and its output bounded
(seed 000 Part II §10: "its own tests re-run before an amended version is used"; DESIGN.md
invariant 12: "a skill's declared test, run only on request").

What the run may and may not do, and what memtui does about it:

- **time**: at the timeout the whole process group is killed (``SIGKILL``);
- **processes left behind**: every process of the run carries a marker in its environment
  (:data:`MARKER_ENV`); when the command ends (or is killed), every process still in its
  process group or carrying the marker is killed — a daemon that forked and left the group
  (``setsid``) too, unless it also cleared its environment — and the run fails, naming how many;
- **output**: standard output and error are read as they come; the first
  :data:`KEEP_BYTES` of each are kept, and past :data:`MAX_OUTPUT` bytes in all the process
  group is killed and the run fails (1 GB of output costs memtui 64 KiB and a second, not 1 GB);
- **writes outside the skill folder** are *detected*, not prevented: every file of the
  workspace (``.memtui/`` and the skill folder aside) is listed with its size, modification
  time and inode before and after; a file created, changed or removed fails the run, named.
  ``HOME`` and ``TMPDIR`` point to a scratch folder removed after the run. Writes elsewhere on
  the machine are neither prevented nor detected (no sandbox is assumed);
- **its own folder**: a run in the skill's folder that changes the skill's files fails (the
  result is bound to the content hash it started from);
- **nothing else runs**: the argument vector is ``[command, *args]`` from the manifest; a
  bare command is looked up on the run's ``PATH`` (:func:`run_path`), a command with a ``/``
  must be a file inside the skill folder, executable (a version keeps its files' executable
  bits, :mod:`memtui.core.skills.content`).

The environment is rebuilt, not inherited: ``PATH`` (:func:`run_path`), ``HOME``, ``TMPDIR``,
the locale and the run's marker. ``PATH`` is the one value taken from the user's environment:
it is a list of folders where programs are installed, not a secret (no token, password or
address is in it), and without it a script's ``#!/usr/bin/env python3`` line finds no
interpreter the user installed outside the system folders.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.errors import RefusedError
from memtui.core.files import is_inside
from memtui.core.skills.content import SKIP_DIRS, content_hash, read_content, scratch_folder
from memtui.core.skills.manifest import TestSpec

#: The system folders, always on a test's ``PATH`` (after the user's own, :func:`run_path`).
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


def run_path() -> str:
    """The ``PATH`` a test runs with: the absolute folders of the user's ``PATH`` (``os.defpath``
    when unset), then :data:`SAFE_PATH`'s not yet named. A relative entry (``.``, empty) is left
    out: it would name folders of the skill itself, and a skill could ship its own ``python3``."""
    out: list[str] = []
    for entry in [*os.environ.get("PATH", os.defpath).split(os.pathsep), *SAFE_PATH.split(os.pathsep)]:
        if entry and os.path.isabs(entry) and entry not in out:
            out.append(entry)
    return os.pathsep.join(out)

#: Seconds a test may run when neither the manifest nor the caller says.
DEFAULT_TIMEOUT = 60.0

#: Longest timeout accepted (the manifest schema's maximum too).
MAX_TIMEOUT = 600.0

#: Bytes of each stream kept with the result.
KEEP_BYTES = 64 * 1024

#: Bytes of output (both streams) past which the run is killed.
MAX_OUTPUT = 16 * 1024 * 1024

#: The environment variable marking every process of a run (its value is the run's id).
MARKER_ENV = "MEMTUI_SKILL_RUN"

#: Most workspace entries listed to detect writes outside the folder (past it: not checked, said so).
MAX_WATCHED = 50_000


class RunRefused(RefusedError):
    """The test cannot be run as named (no tests named, command not found, outside the
    folder); ``str(exc)`` says why and what to do. Nothing was run."""


@dataclass(slots=True)
class TestRun:
    """What one run did.

    Attributes:
        argv: what was run. cwd: where (the skill folder, or a scratch copy of a version).
        exit_code: the command's exit status (negative: killed by that signal), ``None`` if
            it never ended by itself.
        timed_out: killed at the timeout. output_over: killed for printing past :data:`MAX_OUTPUT`.
        seconds: wall time. stdout, stderr: the first :data:`KEEP_BYTES` of each, decoded.
        out_bytes: bytes printed in all. truncated: some output was not kept.
        left_behind: processes still running after the command ended, killed.
        outside_writes: workspace files the run created, changed or removed (at most 20 named).
        own_changes: files of the skill folder the run changed.
        watched: whether writes outside were checked (``False`` past :data:`MAX_WATCHED`).
    """

    argv: list[str]
    cwd: str
    exit_code: int | None = None
    timed_out: bool = False
    output_over: bool = False
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    out_bytes: int = 0
    truncated: bool = False
    left_behind: int = 0
    outside_writes: list[str] = field(default_factory=list)
    own_changes: bool = False
    watched: bool = True

    @property
    def passed(self) -> bool:
        return (self.exit_code == 0 and not self.timed_out and not self.output_over and not self.left_behind
                and not self.outside_writes and not self.own_changes)

    def why(self) -> str:
        """``"passed"`` or why it failed, in one sentence."""
        if self.timed_out:
            return "killed at the timeout (its process group too)"
        if self.output_over:
            return f"killed: it printed more than {MAX_OUTPUT:,} bytes"
        if self.outside_writes:
            return "it wrote outside the skill folder: " + ", ".join(self.outside_writes)
        if self.own_changes:
            return "it changed the skill's own files"
        if self.left_behind:
            return f"it left {self.left_behind} process{'es' if self.left_behind != 1 else ''} running (killed)"
        if self.exit_code != 0:
            return f"exit status {self.exit_code}"
        return "passed"

    def to_json(self) -> dict[str, Any]:
        return {"argv": list(self.argv), "cwd": self.cwd, "exit_code": self.exit_code, "passed": self.passed,
                "why": self.why(), "timed_out": self.timed_out, "output_over": self.output_over,
                "seconds": round(self.seconds, 3), "stdout": self.stdout, "stderr": self.stderr,
                "out_bytes": self.out_bytes, "truncated": self.truncated, "left_behind": self.left_behind,
                "outside_writes": list(self.outside_writes), "own_changes": self.own_changes,
                "watched": self.watched}


def resolve_command(folder: Path, command: str) -> str:
    """The program to run for the manifest's ``command``.

    Raises:
        RunRefused: not found on :func:`run_path`, a path leading outside the folder, or a file
            of the folder that is not executable.
    """
    if "/" in command:
        candidate = (folder / command) if not os.path.isabs(command) else Path(command)
        if not is_inside(folder, candidate):
            raise RunRefused(f"the test command {command!r} leads outside the skill folder; name a program "
                              "on the PATH or a file inside the folder")
        if not candidate.is_file():
            raise RunRefused(f"the test command {command!r} is not a file in the skill folder")
        if not os.access(candidate, os.X_OK):
            raise RunRefused(f"the test command {command!r} is not executable; make it so "
                             f"(`chmod +x {command}`) or name its interpreter as the command "
                             f"(`\"command\": \"sh\", \"args\": [\"{command}\"]`)")
        return str(candidate)
    path = run_path()
    found = shutil.which(command, path=path)
    if found is None:
        raise RunRefused(f"the test command {command!r} is not found on the PATH ({path}); install it or name "
                          "another program in the manifest")
    return found


def _start_error(command: str, program: str, exc: OSError) -> str:
    """Why ``program`` could not be started, naming the real cause: the interpreter its ``#!``
    line names when that is what is missing or not executable."""
    try:
        with open(program, "rb") as fh:
            first = fh.readline(256)
    except OSError:
        first = b""
    interpreter = first[2:].strip().decode("utf-8", "replace") if first.startswith(b"#!") else ""
    if interpreter and exc.errno in (errno.ENOENT, errno.EACCES):
        why = "was not found" if exc.errno == errno.ENOENT else "cannot be executed"
        return (f"the test command {command!r} could not be started: the interpreter {interpreter!r} named by "
                f"its first line {why}; install it or correct that line")
    if exc.errno == errno.ENOEXEC:
        return (f"the test command {command!r} could not be started: it is not a program and its first line "
                "names no interpreter (`#!/bin/sh`); add one or name its interpreter as the command")
    return f"the test command {command!r} could not be started: {exc.strerror or exc}"


def _listing(root: Path, skip: list[Path]) -> dict[str, tuple[int, int, int]] | None:
    """``{relative path: (size, mtime_ns, inode)}`` of ``root``'s files, ``skip`` left out;
    ``None`` past :data:`MAX_WATCHED` entries."""
    out: dict[str, tuple[int, int, int]] = {}
    skip_real = {os.path.realpath(p) for p in skip}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if os.path.realpath(os.path.join(dirpath, d)) not in skip_real]
        for name in filenames:
            full = os.path.join(dirpath, name)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            out[os.path.relpath(full, root)] = (st.st_size, st.st_mtime_ns, st.st_ino)
            if len(out) > MAX_WATCHED:
                return None
    return out


def _proc_pids(pgid: int, marker: str) -> list[int]:
    """Live processes in process group ``pgid`` or carrying ``marker`` in their environment."""
    found: list[int] = []
    needle = f"{MARKER_ENV}={marker}".encode()
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read()
            fields = stat[stat.rindex(b")") + 2:].split()
            if fields[0] == b"Z":  # a zombie is dead already; its parent reaps it
                continue
            if int(fields[2]) == pgid:
                found.append(pid)
                continue
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.append(pid)
        except (OSError, ValueError, IndexError):
            continue
    return found


def _sweep(pgid: int, marker: str) -> int:
    """Kill every process of the run still alive; returns how many were found (several passes:
    a process may fork while it is being killed)."""
    seen: set[int] = set()
    for _ in range(20):
        pids = _proc_pids(pgid, marker)
        if not pids:
            break
        for pid in pids:
            seen.add(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.02)
    return len(seen)


class _Reader(threading.Thread):
    """Reads one pipe to its end, keeping the first :data:`KEEP_BYTES` and counting the rest."""

    def __init__(self, pipe: Any, counter: list[int], lock: threading.Lock, over: threading.Event) -> None:
        super().__init__(daemon=True)
        self.pipe, self.counter, self.lock, self.over = pipe, counter, lock, over
        self.kept = bytearray()
        self.dropped = False

    def run(self) -> None:
        while True:
            try:
                chunk = self.pipe.read1(65536) if hasattr(self.pipe, "read1") else self.pipe.read(65536)
            except (OSError, ValueError):
                break
            if not chunk:
                break
            room = KEEP_BYTES - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            if len(chunk) > max(room, 0):
                self.dropped = True
            with self.lock:
                self.counter[0] += len(chunk)
                if self.counter[0] > MAX_OUTPUT:
                    self.over.set()


def run_tests(folder: Path, spec: TestSpec, *, watch: Path | None = None, timeout: float | None = None) -> TestRun:
    """Run ``spec`` in ``folder`` (module docstring).

    Args:
        folder: the folder the command runs in (the skill folder or a scratch copy).
        spec: the manifest's tests.
        watch: the workspace, whose files (``.memtui/`` and ``folder`` aside) must not change.
        timeout: seconds (default: the manifest's, else :data:`DEFAULT_TIMEOUT`; at most
            :data:`MAX_TIMEOUT`).

    Returns:
        The :class:`TestRun`; a failing test is a result, not an error.

    Raises:
        RunRefused: the command cannot be run as named; nothing was run.
    """
    folder = Path(os.path.realpath(folder))
    program = resolve_command(folder, spec.command)
    limit = min(float(timeout or spec.timeout or DEFAULT_TIMEOUT), MAX_TIMEOUT)
    argv = [spec.command, *spec.args]
    run = TestRun(argv, str(folder))
    marker = uuid.uuid4().hex
    with scratch_folder("memtui-skill-home-") as scratch:
        return _run(folder, spec, program, argv, run, marker, scratch, watch, limit)


def _run(folder: Path, spec: TestSpec, program: str, argv: list[str], run: TestRun, marker: str, scratch: Path,
         watch: Path | None, limit: float) -> TestRun:
    """The body of :func:`run_tests`, with its scratch ``HOME`` made."""
    skip = [folder, scratch] + ([watch / ".memtui"] if watch is not None else [])
    before = _listing(watch, skip) if watch is not None else None
    run.watched = watch is None or before is not None
    own_before = _own_hash(folder)
    env = {"PATH": run_path(), "HOME": str(scratch), "TMPDIR": str(scratch), "LANG": "C.UTF-8",
           "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1", MARKER_ENV: marker}
    started = time.monotonic()
    try:
        proc = subprocess.Popen([program, *spec.args], executable=program, cwd=folder, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, close_fds=True)
    except OSError as exc:
        raise RunRefused(_start_error(spec.command, program, exc)) from exc
    pgid = proc.pid
    counter, lock, over = [0], threading.Lock(), threading.Event()
    readers = [_Reader(proc.stdout, counter, lock, over), _Reader(proc.stderr, counter, lock, over)]
    for r in readers:
        r.start()
    deadline = started + limit
    while True:
        try:
            proc.wait(timeout=0.05)
            break
        except subprocess.TimeoutExpired:
            pass
        if over.is_set():
            run.output_over = True
            break
        if time.monotonic() >= deadline:
            run.timed_out = True
            break
    if run.timed_out or run.output_over:
        _killpg(pgid)
        proc.wait()
    else:
        run.exit_code = proc.returncode
    # whatever is still running of the run is left behind: kill it, count it
    run.left_behind = _sweep(pgid, marker)
    if run.timed_out or run.output_over:
        run.left_behind = 0  # those were killed as part of the timeout or the output bound
    for r in readers:
        r.join(timeout=5)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    run.seconds = time.monotonic() - started
    run.stdout = bytes(readers[0].kept).decode("utf-8", "replace")
    run.stderr = bytes(readers[1].kept).decode("utf-8", "replace")
    run.out_bytes = counter[0]
    run.truncated = any(r.dropped for r in readers)
    if watch is not None and before is not None:
        after = _listing(watch, skip)
        if after is None:
            run.watched = False
        else:
            changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
            run.outside_writes = changed[:20]
    run.own_changes = own_before is not None and _own_hash(folder) != own_before
    return run


def _own_hash(folder: Path) -> str | None:
    try:
        return content_hash(read_content(folder).files)
    except (ValueError, OSError):
        return None


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


__all__ = ["DEFAULT_TIMEOUT", "KEEP_BYTES", "MAX_OUTPUT", "MARKER_ENV", "SAFE_PATH", "SKIP_DIRS", "RunRefused",
           "TestRun", "resolve_command", "run_path", "run_tests"]
