"""The Tree area: the memory tree, the selected node's index entries, the selected article.

Nodes load lazily on expand; node indexes and articles are read in worker threads. Findings
from the background audit are marked beside the tree nodes and entries they concern.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Header, Markdown, Static, TextArea, Tree
from textual.widgets.tree import TreeNode
from textual.worker import get_current_worker

from memtui.core import evalsets, governance
from memtui.core.findings import Finding
from memtui.core.frontmatter import json_safe
from memtui.core.tree.model import Article
from memtui.core.text import plural
from memtui.core.tree.index import is_local_link
from memtui.core.workspace import NODE_INDEX
from memtui.ui.widgets import KeyFooter
from memtui.ui.widgets import AreaBar, DataMarkdown, DataTextArea
from memtui.ui.text import as_data, join, safe, severity_text
from memtui.ui.screens.base import AreaScreen

if TYPE_CHECKING:
    from memtui.core.audit import AuditReport  # the audit (and its scanners) loads after the first frame

#: Largest body (characters) rendered as Markdown. Textual's Markdown widget builds every
#: block on the UI thread, so a larger file is shown as plain text in a read-only, virtualised
#: TextArea instead, with a notice; files over ``max_file_bytes`` are read in part.
PREVIEW_LIMIT = 32 * 1024
#: Seconds after a jump or a followed link during which a highlight of another node, queued
#: before it, does not replace the node being revealed (a bound, so a lost fill never pins it).
REVEAL_GUARD = 2.0


@dataclass(slots=True)
class NodeData:
    """What a tree node stands for: a memory-relative folder path and whether it is a node."""

    path: str
    is_node: bool
    loaded: bool = False


@dataclass(slots=True)
class EntryRow:
    """One row of the entries table."""

    title: str
    path: str | None
    one_liner: str
    state: str
    line: int | None


def _clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis (the reading pane shows it all)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _worst(findings: list[Finding]) -> Text:
    if not findings:
        return Text("")
    order = {"error": 0, "warning": 1, "info": 2}
    worst = min(findings, key=lambda f: order[f.severity.value]).severity.value
    icon = severity_text(worst)
    return join(Text(icon.plain.split()[0], style=icon.style), f" {len(findings)}")


def _state_word(state: tuple[str, int | None] | None) -> str:
    """``"active v3"``, ``"edited v3"`` (unrecorded edit), ``"retired"``, or ``"untracked"``."""
    if state is None:
        return "untracked"
    word, number = state
    return f"{word} v{number}" if number is not None else word


class TreeScreen(AreaScreen):
    """Browse nodes, node indexes and articles."""

    BINDINGS = [
        Binding("tab", "focus_next", "Next pane", show=False, id="tree.focus-next"),
        Binding("e", "focus_entries", "Entries", id="tree.focus-entries"),
        Binding("t", "focus_tree", "Tree", id="tree.focus-tree"),
        Binding("r", "focus_article", "Read", id="tree.focus-article"),
        Binding("i", "show_index", "Node index", id="tree.show-index"),
        Binding("b", "boot_preview", "Boot preview", id="tree.boot-preview"),
        Binding("l", "links", "Links…", tooltip="choose a link of the article and follow it", id="tree.links"),
        Binding("backspace", "back", "Back", tooltip="back to where the last link was followed from",
                id="tree.back"),
        Binding("z", "zoom", "Zoom", tooltip="the article alone on the screen, or back (again)", id="tree.zoom"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._rows: list[EntryRow] = []
        self._current_node: str | None = None
        self._current_article: str | None = None
        self._pending_article: str | None = None
        self._revealed_at = 0.0
        #: the article a jump asked for, until its row has been highlighted
        self._wanted_article: str | None = None
        #: ``(memory-relative file, file line)`` a jump asked to show (an audit finding's place),
        #: until that file is shown: an article scrolled to the line, an index's entry selected
        self._wanted_line: tuple[str, int] | None = None
        #: memory-relative path of the file in the reading pane (the base of relative links)
        self._reading: str | None = None
        #: the node whose boot preview is shown (refreshed when the audit changes it)
        self._boot_node: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        with Horizontal(id="tree-area"):
            yield Tree(safe("memory"), id="nodes")
            with Vertical(id="tree-right"):
                yield Static(id="node-head", classes="pane-head")
                yield DataTable(id="entries", cursor_type="row", zebra_stripes=True)
                with Vertical(id="article"):
                    yield Static(id="article-head", classes="pane-head")
                    yield DataTable(id="meta", show_header=False, cursor_type="none", show_cursor=False)
                    with VerticalScroll(id="article-scroll"):
                        yield DataMarkdown(id="body", open_links=False)
                    yield DataTextArea(id="plain", read_only=True, soft_wrap=False, show_line_numbers=True)
        yield KeyFooter()

    # -- set-up ----------------------------------------------------------------------------
    def on_mount(self) -> None:
        model = self.app.tree_model
        tree = self.query_one("#nodes", Tree)
        tree.root.data = NodeData("", True)
        tree.root.set_label(self._node_label("", True))
        tree.show_root = True
        self._load_children(tree.root)
        tree.root.expand()
        table = self.query_one("#entries", DataTable)
        table.add_columns("title", "state", "findings", "one-liner")  # the owner is the node's: in its head
        self.query_one("#meta", DataTable).add_columns("key", "value")
        self.query_one("#plain", TextArea).display = False
        self.app.audit_ready.subscribe(self, self._on_audit)
        self.app.audit_progress.subscribe(self, self._on_progress)
        if hasattr(self.app, "workspace_changed"):
            self.app.workspace_changed.subscribe(self, self._on_changes)
        self._show_node("")
        tree.focus()
        self.query_one("#article-head", Static).update(Text("Select an entry to read the article.", style="dim"))
        self.sub_title = f"{self.app.badge}{model.ws.root}"

    def _findings_for(self, shown_path: str) -> list[Finding]:
        return self.app.findings_by_path.get(shown_path, [])

    def _node_label(self, path: str, is_node: bool) -> Text:
        model = self.app.tree_model
        name = PurePosixPath(path).name if path else "memory"
        label = safe(name, "" if is_node else "dim italic")
        if not is_node:
            label.append(Text(" (no AGENTS.md)", style="dim"))
        findings = self.app.findings_by_folder.get(model.shown(path), [])
        if findings:
            label.append(" ")
            label.append(_worst(findings))
        return label

    def _load_children(self, node: TreeNode) -> None:
        data = node.data
        assert isinstance(data, NodeData)
        if data.loaded:
            return
        data.loaded = True
        for child, is_node in self.app.tree_model.children(data.path):
            has_more = bool(self.app.tree_model.children(child)) if not is_node else True
            node.add(self._node_label(child, is_node), NodeData(child, is_node),
                     allow_expand=has_more)

    @on(Tree.NodeExpanded, "#nodes")
    def _expanded(self, event: Tree.NodeExpanded) -> None:
        self._load_children(event.node)

    @on(Tree.NodeHighlighted, "#nodes")
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        data: NodeData | None = event.node.data
        if data is not None and data.path != self._current_node:
            if self._pending_article is not None and time.monotonic() - self._revealed_at < REVEAL_GUARD:
                # a jump or a followed link is loading its node: a late highlight of another node
                # (the tree's own, queued before the jump) must not cancel it
                return
            self._show_node(data.path)

    # -- audit -----------------------------------------------------------------------------
    def _on_progress(self, progress: tuple[int, int]) -> None:
        done, total = progress
        self.sub_title = f"{self.app.badge}auditing {done}/{total} nodes…"

    def _on_audit(self, report: AuditReport) -> None:
        """Show the audit's counts; redraw the tree labels whose folder's findings changed, and
        the open node when its findings or its files changed (after an outside write the rest of
        the area stays as drawn: a redraw of everything cost more than the audit of the change)."""
        self.sub_title = f"{self.app.badge}{report.summary()} (press 2 for the audit)"
        model = self.app.tree_model
        changed: set[str] | None = getattr(self.app, "findings_changed", None)
        folders = None if changed is None else {p.rsplit("/", 1)[0] if "/" in p else "." for p in changed}
        tree = self.query_one("#nodes", Tree)
        stack = [tree.root]
        while stack:
            node = stack.pop()
            if node.data is not None and (folders is None or model.shown(node.data.path) in folders):
                node.set_label(self._node_label(node.data.path, node.data.is_node))
            stack.extend(node.children)
        current = self._current_node
        if current is None:
            return
        if folders is not None:
            here = model.shown(current)
            touched = folders | {p.rsplit("/", 1)[0] if "/" in p else "." for p in
                                 getattr(self.app, "audited_changes", ())}
            if here not in touched:
                return
        self._show_node(current, keep_cursor=True)

    # -- following the workspace -------------------------------------------------------------
    def _on_changes(self, changes) -> None:  # noqa: ANN001 - memtui.core.watch.Changes
        """Files of the tree changed (any process): new or removed folders appear in the tree at
        once, and the open article is read again; the node table follows with the re-audit."""
        if not changes.topics & {"tree", "store"}:
            return
        model = self.app.tree_model
        prefix = model.ws.memory_rel
        folders: set[str] = set()
        for shown in changes.of("tree"):
            inner = shown[len(prefix) + 1:] if prefix else shown
            parts = inner.split("/")
            folders.update("/".join(parts[:i]) for i in range(len(parts)))
        tree = self.query_one("#nodes", Tree)
        stack = [tree.root]
        while stack:
            node = stack.pop()
            data: NodeData | None = node.data
            if data is None or not data.loaded:
                continue
            if data.path in folders:
                self._sync_children(node)
            stack.extend(node.children)
        if self._current_node is not None and "store" in changes.topics:
            self._show_node(self._current_node, keep_cursor=True)
        reading = self._current_article
        if reading is not None and model.shown(reading) in changes.paths:
            self._load_article(reading)

    def _sync_children(self, node: TreeNode) -> None:
        """Add the child folders of ``node`` that appeared and remove those that went, keeping
        the rest (and what is expanded) as it is."""
        data = node.data
        assert isinstance(data, NodeData)
        wanted = dict(self.app.tree_model.children(data.path))
        have = {child.data.path: child for child in node.children if child.data is not None}
        for path, child in have.items():
            if path not in wanted:
                child.remove()
        for path, is_node in wanted.items():
            if path not in have:
                has_more = bool(self.app.tree_model.children(path)) if not is_node else True
                node.add(self._node_label(path, is_node), NodeData(path, is_node), allow_expand=has_more)

    # -- node ------------------------------------------------------------------------------
    def _show_node(self, path: str, keep_cursor: bool = False) -> None:
        if not keep_cursor:  # another node: its boot preview is asked for again with b
            self._boot_node = None
        self._current_node = path
        self._load_node(path, keep_cursor)

    @work(thread=True, exclusive=True, group="node")
    def _load_node(self, path: str, keep_cursor: bool) -> None:
        model = self.app.tree_model
        worker = get_current_worker()
        index = model.index(path)
        owner, source = model.owner(path)
        rows: list[EntryRow] = []
        listed = set()
        states = governance.entry_states(self.app.ws, path, self.app.session.store)
        ledger = governance.Ledger(self.app.session.store)
        for entry in index.entries:
            exists = entry.path is not None and os.path.lexists(model.abs(entry.path))
            state = _state_word(states.get(entry.path or "")) if exists else "missing"
            if exists and entry.path:
                state = " ".join([state, *ledger.marks(entry.path)])  # untrusted, contested
            rows.append(EntryRow(entry.title, entry.path, entry.one_liner or "", state, entry.line))
            if entry.path:
                listed.add(entry.path)
        for file in model.article_files(path):
            if file not in listed:
                rows.append(EntryRow(PurePosixPath(file).stem, file, "", "unlisted", None))
        eval_line = evalsets.summary_line(self.app.ws, self.app.session.store, path, model)
        if not worker.is_cancelled:
            self._eval_line = (path, eval_line)
            self.from_worker(self._fill_node, path, index, owner, source, rows, keep_cursor)

    def _column_widths(self, rows: list[EntryRow]) -> tuple[int, int]:
        """Title and one-liner widths that fit the entries table now (titles
        were cut at 28 characters even at 200 columns)."""
        table = self.query_one("#entries", DataTable)
        width = table.size.width or int(self.app.size.width * 0.7)
        state = max([len(r.state) for r in rows] + [5])
        spare = max(30, width - state - 8 - 4 * 2 - 2)  # findings column, cell padding, scrollbar
        title = max(16, spare * 9 // 20)
        return title, max(16, spare - title)

    def on_resize(self) -> None:
        last = getattr(self, "_last_fill", None)
        if last is not None and last[0] == self._current_node:
            path, index, owner, source, rows = last
            self._fill_node(path, index, owner, source, rows, keep_cursor=True)

    def _fill_node(self, path, index, owner, source, rows: list[EntryRow], keep_cursor: bool) -> None:
        if path != self._current_node:
            return
        self._last_fill = (path, index, owner, source, rows)
        self._auto_highlight = True  # the table highlights its cursor row itself after a fill
        title_w, line_w = self._column_widths(rows)
        model = self.app.tree_model
        head = join(safe(index.title, "bold"), Text("  "), safe(model.shown(path), "dim"))
        head.append("\nowner: ")
        if owner:
            head.append(join(safe(owner, "bold"), Text(f"  ({source})", style="dim")))
        else:
            head.append(Text("none — nobody may activate writes here", style="yellow"))
        if not index.exists and path:
            head.append(Text("\nthis folder has no AGENTS.md; it only leads to nodes below it", style="dim"))
        eval_for, eval_line = getattr(self, "_eval_line", (None, ""))
        if eval_for == path and eval_line:
            style = "red" if "NOT beat" in eval_line else "dim" if "not measured" in eval_line or "none" in eval_line \
                else "green"
            head.append("\n")
            head.append(safe(eval_line, style))
        self.query_one("#node-head", Static).update(head)
        table = self.query_one("#entries", DataTable)
        cursor = table.cursor_row if keep_cursor else 0
        table.clear()
        self._rows = rows
        index_shown = model.shown(f"{path}/{NODE_INDEX}" if path else NODE_INDEX)
        line_findings: dict[int, list[Finding]] = {}
        for finding in self._findings_for(index_shown):
            if finding.line is not None:
                line_findings.setdefault(finding.line, []).append(finding)
        for i, row in enumerate(rows):
            found = list(line_findings.get(row.line, [])) if row.line else []
            if row.path:
                found += self._findings_for(model.shown(row.path))
            state_style = {"missing": "red", "unlisted": "yellow", "edited": "yellow"}.get(
                row.state.split(" ")[0], "dim")
            if "contested" in row.state or "untrusted" in row.state:
                state_style = "bold red"
            table.add_row(safe(_clip(row.title, title_w)), Text(row.state, style=state_style), _worst(found),
                          safe(_clip(row.one_liner, line_w)), key=str(i))
        table.display = bool(rows)  # an index without entries gives its room to its text
        if not rows:
            reading = f"{path}/{NODE_INDEX}" if path else NODE_INDEX
            if not (keep_cursor and self._reading == reading and self._current_article is None
                    and getattr(self, "_body_text", None) == index.body):
                self._show_index_doc(path, index)  # drawn again only when it changed
        elif self._pending_article:
            self._wanted_article = self._pending_article
            self._pending_article = None
            for i, row in enumerate(rows):
                if row.path == self._wanted_article:
                    table.move_cursor(row=i)
                    table.focus()
                    break
            else:
                self._wanted_article = None
        elif self._wanted_line is not None and self._wanted_line[0] == (
                f"{path}/{NODE_INDEX}" if path else NODE_INDEX):
            line = self._wanted_line[1]
            self._wanted_line = None
            at = next((i for i, row in enumerate(rows) if row.line == line), None)
            if at is not None:  # the entry the finding is about (an index line)
                table.move_cursor(row=at)
                table.focus()
        elif keep_cursor and cursor < len(rows):
            table.move_cursor(row=cursor)

    # -- article ---------------------------------------------------------------------------
    @on(DataTable.RowHighlighted, "#entries")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        index = event.cursor_row
        automatic, self._auto_highlight = getattr(self, "_auto_highlight", False), False
        if automatic and getattr(self, "_boot_node", None) == self._current_node:
            return  # the boot preview asked for while the entries loaded keeps the reading pane
        if self._wanted_article is not None:
            # a jump (audit, link) asked for this article: a late highlight of another row
            # (the table re-highlights its cursor row after filling) must not win
            wanted = next((i for i, r in enumerate(self._rows) if r.path == self._wanted_article), None)
            if wanted is not None and wanted != index:
                event.data_table.move_cursor(row=wanted)
                return
            self._wanted_article = None
        if 0 <= index < len(self._rows):
            row = self._rows[index]
            if row.path and row.state != "missing":
                if row.path != self._current_article:
                    self._current_article = row.path
                    self._load_article(row.path)
            else:
                self._current_article = None
                self._clear_article(f"{row.title}: the file this line points at does not exist.")

    @on(DataTable.RowSelected, "#entries")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        self.query_one("#article-scroll").focus()

    def _set_body(self, text: str, plain: bool = False):  # noqa: ANN202 - AwaitComplete | None
        """Show ``text`` as rendered Markdown, or as plain text in the read-only TextArea;
        returns what to await for the Markdown's blocks to be mounted (``None`` when plain)."""
        markdown = self.query_one("#body", Markdown)
        scroll = self.query_one("#article-scroll")
        area = self.query_one("#plain", TextArea)
        self._body_text = "" if plain else text
        if plain:
            markdown.update("")
            area.load_text(text)
            scroll.display, area.display = False, True
            return None
        area.load_text("")
        shown = markdown.update(text)
        scroll.display, area.display = True, False
        scroll.scroll_home(animate=False)
        return shown

    def _scroll_to_line(self, index: int, shown) -> None:  # noqa: ANN001 - AwaitComplete | None
        """Scroll the reading pane to body line ``index`` (0-based): the plain view puts its
        cursor there; the Markdown view scrolls the block holding that source line to the top
        once its blocks are mounted (``shown``)."""
        if shown is None:
            area = self.query_one("#plain", TextArea)
            area.move_cursor((min(index, area.document.line_count - 1), 0), center=True)
            return

        async def when_shown() -> None:
            await shown
            target = None
            for block in self.query_one("#body", Markdown).children:
                start, end = getattr(block, "source_range", (0, 0))
                if start <= index:
                    target = block
                if index < end:
                    break
            if target is not None:
                scroll = self.query_one("#article-scroll")
                self.call_after_refresh(scroll.scroll_to_widget, target, top=True, animate=False)

        self.run_worker(when_shown(), group="article-line", exclusive=True)

    def _clear_article(self, message: str) -> None:
        self.query_one("#article-head", Static).update(Text(as_data(message), style="dim"))
        self.query_one("#meta", DataTable).clear()
        self.query_one("#meta", DataTable).display = False
        self._set_body("")

    def action_show_index(self) -> None:
        """Show the selected node's AGENTS.md in the reading pane."""
        if self._current_node is not None:
            self._show_index_doc(self._current_node, self.app.tree_model.index(self._current_node))

    def _show_index_doc(self, path: str, index) -> None:
        model = self.app.tree_model
        self._current_article = None
        if not index.exists:
            self._clear_article("This folder has no AGENTS.md.")
            return
        self._reading = f"{path}/{NODE_INDEX}" if path else NODE_INDEX
        shown = model.shown(self._reading)
        head = join(safe(index.title, "bold"), Text("  "), safe(shown, "dim"),
                    Text("  the node index", style="dim"))
        if not index.entries:
            head.append(Text("\nThis index lists no articles; its text is shown.", style="dim"))
        self.query_one("#article-head", Static).update(head)
        meta = self.query_one("#meta", DataTable)
        meta.clear()
        for key, value in index.meta.items():
            meta.add_row(safe(key, "bold"), safe(json_safe(value)))
        meta.display = bool(index.meta)
        plain = len(index.body) > PREVIEW_LIMIT
        if plain:
            head.append(Text(f"\nlonger than {PREVIEW_LIMIT // 1024} kB: shown as plain text", style="yellow"))
        self._set_body(index.body, plain)

    def action_boot_preview(self) -> None:
        """Show what the selected node's agent boots with (seed 000 §2 rule 1)."""
        if self._current_node is not None and self.app.tree_model.index(self._current_node).exists:
            self._boot_node = self._current_node
            self._load_boot(self._current_node)
        else:
            self.notify("select a node (a folder with AGENTS.md) for its boot preview", markup=False)

    @work(thread=True, exclusive=True, group="article")
    def _load_boot(self, node: str) -> None:
        from memtui.core.tree.boot import build_boot

        boot = build_boot(self.app.ws, node, with_skills=True)
        if not get_current_worker().is_cancelled:
            self.from_worker(self._show_boot, boot)

    def _show_boot(self, boot) -> None:
        self._current_article = None
        self._reading = None
        head = join(Text("Boot preview ", style="bold"), safe(boot.path, "dim"),
                    Text(f"  {boot.memory_size:,} of {boot.budget:,} bytes (memory)", style="dim"))
        if boot.skills is not None:
            head.append(Text(f" + {boot.skills.size:,} bytes of skill index", style="dim"))
        notes = boot.notes()
        for note in notes:
            head.append("\n")
            head.append(safe(note, "yellow"))
        if not notes:
            head.append(Text("\neverything fits; this is exactly what the agent starts with", style="dim"))
        self.query_one("#article-head", Static).update(head)
        self.query_one("#meta", DataTable).display = False
        self._set_body(boot.text, plain=True)

    @work(thread=True, exclusive=True, group="article")
    def _load_article(self, path: str) -> None:
        article = self.app.tree_model.read_article(path)
        store = self.app.session.store
        counts = None  # the distinct counters of a governed entry (seed 000 §5)
        if not store.damaged and governance.Ledger(store).versions(path):
            counts = governance.counters(store, path).summary()
        if not get_current_worker().is_cancelled:
            self.from_worker(self._show_article, article, counts)

    def _show_article(self, article: Article, counts: str | None = None) -> None:
        if article.path != self._current_article:
            return
        self._reading = article.path
        model = self.app.tree_model
        # the head's lines in the order they matter, so a small terminal (the head takes at most
        # a share of the pane) cuts the path, never a finding: title, the line jumped to, the
        # findings, why the body is plain or missing, and the path last
        head = join(safe(article.title, "bold"), Text(f"  {article.size:,} bytes", style="dim"))
        wanted = self._wanted_line if self._wanted_line and self._wanted_line[0] == article.path else None
        if wanted is not None:  # a jump to a finding's line
            self._wanted_line = None
            where = "in the front matter, at the top" if wanted[1] < article.body_line else "scrolled to it"
            head.append(Text(f"\nline {wanted[1]} ({where})", style="bold"))
        problems = [f for f in self._findings_for(model.shown(article.path)) if f.severity.value != "info"]
        for finding in problems[:3]:
            head.append("\n")
            head.append(join(severity_text(finding.severity.value), Text(" "), safe(finding.message),
                             Text(f"  — {finding.fix}", style="dim") if finding.fix else Text("")))
        body = article.body
        plain = False
        if not article.ok:
            body = ""
            head.append(Text("\nThis file cannot be shown as text (see the audit).", style="yellow"))
        elif len(body) > PREVIEW_LIMIT or article.truncated:
            plain = True
            note = f"\n{article.size / 1_048_576:.1f} MB: shown as plain text (the Markdown preview stops at " \
                   f"{PREVIEW_LIMIT // 1024} kB)"
            if article.truncated:
                note += f"; showing the first {len(article.text.encode()) / 1_048_576:.1f} MB"
            head.append(Text(note + " — the file is not changed", style="yellow"))
        head.append("\n")
        head.append_text(safe(model.shown(article.path), "dim"))
        self.query_one("#article-head", Static).update(head)
        meta = self.query_one("#meta", DataTable)
        meta.clear()
        for key, value in article.meta.items():
            value = json_safe(value)
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            meta.add_row(safe(key, "bold"), safe(shown))
        if counts:
            meta.add_row(Text("counters", style="bold"), Text(counts))
        meta.display = bool(article.meta) or bool(counts)
        shown = self._set_body(body, plain)
        if wanted is not None and wanted[1] >= article.body_line and article.ok:
            self._scroll_to_line(wanted[1] - article.body_line, shown)

    @on(Markdown.LinkClicked, "#body")
    def _link(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        self.follow(event.href)

    def links(self) -> list[tuple[str, str]]:
        """The links of the article shown, ``(text, href)`` in reading order (Markdown parsed
        as Textual renders it, so a link is what the reader sees as one)."""
        from markdown_it import MarkdownIt

        out: list[tuple[str, str]] = []
        tokens = MarkdownIt("commonmark").parse(getattr(self, "_body_text", "") or "")
        for block in tokens:
            children = block.children or []
            for i, token in enumerate(children):
                if token.type == "link_open":
                    words = []
                    for inner in children[i + 1:]:
                        if inner.type == "link_close":
                            break
                        words.append(inner.content)
                    out.append(("".join(words).strip() or str(token.attrs.get("href", "")),
                                str(token.attrs.get("href", ""))))
        return out

    def action_links(self) -> None:
        """Choose one of the article's links and follow it (a relative link opens here; Backspace
        comes back), the keyboard's way to what a click does (frogmouth's model)."""
        from memtui.ui.widgets import Choose

        found = self.links()
        if not found:
            self.notify("this article has no links", markup=False)
            return
        choices = [join(safe(text, "bold"), "  ", safe(href, "dim")) for text, href in found]

        def chosen(index: int | None) -> None:
            if index is not None:
                self.follow(found[index][1])

        self.app.push_screen(Choose(f"Follow which link? ({plural(len(found), 'link')}; Enter follows, "
                                    "Escape cancels)", choices), chosen)

    def action_back(self) -> None:
        """Back to where the last link was followed from."""
        history = getattr(self, "_back", [])
        if not history:
            self.notify("nothing to go back to (follow a link with l first)", markup=False)
            return
        node, article = history.pop()
        self.reveal(node, article)

    def follow(self, href: str) -> None:
        """Follow ``href`` from the article shown: a relative link to an article or node opens
        it here (remembered for Back), anything else is said, never opened."""
        if not is_local_link(href):
            self.notify(f"external link (not opened): {href}", markup=False)
            return
        if self._reading is None:
            return
        base = PurePosixPath(self._reading).parent
        target = href.split("#", 1)[0]
        joined = os.path.normpath(os.path.join(str(base), target)).replace(os.sep, "/")
        if joined == "." or joined == "":
            joined = ""
        if joined.startswith("../") or joined == ".." or target.startswith("/"):
            self.notify(f"{href} leads outside the memory tree; memtui does not follow it",
                        severity="warning", markup=False)
            return
        model = self.app.tree_model
        if not os.path.exists(model.abs(joined)):
            self.notify(f"{href} does not exist", severity="warning", markup=False)
            return
        reading = self._reading if self._reading and not self._reading.endswith(NODE_INDEX) else None
        here = (self._current_node, reading)
        self._back = [*getattr(self, "_back", [])[-49:], here]
        if joined.endswith(NODE_INDEX) or os.path.isdir(model.abs(joined)):
            node = joined[: -len(NODE_INDEX)].rstrip("/") if joined.endswith(NODE_INDEX) else joined
            self.reveal(node)
        else:
            self.reveal(str(PurePosixPath(joined).parent) if "/" in joined else "", joined)

    # -- navigation ------------------------------------------------------------------------
    def reveal(self, node: str, article: str | None = None, line: int | None = None) -> None:
        """Expand the tree to the memory-relative folder ``node``, select it, and (when given)
        select the entry of the memory-relative ``article``; with a file ``line`` (1-based), the
        article is scrolled to it, or without an article the node index's entry at that line
        is selected."""
        if line is not None:
            self._wanted_line = (article or (f"{node}/{NODE_INDEX}" if node else NODE_INDEX), line)
            if article is not None and article == self._current_article:
                self._current_article = None  # shown already: read again, to scroll
        tree = self.query_one("#nodes", Tree)
        current = tree.root
        if node:
            parts = node.split("/")
            for i in range(len(parts)):
                prefix = "/".join(parts[: i + 1])
                self._load_children(current)
                current.expand()
                match = next((c for c in current.children if c.data and c.data.path == prefix), None)
                if match is None:
                    break
                current = match
        self._load_children(current)
        current.expand()
        self._pending_article = article
        self._revealed_at = time.monotonic()
        tree.select_node(current)
        tree.move_cursor(current)
        tree.scroll_to_node(current)
        self._show_node(current.data.path if current.data else "")
        if article is None:
            tree.focus()

    def action_focus_entries(self) -> None:
        self.query_one("#entries").focus()

    def action_focus_tree(self) -> None:
        self.query_one("#nodes").focus()

    def action_focus_article(self) -> None:
        self.query_one("#article-scroll").focus()

    def action_zoom(self) -> None:
        """Give the article the whole area (the tree, the node head and the entries hidden), or
        give them back: on a small terminal the article's head and front matter otherwise leave
        its body few lines."""
        zoomed = not self.has_class("zoomed")
        self.set_class(zoomed, "zoomed")
        if zoomed:
            self.action_focus_article()
