"""Every skill has an owner: it is bound to a memory node (its folder lies in the node, or its
front matter names it under `metadata`), and the node's owner owns it; unbound is a finding."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import run_cli
from memtui.core.skills import load_catalogue
from memtui.core.skills.edit import set_metadata_field
from memtui.core.skills.status import skill_status
from memtui.core.workspace import Workspace


def _status(ws_root: Path, name: str):  # noqa: ANN202
    ws = Workspace.open(ws_root)
    skill = next(s for s in load_catalogue(ws).skills if s.key == name and s.root == "skills")
    return skill_status(ws, skill)


def test_an_unbound_skill_is_a_finding_and_has_no_owner(sample_copy: Path, capsys) -> None:
    status = _status(sample_copy, "parcel-trace")
    assert status.binding.node is None and status.binding.owner is None
    assert "skill-unbound" in [f.code for f in status.findings]
    code, out, _ = run_cli(capsys, "skills", "status", "-w", str(sample_copy), "--json")
    rows = {r["path"]: r for r in json.loads(out)["skills"]}
    assert code == 0 and rows["skills/parcel-trace/SKILL.md"]["owner"] is None


def test_the_catalogue_checks_are_unchanged_unless_governance_is_asked_for(sample_copy: Path, capsys) -> None:
    code, plain, _ = run_cli(capsys, "skills", "check", "-w", str(sample_copy), "--json")
    codes = {f["code"] for f in json.loads(plain)["findings"]}
    assert not codes & {"skill-unbound", "skill-manifest-missing"}
    code, gov, _ = run_cli(capsys, "skills", "check", "-w", str(sample_copy), "--json", "--governance")
    codes = {f["code"] for f in json.loads(gov)["findings"]}
    assert {"skill-unbound", "skill-manifest-missing"} <= codes


def test_bind_names_the_node_in_metadata_and_the_node_owner_owns_the_skill(sample_copy: Path, capsys) -> None:
    before = [f.code for f in _status(sample_copy, "parcel-trace").skill.findings]
    code, out, err = run_cli(capsys, "skills", "bind", "-w", str(sample_copy), "parcel-trace", "support/parcels-lost")
    assert code == 0, err
    assert "bound to support/parcels-lost (front matter); owner support.parcels-lost" in out
    text = (sample_copy / "skills/parcel-trace/SKILL.md").read_text()
    assert "  memory-node: support/parcels-lost\n---" in text and text.count("metadata:") == 1
    status = _status(sample_copy, "parcel-trace")
    assert (status.binding.node, status.binding.owner) == ("support/parcels-lost", "support.parcels-lost")
    assert "skill-unbound" not in [f.code for f in status.findings]
    # the Agent Skills checks see nothing new: metadata is an allowed key
    assert [f.code for f in status.skill.findings] == before
    code, out, _ = run_cli(capsys, "log", "-w", str(sample_copy), "--json", "--limit", "1")
    assert json.loads(out)["entries"][0]["action"] == "skills.set"


def test_bind_to_a_folder_that_is_not_a_node_is_refused_and_nothing_changes(sample_copy: Path, capsys) -> None:
    path = sample_copy / "skills/parcel-trace/SKILL.md"
    before = path.read_bytes()
    for node in ("support/nowhere", "../outside", "support/parcels-lost/../../.."):
        code, _, err = run_cli(capsys, "skills", "bind", "-w", str(sample_copy), "parcel-trace", node)
        assert code == 2 and "is not a node of the memory tree" in err
    assert path.read_bytes() == before


def test_a_named_node_that_does_not_exist_is_an_invalid_binding(sample_copy: Path) -> None:
    path = sample_copy / "skills/parcel-trace/SKILL.md"
    path.write_text(set_metadata_field(path.read_text(), "memory-node", "support/gone"))
    status = _status(sample_copy, "parcel-trace")
    assert status.binding.node is None
    assert [f.code for f in status.findings if f.code.startswith("skill-b")] == ["skill-binding-invalid"]


def test_a_skill_folder_inside_a_node_is_bound_to_that_node(sample_copy: Path) -> None:
    home = sample_copy / "memory/support/courier-app/skills/app-reset"
    home.mkdir(parents=True)
    (home / "SKILL.md").write_text("---\nname: app-reset\ndescription: Use when the courier app hangs.\n---\nbody\n")
    os.symlink(os.path.relpath(home, sample_copy / "skills"), sample_copy / "skills/app-reset")
    status = _status(sample_copy, "app-reset")
    assert (status.binding.node, status.binding.how) == ("support/courier-app", "folder")
    assert status.binding.owner
