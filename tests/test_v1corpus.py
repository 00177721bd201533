"""The generated inherited corpus the migration is tested on: its shape and its failure modes."""

from __future__ import annotations

import re
from pathlib import Path

from memtui.core.search import triage
from tests.v1corpus import FAIL_DOMAIN, PASS_DOMAIN, build

_LINE = re.compile(r"^- \[[^\]]+\]\(([^)]+)\) — .+$")


def test_corpus_is_a_flat_folder_of_hundreds_with_one_line_per_file(tmp_path: Path) -> None:
    c = build(tmp_path)
    files = sorted(p.name for p in c.v1.iterdir() if p.name != "MEMORY.md")
    assert len(files) > 300 and all(not (c.v1 / f).is_dir() for f in files)
    lines = [ln for ln in (c.v1 / "MEMORY.md").read_text("utf-8").splitlines() if ln.startswith("- ")]
    targets = [_LINE.match(ln).group(1) for ln in lines]
    assert sorted(t for t in targets if t not in c.missing) == files  # one line per file
    assert c.missing and not any((c.v1 / m).exists() for m in c.missing)  # lines to missing files


def test_corpus_holds_the_inherited_failure_modes(tmp_path: Path) -> None:
    c = build(tmp_path)
    texts = {p.name: p.read_text("utf-8") for p in c.v1.glob("*.md") if p.name != "MEMORY.md"}
    assert any(re.search(r"[а-я]{4}", t) for t in texts.values())  # Bulgarian
    assert sum(bool(re.match(r"20\d\d-\d\d-\d\d", n)) for n in texts) >= 10  # dated diaries
    assert sum("workaround" in t.lower() for t in texts.values()) >= 10  # session workarounds
    assert sum(t.count("Always") >= 2 for t in texts.values()) >= 10  # disciplines stored as articles
    assert any("@example.com" in t for t in texts.values())  # personal data
    bodies = [t.split("\n", 2)[-1] for t in texts.values()]
    assert len(bodies) - len(set(bodies)) >= 5  # duplicates


def test_held_out_cases_load_as_triage_cases_naming_v1_files(tmp_path: Path) -> None:
    c = build(tmp_path)
    for domain, language in ((PASS_DOMAIN, "bg"), (FAIL_DOMAIN, "en")):
        cases = triage.load_cases(c.cases[domain])
        assert cases and all(case.language == language for case in cases)
        assert all((c.v1 / f"{r}.md").is_file() for case in cases for r in case.relevant)


def test_the_corpus_is_the_same_for_the_same_seed(tmp_path: Path) -> None:
    a, b = build(tmp_path / "a"), build(tmp_path / "b")
    assert (a.v1 / "MEMORY.md").read_bytes() == (b.v1 / "MEMORY.md").read_bytes()
