"""What the audit still missed — secrets, personal data, session histories, the
experience-entry shape, broken links, tree integrity. The workspace with every case is built
here (no text copied from ../shared); the corpus and the sample workspace must stay clean."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core import audit, sessions
from memtui.core.backup import commit as backup
from memtui.core.errors import MemtuiError
from memtui.core.scan import personal, secrets
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from tests.backup_helpers import isolate_git

# Values that look real to a detector; built from parts so no file of the project holds one whole.
GITHUB = "ghp_" + "Zx9QmV3kP7LrT2nW8yB4cD6fH1jK5sA0uE3i"
AWS = "AKIA" + "Z7XQ3PLM9RTW2KEV"
PASSWORD = "hunter" + "2"
SLACK = "xoxb-" + "912345678901-" + "zq8Wm3Np7Lr2Tb"
EGN = "7523169263"        # a valid ЕГН (date and check digit)
ORDER = "1234567890"      # ten digits that are no ЕГН
PHONE = "+359 888 123 456"
EMAIL = "ivan.petrov" + "@abv.bg"
IBAN = "BG80 BNBG 9661 1020 3456 78"
CARD = "4111 1111 1111 1111"
RAW = (GITHUB, AWS, SLACK, EGN, EMAIL)


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def entry(**fields: object) -> str:
    meta = "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in fields.items())
    return f"---\n{meta}---\n\nThe pattern, in the present tense.\n"


GOOD_ENTRY = dict(title="Double payout", summary="Two payout files", symptom="„два пъти“ — BH-DUP",
                  systems=["BillingHub"], environment="production", mechanism="Batch layer: a re-run settled twice.",
                  fix_shape="data fix", links=["../guide.md"], artifacts=["query: two payout files"])


def session_line(role: str, content: str, ts: str) -> str:
    return json.dumps({"ts": ts, "role": role, "content": content}, ensure_ascii=False) + "\n"


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    """A workspace seeded with every case this file tests."""
    root = tmp_path / "ws"
    write(root, "memtui.toml", '[user]\nprofile = "support.curator"\n')
    write(root, "memory/AGENTS.md", "---\nowner: root.owner\n---\n# Root\n\n- [Support](support/AGENTS.md) — support\n"
          "- [Guide](guide.md) — the guide\n- [Gone](#no-such-heading) — anchor\n")
    write(root, "memory/guide.md", "---\ntitle: Guide\nsummary: the guide\n---\n# Guide\n\n## Payouts\n\n"
          "See [the batch](support/batch.md#re-runs) and [missing](support/nowhere.md) and "
          "[bad anchor](support/batch.md#no-such-part).\n")
    write(root, "memory/MEMORY.md", f"# Notebook\n\ntoken {GITHUB}\naws {AWS}\npassword={PASSWORD}\n")
    write(root, "memory/MEMORY_CUSTOM.md", "Call me Ivan.\n")
    write(root, "memory/MEMORY_ROUTING.md", "Prefer the graph tools.\n")  # but there is no graph
    write(root, "memory/FILE_DELIVERY.md", "Files go to public/.\n")    # CONTEXT_RECOVERY.md is missing
    write(root, "memory/support/AGENTS.md", "---\nowner: support.lead\n---\n# Support\n\n"
          "- [Batch](batch.md) — batch\n- [Experience](experience/AGENTS.md) — cases\n")
    write(root, "memory/support/batch.md", "---\ntitle: Batch\nsummary: batch\n---\n# Batch\n\n## Re-runs\n\n"
          "On 2026-11-02 the batch was re-run by hand.\n")
    write(root, "memory/support/experience/AGENTS.md", "---\nowner: support.curator\n---\n# Experience\n\n"
          "- [Good](good.md) — ok\n- [PII](pii.md) — pii\n- [Shape](shape.md) — shape\n- [Saga](saga.md) — saga\n")
    write(root, "memory/support/experience/good.md", entry(**GOOD_ENTRY))
    write(root, "memory/support/experience/pii.md", entry(**{**GOOD_ENTRY, "summary": "pii"}) +
          f"The sender wrote from {EMAIL}, phone {PHONE}, ЕГН {EGN}; order {ORDER}; IBAN {IBAN}; card {CARD}.\n")
    write(root, "memory/support/experience/shape.md", entry(title="Shape", summary="shape", symptom="x",
                                                            fix_shape="workaround", links=["../missing.md"]))
    write(root, "memory/support/experience/saga.md", entry(**{**GOOD_ENTRY, "summary": "saga", "saga": True,
                                                             "customer_id": "C-1182"}))
    # a node its parent does not list, whose owner is its parent's owner
    write(root, "memory/support/lockout/AGENTS.md", "---\nowner: support.lead\n---\n# Lockout\n")
    # a folder with articles and no AGENTS.md
    write(root, "memory/support/loose/stray.md", "# Stray\n")
    # skills, graph and a session history hold secrets too
    write(root, "skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Use when deploying.\n---\n"
          f"export SLACK_TOKEN={SLACK}\n")
    lines = [session_line("user", f"hello {i}", f"2026-11-02T09:{i:02d}:00Z") for i in range(11)]
    lines.append(session_line("tool", 'mcp_memory_create_entities({"entities": [{"name": "Ivan Petrov", '
                              '"entityType": "person", "observations": []}]}) -> {"ok": true}', "2026-11-02T09:20:00Z"))
    lines.append(session_line("assistant", "Saved to your graph.", "2026-11-02T09:21:00Z"))
    write(root, "sessions/durable/tg-1.jsonl", "".join(lines))
    write(root, "sessions/durable/tg-2.jsonl", session_line("user", "hi", "2026-11-03T08:00:00Z") + "{not json\n")
    return root


def by_code(report: audit.AuditReport) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in report.findings:
        out.setdefault(f.code, []).append(f)
    return out


def test_every_planted_case_is_a_finding(cases: Path) -> None:
    report = audit.run(Workspace.open(cases))
    found = by_code(report)
    secret_places = {(f.path, f.line) for f in found["secret"]}
    assert {("memory/MEMORY.md", 3), ("memory/MEMORY.md", 4), ("memory/MEMORY.md", 5),
            ("skills/deploy/SKILL.md", 5)} <= secret_places
    assert {f.code for f in report.findings} >= {
        "pii-email", "pii-phone", "pii-egn", "pii-iban", "pii-card", "saga-person-key", "experience-field-missing",
        "experience-fix-shape", "link-broken", "anchor-broken", "folder-no-index", "node-unlisted", "node-owner-same",
        "routing-without-graph", "operator-file-missing", "article-diary", "session-line-malformed",
        "session-claim-unbacked"}
    assert len(found["pii-egn"]) == 1  # the order number is no ЕГН
    assert [f.path for f in found["folder-no-index"]] == ["memory/support/loose"]
    assert {f.path for f in found["node-unlisted"]} == {"memory/support/lockout/AGENTS.md"}
    assert {f.path for f in found["node-owner-same"]} == {"memory/support/lockout/AGENTS.md"}
    assert {f.path for f in found["experience-field-missing"]} == {"memory/support/experience/shape.md"}
    assert found["article-diary"][0].path == "memory/support/batch.md"
    broken = {(f.path, f.message.split("'")[1]) for f in found["link-broken"]}
    assert ("memory/guide.md", "support/nowhere.md") in broken
    assert ("memory/support/experience/shape.md", "../missing.md") in broken
    anchors = {(f.path, f.line) for f in found["anchor-broken"]}
    assert ("memory/AGENTS.md", 8) in anchors and any(p == "memory/guide.md" for p, _ in anchors)
    assert not any("re-runs" in f.message for f in found["anchor-broken"])  # that anchor exists
    assert found["session-claim-unbacked"][0].line == 12
    assert found["session-line-malformed"][0].path == "sessions/durable/tg-2.jsonl"
    assert report.has_errors


def test_a_found_secret_is_never_shown_whole(cases: Path) -> None:
    """Place and masked value only, also in --json; never the value."""
    out = subprocess.run([str(Path(sys.executable).parent / "memtui"), "audit", "-w", str(cases), "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert any(f["code"] == "secret" and "ghp_****…" in f["message"] for f in data["findings"])
    for value in (GITHUB, AWS, SLACK):
        assert value not in out.stdout and value not in out.stderr
        assert value[4:-3] not in out.stdout
    assert f"={PASSWORD}" not in out.stdout


def test_allowing_a_false_positive_is_governed_and_kept(cases: Path) -> None:
    ws = Workspace.open(cases)
    with Session.open(ws) as session:
        with pytest.raises(MemtuiError, match="no open secret"):
            audit.allow(session, "secret", "memory/MEMORY.md:1", "nothing there")
        done = audit.allow(session, "secret", "memory/MEMORY.md:5", "a joke password from a quote")
        assert done.entry is not None and done.entry.action == "audit.allow"
        assert done.entry.detail["reason"] == "a joke password from a quote"
    report = audit.run(Workspace.open(cases))
    assert ("memory/MEMORY.md", 5) not in {(f.path, f.line) for f in report.findings if f.code == "secret"}
    assert [(f.path, f.line) for f in report.allowed] == [("memory/MEMORY.md", 5)]
    # moving the line does not lose the allowance: it names the value, not the line
    text = (cases / "memory/MEMORY.md").read_text()
    (cases / "memory/MEMORY.md").write_text("\n\n" + text)
    assert len(audit.run(Workspace.open(cases)).allowed) == 1


def test_backup_commits_none_of_the_secrets(cases: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = tmp_path / "backup"
    ws = Workspace.open(cases)
    with Session.open(ws) as session:
        with pytest.raises(backup.BackupBlocked) as refused:
            backup.backup(ws, repo, session=session)
        places = {(f.path, f.line) for f in refused.value.findings}
        assert ("memory/MEMORY.md", 3) in places and ("skills/deploy/SKILL.md", 5) in places
        assert GITHUB not in str(refused.value) and "ghp_****…" in str(refused.value)
        assert not repo.exists()  # a refused backup leaves no repository
        # the operator removes the real secrets and allows the false positive
        text = (cases / "memory/MEMORY.md").read_text()
        (cases / "memory/MEMORY.md").write_text("\n".join(ln for ln in text.split("\n") if GITHUB not in ln and AWS not in ln))
        (cases / "skills/deploy/SKILL.md").write_text("---\nname: deploy\ndescription: Use when deploying.\n---\n")
        audit.allow(session, "secret", "memory/MEMORY.md:3", "the example password of a joke")
        result = backup.backup(ws, repo, session=session)
    assert result.commit
    objects = subprocess.run("git rev-list --all --objects | cut -d' ' -f1 | git cat-file --batch",
                             shell=True, cwd=repo, capture_output=True).stdout
    for value in (GITHUB, AWS, SLACK):
        assert value.encode() not in objects
    assert PASSWORD.encode() in objects  # allowed: it is the operator's call


def test_a_shortened_history_is_an_error_naming_the_first_changed_line(cases: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.open(cases)
    history = cases / "sessions/durable/tg-1.jsonl"
    with Session.open(ws) as session:
        first = sessions.record(session)
        assert first.entry is not None and first.entry.action == "sessions.seen"
        assert sessions.record(session).entry is None  # nothing changed: nothing written
        history.write_bytes(history.read_bytes() + session_line("user", "more", "2026-11-02T10:00:00Z").encode())
        assert sessions.rewrites(ws, session.store) == []  # growing is fine
        sessions.record(session)
        lines = history.read_bytes().split(b"\n")
        history.write_bytes(b"\n".join(lines[:3]) + b"\n")  # 13 lines cut to 3
        found = sessions.rewrites(ws, session.store)
        assert [(f.code, f.line) for f in found] == [("session-rewritten", 4)]
        assert "shrank" in found[0].message
        history.write_bytes(b"\n".join(lines[:2] + [b'{"role": "user", "content": "edited"}'] + lines[3:]))
        assert sessions.rewrites(ws, session.store)[0].line == 3
        isolate_git(monkeypatch, tmp_path / "home")
        (cases / "memory/MEMORY.md").write_text("# Notebook\n")
        (cases / "skills/deploy/SKILL.md").write_text("---\nname: deploy\ndescription: Use when deploying.\n---\n")
        with pytest.raises(backup.BackupBlocked) as refused:
            backup.backup(ws, tmp_path / "repo", session=session)
        assert [f.code for f in refused.value.findings] == ["session-rewritten"]
        done = backup.backup(ws, tmp_path / "repo", session=session, accept_rewrite=["tg-1"])
        assert done.commit
        entry = next(e for e in session.audit.entries() if e.action.startswith("sessions."))
    assert sessions.rewrites(ws, Session.open(ws).store) == []
    assert entry.action == "sessions.accept-rewrite"
    assert entry.detail["accepted"][0]["key"] == "tg-1" and entry.detail["accepted"][0]["first_changed_line"] == 3


def test_opening_and_auditing_write_nothing_into_the_workspace(cases: Path) -> None:
    before = sorted(str(p.relative_to(cases)) for p in cases.rglob("*"))
    audit.run(Workspace.open(cases))
    Session.open(cases).close()
    after = sorted(str(p.relative_to(cases)) for p in cases.rglob("*"))
    assert [p for p in after if p not in before and not p.startswith(".memtui")] == []


def test_the_corpus_and_the_sample_have_no_secret_or_personal_data_finding(shared: Path) -> None:
    corpus = shared / "corpus"
    roots = [corpus, *sorted((corpus / "graphs").iterdir()), *sorted((corpus / "notebooks").iterdir()),
             *sorted((corpus / "skills").iterdir()), *sorted((corpus / "agents-trees").iterdir()),
             Path(__file__).parent.parent / "sample_workspace"]
    wrong = []
    for root in roots:
        report = audit.run(Workspace.open(root))
        wrong += [f.summary() for f in report.findings + report.allowed
                  if f.code == "secret" or f.code.startswith("pii-") or f.code == "saga-person-key"]
    assert wrong == []


def test_numbers_are_told_apart_by_their_checksums() -> None:
    found = {p.code for p in personal.find(f"ЕГН {EGN}, order {ORDER}, waybill BP0000012345, ORA-06942 8534, "
                                             "on 2026-11-02, 1,200 calls, version 2.7.4")}
    assert found == {"pii-egn"}
    assert {p.code for p in personal.find("docs@example.com git@github.com:org/repo.git")} == set()
    assert {p.code for p in personal.find(f"{PHONE} and 0888 123 456")} == {"pii-phone"}


def test_the_gated_scan_finds_what_detect_secrets_finds_line_by_line() -> None:
    """The literal gates only skip work: the result equals the library's own line scan."""
    from detect_secrets.core.scan import scan_line

    text = "\n".join([f"token {GITHUB}", f"key = '{AWS}'", f"password = \"{PASSWORD}x9\"", SLACK,
                      "-----BEGIN RSA PRIVATE KEY-----", "url https://user:s3cr3tpass@example.org/x",
                      'jwt "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX2hlcmVfMTIz"',
                      "plain prose about a key account and a token bucket", 'hex "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"'])
    ours = {(h.line, h.kind) for h in secrets.find(text)}
    secrets.find("")  # configured
    theirs = set()
    for number, line in enumerate(text.split("\n"), 1):
        for secret in scan_line(line):
            if secret.type != "Public IP (ipv4)":
                theirs.add((number, secret.type))
    assert ours <= theirs | {(3, "Secret Keyword")}
    assert {kind for _, kind in ours} >= {"GitHub Token", "AWS Access Key", "Slack Token", "Private Key",
                                          "Basic Auth Credentials", "JSON Web Token"}
    assert {line for line, _ in theirs} - {line for line, _ in ours} <= {8}  # prose: none of ours


def test_the_detector_is_not_asked_to_verify_anything() -> None:
    secrets.find("x")
    from detect_secrets.settings import get_settings

    assert not any("verification" in path for path in get_settings().filters)


def test_routing_with_a_remote_graph_is_no_finding(cases: Path) -> None:
    write(cases, "memtui.toml", '[user]\nprofile = "support.curator"\n[graph]\nremote = "https://proxy.example/v1/mcp"\n')
    report = audit.run(Workspace.open(cases))
    assert "routing-without-graph" not in {f.code for f in report.findings}


def test_a_merge_redirect_line_is_no_broken_link(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, "memory/AGENTS.md", "---\nowner: o\n---\n# Root\n\n- [New](new.md) — kept\n"
          "- [Old](old.md) → [New](new.md)\n")
    write(root, "memory/new.md", "---\ntitle: New\nsummary: kept\n---\n# New\n")
    report = audit.run(Workspace.open(root))
    assert "link-broken" not in {f.code for f in report.findings}
