"""Which memory node a skill is bound to, and so who owns it (seed 000 Part II §10: a skill's
"source of truth is Markdown in the memory tree, owned by its domain").

A skill is bound to a node in one of two ways, the first that applies:

1. **its folder lies in a node**: the skill folder (a link in ``skills/`` resolved, when it
   stays inside the workspace) is inside ``memory/``; the deepest node holding it binds it;
2. **the catalogue records it**: the ``SKILL.md`` front matter names the node under
   ``metadata`` (``metadata: {memory-node: support/parcels-lost}``), the one place the Agent
   Skills rules leave for a skill's own facts (an unknown top-level key is refused by the
   reference validator).

The node's owner (its ``AGENTS.md`` front matter, ``[owners]``, else inherited) is the skill's
owner. A skill bound to nothing, or to a folder that is not a node, is a finding.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtui.core.files import is_inside
from memtui.core.findings import Finding
from memtui.core.frontmatter import split
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace

#: The ``metadata`` key naming the bound node (memory-relative).
METADATA_KEY = "memory-node"



@dataclass(frozen=True, slots=True)
class Binding:
    """A skill's binding.

    Attributes:
        node: the bound node, memory-relative (``""`` is the root node), or ``None``.
        how: ``"folder"`` (its folder lies in the node) or ``"front matter"``; ``""`` unbound.
        owner: the node's owner, or ``None``.
        owner_how: where the owner comes from (``"front matter"``, ``"inherited from support
            (memtui.toml)"``).
        finding: ``skill-unbound`` / ``skill-binding-invalid`` when it is not bound, else ``None``.
    """

    node: str | None
    how: str
    owner: str | None
    owner_how: str
    finding: Finding | None = None

    @property
    def bound(self) -> bool:
        return self.node is not None

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "how": self.how, "owner": self.owner, "owner_how": self.owner_how,
                "finding": self.finding.to_json() if self.finding else None}


def named_node(text: str) -> str | None:
    """The node a ``SKILL.md`` text names under ``metadata``/``memory-node`` (stripped of
    ``memory/`` and slashes), or ``None``."""
    meta = split(text).meta
    if not isinstance(meta, dict):
        return None
    block = meta.get("metadata")
    value = block.get(METADATA_KEY) if isinstance(block, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    node = value.strip().strip("/")
    return node[len("memory/"):] if node.startswith("memory/") else node


def bind(ws: Workspace, folder: Path, skill_md_text: str | None, place: str) -> Binding:
    """The binding of the skill in ``folder`` whose ``SKILL.md`` holds ``skill_md_text``.

    Args:
        ws: the workspace.
        folder: the skill folder (absolute; a link is resolved only when it stays inside).
        skill_md_text: the text of its ``SKILL.md`` (``None`` when unreadable).
        place: the ``SKILL.md`` path as shown, for the finding.
    """
    tree = MemoryTree(ws)
    if ws.memory != ws.root and is_inside(ws.root, folder) and is_inside(ws.memory, folder):
        real = Path(os.path.realpath(folder))
        inside = real.relative_to(os.path.realpath(ws.memory)).parts
        for depth in range(len(inside), -1, -1):
            node = "/".join(inside[:depth])
            if tree.is_node(node):
                owner, how = tree.owner(node)
                return Binding(node, "folder", owner, how)
    named = named_node(skill_md_text) if skill_md_text is not None else None
    if named is None:
        return Binding(None, "", None, "", Finding.make(
            "skill-unbound", place, "the skill is bound to no node of the memory tree, so nobody owns it",
            f"name its node in SKILL.md as `metadata:` / `  {METADATA_KEY}: NODE` (`memtui skills bind NAME NODE`), "
            f"or keep its folder inside that node"))
    if ".." in named.split("/") or os.path.isabs(named) or not tree.is_node(named):
        return Binding(None, "", None, "", Finding.make(
            "skill-binding-invalid", place, f"the skill names the memory node {named!r}, which is not a node "
                                            "(no AGENTS.md there)",
            f"name an existing node under metadata.{METADATA_KEY}"))
    owner, how = tree.owner(named)
    return Binding(named, "front matter", owner, how)
