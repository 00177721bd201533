"""The workspace: the folder memtui opens, its layout and its settings (DESIGN.md §2).

A workspace is any folder. When it holds ``memory/``, that is the memory tree; otherwise
the folder itself is read as the memory tree (so a repository's own tree of ``AGENTS.md``
files opens as it is), with an info finding saying so.

Opening a workspace reads ``memtui.toml`` and nothing else: the tree is walked lazily
(:mod:`memtui.core.tree`) and audited on demand (:mod:`memtui.core.audit`).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.errors import WorkspaceError
from memtui.core.files import DEFAULT_MAX_FILE_BYTES, confine, rel
from memtui.core.findings import Finding

#: Member notes, the notebook and the operator files, relative to the memory tree (seed 002).
MEMBER_NOTES = "MEMORY_CUSTOM.md"
NOTEBOOK = "MEMORY.md"
OPERATOR_FILES = ("CONTEXT_RECOVERY.md", "FILE_DELIVERY.md", "MEMORY_ROUTING.md")
GRAPH_FILE = "graph.jsonl"
#: The MCP reference memory server's own default file name (corpus README, "Reference server").
SERVER_GRAPH_FILE = "memory.jsonl"
NODE_INDEX = "AGENTS.md"
#: Files at the memory root that are not articles of the root node.
SPECIAL_FILES = frozenset({MEMBER_NOTES, NOTEBOOK, *OPERATOR_FILES, NODE_INDEX})


@dataclass(slots=True)
class Config:
    """Settings from ``memtui.toml``; every setting has a default.

    Attributes:
        profile: the profile memtui acts as (``[user] profile``), or ``None``.
        owners: node path (relative to the memory tree, ``""`` for the root) → owner profile
            (``[owners]``).
        max_file_bytes: size limit of a file read whole (``[limits] max_file_bytes``, bytes).
        raw: the whole parsed file, for sections later features read.
    """

    profile: str | None = None
    owners: dict[str, str] = field(default_factory=dict)
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    raw: dict[str, Any] = field(default_factory=dict)


def load_config(path: Path) -> tuple[Config, list[Finding]]:
    """Read ``memtui.toml`` at ``path``; a missing file gives the defaults.

    Returns:
        ``(config, findings)``: a broken file gives the defaults and one error finding
        (code ``config-invalid``) with the line TOML reports.
    """
    config = Config()
    if not path.exists():
        return config, []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        return config, [Finding.make(
            "config-invalid", path.name, f"cannot be read: {exc}",
            "fix the TOML syntax; memtui uses the defaults meanwhile")]
    config.raw = data
    findings: list[Finding] = []
    user = data.get("user", {})
    if isinstance(user, dict) and isinstance(user.get("profile"), str):
        config.profile = user["profile"].strip() or None
    owners = data.get("owners", {})
    if isinstance(owners, dict):
        for node, owner in owners.items():
            if isinstance(owner, str) and owner.strip():
                config.owners[str(node).strip("/")] = owner.strip()
            else:
                findings.append(Finding.make(
                    "config-invalid", path.name, f"[owners] {node!r} must be a profile name (text)",
                    'write it as "node/path" = "profile.name"'))
    limits = data.get("limits", {})
    if isinstance(limits, dict) and "max_file_bytes" in limits:
        value = limits["max_file_bytes"]
        if isinstance(value, int) and value > 0:
            config.max_file_bytes = value
        else:
            findings.append(Finding.make(
                "config-invalid", path.name, "[limits] max_file_bytes must be a positive whole number",
                "give the size in bytes, for example 2097152"))
    return config, findings


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
        config, findings = load_config(root / "memtui.toml")
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

    @property
    def state_dir(self) -> Path:
        """``.memtui/``: memtui's own state (store, index, lock)."""
        return self.root / ".memtui"

    def session_files(self) -> list[Path]:
        """Session histories ``sessions/durable/*.jsonl``, sorted by name."""
        folder = self.root / "sessions" / "durable"
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file())
