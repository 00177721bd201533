"""The store: atomic TinyDB storage, damaged files, JSON-unsafe values, audit log."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memtui.core import frontmatter
from memtui.core.auditlog import AuditLog, ClientIdConflict
from memtui.core.errors import MemtuiError, ReadOnlyError
from memtui.core.session import Session
from memtui.core.store import Store, StoreDamagedError, parse, set_aside
from tests.conftest import batch

REPO = Path(__file__).resolve().parent.parent


def _ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / ".memtui").mkdir()
    return root


def test_round_trip_and_nothing_written_by_opening(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    store = Store.open(root)
    assert not (root / ".memtui" / "store.json").exists(), "opening writes nothing"
    with batch(store):
        store.table("versions").insert({"article": "a.md", "n": 1})
    again = Store.open(root)
    assert again.table("versions").all() == [{"article": "a.md", "n": 1}]
    json.loads((root / ".memtui" / "store.json").read_bytes())


def test_front_matter_dates_are_saved_as_text(shared: Path, tmp_path: Path) -> None:
    """Dates, times and odd scalars from real SKILL.md front matter never break a save."""
    root = _ws(tmp_path)
    store = Store.open(root)
    skills = sorted((shared / "bug-inputs" / "B03" / "skills").glob("*/SKILL.md"))
    assert len(skills) == 4
    plain = [p for p in skills if p.parent.name == "plain-skill"][0]
    ordered = [plain] + [p for p in skills if p != plain]
    for path in ordered:
        meta = frontmatter.split(path.read_text(encoding="utf-8")).meta
        with batch(store):
            store.table("skills").insert({"folder": path.parent.name, "meta": meta})
    reopened = Store.open(root).table("skills").all()
    assert [d["folder"] for d in reopened] == [p.parent.name for p in ordered]
    dated = next(d for d in reopened if d["folder"] == "dated-skill")["meta"]
    raw = (shared / "bug-inputs" / "B03" / "skills" / "dated-skill" / "SKILL.md").read_text()
    created = dated["created"]
    assert isinstance(created, str) and created in raw, "the date is kept as the text written"


@pytest.mark.parametrize("name", ["store-truncated.json", "store-nul.json", "store-trailing.json"])
def test_damaged_store_opens_read_only_and_is_never_written(shared: Path, tmp_path: Path, name: str) -> None:
    """Say where it breaks, keep the bytes, refuse every write."""
    root = _ws(tmp_path)
    source = shared / "bug-inputs" / "B01" / name
    target = root / ".memtui" / "store.json"
    shutil.copyfile(source, target)
    original = target.read_bytes()
    store = Store.open(root)
    assert store.damaged and store.read_only
    assert [f.code for f in store.findings] == ["store-damaged"]
    finding = store.findings[0]
    assert "byte" in finding.message or "NUL" in finding.message
    assert str(target) in store.reason
    assert store.table("entities").all() == []
    with pytest.raises(ReadOnlyError) as exc:
        store.table("entities").insert({"name": "x"})
    assert "damaged" in str(exc.value)
    with pytest.raises(ReadOnlyError):
        store.begin()
    session = Session.open(root)
    assert session.read_only and "damaged" in (session.reason or "")
    with pytest.raises(ReadOnlyError):
        session.write("notes.set", "memory/MEMORY_CUSTOM.md",
                      lambda tx: tx.replace("memory/MEMORY_CUSTOM.md", b"x", base=None))
    assert not (root / "memory" / "MEMORY_CUSTOM.md").exists()
    assert target.read_bytes() == original, "the damaged file is kept byte for byte"


def test_damage_places_are_precise(shared: Path) -> None:
    bug = shared / "bug-inputs" / "B01"
    with pytest.raises(StoreDamagedError) as trunc:
        parse((bug / "store-truncated.json").read_bytes(), Path("store.json"))
    assert "cut short" in trunc.value.detail and "line 1" in trunc.value.detail
    with pytest.raises(StoreDamagedError) as trail:
        parse((bug / "store-trailing.json").read_bytes(), Path("store.json"))
    text = (bug / "store-trailing.json").read_text(encoding="utf-8")
    _doc, end = json.JSONDecoder().raw_decode(text)
    assert "Extra data" in trail.value.detail
    assert f"(byte {len(text[:end].encode())})" in trail.value.detail, "the place where the leftover starts"
    with pytest.raises(StoreDamagedError) as nul:
        parse((bug / "store-nul.json").read_bytes(), Path("store.json"))
    assert "NUL" in nul.value.detail
    for bad, words in ((b"[]", "list"), (b'{"t": [1]}', "'t'"), (b"", "empty")):
        with pytest.raises(StoreDamagedError) as other:
            parse(bad, Path("s"))
        assert words in other.value.detail


def test_a_good_store_beside_damaged_ones_reads(shared: Path, tmp_path: Path) -> None:
    root = _ws(tmp_path)
    shutil.copyfile(shared / "bug-inputs" / "B01" / "store-good.json", root / ".memtui" / "store.json")
    store = Store.open(root)
    assert not store.damaged and not store.read_only
    assert {"entities", "skills"} <= store.tables()
    assert len(store.table("entities")) == 3


def test_set_aside_keeps_the_damaged_bytes(shared: Path, tmp_path: Path) -> None:
    root = _ws(tmp_path)
    target = root / ".memtui" / "store.json"
    shutil.copyfile(shared / "bug-inputs" / "B01" / "store-truncated.json", target)
    original = target.read_bytes()
    moved = set_aside(root)
    assert moved.read_bytes() == original and not target.exists()
    fresh = Store.open(root)
    assert not fresh.damaged and fresh.table("audit").all() == []


def test_read_only_store_refuses_with_the_reason(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    store = Store.open(root, read_only=True, reason="held by process 42")
    with pytest.raises(ReadOnlyError, match="held by process 42"):
        store.begin()
    assert not (root / ".memtui" / "store.json").exists()


def test_a_reader_sees_another_writers_change_without_reopening(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    writer = Store.open(root)
    reader = Store.open(root, read_only=True)
    with batch(writer):
        writer.table("uses").insert({"case": 1})
    assert len(reader.table("uses").all()) == 1
    with batch(writer):
        writer.table("uses").insert({"case": 2})
    assert [d["case"] for d in reader.table("uses").all()] == [1, 2]


def test_a_write_outside_a_guarded_write_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    """Invariant 2: only Session.write changes the store (TinyDB never writes back a copy)."""
    root = _ws(tmp_path)
    store = Store.open(root)
    with pytest.raises(MemtuiError, match="only inside a guarded write"):
        store.table("uses").insert({"case": 1})
    assert not (root / ".memtui" / "store.json").exists()


def test_a_batch_never_writes_back_a_stale_copy(tmp_path: Path) -> None:
    """Two stores of one file (two processes): each batch starts from the file as it is now,
    so neither overwrites the other's record (TinyDB's cached next id once did)."""
    root = _ws(tmp_path)
    first, second = Store.open(root), Store.open(root)
    with batch(first):
        first.table("uses").insert({"by": "first"})
    with batch(second):
        second.table("uses").insert({"by": "second"})
    with batch(first):
        first.table("uses").insert({"by": "first again"})
    assert [d["by"] for d in Store.open(root).table("uses").all()] == ["first", "second", "first again"]


def test_audit_is_append_only(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    store = Store.open(root)
    log = AuditLog(store, "alice")
    with batch(store):
        log.append("notes.set", "memory/MEMORY_CUSTOM.md", None, "h1")
    with batch(store):
        log.append("notes.set", "memory/MEMORY_CUSTOM.md", "h1", "h2")
    before = (root / ".memtui" / "store.json").read_bytes()
    with pytest.raises(MemtuiError, match="append-only"), batch(store):
        store.table("audit").update({"after": "forged"})
    with pytest.raises(MemtuiError, match="append-only"), batch(store):
        store.table("audit").remove(doc_ids=[1])
    assert (root / ".memtui" / "store.json").read_bytes() == before
    entries = log.entries()
    assert [e.after for e in entries] == ["h2", "h1"], "newest first"
    assert all(e.profile == "alice" and len(e.client_id) == 32 for e in entries)
    assert log.entries(limit=1)[0].after == "h2"


def test_audit_client_id_retry_and_reuse(tmp_path: Path) -> None:
    """Seed 004: a retry is not done or recorded twice; a reused id with another request is a
    conflict and the first entry stays."""
    root = _ws(tmp_path)
    session = Session.open(root)
    calls = []

    def add(text: bytes):
        def change(tx):
            calls.append(text)
            tx.replace("memory/n.md", text, base=tx.sha("memory/n.md"))
        return change

    first = session.write("notes.set", "memory/n.md", add(b"one"), client_id="req-1", request={"t": "one"})
    retry = session.write("notes.set", "memory/n.md", add(b"one"), client_id="req-1", request={"t": "one"})
    assert first.written and retry.retried and retry.entry == first.entry
    assert calls == [b"one"], "a retry is not applied again"
    with pytest.raises(ClientIdConflict) as exc:
        session.write("notes.set", "memory/n.md", add(b"two"), client_id="req-1", request={"t": "two"})
    assert exc.value.existing == first.entry
    assert (root / "memory" / "n.md").read_bytes() == b"one"
    assert len(session.audit.entries()) == 1, "the first entry stays, nothing was added"


_STORE_CHILD = textwrap.dedent("""
    import sys
    from memtui.core.store import Store
    store = Store.open(sys.argv[1])
    print("ready", flush=True)
    for i in range(1, 100000):
        store.begin()
        store.table("uses").insert({"n": i, "pad": "x" * 200})
        store.commit()
""")


def test_sigkill_during_store_writes_leaves_a_complete_store(tmp_path: Path) -> None:
    """A store killed mid-save is the complete old or new version."""
    root = _ws(tmp_path)
    rng = random.Random(7)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    previous = 0
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, "-c", _STORE_CHILD, str(root)], env=env,
                                stdout=subprocess.PIPE)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
            time.sleep(rng.uniform(0.05, 0.25))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        tables = parse((root / ".memtui" / "store.json").read_bytes(), Path("store.json"))
        numbers = [d["n"] for d in tables["uses"].values()]
        assert len(numbers) >= previous, "no earlier record was lost"
        previous = len(numbers)
    assert previous > 0
