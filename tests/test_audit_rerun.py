"""The audit after outside changes re-audits only the nodes the changed paths can affect, and
gives exactly what a whole audit gives: over a series of edits, deletes, renames, new and
removed nodes and index edits, each step compared with a whole audit of the same files."""

from __future__ import annotations

import os
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


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def _outside_writes(root: Path) -> list[tuple[str, list[str], object]]:
    """(what, the workspace-relative paths a watcher reports, the write): the kinds of writes
    agents, the CLI and editors make while the TUI is open, one after another."""
    mem = root / "memory"
    app = mem / "support" / "courier-app"
    loose = mem / "support" / "loose"
    evals = mem / "support" / "evals"
    return [
        ("a new article, not listed", ["memory/support/courier-app/new-one.md"],
         lambda: (app / "new-one.md").write_text("---\ntitle: New one\nsummary: fresh\n---\n# New one\n", "utf-8")),
        ("its index line added", ["memory/support/courier-app/AGENTS.md"],
         lambda: _append(app / "AGENTS.md", "- [New one](new-one.md) — fresh\n")),
        ("an edited article breaks its index line", ["memory/support/courier-app/new-one.md"],
         lambda: _edit(app / "new-one.md", "summary: fresh", "summary: no longer what the index says")),
        ("the edit taken back fixes it", ["memory/support/courier-app/new-one.md"],
         lambda: _edit(app / "new-one.md", "summary: no longer what the index says", "summary: fresh")),
        ("an index line to a file that does not exist", ["memory/support/courier-app/AGENTS.md"],
         lambda: _append(app / "AGENTS.md", "- [Ghost](ghost.md) — nowhere\n")),
        ("the article deleted", ["memory/support/courier-app/new-one.md"],
         lambda: (app / "new-one.md").unlink()),
        ("a note appended, with a link leading outside", ["memory/MEMORY_CUSTOM.md"],
         lambda: _append(mem / "MEMORY_CUSTOM.md", "\n- 2026-12-02 see [the host file](../../../etc/hosts)\n")),
        ("a graph line appended", ["memory/graph.jsonl"],
         lambda: _append(mem / "graph.jsonl", '{"type":"relation","from":"RouteCore","to":"Nobody","relationType":"feeds"}\n')),
        ("articles in a folder without an index", ["memory/support/loose", "memory/support/loose/a.md"],
         lambda: (loose.mkdir(), (loose / "a.md").write_text("# A\n", "utf-8"))),
        ("another article there (the count in the finding)", ["memory/support/loose/b.md"],
         lambda: (loose / "b.md").write_text("# B\n", "utf-8")),
        ("a leftover temporary file beside a changed article", ["memory/support/loose/b.md"],
         lambda: ((loose / ".b.md.abcd1234.tmp").write_text("half", "utf-8"),
                  (loose / "b.md").write_text("# B again\n", "utf-8"))),
        ("a file name that is not UTF-8", [os.fsdecode(b"memory/support/loose/caf\xe9.md")],
         lambda: (Path(os.fsdecode(bytes(loose) + b"/caf\xe9.md"))).write_text("# x\n", "utf-8")),
        ("the loose folder removed", ["memory/support/loose"], lambda: shutil.rmtree(loose)),
        ("a node's index asks for review", ["memory/support/courier-app/AGENTS.md"],
         lambda: _edit(app / "AGENTS.md", "---\n", "---\npromotion: review\n")),
        ("an eval set added", ["memory/support/evals", "memory/support/evals/cases.jsonl"],
         lambda: (evals.mkdir(), (evals / "cases.jsonl").write_text(
             '{"id": "C-1", "ticket": "where is my parcel", "language": "en", "relevant": ["nowhere"]}\n', "utf-8"))),
        ("an article of the set's domain deleted", ["memory/support/courier-app/gps-drift.md"],
         lambda: (app / "gps-drift.md").unlink()),
        ("a recorded article edited outside governance",
         ["memory/support/experience/exp-001-cod-double-settlement.md"],
         lambda: _append(mem / "support" / "experience" / "exp-001-cod-double-settlement.md", "\nEdited.\n")),
        ("a new node with an article", ["memory/support/fresh", "memory/support/fresh/AGENTS.md",
                                        "memory/support/fresh/one.md"],
         lambda: ((mem / "support" / "fresh").mkdir(),
                  (mem / "support" / "fresh" / "AGENTS.md").write_text("# Fresh\n\n## Articles\n\n", "utf-8"),
                  (mem / "support" / "fresh" / "one.md").write_text("# One\n", "utf-8"))),
        ("a second article in the new node", ["memory/support/fresh/two.md"],
         lambda: (mem / "support" / "fresh" / "two.md").write_text("# Two\n", "utf-8")),
        ("a folder with an article, no index yet", ["memory/support/later", "memory/support/later/a.md"],
         lambda: ((mem / "support" / "later").mkdir(), (mem / "support" / "later" / "a.md").write_text("# A\n", "utf-8"))),
        ("its index written: a node now", ["memory/support/later/AGENTS.md"],
         lambda: (mem / "support" / "later" / "AGENTS.md").write_text("# Later\n\n## Articles\n\n", "utf-8")),
        ("the store damaged by hand", [".memtui/store.json"],
         lambda: _append(root / ".memtui" / "store.json", "\n{not json")),
    ]


def test_every_kind_of_outside_write_gives_the_whole_audit(sample_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After each write the audit of the changed paths (nodes, and the whole-workspace checks
    looking again only at the folders and indexes that changed) equals a whole audit; the
    stray-file and folder checks list only the folders the write touched."""
    from memtui.core import strays
    from memtui.core.tree.audit import ArticleCache

    if not (sample_copy / "memory/support/courier-app/AGENTS.md").read_text("utf-8").startswith("---\n"):
        pytest.skip("the sample's index has no front matter")  # pragma: no cover - the sample has one
    ws = Workspace.open(sample_copy)
    previous = audit.run(ws, offline=True, parallel=False)
    cache = ArticleCache.load(ws)
    folders_seen: list[str] = []
    real_folder = strays._folder
    monkeypatch.setattr(strays, "_folder", lambda root, rel: (folders_seen.append(rel), real_folder(root, rel))[1])
    codes_seen: set[str] = set()
    for what, changed, change in _outside_writes(sample_copy):
        change()  # type: ignore[operator]
        folders_seen.clear()
        got = audit.rerun(ws, previous, changed, tree=MemoryTree(ws), cache=cache)
        looked = list(folders_seen)
        whole = audit.run(ws, offline=True, parallel=False)
        assert [f.to_json() for f in got.findings] == [f.to_json() for f in whole.findings], what
        _same(got, whole)
        assert len(looked) <= 3 or what.startswith("an eval set"), (what, looked)
        codes_seen |= {f.code for f in got.findings}
        previous = got
    assert {"article-unlisted", "one-liner-mismatch", "index-missing-file", "link-outside", "folder-no-index",
            "temp-file-leftover", "name-not-utf8", "promotion-review-required", "store-damaged", "untracked",
            "unrecorded-edit", "active-missing"} <= codes_seen


def test_an_edited_article_lists_no_folder_and_walks_no_node(sample_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An article edited in place: the nodes are those of the last audit (neither the audit nor
    the promotion check walks the tree; the governance check's walk for untracked articles is
    its own), and the stray-file check lists only the article's folder."""
    import sys

    from memtui.core import strays

    ws = Workspace.open(sample_copy)
    previous = audit.run(ws, offline=True, parallel=False)
    walked: list[str] = []
    real_walk = MemoryTree.walk_nodes

    def walk(self: MemoryTree):  # noqa: ANN202
        walked.append(Path(sys._getframe(1).f_code.co_filename).name)
        return real_walk(self)

    monkeypatch.setattr(MemoryTree, "walk_nodes", walk)
    looked: list[str] = []
    real_folder = strays._folder
    monkeypatch.setattr(strays, "_folder", lambda root, rel: (looked.append(rel), real_folder(root, rel))[1])
    _edit(sample_copy / "memory/support/courier-app/gps-drift.md", "summary: Location drift:", "summary: Drift,")
    got = audit.rerun(ws, previous, ["memory/support/courier-app/gps-drift.md"], tree=MemoryTree(ws))
    assert not {"audit.py", "promotion.py", "integrity.py"} & set(walked), walked
    assert looked == ["memory/support/courier-app"]
    assert got.nodes == previous.nodes
    assert any(f.code == "one-liner-mismatch" for f in got.findings)


def test_the_store_checks_run_again_only_when_the_store_changed(sample_copy: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's and the audit log's checks read only ``.memtui``: after an article edit their
    last findings stand (not run), after a store change they run, and the findings are a whole
    audit's either way."""
    from memtui.core import auditlog, store

    ws = Workspace.open(sample_copy)
    previous = audit.run(ws, offline=True, parallel=False)
    ran: list[str] = []
    for module in (store, auditlog):
        real = module.audit_findings
        monkeypatch.setattr(module, "audit_findings",
                            lambda ws, real=real, name=module.__name__: (ran.append(name), real(ws))[1])
    _edit(sample_copy / "memory/support/courier-app/gps-drift.md", "summary: Location drift:", "summary: Drift,")
    got = audit.rerun(ws, previous, ["memory/support/courier-app/gps-drift.md"])
    assert ran == []
    _same(got, audit.run(ws, offline=True, parallel=False))
    ran.clear()
    _append(sample_copy / ".memtui" / "store.json", "\n{not json")
    again = audit.rerun(ws, got, [".memtui/store.json"])
    assert sorted(ran) == ["memtui.core.auditlog", "memtui.core.store"]
    assert any(f.code == "store-damaged" for f in again.findings)
    _same(again, audit.run(ws, offline=True, parallel=False))
