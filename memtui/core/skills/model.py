"""Skills (seed 002; Agent Skills rules): a skill, the catalogue of an agent's skills, and the constants the rules name.

A skill is a folder holding ``SKILL.md`` whose front matter gives ``name`` and ``description``;
the agent's root is ``skills/``, the administrator's read-only root ``shared-skills/``.
Skills never vanish: every folder holding a ``SKILL.md`` is a :class:`Skill` in the catalogue,
with its problems as findings. A skill's *key* is its folder name: the cascade flattens scopes
into one directory and the roots are ``<root>/<name>/SKILL.md``, so clashes are decided per
folder name.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from memtui.core.files import rel
from memtui.core.findings import Finding, Severity, sort_key


SKILL_FILE = "SKILL.md"


#: Root label of the agent's own skills (seed 002: ``<workspace>/skills/<name>/SKILL.md``).
AGENT_ROOT = "skills"


#: Root label of the administrator's skills (seed 002: read-only, wins on a name clash).
SHARED_ROOT = "shared-skills"


#: The folder holding the four publication scopes (seed 002's cascade).
CASCADE_DIR = "shared-skills.d"


#: The four scopes in the order the proxy flattens them; a later scope wins by name (seed 002).
SCOPES = ("tenant", "tenant-agent", "subscription", "subscription-agent")


#: The name the platform ships itself; an upload with it is refused (seed 002).
RESERVED_NAMES = frozenset({"shared-content"})


#: Front matter keys the Agent Skills specification allows.
ALLOWED_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")


#: Seed 002's upload pattern for a skill name.
UPLOAD_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


#: Default bound of the skill index in bytes (seed 002: "bounded at 8 KiB by default").
DEFAULT_INDEX_BUDGET = 8 * 1024


MAX_NAME = 64


MAX_DESCRIPTION = 1024


MAX_COMPATIBILITY = 500


#: Folders never searched for skills (version control, memtui's own state).
SKIP_DIRS = frozenset({".git", ".memtui", "__pycache__", "node_modules"})


AGENT_SPEC = "Agent Skills spec"


@dataclass(slots=True)
class Skill:
    """One folder holding a ``SKILL.md``, valid or not.

    Attributes:
        key: the folder name: what roots and scopes clash on (seed 002).
        folder: the skill folder (absolute).
        path: the ``SKILL.md`` as shown: relative to the catalogue's base folder, ``/``
            separators; also the "path to the body" of the index line.
        root: the root label: ``"skills"``, ``"shared-skills"``, a scope
            (``"shared-skills.d/tenant"``) or the label given to :func:`scan_root`.
        scope: for a shared skill, the cascade scope it came from, else ``None``.
        name: the ``name`` as the author wrote it (``"2024"``, not ``2024``), or ``None``
            when missing or not text-like (a list, a mapping).
        description: the ``description`` as written (block scalars folded by YAML), or ``None``.
        front_matter: every key with its value *as written*: scalars are the author's text,
            lists and mappings are nested the same way (JSON-safe by construction).
        body: the Markdown after the front matter (never starts with the front matter).
        body_line: 1-based file line of the body's first line.
        bom: the file starts with a UTF-8 byte order mark.
        crlf: the file uses CRLF line ends.
        nested_in: the ``SKILL.md`` path of the enclosing skill when this one lies inside
            another skill's folder (qdrant-scaling), else ``None``.
        shadowed_by: the path of the copy that wins over this one (administrator's copy,
            or a later cascade scope), else ``None``.
        duplicate_of: paths of other skills with the same key that neither wins over nor
            loses to this one (two collections in one folder).
        read_only: the administrator's copy (``shared-skills`` or a scope): memtui never
            writes it.
        loadable: ``False`` for a scope copy when ``shared-skills/`` holds the flattened
            result: agents load the mounted copy, not the source.
        size: bytes of ``SKILL.md``.
        sha256: hex digest of the bytes read (for the no-lost-update check on save).
        findings: the problems of this skill, most severe first.
    """

    key: str
    folder: Path
    path: str
    root: str
    scope: str | None = None
    name: str | None = None
    description: str | None = None
    front_matter: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1
    bom: bool = False
    crlf: bool = False
    nested_in: str | None = None
    shadowed_by: str | None = None
    duplicate_of: list[str] = field(default_factory=list)
    read_only: bool = False
    loadable: bool = True
    size: int = 0
    sha256: str = ""
    findings: list[Finding] = field(default_factory=list)

    @property
    def skill_md(self) -> Path:
        """The absolute path of ``SKILL.md``."""
        return self.folder / SKILL_FILE

    @property
    def has_problems(self) -> bool:
        """True when any finding is an error or a warning (info notes do not count)."""
        return any(f.severity in (Severity.ERROR, Severity.WARNING) for f in self.findings)

    @property
    def valid(self) -> bool:
        """The opposite of :attr:`has_problems`."""
        return not self.has_problems

    @property
    def shown_name(self) -> str:
        """The name to show: the front matter ``name`` when given, else the folder name."""
        return self.name if self.name else self.key

    @property
    def standing(self) -> str:
        """One word for the list views: ``shadowed``, ``nested``, ``source``, ``duplicate`` or ``""``."""
        if self.shadowed_by:
            return "shadowed"
        if self.nested_in:
            return "nested"
        if not self.loadable:
            return "source"
        if self.duplicate_of:
            return "duplicate"
        return ""

    @property
    def root_scope(self) -> str:
        """Its root, with the publication scope it came from when that is not the root itself."""
        if self.scope and not self.root.endswith(self.scope):
            return f"{self.root} ({self.scope})"
        return self.root

    @property
    def indexable(self) -> bool:
        """An agent's index can list it: top level, not shadowed, name and description text."""
        return (self.nested_in is None and self.shadowed_by is None and self.loadable
                and bool(self.name) and bool(self.description)
                and not any(f.code in UNUSABLE for f in self.findings))

    def files_beside(self) -> list[str]:
        """Other files in the skill folder (relative to it, ``/`` separators, sorted).

        Nested skills' folders are listed like any other file. Symbolic links are listed,
        never followed.
        """
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.folder):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                full = Path(dirpath) / name
                if full == self.skill_md:
                    continue
                out.append(rel(self.folder, full))
        return out

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of everything above except the body (``body_chars`` instead)."""
        return {
            "key": self.key, "name": self.name, "description": self.description,
            "path": self.path, "root": self.root, "scope": self.scope,
            "valid": self.valid, "indexable": self.indexable,
            "nested_in": self.nested_in, "shadowed_by": self.shadowed_by,
            "duplicate_of": list(self.duplicate_of), "read_only": self.read_only,
            "loadable": self.loadable, "bom": self.bom, "crlf": self.crlf, "size": self.size,
            "front_matter": self.front_matter, "body_line": self.body_line,
            "body_chars": len(self.body),
            "findings": [f.to_json() for f in self.findings],
        }


#: Finding codes that make a skill unusable for an agent's loader (no usable name/description).
UNUSABLE = frozenset({
    "skill-no-front-matter", "front-matter-invalid", "front-matter-unclosed",
    "front-matter-not-mapping", "not-utf8", "file-unreadable",
})


@dataclass(slots=True)
class Catalogue:
    """Every skill of a workspace (or folder), with shadowing and the cascade resolved.

    Attributes:
        base: the folder paths are shown relative to.
        roots: root label → folder, in precedence order (later roots win by name).
        skills: every skill found, sorted by root then path; shadowed, nested and duplicate
            copies included and marked.
        findings: problems of the catalogue as a whole (a cascade that does not match
            ``shared-skills/``).
    """

    base: Path
    roots: dict[str, Path] = field(default_factory=dict)
    skills: list[Skill] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def valid_count(self) -> int:
        """How many skills have no error or warning finding."""
        return sum(1 for s in self.skills if s.valid)

    @property
    def problem_count(self) -> int:
        """How many skills have an error or warning finding."""
        return sum(1 for s in self.skills if s.has_problems)

    def count_line(self) -> str:
        """``"N skills: V valid, P with problems"`` (the count says both)."""
        n = len(self.skills)
        return f"{n} skill{'s' if n != 1 else ''}: {self.valid_count} valid, {self.problem_count} with problems"

    def all_findings(self) -> list[Finding]:
        """Catalogue findings plus every skill's findings, most severe first."""
        found = list(self.findings)
        for skill in self.skills:
            found.extend(skill.findings)
        return sorted(found, key=sort_key)

    def loaded(self) -> list[Skill]:
        """The skills an agent's index lists (:attr:`Skill.indexable`), sorted by name."""
        return sorted((s for s in self.skills if s.indexable), key=lambda s: (s.name or "", s.path))

    def find(self, name: str) -> list[Skill]:
        """Skills whose folder name, front matter ``name``, folder path or ``SKILL.md`` path
        (relative to :attr:`base`) equals ``name``."""
        wanted = name.rstrip("/")
        return [s for s in self.skills
                if wanted in (s.key, s.name, s.path, s.path.rsplit("/", 1)[0])]
