"""Real AGENTS.md trees from ../shared/corpus open as memory trees ("Real input")."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from memtui.core import audit
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace

TREES = ["PrefectHQ__prefect", "microsoft__agent-framework"]


def manifest_count(shared: Path, tree: str) -> int:
    """How many AGENTS.md files MANIFEST.tsv says were copied for ``tree``."""
    with open(shared / "corpus" / "MANIFEST.tsv", encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t")
        return sum(1 for r in rows if r["status"] == "copied"
                   and r["relative_path"].startswith(f"agents-trees/{tree}/")
                   and r["relative_path"].endswith("AGENTS.md"))


@pytest.mark.parametrize("tree", TREES)
def test_node_count_matches_the_manifest(shared: Path, tree: str) -> None:
    ws = Workspace.open(shared / "corpus" / "agents-trees" / tree)
    model = MemoryTree(ws)
    nodes = [n for n in model.walk_nodes() if model.index(n).exists]
    expected = manifest_count(shared, tree)
    assert expected > 20
    assert len(nodes) == expected
    report = audit.run(ws)
    assert report.nodes == expected


def test_bom_file_parses(shared: Path) -> None:
    ws = Workspace.open(shared / "corpus" / "agents-trees" / "microsoft__agent-framework")
    index = MemoryTree(ws).index("dotnet/samples")
    assert (shared / "corpus/agents-trees/microsoft__agent-framework/dotnet/samples/AGENTS.md").read_bytes()[:3] == b"\xef\xbb\xbf"
    assert not index.title.startswith("\ufeff")
    assert index.text[0] != "\ufeff"
    assert [f.code for f in index.findings] == ["bom"]  # information, not an error


def test_tree_without_root_index_still_loads(shared: Path) -> None:
    ws = Workspace.open(shared / "corpus" / "agents-trees" / "microsoft__agent-framework")
    model = MemoryTree(ws)
    assert not model.index("").exists
    assert [c for c, _ in model.children("")] == ["dotnet", "python"]
    report = audit.run(ws)
    assert "no-root-index" in {f.code for f in report.findings}


def test_large_index_is_read_whole(shared: Path) -> None:
    ws = Workspace.open(shared / "corpus" / "agents-trees" / "microsoft__agent-framework")
    path = shared / "corpus/agents-trees/microsoft__agent-framework/python/packages/core/AGENTS.md"
    assert path.stat().st_size > 40_000
    index = MemoryTree(ws).index("python/packages/core")
    assert not any(f.code == "file-too-large" for f in index.findings)
    assert len(index.text) > 40_000


def test_links_to_files_left_out_of_the_corpus_are_missing_file_findings(shared: Path) -> None:
    ws = Workspace.open(shared / "corpus" / "agents-trees" / "microsoft__agent-framework")
    report = audit.run(ws)
    missing = [f for f in report.findings if f.code == "index-missing-file"]
    # the corpus kept only AGENTS.md files, so every listed .md link to another file is missing
    assert missing and all(f.path.endswith("AGENTS.md") and f.line for f in missing)
    for finding in missing:
        target = finding.message.split("'")[1]
        assert not (ws.root / Path(finding.path).parent / target).exists()
