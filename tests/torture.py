"""Shared parts of the torture tests ("your own torture tests"): scale, figures,
outside processes, big inputs.

The torture tests run short in the default suite (:data:`SCALE` 0.5: every case, fewer rounds).
``MEMTUI_TORTURE_SCALE`` multiplies their run length (``10`` is the long run), and
``MEMTUI_TORTURE_REPORT=FILE`` appends each test's figures to FILE as one JSON object a line::

    MEMTUI_TORTURE_SCALE=10 MEMTUI_TORTURE_REPORT=/tmp/torture.jsonl \\
        .venv/bin/python -m pytest -q -m slow tests/test_torture_*.py
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: Run-length multiplier of the torture tests: 0.5 in the default suite (each test keeps its
#: ``least``: every command killed, at least 50 mutated inputs), ``MEMTUI_TORTURE_SCALE`` otherwise.
SCALE = float(os.environ.get("MEMTUI_TORTURE_SCALE", "") or 0.5)


def scaled(base: int, least: int = 1) -> int:
    """``base`` times :data:`SCALE`, at least ``least``."""
    return max(least, int(round(base * SCALE)))


def report(test: str, **figures: object) -> None:
    """Print the figures of a torture test and append them to ``$MEMTUI_TORTURE_REPORT``."""
    line = {"test": test, "scale": SCALE, **figures}
    print("torture:", json.dumps(line, default=str))
    target = os.environ.get("MEMTUI_TORTURE_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, default=str) + "\n")


def env() -> dict[str, str]:
    """The environment for a memtui subprocess run from the checkout."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


def memtui(*args: str, timeout: float = 120, **kw: object) -> subprocess.CompletedProcess:
    """Run ``python -m memtui ARGS`` (standard input closed), capturing its output."""
    return subprocess.run([sys.executable, "-m", "memtui", *args], stdin=subprocess.DEVNULL, capture_output=True,
                          env=env(), timeout=timeout, **kw)  # type: ignore[call-overload]


#: An agent appending one entity line every INTERVAL seconds, as `echo ... >> graph.jsonl`
#: does (open for append, write one line, close). Prints "ready" once started.
APPENDER = textwrap.dedent("""
    import json, os, sys, time
    path, count, interval, tag = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    print("ready", flush=True)
    for i in range(count):
        line = json.dumps({"type": "entity", "name": f"{tag}-{i}", "entityType": "probe",
                           "observations": []}, separators=(",", ":")) + "\\n"
        with open(path, "a", encoding="utf-8") as f:
            f.write(line)
        time.sleep(interval)
""")


def start_appender(path: Path, count: int, tag: str, interval: float = 0.01) -> subprocess.Popen:
    """Start :data:`APPENDER` on ``path`` and wait until it runs."""
    proc = subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(count), str(interval), tag],
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    return proc


def appended_names(data: bytes, tag: str) -> set[str]:
    """The names ``<tag>-<n>`` whose appended line is in ``data`` (whole or glued to another)."""
    import re

    return {m.decode() for m in re.findall(rb'"name":"(' + re.escape(tag.encode()) + rb'-\d+)"', data)}


def big_graph(path: Path, entities: int = 20_000, seed: int = 7, final_newline: bool = False) -> None:
    """Write a graph of ``entities`` entities (about 285 bytes each: 20,000 make 5.7 MB) and
    the sample's ``RouteCore`` first, in the MCP server's form (no final newline by default)."""
    rng = random.Random(seed)
    lines = ['{"type":"entity","name":"RouteCore","entityType":"system","observations":[]}']
    for i in range(entities):
        obs = [f"observation {j} of entity {i} " + "x" * rng.randint(20, 80) for j in range(rng.randint(1, 4))]
        lines.append(json.dumps({"type": "entity", "name": f"Entity {i:05d}",
                                 "entityType": rng.choice(["system", "person", "ticket"]), "observations": obs},
                                separators=(",", ":")))
    path.write_text("\n".join(lines) + ("\n" if final_newline else ""), encoding="utf-8")


def wait_until(condition, timeout: float = 30.0, what: str = "the condition") -> None:  # noqa: ANN001
    """Poll ``condition()`` every 10 ms until true; AssertionError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.01)


def session_members(sid: int) -> list[int]:
    """Live processes of the session ``sid`` (the killed command was its leader)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != b"Z" and int(fields[3]) == sid:
            found.append(int(entry))
    return found
