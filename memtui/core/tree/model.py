"""The memory tree: nodes, articles and owners (DESIGN.md §2, seed 000 §1).

Every folder under the memory root with an ``AGENTS.md`` is a **node**; a folder without one
that lies between two nodes is a *gap* and is still walked.

Everything here is lazy: a :class:`MemoryTree` lists a folder only when asked for its
children and parses an index or article only when asked, with small caches, so a
100,000-article tree opens at once. :mod:`memtui.core.audit` walks it all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from memtui.core import frontmatter
from memtui.core.files import TextFile, is_inside, read_text, text_name
from memtui.core.findings import Finding
from memtui.core.workspace import NODE_INDEX, SPECIAL_FILES, Workspace
from memtui.core.tree.index import NodeIndex, HEADING, parse_index


@dataclass(slots=True)
class Article:
    """A Markdown file in a node, read and split.

    Attributes:
        path: relative to the memory root (``support/lockout.md``).
        node: the node it lies in (relative to the memory root).
        meta: front matter (dates and numbers stay typed; see ``frontmatter.json_safe``).
        body: the text after the front matter.
        body_line: file line where ``body`` starts.
        text: the whole text as read (BOM removed), ``""`` when unreadable.
        size: file size in bytes.
        ok: the file was read as UTF-8 text.
        truncated: only the first ``max_file_bytes`` were read.
        findings: problems met while reading.
    """

    path: str
    node: str
    meta: dict[str, Any]
    body: str
    body_line: int
    text: str
    size: int
    ok: bool
    truncated: bool
    findings: list[Finding]

    @property
    def title(self) -> str:
        """``title`` from front matter, else the first heading, else the file name."""
        value = self.meta.get("title")
        if isinstance(value, str) and value.strip():
            return value.strip()
        for line in self.body.splitlines()[:40]:
            match = HEADING.match(line)
            if match:
                return match.group(1)
        return Path(self.path).stem

    @property
    def summary(self) -> str | None:
        """``summary`` from front matter (the index one-liner it should match), if text."""
        value = self.meta.get("summary")
        return value.strip() if isinstance(value, str) else None


class MemoryTree:
    """Lazy access to the nodes, indexes and articles of a workspace's memory tree.

    Paths given to and returned by the methods are relative to the memory root
    (``ws.memory``), with ``/`` separators; ``""`` is the root.
    """

    def __init__(self, workspace: Workspace):
        self.ws = workspace
        self.root = workspace.memory
        self._root_str = os.fspath(workspace.memory)
        self._folder_inside: dict[str, bool] = {}
        self._prefix = workspace.memory_rel
        self.index = lru_cache(maxsize=4096)(self._index)
        self._children_cache: dict[str, list[tuple[str, bool]]] = {}

    # -- paths -----------------------------------------------------------------------------
    def abs(self, path: str) -> Path:
        """The absolute path of a memory-relative ``path``."""
        return self.root / path if path else self.root

    def shown(self, path: str) -> str:
        """A memory-relative ``path`` as shown to users (relative to the workspace)."""
        if not self._prefix:
            return path or "."
        return f"{self._prefix}/{path}" if path else self._prefix

    def place(self, shown_path: str) -> tuple[str | None, str | None]:
        """Where a workspace-relative path (a finding's, a search hit's) lies in the tree.

        Args:
            shown_path: a path as :meth:`shown` gives it (relative to the workspace).

        Returns:
            ``(node, article)`` as memory-relative paths (``article`` is ``None`` for a node
            index or a folder); ``(None, None)`` when the path is outside the memory tree (a
            skill, the config).
        """
        path = shown_path
        if self._prefix:
            if path == self._prefix:
                return "", None
            if not path.startswith(self._prefix + "/"):
                return None, None
            path = path[len(self._prefix) + 1:]
        if path in (".", ""):
            return "", None
        if path == NODE_INDEX or path.endswith("/" + NODE_INDEX):
            return path[: -len(NODE_INDEX)].rstrip("/"), None
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        if path.endswith(".md"):
            return folder, path
        return path, None

    # -- structure -------------------------------------------------------------------------
    def is_node(self, path: str) -> bool:
        """True when the folder ``path`` holds an ``AGENTS.md``."""
        return os.path.isfile(self.abs(path) / NODE_INDEX)

    def _has_node_below(self, folder: Path, budget: list[int]) -> bool:
        try:
            with os.scandir(folder) as it:
                subdirs = []
                for entry in it:
                    if entry.name == NODE_INDEX and entry.is_file():
                        return True
                    if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".") \
                            and text_name(entry.name):
                        subdirs.append(entry.path)
        except OSError:
            return False
        for sub in subdirs:
            budget[0] -= 1
            if budget[0] < 0:
                return True  # too deep to tell cheaply: show it, expanding tells the truth
            if self._has_node_below(Path(sub), budget):
                return True
        return False

    def children(self, path: str) -> list[tuple[str, bool]]:
        """The child folders of ``path`` worth showing: ``[(child_path, is_node), ...]``.

        A child is a node (has ``AGENTS.md``) or a gap folder with a node somewhere below it.
        Hidden folders, symbolic links and names that are not UTF-8 (:func:`text_name`) are
        not followed. Sorted by name.
        """
        cached = self._children_cache.get(path)
        if cached is not None:
            return cached
        out: list[tuple[str, bool]] = []
        try:
            with os.scandir(self.abs(path)) as it:
                dirs = sorted((e for e in it if not e.name.startswith(".") and text_name(e.name)
                               and e.is_dir(follow_symlinks=False)), key=lambda e: e.name)
        except OSError:
            dirs = []
        for entry in dirs:
            child = f"{path}/{entry.name}" if path else entry.name
            if os.path.isfile(os.path.join(entry.path, NODE_INDEX)):
                out.append((child, True))
            elif self._has_node_below(Path(entry.path), [200]):
                out.append((child, False))
        self._children_cache[path] = out
        return out

    def walk_nodes(self) -> Iterator[str]:
        """Every node path, root first, depth-first in name order (gaps walked, not yielded).

        The memory root is yielded first even without an ``AGENTS.md`` (it is the tree's root).
        """
        yield ""
        stack = [c for c in reversed(self.children(""))]
        while stack:
            child, is_node = stack.pop()
            if is_node:
                yield child
            stack.extend(reversed(self.children(child)))

    def parent_node(self, path: str) -> str | None:
        """The nearest ancestor node of ``path`` (the root for a top folder), or ``None`` for the root."""
        if not path:
            return None
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        while parent and not self.is_node(parent):
            parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
        return parent

    def article_files(self, node: str) -> list[str]:
        """Markdown files of ``node`` (not ``AGENTS.md``, not the notebook/notes/operator files
        at the root), memory-relative, sorted. Symbolic links are included (the audit checks them)."""
        folder = self.abs(node)
        try:
            with os.scandir(folder) as it:
                names = sorted(e.name for e in it if e.name.lower().endswith(".md") and text_name(e.name)
                               and (e.is_file() or e.is_symlink()))
        except OSError:
            return []
        skip = SPECIAL_FILES if not node else {NODE_INDEX}
        return [f"{node}/{n}" if node else n for n in names if n not in skip]

    # -- content ---------------------------------------------------------------------------
    def _index(self, node: str) -> NodeIndex:
        file = self.abs(node) / NODE_INDEX
        shown = self.shown(f"{node}/{NODE_INDEX}" if node else NODE_INDEX)
        if not file.is_file():
            return NodeIndex(node=node, exists=False, title=Path(node).name or "memory")
        if not self._confined(os.fspath(file)):
            return NodeIndex(node=node, exists=True, title=Path(node).name or "memory", findings=[Finding.make(
                "symlink-outside", shown, f"is a symbolic link to {os.path.realpath(file)}, outside the workspace; "
                "not read", "replace the link with a copy of the file inside the workspace")])
        read = read_text(file, shown, self.ws.config.max_file_bytes)
        if not read.ok:
            return NodeIndex(node=node, exists=True, title=Path(node).name or "memory",
                             findings=read.findings)
        index = parse_index(read.text, node, shown)
        index.findings[:0] = read.findings
        return index

    def read_article(self, path: str) -> Article:
        """Read and split the article at memory-relative ``path`` (never raises)."""
        shown = self.shown(path)
        node = path.rsplit("/", 1)[0] if "/" in path else ""
        full = os.path.join(self._root_str, path)
        if not self._confined(full):
            finding = Finding.make(
                "symlink-outside", shown,
                f"leads through a symbolic link to {os.path.realpath(full)}, outside the workspace; not read",
                "replace the link with a copy of the file inside the workspace")
            return Article(path, node, {}, "", 1, "", 0, False, False, [finding])
        read: TextFile = read_text(full, shown, self.ws.config.max_file_bytes)
        findings = list(read.findings)
        if not read.ok:
            return Article(path, node, {}, "", 1, "", read.size, False, read.truncated, findings)
        fm = frontmatter.split(read.text)
        if fm.error:
            findings.append(Finding.make(
                "front-matter-unclosed" if fm.present and not fm.closed else "front-matter-invalid",
                shown, fm.error, "fix the YAML between the two `---` lines (quote values holding ': ')",
                line=fm.error_line, column=fm.error_column))
        for key, line in fm.duplicate_keys:
            findings.append(Finding.make(
                "front-matter-duplicate-key", shown, f"{key} is given twice (the second value is used)",
                "delete one of the two lines", line=line))
        second = fm.second_block_finding(shown)
        if second is not None:
            findings.append(second)
        return Article(path, node, fm.meta, fm.body, fm.body_line, read.text, read.size, True,
                       read.truncated, findings)

    def _confined(self, full: str) -> bool:
        """True when ``full`` (absolute) resolves inside the workspace: the file itself is
        checked when it is a symbolic link, its folder once per folder (invariant 4)."""
        folder = os.path.dirname(full)
        inside = self._folder_inside.get(folder)
        if inside is None:
            inside = self._folder_inside[folder] = is_inside(self.ws.root, Path(folder))
        if not inside:
            return False
        return not os.path.islink(full) or is_inside(self.ws.root, Path(full))

    # -- owners ----------------------------------------------------------------------------
    def own_owner(self, node: str) -> tuple[str | None, str]:
        """The owner set on ``node`` itself and where: ``(owner, "front matter"|"memtui.toml")``
        or ``(None, "")`` (seed 000 §7.4b; DESIGN.md §1 owner resolution)."""
        owner = self.index(node).meta.get("owner")
        if isinstance(owner, str) and owner.strip():
            return owner.strip(), "front matter"
        configured = self.ws.config.owners.get(node)
        if configured:
            return configured, "memtui.toml"
        return None, ""

    def owner(self, node: str) -> tuple[str | None, str]:
        """Resolve ``node``'s owner: its front matter, then ``memtui.toml [owners]``, then the
        parent node's owner. Returns ``(owner, source)`` where ``source`` says which node and how
        (``"support (front matter)"``, ``"inherited from platform (memtui.toml)"``), or
        ``(None, "")`` when no node up the chain has one."""
        current: str | None = node
        inherited = False
        while current is not None:
            owner, how = self.own_owner(current)
            if owner:
                where = current or "root"
                return owner, (f"inherited from {where} ({how})" if inherited else how)
            current = self.parent_node(current)
            inherited = True
        return None, ""
