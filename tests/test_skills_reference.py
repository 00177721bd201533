"""Skill validity agrees with the Agent Skills reference validator, skills-ref:
a skill memtui calls invalid (an error finding) is one skills-ref rejects, and the other way
round; where memtui reads the spec more strictly it says so in a note."""

from __future__ import annotations

from pathlib import Path

import pytest
from skills_ref.validator import validate

from memtui.core.findings import Severity
from memtui.core.skills.rules import parse_skill


def _invalid(folder: Path) -> bool:
    skill = parse_skill(folder, "SKILL.md", "skills")
    return any(f.severity is Severity.ERROR for f in skill.findings)


def test_memtui_and_the_reference_validator_agree_on_the_corpus(shared: Path) -> None:
    disagree = [str(md.parent) for md in sorted((shared / "corpus" / "skills").rglob("SKILL.md"))
                if _invalid(md.parent) != bool(validate(md.parent))]
    assert disagree == []


CASES = {
    "list-tools": "---\nname: list-tools\ndescription: Use when listing.\nallowed-tools:\n  - Bash\n  - Read\n---\n",
    "отчет": "---\nname: отчет\ndescription: Use when a report is asked for.\n---\n",
    "extra-key": "---\nname: extra-key\ndescription: Use when x.\nversion: 2\n---\n",
    "mismatch": "---\nname: other-name\ndescription: Use when x.\n---\n",
    "long": "---\nname: long\ndescription: " + "x" * 1100 + "\n---\n",
    "Upper": "---\nname: Upper\ndescription: Use when x.\n---\n",
    "fine": "---\nname: fine\ndescription: Use when x.\nmetadata:\n  owner: me\n---\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_rule_agrees_with_the_reference_validator(tmp_path: Path, name: str) -> None:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "SKILL.md").write_text(CASES[name], encoding="utf-8")
    assert _invalid(folder) == bool(validate(folder))


@pytest.mark.parametrize("name", ["list-tools", "отчет"])
def test_where_memtui_is_stricter_it_says_so_in_a_note(tmp_path: Path, name: str) -> None:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "SKILL.md").write_text(CASES[name], encoding="utf-8")
    skill = parse_skill(folder, "SKILL.md", "skills")
    notes = [f for f in skill.findings if f.code == "skill-stricter"]
    assert notes and all(f.severity is Severity.INFO for f in notes)
    assert "reference validator" in notes[0].message
