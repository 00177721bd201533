"""The search under bad input and faults: it never crashes on a
name that is not UTF-8 or a graph line nested too deep, never reads or writes an index
through a .memtui leading outside, and finds words of scripts with combining vowel signs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memtui.core.search.index import IndexWriteError, SearchIndex
from memtui.core.search.query import search
from memtui.core.workspace import Workspace
from tests.conftest import SAMPLE


def _ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root, symlinks=True)
    return root


def _paths(index: SearchIndex, text: str) -> list[str]:
    return [hit.path for hit in search(index, text, limit=20).hits]


def test_names_that_are_not_utf8_and_deep_lines_do_not_stop_the_index(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    support = os.fsencode(root / "memory" / "support")
    with open(os.path.join(support, b"bokm\xe5l-zebrafinch.md"), "w") as handle:
        handle.write("# zebrafinch\n")
    os.makedirs(os.path.join(os.fsencode(root / "skills"), b"sk\xffill"))
    with open(os.path.join(os.fsencode(root / "skills"), b"sk\xffill", b"SKILL.md"), "w") as handle:
        handle.write("---\nname: zebrafinch\ndescription: Use when\n---\n")
    graph = root / "memory" / "graph.jsonl"
    graph.write_bytes(graph.read_bytes() + b'\n{"type":"entity","name":"zebrafinch","entityType":"x","observations":'
                      + b"[" * 1200 + b"]" * 1200 + b"}\n")
    index = SearchIndex(Workspace.open(root))
    report = index.update(rebuild=True)
    assert report.documents > 50
    assert any(f.path == "memory/graph.jsonl" and "levels deep" in f.message for f in report.findings)
    assert _paths(index, "zebrafinch") == [], "files memtui cannot name are left out (the audit reports them)"
    assert _paths(index, "parcel"), "the rest is searchable"


def test_an_index_leading_outside_is_neither_read_nor_written(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    outside = tmp_path / "elsewhere"
    shutil.move(str(root / ".memtui"), outside)
    (root / ".memtui").symlink_to(outside)
    before = sorted(p.name for p in outside.iterdir())
    index = SearchIndex(Workspace.open(root))
    assert not index.exists()
    with pytest.raises(IndexWriteError, match="leads outside the workspace"):
        index.update(rebuild=True)
    assert sorted(p.name for p in outside.iterdir()) == before, "nothing written through the link"


@pytest.mark.parametrize("word,query", [
    ("पार्सल", "पार्सल"), ("पार्सल", "पार्स*"), ("पार्सलों", "पार्सलो~"), ("காணவில்லை", "காணவில்லை"),
    ("காணவில்லை", "காணவில்*"), ("ទំនិញ", "ទំនិញ"), ("พัสดุ", "พัสดุ"),
])
def test_words_with_combining_vowel_signs_are_found_whole(tmp_path: Path, word: str, query: str) -> None:
    root = _ws(tmp_path)
    (root / "memory" / "support" / "multi.md").write_text(f"# Multilingual\n\nThe {word} report.\n")
    index = SearchIndex(Workspace.open(root))
    index.update(rebuild=True)
    assert _paths(index, query) == ["memory/support/multi.md"]
    assert _paths(index, "गयाा") == [], "a word found nowhere is no match (and no error)"


def test_a_word_is_not_matched_by_its_fragments(tmp_path: Path) -> None:
    """Cut at its vowel signs, पार्सल was the letters प र सल: any text holding them matched."""
    root = _ws(tmp_path)
    (root / "memory" / "support" / "frag.md").write_text("# Fragments\n\nप र सल\n")
    index = SearchIndex(Workspace.open(root))
    index.update(rebuild=True)
    assert "memory/support/frag.md" not in _paths(index, "पार्सल")
