"""What a new user meets when following the README through a skill's life: a version keeps its
files' executable bit, a test script's interpreter is found (or named when it is not), a
proposal for an untracked skill is refused (and a store holding one recovers by adopting), a
broken manifest is a finding everywhere findings are shown, and the manifest's schema and a
complete example are findable."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from memtui.core.session import Session
from memtui.core.skills import versions as sv
from memtui.core.skills.catalogue import load_catalogue
from memtui.core.skills.manifest import check_manifest_bytes
from memtui.core.workspace import Workspace

ROOT = Path(__file__).resolve().parent.parent
OWNER = "support.parcels-lost"

MANIFEST = {
    "inputs": [], "read_set": [], "classification": {"outcomes": ["answered"]},
    "write_packet": {"writes": []}, "verification": [{"check": "the answer names the waybill"}],
    "tests": {"command": "tests/smoke.sh", "args": []},
}


def cli(capsys, ws: Path, *argv: str) -> tuple[int, str, str]:  # noqa: ANN001
    return run_cli(capsys, *argv[:2], "-w", str(ws), *argv[2:]) if argv[0] == "skills" else \
        run_cli(capsys, argv[0], "-w", str(ws), *argv[1:])


def script_skill(folder: Path, script: str, *, command: str = "tests/smoke.sh", mode: int = 0o755) -> Path:
    """``folder`` becomes a copy of ``parcel-trace`` whose test is the executable ``command``."""
    (folder / "tests").mkdir(parents=True, exist_ok=True)
    (folder / command).write_text(script)
    os.chmod(folder / command, mode)
    (folder / "skill-manifest.json").write_text(json.dumps({**MANIFEST, "tests": {"command": command, "args": []}}))
    return folder


@pytest.fixture
def bound(sample_copy: Path, capsys) -> Path:  # noqa: ANN001
    assert cli(capsys, sample_copy, "skills", "bind", "parcel-trace", "support/parcels-lost")[0] == 0
    return sample_copy


def draft_of(ws: Path, tmp: Path) -> Path:
    folder = tmp / "draft" / "parcel-trace"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(ws / "skills/parcel-trace", folder)
    return folder


def propose(capsys, ws: Path, folder: Path) -> tuple[int, str, str]:  # noqa: ANN001
    return cli(capsys, ws, "propose", "--skill", "parcel-trace", "--from", str(folder), "--case", "C-1",
               "--source-request", "SR-1", "--profile", "support.agent")


# -- a version keeps its files' executable bit ------------------------------------------------------
def test_a_proposed_version_runs_its_executable_test_script_as_the_live_folder_does(
        bound: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    assert cli(capsys, bound, "skills", "adopt", "parcel-trace")[0] == 0
    folder = script_skill(draft_of(bound, tmp_path), "#!/bin/sh\necho smoke ok\n")
    code, out, err = propose(capsys, bound, folder)
    assert code == 0 and "skill:parcel-trace@2" in out, err
    code, out, err = cli(capsys, bound, "skills", "test", "parcel-trace@2")
    assert code == 0 and "tests passed" in out, out + err
    with Session.open(bound, purpose="test", read_only=True) as s:
        assert sv.SkillLedger(s.store).get("parcel-trace@2").executable == ("tests/smoke.sh",)


def test_publishing_writes_the_executable_bit_into_the_skill_folder(bound: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    assert cli(capsys, bound, "skills", "adopt", "parcel-trace")[0] == 0
    folder = script_skill(draft_of(bound, tmp_path), "#!/bin/sh\nexit 0\n")
    assert propose(capsys, bound, folder)[0] == 0
    assert cli(capsys, bound, "skills", "test", "parcel-trace@2")[0] == 0
    code, out, err = cli(capsys, bound, "skills", "publish", "parcel-trace@2", "--reviewed", "--as", OWNER, "--yes")
    assert code == 0, out + err
    assert os.access(bound / "skills/parcel-trace/tests/smoke.sh", os.X_OK)
    code, out, err = cli(capsys, bound, "skills", "test", "parcel-trace")
    assert code == 0 and "tests passed" in out, out + err


def test_a_version_recorded_without_modes_treats_the_manifests_test_command_as_executable() -> None:
    doc = {"id": "skill:x@1", "skill": "x", "node": "", "number": 1, "state": "proposed",
           "files": {"SKILL.md": "x", "skill-manifest.json": json.dumps(MANIFEST), "tests/smoke.sh": "#!/bin/sh\n",
                     "notes.sh": "#!/bin/sh\n"},
           "sha256": "", "created": "", "author": None, "provenance": {}, "based_on": None, "base_hash": None}
    old = sv.SkillVersion.from_doc(doc, 1)
    assert old.executable is None and old.executables() == {"tests/smoke.sh"}
    assert sv.SkillVersion.from_doc({**doc, "executable": []}, 1).executables() == set()


# -- the test process finds interpreters, and a missing one is named ---------------------------------
def test_a_script_whose_interpreter_is_on_the_users_path_runs(bound: Path, tmp_path: Path, capsys,
                                                               monkeypatch) -> None:  # noqa: ANN001
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "memtui-probe-interp").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(bin_dir / "memtui-probe-interp", 0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    script_skill(bound / "skills/parcel-trace", "#!/usr/bin/env memtui-probe-interp\n")
    code, out, err = cli(capsys, bound, "skills", "test", "parcel-trace")
    assert code == 0 and "tests passed" in out, out + err


def test_a_missing_interpreter_is_named_as_the_cause(bound: Path, capsys) -> None:  # noqa: ANN001
    script_skill(bound / "skills/parcel-trace", "#!/nonexistent/memtui-interp -u\n")
    code, out, err = cli(capsys, bound, "skills", "test", "parcel-trace")
    assert code != 0
    assert "the interpreter '/nonexistent/memtui-interp -u' named by its first line was not found" in err, err
    assert "Permission denied" not in err


def test_a_script_without_the_executable_bit_says_so(bound: Path, capsys) -> None:  # noqa: ANN001
    script_skill(bound / "skills/parcel-trace", "#!/bin/sh\nexit 0\n", mode=0o644)
    code, out, err = cli(capsys, bound, "skills", "test", "parcel-trace")
    assert code != 0 and "is not executable" in err and "chmod +x tests/smoke.sh" in err, err


# -- propose on an untracked skill, and recovering from it ------------------------------------------
def test_proposing_for_an_untracked_skill_is_refused_and_records_nothing(bound: Path, tmp_path: Path,
                                                                         capsys) -> None:  # noqa: ANN001
    folder = script_skill(draft_of(bound, tmp_path), "#!/bin/sh\nexit 0\n")
    code, out, err = propose(capsys, bound, folder)
    assert code != 0 and "adopt it first (`memtui skills adopt parcel-trace`)" in err, out + err
    with Session.open(bound, purpose="test", read_only=True) as s:
        assert sv.SkillLedger(s.store).versions("parcel-trace") == []


def test_a_skill_with_only_proposed_versions_can_be_adopted(bound: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    # a store written before proposals for untracked skills were refused holds such a proposal
    with Session.open(bound, purpose="test") as s:
        def change(tx):  # noqa: ANN001, ANN202
            return sv._insert(tx, sv._record("parcel-trace", 1, "support/parcels-lost", {"SKILL.md": "old\n"},
                                             state="proposed", author="support.agent",
                                             provenance={"kind": "proposal", "case": "C-1",
                                                         "source_request": "SR-1"}, active=None))
        s.write("skills.propose", "skills/parcel-trace", change)
    code, out, err = cli(capsys, bound, "skills", "adopt", "parcel-trace")
    assert code == 0 and "recorded skill:parcel-trace@2 (baseline" in out, out + err
    code, out, err = cli(capsys, bound, "skills", "status", "parcel-trace", "--json")
    row = json.loads(out)["skills"][0]
    assert row["state"] == "published" and row["published"] == "skill:parcel-trace@2"
    assert row["proposals"] == ["skill:parcel-trace@1"]
    code, out, err = cli(capsys, bound, "skills", "adopt", "parcel-trace")
    assert code != 0 and "has recorded versions already" in err


# -- a broken manifest is a finding wherever findings are shown --------------------------------------
def test_an_invalid_manifest_is_in_the_audit_the_check_the_area_and_fails_status(sample_copy: Path,
                                                                                 capsys) -> None:  # noqa: ANN001
    (sample_copy / "skills/parcel-trace/skill-manifest.json").write_text(
        json.dumps({**MANIFEST, "classification": "answered"}))
    code, out, err = run_cli(capsys, "audit", "-w", str(sample_copy), "--json")
    codes = [f["code"] for f in json.loads(out)["findings"]]
    assert code == 1 and "skill-manifest-invalid" in codes, out
    code, out, err = cli(capsys, sample_copy, "skills", "check")
    assert code == 1 and "skill-manifest-invalid" in out, out + err
    code, out, err = cli(capsys, sample_copy, "skills", "check", "--governance", "--json")
    found = [f for f in json.loads(out)["findings"] if f["code"] == "skill-manifest-invalid"]
    assert len(found) == len({json.dumps(f, sort_keys=True) for f in found}) >= 1  # each once
    code, out, err = cli(capsys, sample_copy, "skills", "status")
    assert code == 1 and "skill-manifest-invalid" in out, out + err
    skill = next(s for s in load_catalogue(Workspace.open(sample_copy)).skills if s.key == "parcel-trace")
    assert not skill.valid


def test_a_skill_without_a_manifest_stays_valid_and_status_exits_0_without_errors(sample_copy: Path,
                                                                                   capsys) -> None:  # noqa: ANN001
    skill = next(s for s in load_catalogue(Workspace.open(sample_copy)).skills if s.key == "parcel-trace")
    assert not any(f.code.startswith("skill-manifest") for f in skill.findings)
    code, out, err = cli(capsys, sample_copy, "skills", "status", "parcel-trace")
    assert code == 0, out + err


# -- how to write a manifest -------------------------------------------------------------------------
def test_skills_schema_prints_the_shipped_schema(capsys) -> None:  # noqa: ANN001
    from importlib import resources

    code, out, err = run_cli(capsys, "skills", "schema")
    shipped = resources.files("memtui.core.skills").joinpath("skill-manifest.schema.json").read_text("utf-8")
    assert code == 0 and json.loads(out) == json.loads(shipped), err


def test_the_readmes_example_manifest_is_complete_and_its_verification_is_an_array() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", readme, flags=re.S)
    examples = [b for b in blocks if '"verification"' in b and '"tests"' in b]
    assert examples, "the README shows no complete skill-manifest.json"
    manifest = check_manifest_bytes(examples[0].encode("utf-8"), "skill-manifest.json")
    assert manifest.complete and not manifest.findings, manifest.findings
    assert "memtui skills schema" in readme and "memtui skills adopt" in readme
    assert '"verification": [{"check"' in readme.replace("\n", " ") or \
        re.search(r'"verification":\s*\[\s*\{', readme)
