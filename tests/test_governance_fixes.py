"""Defects a new-user tester found in governance (issue 5), each as a test that failed first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_governance_cli import _no_tty, _run  # noqa: F401 - _no_tty is an autouse fixture
from memtui.core import governance as gov
from memtui.core.tree.index import index_with_line
from memtui.core.session import Session

from tests.test_governance import CURATOR, LEAD, LOCKOUT_V1, LOCKOUT_V2, ws  # noqa: F401 - the fixture


def _session(root: Path, profile: str | None = CURATOR) -> Session:
    return Session.open(root, purpose="test", profile=profile)


def _cli_propose(ws: Path, tmp_path: Path, *extra: str) -> int:
    src = tmp_path / "new.md"
    src.write_text("# Case one\n\nThe mechanism.\n")
    return _run(["propose", "-w", str(ws), "--node", "support/experience", "--article", "exp-1.md",
                 "--from", str(src), "--case", "C1", "--source-request", "SR1",
                 "--profile", "support.investigator", "--json", *extra])


# -- 1: propose --source ------------------------------------------------------------------------------

def test_propose_source_is_repeatable_and_stored_as_given(ws, tmp_path, capsys):
    assert _cli_propose(ws, tmp_path, "--source", "https://a.example/x", "--source", "notes/b.md") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["provenance"]["sources"] == ["https://a.example/x", "notes/b.md"]


def test_propose_without_source_stores_no_sources(ws, tmp_path, capsys):
    assert _cli_propose(ws, tmp_path) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["provenance"]["sources"] == []
    with Session.open(ws, purpose="test", read_only=True) as s:
        [p] = gov.Ledger(s.store).proposals()
        assert p.provenance["sources"] == [] and p.content == "# Case one\n\nThe mechanism.\n"


def test_ingest_stores_a_single_source_as_a_list(ws):
    inbox = ws / gov.INBOX
    inbox.mkdir(parents=True)
    (inbox / "a.md").write_text("---\nnode: support/experience\narticle: exp-9.md\ncase: C9\n"
                                "source_request: SR9\nprofile: support.investigator\n"
                                "sources: https://one.example/page\n---\n# Nine\n\nBody.\n")
    with _session(ws) as s:
        [v], findings = gov.ingest(s)
        assert findings == [] and v.provenance["sources"] == ["https://one.example/page"]


# -- 2: approving a proposal built on an older version -------------------------------------------------

def _two_rivals(s: Session) -> tuple[gov.Version, gov.Version]:
    gov.adopt(s, "support/lockout.md")
    a = gov.propose(s, "support", "lockout.md", LOCKOUT_V2, case="C1", source_request="SR1", profile="p.a")
    b = gov.propose(s, "support", "lockout.md", LOCKOUT_V1 + "Rival change.\n", case="C2",
                    source_request="SR2", profile="p.b")
    assert a.based_on == b.based_on == 1
    gov.approve(s, a.id, reviewed=True)
    return a, b


def test_approving_a_proposal_on_an_older_version_is_refused_and_keeps_the_newer_change(ws):
    with _session(ws, profile=LEAD) as s:
        a, b = _two_rivals(s)
        with pytest.raises(gov.RefusedError,
                           match=r"based on @1, but @2 is active now: file the change again on @2"):
            gov.approve(s, b.id, reviewed=True)
        led = gov.Ledger(s.store)
        assert led.active("support/lockout.md").id == a.id and led.get(b.id).state == "proposed"
    assert (ws / "memory/support/lockout.md").read_text() == LOCKOUT_V2


def test_replace_newer_approves_a_stale_proposal_and_records_it(ws):
    with _session(ws, profile=LEAD) as s:
        a, b = _two_rivals(s)
        v = gov.approve(s, b.id, reviewed=True, replace_newer=True)
        assert v.state == "active" and v.decision["replaced_newer"] == a.id
        assert "replaces the newer" in v.decision["why"]
    assert (ws / "memory/support/lockout.md").read_text().endswith("Rival change.\n")


def test_cli_approve_stale_exits_3_with_the_reason_and_flag_overrides(ws, capsys):
    with _session(ws, profile=LEAD) as s:
        _a, b = _two_rivals(s)
    capsys.readouterr()
    assert _run(["proposals", "approve", b.id, "-w", str(ws), "--yes", "--reviewed", "--as", LEAD]) == 3
    assert "based on @1, but @2 is active now" in capsys.readouterr().err
    assert _run(["proposals", "approve", b.id, "-w", str(ws), "--yes", "--reviewed", "--as", LEAD,
                 "--replace-newer"]) == 0
    assert "support/lockout.md@3" in capsys.readouterr().out


# -- 3: human review recorded; how a version was retired ------------------------------------------------

def test_approve_reviewed_sets_human_reviewed_in_provenance_and_decision(ws, capsys):
    with _session(ws, profile=LEAD) as s:
        gov.adopt(s, "support/lockout.md")
        v = gov.propose(s, "support", "lockout.md", LOCKOUT_V2, case="C1", source_request="SR1", profile="p.a")
        assert v.provenance["human_reviewed"] is False
        done = gov.approve(s, v.id, reviewed=True)
        assert done.provenance["human_reviewed"] is True and done.decision["human_reviewed"] is True
        assert "human review" in done.decision["why"]
        assert done.content == v.content and done.sha256 == v.sha256  # nothing else changed


def test_versions_tell_a_replaced_version_from_an_explicitly_retired_one(ws, capsys):
    with _session(ws, profile=LEAD) as s:
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
    assert "retired_by: activation of @2" in lines[0] and f"retired: by {LEAD}" in lines[1]
    assert _run(["versions", "support/lockout.md", "-w", str(ws), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["versions"]
    assert [r["retired_how"] for r in rows] == ["retired_by: activation of @2", f"retired: by {LEAD}"]


# -- 4: a new node's AGENTS.md ----------------------------------------------------------------------------

def test_a_new_node_index_has_one_articles_section_holding_the_line(ws):
    with _session(ws, profile=LEAD) as s:
        v = gov.propose(s, "support/sso", "sso-loop.md", "# SSO loop\n\nCookie domain.\n", case="C1",
                        source_request="SR1", profile="p.a", new_node_owner="support.sso")
        gov.approve(s, v.id, reviewed=True)
    text = (ws / "memory/support/sso/AGENTS.md").read_text()
    assert text.count("## Articles") == 1
    after = text.split("## Articles", 1)[1]
    assert "- [SSO loop](sso-loop.md)" in after


def test_index_with_line_fills_an_existing_empty_section():
    text = "# N\n\n## Articles\n\n## Child nodes\n\n- [C](c/AGENTS.md) — c\n"
    out = index_with_line(text, "n", "a.md", "A", "a line")
    assert out == "# N\n\n## Articles\n\n- [A](a.md) — a line\n\n## Child nodes\n\n- [C](c/AGENTS.md) — c\n"


# -- 5: ingest keeps the article's own front matter ---------------------------------------------------------

def test_ingest_keeps_title_summary_and_tags_and_drops_only_governance_fields(ws):
    inbox = ws / gov.INBOX
    inbox.mkdir(parents=True)
    (inbox / "a.md").write_text(
        "---\nnode: support/experience\narticle: exp-9.md\ntitle: Case nine\ncase: C9\n"
        "source_request: SR9\nprofile: support.investigator\nprofile_version: '3'\n"
        "sources:\n  - https://a.example\n  - https://b.example\nuntrusted: false\n"
        "summary: Nine's mechanism in one line\ntags: [sso, cookies]\n---\n# Case nine\n\nMechanism nine.\n")
    with _session(ws) as s:
        [v], findings = gov.ingest(s)
        assert findings == []
        assert v.content == ("---\ntitle: Case nine\nsummary: Nine's mechanism in one line\n"
                             "tags: [sso, cookies]\n---\n# Case nine\n\nMechanism nine.\n")
        assert v.provenance["sources"] == ["https://a.example", "https://b.example"]
        assert (v.title, v.one_liner) == ("Case nine", "Nine's mechanism in one line")
        gov.approve(s, v.id, reviewed=True)
    published = (ws / "memory/support/experience/exp-9.md").read_text()
    assert published.startswith("---\ntitle: Case nine\n") and "case: C9" not in published


def test_ingest_help_documents_the_inbox_fields(capsys):
    assert _run(["proposals", "ingest", "--help"]) == 0
    out = capsys.readouterr().out
    for name in ("node", "article", "case", "source_request", "profile", "profile_version", "sources",
                 "untrusted", "new_node_owner", "title", "summary"):
        assert name in out


# -- 8: --json refusals and errors; use --origin without --origin-of -------------------------------------------

def test_json_refusals_and_errors_print_a_json_object_on_stdout(ws, tmp_path, capsys):
    assert _cli_propose(ws, tmp_path) == 0
    capsys.readouterr()
    vid = "support/experience/exp-1.md@1"
    assert _run(["proposals", "approve", vid, "-w", str(ws), "--json", "--reviewed"]) == 2  # no --yes, no terminal
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["ok"] is False and data["exit"] == 2 and "add --yes" in data["error"] and "add --yes" in err
    assert _run(["proposals", "show", "nope@1", "-w", str(ws), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data == {"ok": False, "error": data["error"], "exit": 1} and "nope@1" in data["error"]


def test_json_backup_refusal_prints_a_json_object(ws, capsys):
    assert _run(["backup", "-w", str(ws), "--json"]) == 2  # no repository configured
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["exit"] == 2 and "no backup repository" in data["error"]


def test_use_with_an_origin_but_no_origin_of_is_a_usage_error(ws, tmp_path, capsys):
    assert _cli_propose(ws, tmp_path) == 0
    capsys.readouterr()
    code = _run(["use", "-w", str(ws), "--version", "support/experience/exp-1.md@1", "--case", "C2",
                 "--source-request", "SR2", "--verdict", "pass", "--check", "replayed", "--origin", "subcase"])
    assert code == 2 and "--origin-of" in capsys.readouterr().err
    with Session.open(ws, purpose="test", read_only=True) as s:
        assert gov.Ledger(s.store).uses("support/experience/exp-1.md@1") == []
