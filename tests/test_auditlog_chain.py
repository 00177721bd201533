"""The tamper-evident audit log: a hash chain over its entries, checked by `log --verify` and
by the audit; each entry records the OS user and host beside the claimed profile."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memtui.core import audit as core_audit
from memtui.core.auditlog import AuditLog, entry_hash, verify
from memtui.core.session import Session
from memtui.core.store import Store
from tests.conftest import run_cli, seed


def _write(ws: Path, n: int, profile: str = "support.curator") -> None:
    session = Session.open(ws, profile=profile)
    try:
        for i in range(n):
            seed(session, lambda tx, i=i: tx.table("t").insert({"i": i}), action="test.seed", target=f"t/{i}")
    finally:
        session.close()


def _store(ws: Path) -> tuple[Path, dict]:
    path = ws / ".memtui" / "store.json"
    return path, json.loads(path.read_text(encoding="utf-8"))


def _save(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def _seq_of(data: dict) -> dict[int, str]:
    """``seq`` → record key of the chained entries."""
    return {rec["seq"]: key for key, rec in data["audit"].items() if "seq" in rec}


def _verify_cli(capsys, ws: Path) -> tuple[int, str]:
    code, out, err = run_cli(capsys, "log", "-w", str(ws), "--verify")
    return code, out + err


def _audit_codes(ws: Path) -> list[str]:
    from memtui.core.workspace import Workspace

    return [f.message for f in core_audit.run(Workspace.open(ws)).findings if f.code == "audit-log-broken"]


def test_entries_carry_chain_user_and_host(tmp_path: Path) -> None:
    _write(tmp_path, 3)
    store = Store.open(tmp_path, read_only=True)
    entries = AuditLog(store).entries(newest_first=False)
    assert [e.seq for e in entries] == [1, 2, 3]
    assert entries[0].chain_start and not entries[1].chain_start
    assert entries[0].prev is None
    assert entries[1].prev == entries[0].hash and entries[2].prev == entries[1].hash
    assert all(e.host == socket.gethostname() and e.os_user for e in entries)
    assert all(e.profile == "support.curator" for e in entries)
    report = verify(store)
    assert report.ok and report.start == 1 and report.head == 3 and report.legacy == 0


def test_sample_log_predates_the_chain_and_says_so(sample_copy: Path, capsys) -> None:
    code, text = _verify_cli(capsys, sample_copy)
    assert code == 0 and "predate the hash chain" in text
    _write(sample_copy, 2)
    code, text = _verify_cli(capsys, sample_copy)
    _, data = _store(sample_copy)
    legacy = sum(1 for r in data["audit"].values() if "hash" not in r)
    assert code == 0, text
    assert f"{legacy} older entries predate the hash chain" in text
    assert f"the chain starts at entry {legacy + 1}" in text
    # the first chained entry links to the last older one: replacing that older entry is seen
    path, data = _store(sample_copy)
    last_legacy = max((k for k, r in data["audit"].items() if "hash" not in r), key=int)
    data["audit"][last_legacy]["target"] = "somewhere/else.md"
    _save(path, data)
    code, text = _verify_cli(capsys, sample_copy)
    assert code == 1 and "the last entry before the chain is not the one entry" in text


def test_deleted_entry_is_named_by_verify_and_audit(tmp_path: Path, capsys) -> None:
    _write(tmp_path, 5)
    path, data = _store(tmp_path)
    del data["audit"][_seq_of(data)[3]]
    _save(path, data)
    code, text = _verify_cli(capsys, tmp_path)
    assert code == 1
    assert "entry 3 is missing" in text
    assert _audit_codes(tmp_path) == ["entry 3 is missing from the audit log (removed between entry 2 and entry 4)"]
    code, out, _ = run_cli(capsys, "log", "-w", str(tmp_path), "--verify", "--json")
    broken = json.loads(out)["verify"]["broken"]
    assert (code, broken["kind"], broken["seq"], broken["last"]) == (1, "missing", 3, 3)
    # memtui keeps writing, and the break stays on record
    _write(tmp_path, 1)
    assert "entry 3 is missing" in _verify_cli(capsys, tmp_path)[1]


def test_edited_entry_is_named(tmp_path: Path, capsys) -> None:
    _write(tmp_path, 4)
    path, data = _store(tmp_path)
    data["audit"][_seq_of(data)[2]]["profile"] = "someone.else"
    _save(path, data)
    code, text = _verify_cli(capsys, tmp_path)
    assert code == 1 and "entry 2" in text and "was changed after it was written" in text
    assert any("entry 2 " in m for m in _audit_codes(tmp_path))


def test_edited_entry_with_recomputed_hash_is_named(tmp_path: Path, capsys) -> None:
    _write(tmp_path, 4)
    path, data = _store(tmp_path)
    rec = data["audit"][_seq_of(data)[2]]
    rec["target"] = "forged"
    rec["hash"] = entry_hash(rec)
    _save(path, data)
    code, text = _verify_cli(capsys, tmp_path)
    assert code == 1 and "entry 2 is not the one entry 3 was chained to" in text


def test_truncated_end_is_named(tmp_path: Path, capsys) -> None:
    _write(tmp_path, 5)
    path, data = _store(tmp_path)
    seqs = _seq_of(data)
    del data["audit"][seqs[5]], data["audit"][seqs[4]]
    _save(path, data)
    code, text = _verify_cli(capsys, tmp_path)
    assert code == 1 and "entries 4-5 are missing" in text and "its end was cut" in text
    # a write after the cut does not hide it: the new entry continues the head's numbering
    _write(tmp_path, 1)
    code, text = _verify_cli(capsys, tmp_path)
    assert code == 1 and "entries 4-5 are missing" in text


def test_removed_head_record_is_named(tmp_path: Path, capsys) -> None:
    _write(tmp_path, 2)
    path, data = _store(tmp_path)
    data["audit_head"] = {}
    _save(path, data)
    code, text = _verify_cli(capsys, tmp_path)
    assert code == 1 and "head was removed" in text
    _write(tmp_path, 1)
    code, text = _verify_cli(capsys, tmp_path)
    assert code == 1 and "the chain starts again at entry 3" in text


def test_damaged_store_verify_fails_without_a_traceback(tmp_path: Path, capsys) -> None:
    _write(tmp_path, 1)
    path = tmp_path / ".memtui" / "store.json"
    path.write_bytes(path.read_bytes()[:-10])
    code, text = _verify_cli(capsys, tmp_path)
    assert code == 1 and "store-damaged" in text and "Traceback" not in text


_APPENDER = textwrap.dedent("""
    import sys
    from memtui.core.session import Session
    root, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    session = Session.open(root, profile=who, wait=60)
    for i in range(n):
        session.write("test.seed", f"{who}/{i}", lambda tx: tx.table("t").insert({"who": who}))
    session.close()
""")


def test_two_writers_at_once_keep_the_chain(tmp_path: Path) -> None:
    _write(tmp_path, 1)
    procs = [subprocess.Popen([sys.executable, "-c", _APPENDER, str(tmp_path), who, "15"])
             for who in ("writer.a", "writer.b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    store = Store.open(tmp_path, read_only=True)
    report = verify(store)
    assert report.ok, report.summary()
    entries = AuditLog(store).entries(newest_first=False)
    assert [e.seq for e in entries] == list(range(1, 32))
    assert {e.profile for e in entries[1:]} == {"writer.a", "writer.b"}


@pytest.mark.parametrize("bad", ["not a log", 7])
def test_garbled_sequence_number_is_named(tmp_path: Path, capsys, bad) -> None:
    _write(tmp_path, 3)
    path, data = _store(tmp_path)
    data["audit"][_seq_of(data)[2]]["seq"] = bad
    _save(path, data)
    code, text = _verify_cli(capsys, tmp_path)
    assert code == 1 and "Traceback" not in text
