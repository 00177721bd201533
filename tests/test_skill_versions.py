"""Skill changes are proposals: versions are immutable once published, publishing needs the
owner, a complete manifest and a passing test run on exactly that content; rollback publishes
the earlier content as a new version; a case pins the skill versions it ran; every step is an
audited guarded write and survives a backup round trip."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from backup_helpers import isolate_git
from conftest import run_cli
from memtui.core.session import Session
from memtui.core.skills import load_catalogue
from memtui.core.skills import versions as sv

OWNER = "support.parcels-lost"
MANIFEST = {
    "inputs": [{"name": "waybill"}], "read_set": [{"system": "DepotScan"}],
    "classification": {"outcomes": ["scan gap"]}, "write_packet": {"writes": []},
    "verification": [{"check": "names the last scan"}],
    "tests": {"command": "python3", "args": ["test_skill.py"]},
}
TEST = ("import pathlib, sys\n"
        "sys.exit(0 if '48 hours' in pathlib.Path('SKILL.md').read_text() else 'no 48-hour line')\n")


def cli(capsys, ws: Path, *argv: str) -> tuple[int, str, str]:  # noqa: ANN001
    return run_cli(capsys, *argv[:2], "-w", str(ws), *argv[2:]) if argv[0] == "skills" else \
        run_cli(capsys, argv[0], "-w", str(ws), *argv[1:])


def draft(ws: Path, tmp: Path, *, line: str = "", manifest: dict | None = None) -> Path:
    folder = tmp / "draft" / "parcel-trace"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(ws / "skills/parcel-trace", folder)
    (folder / "skill-manifest.json").write_text(json.dumps(manifest or MANIFEST))
    (folder / "test_skill.py").write_text(TEST)
    if line:
        with open(folder / "SKILL.md", "a") as fh:
            fh.write(line)
    return folder


def propose(capsys, ws: Path, folder: Path, case: str = "C-1", sr: str = "SR-1") -> str:  # noqa: ANN001
    code, out, err = cli(capsys, ws, "propose", "--skill", "parcel-trace", "--from", str(folder), "--case", case,
                         "--source-request", sr, "--profile", "support.agent", "--json")
    assert code == 0, err
    return json.loads(out)["id"]


@pytest.fixture
def governed(sample_copy: Path, capsys) -> Path:  # noqa: ANN001
    assert cli(capsys, sample_copy, "skills", "bind", "parcel-trace", "support/parcels-lost")[0] == 0
    code, out, err = cli(capsys, sample_copy, "skills", "adopt", "parcel-trace")
    assert code == 0 and "recorded skill:parcel-trace@1 (baseline" in out, err
    return sample_copy


def test_bound_changed_by_proposal_refused_until_tested_published_pinned_rolled_back(
        governed: Path, tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    ws = governed
    v2 = propose(capsys, ws, draft(ws, tmp_path))  # its test fails: no 48-hour line
    assert v2 == "skill:parcel-trace@2"
    code, _, err = cli(capsys, ws, "skills", "publish", "parcel-trace@2", "--reviewed", "--as", OWNER, "--yes")
    assert code == 3 and "its tests have not passed on this content" in err
    assert cli(capsys, ws, "skills", "test", "parcel-trace@2")[0] == 1
    code, _, err = cli(capsys, ws, "skills", "publish", "parcel-trace@2", "--reviewed", "--as", OWNER, "--yes")
    assert code == 3 and "its last test run on this content failed (exit status 1)" in err
    v3 = propose(capsys, ws, draft(ws, tmp_path, line="\nAfter 48 hours without a scan, open the depot search.\n"))
    code, out, _ = cli(capsys, ws, "skills", "test", "parcel-trace@3")
    assert code == 0 and "tests passed" in out
    code, _, err = cli(capsys, ws, "skills", "publish", "parcel-trace@3", "--reviewed", "--yes")  # not the owner
    assert code == 3 and f"owned by {OWNER}" in err
    code, out, err = cli(capsys, ws, "skills", "publish", v3, "--reviewed", "--as", OWNER, "--yes")
    assert code == 0 and "published skill:parcel-trace@3" in out, err
    # the catalogue serves the published version, and the folder holds exactly its files
    skill = next(s for s in load_catalogue(__import__("memtui.core.workspace", fromlist=["Workspace"])
                                           .Workspace.open(ws)).skills if s.key == "parcel-trace" and s.root == "skills")
    assert "48 hours" in skill.body and skill.valid
    assert sorted(p.name for p in (ws / "skills/parcel-trace").iterdir()) == \
        ["SKILL.md", "skill-manifest.json", "test_skill.py"]
    # a case pins the version it ran; pins shows it both ways
    code, out, _ = cli(capsys, ws, "use", "--skill", "parcel-trace@3", "--case", "C-9", "--source-request", "SR-9")
    assert code == 0 and "pinned: case C-9 ran skill:parcel-trace@3" in out
    code, out, _ = cli(capsys, ws, "pins", "--case", "C-9", "--json")
    [pin] = json.loads(out)["pins"]
    assert (pin["version"], pin["state"], pin["same_content"]) == ("skill:parcel-trace@3", "active", True)
    code, out, _ = cli(capsys, ws, "pins", "--version", "skill:parcel-trace@3", "--json")
    assert [p["case"] for p in json.loads(out)["pins"]] == ["C-9"]
    # roll back: the baseline's content comes back as version 4, with its provenance
    with Session.open(ws) as s:
        v3_before = sv.SkillLedger(s.store).get(v3).to_json(files=True)
        v1_files = sv.SkillLedger(s.store).get("parcel-trace@1").files
    code, out, err = cli(capsys, ws, "skills", "rollback", "parcel-trace", "--to", "1", "--as", OWNER, "--yes")
    assert code == 0 and "published skill:parcel-trace@4 with the content of version 1" in out, err
    with Session.open(ws) as s:
        ledger = sv.SkillLedger(s.store)
        v4 = ledger.get("parcel-trace@4")
        assert (v4.state, v4.provenance["kind"], v4.provenance["rollback_of"], v4.files) == \
            ("active", "rollback", 1, v1_files)
        after = ledger.get(v3).to_json(files=True)
        assert {k: v for k, v in after.items() if k not in ("state", "retirement")} == \
            {k: v for k, v in v3_before.items() if k not in ("state", "retirement")}
    assert sorted(p.name for p in (ws / "skills/parcel-trace").iterdir()) == ["SKILL.md"]
    code, out, _ = cli(capsys, ws, "pins", "--case", "C-9")
    assert "retired (active now: skill:parcel-trace@4)" in out
    code, out, _ = cli(capsys, ws, "skills", "diff", "parcel-trace", "3", "4")
    assert "-After 48 hours without a scan" in out and "--- skill:parcel-trace@3/test_skill.py" in out
    code, out, _ = cli(capsys, ws, "log", "--json", "--limit", "100")
    actions = [e["action"] for e in json.loads(out)["entries"] if e["action"].startswith("skills.")]
    assert actions[::-1] == ["skills.set", "skills.adopt", "skills.propose", "skills.test", "skills.propose",
                             "skills.test", "skills.publish", "skills.use", "skills.rollback"]
    # every step survives a backup round trip
    isolate_git(monkeypatch, tmp_path / "home")
    repo = str(tmp_path / "repo")
    assert run_cli(capsys, "backup", "-w", str(ws), "--repo", repo)[0] == 0
    code, out, _ = run_cli(capsys, "verify", "--repo", repo)
    assert code == 0 and "zero differences" in out
    code, out, _ = run_cli(capsys, "restore", "--repo", repo, "--to", str(tmp_path / "restored"))
    assert code == 0
    with Session.open(tmp_path / "restored", read_only=True) as s:
        restored = sv.SkillLedger(s.store)
        assert [v.id for v in restored.versions("parcel-trace")] == [f"skill:parcel-trace@{n}" for n in range(1, 5)]
        assert restored.passed("parcel-trace", after["sha256"])


def test_a_manifest_missing_a_part_is_refused_naming_the_part(governed: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    manifest = {k: v for k, v in MANIFEST.items() if k != "write_packet"}
    propose(capsys, governed, draft(governed, tmp_path, line="\n48 hours\n", manifest=manifest))
    assert cli(capsys, governed, "skills", "test", "parcel-trace@2")[0] == 0
    code, _, err = cli(capsys, governed, "skills", "publish", "parcel-trace@2", "--reviewed", "--as", OWNER, "--yes")
    assert code == 3 and "its manifest does not state write packet" in err


def test_a_test_run_counts_only_for_the_content_it_ran_on(governed: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    folder = draft(governed, tmp_path, line="\n48 hours\n")
    propose(capsys, governed, folder)
    assert cli(capsys, governed, "skills", "test", "parcel-trace@2")[0] == 0
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "one more line, 48 hours\n")
    propose(capsys, governed, folder, case="C-2", sr="SR-2")
    code, _, err = cli(capsys, governed, "skills", "publish", "parcel-trace@3", "--reviewed", "--as", OWNER, "--yes")
    assert code == 3 and "have not passed on this content" in err


def test_an_edit_of_the_published_folder_blocks_publishing_until_reverted(governed: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    propose(capsys, governed, draft(governed, tmp_path, line="\n48 hours\n"))
    assert cli(capsys, governed, "skills", "test", "parcel-trace@2")[0] == 0
    skill_md = governed / "skills/parcel-trace/SKILL.md"
    skill_md.write_text(skill_md.read_text() + "an agent's edit\n")
    code, out, _ = cli(capsys, governed, "skills", "status", "parcel-trace")
    assert "edited" in out and "skill-unrecorded-edit" in out
    code, _, err = cli(capsys, governed, "skills", "publish", "parcel-trace@2", "--reviewed", "--as", OWNER, "--yes")
    assert code == 1 and "differs from its published version skill:parcel-trace@1" in err
    assert "an agent's edit" in skill_md.read_text()  # nothing was overwritten
    code, out, _ = cli(capsys, governed, "skills", "revert", "parcel-trace", "--as", OWNER, "--yes")
    assert code == 0 and "holds skill:parcel-trace@1 again" in out
    assert cli(capsys, governed, "skills", "publish", "parcel-trace@2", "--reviewed", "--as", OWNER, "--yes")[0] == 0


def test_two_independent_passing_uses_publish_without_review(governed: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    propose(capsys, governed, draft(governed, tmp_path, line="\n48 hours\n"))
    assert cli(capsys, governed, "skills", "test", "parcel-trace@2")[0] == 0
    code, _, err = cli(capsys, governed, "skills", "publish", "parcel-trace@2", "--as", OWNER, "--yes")
    assert code == 3 and "2 more independent passing uses needed" in err
    for case, sr in (("C-7", "SR-7"), ("C-8", "SR-8")):
        code, _, err = cli(capsys, governed, "use", "--skill", "parcel-trace@2", "--case", case, "--source-request", sr,
                           "--verdict", "pass", "--check", "traced a live waybill")
        assert code == 0, err
    assert cli(capsys, governed, "skills", "publish", "parcel-trace@2", "--as", OWNER, "--yes")[0] == 0


def test_a_retried_proposal_is_filed_once_and_a_stale_one_is_refused(governed: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    folder = draft(governed, tmp_path, line="\n48 hours\n")
    argv = ("propose", "--skill", "parcel-trace", "--from", str(folder), "--case", "C-1", "--source-request", "SR-1",
            "--profile", "support.agent", "--client-id", "req-1")
    assert cli(capsys, governed, *argv)[0] == 0 and cli(capsys, governed, *argv)[0] == 0
    with Session.open(governed) as s:
        assert [v.number for v in sv.SkillLedger(s.store).versions("parcel-trace")] == [1, 2]
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "48 hours again\n")
    propose(capsys, governed, folder, case="C-3", sr="SR-3")
    for n in (2, 3):
        assert cli(capsys, governed, "skills", "test", f"parcel-trace@{n}")[0] == 0
    assert cli(capsys, governed, "skills", "publish", "parcel-trace@2", "--reviewed", "--as", OWNER, "--yes")[0] == 0
    code, _, err = cli(capsys, governed, "skills", "publish", "parcel-trace@3", "--reviewed", "--as", OWNER, "--yes")
    assert code == 1 and "was filed on @1 but skill:parcel-trace@2 is published now" in err


def test_an_unbound_skill_cannot_be_proposed_or_adopted(sample_copy: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    code, _, err = cli(capsys, sample_copy, "skills", "adopt", "parcel-utils")
    assert code == 3 and "bound to no node" in err
    with Session.open(sample_copy) as s:
        assert sv.SkillLedger(s.store).versions() == []


def test_the_proposals_queue_lists_a_skill_proposal_with_its_test_state(governed: Path, tmp_path: Path,
                                                                        capsys) -> None:  # noqa: ANN001
    ws = governed
    code, before, _ = run_cli(capsys, "proposals", "list", "-w", str(ws))
    assert code == 0
    v2 = propose(capsys, ws, draft(ws, tmp_path, line="\n48 hours\n"))
    code, out, _ = run_cli(capsys, "proposals", "list", "-w", str(ws))
    lines = out.splitlines()
    assert code == 0 and [x for x in lines if x.startswith(v2)] and "[skill]  not tested" in out
    assert [x for x in before.splitlines() if x.strip() and not x.startswith("no ")] == \
        [x for x in lines if not x.startswith(v2)]  # the article lines stay as they were
    assert cli(capsys, ws, "skills", "test", "parcel-trace@2")[0] == 0
    code, out, _ = run_cli(capsys, "proposals", "list", "-w", str(ws), "--kind", "skill", "--json")
    items = json.loads(out)["proposals"]
    assert code == 0 and [(i["kind"], i["id"], i["tests"], i["owner"]) for i in items] == \
        [("skill", v2, "tests passed", OWNER)]
    code, out, _ = run_cli(capsys, "proposals", "list", "-w", str(ws), "--kind", "article", "--json")
    assert code == 0 and v2 not in out
