"""Views follow the workspace: changes by any process reach the open TUI."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memtui.core.watch import classify, topic_of, watch
from memtui.core.workspace import Workspace
from tests.conftest import REPO, until_watched, wait_for


def test_paths_are_sorted_into_the_topics_views_follow(sample_copy: Path) -> None:
    ws = Workspace.open(sample_copy)
    expected = {
        "memory/support/AGENTS.md": "tree", "memory/support/new-article.md": "tree",
        "memory/graph.jsonl": "graph", "memory/MEMORY_CUSTOM.md": "notes", "memory/MEMORY.md": "notes",
        "memory/FILE_DELIVERY.md": "notes", "skills/x/SKILL.md": "skills", "shared-skills/y/SKILL.md": "skills",
        ".memtui/store.json": "store", "sessions/durable/k.jsonl": "sessions", "memtui.toml": "config",
        "proposals/inbox/p.md": "inbox",
        ".memtui/index/MAIN.toc": None, ".memtui/lock": None, ".memtui/lock.holder.json": None,
        "memory/.MEMORY_CUSTOM.md.ab12.tmp": None, ".git/index": None, "memory/support/.git/HEAD": None,
    }
    assert {p: topic_of(ws, p) for p in expected} == expected
    changes = classify(ws, [str(sample_copy / p) for p in expected] + ["/elsewhere/x.md"])
    assert changes.of("tree") == ["memory/support/AGENTS.md", "memory/support/new-article.md"]
    assert "/elsewhere/x.md" not in changes.paths and ".memtui/lock" not in changes.paths


def test_a_write_by_another_process_is_reported(sample_copy: Path) -> None:
    ws = Workspace.open(sample_copy)
    stop = threading.Event()
    seen: list = []

    def follow() -> None:
        for changes in watch(ws, stop):
            seen.append(changes)
            if "notes" in changes.topics:
                stop.set()

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    until_watched(sample_copy / "memory", seen, thread)  # its watches are registered before the write
    subprocess.run([sys.executable, "-c", "import sys; open(sys.argv[1], 'a').write('agent line\\n')",
                    str(sample_copy / "memory" / "MEMORY_CUSTOM.md")], check=True)
    thread.join(timeout=20)
    stop.set()
    assert any("memory/MEMORY_CUSTOM.md" in c.of("notes") for c in seen)


@pytest.mark.slow
async def test_an_approval_in_the_cli_shows_in_an_open_tui_without_a_key_press(sample_copy: Path) -> None:
    """After an approval the Tree and the header still showed 41 articles until ctrl+r."""
    from memtui.ui.app import MemtuiApp
    from memtui.ui.screens.proposals import ProposalsScreen

    def cli(*args: str) -> None:
        done = subprocess.run([sys.executable, "-m", "memtui", *args, "-w", str(sample_copy)],
                              capture_output=True, text=True, cwd=REPO, timeout=60,
                              env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0, done.stderr

    article = sample_copy / "memory/support/experience/exp-099-watch.md"
    source = sample_copy.parent / "exp-099.md"
    source.write_text("---\ntitle: Watched article\nsummary: filed while the TUI was open\n---\nBody.\n")
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None, what="the first audit")
        before = app.report.articles
        await pilot.press("7")
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalsScreen))
        screen = app.screen
        await wait_for(pilot, lambda: hasattr(screen, "_rows"), what="the queue")
        queued = {v.id for v in screen._rows}
        cli("propose", "--node", "support/experience", "--article", article.name, "--from", str(source),
            "--case", "C-W1", "--source-request", "SR-W1", "--profile", "support.investigator")
        version = "support/experience/exp-099-watch.md@1"
        await wait_for(pilot, lambda: version in {v.id for v in screen._rows}, timeout=20,
                       what="the new proposal in the open queue")
        assert queued < {v.id for v in screen._rows}
        cli("proposals", "approve", version, "--reviewed", "--yes", "--as", "support.curator")
        await wait_for(pilot, lambda: app.report is not None and app.report.articles == before + 1,
                       timeout=20, what="the new article in the header counts")
        assert article.exists()


def test_a_new_folder_is_followed_and_a_link_leading_outside_is_not(sample_copy: Path, tmp_path: Path) -> None:
    """The watcher watches every real folder on its own: a recursive watch followed a link to a
    folder outside the workspace and listed it (found by the strace torture test)."""
    from memtui.core.watch import folders

    outside = tmp_path / "outside"
    outside.mkdir()
    (sample_copy / "memory" / "support" / "linked").symlink_to(outside)
    ws = Workspace.open(sample_copy)
    assert all(not Path(f).is_relative_to(outside) and "linked" not in Path(f).parts for f in folders(ws))
    stop = threading.Event()
    seen: list = []

    def follow() -> None:
        for changes in watch(ws, stop):
            seen.append(changes)
            if any(p.endswith("fresh/a.md") for p in changes.of("tree")):
                stop.set()

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    until_watched(sample_copy / "memory" / "support", seen, thread)
    (outside / "ignored.md").write_text("outside\n")
    (sample_copy / "memory" / "support" / "fresh").mkdir()
    until_watched(sample_copy / "memory" / "support" / "fresh", seen, thread)  # the watch began again with it
    (sample_copy / "memory" / "support" / "fresh" / "a.md").write_text("# A\n")
    thread.join(timeout=20)
    stop.set()
    assert any(p.endswith("fresh/a.md") for c in seen for p in c.of("tree")), "a file in a new folder is seen"
    assert not any("ignored.md" in p for c in seen for paths in c.by_topic.values() for p in paths)


async def test_an_outside_delete_refreshes_the_open_audit_as_a_whole_audit_would(sample_copy: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """After an outside write the open TUI re-audits only the nodes it can affect (here the
    deleted article's node and the two nodes linking to it), and shows what a whole audit shows."""
    from memtui.core import audit
    from memtui.ui.app import MemtuiApp

    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None, what="the first audit")
        first = app.report
        audited: list[str] = []
        real = audit.audit_node
        monkeypatch.setattr(audit, "audit_node", lambda *a, **k: (audited.append(a[2]), real(*a, **k))[1])
        (sample_copy / "memory/support/courier-app/pod-upload.md").unlink()
        await wait_for(pilot, lambda: app.report is not first and not app._unaudited and not app._auditing,
                       timeout=20, what="the audit after the delete")
        monkeypatch.setattr(audit, "audit_node", real)
        whole = audit.run(app.ws, offline=True, parallel=False)
        assert [f.to_json() for f in app.report.findings] == [f.to_json() for f in whole.findings]
        assert app.report.articles == first.articles - 1
        assert {"support/courier-app", "support/cod-payments", "support/parcels-lost"} <= set(audited)
        assert len(set(audited)) < whole.nodes
        broken = [f for f in app.report.findings if f.code == "link-broken" and "pod-upload.md" in f.message]
        assert {f.path for f in broken} >= {"memory/support/cod-payments/cod-collection.md"}


async def test_outside_writes_refresh_the_open_tui_as_a_whole_audit_and_redraw_only_what_they_touched(
        sample_copy: Path) -> None:
    """Each outside write (a new article, a note appended, a graph line, an edit breaking an
    index line, a delete) leaves the open TUI with a whole audit's findings; the Tree redraws
    the label of the folder whose findings changed, and the root index shown in the reading
    pane is not drawn again for a write elsewhere."""
    from textual.widgets import Tree

    from memtui.core import audit
    from memtui.ui.app import MemtuiApp
    from memtui.ui.screens.tree import TreeScreen

    mem = sample_copy / "memory"
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None and isinstance(app.screen, TreeScreen),
                       what="the first audit")
        screen = app.screen
        await wait_for(pilot, lambda: getattr(screen, "_reading", None) is not None, what="the root index shown")
        drawn: list[str] = []
        real_show = screen._show_index_doc
        screen._show_index_doc = lambda path, index: (drawn.append(path), real_show(path, index))[1]
        support = next(n for n in screen.query_one("#nodes", Tree).root.children if n.data.path == "support")
        assert support.label.plain == "support"  # no finding in the folder itself yet

        def append(path: Path, text: str) -> None:
            with path.open("a", encoding="utf-8") as handle:
                handle.write(text)

        def edit(path: Path, old: str, new: str) -> None:
            path.write_text(path.read_text("utf-8").replace(old, new, 1), "utf-8")

        writes = [
            ("a new article in support, not listed", lambda: (mem / "support" / "stray.md").write_text(
                "---\ntitle: Stray\nsummary: not listed\n---\n# Stray\n", "utf-8")),
            ("a note appended", lambda: append(mem / "MEMORY_CUSTOM.md", "\n- 2026-12-02 a note [x](../../../etc)\n")),
            ("a graph line", lambda: append(mem / "graph.jsonl", '{"type":"relation","from":"RouteCore",'
                                                                 '"to":"Nobody","relationType":"feeds"}\n')),
            ("an edit breaking an index line", lambda: edit(
                mem / "support/courier-app/gps-drift.md", "summary: Location drift:", "summary: Drift now,")),
            ("a delete", lambda: (mem / "support/courier-app/pod-upload.md").unlink()),
        ]
        for what, write in writes:
            shown = app.report
            write()
            await wait_for(pilot, lambda shown=shown: app.report is not shown and not app._unaudited
                           and not app._auditing, timeout=30, what=f"the audit after {what}")
            whole = audit.run(app.ws, offline=True, parallel=False)
            assert [f.to_json() for f in app.report.findings] == [f.to_json() for f in whole.findings], what
            assert (app.report.nodes, app.report.articles) == (whole.nodes, whole.articles), what
            if what.startswith("a new article"):
                found = app.findings_by_folder["memory/support"]  # the unlisted article, the untracked note
                await wait_for(pilot, lambda found=found: support.label.plain.endswith(f" {len(found)}"), timeout=10,
                               what="the support folder's label with its findings")
        assert "" not in drawn  # the root index in the reading pane was never drawn again
