"""Distinct counters per entry: occurrences, verified reuses, clean executions; a mirror, fork or
subcase counts as its origin; a proposed write is never an execution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.core import consolidate
from memtui.core import governance as gov
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from tests.conftest import run_cli, wait_for
from tests.test_governance import CURATOR, _propose, _session, ws  # noqa: F401 - the fixture

EXP13 = "support/experience/exp-013-label-printer-blank.md"


def _approved(ws: Path) -> gov.Version:
    with _session(ws) as s:
        v = _propose(s)
        gov.approve(s, v.id, reviewed=True)
        return gov.Ledger(s.store).get(v.id)


def test_the_three_counters_are_distinct(ws):
    v = _approved(ws)
    with _session(ws) as s:
        gov.occurred(s, v.article, case="C10", source_request="SR10")
        gov.occurred(s, v.article, case="C11", source_request="SR11", origin="mirror", origin_of="C10")
        gov.occurred(s, v.article, case="C12", source_request="SR12")
        gov.use(s, v.id, case="C20", source_request="SR20", verdict="pass", check="ran it", execution="executed")
        gov.use(s, v.id, case="C21", source_request="SR21", verdict="pass", check="sql drafted",
                execution="proposed")
        gov.use(s, v.id, case="C22", source_request="SR22", verdict="pass", check="subcase ran it",
                origin="subcase", origin_of="C20", execution="executed")
        gov.use(s, v.id, case="C23", source_request="SR23", verdict="contradiction", check="did not hold",
                execution="executed")
        c = gov.counters(s.store, v.article)
    assert (c.occurrences.count, c.occurrences.records) == (2, 3)  # C11 mirrors C10: one origin
    assert c.occurrences.origins == ["C10", "C12"]
    assert (c.verified_reuses.count, c.verified_reuses.records) == (3, 4)  # C22 is a subcase of C20
    # only executed writes that passed: C20 and its subcase C22 (one origin); C21 only proposed
    # SQL and C23 was a contradiction
    assert (c.clean_executions.count, c.clean_executions.records) == (1, 2)
    assert c.clean_executions.origins == ["C20"]
    assert c.proposed_only.origins == ["C21"]
    assert c.summary() == "occurrences 2 · verified reuses 3 · clean executions 1"


def test_an_occurrence_is_not_a_use_and_promotes_nothing(ws):
    with _session(ws) as s:
        v = _propose(s)
        for i in (2, 3):
            gov.occurred(s, v.article, case=f"C{i}", source_request=f"SR{i}")
        assert not gov.eligibility(gov.Ledger(s.store), v).by_uses
        assert gov.counters(s.store, v.article).verified_reuses.count == 0


def test_occurred_is_idempotent_with_a_client_id(ws):
    v = _approved(ws)
    with _session(ws) as s:
        for _ in range(2):
            gov.occurred(s, v.article, case="C10", source_request="SR10", client_id="req-1")
        assert gov.counters(s.store, v.article).occurrences.records == 1
        with pytest.raises(gov.GovernanceError, match="no recorded version"):
            gov.occurred(s, "support/experience/nothing.md", case="C1", source_request="SR1")
        with pytest.raises(gov.GovernanceError, match="must name the case it derives from"):
            gov.occurred(s, v.article, case="C1", source_request="SR1", origin="fork")
        with pytest.raises(gov.GovernanceError, match="execution must be one of"):
            gov.use(s, v.id, case="C9", source_request="SR9", verdict="pass", check="x", execution="maybe")
        assert gov.counters(s.store, v.article).occurrences.records == 1


def test_cli_occurred_use_execution_and_versions_json(sample_copy: Path, capsys):
    w = str(sample_copy)
    args = ("occurred", EXP13, "-w", w, "--case", "CASE-3001", "--source-request", "SR-3001",
            "--client-id", "retry-me", "--json")
    code, out, _ = run_cli(capsys, *args)
    assert code == 0 and json.loads(out)["counters"]["occurrences"]["count"] == 1
    code, out, _ = run_cli(capsys, *args)  # a retry: recorded once
    assert code == 0 and json.loads(out)["counters"]["occurrences"]["records"] == 1
    code, _, err = run_cli(capsys, "occurred", EXP13, "-w", w, "--case", "C", "--source-request", "S",
                           "--origin", "fork")
    assert code == 2 and "--origin fork needs --origin-of CASE" in err
    code, out, _ = run_cli(capsys, "use", "-w", w, "--version", f"{EXP13}@1", "--case", "CASE-3003",
                           "--source-request", "SR-3003", "--verdict", "pass", "--check", "ran the fix",
                           "--execution", "executed")
    assert code == 0 and f"{EXP13}: occurrences 1 · verified reuses 3 · clean executions 1" in out
    code, out, _ = run_cli(capsys, "versions", EXP13, "-w", w, "--json")
    counters = json.loads(out)["counters"]
    assert counters["clean_executions"]["origins"] == ["CASE-3003"]
    assert counters["verified_reuses"]["count"] == 3


def test_consolidate_candidates_carry_counters(sample_copy: Path):
    budget = "connectors/routecore/session-budget.md"
    with Session.open(sample_copy, profile="connector.routecore") as s:
        gov.adopt(s, budget)
        gov.occurred(s, budget, case="CASE-9", source_request="SR-9")
        report = consolidate.scan(s.ws, s.store)
    governed = [c for c in report.candidates if c.counters]
    assert governed, "the sample's candidates name governed articles"
    for c in governed:
        for article, counts in c.counters.items():
            assert article in c.articles
            assert set(counts) >= {"occurrences", "verified_reuses", "clean_executions"}
            assert c.to_json()["counters"][article] == counts
    assert governed[0].counters[budget]["occurrences"]["count"] == 1


async def test_tree_entry_detail_shows_the_counters(sample_copy: Path) -> None:
    from textual.widgets import DataTable

    from memtui.ui.app import MemtuiApp

    gps = "support/courier-app/gps-drift.md"
    with Session.open(sample_copy, profile=CURATOR) as s:
        gov.occurred(s, gps, case="CASE-3001", source_request="SR-3001")
        expected = gov.counters(s.store, gps).summary()
    assert expected.startswith("occurrences 1 · ")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        screen.reveal("support/courier-app", gps)
        meta = screen.query_one("#meta", DataTable)

        def shown() -> str:
            return " ".join(str(c) for r in range(meta.row_count) for c in meta.get_row_at(r))
        await wait_for(pilot, lambda: expected in shown())
