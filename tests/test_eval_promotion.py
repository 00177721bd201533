"""`memtui eval promotion`: both promotion rules measured per node, on the ledger's history and on
held-out triage cases; a node may require review instead of two uses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memtui.core import governance as gov
from memtui.core.governance import promotion
from memtui.core.session import Session
from memtui.core.store import Store
from memtui.core.workspace import Workspace
from tests.conftest import run_cli

EXP13 = "support/experience/exp-013-label-printer-blank.md"
GPS = "support/courier-app/gps-drift.md"
CURATOR, LEAD = "support.curator", "support.lead"


def _sample_promotions(ws: Path) -> None:
    """exp-013@1 promoted by its two uses, then contradicted; gps-drift@2 by review, then rolled back."""
    with Session.open(ws, profile=CURATOR) as s:
        gov.approve(s, f"{EXP13}@1")
        gov.use(s, f"{EXP13}@1", case="CASE-9", source_request="SR-9", verdict="contradiction",
                check="the printer runs other firmware")
    with Session.open(ws, profile="support.courier-app") as s:
        gov.approve(s, f"{GPS}@2", reviewed=True)
        gov.rollback(s, GPS, 1, "the drift came back")


def test_history_on_the_sample_reports_both_rules_per_node(sample_copy: Path, capsys) -> None:
    _sample_promotions(sample_copy)
    store = Store.open(sample_copy, read_only=True)
    promoted = {p.version: p for p in promotion.history(store)}
    store.close()
    assert promoted[f"{EXP13}@1"].rule == "uses"
    assert set(promoted[f"{EXP13}@1"].events) == {"contested", "contradicted"}
    assert promoted[f"{GPS}@2"].rule == "review" and set(promoted[f"{GPS}@2"].events) == {"rolled back"}
    assert all(p.rule in ("uses", "review") for p in promoted.values())  # baselines are left out
    code, out, _ = run_cli(capsys, "eval", "promotion", "-w", str(sample_copy), "--json")
    data = json.loads(out)
    assert code == 0
    pairs = {(r["node"], r["rule"]): r for r in data["nodes"]}
    assert set(pairs) == {("support/courier-app", "review"), ("support/courier-app", "uses"),
                          ("support/experience", "review"), ("support/experience", "uses")}
    assert pairs[("support/experience", "uses")]["events"]["contradicted"] == 1
    assert pairs[("support/courier-app", "review")]["events"]["rolled back"] == 1
    code, out, _ = run_cli(capsys, "eval", "promotion", "-w", str(sample_copy))
    assert code == 0 and "2 promoted versions (1 by two uses, 1 by review)" in out
    assert f"{EXP13}@1  by uses  active: contested after" in out


def test_domain_filter_and_bad_input(sample_copy: Path, capsys, tmp_path: Path) -> None:
    _sample_promotions(sample_copy)
    code, out, _ = run_cli(capsys, "eval", "promotion", "-w", str(sample_copy), "--domain", "support/experience",
                           "--json")
    assert code == 0 and {v["node"] for v in json.loads(out)["versions"]} == {"support/experience"}
    code, _, err = run_cli(capsys, "eval", "promotion", "-w", str(sample_copy), "--domain", "no/such")
    assert code == 2 and "is not a folder of the memory tree" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "eval", "promotion", "-w", str(sample_copy), "--cases", str(bad))
    assert code == 2 and 'a case needs a text "id" and a text "ticket"' in err


def _triage_copy(shared: Path, tmp_path: Path) -> Path:
    ws = tmp_path / "tri"
    shutil.copytree(shared / "triage" / "memory", ws / "memory")
    (ws / "memtui.toml").write_text(
        f'[user]\nprofile = "{CURATOR}"\n\n[owners]\n"" = "{LEAD}"\n"support/experience" = "{CURATOR}"\n',
        encoding="utf-8")
    return ws


def _entry(ws: Path, eid: str) -> str:
    path = next((ws / "memory/support/experience").glob(f"{eid}-*.md"))
    return f"support/experience/{path.name}"


def test_held_out_cases_say_what_each_promoted_version_did(shared: Path, tmp_path: Path, capsys) -> None:
    ws = _triage_copy(shared, tmp_path)
    cases = [json.loads(line) for line in (shared / "triage/dev-cases.jsonl").read_text("utf-8").splitlines()
             if line.strip()]
    relevant = list(dict.fromkeys(r for c in cases for r in c.get("relevant") or [] if r.startswith("exp-")))
    by_uses, by_review = relevant[0], relevant[1]
    unrelated = "exp-0" + next(f"{n:02d}" for n in range(1, 99)
                               if f"exp-0{n:02d}" not in {r for c in cases for r in c.get("relevant") or []}
                               and list((ws / "memory/support/experience").glob(f"exp-0{n:02d}-*.md")))
    with Session.open(ws, profile=CURATOR) as s:
        for eid, how in ((by_uses, "uses"), (by_review, "review"), (unrelated, "review")):
            article = _entry(ws, eid)
            gov.adopt(s, article)
            text = (ws / "memory" / article).read_text("utf-8") + "\nRe-checked against the running system.\n"
            v = gov.propose(s, "support/experience", article.rsplit("/", 1)[1], text, case=f"P-{eid}",
                            source_request=f"SR-P-{eid}", profile="support.investigator")
            if how == "uses":
                for n in (1, 2):
                    gov.use(s, v.id, case=f"U{n}-{eid}", source_request=f"SR-U{n}-{eid}", verdict="pass",
                            check="reproduced")
            gov.approve(s, v.id, reviewed=how == "review")
    code, out, _ = run_cli(capsys, "eval", "promotion", "-w", str(ws), "--cases",
                           str(shared / "triage/dev-cases.jsonl"), "--domain", "support/experience", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["held_out"]["cases"] == len(cases)
    outcome = {v["article"]: v["held_out"] for v in data["versions"]}
    assert set(outcome.values()) <= set(promotion.OUTCOMES)
    assert outcome[_entry(ws, by_uses)] in ("right precedent", "false precedent")
    rows = {(r["node"], r["rule"]): r for r in data["nodes"]}
    assert rows[("support/experience", "uses")]["promoted"] == 1
    assert rows[("support/experience", "review")]["promoted"] == 2
    assert sum(rows[("support/experience", "review")]["held_out"].values()) == 2


def test_a_node_may_require_review_instead_of_two_uses(sample_copy: Path, capsys) -> None:
    agents = sample_copy / "memory/support/experience/AGENTS.md"
    text = agents.read_text("utf-8")
    if text.startswith("---\n"):
        agents.write_text("---\npromotion: review\n" + text[4:], encoding="utf-8")
    else:
        agents.write_text("---\npromotion: review\n---\n" + text, encoding="utf-8")
    ws = Workspace.open(sample_copy)
    assert promotion.required_rule(ws, "support/experience") == ("review", "support/experience (front matter)")
    assert promotion.required_rule(ws, "support/courier-app")[0] == "uses"
    with Session.open(sample_copy, profile=CURATOR) as s:
        with pytest.raises(gov.NeedsReview, match="requires human review to promote"):
            gov.approve(s, f"{EXP13}@1")
        assert gov.Ledger(s.store).get(f"{EXP13}@1").state == "proposed"
        gov.approve(s, f"{EXP13}@1", reviewed=True)
    code, out, _ = run_cli(capsys, "eval", "promotion", "-w", str(sample_copy))
    assert "support/experience promotes by human review (set in support/experience (front matter))" in out
    code, out, _ = run_cli(capsys, "audit", "-w", str(sample_copy), "--json")
    notes = [f for f in json.loads(out)["findings"] if f["code"] == "promotion-review-required"]
    assert [f["path"] for f in notes] == ["memory/support/experience/AGENTS.md"]


def test_the_setting_in_memtui_toml_is_inherited(sample_copy: Path) -> None:
    toml = sample_copy / "memtui.toml"
    toml.write_text(toml.read_text("utf-8") + '\n[promotion]\n"support" = "review"\n', encoding="utf-8")
    ws = Workspace.open(sample_copy)
    assert promotion.required_rule(ws, "support/experience") == ("review", "support (memtui.toml)")
    toml.write_text(toml.read_text("utf-8").replace('"support" = "review"', '"support" = "sometimes"'),
                    encoding="utf-8")
    from memtui.core.config import load

    _, findings = load(toml)
    assert any("[promotion] 'support' must be" in f.message for f in findings)


def test_the_audit_notes_each_node_that_sets_review_itself_and_no_other(sample_copy: Path) -> None:
    """The audit's note reads only each node's own setting (the bytes of its index name it, or
    memtui.toml does); nodes that inherit the rule, an index that only mentions the word in its
    text, and a node that sets "uses" get none — the same nodes as the promotion rule says."""
    toml = sample_copy / "memtui.toml"
    toml.write_text(toml.read_text("utf-8") + '\n[promotion]\n"support" = "review"\n', encoding="utf-8")
    mentions = sample_copy / "memory/platform/AGENTS.md"
    mentions.write_text(mentions.read_text("utf-8") + "\nThe promotion of articles follows the root.\n", "utf-8")
    agents = sample_copy / "memory/support/experience/AGENTS.md"
    text = agents.read_text("utf-8")
    agents.write_text(("---\npromotion: uses\n" + text[4:]) if text.startswith("---\n")
                      else "---\npromotion: uses\n---\n" + text, encoding="utf-8")
    ws = Workspace.open(sample_copy)
    from memtui.core.tree.model import MemoryTree

    tree = MemoryTree(ws)
    expected = sorted(n for n in tree.walk_nodes()
                      if promotion.required_rule(ws, n, tree)[1].startswith(f"{n or 'root'} (")
                      and promotion.required_rule(ws, n, tree)[0] == "review")
    assert expected == ["support"]
    notes = promotion.audit_findings(ws)
    assert [(f.path, f.message.split(" and ")[0]) for f in notes] == [("memtui.toml", "support")]
