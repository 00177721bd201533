"""Restore and verify have size limits (``[backup] max_restore_file_bytes`` / ``max_restore_bytes``)
and read a backup's files one at a time: a backup over a limit is refused before anything is
written (a sentence naming the file and the limit, exit 3), and a big file costs its own size
in memory, not two or three times it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backup_helpers import isolate_git
from tests.conftest import run_cli


@pytest.fixture(autouse=True)
def _git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


def backed_up(tmp_path: Path, capsys, files: dict[str, bytes], toml: str = "") -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "AGENTS.md").write_text("# Memory\n", encoding="utf-8")
    for name, data in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_bytes(data)
    code, _out, err = run_cli(capsys, "backup", "-w", str(ws), "--repo", str(tmp_path / "repo"))
    assert code == 0, err
    (ws / "memtui.toml").write_text(toml, encoding="utf-8")
    return ws, tmp_path / "repo"


def test_a_file_over_the_restore_limit_is_refused_and_nothing_is_written(tmp_path: Path, capsys) -> None:
    ws, repo = backed_up(tmp_path, capsys, {"sessions/durable/big.jsonl": b"x" * 10_000 + b"\n"},
                         "[backup]\nmax_restore_file_bytes = 4096\n")
    target = tmp_path / "restored"
    code, out, err = run_cli(capsys, "restore", "-w", str(ws), "--repo", str(repo), "--to", str(target))
    assert code == 3, out + err
    said = out + err
    assert "sessions/durable/big.jsonl" in said and "10,001 bytes" in said and "4,096 bytes" in said
    assert "max_restore_file_bytes" in said and "memtui.toml" in said and "nothing was restored" in said
    assert not target.exists()
    code, out, err = run_cli(capsys, "verify", "-w", str(ws), "--repo", str(repo))
    assert code == 3 and "sessions/durable/big.jsonl" in out + err and "nothing was verified" in out + err


def test_a_backup_over_the_total_restore_limit_is_refused_into_an_empty_folder_left_empty(tmp_path: Path,
                                                                                         capsys) -> None:
    files = {f"memory/n{i}.md": b"y" * 3000 for i in range(5)}
    ws, repo = backed_up(tmp_path, capsys, files, "[backup]\nmax_restore_bytes = 10000\n")
    target = tmp_path / "empty"
    target.mkdir()
    code, out, err = run_cli(capsys, "restore", "-w", str(ws), "--repo", str(repo), "--to", str(target))
    assert code == 3, out + err
    assert "10,000 bytes" in out + err and "max_restore_bytes" in out + err
    assert list(target.iterdir()) == []
    (ws / "memtui.toml").write_text("", encoding="utf-8")  # the default limits: it restores
    code, out, err = run_cli(capsys, "restore", "-w", str(ws), "--repo", str(repo), "--to", str(target))
    assert code == 0, out + err
    assert (target / "memory" / "n4.md").read_bytes() == b"y" * 3000


@pytest.mark.parametrize("line", ["max_restore_file_bytes = 0", "max_restore_bytes = -1",
                                  'max_restore_bytes = "big"'])
def test_a_restore_limit_that_is_no_positive_number_is_a_finding(tmp_path: Path, line: str) -> None:
    from memtui.core.config import BackupSettings, load

    (tmp_path / "memtui.toml").write_text(f"[backup]\n{line}\n", encoding="utf-8")
    config, findings = load(tmp_path / "memtui.toml")
    assert [f.code for f in findings] == ["config-invalid"]
    assert "not a memtui setting" not in findings[0].message  # a known setting, a wrong value
    assert config.backup == BackupSettings()


PEAK = r"""
import json, sys
from memtui.core.backup.restore import restore
def peak():  # VmHWM: this process's own high-water mark (ru_maxrss keeps the parent's across fork and exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
before = peak()
result = restore(sys.argv[1], None, "memtui-backup", sys.argv[2])
print(json.dumps({"files": result.files, "grew": peak() - before}))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak from /proc/self/status (Linux)")
def test_restoring_a_big_file_costs_about_its_size_in_memory(tmp_path: Path, capsys) -> None:
    line = b'{"role":"tool","content":"%09d rows read"}\n'
    data = b"".join(line % i for i in range(32 * 1024 * 1024 // len(line % 0)))
    size = len(data)
    _ws, repo = backed_up(tmp_path, capsys, {"memory/archive/big.log": data})
    target = tmp_path / "restored"
    done = subprocess.run([sys.executable, "-c", PEAK, str(repo), str(target)], capture_output=True, text=True,
                          check=False, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert (target / "memory" / "archive" / "big.log").stat().st_size == size
    print(f"restore of a {size:,}-byte file: peak memory grew {figures['grew']:,} bytes")
    assert figures["grew"] < 1.5 * size, f"peak grew by {figures['grew'] / size:.2f}× the file's size"
