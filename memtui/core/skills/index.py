"""The skill index an agent's turn gets: one line a skill (name, description, path to the body), bounded at 8 KiB by default (seed 002).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


from memtui.core.skills.model import Catalogue, DEFAULT_INDEX_BUDGET, SHARED_ROOT, Skill, UNUSABLE


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
        elif any(f.code in UNUSABLE or f.code == "symlink-outside" for f in skill.findings):
            why = "its SKILL.md or front matter cannot be read (see `memtui skills check`)"
        else:
            why = "no usable name and description text (see `memtui skills check`)"
        left_out.append((skill, why))
    return SkillIndex("".join(ln for _s, ln in lines), lines, cut, left_out, budget, full)
