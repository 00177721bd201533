"""A case that met a skill defect closes with three artefacts (the delivered work, the amended
skill, a memory entry); the Consolidate pass lists a case missing any, and a second failed
attempt says to ask the owner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import run_cli
from test_skill_versions import MANIFEST, TEST

OWNER = "support.parcels-lost"


def cli(capsys, ws: Path, *argv: str) -> tuple[int, str, str]:  # noqa: ANN001
    return run_cli(capsys, argv[0], *(argv[1:2] if argv[0] == "skills" else ()), "-w", str(ws),
                   *(argv[2:] if argv[0] == "skills" else argv[1:]))


def defects(capsys, ws: Path) -> list[dict]:  # noqa: ANN001
    code, out, _ = run_cli(capsys, "consolidate", "-w", str(ws), "--kind", "skill-defect", "--json")
    return [c for c in json.loads(out)["candidates"] if c["kind"] == "skill-defect"]


def test_a_defect_case_is_listed_until_it_holds_its_three_artefacts(sample_copy: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    ws = sample_copy
    assert cli(capsys, ws, "skills", "bind", "parcel-trace", "support/parcels-lost")[0] == 0
    assert cli(capsys, ws, "skills", "adopt", "parcel-trace")[0] == 0
    code, out, err = cli(capsys, ws, "use", "--skill", "parcel-trace@1", "--case", "C-5", "--source-request", "SR-5",
                         "--verdict", "skill-defect", "--check", "could not read a Cyrillic waybill")
    assert code == 0, err
    assert "closes with the delivered work, the amended skill, the memory entry" in out
    [c] = defects(capsys, ws)
    assert c["detail"]["missing"] == ["the delivered work", "the amended skill", "the memory entry"]
    assert c["owner"] == OWNER and c["detail"]["what"] == ["could not read a Cyrillic waybill"]
    # the amended skill: a proposal filed by the case
    folder = tmp_path / "parcel-trace"
    shutil.copytree(ws / "skills/parcel-trace", folder)
    (folder / "skill-manifest.json").write_text(json.dumps(MANIFEST))
    (folder / "test_skill.py").write_text(TEST)
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "\nCyrillic В/Р read as B/P; 48 hours.\n")
    assert cli(capsys, ws, "propose", "--skill", "parcel-trace", "--from", str(folder), "--case", "C-5",
               "--source-request", "SR-5", "--profile", "support.agent")[0] == 0
    # the delivered work: the corrected run, by the same case
    assert cli(capsys, ws, "use", "--skill", "parcel-trace@2", "--case", "C-5", "--source-request", "SR-5",
               "--verdict", "pass", "--check", "traced BP1234567890 written in Cyrillic")[0] == 0
    [c] = defects(capsys, ws)
    assert c["detail"]["missing"] == ["the memory entry"]
    entry = tmp_path / "exp-099.md"
    entry.write_text("---\ntitle: Cyrillic letters in waybills\nsummary: parcel-trace could not read them\n---\n"
                     "Before version 2, parcel-trace could not read a waybill typed with Cyrillic В or Р.\n")
    assert cli(capsys, ws, "propose", "--node", "support/experience", "--article", "exp-099.md", "--from", str(entry),
               "--case", "C-5", "--source-request", "SR-5", "--profile", "support.agent")[0] == 0
    assert defects(capsys, ws) == []


def test_a_second_failed_attempt_says_ask_the_owner(sample_copy: Path, capsys) -> None:  # noqa: ANN001
    ws = sample_copy
    assert cli(capsys, ws, "skills", "bind", "parcel-trace", "support/parcels-lost")[0] == 0
    assert cli(capsys, ws, "skills", "adopt", "parcel-trace")[0] == 0
    argv = ("use", "--skill", "parcel-trace@1", "--case", "C-6", "--source-request", "SR-6", "--verdict",
            "skill-defect", "--check")
    assert "ask the owner" not in cli(capsys, ws, *argv, "first try")[1]
    code, out, _ = cli(capsys, ws, *argv, "second try")
    assert code == 0 and f"2 attempts failed: ask the owner of parcel-trace ({OWNER})" in out
    [c] = defects(capsys, ws)
    assert c["action"] == "ask the owner" and "2 attempts failed: ask the owner" in c["reason"]


def test_skill_defect_is_a_verdict_on_skills_only(sample_copy: Path, capsys) -> None:  # noqa: ANN001
    code, _, err = cli(capsys, sample_copy, "use", "--version", "support/x.md@1", "--case", "C", "--source-request", "S",
                       "--verdict", "skill-defect", "--check", "x")
    assert code == 2 and "give --skill NAME@N" in err
