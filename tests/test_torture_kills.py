"""SIGKILL over every write (torture tests): a real ``memtui`` command is killed at a
random moment of its run, many times, and after each kill

- every workspace file holds its old bytes or the bytes the command writes when it runs to
  the end (an oracle run of the same command on the same workspace), never a mixture;
- the store is readable (never damaged);
- after the next open and the same command run again, approvals are whole (the article,
  its index line and the active version agree) and the audit has no governance-pending
  finding; after the next guarded write of the files concerned no temporary file is left;
- no process the killed command started is left alive (index workers included);
- the git repository of a killed backup takes the next backup.

``MEMTUI_TORTURE_SCALE`` multiplies the number of kills (tests/torture.py); each round of kills
kills every command once, at random moments.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import torture
from tests.conftest import SAMPLE

NOTES = "memory/MEMORY_CUSTOM.md"
ARTICLE = "memory/support/experience/exp-900-torture.md"
PROPOSAL_TEXT = "# Torture case\n\nA case written to be approved while memtui is killed.\n"


def _files(root: Path) -> dict[str, bytes]:
    """Every file of the workspace outside ``.memtui`` (leftover temp files included)."""
    out = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".memtui") or not path.is_file() or path.is_symlink():
            continue
        out[rel] = path.read_bytes()
    return out


def _leftovers(root: Path) -> list[str]:
    from memtui.core import atomic

    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and atomic.is_leftover(p.name) and not p.relative_to(root).as_posix().startswith(
                      ".memtui/index"))


@dataclass
class Command:
    name: str
    args: list[str]
    setup: str = ""  # what the base workspace needs
    seconds: float = 1.0
    oracle: dict[str, bytes] = field(default_factory=dict)


def _base(tmp: Path) -> tuple[Path, str, Path]:
    """The base workspace: the sample with a pending proposal, a bad graph line (for repair)
    and a session history; returns (workspace, proposal id, backup repo)."""
    root = tmp / "base"
    shutil.copytree(SAMPLE, root, symlinks=True)
    graph = root / "memory" / "graph.jsonl"
    graph.write_bytes(graph.read_bytes() + b'\n{"type":"entity","name":"cut off\n')
    source = tmp / "proposal.md"
    source.write_text(PROPOSAL_TEXT)
    done = torture.memtui("propose", "-w", str(root), "--json", "--node", "support/experience", "--article",
                          "exp-900-torture.md", "--from", str(source), "--case", "T-1", "--source-request", "SR-1",
                          "--profile", "support.investigator", "--title", "Torture case", "--one-liner",
                          "approved under SIGKILL")
    assert done.returncode == 0, done.stderr
    proposal = json.loads(done.stdout)["id"]
    repo = tmp / "backup-repo"
    return root, proposal, repo


def _commands(tmp: Path, proposal: str, repo: Path) -> list[Command]:
    notes = tmp / "new-notes.md"
    notes.write_text("# Member notes\n\nwritten under SIGKILL \u2713\n" * 40)
    again = tmp / "again.md"
    again.write_text(PROPOSAL_TEXT + "\nSecond proposal.\n")
    return [
        Command("notes set", ["notes", "set", "--from", str(notes)]),
        Command("graph add-observation", ["graph", "add-observation", "--session", "tg-4411-2026-11-02",
                                          "RouteCore", "observed under SIGKILL"]),
        Command("graph merge", ["graph", "merge", "--yes", "DepotScan", "Depot Scan"]),
        Command("graph repair", ["graph", "repair", "--yes"]),
        Command("skills set", ["skills", "set", "parcel-trace", "description",
                               "Use when a parcel must be traced, even while memtui is killed"]),
        Command("propose", ["propose", "--node", "support/experience", "--article", "exp-901-again.md", "--from",
                            str(again), "--case", "T-2", "--source-request", "SR-2", "--profile",
                            "support.investigator"]),
        Command("proposals approve", ["proposals", "approve", "--yes", "--reviewed", "--as", "support.curator",
                                      proposal]),
        Command("adopt", ["adopt", "--yes"]),
        Command("index --rebuild", ["index", "--rebuild"]),
        Command("backup", ["backup", "--repo", str(repo)]),
    ]


def _run(root: Path, command: Command, kill_after: float | None) -> tuple[subprocess.Popen, int | None]:
    proc = subprocess.Popen([sys.executable, "-m", "memtui", *command.args, "-w", str(root)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=torture.env(),
                            start_new_session=True)
    if kill_after is None:
        proc.wait(timeout=300)
        return proc, None
    time.sleep(kill_after)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    return proc, proc.pid


def _check_governance(root: Path) -> list[str]:
    from memtui.core import governance as gov
    from memtui.core.session import Session
    from memtui.core.workspace import Workspace

    problems = []
    with Session.open(root, purpose="torture check") as session:  # completes a pending intent
        if session.read_only:
            problems.append(f"the workspace opened read-only: {session.reason}")
        article = root / ARTICLE
        states = gov.entry_states(session.ws, "support/experience", session.store)
        state = states.get(ARTICLE.removeprefix("memory/"))
        index = (root / "memory/support/experience/AGENTS.md").read_text()
        if state and state[0] == "active":
            if not article.is_file() or article.read_text() != PROPOSAL_TEXT:
                problems.append("the approval is active but the article does not hold its text")
            if "exp-900-torture.md" not in index:
                problems.append("the approval is active but the node index does not list it")
        elif article.exists() or "exp-900-torture.md" in index:
            problems.append(f"the article or its index line exists while the version is {state}")
    pending = [f for f in gov.audit_findings(Workspace.open(root)) if f.code == "governance-pending"]
    problems.extend(f"pending: {f.message}" for f in pending)
    return problems


@pytest.mark.slow
def test_sigkill_at_random_moments_of_every_write(tmp_path: Path) -> None:
    from memtui.core.store import Store

    root0, proposal, repo = _base(tmp_path)
    commands = _commands(tmp_path, proposal, repo)
    before = _files(root0)
    for command in commands:  # the oracle: the same command run to its end on the same workspace
        oracle = tmp_path / "oracle"
        shutil.rmtree(oracle, ignore_errors=True)
        shutil.copytree(root0, oracle, symlinks=True)
        shutil.rmtree(repo, ignore_errors=True)
        started = time.monotonic()
        proc, _ = _run(oracle, command, None)
        command.seconds = time.monotonic() - started
        err = proc.stderr.read() if proc.stderr else b""
        assert proc.returncode in (0, 1) and b"Traceback" not in err, (command.name, err)
        command.oracle = _files(oracle)
    rng = random.Random(int(os.environ.get("MEMTUI_TORTURE_SEED", "15")))
    kills = torture.scaled(20, least=10)
    failures: list[str] = []
    per_command: dict[str, int] = {}
    landed: dict[str, int] = {}  # kills that found the command still running (it did not exit first)
    order: list[Command] = []
    for n in range(kills):
        if not order:  # every command is killed once in each round of kills, in a random order
            order = rng.sample(commands, len(commands))
        command = order.pop()
        per_command[command.name] = per_command.get(command.name, 0) + 1
        root = tmp_path / "ws"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(root0, root, symlinks=True)
        shutil.rmtree(repo, ignore_errors=True)
        delay = rng.uniform(0.45, 1.05) * command.seconds
        proc, pid = _run(root, command, delay)
        if proc.returncode == -signal.SIGKILL:
            landed[command.name] = landed.get(command.name, 0) + 1
        where = f"kill {n + 1} ({command.name} at {delay:.2f} s of {command.seconds:.2f} s)"
        deadline = time.monotonic() + 5
        while torture.session_members(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        alive = torture.session_members(pid)
        if alive:
            failures.append(f"{where}: {len(alive)} processes it started are still alive")
            for orphan in alive:
                try:
                    os.kill(orphan, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        now = _files(root)
        for rel in sorted(set(now) | set(before)):
            if rel in now and torture_leftover(rel):
                continue  # litter right after a kill is allowed; the next write sweeps it (checked below)
            got = now.get(rel)
            if got != before.get(rel) and got != command.oracle.get(rel):
                failures.append(f"{where}: {rel} holds neither its old nor its new bytes "
                                f"({'absent' if got is None else len(got)} bytes)")
        store = Store.open(root, read_only=True)
        if store.damaged:
            failures.append(f"{where}: the store is damaged: {store.reason}")
        store.close()
        again, _ = _run(root, command, None)  # the same command again, to its end
        err = again.stderr.read().decode("utf-8", "replace") if again.stderr else ""
        if again.returncode not in (0, 1) or "Traceback" in err:
            failures.append(f"{where}: running it again exited {again.returncode}: {err.strip()[-300:]}")
        failures.extend(f"{where}: {p}" for p in _check_governance(root))
        _next_write(root, _leftovers(root))
        litter = _leftovers(root)
        if litter:
            failures.append(f"{where}: temporary files left after the next write: {litter}")
    torture.report("sigkill-every-write", kills=kills, landed=sum(landed.values()), commands=per_command,
                   landed_per_command=landed, failures=len(failures), what=failures[:20])
    assert not failures, "\n".join(failures[:30])


def _next_write(root: Path, litter: list[str]) -> None:
    """One guarded write that reads the files the leftovers belong to (running the command
    again may have been refused before writing: a merge already done), as the next write of
    those files in real use would."""
    from memtui.core import atomic
    from memtui.core.session import Session

    targets = sorted({f"{rel.rsplit('/', 1)[0]}/{m.group('target')}" if "/" in rel else m.group("target")
                      for rel in litter if (m := atomic.LEFTOVER_NAME.match(rel.rsplit("/", 1)[-1]))})
    if not targets:
        return
    with Session.open(root, purpose="torture next write") as session:
        session.write("torture.read", targets[0], lambda tx: [tx.read(t) for t in targets])


def torture_leftover(rel: str) -> bool:
    from memtui.core import atomic

    return atomic.is_leftover(rel.rsplit("/", 1)[-1])
