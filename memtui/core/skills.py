"""The skills catalogue: which skills an agent really gets, and what is wrong with each.

Sources of the rules (each finding names its own):

- **seed 002** (*Skills and memory*): a skill is a folder holding ``SKILL.md`` whose front
  matter gives ``name`` and ``description``; the agent's root ``skills/`` and the
  administrator's read-only root ``shared-skills/``; on a name present in both the
  administrator's copy wins and the shadowed copy is shown; the four-scope cascade
  ``tenant → tenant-agent → subscription → subscription-agent`` (later wins by name) that
  decides what ``shared-skills/`` holds; the upload pattern ``^[a-z0-9][a-z0-9._-]{0,63}$``
  and the reserved name ``shared-content``; only the index (one line a skill: name,
  description, path to the body) reaches the prompt, bounded at 8 KiB by default.
- **the Agent Skills rules** (agentskills.io specification): the file starts with front
  matter; allowed keys ``name, description, license, compatibility, metadata,
  allowed-tools``; ``name`` 1–64 characters of lowercase letters, digits and hyphens, no
  leading, trailing or double hyphen, equal to its folder; ``description`` 1–1024
  characters; ``compatibility`` at most 500 characters.
- **bug inputs** B03 (typed YAML values), B17 (brackets and slashes in names), B18 (BOM and
  CRLF), B19 (invalid or unusual front matter).

Skills never vanish: every folder holding a ``SKILL.md`` is a :class:`Skill` in the
catalogue, with its problems as findings. Nothing here writes, except
:func:`save_skill_field` and :func:`save_skill_text` (atomic, minimal, conflict-checked).

Names: a skill's *key* is its folder name — the cascade flattens scopes into one directory
and the roots are ``<root>/<name>/SKILL.md``, so clashes are decided per folder name.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import yaml

from memtui.core import atomic
from memtui.core.errors import ConflictError, ReadOnlyError
from memtui.core.files import is_inside, read_text, rel
from memtui.core.findings import Finding, Severity, sort_key
from memtui.core.frontmatter import FrontMatter, split
from memtui.core.workspace import Workspace

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
_SKIP_DIRS = frozenset({".git", ".memtui", "__pycache__", "node_modules"})

_AGENT_SPEC = "Agent Skills spec"
_SEED_002 = "seed 002"

_TAG_WORDS = {
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:timestamp": "a date",
    "tag:yaml.org,2002:null": "empty",
}

# Words that say *when* a skill applies (seed 002: "Write it as the situation it answers").
_SITUATION = re.compile(
    r"\b(when|whenever|if|use (?:it |this |this skill )?(?:for|to|on|with|in)|used (?:for|to|when)"
    r"|should be used|triggers?|asks?|wants?|needs?|before|after|during)\b",
    re.IGNORECASE)


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------

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
            lists and mappings are nested the same way (JSON-safe by construction; B03).
        body: the Markdown after the front matter (never starts with the front matter; B18).
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
                and not any(f.code in _UNUSABLE for f in self.findings))

    def files_beside(self) -> list[str]:
        """Other files in the skill folder (relative to it, ``/`` separators, sorted).

        Nested skills' folders are listed like any other file. Symbolic links are listed,
        never followed.
        """
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.folder):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
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
_UNUSABLE = frozenset({
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
        """``"N skills: V valid, P with problems"`` (bug input B19: the count says both)."""
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


# --------------------------------------------------------------------------------------------
# Parsing one SKILL.md
# --------------------------------------------------------------------------------------------

def _written(node: yaml.Node) -> Any:
    """A YAML node as the author wrote it: scalars as their text, collections nested."""
    if isinstance(node, yaml.ScalarNode):
        return node.value
    if isinstance(node, yaml.SequenceNode):
        return [_written(child) for child in node.value]
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            out[str(_written(key_node))] = _written(value_node)
        return out
    return None  # pragma: no cover - alias nodes are resolved by compose


def _compose_fields(raw: str) -> dict[str, tuple[int, yaml.Node]]:
    """Top-level keys of a front matter block → (1-based line within the block, value node).

    A key given twice keeps its last occurrence, as PyYAML does. Returns ``{}`` when the
    block is not a mapping or cannot be composed (the caller already has the error).
    """
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        node = yaml.compose(raw, Loader=loader)
    except yaml.YAMLError:
        return {}
    if not isinstance(node, yaml.MappingNode):
        return {}
    out: dict[str, tuple[int, yaml.Node]] = {}
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            out[key_node.value] = (key_node.start_mark.line + 1, value_node)
    return out


def _type_word(node: yaml.Node) -> str | None:
    """Why ``node`` is not text, in plain words, or ``None`` when it is text."""
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if isinstance(node, yaml.MappingNode):
        return "a set of keys and values"
    if isinstance(node, yaml.ScalarNode) and not node.style:  # plain: None or "" by loader
        return _TAG_WORDS.get(node.tag)
    return None


def check_name(name: str) -> tuple[list[str], list[str]]:
    """Check a skill name against both naming rules.

    Args:
        name: the name as written.

    Returns:
        ``(agent_skills_breaks, upload_breaks)``: plain-words reasons the name breaks the
        Agent Skills rules, and seed 002's upload pattern. Both empty means valid for both.
        Where they disagree (``.`` and ``_`` pass seed 002 but not Agent Skills) the two
        lists say so separately; neither rule is silently preferred.
    """
    spec: list[str] = []
    if not 1 <= len(name) <= MAX_NAME:
        spec.append(f"is {len(name)} characters long (1–{MAX_NAME} allowed)")
    bad = sorted({c for c in name if not (c.islower() and c.isascii() or c.isdigit() and c.isascii() or c == "-")})
    if any(c.isupper() for c in name):
        spec.append("has uppercase letters")
    shown_bad = [c for c in bad if not c.isupper()]
    if shown_bad:
        spec.append("has " + ", ".join(_char_word(c) for c in shown_bad)
                    + " (only lowercase letters, digits and hyphens are allowed)")
    if name.startswith("-"):
        spec.append("starts with a hyphen")
    if name.endswith("-") and len(name) > 1:
        spec.append("ends with a hyphen")
    if "--" in name:
        spec.append("has a double hyphen")
    upload: list[str] = []
    if not UPLOAD_PATTERN.match(name):
        if not name or not re.match(r"[a-z0-9]", name[0]):
            upload.append("must start with a lowercase letter or digit")
        if len(name) > MAX_NAME:
            upload.append(f"is over {MAX_NAME} characters")
        others = sorted({c for c in name[1:] if not re.match(r"[a-z0-9._-]", c)})
        if others:
            upload.append("has " + ", ".join(_char_word(c) for c in others))
        if not upload:  # pragma: no cover - defensive
            upload.append("does not match the pattern")
    return spec, upload


def _char_word(c: str) -> str:
    names = {" ": "a space", "_": "an underscore", ".": "a dot", "/": "a slash", "\t": "a tab"}
    if c in names:
        return names[c]
    if c.isupper():
        return f"uppercase {c!r}"
    return repr(c)


def _situation_named(description: str) -> bool:
    """True when a description says when to use the skill (seed 002's quality rule)."""
    return bool(_SITUATION.search(description))


def parse_skill(folder: Path, shown: str, root: str, *, key: str | None = None,
                limit: int | None = None) -> Skill:
    """Read and validate one skill folder's ``SKILL.md``; never raises.

    Args:
        folder: the skill folder (absolute; already confined by the caller).
        shown: the ``SKILL.md`` path to show in findings (relative, ``/`` separators).
        root: the root label (see :attr:`Skill.root`).
        key: the name roots clash on (default: the folder name).
        limit: the size limit of a read (default: :data:`memtui.core.files.DEFAULT_MAX_FILE_BYTES`).

    Returns:
        A :class:`Skill` whose ``findings`` hold every problem found (B18, B19, B03).
    """
    skill = Skill(key=key or folder.name, folder=folder, path=shown, root=root)
    skill.read_only = root == SHARED_ROOT or root.startswith(CASCADE_DIR)
    kwargs = {"limit": limit} if limit else {}
    text_file = read_text(folder / SKILL_FILE, shown, **kwargs)
    skill.size = text_file.size
    skill.bom, skill.crlf = text_file.bom, text_file.crlf
    skill.findings.extend(text_file.findings)
    if not text_file.ok:
        skill.findings.sort(key=sort_key)
        return skill
    try:
        skill.sha256 = hashlib.sha256((folder / SKILL_FILE).read_bytes()).hexdigest()
    except OSError:  # vanished between the two reads: the read finding already says so
        pass
    fm = split(text_file.text)
    skill.body, skill.body_line = fm.body, fm.body_line
    _validate(skill, fm)
    skill.findings.sort(key=sort_key)
    return skill


def _validate(skill: Skill, fm: FrontMatter) -> None:
    add = skill.findings.append
    p = skill.path
    if not fm.present:
        add(Finding.make(
            "skill-no-front-matter", p, "no front matter: name and description missing",
            f"start the file with a `---` block giving name and description ({_AGENT_SPEC}: "
            "the file starts with YAML front matter)", line=1))
        return
    if fm.error:
        code = "front-matter-unclosed" if not fm.closed else (
            "front-matter-not-mapping" if "expected keys and values" in fm.error else "front-matter-invalid")
        message = fm.error
        if not fm.closed:
            message = "front matter is never closed (no second `---` line): name and description cannot be read"
        add(Finding.make(code, p, message,
                         "fix the front matter; until then agents get neither name nor description "
                         f"({_AGENT_SPEC}: the file starts with valid YAML front matter)",
                         line=fm.error_line, column=fm.error_column))
        if not fm.closed:
            skill.body = fm.body  # the whole text: nothing can be trusted as front matter
        return
    fields = _compose_fields(fm.raw) if fm.raw.strip() else {}
    skill.front_matter = {k: _written(node) for k, (_ln, node) in fields.items()}

    def line_of(key: str) -> int | None:
        return fields[key][0] + 1 if key in fields else None  # +1: the opening fence

    for key, line in fm.duplicate_keys:
        add(Finding.make(
            "skill-duplicate-key", p, f"{key} is given twice (second value used)",
            "delete one of the two lines; YAML loaders disagree on which one wins", line=line))

    # name
    name_node = fields.get("name", (0, None))[1]
    if name_node is None or (isinstance(name_node, yaml.ScalarNode)
                             and (name_node.tag.endswith(":null") and not name_node.style
                                  or not name_node.value.strip())):
        add(Finding.make(
            "skill-no-name", p, "name is missing" if name_node is None else "name is empty",
            f"add `name: {skill.key}` to the front matter ({_AGENT_SPEC}: name is required, "
            "equal to the folder name)", line=line_of("name") or 1))
    else:
        word = _type_word(name_node)
        if isinstance(name_node, yaml.ScalarNode):
            skill.name = name_node.value
        if word:
            written = f" (`{name_node.value}`)" if isinstance(name_node, yaml.ScalarNode) else ""
            add(Finding.make(
                "skill-bad-field-type", p, f"name is {word}{written}, expected text",
                'put the name in quotes, for example name: "my-skill"', line=line_of("name")))
        if skill.name is not None:
            _check_name_rules(skill, skill.name, line_of("name"))

    # description
    desc_node = fields.get("description", (0, None))[1]
    if desc_node is None or (isinstance(desc_node, yaml.ScalarNode)
                             and (desc_node.tag.endswith(":null") and not desc_node.style
                                  or not desc_node.value.strip())):
        add(Finding.make(
            "skill-no-description", p,
            "description is missing" if desc_node is None else "description is empty",
            "add a description saying when to use the skill "
            f"({_AGENT_SPEC}: description is required, 1–{MAX_DESCRIPTION} characters; "
            f"{_SEED_002}: the description is the only part that decides whether the body is read)",
            line=line_of("description") or 1))
    else:
        word = _type_word(desc_node)
        if isinstance(desc_node, yaml.ScalarNode):
            skill.description = desc_node.value
        if word:
            written = f" (`{desc_node.value}`)" if isinstance(desc_node, yaml.ScalarNode) else ""
            add(Finding.make(
                "skill-bad-field-type", p, f"description is {word}{written}, expected text",
                "write the description as one piece of text, in quotes if it holds ': ' or "
                "starts with a symbol", line=line_of("description")))
        if skill.description is not None:
            length = len(skill.description)
            if length > MAX_DESCRIPTION:
                add(Finding.make(
                    "skill-description-length", p,
                    f"description is {length:,} characters, over the {MAX_DESCRIPTION:,} allowed",
                    f"shorten it and move detail into the body ({_AGENT_SPEC}: description "
                    f"1–{MAX_DESCRIPTION} characters)", line=line_of("description")))
            if not _situation_named(skill.description):
                add(Finding.make(
                    "skill-description-vague", p,
                    "description names no situation: it says what the skill is, not when to use it",
                    f"write it as the situation it answers, e.g. \"Use when the user asks for …\" "
                    f"({_SEED_002}: the description is the skill)", line=line_of("description")))

    # other keys
    unknown = [k for k in fields if k not in ALLOWED_KEYS]
    if unknown:
        add(Finding.make(
            "skill-unknown-key", p,
            "front matter has key" + ("s " if len(unknown) > 1 else " ") + ", ".join(unknown)
            + " outside the Agent Skills set",
            f"keep them if your harness reads them; other loaders ignore or reject them "
            f"({_AGENT_SPEC}: allowed keys {', '.join(ALLOWED_KEYS)})",
            line=line_of(unknown[0])))
    if "compatibility" in fields:
        node = fields["compatibility"][1]
        if isinstance(node, yaml.ScalarNode) and len(node.value) > MAX_COMPATIBILITY:
            add(Finding.make(
                "skill-compatibility-length", p,
                f"compatibility is {len(node.value):,} characters, over the {MAX_COMPATIBILITY} allowed",
                f"shorten it ({_AGENT_SPEC}: compatibility at most {MAX_COMPATIBILITY} characters)",
                line=line_of("compatibility")))
    for key in ("license", "compatibility"):
        if key in fields and not isinstance(fields[key][1], yaml.ScalarNode):
            add(Finding.make(
                "skill-bad-field-type", p, f"{key} is {_type_word(fields[key][1])}, expected text",
                f"write {key} as text ({_AGENT_SPEC})", line=line_of(key)))
    if "allowed-tools" in fields and not isinstance(fields["allowed-tools"][1], yaml.ScalarNode):
        # Some harnesses accept a YAML list here; the spec asks for space-separated text.
        add(Finding.make(
            "skill-bad-field-type", p,
            f"allowed-tools is {_type_word(fields['allowed-tools'][1])}, expected space-separated text",
            f"write the tools on one line separated by spaces ({_AGENT_SPEC}); harnesses that "
            "accept a list will still read it", line=line_of("allowed-tools"),
            severity=Severity.WARNING))
    if "metadata" in fields and not isinstance(fields["metadata"][1], yaml.MappingNode):
        add(Finding.make(
            "skill-bad-field-type", p, "metadata is not a set of keys and values",
            f"write metadata as `key: value` lines indented under it ({_AGENT_SPEC})",
            line=line_of("metadata")))


def _check_name_rules(skill: Skill, name: str, line: int | None) -> None:
    add = skill.findings.append
    p = skill.path
    spec, upload = check_name(name)
    quoted = repr(name)
    if spec:
        other = ("seed 002's upload pattern accepts it" if not upload
                 else "it breaks seed 002's upload pattern too")
        add(Finding.make(
            "skill-name-invalid", p,
            f"name {quoted} " + "; ".join(spec) + f" — breaks the {_AGENT_SPEC} naming rule ({other})",
            "use 1–64 lowercase letters, digits and single hyphens, not at either end "
            f"({_AGENT_SPEC})", line=line))
    if upload:
        other = ("the Agent Skills rules accept it" if not spec
                 else "it breaks the Agent Skills rules too")
        # An administrator upload is refused outright; for the agent's own skill it is a warning.
        severity = Severity.ERROR if skill.read_only else Severity.WARNING
        add(Finding.make(
            "skill-name-upload-pattern", p,
            f"name {quoted} " + "; ".join(upload)
            + f" — breaks {_SEED_002}'s upload pattern ^[a-z0-9][a-z0-9._-]{{0,63}}$ ({other}); "
            "an administrator could not publish it",
            f"rename it to match ^[a-z0-9][a-z0-9._-]{{0,63}}$ ({_SEED_002})",
            line=line, severity=severity))
    if name in RESERVED_NAMES:
        severity = Severity.INFO if skill.read_only else Severity.ERROR
        add(Finding.make(
            "skill-name-reserved", p,
            f"name {quoted} is reserved for the skill the platform ships ({_SEED_002})",
            "rename the skill; an upload with this name is refused" if not skill.read_only
            else "nothing to do if this is the platform's own copy", line=line, severity=severity))
    if name != skill.folder.name:
        add(Finding.make(
            "skill-name-mismatch", p,
            f"name {quoted} differs from its folder {skill.folder.name!r}",
            f"rename the folder or the name so they match ({_AGENT_SPEC}: name equals the "
            "folder name; clashes between roots are decided by folder name)", line=line))


# --------------------------------------------------------------------------------------------
# Discovery
# --------------------------------------------------------------------------------------------

def scan_root(path: str | os.PathLike[str], root_label: str, *, base: Path | None = None,
              confine_to: Path | None = None, limit: int | None = None) -> list[Skill]:
    """Find every ``SKILL.md`` under a skill root (a folder of skill folders).

    Args:
        path: the root folder (``skills/``, ``shared-skills/``, a scope folder, or any
            bare folder of skill folders such as a corpus collection or a bug input).
        root_label: the label stored in :attr:`Skill.root`.
        base: paths are shown relative to this folder (default: ``path`` itself).
        confine_to: symbolic links leading outside this folder are not followed
            (default: ``base``); such a link is a ``symlink-outside`` finding on a
            placeholder skill so it does not vanish.
        limit: size limit of one read, in bytes.

    Returns:
        Skills sorted by path: ``<path>/<name>/SKILL.md`` are the ones agents load; a
        ``SKILL.md`` deeper inside a skill folder is returned too, marked
        ``skill-nested`` (qdrant-scaling); one deeper inside a plain folder is marked
        ``skill-nested`` as well, saying agents do not load it. A missing root gives ``[]``.
    """
    root = Path(path)
    base = Path(base) if base is not None else root
    confine_to = Path(confine_to) if confine_to is not None else base
    if not root.is_dir():
        return []
    skills: list[Skill] = []
    skill_dirs: dict[Path, Skill] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        kept = []
        for d in sorted(dirnames):
            if d in _SKIP_DIRS:
                continue
            full = here / d
            if full.is_symlink():
                # os.walk does not descend links: a linked skill folder is read here, once,
                # and only when it stays inside the workspace (invariant 4).
                if not is_inside(confine_to, full):
                    placeholder = Skill(key=d, folder=full, path=rel(base, full / SKILL_FILE),
                                        root=root_label)
                    placeholder.findings.append(Finding.make(
                        "symlink-outside", rel(base, full),
                        f"skill folder is a symbolic link to {os.path.realpath(full)}, "
                        "outside the workspace; memtui does not follow it",
                        "copy the skill into the workspace, or remove the link"))
                    skills.append(placeholder)
                elif (full / SKILL_FILE).is_file():
                    _add(full, root, base, root_label, skills, skill_dirs, limit)
                continue
            kept.append(d)
        dirnames[:] = kept
        if here != root and SKILL_FILE in filenames:
            _add(here, root, base, root_label, skills, skill_dirs, limit)
    skills.sort(key=lambda s: s.path)
    return skills


def _add(folder: Path, root: Path, base: Path, label: str, skills: list[Skill],
         skill_dirs: dict[Path, Skill], limit: int | None) -> None:
    skill = parse_skill(folder, rel(base, folder / SKILL_FILE), label, limit=limit)
    parent = next((skill_dirs[a] for a in folder.parents if a in skill_dirs), None)
    if parent is not None:
        skill.nested_in = parent.path
        skill.findings.append(Finding.make(
            "skill-nested", skill.path,
            f"lies inside the skill {parent.key!r} ({parent.path}); agents load only "
            f"<root>/<name>/{SKILL_FILE}, so it is reached through its parent's body, "
            "never from the index",
            "keep it if the parent's body points to it; move it to its own folder in the root "
            f"to make it a skill of its own ({_SEED_002})"))
    elif folder.parent != root:
        skill.nested_in = rel(base, folder.parent)
        skill.findings.append(Finding.make(
            "skill-nested", skill.path,
            f"lies {len(folder.relative_to(root).parts)} folders deep; agents load only "
            f"<root>/<name>/{SKILL_FILE}, so no agent gets it",
            f"move the folder directly into the root ({_SEED_002})"))
    skill.findings.sort(key=sort_key)
    skill_dirs[folder] = skill
    skills.append(skill)


def _looks_like_root(folder: Path) -> bool:
    try:
        return any((child / SKILL_FILE).is_file() for child in folder.iterdir()
                   if child.is_dir() and child.name not in _SKIP_DIRS)
    except OSError:
        return False


def load_catalogue(ws: Workspace) -> Catalogue:
    """Build the catalogue of a workspace.

    Roots, in precedence order (seed 002):

    1. ``skills/`` — the agent's own;
    2. ``shared-skills/`` — the administrator's; wins on a folder name present in both, and
       the agent's copy is kept in the list, marked ``skill-shadowed``;
    3. when ``shared-skills.d/`` holds any of the four scope folders, their skills are
       listed with :attr:`Skill.scope`; a later scope wins by name over an earlier one
       (``skill-scope-overridden``). If ``shared-skills/`` exists, each of its skills gets
       the scope it came from and a mismatch is a ``skill-cascade-mismatch`` finding; if
       it does not, the flattened cascade *is* the shared root.

    A folder with neither root but with skill folders inside (``B18/skills``, a corpus
    collection) is read as one root labelled ``"folder"``; a folder of such collections
    (``corpus/skills``) as one root per collection, labelled with its name, where the same
    key in two collections is a ``skill-name-duplicate`` finding on each.

    Args:
        ws: the opened workspace.

    Returns:
        A :class:`Catalogue`. Never raises for bad skills; every SKILL.md appears.
    """
    limit = ws.config.max_file_bytes
    cat = Catalogue(base=ws.root)
    roots = ws.skill_roots
    cascade_dir = ws.root / CASCADE_DIR
    scopes_present = [s for s in SCOPES if (cascade_dir / s).is_dir()]
    has_roots = any(p.is_dir() for p in roots.values()) or bool(scopes_present)
    if not has_roots:
        if _looks_like_root(ws.root):
            cat.roots["folder"] = ws.root
            cat.skills = scan_root(ws.root, "folder", base=ws.root, limit=limit)
        else:
            collections = [c for c in sorted(ws.root.iterdir())
                           if c.is_dir() and c.name not in _SKIP_DIRS and _looks_like_root(c)]
            for coll in collections:
                cat.roots[coll.name] = coll
                cat.skills.extend(scan_root(coll, coll.name, base=ws.root, confine_to=ws.root,
                                            limit=limit))
        _mark_duplicates(cat.skills)
        return cat

    agent = scan_root(roots[AGENT_ROOT], AGENT_ROOT, base=ws.root, confine_to=ws.root, limit=limit)
    shared = scan_root(roots[SHARED_ROOT], SHARED_ROOT, base=ws.root, confine_to=ws.root, limit=limit)
    for label in (AGENT_ROOT, SHARED_ROOT):
        if roots[label].is_dir():
            cat.roots[label] = roots[label]

    scoped: list[Skill] = []
    winner_scope: dict[str, Skill] = {}
    for scope in scopes_present:
        label = f"{CASCADE_DIR}/{scope}"
        cat.roots[label] = cascade_dir / scope
        found = scan_root(cascade_dir / scope, label, base=ws.root, confine_to=ws.root, limit=limit)
        for skill in found:
            skill.scope = scope
            if skill.nested_in is not None:
                continue
            earlier = winner_scope.get(skill.key)
            if earlier is not None:
                earlier.shadowed_by = skill.path
                earlier.findings.append(Finding.make(
                    "skill-scope-overridden", earlier.path,
                    f"scope {earlier.scope!r} is overridden by scope {scope!r} ({skill.path}): "
                    "later scopes win by name",
                    f"nothing to do if intended; the cascade order is {' → '.join(SCOPES)} ({_SEED_002})"))
                earlier.findings.sort(key=sort_key)
            winner_scope[skill.key] = skill
        scoped.extend(found)

    if scopes_present and roots[SHARED_ROOT].is_dir():
        # shared-skills/ is the mounted flattening: scope copies are its sources, never
        # loaded themselves; each mounted skill learns the scope it came from.
        top_shared = {s.key: s for s in shared if s.nested_in is None}
        for skill in scoped:
            skill.loadable = False
        for key, skill in top_shared.items():
            origin = winner_scope.get(key)
            if origin is None:
                cat.findings.append(Finding.make(
                    "skill-cascade-mismatch", skill.path,
                    f"shared skill {key!r} comes from none of the scopes in {CASCADE_DIR}/",
                    f"publish it at a scope, or remove it from {SHARED_ROOT}/ ({_SEED_002})"))
            else:
                skill.scope = origin.scope
        for key, origin in winner_scope.items():
            if key not in top_shared:
                cat.findings.append(Finding.make(
                    "skill-cascade-mismatch", origin.path,
                    f"scope {origin.scope!r} publishes {key!r}, but {SHARED_ROOT}/ does not hold it",
                    f"re-publish so {SHARED_ROOT}/ is the flattening of the scopes ({_SEED_002})"))
        admin = list(top_shared.values())
    elif scopes_present:
        # no mounted root: the flattened cascade is the administrator's root
        cat.roots[SHARED_ROOT] = cascade_dir
        admin = list(winner_scope.values())
    else:
        admin = [s for s in shared if s.nested_in is None]

    admin_by_key = {s.key: s for s in admin}
    for skill in agent:
        if skill.nested_in is not None:
            continue
        winner = admin_by_key.get(skill.key)
        if winner is not None:
            skill.shadowed_by = winner.path
            skill.findings.append(Finding.make(
                "skill-shadowed", skill.path,
                f"shadowed by the administrator's copy {winner.path}: agents get that one",
                f"rename your skill to keep both; the administrator's copy always wins ({_SEED_002})"))
            skill.findings.sort(key=sort_key)

    cat.skills = agent + shared + scoped
    _mark_duplicates([s for s in cat.skills if s.shadowed_by is None and s.loadable])
    return cat


def _mark_duplicates(skills: Iterable[Skill]) -> None:
    """Same key (or same front matter name) twice among skills that neither shadow the other."""
    groups: dict[str, list[Skill]] = {}
    for skill in skills:
        if skill.nested_in is not None:
            continue
        groups.setdefault(skill.key, []).append(skill)
        if skill.name and skill.name != skill.key:
            groups.setdefault(skill.name, []).append(skill)
    for name, group in groups.items():
        unique = {id(s): s for s in group}
        if len(unique) < 2:
            continue
        for skill in unique.values():
            others = [o.path for o in unique.values() if o is not skill]
            if any(o in skill.duplicate_of for o in others):
                continue
            skill.duplicate_of.extend(o for o in others if o not in skill.duplicate_of)
            skill.findings.append(Finding.make(
                "skill-name-duplicate", skill.path,
                f"the name {name!r} is also used by {', '.join(others)}",
                "rename one of them: an agent given both cannot tell them apart"))
            skill.findings.sort(key=sort_key)


def load_folder(path: str | os.PathLike[str]) -> Catalogue:
    """Open ``path`` as a workspace and build its catalogue (see :func:`load_catalogue`).

    Raises:
        WorkspaceError: ``path`` is not a readable folder.
    """
    return load_catalogue(Workspace.open(path))


# --------------------------------------------------------------------------------------------
# The skill index and its budget
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class SkillIndex:
    """The skill index as an agent's turn gets it (seed 002), bounded by a byte budget.

    Attributes:
        text: the index lines that fit, each ending in ``\\n`` (UTF-8).
        lines: ``(skill, line)`` for every skill that fits, in index order.
        cut: ``(skill, line)`` for every skill that falls outside the budget, in order.
        left_out: skills not in the index at all, with the reason (shadowed, nested,
            unusable front matter): the index never hides them without saying so.
        budget: the budget in bytes.
        full_size: bytes of the index if nothing were cut.
    """

    text: str
    lines: list[tuple[Skill, str]]
    cut: list[tuple[Skill, str]]
    left_out: list[tuple[Skill, str]]
    budget: int
    full_size: int

    @property
    def size(self) -> int:
        """Bytes of :attr:`text` in UTF-8: what reaches the prompt."""
        return len(self.text.encode("utf-8"))

    def to_json(self) -> dict[str, Any]:
        """``{"budget", "size", "full_size", "text", "entries", "cut", "left_out"}``."""
        def entry(skill: Skill, line: str) -> dict[str, Any]:
            return {"name": skill.name, "path": skill.path, "root": skill.root,
                    "bytes": len(line.encode("utf-8")), "line": line.rstrip("\n")}
        return {
            "budget": self.budget, "size": self.size, "full_size": self.full_size,
            "text": self.text,
            "entries": [entry(s, ln) for s, ln in self.lines],
            "cut": [entry(s, ln) for s, ln in self.cut],
            "left_out": [{"name": s.shown_name, "path": s.path, "reason": why} for s, why in self.left_out],
        }


def index_line(skill: Skill) -> str:
    """One index line: ``- <name>: <description> (<path to SKILL.md>)`` and a newline.

    The description's line breaks and runs of spaces become single spaces, so one skill
    is exactly one line (seed 002: "one line each, name and description and the path to
    the body"; the exact punctuation is memtui's).
    """
    description = " ".join((skill.description or "").split())
    name = " ".join((skill.name or skill.key).split())
    return f"- {name}: {description} ({skill.path})\n"


def build_index(catalogue: Catalogue, budget: int = DEFAULT_INDEX_BUDGET) -> SkillIndex:
    """Render the skill index and apply the byte budget.

    Args:
        catalogue: from :func:`load_catalogue`.
        budget: bytes the index may take (default 8 KiB, seed 002); must be ≥ 0.

    Returns:
        A :class:`SkillIndex`. Skills are listed by name; once a line does not fit, it and
        every later line are cut (the loader stops at its bound), and all of them are named
        in ``cut`` — a bundle that hides its own cut is a bundle that lies (seed 004).

    Raises:
        ValueError: ``budget`` is negative.
    """
    if budget < 0:
        raise ValueError(f"the budget must be 0 bytes or more, not {budget}")
    lines: list[tuple[Skill, str]] = []
    cut: list[tuple[Skill, str]] = []
    used = 0
    full = 0
    for skill in catalogue.loaded():
        line = index_line(skill)
        size = len(line.encode("utf-8"))
        full += size
        if not cut and used + size <= budget:
            lines.append((skill, line))
            used += size
        else:
            cut.append((skill, line))
    left_out: list[tuple[Skill, str]] = []
    for skill in catalogue.skills:
        if skill.indexable:
            continue
        if skill.shadowed_by:
            why = f"shadowed by {skill.shadowed_by}"
        elif not skill.loadable:
            why = f"source in scope {skill.scope!r} of the mounted {SHARED_ROOT}/ copy"
        elif skill.nested_in:
            why = f"nested inside {skill.nested_in}"
        elif any(f.code in _UNUSABLE or f.code == "symlink-outside" for f in skill.findings):
            why = "its SKILL.md or front matter cannot be read (see `memtui skills check`)"
        else:
            why = "no usable name and description text (see `memtui skills check`)"
        left_out.append((skill, why))
    return SkillIndex("".join(ln for _s, ln in lines), lines, cut, left_out, budget, full)


# --------------------------------------------------------------------------------------------
# Saving: minimal edits that keep BOM and line ends (B18, B19)
# --------------------------------------------------------------------------------------------

_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9(][^\n\r]*$")


def yaml_scalar(value: str) -> str:
    """``value`` as a YAML scalar: plain when it reads back unchanged as text, else quoted.

    A value that YAML would read as a number, boolean, date or null, or that holds ``: ``,
    `` #`` or starts with a symbol, is written in double quotes (JSON escaping, which YAML
    reads) — so ``yes`` stays the text ``yes`` (B03) and ``a: b`` stays valid (B19).
    """
    import json

    if _PLAIN_SAFE.match(value) and value == value.strip() and ": " not in value \
            and " #" not in value and not value.endswith(":"):
        try:
            loaded = yaml.safe_load(f"k: {value}\n")
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, dict) and loaded.get("k") == value:
            return value
    return json.dumps(value, ensure_ascii=False)


def _line_end(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def set_front_matter_field(text: str, key: str, value: str) -> str:
    """Return ``text`` with the top-level front matter ``key`` set to ``value``.

    Only the line(s) of that key change: a one-line value, or a block/indented value with
    its continuation lines, is replaced by one ``key: value`` line; a missing key is added
    before the closing fence. The BOM (if any) and the file's line end (CRLF or LF) are
    kept, and the new line uses that same line end (B18: no mixed line ends).

    Args:
        text: the whole file as decoded text, BOM included if it had one.
        key: a top-level key (``description``, ``name`` …).
        value: the new text (single line; line breaks are written as ``\\n`` escapes).

    Raises:
        ValueError: the file has no closed front matter block, or ``key`` appears more than
            once (the user must choose which line to keep).
    """
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body_text = text[len(bom):]
    eol = _line_end(body_text)
    lines = body_text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        raise ValueError("the file has no front matter to edit; add a `---` block first")
    end = next((i for i in range(1, len(lines)) if re.match(r"^(?:---|\.\.\.)[ \t]*$", lines[i].rstrip("\r\n"))), None)
    if end is None:
        raise ValueError("the front matter is never closed (no second `---` line); close it first")
    key_re = re.compile(rf"^{re.escape(key)}[ \t]*:(?:[ \t]|$)")
    starts = [i for i in range(1, end) if key_re.match(lines[i])]
    if len(starts) > 1:
        raise ValueError(f"{key} is given {len(starts)} times; delete the extra lines first")
    new_line = f"{key}: {yaml_scalar(value)}{eol}"
    if not starts:
        lines.insert(end, new_line)
    else:
        first = starts[0]
        last = first
        for j in range(first + 1, end):
            stripped = lines[j].rstrip("\r\n")
            if stripped == "" or stripped[0] in " \t":
                last = j
            else:
                break
        # trailing blank lines belong to the block after it, not to this value
        while last > first and lines[last].strip() == "":
            last -= 1
        lines[first:last + 1] = [new_line]
    return bom + "".join(lines)


def save_skill_field(skill: Skill, key: str, value: str) -> Skill:
    """Set one front matter field of a skill and save it atomically.

    Args:
        skill: a skill from the catalogue (its :attr:`Skill.sha256` is the bytes it was
            loaded from).
        key: the top-level key to set (for example ``description``).
        value: the new text.

    Returns:
        The skill re-read from disk after the save.

    Raises:
        ReadOnlyError: the skill is the administrator's (``shared-skills`` or a scope; seed 002).
        ConflictError: the file changed on disk since it was loaded (invariant 3).
        ValueError: see :func:`set_front_matter_field`.
        OSError: the write failed; the file is then unchanged (invariant 1).
    """
    data = _check_writable(skill)
    text = data.decode("utf-8")
    new_text = set_front_matter_field(text, key, value)
    atomic.write_bytes(skill.skill_md, new_text.encode("utf-8"))
    return parse_skill(skill.folder, skill.path, skill.root, key=skill.key)


def save_skill_text(skill: Skill, text: str) -> Skill:
    """Save an edited whole ``SKILL.md`` (the editor's text) atomically.

    The file's BOM is kept (or not added), and every line end is written as the file's own
    (CRLF stays CRLF, LF stays LF), whatever line ends ``text`` uses (B18). The text is
    otherwise written as given.

    Raises:
        ReadOnlyError, ConflictError, OSError: as for :func:`save_skill_field`.
    """
    data = _check_writable(skill)
    old = data.decode("utf-8", "replace")
    bom = "\ufeff" if old.startswith("\ufeff") else ""
    eol = _line_end(old)
    plain = text.lstrip("\ufeff").replace("\r\n", "\n")
    if eol == "\r\n":
        plain = plain.replace("\n", "\r\n")
    atomic.write_bytes(skill.skill_md, (bom + plain).encode("utf-8"))
    return parse_skill(skill.folder, skill.path, skill.root, key=skill.key)


def _check_writable(skill: Skill) -> bytes:
    if skill.read_only:
        raise ReadOnlyError(
            f"{skill.path} is the administrator's copy and read-only (seed 002); "
            f"copy it into skills/ under another name to change it.")
    try:
        data = skill.skill_md.read_bytes()
    except OSError as exc:
        raise ConflictError(f"{skill.path} cannot be read any more ({exc.strerror}); reload the list.") from exc
    if skill.sha256 and hashlib.sha256(data).hexdigest() != skill.sha256:
        raise ConflictError(
            f"{skill.path} changed on disk since it was loaded; reload it (or compare) before saving, "
            "so nobody's edit is lost.")
    return data


# --------------------------------------------------------------------------------------------
# The audit's share
# --------------------------------------------------------------------------------------------

def audit_findings(ws: Workspace) -> list[Finding]:
    """Every skill finding of ``ws`` (catalogue and skills), for :mod:`memtui.core.audit`.

    The workspace's own roots count (``skills/``, ``shared-skills/``, ``shared-skills.d/``),
    and a folder that is itself a folder of skill folders (no ``memory/``; ``B19/skills``):
    ``memtui audit -w B19/skills`` reports what ``memtui skills check`` reports. A plain memory
    tree contributes nothing, so its sub-folders are never reported as skills.
    """
    has_roots = any(p.is_dir() for p in ws.skill_roots.values()) or (ws.root / CASCADE_DIR).is_dir()
    if not has_roots and ws.memory == ws.root and _looks_like_root(ws.root):
        has_roots = True
    if not has_roots:
        return []
    return load_catalogue(ws).all_findings()
