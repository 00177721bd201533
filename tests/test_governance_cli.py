"""The governance commands: propose, use, proposals, versions, rollback, retire, adopt."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core.auditlog import AuditLog
from memtui.core.session import Session

from tests.test_governance import CURATOR, LEAD, LOCKOUT_V2, ws  # noqa: F401 - the fixture


def _run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


@pytest.fixture(autouse=True)
def _no_tty(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))


def _propose(ws: Path, tmp_path: Path, *extra: str) -> str:
    src = tmp_path / "new.md"
    src.write_text("# Case one\n\nThe mechanism.\n")
    assert _run(["propose", "-w", str(ws), "--node", "support/experience", "--article", "exp-1.md",
                 "--from", str(src), "--case", "C1", "--source-request", "SR1",
                 "--profile", "support.investigator", "--json", *extra]) == 0
    return "support/experience/exp-1.md@1"


def test_propose_use_approve_by_uses_end_to_end(ws, tmp_path, capsys):
    vid = _propose(ws, tmp_path)
    assert json.loads(capsys.readouterr().out)["state"] == "proposed"
    for case in ("C2", "C3"):
        assert _run(["use", "-w", str(ws), "--version", vid, "--case", case, "--source-request", "SR" + case,
                     "--verdict", "pass", "--check", "replayed the ticket"]) == 0
    assert "eligible by uses" in capsys.readouterr().out
    assert _run(["proposals", "list", "-w", str(ws), "--json"]) == 0
    page = json.loads(capsys.readouterr().out)
    [row] = page["proposals"]
    assert (page["count"], page["total"], page["cursor"], page["state"]) == (1, 1, None, "proposed")
    assert row["eligibility"]["by_uses"] and row["owner"] == CURATOR
    assert _run(["proposals", "approve", vid, "-w", str(ws), "--yes"]) == 0
    assert "activated" in capsys.readouterr().out
    assert (ws / "memory/support/experience/exp-1.md").exists()
    assert _run(["versions", "support/experience/exp-1.md", "-w", str(ws), "--json"]) == 0
    assert [v["state"] for v in json.loads(capsys.readouterr().out)["versions"]] == ["active"]


def test_approve_refusals_exit_3_with_the_reason(ws, tmp_path, capsys):
    vid = _propose(ws, tmp_path)
    capsys.readouterr()
    assert _run(["proposals", "approve", vid, "-w", str(ws), "--reviewed"]) == 2  # no --yes, no terminal: usage
    assert "add --yes" in capsys.readouterr().err
    # not eligible by uses: refused before any confirmation is asked, naming the flag that reviews
    assert _run(["proposals", "approve", vid, "-w", str(ws)]) == 3
    assert "add --reviewed" in capsys.readouterr().err
    assert _run(["proposals", "approve", vid, "-w", str(ws), "--yes", "--reviewed", "--as", "x.y"]) == 3
    assert "support/experience is owned by support.curator; you act as x.y" in capsys.readouterr().err
    assert _run(["proposals", "approve", vid, "-w", str(ws), "--yes"]) == 3
    assert "only human review promotes" in capsys.readouterr().err
    assert _run(["proposals", "reject", vid, "-w", str(ws), "--yes", "--reason", " "]) == 1
    assert _run(["proposals", "show", "nope@1", "-w", str(ws)]) == 1
    assert not (ws / "memory/support/experience/exp-1.md").exists()


def test_an_open_tui_does_not_block_the_cli_and_a_damaged_store_refuses(ws, tmp_path, capsys):
    with Session.open(ws, purpose="tui"):
        assert _run(["adopt", "-w", str(ws), "--yes"]) == 0
    capsys.readouterr()
    store = ws / ".memtui" / "store.json"
    store.write_bytes(store.read_bytes()[:-5])  # cut short: damaged
    assert _run(["adopt", "-w", str(ws), "--yes"]) == 3
    assert "damaged" in capsys.readouterr().err


def test_adopt_rollback_retire_and_diff(ws, tmp_path, capsys):
    assert _run(["adopt", "-w", str(ws), "--yes", "--as", LEAD]) == 0
    assert "adopted support/lockout.md@1 (baseline)" in capsys.readouterr().out
    (ws / "memory/support/lockout.md").write_text(LOCKOUT_V2)
    assert _run(["audit", "-w", str(ws), "--json"]) in (0, 1)
    codes = [f["code"] for f in json.loads(capsys.readouterr().out)["findings"]]
    assert "unrecorded-edit" in codes
    assert _run(["adopt", "support/lockout.md", "-w", str(ws), "--yes", "--as", LEAD]) == 0
    assert "(external edit)" in capsys.readouterr().out
    assert _run(["versions", "support/lockout.md", "-w", str(ws), "--diff", "1", "2"]) == 0
    assert "+Five failed logins lock the account; an admin unlocks it." in capsys.readouterr().out
    assert _run(["rollback", "support/lockout.md", "--to", "1", "-w", str(ws), "--yes", "--as", CURATOR]) == 3
    assert _run(["rollback", "support/lockout.md", "--to", "1", "-w", str(ws), "--yes", "--as", LEAD]) == 0
    assert _run(["retire", "support/lockout.md", "-w", str(ws), "--yes", "--as", LEAD, "--json", "--reason", "superseded"]) == 0
    capsys.readouterr()
    assert not (ws / "memory/support/lockout.md").exists()
    with Session.open(ws, read_only=True) as s:
        actions = [e.action for e in AuditLog(s.store).entries(newest_first=False)]
    assert actions == ["governance.adopt", "governance.adopt", "governance.rollback", "governance.retire"]


def test_ingest_and_assign(ws, tmp_path, capsys):
    inbox = ws / "proposals/inbox"
    inbox.mkdir(parents=True)
    (inbox / "p.md").write_text("---\nnode: support/experience\narticle: exp-2.md\ncase: C5\n"
                                "source_request: SR5\nprofile: support.investigator\n---\n# Two\n\nBody.\n")
    assert _run(["proposals", "ingest", "-w", str(ws)]) == 0
    assert "proposed support/experience/exp-2.md@1" in capsys.readouterr().out
    assert not (inbox / "p.md").exists()
    assert _run(["proposals", "assign", "support/experience/exp-2.md@1", "C5", "-w", str(ws)]) == 1
    assert "proposing case" in capsys.readouterr().err
    assert _run(["proposals", "assign", "support/experience/exp-2.md@1", "C6", "C7", "-w", str(ws)]) == 0
    assert _run(["proposals", "show", "support/experience/exp-2.md@1", "-w", str(ws), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert [a["case"] for a in shown["assigned"]] == ["C6", "C7"]
    assert "+# Two" in shown["diff"]


def test_a_retried_use_with_its_client_id_is_recorded_once(ws, tmp_path, capsys):
    """Seed 004 round 2: a retried `memtui use` was recorded twice."""
    vid = _propose(ws, tmp_path)
    use = ["use", "-w", str(ws), "--version", vid, "--case", "C2", "--source-request", "SR2",
           "--verdict", "pass", "--check", "replayed the ticket", "--client-id", "agent-7"]
    assert _run(use) == 0 and _run(use) == 0
    with Session.open(ws, read_only=True) as s:
        assert len(gov_uses(s, vid)) == 1
    capsys.readouterr()
    other = [("contradiction" if word == "pass" else word) for word in use]
    assert _run(other) == 1
    assert "agent-7" in capsys.readouterr().err
    with Session.open(ws, read_only=True) as s:
        assert [u.verdict for u in gov_uses(s, vid)] == ["pass"], "the first entry stays"


def gov_uses(s, vid):  # noqa: ANN001, ANN201
    from memtui.core import governance as gov

    return gov.Ledger(s.store).uses(vid)


@pytest.mark.parametrize("name", ["refund (partial) v2.md", "a [b] (c).md", "ünï cödé.md"])
def test_approving_an_awkward_name_writes_an_index_line_the_parser_reads(ws, tmp_path, capsys, name):
    """Approving `refund (partial) v2.md` once wrote an index line memtui's own parser
    could not read (an `article-unlisted` finding right after the approval)."""
    from memtui.core import audit

    src = tmp_path / "new.md"
    src.write_text("# Partial refund\n\nHow a partial refund is booked.\n")
    assert _run(["propose", "-w", str(ws), "--node", "support/experience", "--article", name, "--from", str(src),
                 "--case", "C1", "--source-request", "SR1", "--profile", "support.investigator"]) == 0
    assert _run(["proposals", "approve", f"support/experience/{name}@1", "-w", str(ws), "--yes", "--reviewed"]) == 0
    capsys.readouterr()
    from memtui.core.workspace import Workspace

    report = audit.run(Workspace.open(ws))
    shown = f"memory/support/experience/{name}"
    assert not [f for f in report.findings if f.path == shown and f.code in ("article-unlisted", "index-missing-file")]
    index = (ws / "memory/support/experience/AGENTS.md").read_text("utf-8")
    assert "Partial refund" in index


@pytest.mark.parametrize("argv", [["proposals", "list"], ["proposals", "show", "x.md@1"],
                                  ["versions", "support/lockout.md"], ["pins", "--case", "C-1"]])
def test_a_damaged_store_is_said_by_every_listing_never_an_empty_list(ws, shared, capsys, argv):
    """With a truncated store, `proposals list` printed "no proposed proposals", exit 0."""
    store_file = ws / ".memtui" / "store.json"
    store_file.parent.mkdir(exist_ok=True)
    store_file.write_bytes((shared / "bug-inputs" / "B01" / "store-truncated.json").read_bytes())
    before = store_file.read_bytes()
    assert _run([*argv, "-w", str(ws)]) == 1
    err = capsys.readouterr().err
    assert "store check" in err and "set-aside" in err and "nothing it holds can be listed" in err
    assert store_file.read_bytes() == before  # never written over


@pytest.mark.parametrize("argv", [
    ["occurred", "support/lockout.md", "--case", "C-1", "--source-request", "R-1"],
    ["use", "--version", "support/lockout.md@1", "--case", "C-1", "--source-request", "R-1",
     "--verdict", "pass", "--check", "replayed"],
    ["adopt", "--yes"]])
def test_a_damaged_store_is_said_first_by_every_acting_command_the_same_way(ws, shared, capsys, argv):
    """`occurred` on a truncated store said "has no recorded version; adopt it first" (exit 1),
    blaming the entry, while `adopt` named the damaged store (exit 3)."""
    store_file = ws / ".memtui" / "store.json"
    store_file.parent.mkdir(exist_ok=True)
    store_file.write_bytes((shared / "bug-inputs" / "B01" / "store-truncated.json").read_bytes())
    before = store_file.read_bytes()
    assert _run([*argv, "-w", str(ws)]) == 3
    err = capsys.readouterr().err
    assert "refused: memtui's store" in err and "is damaged: the JSON breaks at line 1, column 229" in err
    assert "no recorded version" not in err and "set-aside" in err
    assert store_file.read_bytes() == before  # never written over


def test_a_version_line_shows_the_retirement_reason_and_one_evaluation():
    from memtui.commands._gov import version_line
    from memtui.core.governance import Version

    record = {"domains": [{"node": "support", "worse": []}]}
    v = Version(id="support/x.md@1", article="support/x.md", node="support", number=1, state="retired",
                content="", sha256="", created="2026-12-01", author="a.b", profile_version=None,
                provenance={"kind": "proposal", "evaluation": record}, based_on=None, base_hash=None,
                title="X", one_liner="x",
                retirement={"by": "c.d", "at": "2026-12-02", "why": "moved to\nthe FAQ", "evaluation": record})
    line = version_line(v)
    assert "retired by c.d: moved to the FAQ" in line
    assert line.count("eval: no domain worse") == 1


def test_retire_without_a_reason_is_refused_and_retires_nothing(ws, capsys):
    assert _run(["adopt", "-w", str(ws), "--yes", "--as", LEAD]) == 0
    capsys.readouterr()
    for reason in ([], ["--reason", "   "]):
        assert _run(["retire", "support/lockout.md", "-w", str(ws), "--yes", "--as", LEAD, *reason]) == 2
        assert "retire needs a reason: add --reason TEXT" in capsys.readouterr().err
    assert (ws / "memory/support/lockout.md").exists()
    assert _run(["retire", "support/lockout.md", "-w", str(ws), "--yes", "--as", LEAD, "--reason", "moved"]) == 0
    with Session.open(ws, read_only=True) as s:
        last = AuditLog(s.store).entries(limit=1)[0]
    assert last.action == "governance.retire" and last.detail["reason"] == "moved"
