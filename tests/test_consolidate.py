"""The consolidation pass and its actions (seed 000 §4 step 5, §7.3, §7.4b)."""

from __future__ import annotations

import datetime as _dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from backup_helpers import isolate_git
from memtui.core import audit, consolidate, frontmatter, governance as gov
from memtui.core.backup.commit import backup
from memtui.core.backup.restore import restore
from memtui.core.backup.verify import verify
from memtui.core.errors import ConflictError
from memtui.core.session import Session
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace

SUPPORT, CURATOR, OTHER = "support.owner", "support.curator", "someone.else"

LOCKOUT = """---
title: "Portal account locked after failed logins"
summary: "Five failed logins lock the portal account for 30 minutes; the desk unlocks it in AdminPanel"
aliases: ["account locked"]
links: ["vpn.md"]
---
# Portal account locked after failed logins

After five failed login attempts the AgentPortal account is locked for thirty minutes.
The service desk can unlock it earlier in AdminPanel under Users, Security, Unlock, after
checking the caller's identity with the office manager. Password resets do not unlock the
account; the lock timer keeps running. Repeated lockouts from one office usually mean a
saved wrong password in a browser or a mobile client.
"""

# the same subject, reworded and reordered: a paraphrased duplicate
LOCKOUT_AGAIN = """---
title: "Locked AgentPortal accounts"
summary: "Accounts lock for 30 minutes after five failed logins"
aliases: ["заключен акаунт"]
links: ["../billing/credit-note.md"]
---
# Locked AgentPortal accounts

A saved wrong password in a browser or a mobile client usually explains repeated lockouts
from one office. The AgentPortal account locks for thirty minutes after five failed login
attempts; a password reset does not unlock it and the lock timer keeps running. After
checking the caller's identity with the office manager, the service desk unlocks it earlier
in AdminPanel: Users, Security, Unlock. See [the VPN note](vpn.md).
"""

VPN = """---
title: "VPN for branch offices"
summary: "Branch offices reach InsCore through the site VPN; client profiles are per office"
environment: production
observed_version: "2.3"
verified_at: 2025-01-10
---
# VPN for branch offices

Branch offices reach InsCore only through the site-to-site VPN. Home workers use the client
VPN with a per-office profile that the network team issues; a profile of another office
connects but every InsCore call times out at the firewall.
"""

CREDIT = """---
title: "Credit notes for closed invoices"
summary: "A closed invoice is never edited; finance issues a credit note and a new invoice"
---
# Credit notes for closed invoices

Closed invoices are immutable in BillingHub. A correction goes through finance, which issues
a credit note against the closed invoice and a new invoice with the right amounts.
"""

CREDIT_BG = """---
title: "Кредитни известия за затворени фактури"
summary: "Затворена фактура не се променя; финансите издават кредитно известие"
aliases: ["Credit notes for closed invoices"]
---
# Кредитни известия за затворени фактури

Затворените фактури в BillingHub не се редактират. Корекцията минава през финансов отдел,
който издава кредитно известие към затворената фактура и нова фактура с верните суми.
"""

EXP_A = """---
id: exp-a
title: "Label printer prints blank labels"
summary: "Blank labels after a driver update; darkness reset to 0"
symptom: "„Принтерът вади празни етикети“ — DS-P03 PRINT_EMPTY"
fix_shape: "config cell"
---
# Label printer prints blank labels

The driver update reset the darkness setting to zero; setting it back fixed the printer.
"""

EXP_B = """---
id: exp-b
title: "Blank labels from depot printers"
summary: "Blank labels fixed by replacing the print head"
symptom: "„Принтерът вади празни етикети“ — DS-P03 PRINT_EMPTY"
fix_shape: "data fix"
---
# Blank labels from depot printers

The print head was worn out; a technician replaced it and the labels printed again.
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _node(title: str, owner: str, lines: list[str]) -> str:
    return f"---\nowner: {owner}\n---\n# {title}\n\n## Articles\n\n" + "".join(f"{ln}\n" for ln in lines)


def seeded(root: Path) -> Path:
    """A workspace seeded with one candidate of every kind, every article adopted."""
    memory = root / "memory"
    _write(memory / "AGENTS.md", "---\nowner: root.owner\n---\n# Memory\n\n- [Support](support/AGENTS.md) — support\n"
           "- [Billing](billing/AGENTS.md) — billing\n")
    _write(memory / "support/AGENTS.md", _node("Support", SUPPORT, [
        "- [Portal account locked after failed logins](lockout.md) — Five failed logins lock the portal "
        "account for 30 minutes; the desk unlocks it in AdminPanel",
        "- [Locked AgentPortal accounts](lockout-again.md) — Accounts lock for 30 minutes after five failed logins",
        # a one-liner that no longer says the article's summary
        "- [VPN for branch offices](vpn.md) — Branch offices use the client VPN",
        "- [Experience](experience/AGENTS.md) — past cases",
    ]))
    _write(memory / "support/lockout.md", LOCKOUT)
    _write(memory / "support/lockout-again.md", LOCKOUT_AGAIN)
    _write(memory / "support/vpn.md", VPN)
    _write(memory / "support/experience/AGENTS.md", _node("Experience", CURATOR, [
        "- [Label printer prints blank labels](exp-a.md) — Blank labels after a driver update; darkness reset to 0",
        "- [Blank labels from depot printers](exp-b.md) — Blank labels fixed by replacing the print head",
    ]))
    _write(memory / "support/experience/exp-a.md", EXP_A)
    _write(memory / "support/experience/exp-b.md", EXP_B)
    _write(memory / "billing/AGENTS.md", _node("Billing", SUPPORT, [
        "- [Credit notes for closed invoices](credit-note.md) — A closed invoice is never edited; finance "
        "issues a credit note and a new invoice",
        "- [Кредитни известия за затворени фактури](credit-note-bg.md) — Затворена фактура не се променя; "
        "финансите издават кредитно известие",
    ]))
    _write(memory / "billing/credit-note.md", CREDIT)
    _write(memory / "billing/credit-note-bg.md", CREDIT_BG)
    (root / "memtui.toml").write_text('[environments]\nproduction = "2.4"\n', encoding="utf-8")
    with Session.open(root, purpose="test", profile=SUPPORT) as s:
        gov.adopt(s)
    return root


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return seeded(tmp_path / "ws")


def _session(root: Path, profile: str | None = SUPPORT) -> Session:
    return Session.open(root, purpose="test", profile=profile)


def _scan(root: Path) -> consolidate.Report:
    return consolidate.scan(Workspace.open(root), today=_dt.date(2026, 12, 1))


def _kinds(report: consolidate.Report) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for c in report.candidates:
        out.setdefault(c.kind, []).append(c.articles)
    return out


def _entries(root: Path) -> int:
    with Session.open(root, read_only=True) as s:
        return len(s.audit.entries())


def test_every_kind_is_found_on_a_workspace_seeded_for_it(ws):
    with _session(ws, CURATOR) as s:  # a case contradicts an active experience entry
        gov.use(s, "support/experience/exp-a.md@1", case="CASE-9", source_request="SR-9",
                verdict="contradiction", check="the darkness was right; the head was worn")
    found = _kinds(_scan(ws))
    assert sorted(map(sorted, found["duplicate"])) == [
        ["billing/credit-note-bg.md", "billing/credit-note.md"],
        ["support/lockout-again.md", "support/lockout.md"]]
    assert found["conflict"] == [["support/experience/exp-a.md", "support/experience/exp-b.md"]]
    assert found["contested"] == [["support/experience/exp-a.md"]]
    assert found["stale"] == [["support/vpn.md"]]
    assert found["one-liner"] == [["support/vpn.md"]]
    report = _scan(ws)
    stale = next(c for c in report.candidates if c.kind == "stale")
    assert "production runs 2.4 now; the entry observed 2.3" in stale.reason and "days ago" in stale.reason
    assert all(c.owner == (CURATOR if c.node == "support/experience" else SUPPORT) for c in report.candidates)
    assert _scan(ws).counts() == {"duplicate": 2, "contested": 1, "conflict": 1, "stale": 1, "one-liner": 1,
                                  "ladder": 0, "skill-defect": 0}
    node_only = consolidate.scan(Workspace.open(ws), node="billing", today=_dt.date(2026, 12, 1))
    assert [c.kind for c in node_only.candidates] == ["duplicate"]


def test_nothing_is_found_on_the_sample_workspace_once_its_deliberate_mistakes_are_fixed(sample_copy):
    report = _scan(sample_copy)
    assert [(c.kind, c.articles) for c in report.candidates] == [
        ("one-liner", ["connectors/routecore/session-budget.md"])], "the sample's deliberate one-liner drift"
    index = sample_copy / "memory/connectors/routecore/AGENTS.md"
    index.write_text(index.read_text(encoding="utf-8").replace("600 calls per hour", "1,200 calls per hour"),
                     encoding="utf-8")
    assert _scan(sample_copy).candidates == []


def test_a_non_owner_is_refused_every_action_before_anything_is_written(ws):
    before = _entries(ws)
    with _session(ws, OTHER) as s:
        actions = [
            lambda: consolidate.merge(s, "support/lockout.md", "support/lockout-again.md"),
            lambda: consolidate.contest(s, "support/lockout.md", reason="wrong", case="C-1"),
            lambda: consolidate.resolve(s, "support/lockout.md", why="fine"),
            lambda: consolidate.reverify(s, "support/vpn.md", case="C-1", source_request="S-1",
                                         verdict="pass", check="looked"),
            lambda: consolidate.refresh_line(s, "support/vpn.md"),
            lambda: consolidate.undo_refresh_line(s, "support/vpn.md"),
        ]
        for action in actions:
            with pytest.raises(gov.RefusedError, match=f"owned by {SUPPORT}; you act as {OTHER}"):
                action()
    assert _entries(ws) == before


def test_merge_is_a_proposal_whose_approval_retires_the_duplicate_and_leaves_a_redirect(ws):
    with _session(ws) as s:
        proposal = consolidate.merge(s, "support/lockout.md", "support/lockout-again.md", reason="same subject")
        assert proposal.state == "proposed" and proposal.merge["retire"] == "support/lockout-again.md"
        assert (ws / "memory/support/lockout-again.md").exists(), "a proposal changes nothing in the tree yet"
        assert proposal in gov.Ledger(s.store).proposals(), "it waits in the proposals queue"
        meta = frontmatter.split(proposal.content).meta
        assert meta["aliases"] == ["account locked", "Locked AgentPortal accounts", "заключен акаунт"]
        assert meta["links"] == ["vpn.md", "../billing/credit-note.md"], "its links are carried over, once"
        gov.approve(s, proposal.id, reviewed=True)
        led = gov.Ledger(s.store)
        assert led.active("support/lockout.md").id == proposal.id
        retired = led.versions("support/lockout-again.md")[-1]
        assert retired.state == "retired" and gov.retired_how(retired) == f"retired_by: merge into {proposal.id}"
        actions = [e.action for e in s.audit.entries(newest_first=False)]
        assert actions[-2:] == ["consolidate.merge", "governance.activate"]
    assert not (ws / "memory/support/lockout-again.md").exists()
    index = MemoryTree(Workspace.open(ws)).index("support")
    assert [(r.target, r.new_target) for r in index.redirects] == [("lockout-again.md", "lockout.md")]
    assert "lockout-again.md" not in [e.target for e in index.entries]
    report = audit.run(Workspace.open(ws), use_cache=False)
    assert not [f for f in report.findings if f.code == "index-missing-file"], "the redirect is not a broken line"
    assert ["support/lockout.md", "support/lockout-again.md"] not in _kinds(_scan(ws)).get("duplicate", [])


def test_a_merge_is_undone_by_rejecting_it_and_its_redirect_goes_when_the_article_is_back(ws):
    with _session(ws) as s:
        first = consolidate.merge(s, "support/lockout.md", "support/lockout-again.md")
        gov.reject(s, first.id, "not the same after all")
        assert gov.Ledger(s.store).active("support/lockout-again.md").number == 1
        second = consolidate.merge(s, "support/lockout.md", "support/lockout-again.md")
        gov.approve(s, second.id, reviewed=True)
        gov.rollback(s, "support/lockout-again.md", 1, "the merge lost a detail")
    index = MemoryTree(Workspace.open(ws)).index("support")
    assert index.redirects == [] and "lockout-again.md" in [e.target for e in index.entries]
    assert (ws / "memory/support/lockout-again.md").read_text(encoding="utf-8") == LOCKOUT_AGAIN


def test_a_merge_refuses_when_the_duplicate_changed_since_it_was_filed(ws):
    with _session(ws) as s:
        proposal = consolidate.merge(s, "support/lockout.md", "support/lockout-again.md")
        gov.retire(s, "support/lockout-again.md", "gone anyway")
        with pytest.raises(gov.GovernanceError, match="file the merge again"):
            gov.approve(s, proposal.id, reviewed=True)


def test_contested_stays_active_marked_until_a_resolution_or_a_new_version(ws):
    article = "support/vpn.md"
    with _session(ws) as s:
        with pytest.raises(gov.GovernanceError, match="case .* or the article"):
            consolidate.contest(s, article, reason="wrong")
        c = consolidate.contest(s, article, reason="the office profile is shared now", against="support/lockout.md")
        led = gov.Ledger(s.store)
        assert led.marks(article) == ("contested",) and led.active(article).state == "active"
        assert c.against == "support/lockout.md" and c.source == "owner"
        consolidate.resolve(s, article, why="checked with the network team: profiles are still per office")
        assert gov.Ledger(s.store).marks(article) == ()
        assert [e.action for e in s.audit.entries(limit=2)] == ["consolidate.resolve", "consolidate.contest"]
        with pytest.raises(gov.GovernanceError, match="not contested"):
            consolidate.resolve(s, article, why="again")
        consolidate.contest(s, article, reason="again wrong", case="CASE-77")
        v = gov.propose(s, "support", "vpn.md", VPN.replace("per office", "per person"), case="CASE-77",
                        source_request="SR-77", profile=SUPPORT)
        gov.approve(s, v.id, reviewed=True)
        assert gov.Ledger(s.store).marks(article) == (), "a new version is not contested by the old contest"


def test_a_contradicting_use_of_an_active_version_contests_it_and_the_pins_show_it(ws):
    with _session(ws, CURATOR) as s:
        gov.use(s, "support/experience/exp-a.md@1", case="CASE-1", source_request="SR-1", verdict="pass",
                check="reproduced on a test printer")
        assert gov.Ledger(s.store).marks("support/experience/exp-a.md") == ()
        gov.use(s, "support/experience/exp-a.md@1", case="CASE-2", source_request="SR-2",
                verdict="contradiction", check="darkness was fine; the head was worn")
        led = gov.Ledger(s.store)
        assert led.marks("support/experience/exp-a.md") == ("contested",)
        assert led.open_contests("support/experience/exp-a.md")[0].case == "CASE-2"
        assert [p.status for p in consolidate.case_pins(led, "CASE-1")] == ["active, contested"]
        assert [p.case for p in consolidate.version_pins(led, "support/experience/exp-a.md@1")] == ["CASE-1", "CASE-2"]
        gov.retire(s, "support/experience/exp-a.md", "retracted")
        pinned = consolidate.case_pins(gov.Ledger(s.store), "CASE-1")
        assert [p.state for p in pinned] == ["retired"] and pinned[0].marks == ()


def test_reverify_makes_a_stale_entry_fresh_and_a_contradiction_contests_it(ws):
    article = "support/vpn.md"
    with _session(ws) as s:
        consolidate.reverify(s, article, case="CASE-5", source_request="SR-5", verdict="pass",
                             check="connected from a branch office", observed_version="2.4")
        assert [p.version for p in consolidate.case_pins(gov.Ledger(s.store), "CASE-5")] == [f"{article}@1"]
    assert "stale" not in _kinds(_scan(ws))
    later = consolidate.scan(Workspace.open(ws), today=_dt.date.today() + _dt.timedelta(days=400))
    assert [c.articles for c in later.candidates if c.kind == "stale"] == [[article]], "a check ages too"
    with _session(ws) as s:
        consolidate.reverify(s, article, case="CASE-6", source_request="SR-6", verdict="contradiction",
                             check="the client profile of another office connects fine now")
        assert gov.Ledger(s.store).marks(article) == ("contested",)
        assert s.audit.entries(limit=1)[0].action == "consolidate.reverify"


def test_refresh_writes_the_index_line_once_and_undo_puts_it_back(ws):
    index = ws / "memory/support/AGENTS.md"
    before = index.read_bytes()
    with _session(ws) as s:
        done = consolidate.refresh_line(s, "support/vpn.md")
        assert done["before"] == "Branch offices use the client VPN"
        assert done["after"] == "Branch offices reach InsCore through the site VPN; client profiles are per office"
        assert s.audit.entries(limit=1)[0].action == "consolidate.refresh-line"
        with pytest.raises(gov.GovernanceError, match="already says its summary"):
            consolidate.refresh_line(s, "support/vpn.md")
    assert "one-liner" not in _kinds(_scan(ws))
    after = index.read_text(encoding="utf-8")
    assert after.replace(done["after"], done["before"]).encode() == before, "only that line changed"
    with _session(ws) as s:
        consolidate.undo_refresh_line(s, "support/vpn.md")
        assert index.read_bytes() == before
        with pytest.raises(gov.GovernanceError, match="no refresh"):
            consolidate.undo_refresh_line(s, "support/vpn.md")


def test_undo_of_a_refresh_refuses_when_the_line_changed_since(ws):
    index = ws / "memory/support/AGENTS.md"
    with _session(ws) as s:
        done = consolidate.refresh_line(s, "support/vpn.md")
        index.write_text(index.read_text(encoding="utf-8").replace(done["after"], "someone else's words"),
                         encoding="utf-8")
        with pytest.raises(ConflictError, match="changed since"):
            consolidate.undo_refresh_line(s, "support/vpn.md")
    assert "someone else's words" in index.read_text(encoding="utf-8")


def test_contests_checks_and_redirects_survive_a_backup_round_trip(ws, tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path / "home")
    with _session(ws) as s:
        gov.approve(s, consolidate.merge(s, "support/lockout.md", "support/lockout-again.md").id, reviewed=True)
        consolidate.contest(s, "support/vpn.md", reason="profiles changed", case="CASE-3")
        consolidate.reverify(s, "billing/credit-note.md", case="CASE-4", source_request="SR-4",
                             verdict="pass", check="asked finance")
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    backup(Workspace.open(ws), tmp_path / "repo", "memtui-backup")
    checked = verify(tmp_path / "repo", None, "memtui-backup")
    assert checked.ok and not checked.differences
    restore(tmp_path / "repo", None, "memtui-backup", tmp_path / "out")
    with Session.open(tmp_path / "out", read_only=True) as s:
        led = gov.Ledger(s.store)
        assert led.marks("support/vpn.md") == ("contested",)
        assert [c.case for c in led.checks("billing/credit-note.md")] == ["CASE-4"]
    assert MemoryTree(Workspace.open(tmp_path / "out")).index("support").redirects[0].new_target == "lockout.md"


# -- the CLI -------------------------------------------------------------------------------------

def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memtui", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_lists_candidates_as_a_page_and_the_actions_refuse_a_non_owner(ws):
    done = _cli("consolidate", "-w", str(ws), "--json", "--limit", "2")
    assert done.returncode == 1, done.stderr
    page = json.loads(done.stdout)
    assert page["count"] == 2 and page["total"] == 5 and page["cursor"] == "2"
    rest = json.loads(_cli("consolidate", "-w", str(ws), "--json", "--cursor", page["cursor"]).stdout)
    assert rest["count"] == 3 and rest["cursor"] is None
    keys = {c["key"] for c in page["candidates"] + rest["candidates"]}
    assert "one-liner:support/vpn.md" in keys and "stale:support/vpn.md" in keys
    assert _cli("consolidate", "-w", str(ws), "--limit", "0").returncode == 2
    assert _cli("consolidate", "-w", str(ws), "--cursor", "x").returncode == 2
    refused = _cli("refresh", "support/vpn.md", "-w", str(ws), "--as", OTHER, "--yes")
    assert refused.returncode == 3 and f"owned by {SUPPORT}" in refused.stderr
    unasked = _cli("refresh", "support/vpn.md", "-w", str(ws), "--as", OTHER)
    assert unasked.returncode == 3 and "owned by" in unasked.stderr, "refused before asking for confirmation"
    ok = _cli("refresh", "support/vpn.md", "-w", str(ws), "--as", SUPPORT, "--yes", "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["after"].startswith("Branch offices reach InsCore")
    contest = _cli("contest", "support/vpn.md", "-w", str(ws), "--as", SUPPORT, "--yes", "--reason", "r",
                   "--case", "C-1", "--json")
    assert contest.returncode == 0 and json.loads(contest.stdout)["source"] == "owner"
    pins = _cli("reverify", "billing/credit-note.md", "-w", str(ws), "--as", SUPPORT, "--case", "C-2",
                "--source-request", "S-2", "--verdict", "pass", "--check", "asked")
    assert pins.returncode == 0, pins.stderr
    listed = json.loads(_cli("pins", "-w", str(ws), "--case", "C-2", "--json").stdout)
    assert listed["total"] == 1 and listed["pins"][0]["status"] == "active"
    merged = _cli("merge", "billing/credit-note.md", "billing/credit-note-bg.md", "-w", str(ws), "--as", SUPPORT,
                  "--yes", "--json")
    assert merged.returncode == 0 and json.loads(merged.stdout)["merge"]["retire"] == "billing/credit-note-bg.md"


def test_cli_consolidate_exits_0_when_there_is_nothing_to_consolidate(sample_copy):
    index = sample_copy / "memory/connectors/routecore/AGENTS.md"
    index.write_text(index.read_text(encoding="utf-8").replace("600 calls per hour", "1,200 calls per hour"),
                     encoding="utf-8")
    done = _cli("consolidate", "-w", str(sample_copy))
    assert done.returncode == 0 and "nothing to consolidate" in done.stdout

