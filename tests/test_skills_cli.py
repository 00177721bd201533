"""`memtui skills list|check|index|show|set` through memtui.cli.main, over real inputs."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import run_cli


run = run_cli


def test_list_of_unusual_skills_shows_all_eight_and_the_count(shared, capsys):
    folder = shared / "bug-inputs" / "B19"
    code, out, _ = run(capsys, "skills", "list", "-w", str(folder))
    assert code == 0
    for skill_dir in (folder / "skills").iterdir():
        assert skill_dir.name in out or "duplicate-keys-second" in out
    assert out.strip().splitlines()[-1] == "8 skills: 1 valid, 7 with problems"
    assert out.count(" NO ") == 7


def test_check_of_unusual_skills_exits_1_with_plain_words(shared, capsys):
    code, out, err = run(capsys, "skills", "check", "-w", str(shared / "bug-inputs" / "B19"))
    assert code == 1
    assert "Traceback" not in out + err and "ScannerError" not in out + err
    assert "skills/colon-in-description/SKILL.md:3:" in out
    assert "description contains ': ' — put the text in quotes" in out
    assert "tab used for indentation" in out
    assert "front matter is never closed" in out


def test_check_of_bom_and_crlf_skills_is_clean(shared, capsys):
    code, out, _ = run(capsys, "skills", "check", "-w", str(shared / "bug-inputs" / "B18"))
    assert code == 0
    assert "4 skills: 4 valid, 0 with problems" in out


@pytest.mark.parametrize("command", [("list",), ("check",), ("index",)])
def test_json_output_works_for_every_skill_with_typed_values(shared, capsys, command):
    code, out, err = run(capsys, "skills", *command, "--json", "-w", str(shared / "bug-inputs" / "B03"))
    assert "Traceback" not in err
    data = json.loads(out)
    if command == ("list",):
        assert code == 0 and data["count"] == 4
        typed = [s for s in data["skills"] if s["key"] == "typed-values"][0]
        assert typed["name"] == "2024" and typed["front_matter"]["version"] == "1.10"
        dated = [s for s in data["skills"] if s["key"] == "dated-skill"][0]
        assert dated["front_matter"]["created"] == "2024-05-01"


def test_index_names_the_cut(tmp_path, capsys):
    for i in range(5):
        folder = tmp_path / "skills" / f"skill-{i}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i}\ndescription: Use when case {i} comes up\n---\nBody\n", encoding="utf-8")
    code, out, _ = run(capsys, "skills", "index", "--budget", "120", "-w", str(tmp_path))
    assert code == 0
    assert out.startswith("- skill-0: Use when case 0 comes up (skills/skill-0/SKILL.md)\n")
    assert "cut by the budget" in out and "skill-4 (skills/skill-4/SKILL.md" in out
    code, out, _ = run(capsys, "skills", "index", "--budget", "120", "--json", "-w", str(tmp_path))
    data = json.loads(out)
    assert data["size"] <= 120 and data["budget"] == 120
    assert [c["name"] for c in data["cut"]] == [f"skill-{i}" for i in range(len(data["entries"]), 5)]
    assert len(data["text"].encode()) == data["size"]


def test_negative_budget_is_a_usage_error(tmp_path, capsys):
    code, _, err = run(capsys, "skills", "index", "--budget", "-5", "-w", str(tmp_path))
    assert code == 2 and "budget" in err


def test_missing_workspace_is_exit_2(tmp_path, capsys):
    code, _, err = run(capsys, "skills", "list", "-w", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in err


def test_show_accepts_a_name_starting_with_a_hyphen(shared, capsys):
    folder = shared / "corpus" / "skills" / "ComposioHQ__awesome-claude-skills"
    code, out, _ = run(capsys, "skills", "show", "-w", str(folder), "--", "-21risk-automation")
    assert code == 0
    assert "starts with a hyphen" in out and "# 21risk Automation" in out


def test_show_prints_brackets_literally(shared, capsys):
    code, out, _ = run(capsys, "skills", "show", "-w", str(shared / "bug-inputs" / "B17"), "bracket-skill")
    assert code == 0 and "[/] cleanup" in out and "[bold]logs[/bold]" in out


def test_set_keeps_bom_and_crlf(shared, tmp_path, capsys):
    shutil.copytree(shared / "bug-inputs" / "B18", tmp_path / "B18")
    code, out, _ = run(capsys, "skills", "set", "-w", str(tmp_path / "B18"), "bom-crlf-skill",
                       "description", "Use when a Windows file is edited")
    assert code == 0 and "byte order mark kept" in out and "CRLF line ends kept" in out
    data = (tmp_path / "B18" / "skills" / "bom-crlf-skill" / "SKILL.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\r\n") and data.count(b"\n") == data.count(b"\r\n")
    assert b"description: Use when a Windows file is edited\r\n" in data


def test_set_with_a_client_id_is_applied_once_and_a_reused_id_is_a_conflict(tmp_path, capsys):
    folder = tmp_path / "skills" / "mine"
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text("---\nname: mine\ndescription: Use when told\n---\n", encoding="utf-8")
    argv = ["skills", "set", "-w", str(tmp_path), "--client-id", "hook-1", "mine", "description", "Use when asked"]
    assert run(capsys, *argv)[0] == 0 and run(capsys, *argv)[0] == 0
    code, out, _ = run(capsys, "log", "-w", str(tmp_path), "--json")
    assert [e["client_id"] for e in json.loads(out)["entries"]] == ["hook-1"], "the retry wrote nothing"
    code, _, err = run(capsys, *argv[:-1], "Use when begged")
    assert code == 1 and "hook-1" in err
    assert "description: Use when asked\n" in path.read_text(encoding="utf-8")


def test_set_refuses_the_administrators_copy(tmp_path, capsys):
    folder = tmp_path / "shared-skills" / "admin"
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text("---\nname: admin\ndescription: Use when told\n---\n", encoding="utf-8")
    code, _, err = run(capsys, "skills", "set", "-w", str(tmp_path), "admin", "description", "mine now")
    assert code == 3 and "read-only" in err
    assert "Use when told" in path.read_text(encoding="utf-8")


def test_set_on_unclosed_front_matter_says_why_and_writes_nothing(shared, tmp_path, capsys):
    shutil.copytree(shared / "bug-inputs" / "B19", tmp_path / "B19")
    path = tmp_path / "B19" / "skills" / "unclosed-frontmatter" / "SKILL.md"
    before = path.read_bytes()
    code, _, err = run(capsys, "skills", "set", "-w", str(tmp_path / "B19"), "unclosed-frontmatter",
                       "description", "x")
    assert code == 1 and "never closed" in err
    assert path.read_bytes() == before


def test_audit_of_a_folder_of_skill_folders_reports_the_skill_findings(shared, tmp_path, capsys) -> None:
    """`memtui audit -w FOLDER` on a folder of skill folders once reported no skill problem and exited 0."""
    import shutil

    from memtui.cli import main

    folder = tmp_path / "skills"
    shutil.copytree(shared / "bug-inputs/B19/skills", folder)
    assert main(["audit", "-w", str(folder), "--json"]) == 1
    import json

    data = json.loads(capsys.readouterr().out)
    skill_paths = {f["path"].split("/")[0] for f in data["findings"] if f["code"].startswith(("skill-", "front-matter"))}
    assert {"colon-in-description", "tab-indent", "unclosed-frontmatter", "no-frontmatter"} <= skill_paths
