"""Approving and retiring versions: a proposal on an older version is refused unless asked,
and the record says whether a human reviewed it and how a version left."""

from __future__ import annotations

import json

import pytest

from tests.test_governance_cli import _no_tty, _run  # noqa: F401 - _no_tty is an autouse fixture
from memtui.core import governance as gov
from memtui.core.session import Session

from tests.governance_helpers import open_session
from tests.test_governance import CURATOR, LEAD, LOCKOUT_V1, LOCKOUT_V2, ws  # noqa: F401 - the fixture




# -- approving a proposal built on an older version ------------------------------------------------
def _two_rivals(s: Session) -> tuple[gov.Version, gov.Version]:
    gov.adopt(s, "support/lockout.md")
    a = gov.propose(s, "support", "lockout.md", LOCKOUT_V2, case="C1", source_request="SR1", profile="p.a")
    b = gov.propose(s, "support", "lockout.md", LOCKOUT_V1 + "Rival change.\n", case="C2",
                    source_request="SR2", profile="p.b")
    assert a.based_on == b.based_on == 1
    gov.approve(s, a.id, reviewed=True)
    return a, b


def test_approving_a_proposal_on_an_older_version_is_refused_and_keeps_the_newer_change(ws):
    with open_session(ws, profile=LEAD) as s:
        a, b = _two_rivals(s)
        with pytest.raises(gov.RefusedError,
                           match=r"based on @1, but @2 is active now: file the change again on @2"):
            gov.approve(s, b.id, reviewed=True)
        led = gov.Ledger(s.store)
        assert led.active("support/lockout.md").id == a.id and led.get(b.id).state == "proposed"
    assert (ws / "memory/support/lockout.md").read_text() == LOCKOUT_V2


def test_replace_newer_approves_a_stale_proposal_and_records_it(ws):
    with open_session(ws, profile=LEAD) as s:
        a, b = _two_rivals(s)
        v = gov.approve(s, b.id, reviewed=True, replace_newer=True)
        assert v.state == "active" and v.decision["replaced_newer"] == a.id
        assert "replaces the newer" in v.decision["why"]
    assert (ws / "memory/support/lockout.md").read_text().endswith("Rival change.\n")


def test_cli_approve_stale_exits_3_with_the_reason_and_flag_overrides(ws, capsys):
    with open_session(ws, profile=LEAD) as s:
        _a, b = _two_rivals(s)
    capsys.readouterr()
    assert _run(["proposals", "approve", b.id, "-w", str(ws), "--yes", "--reviewed", "--as", LEAD]) == 3
    assert "based on @1, but @2 is active now" in capsys.readouterr().err
    assert _run(["proposals", "approve", b.id, "-w", str(ws), "--yes", "--reviewed", "--as", LEAD,
                 "--replace-newer"]) == 0
    assert "support/lockout.md@3" in capsys.readouterr().out


# -- human review recorded; how a version was retired ----------------------------------------------
def test_approve_reviewed_sets_human_reviewed_in_provenance_and_decision(ws, capsys):
    with open_session(ws, profile=LEAD) as s:
        gov.adopt(s, "support/lockout.md")
        v = gov.propose(s, "support", "lockout.md", LOCKOUT_V2, case="C1", source_request="SR1", profile="p.a")
        assert v.provenance["human_reviewed"] is False
        done = gov.approve(s, v.id, reviewed=True)
        assert done.provenance["human_reviewed"] is True and done.decision["human_reviewed"] is True
        assert "human review" in done.decision["why"]
        assert done.content == v.content and done.sha256 == v.sha256  # nothing else changed


def test_versions_tell_a_replaced_version_from_an_explicitly_retired_one(ws, capsys):
    with open_session(ws, profile=LEAD) as s:
        gov.adopt(s, "support/lockout.md")
        v = gov.propose(s, "support", "lockout.md", LOCKOUT_V2, case="C1", source_request="SR1", profile="p.a")
        gov.approve(s, v.id, reviewed=True)
        gov.retire(s, "support/lockout.md", "moved to SSO")
        led = gov.Ledger(s.store)
        assert gov.retired_how(led.get("support/lockout.md@1")) == "retired_by: activation of @2"
        assert gov.retired_how(led.get(v.id)) == f"retired: by {LEAD}"
    capsys.readouterr()
    assert _run(["versions", "support/lockout.md", "-w", str(ws)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "retired_by: activation of @2" in lines[0] and f"retired by {LEAD}: " in lines[1]
    assert _run(["versions", "support/lockout.md", "-w", str(ws), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["versions"]
    assert [r["retired_how"] for r in rows] == ["retired_by: activation of @2", f"retired: by {LEAD}"]
