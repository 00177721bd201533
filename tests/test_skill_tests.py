"""`memtui skills test`: the manifest's test command runs with no shell, a timeout that kills its
process group, a restricted environment, stdin closed and output bounded; processes left behind
are killed; writes outside the skill folder are detected (not prevented); the result is recorded
with the content hash."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from memtui.core.session import Session
from memtui.core.skills import versions as sv
from memtui.core.skills.testrun import RunRefused

MANIFEST = {
    "inputs": [], "read_set": [], "classification": {"outcomes": ["answered"]},
    "write_packet": {"writes": []}, "verification": [{"check": "the answer names the waybill"}],
}


def make_skill(ws: Path, name: str, script: str, *, args: list[str] | None = None, extra: dict | None = None) -> Path:
    folder = ws / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Use when testing.\nmetadata:\n"
                                     "  memory-node: support/parcels-lost\n---\nbody\n")
    (folder / "check.py").write_text(script)
    manifest = {**MANIFEST, "tests": {"command": "python3", "args": args if args is not None else ["check.py"]}}
    manifest.update(extra or {})
    (folder / "skill-manifest.json").write_text(json.dumps(manifest))
    return folder


def run(ws: Path, ref: str, timeout: float | None = None):  # noqa: ANN201
    with Session.open(ws, purpose="test") as s:
        return sv.test(s, ref, timeout=timeout)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:][:1] != b"Z"


def pids_in(text: str) -> list[int]:
    return [int(w.split("=", 1)[1]) for w in text.split() if w.startswith("pid=")]


def test_a_passing_run_is_recorded_with_the_content_hash(sample_copy: Path, capsys) -> None:
    make_skill(sample_copy, "probe", "print('ok')\n")
    code, out, err = run_cli(capsys, "skills", "test", "-w", str(sample_copy), "probe")
    assert code == 0, err
    assert "ran python3 check.py" in out and "tests passed" in out
    code, out, _ = run_cli(capsys, "skills", "status", "-w", str(sample_copy), "probe", "--json")
    row = json.loads(out)["skills"][0]
    assert row["last_test"]["passed"] and row["last_test"]["sha256"] == row["sha256"]
    assert row["last_test"]["stdout"] == "ok\n"
    code, out, _ = run_cli(capsys, "log", "-w", str(sample_copy), "--json", "--limit", "1")
    assert json.loads(out)["entries"][0]["action"] == "skills.test"


def test_a_failing_run_exits_1_and_is_recorded_as_failed(sample_copy: Path, capsys) -> None:
    make_skill(sample_copy, "probe", "import sys\nprint('boom', file=sys.stderr)\nsys.exit(3)\n")
    code, out, _ = run_cli(capsys, "skills", "test", "-w", str(sample_copy), "probe")
    assert code == 1 and "tests FAILED: exit status 3" in out and "boom" in out


def test_a_hanging_test_is_killed_with_its_children_at_the_timeout(sample_copy: Path) -> None:
    make_skill(sample_copy, "hang", (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        "print(f'pid={os.getpid()} pid={child.pid}', flush=True)\n"
        "time.sleep(300)\n"))
    started = time.monotonic()
    row, result = run(sample_copy, "hang", timeout=1.5)
    assert time.monotonic() - started < 20
    assert result.timed_out and not result.passed and row["why"].startswith("killed at the timeout")
    pids = pids_in(result.stdout)
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)


def test_a_daemon_that_leaves_the_process_group_is_found_and_killed(sample_copy: Path) -> None:
    make_skill(sample_copy, "daemon", (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        print(f'pid={os.getpid()}', flush=True)\n"
        "        os.close(1); os.close(2)\n"
        "        time.sleep(300)\n"
        "    os._exit(0)\n"
        "time.sleep(0.5)\n"
        "print('main done', flush=True)\n"))
    row, result = run(sample_copy, "daemon", timeout=20)
    assert result.exit_code == 0 and not result.passed
    assert result.left_behind == 1 and "left 1 process running (killed)" in row["why"]
    [pid] = pids_in(result.stdout)
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_a_gigabyte_of_output_is_cut_off_and_bounded(sample_copy: Path) -> None:
    make_skill(sample_copy, "chatty", (
        "import sys\nblock = b'x' * (1 << 20)\n"
        "for _ in range(1024):\n    sys.stdout.buffer.write(block)\n"))
    started = time.monotonic()
    row, result = run(sample_copy, "chatty", timeout=60)
    assert time.monotonic() - started < 30
    assert result.output_over and not result.passed and "printed more than" in row["why"]
    assert len(result.stdout) <= 64 * 1024 and result.truncated
    assert 16 * 1024 * 1024 < result.out_bytes < 1024 * 1024 * 1024


def test_a_write_outside_the_skill_folder_is_detected_and_fails_the_run(sample_copy: Path) -> None:
    make_skill(sample_copy, "sneaky", (
        "with open('../../memory/MEMORY.md', 'a') as fh:\n    fh.write('planted\\n')\n"))
    row, result = run(sample_copy, "sneaky")
    assert result.exit_code == 0 and not result.passed
    assert result.outside_writes == ["memory/MEMORY.md"]
    assert row["why"] == "it wrote outside the skill folder: memory/MEMORY.md"


def test_a_change_to_its_own_files_fails_the_run(sample_copy: Path) -> None:
    make_skill(sample_copy, "selfish", "open('SKILL.md', 'a').write('more\\n')\n")
    _, result = run(sample_copy, "selfish")
    assert result.own_changes and not result.passed


def test_only_the_named_command_runs_in_a_restricted_environment(sample_copy: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMTUI_TEST_SECRET", "do-not-pass")
    # the user's PATH is passed on (a program found there may set variables of its own, as a
    # version manager's shim does): the system folders only, so what is seen is what memtui set
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    folder = make_skill(sample_copy, "exact", (
        "import json, os, sys\n"
        "print(json.dumps({'argv': sys.argv, 'env': sorted(os.environ), 'home': os.environ['HOME'],"
        " 'stdin': sys.stdin.read(), 'cwd': os.getcwd()}))\n"), args=["check.py", "one", "two words"])
    (folder / "test_other.py").write_text("open('/tmp/should-not-run', 'w')\n")
    (folder / "Makefile").write_text("all:\n\ttouch ran-make\n")
    _, result = run(sample_copy, "exact")
    seen = json.loads(result.stdout)
    assert result.passed and result.argv == ["python3", "check.py", "one", "two words"]
    assert seen["argv"] == ["check.py", "one", "two words"] and seen["stdin"] == ""
    assert "MEMTUI_TEST_SECRET" not in seen["env"] and not seen["home"].startswith(str(Path.home()))
    assert set(seen["env"]) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONDONTWRITEBYTECODE", "NO_COLOR",
                                "MEMTUI_SKILL_RUN", "LC_CTYPE", "PWD"}
    assert os.path.realpath(seen["cwd"]) == os.path.realpath(folder)
    assert not (folder / "ran-make").exists()


def test_no_tests_named_or_a_command_outside_the_folder_runs_nothing(sample_copy: Path, capsys) -> None:
    folder = make_skill(sample_copy, "untestable", "print('ran')\n")
    manifest = json.loads((folder / "skill-manifest.json").read_text())
    del manifest["tests"]
    (folder / "skill-manifest.json").write_text(json.dumps(manifest))
    code, _, err = run_cli(capsys, "skills", "test", "-w", str(sample_copy), "untestable")
    assert code == 3 and "names no tests" in err and "nothing was run" in err
    manifest["tests"] = {"command": "../../../bin/sh", "args": ["-c", "echo hi"]}
    (folder / "skill-manifest.json").write_text(json.dumps(manifest))
    code, _, err = run_cli(capsys, "skills", "test", "-w", str(sample_copy), "untestable")
    assert code == 3 and "leads outside the skill folder" in err
    with Session.open(sample_copy) as s:
        assert sv.SkillLedger(s.store).tests("untestable") == []


def test_a_skill_folder_linked_outside_the_workspace_is_refused(sample_copy: Path, tmp_path: Path, capsys) -> None:
    outside = make_skill(tmp_path / "elsewhere", "linked", "print('ran')\n")
    os.symlink(outside, sample_copy / "skills/linked")
    code, _, err = run_cli(capsys, "skills", "test", "-w", str(sample_copy), "linked")
    assert code == 3 and "outside the workspace" in err


def test_refusal_is_a_refused_error() -> None:
    from memtui.core.errors import RefusedError

    assert issubclass(RunRefused, RefusedError) and sys.platform.startswith("linux")


@pytest.fixture(autouse=True)
def _no_leftover_processes(monkeypatch):  # noqa: ANN001, ANN202
    """No process of a run this test started is alive after it. Runs are told apart by their
    marker (the run's id): other test workers run skills' tests at the same time, and their
    processes are theirs to end."""
    import uuid

    from memtui.core.skills import testrun

    markers: list[str] = []
    real = uuid.uuid4

    def recorded() -> uuid.UUID:
        value = real()
        markers.append(value.hex)
        return value

    monkeypatch.setattr(testrun.uuid, "uuid4", recorded)
    yield
    needles = [f"{testrun.MARKER_ENV}={m}".encode() for m in markers]
    marked = []
    for p in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{p}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:
            continue
        if any(n in environ for n in needles):
            marked.append(p)
    assert [p for p in marked if alive(int(p))] == []


def test_the_administrators_skill_can_be_tested_where_it_is(sample_copy: Path) -> None:
    folder = make_skill(sample_copy, "probe", "print('shared ok')\n")
    shared = sample_copy / "shared-skills" / "probe"
    folder.rename(shared)
    row, result = run(sample_copy, "probe")
    assert result.passed and result.stdout == "shared ok\n"
    assert os.path.realpath(result.cwd) == os.path.realpath(shared)
