"""The memory tree's structure (seed 000 §1, §2 rule 4; seed 002's operator files).

An entry of :data:`memtui.core.audit.CHECKS`:

- ``folder-no-index``: a folder of the memory tree holding articles but no ``AGENTS.md``
  (seed 000 §1: "every node in the memory tree has an AGENTS.md index");
- ``node-unlisted``: a node its parent's index does not list ("creating one updates the parent
  AGENTS.md index in the same change", §2 rule 4);
- ``node-owner-same``: a node whose own owner is the owner of the node above it ("a new node
  needs ... a distinct owning profile", §2 rule 4);
- ``routing-without-graph``: ``MEMORY_ROUTING.md`` while the workspace has no graph (seed 002:
  "a document telling it to prefer them would be actively wrong — worse than silent");
- ``operator-file-missing``: no ``CONTEXT_RECOVERY.md`` or ``FILE_DELIVERY.md`` in a workspace
  of seed 002's harness (one with another operator file or with session histories: the
  operator mounts them into every workspace it creates).
"""

from __future__ import annotations

import os

from memtui.core.findings import Finding
from memtui.core.folders import findings_after
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import NODE_INDEX, SPECIAL_FILES, Workspace


def _folders_without_index(ws: Workspace, tree: MemoryTree, memo: dict | None = None,
                           changed: list[str] | None = None) -> list[Finding]:
    """``folder-no-index`` for every folder of the memory tree (hidden folders and symbolic
    links not entered); with ``memo`` and ``changed`` (memory-relative paths), only the folders
    the changes touched are looked at again (:func:`memtui.core.folders.findings_after`)."""
    memory = os.fspath(ws.memory)

    def look(rel: str) -> tuple[list[Finding], list[str]] | None:
        folder = os.path.join(memory, rel) if rel else memory
        files: list[str] = []
        subdirs: list[str] = []
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        files.append(entry.name)
                    elif not entry.name.startswith(".") and not entry.is_symlink():
                        subdirs.append(f"{rel}/{entry.name}" if rel else entry.name)
        except OSError:
            return None
        subdirs.sort()
        articles = [f for f in files if f.lower().endswith(".md") and f not in SPECIAL_FILES]
        if not rel or NODE_INDEX in files or not articles:
            return [], subdirs
        return [Finding.make(
            "folder-no-index", tree.shown(rel),
            f"holds {len(articles)} article{'s' if len(articles) != 1 else ''} but no AGENTS.md, so no agent "
            "boots from it and its articles are listed nowhere",
            "write an AGENTS.md with one line per article (and an owner), or move the articles into a node")], subdirs

    def reachable(rel: str) -> bool:
        if not rel:
            return True
        parts = rel.split("/")
        for n in range(1, len(parts) + 1):
            full = os.path.join(memory, *parts[:n])
            if parts[n - 1].startswith(".") or os.path.islink(full) or not os.path.isdir(full):
                return False
        return True

    return findings_after({} if memo is None else memo, changed, look, reachable)


def node_findings(tree: MemoryTree, node: str) -> list[Finding]:
    """``node-unlisted`` and ``node-owner-same`` for one node (called by the per-node audit,
    :func:`memtui.core.tree.audit.audit_node`, so it runs in the audit's worker processes)."""
    out: list[Finding] = []
    if node:
        parent = tree.parent_node(node)
        index = tree.index(node)
        if parent is None or not index.exists:
            return out
        shown = tree.shown(f"{node}/{NODE_INDEX}")
        parent_index = tree.index(parent)
        if parent_index.exists:
            listed = {e.path for e in parent_index.entries + parent_index.children if e.path}
            if f"{node}/{NODE_INDEX}" not in listed and node not in listed:
                parent_shown = tree.shown(f"{parent}/{NODE_INDEX}" if parent else NODE_INDEX)
                rel = node[len(parent) + 1:] if parent else node
                out.append(Finding.make(
                    "node-unlisted", shown, f"the node is not listed in {parent_shown}, so agents reading the "
                    "parent index do not know it exists",
                    f"add a line '- [{index.title}]({rel}/AGENTS.md) — <what it holds>' to {parent_shown}"))
        own, _how = tree.own_owner(node)
        above, _ = tree.owner(parent)
        if own and above and own == above:
            out.append(Finding.make(
                "node-owner-same", shown,
                f"the node's owner {own!r} also owns the node above it: a node exists because a distinct "
                "profile writes it",
                "keep these articles as entries of the parent node, or give the node its own owning profile"))
    return out


def _remote_graph(ws: Workspace) -> bool:
    """A remote graph is configured (``[graph] remote`` or the ``config.json`` memory block,
    read by the MCP client): the agent then has the graph tools although there is no local file."""
    if ws.config.graph.remote:
        return True
    from memtui.core.graph.remote import memory_block

    block, _problem = memory_block(ws.root)
    return block is not None


def _operator_files(ws: Workspace) -> list[Finding]:
    out: list[Finding] = []
    routing = ws.memory / "MEMORY_ROUTING.md"
    if routing.is_file() and not ws.graph_file.exists() and not _remote_graph(ws):
        out.append(Finding.make(
            "routing-without-graph", ws.shown(routing),
            "MEMORY_ROUTING.md tells the agent to use the memory graph, but this workspace has no graph: "
            "with no graph the agent has no mcp_memory_* tools, so the file sends it to tools it does not have",
            "remove MEMORY_ROUTING.md, or enable the graph (memory/graph.jsonl)"))
    # a workspace of the agents' harness: the operator mounts its files together, and
    # CONTEXT_RECOVERY.md is what tells the agent where its session histories are
    harnessed = any(p.exists() for p in ws.operator_files) or (ws.root / "sessions" / "durable").is_dir()
    if ws.memory != ws.root and harnessed:
        for name in ("CONTEXT_RECOVERY.md", "FILE_DELIVERY.md"):
            if not (ws.memory / name).exists():
                out.append(Finding.make(
                    "operator-file-missing", ws.shown(ws.memory / name),
                    f"the operator file {name} is missing; agents are not told "
                    + ("where their complete history is kept" if name.startswith("CONTEXT") else
                       "where a produced file goes"),
                    "ask the operator to mount it (memtui never writes operator files)"))
    return out


def audit_findings(ws: Workspace) -> list[Finding]:
    """The workspace-wide structure findings of ``ws`` (the per-node ones come from
    :func:`node_findings` through the node audit)."""
    tree = MemoryTree(ws)
    return _folders_without_index(ws, tree) + _operator_files(ws)


def audit_findings_after(ws: Workspace, memo: dict, changed: list[str] | None) -> list[Finding]:
    """:func:`audit_findings` after ``changed`` paths changed: the folders without an index
    looked at again only where the changes are (their findings kept by folder in ``memo``,
    ``{}`` the first time); the operator files (a few names) always.

    Args:
        ws: the workspace.
        memo: this check's state from the last call.
        changed: workspace-relative paths (``/``) added, changed or removed since that call;
            ``None`` looks at every folder.
    """
    inner: list[str] | None = None
    if changed is not None:
        prefix = ws.memory_rel
        inner = []
        for path in changed:
            if not prefix:
                inner.append(path)
            elif path == prefix or path.startswith(prefix + "/"):
                inner.append(path[len(prefix) + 1:])
    return _folders_without_index(ws, MemoryTree(ws), memo, inner) + _operator_files(ws)
