"""Filing a proposal: its sources as given, a new node's index, and ingest keeping the
article's own front matter."""

from __future__ import annotations

import json


from tests.test_governance_cli import _no_tty, _run  # noqa: F401 - _no_tty is an autouse fixture
from memtui.core import governance as gov
from memtui.core.tree.index import index_with_line
from memtui.core.session import Session

from tests.governance_helpers import cli_propose, open_session
from tests.test_governance import CURATOR, LEAD, LOCKOUT_V1, LOCKOUT_V2, ws  # noqa: F401 - the fixture




# -- propose --source ------------------------------------------------------------------------------
def test_propose_source_is_repeatable_and_stored_as_given(ws, tmp_path, capsys):
    assert cli_propose(ws, tmp_path, "--source", "https://a.example/x", "--source", "notes/b.md") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["provenance"]["sources"] == ["https://a.example/x", "notes/b.md"]


def test_propose_without_source_stores_no_sources(ws, tmp_path, capsys):
    assert cli_propose(ws, tmp_path) == 0
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
    with open_session(ws) as s:
        [v], findings = gov.ingest(s)
        assert findings == [] and v.provenance["sources"] == ["https://one.example/page"]


# -- a new node's AGENTS.md ------------------------------------------------------------------------
def test_a_new_node_index_has_one_articles_section_holding_the_line(ws):
    with open_session(ws, profile=LEAD) as s:
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


# -- ingest keeps the article's own front matter ---------------------------------------------------
def test_ingest_keeps_title_summary_and_tags_and_drops_only_governance_fields(ws):
    inbox = ws / gov.INBOX
    inbox.mkdir(parents=True)
    (inbox / "a.md").write_text(
        "---\nnode: support/experience\narticle: exp-9.md\ntitle: Case nine\ncase: C9\n"
        "source_request: SR9\nprofile: support.investigator\nprofile_version: '3'\n"
        "sources:\n  - https://a.example\n  - https://b.example\nuntrusted: false\n"
        "summary: Nine's mechanism in one line\ntags: [sso, cookies]\n---\n# Case nine\n\nMechanism nine.\n")
    with open_session(ws) as s:
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
