"""Reading one ``SKILL.md`` and checking it against its rules; every finding names its source.

- **seed 002** (*Skills and memory*): the upload pattern ``^[a-z0-9][a-z0-9._-]{0,63}$``, the
  reserved name ``shared-content``, a description written as the situation it answers.
- **the Agent Skills rules** (agentskills.io specification): the file starts with front
  matter; allowed keys ``name, description, license, compatibility, metadata,
  allowed-tools``; ``name`` 1–64 characters of lowercase letters, digits and hyphens, no
  leading, trailing or double hyphen, equal to its folder; ``description`` 1–1024
  characters; ``compatibility`` at most 500 characters.
- **real files' surprises**: typed YAML values, brackets and slashes in names, a BOM and
  CRLF line ends, invalid or unusual front matter.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from collections.abc import Callable
from typing import Any

import yaml

from memtui.core.files import read_text
from memtui.core.findings import Finding, Severity, sort_key
from memtui.core.frontmatter import FrontMatter, split
from memtui.core.skills.model import ALLOWED_KEYS, CASCADE_DIR, MAX_COMPATIBILITY, MAX_DESCRIPTION, MAX_NAME, RESERVED_NAMES, SHARED_ROOT, SKILL_FILE, Skill, UPLOAD_PATTERN, AGENT_SPEC


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


def _compose_fields(node: yaml.Node | None) -> dict[str, tuple[int, yaml.Node]]:
    """Top-level keys of a front matter block → (1-based line within the block, value node).

    Args:
        node: the block as composed by :func:`memtui.core.frontmatter.split` (``fm.node``,
            already checked for alias loops and expansion).

    A key given twice keeps its last occurrence, as PyYAML does. Returns ``{}`` when the
    block is not a mapping (the caller already has the error).
    """
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


def _unicode_letters(name: str) -> str:
    """The :func:`check_name` reason for non-ASCII lowercase letters or digits, when those are
    the only characters outside ASCII lowercase, digits and hyphens (else ``""``)."""
    odd = sorted({c for c in name if not (c.isascii() and (c.islower() or c.isdigit()) or c == "-")})
    if odd and all(c.isalnum() and c == c.lower() and not c.isascii() for c in odd):
        return ("has " + ", ".join(_char_word(c) for c in odd)
                + " (only lowercase letters, digits and hyphens are allowed)")
    return ""


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
        A :class:`Skill` whose ``findings`` hold every problem found.
    """
    skill = Skill(key=key or folder.name, folder=folder, path=shown, root=root)
    skill.read_only = root == SHARED_ROOT or root.startswith(CASCADE_DIR)
    text_file = read_text(folder / SKILL_FILE, shown, limit) if limit else read_text(folder / SKILL_FILE, shown)
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
    """Every finding of a SKILL.md's front matter: its presence, then each field's rules."""
    if _front_matter_unusable(skill, fm):
        return
    add = skill.findings.append
    p = skill.path
    second = fm.second_block_finding(p)
    if second is not None:
        add(second)
    fields = _compose_fields(fm.node)
    skill.front_matter = {k: _written(node) for k, (_ln, node) in fields.items()}

    for key, line in fm.duplicate_keys:
        add(Finding.make(
            "skill-duplicate-key", p, f"{key} is given twice (second value used)",
            "delete one of the two lines; YAML loaders disagree on which one wins", line=line))

    line_of = _line_finder(fields)
    _check_name_field(skill, fields.get("name", (0, None))[1], line_of)
    _check_description_field(skill, fields.get("description", (0, None))[1], line_of)
    _check_other_keys(skill, fields, line_of)


def _front_matter_unusable(skill: Skill, fm: FrontMatter) -> bool:
    """Report a SKILL.md with no front matter or a broken one; ``True`` when its fields
    cannot be read at all."""
    add = skill.findings.append
    p = skill.path
    if not fm.present:
        add(Finding.make(
            "skill-no-front-matter", p, "no front matter: name and description missing",
            f"start the file with a `---` block giving name and description ({AGENT_SPEC}: "
            "the file starts with YAML front matter)", line=1))
        return True
    if fm.error:
        code = "front-matter-unclosed" if not fm.closed else (
            "front-matter-not-mapping" if "expected keys and values" in fm.error else "front-matter-invalid")
        message = fm.error
        if not fm.closed:
            message = "front matter is never closed (no second `---` line): name and description cannot be read"
        add(Finding.make(code, p, message,
                         "fix the front matter; until then agents get neither name nor description "
                         f"({AGENT_SPEC}: the file starts with valid YAML front matter)",
                         line=fm.error_line, column=fm.error_column))
        if not fm.closed:
            skill.body = fm.body  # the whole text: nothing can be trusted as front matter
        return True
    return False


def _blank(node: yaml.Node | None) -> bool:
    """A required field that is absent, ``null`` (written bare) or only whitespace."""
    return node is None or (isinstance(node, yaml.ScalarNode)
                            and (node.tag.endswith(":null") and not node.style or not node.value.strip()))


def _line_finder(fields: dict[str, tuple[int, Any]]) -> Callable[[str], int | None]:
    """The 1-based line of a front matter key in the file, ``None`` when it is absent."""

    def line_of(key: str) -> int | None:
        return fields[key][0] + 1 if key in fields else None  # +1: the opening fence

    return line_of


def _check_name_field(skill: Skill, name_node: Any, line_of: Callable[[str], int | None]) -> None:
    add = skill.findings.append
    p = skill.path
    if _blank(name_node):
        add(Finding.make(
            "skill-no-name", p, "name is missing" if name_node is None else "name is empty",
            f"add `name: {skill.key}` to the front matter ({AGENT_SPEC}: name is required, "
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


def _check_description_field(skill: Skill, desc_node: Any, line_of: Callable[[str], int | None]) -> None:
    add = skill.findings.append
    p = skill.path
    if _blank(desc_node):
        add(Finding.make(
            "skill-no-description", p,
            "description is missing" if desc_node is None else "description is empty",
            "add a description saying when to use the skill "
            f"({AGENT_SPEC}: description is required, 1–{MAX_DESCRIPTION} characters; "
            "the description is the only part that decides whether the body is read)",
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
                    f"shorten it and move detail into the body ({AGENT_SPEC}: description "
                    f"1–{MAX_DESCRIPTION} characters)", line=line_of("description")))
            if not _situation_named(skill.description):
                add(Finding.make(
                    "skill-description-vague", p,
                    "description names no situation: it says what the skill is, not when to use it",
                    "write it as the situation it answers, e.g. \"Use when the user asks for …\" "
                    "(the description is what decides whether the skill is used)", line=line_of("description")))


def _check_other_keys(skill: Skill, fields: dict[str, tuple[int, Any]], line_of: Callable[[str], int | None]) -> None:
    add = skill.findings.append
    p = skill.path
    unknown = [k for k in fields if k not in ALLOWED_KEYS]
    if unknown:
        add(Finding.make(
            "skill-unknown-key", p,
            "front matter has key" + ("s " if len(unknown) > 1 else " ") + ", ".join(unknown)
            + " outside the Agent Skills set",
            f"keep them if your harness reads them; other loaders ignore or reject them "
            f"({AGENT_SPEC}: allowed keys {', '.join(ALLOWED_KEYS)})",
            line=line_of(unknown[0])))
    if "compatibility" in fields:
        node = fields["compatibility"][1]
        if isinstance(node, yaml.ScalarNode) and len(node.value) > MAX_COMPATIBILITY:
            add(Finding.make(
                "skill-compatibility-length", p,
                f"compatibility is {len(node.value):,} characters, over the {MAX_COMPATIBILITY} allowed",
                f"shorten it ({AGENT_SPEC}: compatibility at most {MAX_COMPATIBILITY} characters)",
                line=line_of("compatibility")))
    for key in ("license", "compatibility"):
        if key in fields and not isinstance(fields[key][1], yaml.ScalarNode):
            add(Finding.make(
                "skill-bad-field-type", p, f"{key} is {_type_word(fields[key][1])}, expected text",
                f"write {key} as text ({AGENT_SPEC})", line=line_of(key)))
    if "allowed-tools" in fields and not isinstance(fields["allowed-tools"][1], yaml.ScalarNode):
        # The spec asks for space-separated text; the reference validator (skills-ref) and
        # harnesses accept a YAML list: memtui is stricter here, so this is a note.
        add(Finding.make(
            "skill-stricter", p,
            f"allowed-tools is {_type_word(fields['allowed-tools'][1])}; the spec asks for space-separated "
            "text (the reference validator accepts a list, so the skill is valid)",
            f"write the tools on one line separated by spaces ({AGENT_SPEC})", line=line_of("allowed-tools")))
    if "metadata" in fields and not isinstance(fields["metadata"][1], yaml.MappingNode):
        add(Finding.make(
            "skill-stricter", p, "metadata is not a set of keys and values (the reference validator accepts it)",
            f"write metadata as `key: value` lines indented under it ({AGENT_SPEC})",
            line=line_of("metadata")))


def _check_name_rules(skill: Skill, name: str, line: int | None) -> None:
    add = skill.findings.append
    p = skill.path
    spec, upload = check_name(name)
    quoted = repr(name)
    letters = _unicode_letters(name)
    if letters and spec == [letters]:
        # the reference validator allows lowercase letters of any script (NFKC, isalnum):
        # memtui's ASCII reading is stricter, so a note; the platform's upload pattern still applies
        add(Finding.make(
            "skill-stricter", p,
            f"name {quoted} {letters}; the Agent Skills reference validator accepts lowercase letters of any "
            "script, memtui's reading of the spec only ASCII", "use ASCII letters if other harnesses load it",
            line=line))
        spec = []
    if spec:
        other = ("the platform's upload pattern accepts it" if not upload
                 else "it breaks the platform's upload pattern too")
        add(Finding.make(
            "skill-name-invalid", p,
            f"name {quoted} " + "; ".join(spec) + f" — breaks the {AGENT_SPEC} naming rule ({other})",
            "use 1–64 lowercase letters, digits and single hyphens, not at either end "
            f"({AGENT_SPEC})", line=line))
    if upload:
        other = ("the Agent Skills rules accept it" if not spec
                 else "it breaks the Agent Skills rules too")
        # An administrator upload is refused outright; for the agent's own skill it is a warning.
        severity = Severity.ERROR if skill.read_only else Severity.WARNING
        add(Finding.make(
            "skill-name-upload-pattern", p,
            f"name {quoted} " + "; ".join(upload)
            + f" — breaks the platform's upload pattern ^[a-z0-9][a-z0-9._-]{{0,63}}$ ({other}); "
            "an administrator could not publish it",
            "rename it to match ^[a-z0-9][a-z0-9._-]{0,63}$",
            line=line, severity=severity))
    if name in RESERVED_NAMES:
        severity = Severity.INFO if skill.read_only else Severity.ERROR
        add(Finding.make(
            "skill-name-reserved", p,
            f"name {quoted} is reserved for the skill the platform ships",
            "rename the skill; an upload with this name is refused" if not skill.read_only
            else "nothing to do if this is the platform's own copy", line=line, severity=severity))
    if name != skill.folder.name:
        add(Finding.make(
            "skill-name-mismatch", p,
            f"name {quoted} differs from its folder {skill.folder.name!r}",
            f"rename the folder or the name so they match ({AGENT_SPEC}: name equals the "
            "folder name; clashes between roots are decided by folder name)", line=line))
