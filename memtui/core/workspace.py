"""The workspace: the folder memtui opens, its layout and its settings (DESIGN.md §2).

A workspace is any folder. When it holds ``memory/``, that is the memory tree; otherwise
the folder itself is read as the memory tree (so a repository's own tree of ``AGENTS.md``
files opens as it is), with an info finding saying so.

Opening a workspace reads ``memtui.toml`` (:mod:`memtui.core.config`) and nothing else: the tree is walked lazily
(:mod:`memtui.core.tree`) and audited on demand (:mod:`memtui.core.audit`).
"""

from __future__ import annotations

import os
from pathlib import Path

from memtui.core.config import CONFIG_NAME, Config, load as load_config
from memtui.core.errors import WorkspaceError
from memtui.core.files import confine, is_inside, rel
from memtui.core.findings import Finding

#: Member notes, the notebook and the operator files, relative to the memory tree (seed 002).
MEMBER_NOTES = "MEMORY_CUSTOM.md"
NOTEBOOK = "MEMORY.md"
OPERATOR_FILES = ("CONTEXT_RECOVERY.md", "FILE_DELIVERY.md", "MEMORY_ROUTING.md")
GRAPH_FILE = "graph.jsonl"
#: The MCP reference memory server's own default file name (corpus README, "Reference server").
SERVER_GRAPH_FILE = "memory.jsonl"
NODE_INDEX = "AGENTS.md"
#: Where a restore keeps the snapshot of a remote graph (the server's file form, as
#: ``graph.jsonl``); the backup tree holds it as ``remote/graph.jsonl``.
REMOTE_STATE = ".memtui/remote-graph.jsonl"
#: Files at the memory root that are not articles of the root node.
SPECIAL_FILES = frozenset({MEMBER_NOTES, NOTEBOOK, *OPERATOR_FILES, NODE_INDEX})


class Workspace:
    """An opened memory workspace.

    Attributes:
        root: the workspace folder (absolute, symlinks resolved).
        memory: the memory tree's root folder (``root/memory`` or ``root`` itself).
        config: the settings of ``memtui.toml``.
        findings: problems met while opening (config errors, no memory folder).
    """

    def __init__(self, root: Path, memory: Path, config: Config, findings: list[Finding]):
        self.root = root
        self.memory = memory
        self.config = config
        self.findings = findings

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "Workspace":
        """Open the workspace at ``path`` (reads only ``memtui.toml``).

        Raises:
            WorkspaceError: ``path`` does not exist, is not a folder, or cannot be listed.
        """
        given = Path(path).expanduser()
        if not given.exists():
            raise WorkspaceError(f"{given} does not exist; give the path of a workspace folder.")
        if not given.is_dir():
            raise WorkspaceError(f"{given} is a file, not a folder; give the workspace folder.")
        root = Path(os.path.realpath(given))
        try:
            names = set(os.listdir(root))
        except OSError as exc:
            raise WorkspaceError(f"{root} cannot be read ({exc.strerror}); check its permissions.") from exc
        config, findings = load_config(root / CONFIG_NAME)
        memory = root / "memory"
        if "memory" in names and memory.is_dir() and not memory.is_symlink():
            pass
        else:
            memory = root
            findings.append(Finding.make(
                "no-memory-folder", ".",
                "there is no memory/ folder, so the workspace folder itself is read as the memory tree",
                "create memory/ and move the tree into it for a full workspace"))
        return cls(root, memory, config, findings)

    # -- paths -----------------------------------------------------------------------------
    @property
    def memory_rel(self) -> str:
        """The memory tree's folder relative to the workspace (``"memory"`` or ``""``)."""
        return rel(self.root, self.memory) if self.memory != self.root else ""

    def path(self, relative: str) -> Path:
        """The absolute path of ``relative`` (workspace-relative), confined.

        Raises:
            ConfinementError: it leads outside the workspace.
        """
        return confine(self.root, relative)

    def shown(self, path: Path) -> str:
        """``path`` as shown to users and in findings: relative to the workspace."""
        return rel(self.root, path)

    @property
    def member_notes(self) -> Path:
        """``memory/MEMORY_CUSTOM.md`` (may not exist: an absent file is an empty document)."""
        return self.memory / MEMBER_NOTES

    @property
    def notebook(self) -> Path:
        """``memory/MEMORY.md``, the agent's own notes."""
        return self.memory / NOTEBOOK

    @property
    def operator_files(self) -> list[Path]:
        """The three operator files (read-only in memtui), whether or not they exist."""
        return [self.memory / name for name in OPERATOR_FILES]

    @property
    def graph_file(self) -> Path:
        """``memory/graph.jsonl``, the knowledge graph; when that is absent but the MCP memory
        server's default file name ``memory.jsonl`` is there, that file (a folder the server
        was pointed at opens as it is)."""
        default = self.memory / GRAPH_FILE
        if not default.exists():
            server_default = self.memory / SERVER_GRAPH_FILE
            if server_default.is_file():
                return server_default
        return default

    @property
    def skill_roots(self) -> dict[str, Path]:
        """``{"skills": <agent's root>, "shared-skills": <administrator's root>}``."""
        return {"skills": self.root / "skills", "shared-skills": self.root / "shared-skills"}

    def linked_outside(self, path: Path) -> Finding | None:
        """Whether ``path``, a folder memtui reads from (a root: ``skills/``,
        ``shared-skills/``, ``sessions/durable/``), leads outside the workspace through a
        symbolic link (itself or a folder above it): then a ``symlink-outside`` finding on the
        link, as for the memory tree's own links (invariant 4), and its callers read nothing
        there; ``None`` when it is absent or inside.
        """
        if not os.path.lexists(path) or is_inside(self.root, path):
            return None
        link = current = self.root
        for name in Path(path).relative_to(self.root).parts:  # the first link out, from the top, is the fault
            current = current / name
            if current.is_symlink() and not is_inside(self.root, current):
                link = current
                break
        return Finding.make(
            "symlink-outside", self.shown(link),
            f"is a symbolic link to {os.path.realpath(link)}, outside the workspace; memtui reads "
            "nothing through it", "replace the link with the folder itself (a copy inside the workspace)")

    @property
    def state_dir(self) -> Path:
        """``.memtui/``: memtui's own state (store, index, lock)."""
        return self.root / ".memtui"
