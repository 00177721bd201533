"""Sentences for people carry no references to the project's sources; the reference travels apart.

A finding's ``message`` and ``fix`` and an error's sentence are read by members in the TUI and
the CLI, who do not have the project's seeds or design notes: a rule's source ("seed 000 §5")
goes into the separate ``reference`` field, which ``--json`` and ``memtui audit --codes`` show.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from memtui.core import audit
from memtui.core.errors import ConflictError, MemtuiError
from memtui.core.findings import CODES, REFERENCES, Finding
from memtui.core.workspace import Workspace
from tests.conftest import run_cli

#: What a reference to the project's own sources looks like inside a sentence.
PROJECT_REFERENCE = re.compile(r"seed 0\d\d|[Ss]eed \d|issue \d|DESIGN\.md|§")




def _clean(text: str) -> bool:
    return not PROJECT_REFERENCE.search(text)


def test_every_code_meaning_reads_without_a_reference() -> None:
    for code, (_severity, meaning) in CODES.items():
        assert _clean(meaning), (code, meaning)
        assert "`memtui " not in meaning, (code, meaning)


def test_every_reference_belongs_to_a_code_and_names_a_source() -> None:
    assert set(REFERENCES) <= set(CODES)
    for code, reference in REFERENCES.items():
        assert PROJECT_REFERENCE.search(reference), (code, reference)


def test_a_finding_takes_its_codes_reference_and_json_carries_it() -> None:
    finding = Finding.make("node-unlisted", "memory/a/AGENTS.md", "the node is not listed")
    assert finding.reference == REFERENCES["node-unlisted"]
    assert finding.to_json()["reference"] == REFERENCES["node-unlisted"]
    plain = Finding.make("crlf", "memory/a.md", "CRLF line ends")
    assert plain.reference is None and "reference" not in plain.to_json()
    assert Finding.make("crlf", "a", "m", reference="seed 000 §1").reference == "seed 000 §1"


def test_an_error_keeps_its_reference_apart_from_its_sentence() -> None:
    error = MemtuiError("a use needs the independent check performed.", reference="seed 000 §7.4b")
    assert str(error) == "a use needs the independent check performed."
    assert error.reference == "seed 000 §7.4b"
    assert MemtuiError("no reference").reference is None
    conflict = ConflictError("changed on disk", path="x", reference="seed 004")
    assert (str(conflict), conflict.reference, conflict.path) == ("changed on disk", "seed 004", "x")


def _workspaces(shared: Path, tmp_path: Path) -> list[Path]:
    """Copies of the sample workspace and of every bug input folder (the audit may leave a
    cache or a lock behind; the originals are never written)."""
    from tests.conftest import SAMPLE

    out = [SAMPLE]
    out += sorted(p for p in (shared / "bug-inputs").iterdir() if p.is_dir())
    copies = []
    for i, source in enumerate(out):
        target = tmp_path / f"{i:02d}-{source.name}"
        shutil.copytree(source, target, symlinks=True)
        copies.append(target)
    return copies


def test_no_audit_finding_cites_a_source_in_its_sentences(shared: Path, tmp_path: Path) -> None:
    seen_references: set[str] = set()
    total = 0
    for root in _workspaces(shared, tmp_path):
        report = audit.run(Workspace.open(root), None, offline=True)
        for finding in report.findings:
            total += 1
            assert _clean(finding.message), (root.name, finding.code, finding.message)
            assert _clean(finding.fix), (root.name, finding.code, finding.fix)
            assert finding.reference == REFERENCES.get(finding.code, finding.reference), finding
            if finding.reference:
                seen_references.add(finding.code)
    assert total > 20  # the inputs hold many findings: the walk did read them
    assert seen_references, "no finding with a reference was met: the test proves nothing"


def test_audit_json_carries_the_reference_and_the_text_does_not(
        sample_copy: Path, capsys: pytest.CaptureFixture) -> None:
    # a node no parent index lists: its finding's rule is written in the seeds
    node = sample_copy / "memory" / "unlisted-node"
    node.mkdir()
    (node / "AGENTS.md").write_text("---\nowner: someone-else\n---\n# Unlisted\n", encoding="utf-8")
    code, out, _err = run_cli(capsys, "audit", "-w", str(sample_copy), "--json", "--offline")
    findings = json.loads(out)["findings"]
    unlisted = [f for f in findings if f["code"] == "node-unlisted"]
    assert unlisted and all(f["reference"] == REFERENCES["node-unlisted"] for f in unlisted)
    assert all(_clean(f["message"]) and _clean(f["fix"]) for f in findings)
    code, out, _err = run_cli(capsys, "audit", "-w", str(sample_copy), "--offline")
    assert "node-unlisted" in out
    assert not PROJECT_REFERENCE.search(out), out


def test_audit_codes_lists_each_reference(capsys: pytest.CaptureFixture) -> None:
    code, out, _err = run_cli(capsys, "audit", "--codes", "--json")
    assert code == 0
    rows = {row["code"]: row for row in json.loads(out)["codes"]}
    assert set(rows) == set(CODES)
    assert rows["node-unlisted"]["reference"] == REFERENCES["node-unlisted"]
    assert rows["crlf"]["reference"] is None
    code, out, _err = run_cli(capsys, "audit", "--codes")
    line = next(l for l in out.splitlines() if l.startswith("node-unlisted "))
    assert line.endswith(f"[{REFERENCES['node-unlisted']}]")


def test_a_refusal_carries_its_reference_in_json_only(
        sample_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    article = tmp_path / "a.md"
    article.write_text("# A\n\nThe rule.\n", encoding="utf-8")
    before = sorted(p.relative_to(sample_copy) for p in (sample_copy / "memory").rglob("*"))
    code, out, err = run_cli(capsys, "propose", "-w", str(sample_copy), "--json", "--node", "no-such-node",
                             "--article", "a.md", "--from", str(article), "--case", "c1",
                             "--source-request", "r1", "--profile", "agent")
    assert code != 0
    data = json.loads(out)
    assert data["ok"] is False and data["reference"] == "seed 000 §2 rule 4"
    assert "--new-node-owner" in data["error"] and _clean(data["error"]) and _clean(err)
    assert sorted(p.relative_to(sample_copy) for p in (sample_copy / "memory").rglob("*")) == before


def test_the_tui_never_reads_a_reference() -> None:
    """The TUI shows a finding's message and fix and an error's sentence; the reference is
    for scripts (``--json``) and ``audit --codes`` only."""
    ui = Path(__file__).resolve().parent.parent / "memtui" / "ui"
    readers = [str(p) for p in ui.rglob("*.py") if re.search(r"\.reference\b|REFERENCES", p.read_text(encoding="utf-8"))]
    assert not readers, readers
