"""The audit after outside changes re-audits only the nodes the changed paths can affect, and
gives exactly what a whole audit gives: over a series of edits, deletes, renames, new and
removed nodes and index edits, each step compared with a whole audit of the same files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memtui.core import audit
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace


def _same(got: audit.AuditReport, whole: audit.AuditReport) -> None:
    assert [f.to_json() for f in got.findings] == [f.to_json() for f in whole.findings]
    assert [f.to_json() for f in got.allowed] == [f.to_json() for f in whole.allowed]
    assert (got.nodes, got.articles) == (whole.nodes, whole.articles)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), "utf-8")


def _steps(mem: Path) -> list[tuple[str, list[str], object]]:
    """(what, the workspace-relative paths a watcher reports, the change)."""
    app = mem / "support" / "courier-app"
    return [
        ("a summary edited (one-liner mismatch)", ["memory/support/courier-app/gps-drift.md"],
         lambda: _edit(app / "gps-drift.md", "summary: Location drift:", "summary: Location drift, changed,")),
        ("a linked article deleted (a link elsewhere breaks)", ["memory/support/courier-app/pod-upload.md"],
         lambda: (app / "pod-upload.md").unlink()),
        ("the article comes back", ["memory/support/courier-app/pod-upload.md"],
         lambda: shutil.copy(mem.parent / "backup-pod-upload.md", app / "pod-upload.md")),
        ("an article renamed", ["memory/support/courier-app/app-login.md", "memory/support/courier-app/login.md"],
         lambda: (app / "app-login.md").rename(app / "login.md")),
        ("an index line removed", ["memory/support/courier-app/AGENTS.md"],
         lambda: _edit(app / "AGENTS.md", "- [CourierApp login and device binding](app-login.md)", "")),
        ("an owner removed from a parent index", ["memory/support/AGENTS.md"],
         lambda: _edit(mem / "support" / "AGENTS.md", "owner:", "former-owner:")),
        ("a new node, not listed by its parent", ["memory/support/new-node", "memory/support/new-node/AGENTS.md",
                                                  "memory/support/new-node/first.md"],
         lambda: ((mem / "support" / "new-node").mkdir(),
                  (mem / "support" / "new-node" / "AGENTS.md").write_text("# New node\n\n## Articles\n\n", "utf-8"),
                  (mem / "support" / "new-node" / "first.md").write_text("# First\n\n[gone](../nowhere.md)\n", "utf-8"))),
        ("a link to another node's article, then that folder renamed",
         ["memory/support/new-node/first.md", "memory/connectors/depotscan", "memory/connectors/depot-scan"],
         lambda: ((mem / "support" / "new-node" / "first.md").write_text(
             "# First\n\n[events](../../connectors/depotscan/scan-events.md)\n", "utf-8"),
             (mem / "connectors" / "depotscan").rename(mem / "connectors" / "depot-scan"))),
        ("a node folder deleted", ["memory/support/new-node"],
         lambda: shutil.rmtree(mem / "support" / "new-node")),
        ("the root index edited", ["memory/AGENTS.md"],
         lambda: _edit(mem / "AGENTS.md", "support", "Support")),
    ]


def test_rerun_gives_the_whole_audit_after_each_change(sample_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.open(sample_copy)
    mem = sample_copy / "memory"
    shutil.copy(mem / "support" / "courier-app" / "pod-upload.md", sample_copy / "backup-pod-upload.md")
    previous = audit.run(ws, offline=True, parallel=False)
    audited: list[str] = []
    real = audit.audit_node

    def spy(ws, tree, node, cache=None, deps=None):  # noqa: ANN001, ANN202
        audited.append(node)
        return real(ws, tree, node, cache, deps)

    for what, changed, change in _steps(mem):
        change()  # type: ignore[operator]
        monkeypatch.setattr(audit, "audit_node", spy)
        audited.clear()
        got = audit.rerun(ws, previous, changed, tree=MemoryTree(ws))
        monkeypatch.setattr(audit, "audit_node", real)
        whole = audit.run(ws, offline=True, parallel=False)
        _same(got, whole)
        assert len(audited) < whole.nodes or what.startswith(("the root", "an owner")), (what, audited)
        previous = got
    codes = {f.code for f in previous.findings}
    assert {"link-broken", "node-unlisted", "one-liner-mismatch", "article-unlisted"} <= codes  # the series made findings of the kinds it meant to


def test_rerun_audits_only_the_node_of_an_edited_article(sample_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.open(sample_copy)
    previous = audit.run(ws, offline=True, parallel=False)
    audited: list[str] = []
    real = audit.audit_node
    monkeypatch.setattr(audit, "audit_node", lambda *a, **k: (audited.append(a[2]), real(*a, **k))[1])
    _edit(sample_copy / "memory" / "support" / "courier-app" / "gps-drift.md", "summary: Location drift:", "summary: Location drift now,")
    got = audit.rerun(ws, previous, ["memory/support/courier-app/gps-drift.md"])
    assert audited == ["support/courier-app"]
    assert any(f.code == "one-liner-mismatch" and f.path == "memory/support/courier-app/AGENTS.md"
               for f in got.findings)


def test_a_settings_change_or_no_parts_audits_everything(sample_copy: Path) -> None:
    ws = Workspace.open(sample_copy)
    previous = audit.run(ws, offline=True, parallel=False)
    assert previous.by_node
    again = audit.rerun(ws, previous, ["memtui.toml"])
    _same(again, audit.run(ws, offline=True, parallel=False))
    bare = audit.AuditReport()
    _same(audit.rerun(ws, bare, []), audit.run(ws, offline=True, parallel=False))
