"""Eval sets per domain, and the dependency-scoped evaluation of every governed change
(seed 000 §7.2, §7.4b), on a copy of the triage memory with its dev cases as the
``support/experience`` eval set."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.core import evalsets
from memtui.core.governance import eval_audit
from memtui.core import governance as gov
from memtui.core.governance import gate
from memtui.core.session import Session
from tests.conftest import open_area, run_cli

EXP_020 = "support/experience/exp-020-auth-hold-double-debit.md"
SET = "support/experience/evals/cases.jsonl"
CURATOR = "support.curator"
TOML = f"""[user]
profile = "{CURATOR}"

[owners]
"support" = "{CURATOR}"
"connectors" = "connector.steward"
"""


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory, shared: Path) -> Path:
    """The triage memory, its dev cases as the support/experience eval set, every file
    adopted as a baseline and the search index built (once a module; tests copy it)."""
    root = tmp_path_factory.mktemp("gate") / "ws"
    shutil.copytree(shared / "triage" / "memory", root / "memory")
    (root / "memtui.toml").write_text(TOML)
    (root / "memory" / SET).parent.mkdir()
    shutil.copy(shared / "triage" / "dev-cases.jsonl", root / "memory" / SET)
    with Session.open(root, profile=CURATOR) as s:
        gov.adopt(s)
    from memtui.core.search.index import SearchIndex
    from memtui.core.workspace import Workspace

    SearchIndex(Workspace.open(root)).update()
    return root


@pytest.fixture
def ws(prepared: Path, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(prepared, root, symlinks=True)
    return root


def _trimmed(root: Path) -> str:
    """exp-020 without its key passage: no symptom, no aliases, only its last paragraph."""
    text = (root / "memory" / EXP_020).read_text()
    head, body = text.split("\n---\n", 1)
    head = re.sub(r"symptom:.*\n", "", head)
    head = re.sub(r"aliases:\n(  - .*\n)+", "aliases: []\n", head + "\n").rstrip("\n")
    return head + "\n---\n\n" + body.strip().split("\n\n")[-1] + "\n"


def _propose(root: Path, article: str, content: str, node: str = "support/experience") -> str:
    with Session.open(root, profile="support.summarizer") as s:
        return gov.propose(s, node, article, content, case="C-9", source_request="SR-9",
                           profile="support.summarizer").id


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def _state(root: Path, vid: str) -> str:
    with Session.open(root, read_only=True) as s:
        return gov.Ledger(s.store).get(vid).state


def test_an_approve_that_removes_the_precedents_key_passage_is_refused_case_by_case(
        ws: Path, capsys: pytest.CaptureFixture) -> None:
    before = (ws / "memory" / EXP_020).read_bytes()
    index = _digest(ws / ".memtui" / "index")
    vid = _propose(ws, Path(EXP_020).name, _trimmed(ws))
    code, out, err = run_cli(capsys, "proposals", "approve", "-w", str(ws), "--yes", "--reviewed", vid)
    assert code == 3
    assert "c005: the precedent was exp-020 at rank 1, after this change" in out
    assert re.search(r"hit@5 +\d+\.\d% → \d+\.\d% +worse", out)
    assert "--accept-regression --reason" in err and "Nothing was changed" in err
    assert "measuring support/experience before the change" in err  # progress
    assert (ws / "memory" / EXP_020).read_bytes() == before
    assert _state(ws, vid) == "proposed"
    assert _digest(ws / ".memtui" / "index") == index  # the live index was only read
    assert not any((ws / ".memtui" / "evals").iterdir())  # the scratch copy is gone


def test_the_core_approve_refuses_a_regression_too(ws: Path) -> None:
    vid = _propose(ws, Path(EXP_020).name, _trimmed(ws))
    with Session.open(ws, profile=CURATOR) as s, pytest.raises(gov.RegressionRefused) as caught:
        gov.approve(s, vid, reviewed=True)
    assert any(c.case == "c005" and c.worse for d in caught.value.evaluation.domains for c in d.changes)
    assert _state(ws, vid) == "proposed"


def test_accepted_regression_is_recorded_and_a_rollback_carries_its_evaluation(
        ws: Path, capsys: pytest.CaptureFixture) -> None:
    vid = _propose(ws, Path(EXP_020).name, _trimmed(ws))
    code, out, err = run_cli(capsys, "proposals", "approve", "-w", str(ws), "--yes", "--reviewed", vid,
                             "--accept-regression")
    assert code == 2 and "--accept-regression needs --reason" in err  # no reason given
    assert "measuring" not in err and out == ""  # said before the evaluation runs, not after it
    code, out, _ = run_cli(capsys, "proposals", "approve", "-w", str(ws), "--yes", "--reviewed", vid,
                           "--accept-regression", "--reason", "the analysis moves to a checklist")
    assert code == 0, out
    code, out, _ = run_cli(capsys, "versions", "-w", str(ws), EXP_020, "--json")
    record = json.loads(out)["versions"][-1]["provenance"]["evaluation"]
    assert record["regressed"] and record["accepted_regression"]
    assert record["reason"] == "the analysis moves to a checklist" and record["by"] == CURATOR
    domain = record["domains"][0]
    assert domain["node"] == "support/experience" and "hit@5" in domain["worse"]
    assert any(c["case"] == "c005" and c["before_rank"] == 1 and c["worse"] for c in domain["changes"])
    with Session.open(ws, read_only=True) as s:
        entry = next(e for e in s.audit.entries(newest_first=True) if e.action == "governance.activate")
    assert entry.detail["evaluation"]["accepted_regression"] is True
    code, out, _ = run_cli(capsys, "versions", "-w", str(ws), EXP_020)
    assert "eval: worse in support/experience (accepted)" in out and "c005: the precedent was exp-020" in out

    code, out, _ = run_cli(capsys, "rollback", "-w", str(ws), "--yes", EXP_020, "--to", "1")
    assert code == 0, out
    assert "c005: the precedent exp-020 was not among the first 30 answers, after this change rank 1" in out
    code, out, _ = run_cli(capsys, "versions", "-w", str(ws), EXP_020, "--json")
    rolled = json.loads(out)["versions"][-1]
    assert rolled["provenance"]["kind"] == "rollback"
    back = rolled["provenance"]["evaluation"]["domains"][0]
    assert any(c["case"] == "c005" and c["after_rank"] == 1 for c in back["changes"])
    code, out, _ = run_cli(capsys, "proposals", "show", "-w", str(ws), rolled["id"])
    assert "evaluation:" in out and "c005: the precedent exp-020" in out


def test_retire_is_measured_and_refused_when_it_takes_a_precedent(ws: Path, capsys: pytest.CaptureFixture) -> None:
    code, out, err = run_cli(capsys, "retire", "-w", str(ws), "--yes", EXP_020, "--reason", "obsolete")
    assert code == 3 and "c005: the precedent was exp-020 at rank 1" in out
    assert (ws / "memory" / EXP_020).is_file()
    code, out, _ = run_cli(capsys, "retire", "-w", str(ws), "--yes", EXP_020, "--reason", "obsolete",
                           "--accept-regression")
    assert code == 0, out
    code, out, _ = run_cli(capsys, "versions", "-w", str(ws), EXP_020, "--json")
    retired = json.loads(out)["versions"][-1]
    assert retired["retirement"]["evaluation"]["accepted_regression"] is True
    code, out, _ = run_cli(capsys, "versions", "-w", str(ws), EXP_020)
    [line] = [x for x in out.splitlines() if x.startswith(retired["id"] + " ")]
    assert f"retired by {retired['retirement']['by']}: obsolete" in line  # the reason, not only --json's
    assert line.count("eval:") == 1


def test_only_the_domains_the_change_sits_in_are_measured(ws: Path, capsys: pytest.CaptureFixture) -> None:
    # an ancestor's set runs too; a sibling's does not
    for node, case in (("support", "s1"), ("connectors", "k1")):
        (ws / "memory" / node / "evals").mkdir()
        (ws / "memory" / node / "evals" / "cases.jsonl").write_text(json.dumps(
            {"id": case, "ticket": "paid twice for one installment", "language": "en", "relevant": ["exp-020"]}) + "\n")
    vid = _propose(ws, "exp-901-note.md", "---\nid: exp-901\ntitle: A note\nsummary: a note\n---\n\nNothing.\n")
    with Session.open(ws, profile=CURATOR) as s:
        ev = gov.evaluate_change(s, "approve", version_id=vid, reviewed=True)
    assert ev is not None and [d.node for d in ev.domains] == ["support/experience", "support"]
    # a change in no domain with a set is not measured at all
    with Session.open(ws, profile="connector.steward") as s:
        assert evalsets.domains_of(s.ws, ["connectors/payment-gateway"]) == ["connectors"]
    shutil.rmtree(ws / "memory" / "connectors" / "evals")
    cid = _propose(ws, "x.md", "---\nid: art-901\ntitle: X\nsummary: x\n---\n\nx\n", node="connectors/payment-gateway")
    with Session.open(ws, profile="connector.steward") as s:
        v = gov.approve(s, cid, reviewed=True)
    assert "evaluation" not in v.provenance


def test_eval_set_is_governed_and_checked_before_it_is_approved(ws: Path, shared: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    bad = ws / "bad.jsonl"
    bad.write_text(json.dumps({"id": "z1", "ticket": "x", "language": "en", "relevant": ["exp-999"]}) + "\n")
    code, _, err = run_cli(capsys, "propose", "-w", str(ws), "--node", "support/experience", "--article",
                           "evals/cases.jsonl", "--from", str(bad), "--case", "C-1", "--source-request", "SR-1",
                           "--profile", CURATOR)
    assert code == 0, err
    code, out, err = run_cli(capsys, "proposals", "approve", "-w", str(ws), "--yes", "--reviewed", f"{SET}@2")
    assert code == 1 and "names exp-999, which no article of the memory has as its id" in err
    assert "Nothing was changed" in err
    good = ws / "good.jsonl"
    good.write_text("".join(line + "\n" for line in (shared / "triage" / "dev-cases.jsonl").read_text().splitlines()[:10]))
    index_before = (ws / "memory" / "support" / "experience" / "AGENTS.md").read_bytes()
    run_cli(capsys, "propose", "-w", str(ws), "--node", "support/experience", "--article", "evals/cases.jsonl",
            "--from", str(good), "--case", "C-2", "--source-request", "SR-2", "--profile", CURATOR)
    code, out, err = run_cli(capsys, "proposals", "approve", "-w", str(ws), "--yes", "--reviewed", f"{SET}@3")
    assert code == 0, err
    assert "(the set itself changes)" in out
    assert (ws / "memory" / SET).read_text() == good.read_text()
    assert (ws / "memory" / "support" / "experience" / "AGENTS.md").read_bytes() == index_before  # no index line


def test_audit_reports_unknown_ids_duplicates_missing_language_and_a_huge_file(ws: Path) -> None:
    from memtui.core.workspace import Workspace

    path = ws / "memory" / SET
    path.write_text(path.read_text() + "\n".join(json.dumps(c) for c in (
        {"id": "c001", "ticket": "again", "language": "en"},
        {"id": "x1", "ticket": "no language", "relevant": ["exp-001"]},
        {"id": "x2", "ticket": "unknown", "language": "en", "relevant": ["exp-777"]})) + "\nnot json\n")
    found = {(f.code, f.line) for f in eval_audit.audit_findings(Workspace.open(ws))}
    codes = {c for c, _ in found}
    assert {"eval-case-duplicate", "eval-case-no-language", "eval-case-unknown-id", "eval-set-bad-line"} <= codes
    huge = ws / "memory" / "connectors" / "evals" / "cases.jsonl"
    huge.parent.mkdir()
    with open(huge, "wb") as fh:
        fh.truncate(1024 ** 3)  # a sparse 1 GB file: refused by its size, never read
    findings = [f for f in eval_audit.audit_findings(Workspace.open(ws)) if f.path.endswith("connectors/evals/cases.jsonl")]
    assert any(f.code == "eval-set-unreadable" and "1,073,741,824 bytes, more than an eval set may" in f.message
               for f in findings)


def test_a_cycle_of_ancestors_is_a_clear_error(ws: Path) -> None:
    from memtui.core.workspace import Workspace

    os.symlink("..", ws / "memory" / "support" / "experience" / "loop")
    with pytest.raises(evalsets.EvalSetError, match="lead back"):
        evalsets.domains_of(Workspace.open(ws), ["support/experience/loop"])


def test_a_change_landing_meanwhile_makes_the_evaluation_be_measured_again(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = _propose(ws, "exp-901-a.md", "---\nid: exp-901\ntitle: A\nsummary: a\n---\n\nA.\n")
    b = _propose(ws, "exp-902-b.md", "---\nid: exp-902\ntitle: B\nsummary: b\n---\n\nB.\n")
    with Session.open(ws, profile=CURATOR) as s:
        early = gov.evaluate_change(s, "approve", version_id=a, reviewed=True)
        # (any change may move a borderline answer: the regressions are accepted here)
        gov.approve(s, b, reviewed=True, accept_regression="measured elsewhere")  # lands in between
        calls = []
        real = gate.measure
        monkeypatch.setattr(gate, "measure", lambda *a, **k: calls.append(1) or real(*a, **k))
        v = gov.approve(s, a, reviewed=True, evaluation=early, accept_regression="measured elsewhere")
    assert calls == [1]  # the stale evaluation was not recorded: measured again
    assert v.provenance["evaluation"]["domains"][0]["after"]["cases"] == 40


def test_two_approvals_at_once_are_both_recorded_with_their_evaluations(ws: Path) -> None:
    ids = [_propose(ws, f"exp-90{n}-x.md", f"---\nid: exp-90{n}\ntitle: X{n}\nsummary: x{n}\n---\n\nX {n}.\n")
           for n in (3, 4)]
    procs = [subprocess.Popen([sys.executable, "-m", "memtui", "proposals", "approve", "--yes", "--reviewed", vid,
                               "--accept-regression", "--reason", "both at once", "-w", str(ws)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for vid in ids]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    with Session.open(ws, read_only=True) as s:
        ledger = gov.Ledger(s.store)
        for vid in ids:
            v = ledger.get(vid)
            assert v.state == "active" and v.provenance["evaluation"]["domains"][0]["node"] == "support/experience"


def test_an_evaluation_killed_half_way_records_nothing_and_leaves_the_index(ws: Path) -> None:
    vid = _propose(ws, Path(EXP_020).name, _trimmed(ws))
    store = (ws / ".memtui" / "store.json").read_bytes()
    index = _digest(ws / ".memtui" / "index")
    proc = subprocess.Popen([sys.executable, "-m", "memtui", "proposals", "approve", "--yes", "--reviewed", vid,
                             "--accept-regression", "--reason", "r", "-w", str(ws)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    scratch = ws / ".memtui" / "evals"
    deadline = time.monotonic() + 120
    while not (scratch.is_dir() and any(scratch.iterdir())):  # the evaluation has begun
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert (ws / ".memtui" / "store.json").read_bytes() == store
    assert _digest(ws / ".memtui" / "index") == index
    assert _state(ws, vid) == "proposed"
    with Session.open(ws, profile=CURATOR) as s:  # the next evaluation clears the leftover and lands
        v = gov.approve(s, vid, reviewed=True, accept_regression="r")
    assert v.provenance["evaluation"]["accepted_regression"] and not any(scratch.iterdir())


async def test_the_approve_dialog_shows_the_drop_and_asks_why_a_regression_is_accepted(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.widgets import DataTable, Static

    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp
    from memtui.ui.screens.proposals import ProposalsScreen
    from memtui.ui.screens.tree import TreeScreen
    from memtui.ui.widgets import AskText, Confirm
    from tests.conftest import wait_for

    vid = _propose(ws, Path(EXP_020).name, _trimmed(ws))
    measuring: list[str | None] = []  # what the line under the queue said while measuring
    real_show = ProposalsScreen._show_measuring
    monkeypatch.setattr(ProposalsScreen, "_show_measuring",
                        lambda self, line: measuring.append(line) or real_show(self, line))
    app = MemtuiApp(Workspace.open(ws))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_area(pilot, "7")
        assert isinstance(screen, ProposalsScreen)
        await wait_for(pilot, lambda: screen.current is not None and screen.current.id == vid)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText), timeout=120)
        assert any(line and line.startswith("measuring support/experience before the change: ") for line in measuring)
        assert measuring[-1] is None  # the count is back
        shown = str(app.screen._prompt)
        assert "WORSE" in shown and "c005: the precedent was exp-020 at rank 1" in shown
        await pilot.press("escape")  # nothing changes
        await pilot.pause()
        assert _state(ws, vid) == "proposed"
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText), timeout=120)
        await pilot.press(*"kept in a checklist", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        assert "Accepted because: kept in a checklist" in str(app.screen._question)
        await pilot.press("y")
        await wait_for(pilot, lambda: _state(ws, vid) == "active", timeout=120)
        await wait_for(pilot, lambda: screen.query_one("#prop-queue", DataTable).row_count == 0, timeout=60)
        with Session.open(ws, read_only=True) as s:
            v = gov.Ledger(s.store).get(vid)
        assert v.state == "active" and v.provenance["evaluation"]["reason"] == "kept in a checklist"
        screen._show(v)
        assert "c005: the precedent was exp-020" in str(screen.query_one("#prop-prov", Static).render())
        tree = await open_area(pilot, "1")
        assert isinstance(tree, TreeScreen)
        tree._show_node("support/experience")
        await wait_for(pilot, lambda: "eval set: 40 cases" in str(tree.query_one("#node-head", Static).render()))
        assert "vs grep 22.2%: beats" in str(tree.query_one("#node-head", Static).render())


def test_eval_domains_lists_the_sets_and_records_figures_on_request(ws: Path, capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run_cli(capsys, "eval", "domains", "-w", str(ws))
    assert code == 0 and "support/experience  owner support.curator  40 cases  not measured yet" in out
    code, out, _ = run_cli(capsys, "eval", "domains", "-w", str(ws), "--run", "--json")
    row = json.loads(out)["domains"][0]
    assert code == 0 and row["node"] == "support/experience"
    assert row["last"]["figures"]["beats"] is True and row["last"]["by"] == "eval domains --run"
    with Session.open(ws, read_only=True) as s:
        assert s.audit.entries(newest_first=True)[0].action == "eval.record"


def test_a_read_only_session_is_refused_before_anything_is_measured(ws: Path) -> None:
    from memtui.core.errors import ReadOnlyError

    vid = _propose(ws, Path(EXP_020).name, _trimmed(ws))
    with Session.open(ws, read_only=True, profile=CURATOR) as s, pytest.raises(ReadOnlyError):
        gov.approve(s, vid, reviewed=True)
    assert not (ws / ".memtui" / "evals").exists()
    assert _state(ws, vid) == "proposed"


def test_the_figures_before_are_recalled_only_for_the_memory_and_index_they_were_measured_on(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vid = _propose(ws, Path(EXP_020).name, _trimmed(ws))
    runs: list[int] = []
    real = gate.run_set
    monkeypatch.setattr(gate, "run_set", lambda *a, **k: runs.append(1) or real(*a, **k))
    with Session.open(ws, profile=CURATOR) as s:
        first = gov.evaluate_change(s, "approve", version_id=vid, reviewed=True)
        assert len(runs) == 2  # before and after
        stages: list[str] = []
        again = gov.evaluate_change(s, "approve", version_id=vid, reviewed=True,
                                    progress=lambda stage, done, total: stages.append(stage))
        assert len(runs) == 3  # only after: the figures before were recalled
        assert any("recalled" in st for st in stages)
        assert again.to_json()["domains"] == first.to_json()["domains"]
        # a record that is not whole (or not JSON) is never used: measured again
        [record] = [p for p in (ws / ".memtui" / "evals-before").iterdir() if p.name != gate.IDS_FILE]
        record.write_text(record.read_text()[:100])
        gov.evaluate_change(s, "approve", version_id=vid, reviewed=True)
        assert len(runs) == 5
        # the memory changed (another article): measured again, and the same as from nothing
        other = ws / "memory" / "support" / "experience" / "exp-777-x.md"
        other.write_text("---\nid: exp-777\ntitle: double debit auth hold\nsummary: x\n---\n\nAuth hold.\n")
        changed = gov.evaluate_change(s, "approve", version_id=vid, reviewed=True)
        assert len(runs) == 7
    shutil.rmtree(ws / ".memtui" / "evals-before")
    with Session.open(ws, profile=CURATOR) as s:
        fresh = gov.evaluate_change(s, "approve", version_id=vid, reviewed=True)
    assert fresh.to_json()["domains"] == changed.to_json()["domains"]


def test_the_scratch_index_links_the_segment_files_and_never_writes_the_live_ones(ws: Path) -> None:
    from memtui.core.search.index import SearchIndex
    from memtui.core.workspace import Workspace

    live = ws / ".memtui" / "index"
    before = _digest(live)
    copy = ws / "copy"
    SearchIndex(Workspace.open(ws)).mirror_to(copy / ".memtui" / "index")
    segments = [p for p in live.iterdir() if p.name.startswith("MAIN_") and p.name != "MAIN_WRITELOCK"]
    assert segments and all((copy / ".memtui" / "index" / p.name).stat().st_ino == p.stat().st_ino for p in segments)
    assert not (copy / ".memtui" / "index" / "MAIN_WRITELOCK").exists()  # a shared lock would lock both
    manifest = copy / ".memtui" / "index" / "manifest.sqlite"
    assert manifest.stat().st_ino != (live / "manifest.sqlite").stat().st_ino
    shutil.copytree(ws / "memory", copy / "memory")
    shutil.copy(ws / "memtui.toml", copy / "memtui.toml")
    (copy / "memory" / EXP_020).write_text(_trimmed(copy))
    index = SearchIndex(Workspace.open(copy))
    report = index.update(rebuild=False)
    assert report.updated == 1
    from memtui.core.search.query import search

    assert search(index, "auth hold double debit", limit=3).hits
    assert _digest(live) == before


def test_an_evaluation_search_finds_what_a_counted_search_finds(ws: Path) -> None:
    from memtui.core.search import triage
    from memtui.core.search.index import SearchIndex
    from memtui.core.search.query import search
    from memtui.core.workspace import Workspace

    index = SearchIndex(Workspace.open(ws))
    cases = triage.load_cases(ws / "memory" / SET)
    for case in cases:
        counted = search(index, case.ticket, limit=triage.CANDIDATES, snippets=False)
        quick = search(index, case.ticket, limit=triage.CANDIDATES, snippets=False, count=False)
        assert [(h.path, h.score, h.verdict) for h in quick.hits] == [(h.path, h.score, h.verdict) for h in counted.hits]
        assert (quick.likelihood, quick.known, quick.keyed) == (counted.likelihood, counted.known, counted.keyed)


def _queries(cases: list) -> list[str]:
    """The cases' tickets (pasted: ranked on their rarest words' candidates) and typed
    queries made of their words: short and long, words with parts (``inc-42``), Cyrillic
    words (a plain term and its sound key), common words."""
    out = []
    for n, case in enumerate(cases):
        out.append(case.ticket)
        words = [w for w in re.split(r"\s+", case.ticket) if w]
        out.append(" ".join(words[n % 5: n % 5 + 3 + n % 7]))
    out += ["parcel-4417 refund", "плащане два пъти", "double debit installment card", "the and of"]
    return [q for q in out if q.strip()]


def test_the_array_ranking_of_words_gives_whooshs_hits_scores_and_order(ws: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.search import triage
    from memtui.core.search.engine import matching
    from memtui.core.search.index import SearchIndex
    from memtui.core.search.query import search
    from memtui.core.workspace import Workspace

    # several segments, the first with deleted documents (the scratch index after a change)
    for path in sorted((ws / "memory" / "support" / "experience").glob("exp-0[0-4]*.md"))[:6]:
        path.write_text(path.read_text() + "\nSeen again with a double debit on the installment card.\n")
    # a proposal is indexed and hidden from the answers
    _propose(ws, "exp-902-debit.md", "---\nid: exp-902\ntitle: Double debit on the installment card\n"
             "summary: paid twice\n---\n\nThe card shows a double debit; плащане два пъти.\n")
    index = SearchIndex(Workspace.open(ws))
    index.update()
    reader = index.searcher().reader()
    leaves = [leaf for leaf, _ in reader.leaf_readers()]
    assert len(leaves) > 1 and any(leaf.has_deletions() for leaf in leaves)
    assert matching._hidden(index.searcher())
    calls: list[int] = []
    real = matching._disjunction
    monkeypatch.setattr(matching, "_disjunction", lambda *a, **k: calls.append(1) or real(*a, **k))
    read: list[list[int] | None] = []  # a pasted ticket's candidates, read from the postings
    real_all = matching._all_matches
    monkeypatch.setattr(matching, "_all_matches", lambda *a, **k: read.append(real_all(*a, **k)) or read[-1])

    def hits(flag: bool, text: str, count: bool = False) -> list:
        monkeypatch.setattr(matching, "ARRAY_OR", flag)
        res = search(index, text, limit=triage.CANDIDATES, snippets=False, count=count)
        return [[(h.path, h.line, h.score, h.coverage, h.agreement, h.verdict) for h in res.hits],
                res.total, res.estimated, res.likelihood, res.known, res.keyed]

    queries = _queries(triage.load_cases(ws / "memory" / SET))
    for text in queries:
        assert hits(True, text) == hits(False, text), text
        # a user's search (every match counted) reads a pasted ticket's candidates alike
        assert hits(True, text, count=True) == hits(False, text, count=True), text
    # the array path ranked nearly all (a query of one searched word has its own path)
    assert len(calls) >= 0.9 * len(queries)
    assert sum(1 for r in read if r) >= 20  # the tickets' candidates were read, not searched


def test_the_evaluation_is_the_same_whichever_path_ranks_the_words(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.search.engine import matching

    vid = _propose(ws, Path(EXP_020).name, _trimmed(ws))
    calls: list[int] = []
    real = matching._disjunction
    monkeypatch.setattr(matching, "_disjunction", lambda *a, **k: calls.append(1) or real(*a, **k))

    def evaluate(flag: bool) -> list:
        monkeypatch.setattr(matching, "ARRAY_OR", flag)
        shutil.rmtree(ws / ".memtui" / "evals-before", ignore_errors=True)  # both measured from nothing
        with Session.open(ws, profile=CURATOR) as s:
            ev = gov.evaluate_change(s, "approve", version_id=vid, reviewed=True)
        assert ev is not None
        return ev.to_json()["domains"]

    whoosh = evaluate(False)
    assert not calls
    array = evaluate(True)
    assert len(calls) >= 0.9 * 80  # 40 cases before and after
    assert array == whoosh
    assert "hit@5" in array[0]["worse"] and any(c["case"] == "c005" for c in array[0]["changes"])


def test_the_articles_ids_are_read_again_only_where_a_file_changed(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.search import triage
    from memtui.core.workspace import Workspace

    live = Workspace.open(ws)
    reads: list[str] = []
    real = triage.read_text
    monkeypatch.setattr(triage, "read_text", lambda path, *a, **k: reads.append(path.name) or real(path, *a, **k))
    first = gate._entry_ids(live, live)
    assert first == triage.entry_ids(live) and first[f"memory/{EXP_020}"] == "exp-020"
    assert (ws / ".memtui" / gate.RECALL_DIR / gate.IDS_FILE).is_file()
    reads.clear()
    assert gate._entry_ids(live, live) == first and reads == []  # nothing changed: nothing read
    article = ws / "memory" / EXP_020
    article.write_text(article.read_text().replace("id: exp-020", "id: exp-020-b", 1))
    gone = next(p for p in sorted((ws / "memory" / "support" / "experience").glob("exp-0*.md")) if p.name != article.name)
    gone.unlink()
    changed = gate._entry_ids(live, live)
    assert reads == [article.name]
    assert changed == triage.entry_ids(live) and changed[f"memory/{EXP_020}"] == "exp-020-b"
    assert f"memory/support/experience/{gone.name}" not in changed
    (ws / ".memtui" / gate.RECALL_DIR / gate.IDS_FILE).write_text("{not json")  # a damaged record: all read again
    assert gate._entry_ids(live, live) == changed
