"""``memtui harvest``: the dreaming pass of a case on a sample case of the sample workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.core import governance as gov
from memtui.core import harvest
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from tests.conftest import run_cli

CASE = "CASE-3001"


def _line(**doc) -> str:
    return json.dumps(doc, ensure_ascii=False) + "\n"


def _call(query: str) -> dict:
    return {"function": {"name": "memory_search", "arguments": json.dumps({"query": query})}}


@pytest.fixture
def case_ws(sample_copy: Path, tmp_path: Path) -> Path:
    """The sample workspace with a closed case: a history with two searches (one the memory
    answers, one it cannot), a proposal the case filed, and a use it recorded."""
    history = sample_copy / "sessions/durable" / f"{CASE}-2026-11-20.jsonl"
    history.write_text(
        _line(ts="2026-11-20T08:00:00Z", role="user",
              content="The parcel locker door jammed with the parcel inside, the customer cannot open it")
        + _line(ts="2026-11-20T08:00:05Z", role="assistant", content="",
                tool_calls=[_call("пратката е в автомат и вратичката не се отваря")])
        + _line(ts="2026-11-20T08:00:06Z", role="tool", name="memory_search", content="[]")
        + _line(ts="2026-11-20T08:03:00Z", role="assistant",
                content="A jammed locker door is reset remotely from the locker admin screen after the firmware "
                        "update; the courier opens it on site with the service code.")
        + _line(ts="2026-11-20T08:05:00Z", role="assistant", content="",
                tool_calls=[_call("proof of delivery photo upload stuck")])
        + _line(ts="2026-11-20T08:05:01Z", role="tool", name="memory_search", content="pod-upload.md")
        + _line(ts="2026-11-20T08:06:00Z", role="assistant", content="The upload queue explains it."), "utf-8")
    src = tmp_path / "learned.md"
    src.write_text("---\ntitle: Courier PIN reset\nsummary: Who resets a blocked handheld PIN\n---\n\n"
                   "The depot lead resets a blocked handheld PIN in the DepotScan admin screen.\n", "utf-8")
    with Session.open(sample_copy, profile="support.courier-app") as s:
        gov.propose(s, "support/courier-app", "pin-reset.md", src.read_text("utf-8"), case=CASE,
                    source_request="SR-3001", profile="support.courier-app",
                    classification={"class": "article", "reason": "a pattern of the handheld"})
        gov.use(s, "support/courier-app/gps-drift.md@2", case=CASE, source_request="SR-3001", verdict="pass",
                check="the drift matched the depot's map")
    return sample_copy


def test_a_harvest_lists_learned_reused_and_missing(case_ws: Path, capsys) -> None:
    code, out, err = run_cli(capsys, "harvest", CASE, "-w", str(case_ws), "--domain", "support/courier-app",
                             "--json", "--as", "support.courier-app")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["papers"]["sessions"] == [f"{CASE}-2026-11-20"]
    learned = rep["learned"]
    assert [c["what"].split(":")[0] for c in learned] == ["proposal support/courier-app/pin-reset.md@1 (proposed)"]
    assert learned[0]["cls"] == "article" and learned[0]["reason"] == "a pattern of the handheld"
    reused = {c["what"] for c in rep["reused"]}
    assert "used support/courier-app/gps-drift.md@2 (pass)" in reused
    missing = rep["missing"]
    assert any("вратичката не се отваря" in c["what"] for c in missing)
    pin = next(c for c in missing if "вратичката не се отваря" in c["what"])
    assert pin["cls"] in ("article", "experience", "skill") and "no confident precedent" in pin["evidence"][0]
    assert "firmware update" in pin["answer"]
    # every "nothing" carries its justification
    for kind in ("learned", "reused", "missing"):
        assert all(c["reason"] for c in rep[kind] if c["cls"] == "nothing")


def test_a_cross_domain_candidate_is_proposed_to_its_domain_once(case_ws: Path, capsys) -> None:
    ws = Workspace.open(case_ws)
    with Session.open(ws, read_only=True) as s:
        result = harvest.harvest(ws, s.store, CASE, "support/courier-app")
    cross = [c for c in result.candidates if c.cross_domain and c.cls != "nothing"]
    assert cross, [(c.what, c.domain) for c in result.candidates]
    argv = ["harvest", CASE, "-w", str(case_ws), "--domain", "support/courier-app", "--json"]
    rep = json.loads(run_cli(capsys, *argv)[1])
    filed = [c for c in rep["missing"] if c["proposal"]]
    assert filed and all(c["domain"] != "support/courier-app" for c in filed)
    with Session.open(case_ws, read_only=True) as s:
        v = gov.Ledger(s.store).get(filed[0]["proposal"])
    assert v.provenance["case"] == CASE and v.classification["class"] == filed[0]["cls"]
    assert "## Evidence" in v.content and f"{CASE}-2026-11-20.jsonl" in v.content
    run_cli(capsys, *argv)  # a repeated pass files nothing twice
    with Session.open(case_ws, read_only=True) as s:
        mine = [p for p in gov.Ledger(s.store).proposals() if p.provenance.get("source_request") == f"harvest:{CASE}"]
    assert len(mine) == len(filed)


def test_dry_run_proposes_nothing(case_ws: Path, capsys) -> None:
    run_cli(capsys, "harvest", CASE, "-w", str(case_ws), "--domain", "support/parcels-lost", "--dry-run")
    with Session.open(case_ws, read_only=True) as s:
        assert not [p for p in gov.Ledger(s.store).proposals() if p.provenance.get("source_request") == f"harvest:{CASE}"]


def test_since_harvests_every_case_with_papers_from_that_day(case_ws: Path, capsys) -> None:
    code, out, _ = run_cli(capsys, "harvest", "-w", str(case_ws), "--since", "2026-11-20", "--json", "--dry-run")
    cases = [c["case"] for c in json.loads(out)["cases"]]
    assert code == 0 and CASE in cases
    assert "tg-4411-2026-11-02" not in cases  # begun before that day


def test_bad_words_are_usage_errors(case_ws: Path, capsys) -> None:
    assert run_cli(capsys, "harvest", "-w", str(case_ws))[0] == 2
    code, _, err = run_cli(capsys, "harvest", "-w", str(case_ws), "--since", "20.11.2026")
    assert code == 2 and "YYYY-MM-DD" in err
    code, _, err = run_cli(capsys, "harvest", "CASE-NONE", "-w", str(case_ws))
    assert code == 1 and "no papers" in err


def test_evidence_with_personal_data_is_held_back(case_ws: Path, capsys) -> None:
    history = case_ws / "sessions/durable" / f"{CASE}-2026-11-21.jsonl"
    history.write_text(
        _line(ts="2026-11-21T08:00:05Z", role="assistant", content="",
              tool_calls=[_call("автоматът не връща пратката след отказ")])
        + _line(ts="2026-11-21T08:03:00Z", role="assistant",
                content="The locker keeps a refused parcel for 24 hours; called the recipient on +359 88 123 4567."),
        "utf-8")
    code, out, _ = run_cli(capsys, "harvest", CASE, "-w", str(case_ws), "--domain", "support/courier-app", "--json")
    held = [c for c in json.loads(out)["missing"] if c["held"]]
    assert code == 0 and held and not held[0]["proposal"] and "personal data" in held[0]["held"]
    with Session.open(case_ws, read_only=True) as s:
        assert not any("+359 88" in p.content for p in gov.Ledger(s.store).proposals())


def test_a_history_belongs_to_the_case_its_lines_name_else_its_key_without_the_day(case_ws: Path, capsys) -> None:
    ws = Workspace.open(case_ws)
    from memtui.core import sessions

    assert harvest.case_of(sessions.read(ws, f"{CASE}-2026-11-20")) == CASE
    named = case_ws / "sessions/durable/chat-77.jsonl"
    named.write_text(_line(ts="2026-11-22T08:00:00Z", role="user", content="hello", case="CASE-4002"), "utf-8")
    assert harvest.case_of(sessions.read(ws, "chat-77")) == "CASE-4002"
    code, out, _ = run_cli(capsys, "harvest", "-w", str(case_ws), "--since", "2026-11-20", "--json", "--dry-run")
    cases = [c["case"] for c in json.loads(out)["cases"]]
    assert code == 0 and "CASE-4002" in cases and f"{CASE}-2026-11-20" not in cases  # one case, not two
