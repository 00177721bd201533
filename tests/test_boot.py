"""`memtui boot NODE`: own AGENTS.md plus the index of every domain, within a byte budget
(seed 000 §2 rule 1), over the real AGENTS.md trees of the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.core.tree.boot import NodeNotFoundError, build_boot
from memtui.core.errors import ConfinementError
from memtui.core.workspace import Workspace

from tests.conftest import run_cli


@pytest.fixture(scope="module")
def prefect(shared) -> Path:
    return shared / "corpus" / "agents-trees" / "PrefectHQ__prefect"


run = run_cli


def test_boot_holds_own_index_and_every_domain(prefect):
    boot = build_boot(Workspace.open(prefect), "src/prefect/cli", budget=10**7)
    own = (prefect / "src" / "prefect" / "cli" / "AGENTS.md").read_text(encoding="utf-8-sig")
    assert boot.path == "src/prefect/cli/AGENTS.md"
    assert own in boot.text and not boot.own_truncated
    all_nodes = sorted(p.relative_to(prefect).as_posix() for p in prefect.rglob("AGENTS.md"))
    assert sorted(p for p, _ in boot.domains) == all_nodes
    assert not boot.omitted and boot.notes() == []
    assert boot.text.index(own) < boot.text.index("# Index of every domain")
    # the rest of the tree is listed, not loaded: other nodes' bodies are absent (boot is light)
    other = (prefect / "src" / "prefect" / "server" / "AGENTS.md").read_text(encoding="utf-8-sig")
    assert other.strip() not in boot.text


def test_budget_omits_domains_and_names_them(prefect):
    full = build_boot(Workspace.open(prefect), "src/prefect/cli", budget=10**7)
    budget = full.memory_size - 200
    boot = build_boot(Workspace.open(prefect), "src/prefect/cli", budget=budget)
    assert boot.memory_size <= budget
    assert boot.omitted and len(boot.domains) + len(boot.omitted) == len(full.domains)
    assert [p for p, _ in boot.domains + boot.omitted] == [p for p, _ in full.domains]
    assert all(p in boot.notes()[0] for p, _ in boot.omitted)


def test_tiny_budget_truncates_own_index_at_a_line_end(prefect):
    boot = build_boot(Workspace.open(prefect), ".", budget=600)
    own = (prefect / "AGENTS.md").read_text(encoding="utf-8-sig")
    assert boot.own_truncated and boot.memory_size <= 600
    body = boot.text.split("\n\n", 1)[1]
    assert own.startswith(body) and body.endswith("\n")
    assert boot.omitted and "truncated" in boot.notes()[0]
    assert len(boot.omitted) == len(list(prefect.rglob("AGENTS.md")))


def test_bom_is_not_carried_into_the_boot(shared):
    tree = shared / "corpus" / "agents-trees" / "microsoft__agent-framework"
    boot = build_boot(Workspace.open(tree), "dotnet/samples")
    assert "\ufeff" not in boot.text and boot.text.startswith("# Own node: dotnet/samples/AGENTS.md")


def test_not_a_node_and_outside_paths(prefect):
    ws = Workspace.open(prefect)
    with pytest.raises(NodeNotFoundError, match="not a node"):
        build_boot(ws, "src")
    with pytest.raises(ConfinementError):
        build_boot(ws, "../../..")


def test_workspace_with_memory_folder_and_skills(tmp_path):
    (tmp_path / "memory" / "platform").mkdir(parents=True)
    (tmp_path / "memory" / "AGENTS.md").write_text("# Root\n\n- [Platform](platform/AGENTS.md)\n", encoding="utf-8")
    (tmp_path / "memory" / "platform" / "AGENTS.md").write_text("# Platform\n\nrules\n", encoding="utf-8")
    skill = tmp_path / "skills" / "report"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: report\ndescription: Use when a report is due\n---\n", encoding="utf-8")
    ws = Workspace.open(tmp_path)
    for given in ("platform", "memory/platform", "memory/platform/AGENTS.md"):
        assert build_boot(ws, given).node == "platform"
    boot = build_boot(ws, "platform", with_skills=True)
    assert boot.path == "memory/platform/AGENTS.md"
    assert [p for p, _ in boot.domains] == ["memory/AGENTS.md", "memory/platform/AGENTS.md"]
    assert boot.text.rstrip().endswith("- report: Use when a report is due (skills/report/SKILL.md)")
    assert boot.memory_size < boot.size


def test_cli_boot_text_json_and_errors(prefect, capsys):
    code, out, _ = run(capsys, "boot", "-w", str(prefect), "src/prefect/cli", "--budget", "2000")
    assert code == 0 and "domains omitted" in out and "of 2,000 bytes" in out
    code, out, _ = run(capsys, "boot", "-w", str(prefect), "src/prefect/cli", "--json")
    data = json.loads(out)
    assert data["path"] == "src/prefect/cli/AGENTS.md" and data["memory_size"] <= data["budget"]
    assert len(data["domains"]) + len(data["omitted"]) == len(list(prefect.rglob("AGENTS.md")))
    code, _, err = run(capsys, "boot", "-w", str(prefect), "src")
    assert code == 2 and "not a node" in err
    code, _, err = run(capsys, "boot", "-w", str(prefect), "../../..")
    assert code == 3 and "outside" in err
