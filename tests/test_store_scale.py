"""The store at scale: a page of a long list parses the store once, a parse is reused only
while the file is the same, and the Proposals area shows a long queue a page at a time.

Not timed (bench/store_scale.py measures): these tests count parses and check what is shown.
The large store is built once per module, written directly in one guarded write.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from memtui.core import governance as gov
from memtui.core import store as store_mod
from memtui.core.errors import MemtuiError
from memtui.core.session import Session
from memtui.core.store import Parsed, Store
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.screens.proposals import PAGE, ProposalsScreen
from tests.conftest import REPO, SAMPLE, open_area, run_cli, seed, wait_for

BULK = 2_000
TEMPLATE = "support/experience/exp-014-tracking-mixup.md@1"


def _bulk_workspace(target: Path, count: int, one_article: bool = False) -> Path:
    """A copy of the sample workspace with ``count`` more proposals (each a copy of a real
    proposal record on its own article, or all on one article with ``one_article``) and one
    passing use on every tenth of them."""
    shutil.copytree(SAMPLE, target, symlinks=True)
    with Session.open(target, purpose="test bulk") as session:
        template = gov.Ledger(session.store).get(TEMPLATE).to_json()
        records, uses = [], []
        for i in range(count):
            article = "support/experience/bulk.md" if one_article else f"support/experience/bulk-{i:05d}.md"
            number = i + 1 if one_article else 1
            content = template["content"] + f"\nBulk proposal {i}.\n"
            records.append({**template, "id": f"{article}@{number}", "article": article, "number": number,
                            "content": content,
                            "sha256": f"{i:064x}", "created": f"2026-11-30T02:{i // 60 % 60:02d}:{i % 60:02d}+00:00"})
            if i % 10 == 0:
                uses.append({"version": f"{article}@{number}", "hash": f"{i:064x}", "case": f"CASE-B{i}",
                             "source_request": f"SR-B{i}", "origin": "independent", "origin_of": None,
                             "check": "reproduced", "verdict": "pass", "time": template["created"],
                             "by": "support.curator"})

        def fill(tx) -> None:  # noqa: ANN001 - Tx
            tx.table(gov.T_VERSIONS).insert_multiple(records)
            tx.table(gov.T_USES).insert_multiple(uses)
            tx.hashes(None, "0" * 64)
        seed(session, fill)
    return target


@pytest.fixture(scope="module")
def bulk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with 2,003 open proposals (built once; tests copy it before writing)."""
    return _bulk_workspace(tmp_path_factory.mktemp("bulk") / "ws", BULK)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every parse of a store file from now on (the path of each)."""
    seen: list[Path] = []
    original = store_mod.parse

    def counting(data: bytes, path: Path):  # noqa: ANN202
        seen.append(path)
        return original(data, path)

    monkeypatch.setattr(store_mod, "parse", counting)
    return seen


def test_a_page_of_proposals_with_eligibility_parses_the_store_once(bulk: Path, parses: list[Path],
                                                                   capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run_cli(capsys, "proposals", "list", "-w", str(bulk), "--json", "--limit", "100",
                           "--cursor", "1000")
    assert code == 0
    page = json.loads(out)
    assert (page["count"], page["total"], page["cursor"]) == (100, BULK + 3, "1100")
    assert all("eligibility" in p for p in page["proposals"])
    assert len(parses) <= 1, f"a page of 100 proposals parsed the store {len(parses)} times"


def test_versions_and_log_pages_parse_the_store_once(bulk: Path, parses: list[Path],
                                                    capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run_cli(capsys, "versions", "support/experience/bulk-00042.md", "-w", str(bulk), "--json")
    assert code == 0 and json.loads(out)["versions"][0]["id"] == "support/experience/bulk-00042.md@1"
    assert len(parses) <= 1
    parses.clear()
    code, out, _ = run_cli(capsys, "log", "-w", str(bulk), "--json", "--limit", "5")
    assert code == 0 and json.loads(out)["count"] == 5
    assert len(parses) <= 1


def test_eligibility_of_every_proposal_reads_the_store_once(bulk: Path, parses: list[Path]) -> None:
    store = Store.open(bulk, read_only=True)
    ledger = gov.Ledger(store)
    queue = ledger.proposals()
    verdicts = {v.id: gov.eligibility(ledger, v) for v in queue}
    assert len(verdicts) == BULK + 3
    one_use = [i for i, e in verdicts.items() if "bulk-" in i and any("(1 of 2)" in r for r in e.reasons)]
    assert len(one_use) == BULK // 10
    assert len(parses) <= 1


def test_a_write_by_another_process_is_seen_at_once(bulk: Path, tmp_path: Path, parses: list[Path]) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(bulk, ws, symlinks=True)
    store = Store.open(ws, read_only=True)
    ledger = gov.Ledger(store)
    before = len(ledger.proposals())
    assert len(ledger.proposals()) == before and len(parses) == 1, "an unchanged file is parsed once"
    article = ws / "new.md"
    article.write_text("# A new finding\n\nThe depot scanner drops the first scan.\n", "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "memtui", "propose", "-w", str(ws), "--node", "support/experience",
         "--article", "exp-900.md", "--from", str(article), "--case", "C-9", "--source-request", "SR-9",
         "--profile", "support.investigator"],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "MEMTUI_PROFILE": "support.curator"})
    assert done.returncode == 0, done.stderr
    queue = ledger.proposals()
    assert len(queue) == before + 1 and queue[-1].id == "support/experience/exp-900.md@1"
    assert ledger.get("support/experience/exp-900.md@1").state == "proposed"
    assert len(parses) == 2


def test_a_racy_parse_is_reused_only_when_the_bytes_are_the_same(tmp_path: Path, parses: list[Path]) -> None:
    # A file changed within the timestamp tick of the read: same identity, other bytes (a
    # rewrite in place, or a reused inode). Only the bytes can tell; they are compared.
    path = tmp_path / "store.json"
    path.write_bytes(b'{"t": {"1": {"v": "new"}}}')
    identity = store_mod._identity(os.stat(path))
    stale = Parsed(identity, {"t": {"1": {"v": "old"}}}, b'{"t": {"1": {"v": "old"}}}')
    assert store_mod.current(path, stale).tables == {"t": {"1": {"v": "new"}}}
    assert len(parses) == 1
    same = store_mod.current(path, Parsed(identity, {"kept": {}}, path.read_bytes()))
    assert same.tables == {"kept": {}} and len(parses) == 1, "the same bytes: the parse is reused"
    trusted = Parsed(identity, {"kept": {}})  # read long after its last change: identity suffices
    assert store_mod.current(path, trusted) is trusted and len(parses) == 1


def test_a_refused_write_outside_a_guarded_write_leaves_no_trace_in_reads(bulk: Path, tmp_path: Path) -> None:
    # TinyDB changes the tables it read before it asks the storage to write: a refused write
    # must not leave that change in the parse later reads reuse.
    ws = tmp_path / "ws"
    shutil.copytree(bulk, ws, symlinks=True)
    store = Store.open(ws)
    ledger = gov.Ledger(store)
    before = len(ledger.proposals())
    doc_id = ledger.get(TEMPLATE).doc_id
    with pytest.raises(MemtuiError, match="only inside a guarded write"):
        store.table(gov.T_VERSIONS).update({"state": "rejected"}, doc_ids=[doc_id])
    with pytest.raises(MemtuiError, match="only inside a guarded write"):
        store.table(gov.T_VERSIONS).insert({"id": "x.md@1", "article": "x.md", "state": "proposed"})
    assert len(ledger.proposals()) == before
    assert ledger.get(TEMPLATE).state == "proposed"
    assert store.table(gov.T_VERSIONS).get(doc_id=doc_id)["state"] == "proposed"
    assert not ledger.versions("x.md")


def test_stores_of_one_process_share_one_parse_of_an_unchanged_file(bulk: Path, tmp_path: Path,
                                                                    parses: list[Path]) -> None:
    # the TUI's session, its audit and its areas each open the store: one parse between them
    ws = tmp_path / "ws"
    shutil.copytree(bulk, ws, symlinks=True)
    stores = [Store.open(ws, read_only=True) for _ in range(3)]
    assert [len(gov.Ledger(s).proposals()) for s in stores] == [BULK + 3] * 3
    assert len(parses) == 1


def test_reads_within_a_reading_block_look_at_the_file_once(bulk: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(bulk, ws, symlinks=True)
    store = Store.open(ws, read_only=True)
    ledger = gov.Ledger(store)
    looks: list[Path] = []
    original = store_mod.current
    monkeypatch.setattr(store_mod, "current", lambda path, known=None: looks.append(path) or original(path, known))
    with store.reading():
        v = ledger.get(TEMPLATE)
        gov.eligibility(ledger, v)
        ledger.versions(v.article), ledger.uses(v.id), ledger.assignments(v.id)
    assert len(looks) == 1
    ledger.get(TEMPLATE), ledger.uses(TEMPLATE)
    assert len(looks) == 3, "outside the block every read looks at the file"


def test_the_guarded_write_reads_the_file_afresh(bulk: Path, tmp_path: Path, parses: list[Path]) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(bulk, ws, symlinks=True)
    with Session.open(ws, purpose="test") as session:
        assert len(gov.Ledger(session.store).proposals()) == BULK + 3
        parses.clear()
        seed(session, lambda tx: tx.table("notes").insert({"n": 1}))
        assert len(parses) == 1, "the write read the store under the lock"
        assert session.store.table("notes").all() == [{"n": 1}]


async def test_the_queue_shows_a_page_at_a_time(tmp_path: Path) -> None:
    ws = _bulk_workspace(tmp_path / "ws", 450)
    total = 450 + 3
    app = MemtuiApp(Workspace.open(ws))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await open_area(pilot, "7")
        assert isinstance(screen, ProposalsScreen)
        queue = screen.query_one("#prop-queue", DataTable)
        count = screen.query_one("#prop-count", Static)
        await wait_for(pilot, lambda: screen.current is not None)
        every = gov.Ledger(Store.open(ws, read_only=True)).proposals()
        assert queue.row_count == PAGE == 200
        assert str(count.render()) == f"1–200 of {total} open proposals ([ ] pages) · s: all states"
        assert screen.current.id == every[0].id
        queue.focus()
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: "201–400" in str(count.render()), what="the second page")
        assert queue.row_count == 200 and [v.id for v in screen._rows] == [v.id for v in every[200:400]]
        assert screen.current.id == every[200].id
        await pilot.press("down")
        await wait_for(pilot, lambda: screen.current.id == every[201].id, what="the next row shown")
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: f"401–{total} of {total}" in str(count.render()), what="the last page")
        assert queue.row_count == total - 400
        await pilot.press("right_square_bracket")  # no page after the last: nothing changes
        await pilot.pause()
        assert f"401–{total} of {total}" in str(count.render())
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: "201–400" in str(count.render()), what="back to the second page")
        screen.load(select=every[-1].id)  # a proposal on another page: its page is shown, it is selected
        await wait_for(pilot, lambda: screen.current.id == every[-1].id, what="the selected proposal")
        assert f"401–{total}" in str(count.render())
        assert queue.cursor_row == total - 401


async def test_a_long_history_lists_its_newest_versions_and_says_how_many_more(tmp_path: Path) -> None:
    ws = _bulk_workspace(tmp_path / "ws", 205, one_article=True)
    app = MemtuiApp(Workspace.open(ws))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await open_area(pilot, "7")
        await wait_for(pilot, lambda: screen.current is not None)
        screen.load(select="support/experience/bulk.md@205")
        await wait_for(pilot, lambda: screen.current.id == "support/experience/bulk.md@205")
        history = screen.query_one("#prop-history", DataTable)
        assert history.row_count == 200 and [h.number for h in screen._history] == list(range(6, 206))
        shown = screen.history_diff_text()
        assert "5 older versions: memtui versions support/experience/bulk.md" in shown
        assert "+Bulk proposal 204." in shown and "-Bulk proposal 203." in shown
