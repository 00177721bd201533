"""What a node's agent boots with (seed 000 §2 rule 1), within a byte budget.

Seed 000 §2 rule 1: "An agent starts from its own node's AGENTS.md plus the task prompt —
not the whole chain … the index of every domain is always available to it." So a boot is:

1. the node's own ``AGENTS.md``, whole;
2. the index of every domain: one line per node of the memory tree
   (``- <path to AGENTS.md> — <title>``), so the agent knows the rest of the tree exists;
3. optionally the skill index (seed 002), which reaches every turn too, bounded by its
   own budget (8 KiB by default).

The budget (bytes, UTF-8) covers parts 1 and 2, filled in that order: the own index is cut
at a line end when it alone is over the budget (and then the whole domain index is
omitted), and from the first domain line that does not fit, it and every later line are
omitted. Whatever is cut or omitted is *named* — a bundle that hides its own cut is a
bundle that lies (seed 004).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from memtui.core.errors import MemtuiError
from memtui.core.skills import DEFAULT_INDEX_BUDGET, SkillIndex, build_index, load_catalogue
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import NODE_INDEX, Workspace

#: Default boot budget in bytes. No seed gives one; 16 KiB holds a node index plus a
#: one-line-per-node map of a few hundred domains. Override with ``--budget``.
DEFAULT_BOOT_BUDGET = 16 * 1024

OWN_HEADER = "# Own node: {path}\n\n"
DOMAINS_HEADER = "\n# Index of every domain\n\n"
SKILLS_HEADER = "\n# Skills\n\n"


class NodeNotFoundError(MemtuiError):
    """The node given to :func:`build_boot` is not a node of the memory tree."""


@dataclass(slots=True)
class Boot:
    """The boot bundle of one node.

    Attributes:
        node: the node, memory-relative (``""`` for the root).
        path: its ``AGENTS.md`` as shown (workspace-relative).
        text: the bundle: own index, then the index of every domain (then skills, if asked).
        budget: bytes allowed for the own index plus the domain index.
        own_size: bytes of the own ``AGENTS.md`` as read (before any cut).
        own_truncated: the own index was cut to fit; ``own_kept`` bytes of it are in ``text``.
        own_kept: bytes of the own index kept.
        domains: ``(node path shown, line)`` of every domain line included.
        omitted: ``(node path shown, line)`` of every domain line left out by the budget.
        skills: the skill index part (its own budget), or ``None`` when not asked for.
        findings_text: plain-words notes on what was cut, one per line (empty when nothing).
    """

    node: str
    path: str
    text: str = ""
    budget: int = DEFAULT_BOOT_BUDGET
    own_size: int = 0
    own_truncated: bool = False
    own_kept: int = 0
    domains: list[tuple[str, str]] = field(default_factory=list)
    omitted: list[tuple[str, str]] = field(default_factory=list)
    skills: SkillIndex | None = None
    #: the marks of the own node's listed articles that have any (``{article: marks}``,
    #: :meth:`memtui.core.governance.Ledger.marks`): an agent booting here is told which of
    #: its articles are contested or untrusted
    marks: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Bytes of :attr:`text` in UTF-8 (skills part included when present)."""
        return len(self.text.encode("utf-8"))

    @property
    def memory_size(self) -> int:
        """Bytes of the memory part (own index and domain index), the part the budget bounds."""
        return self.size - (len((SKILLS_HEADER + self.skills.text).encode("utf-8")) if self.skills else 0)

    def notes(self) -> list[str]:
        """What was truncated or omitted, in plain words (empty when everything fit)."""
        out = []
        for article, marks in self.marks.items():
            out.append(f"{article} is {' and '.join(marks)}")
        if self.own_truncated:
            out.append(f"{self.path} truncated: {self.own_kept:,} of {self.own_size:,} bytes kept")
        if self.omitted:
            out.append(f"{len(self.omitted)} domain{'s' if len(self.omitted) != 1 else ''} omitted "
                       "from the index of every domain: " + ", ".join(p for p, _ in self.omitted))
        if self.skills and self.skills.cut:
            out.append(f"{len(self.skills.cut)} skill{'s' if len(self.skills.cut) != 1 else ''} cut "
                       "from the skill index: " + ", ".join(s.name or s.key for s, _ in self.skills.cut))
        return out

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of the bundle, its sizes and what was cut; ``skills`` is the skill
        index's :meth:`~memtui.core.skills.SkillIndex.to_json` (0 bytes and empty lists when
        ``with_skills`` is false)."""
        return {
            "node": self.node, "path": self.path, "budget": self.budget, "size": self.size,
            "memory_size": self.memory_size, "own_size": self.own_size,
            "own_truncated": self.own_truncated, "own_kept": self.own_kept,
            "domains": [{"path": p, "line": ln.rstrip("\n")} for p, ln in self.domains],
            "omitted": [{"path": p, "line": ln.rstrip("\n")} for p, ln in self.omitted],
            "with_skills": self.skills is not None,
            # not asked for: the same object with empty lists, never null
            "skills": self.skills.to_json() if self.skills else {
                "budget": 0, "size": 0, "full_size": 0, "text": "", "entries": [], "cut": [], "left_out": []},
            "marks": {a: list(m) for a, m in self.marks.items()},
            "notes": self.notes(), "text": self.text,
        }


def resolve_node(ws: Workspace, tree: MemoryTree, given: str) -> str:
    """Turn what a user typed into a memory-relative node path.

    Accepts ``""``, ``.`` or ``/`` for the root, a memory-relative path (``platform/intake``),
    a workspace-relative one (``memory/platform/intake``) and either with ``/AGENTS.md``.

    Raises:
        ConfinementError: the path leads outside the workspace.
        NodeNotFoundError: the folder holds no ``AGENTS.md``.
    """
    text = given.strip().replace("\\", "/").strip("/")
    if text.endswith(NODE_INDEX):
        text = text[: -len(NODE_INDEX)].rstrip("/")
    if text in ("", "."):
        text = ""
    prefix = ws.memory_rel
    candidates = [text]
    if prefix and (text == prefix or text.startswith(prefix + "/")):
        candidates.insert(0, text[len(prefix):].lstrip("/"))
    for candidate in candidates:
        folder = ws.path(os.path.join(prefix, candidate) if prefix else (candidate or "."))
        relative = os.path.relpath(folder, ws.memory).replace(os.sep, "/")
        if relative.startswith(".."):
            continue  # inside the workspace but outside the memory tree
        if (folder / NODE_INDEX).is_file():
            return "" if relative == "." else relative
    raise NodeNotFoundError(
        f"{given!r} is not a node: no {NODE_INDEX} in {tree.shown(text)}; "
        "`memtui audit` or the Tree area lists the nodes.")


def _cut_to_bytes(text: str, limit: int) -> str:
    """The longest prefix of ``text`` ending at a line end whose UTF-8 size is ≤ ``limit``
    (or, when even the first line is too long, the longest prefix on a character boundary)."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    head = data[:limit]
    cut = head.rfind(b"\n")
    if cut >= 0:
        return head[: cut + 1].decode("utf-8")
    return head.decode("utf-8", "ignore")


def domain_line(tree: MemoryTree, node: str) -> str:
    """``- <AGENTS.md path shown> — <node title>`` and a newline."""
    path = tree.shown(f"{node}/{NODE_INDEX}" if node else NODE_INDEX)
    title = " ".join((tree.index(node).title or node or "memory").split())
    return f"- {path} — {title}\n"


def build_boot(ws: Workspace, node: str, budget: int = DEFAULT_BOOT_BUDGET, *,
               with_skills: bool = False, skills_budget: int = DEFAULT_INDEX_BUDGET) -> Boot:
    """Build what the agent of ``node`` boots with (seed 000 §2 rule 1).

    Args:
        ws: the workspace.
        node: the node as the user gave it (see :func:`resolve_node`).
        budget: bytes for the own index plus the index of every domain (≥ 0).
        with_skills: append the skill index (seed 002), bounded by ``skills_budget``.
        skills_budget: bytes for the skill index (default 8 KiB, seed 002).

    Returns:
        A :class:`Boot` naming everything truncated or omitted.

    Raises:
        ValueError: a budget is negative.
        NodeNotFoundError, ConfinementError: see :func:`resolve_node`.
    """
    if budget < 0 or skills_budget < 0:
        raise ValueError("a budget must be 0 bytes or more")
    tree = MemoryTree(ws)
    node = resolve_node(ws, tree, node)
    shown = tree.shown(f"{node}/{NODE_INDEX}" if node else NODE_INDEX)
    boot = Boot(node=node, path=shown, budget=budget)
    index = tree.index(node)
    own_text = index.text if index.text.endswith("\n") or not index.text else index.text + "\n"
    boot.own_size = len(index.text.encode("utf-8"))
    header = OWN_HEADER.format(path=shown)
    room = budget - len(header.encode("utf-8"))
    kept = _cut_to_bytes(own_text, max(room, 0))
    boot.own_truncated = kept != own_text
    boot.own_kept = len(kept.encode("utf-8")) if boot.own_truncated else boot.own_size
    parts = [header if room >= 0 else "", kept]
    used = sum(len(p.encode("utf-8")) for p in parts)

    lines = [(tree.shown(f"{n}/{NODE_INDEX}" if n else NODE_INDEX), domain_line(tree, n))
             for n in tree.walk_nodes() if tree.is_node(n)]
    head_size = len(DOMAINS_HEADER.encode("utf-8"))
    first = len(lines[0][1].encode("utf-8")) if lines else 0
    # Once something is cut, everything after it is cut too (the loader stops at its bound).
    if lines and not boot.own_truncated and used + head_size + first <= budget:
        parts.append(DOMAINS_HEADER)
        used += head_size
        for path, line in lines:
            size = len(line.encode("utf-8"))
            if not boot.omitted and used + size <= budget:
                parts.append(line)
                boot.domains.append((path, line))
                used += size
            else:
                boot.omitted.append((path, line))
    else:
        boot.omitted = lines
    if with_skills:
        boot.skills = build_index(load_catalogue(ws), skills_budget)
        parts.append(SKILLS_HEADER + boot.skills.text)
    boot.text = "".join(parts)
    boot.marks = _marks(ws, [e.path for e in index.entries if e.path])
    return boot


def _marks(ws: Workspace, articles: list[str]) -> dict[str, tuple[str, ...]]:
    """The marks of ``articles`` that have any (read-only; nothing when the store is damaged)."""
    from memtui.core.governance.model import Ledger
    from memtui.core.store import Store

    store = Store.open(ws, read_only=True)
    try:
        if store.damaged:
            return {}
        ledger = Ledger(store)
        found = {a: ledger.marks(a) for a in articles}
        return {a: m for a, m in found.items() if m}
    finally:
        store.close()
