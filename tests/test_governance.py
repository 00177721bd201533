"""Governed memory: every rule of seed 000 §2 rule 7 and §7.4b as a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.core import atomic, governance as gov
from memtui.core.governance.intents import transition
from memtui.core.tree.index import index_with_line, index_without_line
from memtui.core.auditlog import AuditLog
from memtui.core.errors import ConflictError, ReadOnlyError
from memtui.core.session import Session
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace

CURATOR = "support.curator"
LEAD = "support.lead"
LOCKOUT_V1 = "---\ntitle: Account lockout\nsummary: Five failed logins lock an account for 15 minutes\n---\n# Account lockout\n\nFive failed logins lock the account.\n"
LOCKOUT_V2 = LOCKOUT_V1.replace("Five failed logins lock the account.", "Five failed logins lock the account; an admin unlocks it.")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A small workspace: root, support (owned by support.lead, one article), experience
    (owned by support.curator through memtui.toml)."""
    root = tmp_path / "ws"
    _write(root / "memtui.toml", f'[user]\nprofile = "{CURATOR}"\n\n[owners]\n"support/experience" = "{CURATOR}"\n')
    _write(root / "memory/AGENTS.md", "---\nowner: root.agent\n---\n# Memory\n\n## Child nodes\n\n"
                                      "- [Support](support/AGENTS.md) — the support desk\n")
    _write(root / "memory/support/AGENTS.md",
           f"---\nowner: {LEAD}\n---\n# Support\n\n## Articles\n\n"
           "* [Account lockout](lockout.md) — old one-liner\n\n## Child nodes\n\n"
           "- [Experience](experience/AGENTS.md) — past cases\n")
    _write(root / "memory/support/lockout.md", LOCKOUT_V1)
    _write(root / "memory/support/experience/AGENTS.md", "# Experience\n\n## Entries\n\n")
    return root


def _session(root: Path, profile: str | None = CURATOR) -> Session:
    return Session.open(root, purpose="test", profile=profile)


def _propose(s: Session, node="support/experience", article="exp-1.md", text="# Case one\n\nThe mechanism.\n",
             case="C1", sr="SR1", **kw) -> gov.Version:
    return gov.propose(s, node, article, text, case=case, source_request=sr, profile="support.investigator", **kw)


def _actions(s: Session) -> list[str]:
    return [e.action for e in AuditLog(s.store).entries(newest_first=False)]


# -- intake -----------------------------------------------------------------------------------------

def test_propose_stores_a_proposal_and_writes_nothing_in_the_tree(ws):
    before = {p: p.read_bytes() for p in (ws / "memory").rglob("*") if p.is_file()}
    with _session(ws) as s:
        v = _propose(s)
        assert v.state == "proposed" and v.id == "support/experience/exp-1.md@1"
        assert v.provenance["case"] == "C1" and v.provenance["kind"] == "proposal"
        assert v.sha256 == atomic.sha256(b"# Case one\n\nThe mechanism.\n")
        assert _actions(s) == ["governance.propose"]
    after = {p: p.read_bytes() for p in (ws / "memory").rglob("*") if p.is_file()}
    assert after == before  # a proposal is absent from the tree (seed 000 §2 rule 7)


def test_a_retried_propose_with_the_same_client_id_is_filed_once(ws):
    with _session(ws) as s:
        first = _propose(s, client_id="req-1")
        again = _propose(s, client_id="req-1")
        assert again.id == first.id and len(gov.Ledger(s.store).versions()) == 1
        assert _actions(s) == ["governance.propose"]


def test_anyone_may_propose_into_any_node(ws):
    with _session(ws, profile="someone.else") as s:
        assert _propose(s, node="support", article="lockout.md", text=LOCKOUT_V2).state == "proposed"


def test_propose_needs_provenance(ws):
    with _session(ws) as s:
        with pytest.raises(gov.GovernanceError, match="case id and source-request"):
            _propose(s, case="")
        with pytest.raises(gov.GovernanceError, match="inside memory"):
            _propose(s, article="../../etc/passwd.md")
        assert gov.Ledger(s.store).versions() == []


def test_two_open_sessions_both_write_and_a_read_only_one_refuses(ws):
    """An open session blocks nobody (invariant 2): a TUI and an agent's CLI both file."""
    with _session(ws) as tui, _session(ws) as agent:
        assert not tui.read_only and not agent.read_only
        first = _propose(tui)
        second = _propose(agent, article="exp-2.md")
        assert [v.id for v in gov.Ledger(tui.store).versions()] == [first.id, second.id]
    with Session.open(ws, profile=CURATOR, read_only=True) as reader:
        with pytest.raises(ReadOnlyError, match="read-only"):
            _propose(reader, article="exp-3.md")
        assert len(gov.Ledger(reader.store).versions()) == 2


def test_use_needs_an_independent_check_and_a_known_verdict(ws):
    with _session(ws) as s:
        v = _propose(s)
        with pytest.raises(gov.GovernanceError, match="mere retrieval"):
            gov.use(s, v.id, case="C2", source_request="SR2", verdict="pass", check="")
        with pytest.raises(gov.GovernanceError, match="verdict"):
            gov.use(s, v.id, case="C2", source_request="SR2", verdict="ok", check="x")
        with pytest.raises(gov.GovernanceError, match="origin-of"):
            gov.use(s, v.id, case="C2", source_request="SR2", verdict="pass", check="x", origin="fork")
        u = gov.use(s, v.id, case="C2", source_request="SR2", verdict="pass", check="reproduced on test")
        assert u.hash == v.sha256
        pins = gov.Ledger(s.store).pins("C2")
        assert [(p["version"], p["hash"]) for p in pins] == [(v.id, v.sha256)]  # the case is pinned


# -- eligibility --------------------------------------------------------------------------------------

def _use(s, v, case, sr, verdict="pass", origin="independent", of=None, hash=None):
    return gov.use(s, v.id, case=case, source_request=sr, verdict=verdict, check="checked against the log",
                   origin=origin, origin_of=of, hash=hash)


def test_two_independent_passing_uses_make_a_proposal_eligible(ws):
    with _session(ws) as s:
        v = _propose(s)
        led = gov.Ledger(s.store)
        assert not gov.eligibility(led, v).by_uses
        _use(s, v, "C2", "SR2")
        e = gov.eligibility(led, v)
        assert not e.by_uses and "1 more independent passing use" in e.reasons[0]
        _use(s, v, "C3", "SR3")
        e = gov.eligibility(led, v)
        assert e.by_uses and [u.case for u in e.counted] == ["C2", "C3"] and e.reasons == []


@pytest.mark.parametrize("second, why", [
    (dict(case="C3", sr="SR3", origin="subcase", of="C1"), "subcase of the proposing case"),
    (dict(case="C3", sr="SR3", origin="mirror", of="C1"), "mirror of the proposing case"),
    (dict(case="C3", sr="SR3", origin="fork", of="C2"), "fork of case C2"),
    (dict(case="C3", sr="SR2"), "share the source request"),
    (dict(case="C1", sr="SR9"), "is the proposing case"),
    (dict(case="C3", sr="SR1"), "proposal's own source request"),
    (dict(case="C3", sr="SR3", verdict="contradiction"), "contradiction"),
    (dict(case="C3", sr="SR3", hash="0" * 64), "another hash"),
])
def test_uses_that_are_not_independent_do_not_count(ws, second, why):
    with _session(ws) as s:
        v = _propose(s)
        _use(s, v, "C2", "SR2")
        _use(s, v, second["case"], second["sr"], verdict=second.get("verdict", "pass"),
             origin=second.get("origin", "independent"), of=second.get("of"), hash=second.get("hash"))
        e = gov.eligibility(gov.Ledger(s.store), v)
        assert not e.by_uses
        assert any(why in r for r in e.reasons), e.reasons


def test_a_contradiction_blocks_even_with_two_passes(ws):
    with _session(ws) as s:
        v = _propose(s)
        for c in ("C2", "C3"):
            _use(s, v, c, "SR" + c)
        _use(s, v, "C4", "SR4", verdict="contradiction")
        e = gov.eligibility(gov.Ledger(s.store), v)
        assert not e.by_uses and "contradiction" in e.summary


def test_assigned_validation_cases_are_the_only_uses_that_count(ws):
    with _session(ws) as s:
        v = _propose(s)
        gov.assign(s, v.id, ["C5", "C6"])
        _use(s, v, "C2", "SR2")
        _use(s, v, "C3", "SR3")  # two independent passes, but neither is an assigned case
        e = gov.eligibility(gov.Ledger(s.store), v)
        assert not e.by_uses
        assert any("the use by case C2 does not count: the validation cases assigned are C5, C6" in r
                   for r in e.reasons), e.reasons
        with pytest.raises(gov.NeedsReview):
            gov.approve(s, v.id)
        _use(s, v, "C5", "SR5")
        assert not gov.eligibility(gov.Ledger(s.store), v).by_uses
        _use(s, v, "C6", "SR6")
        e = gov.eligibility(gov.Ledger(s.store), v)
        assert e.by_uses and [u.case for u in e.counted] == ["C5", "C6"]


def test_without_assigned_cases_any_independent_cases_count(ws):
    with _session(ws) as s:
        v = _propose(s)
        _use(s, v, "C2", "SR2")
        _use(s, v, "C3", "SR3")
        assert gov.eligibility(gov.Ledger(s.store), v).by_uses


# -- activation -------------------------------------------------------------------------------------

def test_only_the_owner_activates_and_the_refusal_names_the_owner(ws):
    with _session(ws, profile="support.investigator") as s:
        v = _propose(s)
        with pytest.raises(gov.RefusedError) as exc:
            gov.approve(s, v.id, reviewed=True)
        assert str(exc.value) == "support/experience is owned by support.curator; you act as support.investigator"
        assert gov.Ledger(s.store).get(v.id).state == "proposed"
    assert not (ws / "memory/support/experience/exp-1.md").exists()


def test_without_uses_only_human_review_promotes(ws):
    with _session(ws) as s:
        v = _propose(s)
        with pytest.raises(gov.RefusedError, match="only human review promotes"):
            gov.approve(s, v.id)
        active = gov.approve(s, v.id, reviewed=True)
        assert active.state == "active" and active.decision["by"] == CURATOR
        assert active.decision["why"] == "promoted by human review"


def test_activation_writes_article_and_index_line_and_audits(ws):
    with _session(ws) as s:
        v = _propose(s, title="Case one", one_liner="the mechanism, in one line")
        for c in ("C2", "C3"):
            _use(s, v, c, "SR" + c)
        gov.approve(s, v.id)
        assert (ws / "memory/support/experience/exp-1.md").read_bytes() == b"# Case one\n\nThe mechanism.\n"
        index = MemoryTree(Workspace.open(ws)).index("support/experience")
        assert [(e.title, e.path, e.one_liner) for e in index.entries] == [
            ("Case one", "support/experience/exp-1.md", "the mechanism, in one line")]
        entry = AuditLog(s.store).entries()[0]
        assert entry.action == "governance.activate" and entry.target == "memory/support/experience/exp-1.md"
        assert entry.after == v.sha256 and entry.detail["promoted_by"] == "uses"
        assert s.store.table("intents").all() == []


def test_activating_retires_the_previous_version_and_updates_the_line_in_place(ws):
    with _session(ws, profile=LEAD) as s:
        [base] = gov.adopt(s, "support/lockout.md")
        v2 = _propose(s, node="support", article="lockout.md", text=LOCKOUT_V2)
        assert v2.based_on == 1 and v2.base_hash == base.sha256
        gov.approve(s, v2.id, reviewed=True)
        led = gov.Ledger(s.store)
        assert [(v.number, v.state) for v in led.versions("support/lockout.md")] == [(1, "retired"), (2, "active")]
        assert led.get(base.id).content == LOCKOUT_V1  # the record stays whole
    text = (ws / "memory/support/AGENTS.md").read_text()
    assert "* [Account lockout](lockout.md) — Five failed logins lock an account for 15 minutes\n" in text
    assert text.count("lockout.md") == 1
    assert (ws / "memory/support/lockout.md").read_text() == LOCKOUT_V2


def test_publishing_over_an_untracked_or_edited_file_refuses(ws):
    with _session(ws, profile=LEAD) as s:
        v = _propose(s, node="support", article="lockout.md", text=LOCKOUT_V2)
        with pytest.raises(ConflictError, match="untracked; adopt it first"):
            gov.approve(s, v.id, reviewed=True)
        gov.adopt(s, "support/lockout.md")
        (ws / "memory/support/lockout.md").write_text("edited by hand\n")
        with pytest.raises(ConflictError, match="unrecorded edit"):
            gov.approve(s, v.id, reviewed=True)
    assert (ws / "memory/support/lockout.md").read_text() == "edited by hand\n"


def test_reject_needs_a_reason_and_decided_records_are_never_edited(ws):
    with _session(ws) as s:
        v = _propose(s)
        with pytest.raises(gov.GovernanceError, match="needs a reason"):
            gov.reject(s, v.id, "  ")
        r = gov.reject(s, v.id, "duplicates exp-001")
        assert r.state == "rejected" and r.decision["why"] == "duplicates exp-001"
        with pytest.raises(gov.GovernanceError, match="never edited"):
            gov.approve(s, v.id, reviewed=True)
        with pytest.raises(gov.GovernanceError, match="never edited"):
            gov.reject(s, v.id, "again")
        assert gov.Ledger(s.store).get(v.id).decision == r.decision


def test_retire_removes_file_and_index_line_and_keeps_the_record(ws):
    with _session(ws, profile=LEAD) as s:
        gov.adopt(s, "support/lockout.md")
        with _session(ws, profile=CURATOR):
            pass
        r = gov.retire(s, "support/lockout.md", "superseded by the SSO article")
        assert r.state == "retired" and r.retirement["why"] == "superseded by the SSO article"
        assert r.content == LOCKOUT_V1
        with pytest.raises(gov.GovernanceError, match="never edited"):
            transition(s.store, gov.Ledger(s.store).get(r.id), "active", "decision", {})
    assert not (ws / "memory/support/lockout.md").exists()
    assert "lockout.md" not in (ws / "memory/support/AGENTS.md").read_text()


def test_retire_by_a_non_owner_refuses(ws):
    with _session(ws, profile=LEAD) as s:
        gov.adopt(s, "support/lockout.md")
    with _session(ws, profile=CURATOR) as s, \
            pytest.raises(gov.RefusedError, match="support is owned by support.lead; you act as support.curator"):
        gov.retire(s, "support/lockout.md")
    assert (ws / "memory/support/lockout.md").exists()


def test_rollback_publishes_a_new_version_with_the_earlier_content(ws):
    with _session(ws, profile=LEAD) as s:
        gov.adopt(s, "support/lockout.md")
        v2 = _propose(s, node="support", article="lockout.md", text=LOCKOUT_V2)
        gov.approve(s, v2.id, reviewed=True)
        v3 = gov.rollback(s, "support/lockout.md", 1, "v2 was wrong about admins")
        assert (v3.number, v3.state, v3.content) == (3, "active", LOCKOUT_V1)
        assert v3.provenance["kind"] == "rollback" and v3.provenance["rollback_of"] == 1
        led = gov.Ledger(s.store)
        assert [(v.number, v.state) for v in led.versions("support/lockout.md")] == [
            (1, "retired"), (2, "retired"), (3, "active")]
        assert led.get(v2.id).content == LOCKOUT_V2
        with pytest.raises(gov.GovernanceError, match="no accepted version 7"):
            gov.rollback(s, "support/lockout.md", 7)
        assert _actions(s)[-1] == "governance.rollback"
    assert (ws / "memory/support/lockout.md").read_text() == LOCKOUT_V1


def test_untrusted_provenance_stays_marked_in_later_versions(ws):
    with _session(ws, profile=LEAD) as s:
        gov.adopt(s, "support/lockout.md")
        v2 = _propose(s, node="support", article="lockout.md", text=LOCKOUT_V2, untrusted=True,
                      sources=["https://forum.example/thread"])
        gov.approve(s, v2.id, reviewed=True)
        v3 = _propose(s, node="support", article="lockout.md", text=LOCKOUT_V2 + "More.\n")
        assert v3.untrusted  # built on an untrusted active version, without saying so
        gov.approve(s, v3.id, reviewed=True)
        (ws / "memory/support/lockout.md").write_text(LOCKOUT_V2 + "Edited.\n")
        [v4] = gov.adopt(s, "support/lockout.md")
        assert v4.untrusted and v4.provenance["kind"] == "external edit"
        v5 = gov.rollback(s, "support/lockout.md", 2)
        assert v5.untrusted
        v6 = gov.rollback(s, "support/lockout.md", 1)
        assert not v6.untrusted  # the baseline content's own chain is trusted


def test_a_new_node_needs_an_owner_and_updates_the_parent_index_in_the_same_change(ws):
    with _session(ws, profile=LEAD) as s:
        with pytest.raises(gov.GovernanceError, match="only with an owner"):
            _propose(s, node="support/sso", article="sso-loop.md")
        v = _propose(s, node="support/sso", article="sso-loop.md", text="# SSO loop\n\nCookie domain.\n",
                     new_node_owner="support.sso", new_node_title="Single sign-on",
                     new_node_line="SSO redirects and cookie domains")
        gov.approve(s, v.id, reviewed=True)  # the parent's owner activates the first version
        entry = AuditLog(s.store).entries()[0]
        assert entry.action == "governance.activate"
    tree = MemoryTree(Workspace.open(ws))
    assert tree.is_node("support/sso")
    assert tree.owner("support/sso") == ("support.sso", "front matter")
    assert [e.path for e in tree.index("support/sso").entries] == ["support/sso/sso-loop.md"]
    children = tree.index("support").children
    assert ("Single sign-on", "support/sso/AGENTS.md", "SSO redirects and cookie domains") in [
        (c.title, c.path, c.one_liner) for c in children]


# -- adoption, unrecorded edits ----------------------------------------------------------------------

def test_opening_never_adopts_and_adopt_records_a_baseline(ws):
    Session.open(ws, purpose="test").close()
    with _session(ws) as s:
        assert gov.Ledger(s.store).versions() == []
        assert gov.untracked(s.ws, s.store) == ["support/lockout.md"]
        [v] = gov.adopt(s)
        assert (v.number, v.state, v.provenance["kind"]) == (1, "active", "baseline")
        assert v.content == LOCKOUT_V1 and gov.untracked(s.ws, s.store) == []
        assert gov.adopt(s) == []  # nothing left to adopt


def test_unrecorded_edit_is_a_finding_the_owner_adopts_or_reverts(ws):
    wsobj = Workspace.open(ws)
    assert gov.audit_findings(wsobj) == []  # never governed: nothing to say
    _write(ws / "memory/support/experience/exp-0.md", "# Zero\n")
    with _session(ws, profile=LEAD) as s:
        gov.adopt(s, "support/experience/exp-0.md")
        [f] = gov.audit_findings(wsobj)
        assert (f.code, f.path) == ("untracked", "memory/support/AGENTS.md") and "lockout.md" in f.message
        gov.adopt(s)
    assert gov.audit_findings(wsobj) == []
    (ws / "memory/support/lockout.md").write_text("hand edit\n")
    [f] = gov.audit_findings(wsobj)
    assert (f.code, f.path) == ("unrecorded-edit", "memory/support/lockout.md")
    with _session(ws, profile=CURATOR) as s:
        with pytest.raises(gov.RefusedError, match="owned by support.lead"):
            gov.adopt(s, "support/lockout.md")
        with pytest.raises(gov.RefusedError):
            gov.revert(s, "support/lockout.md")
    with _session(ws, profile=LEAD) as s:
        gov.revert(s, "support/lockout.md")
        assert (ws / "memory/support/lockout.md").read_text() == LOCKOUT_V1
        assert gov.audit_findings(wsobj) == []
        (ws / "memory/support/lockout.md").write_text("hand edit\n")
        [v] = gov.adopt(s, "support/lockout.md")
        assert (v.number, v.state, v.provenance["kind"]) == (2, "active", "external edit")
    assert gov.audit_findings(wsobj) == []


def test_entry_states_give_state_and_version(ws):
    with _session(ws, profile=LEAD) as s:
        assert gov.entry_states(s.ws, "support", s.store) == {}
        gov.adopt(s)
        assert gov.entry_states(s.ws, "support", s.store) == {"support/lockout.md": ("active", 1)}
        (ws / "memory/support/lockout.md").write_text("x\n")
        assert gov.entry_states(s.ws, "support") == {"support/lockout.md": ("edited", 1)}


# -- one atomic change: interrupted and completed ------------------------------------------------------

def _cut_file_writes(monkeypatch, when) -> None:
    """Make the guarded write's file installs (atomic.replace_exact / create_exact) raise
    KeyboardInterrupt ("power cut") for paths ``when(path)`` accepts."""
    for name in ("replace_exact", "create_exact"):
        real = getattr(atomic, name)

        def cut(path, data, *a, _real=real, **kw):
            if when(Path(path)):
                raise KeyboardInterrupt("power cut")
            return _real(path, data, *a, **kw)

        monkeypatch.setattr(atomic, name, cut)


def test_an_activation_cut_between_the_two_writes_is_completed_on_next_open(ws, monkeypatch):
    with _session(ws) as s:
        v = _propose(s)
        with monkeypatch.context() as cut:
            _cut_file_writes(cut, lambda path: path.name == "AGENTS.md")
            with pytest.raises(KeyboardInterrupt):
                gov.approve(s, v.id, reviewed=True)
        assert (ws / "memory/support/experience/exp-1.md").exists()  # first write done
        assert "exp-1.md" not in (ws / "memory/support/experience/AGENTS.md").read_text()
        assert len(s.store.table("intents").all()) == 1
        assert [f.code for f in gov.audit_findings(s.ws) if f.code == "governance-pending"] == ["governance-pending"]
    with _session(ws) as s:  # opening completes it
        led = gov.Ledger(s.store)
        assert s.store.table("intents").all() == [] and led.get(v.id).state == "active"
        assert "exp-1.md" in (ws / "memory/support/experience/AGENTS.md").read_text()
        assert _actions(s).count("governance.activate") == 1


def test_a_pending_intent_never_overwrites_a_file_changed_meanwhile(ws, monkeypatch):
    with _session(ws) as s:
        v = _propose(s)
        with monkeypatch.context() as cut:
            _cut_file_writes(cut, lambda path: "memory" in path.parts)  # before the first file
            with pytest.raises(KeyboardInterrupt):
                gov.approve(s, v.id, reviewed=True)
    (ws / "memory/support/experience/exp-1.md").write_text("someone else wrote this\n")
    with _session(ws) as s:
        assert any(f.code == "governance-pending" for f in s.findings)
        assert (ws / "memory/support/experience/exp-1.md").read_text() == "someone else wrote this\n"
        assert len(s.store.table("intents").all()) == 1


# -- inbox ------------------------------------------------------------------------------------------

INBOX_FILE = ("---\nnode: support/experience\narticle: exp-9.md\ncase: C9\nsource_request: SR9\n"
              "profile: support.investigator\nuntrusted: true\nsources: [https://x.example]\n---\n"
              "# Case nine\n\nMechanism nine.\n")


def test_ingest_files_each_inbox_file_once_even_when_interrupted(ws, monkeypatch):
    inbox = ws / gov.INBOX
    _write(inbox / "a.md", INBOX_FILE)
    _write(inbox / "bad.md", "no front matter\n")
    calls = []

    def crash_remove(path, *a, **k):
        calls.append(Path(path).name)
        raise KeyboardInterrupt("killed before the file was removed")

    with _session(ws) as s:
        with monkeypatch.context() as cut:
            cut.setattr(atomic, "remove_exact", crash_remove)
            with pytest.raises(KeyboardInterrupt):
                gov.ingest(s)
        assert calls == ["a.md"]
        # one guarded write a file: the proposal is stored with the file's removal, or not at all
        assert gov.Ledger(s.store).proposals() == [] and (inbox / "a.md").exists()
        stored, findings = gov.ingest(s)
        assert len(stored) == 1 and not (inbox / "a.md").exists()  # filed once, now removed
        assert gov.ingest(s)[0] == []
        [p] = gov.Ledger(s.store).proposals()
        assert p.untrusted and p.provenance["sources"] == ["https://x.example"]
        assert p.content == "# Case nine\n\nMechanism nine.\n"
        assert [f.code for f in findings] == ["proposal-inbox-invalid"] and (inbox / "bad.md").exists()


# -- node index editing ----------------------------------------------------------------------------

def test_index_line_edits_keep_crlf_bom_and_bullets():
    text = "\ufeff# N\r\n\r\n+ [Old](a.md) — old\r\n+ [B](b.md) — b\r\n"
    out = index_with_line(text, "n", "a.md", "New", "new line")
    assert out == "\ufeff# N\r\n\r\n+ [New](a.md) — new line\r\n+ [B](b.md) — b\r\n"
    added = index_with_line(text, "n", "c.md", "C [x]", "c")
    assert added.endswith("+ [B](b.md) — b\r\n- [C [x]](c.md) — c\r\n")
    assert index_without_line(text, "n", "a.md") == "\ufeff# N\r\n\r\n+ [B](b.md) — b\r\n"


def test_marks_name_an_untrusted_active_version_and_nothing_else(ws):
    with _session(ws) as s:
        v = _propose(s, untrusted=True)
        led = gov.Ledger(s.store)
        assert led.marks(v.article) == (), "a proposal is not consumed, so it carries no mark"
        gov.approve(s, v.id, reviewed=True)
        assert gov.Ledger(s.store).marks(v.article) == ("untrusted",)
    with _session(ws, profile=LEAD) as s:
        gov.adopt(s, "support/lockout.md")
        assert gov.Ledger(s.store).marks("support/lockout.md") == ()
        assert gov.Ledger(s.store).marks("support/nothing.md") == ()


def test_retire_needs_a_reason(ws):
    with _session(ws, profile=LEAD) as s:
        gov.adopt(s, "support/lockout.md")
        with pytest.raises(gov.GovernanceError, match="needs a reason"):
            gov.retire(s, "support/lockout.md", "  ")
        assert gov.Ledger(s.store).active("support/lockout.md") is not None
    assert (ws / "memory/support/lockout.md").exists()
