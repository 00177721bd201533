"""Atomic writes (DESIGN.md §4 invariant 1): a killed writer leaves the old or the new bytes."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memtui.core import atomic

REPO = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def test_write_replaces_content_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "f.md"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    atomic.write_bytes(target, b"new bytes")
    assert target.read_bytes() == b"new bytes"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert atomic.leftovers(target) == []


def test_new_file_gets_given_mode_and_text_is_not_translated(tmp_path: Path) -> None:
    target = tmp_path / "new.md"
    atomic.write_text(target, "a\r\nb\n", mode=0o640)
    assert target.read_bytes() == b"a\r\nb\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_failed_write_leaves_target_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.md"
    target.write_bytes(b"keep me")

    def boom(*_a: object, **_k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic.write_bytes(target, b"never")
    assert target.read_bytes() == b"keep me"
    assert atomic.leftovers(target) == []


def test_missing_folder_raises_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        atomic.write_bytes(tmp_path / "nope" / "f.md", b"x")
    assert not (tmp_path / "nope").exists()


# A child that wraps the system calls write_bytes makes and SIGKILLs itself at call N.
_STEP_CHILD = textwrap.dedent("""
    import os, signal, sys, tempfile
    from memtui.core import atomic
    target, step, payload = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
    count = [0]
    def wrap(owner, name):
        orig = getattr(owner, name)
        def wrapped(*a, **k):
            count[0] += 1
            if count[0] == step:
                os.kill(os.getpid(), signal.SIGKILL)
            result = orig(*a, **k)
            return result
        setattr(owner, name, wrapped)
    for name in ("fdopen", "fsync", "chmod", "replace", "open", "close", "stat"):
        wrap(os, name)
    wrap(tempfile, "mkstemp")
    atomic.write_bytes(target, payload)
    count[0] += 1
    if count[0] == step:
        os.kill(os.getpid(), signal.SIGKILL)
    print(count[0])
""")


def test_sigkill_at_every_step_leaves_old_or_new(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    old, new = b"old content\n" * 50, "new content \u2713\n" * 80
    target.write_bytes(old)
    total = subprocess.run([sys.executable, "-c", _STEP_CHILD, str(target), "0", new],
                           env=_env(), capture_output=True, text=True, check=True)
    steps = int(total.stdout.strip())
    assert steps >= 6, "the child should see every step of the write"
    assert target.read_bytes() == new.encode()
    seen = set()
    for step in range(1, steps + 1):
        target.write_bytes(old)
        atomic.remove_leftovers(target)
        proc = subprocess.run([sys.executable, "-c", _STEP_CHILD, str(target), str(step), new],
                              env=_env(), capture_output=True)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        data = target.read_bytes()
        assert data in (old, new.encode()), f"killed at step {step}: {len(data)} bytes, a mixture"
        seen.add(data == old)
    assert seen == {True, False}, "kills before the rename keep the old, after it the new"


_LOOP_CHILD = textwrap.dedent("""
    import sys
    from memtui.core import atomic
    target = sys.argv[1]
    a, b = b"A" * 1_500_000, b"B" * 3_000_000
    print("ready", flush=True)
    for i in range(5000):
        atomic.write_bytes(target, a if i % 2 else b)
""")


def test_sigkill_at_random_moments_never_truncates(tmp_path: Path) -> None:
    target = tmp_path / "big.bin"
    a, b = b"A" * 1_500_000, b"B" * 3_000_000
    target.write_bytes(a)
    rng = random.Random(3)
    results = []
    for _ in range(12):
        proc = subprocess.Popen([sys.executable, "-c", _LOOP_CHILD, str(target)], env=_env(),
                                stdout=subprocess.PIPE)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
            time.sleep(rng.uniform(0.0, 0.12))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        data = target.read_bytes()
        assert data in (a, b), f"a killed writer left {len(data)} bytes"
        results.append(data == a)
    # leftovers of the interrupted writes are found and can be removed by the lock holder
    removed = atomic.remove_leftovers(target)
    assert atomic.leftovers(target) == []
    assert all(p.name.startswith(".big.bin.") for p in removed)
    assert target.read_bytes() in (a, b)


def test_leftovers_only_lists_this_targets_temp_files(tmp_path: Path) -> None:
    (tmp_path / ".store.json.abc.tmp").write_bytes(b"x")
    (tmp_path / ".other.json.abc.tmp").write_bytes(b"x")
    (tmp_path / "store.json").write_bytes(b"{}")
    assert [p.name for p in atomic.leftovers(tmp_path / "store.json")] == [".store.json.abc.tmp"]
    atomic.remove_leftovers(tmp_path / "store.json")
    assert (tmp_path / ".other.json.abc.tmp").exists()
    assert (tmp_path / "store.json").read_bytes() == b"{}"


def test_sha256_is_hex_of_bytes() -> None:
    import hashlib

    assert atomic.sha256(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert atomic.sha256(b"abc") != atomic.sha256(b"abd")
