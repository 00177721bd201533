"""The occurrence ladder: cases are counted on an experience entry's fix signature; the third
occurrence is a candidate of the consolidation pass asking for a skill or an article, the
seventh and the twentieth ask to refine it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from memtui.core.consolidate.ladder import fix_signature

ENTRY = "support/experience/exp-002-route-locked-reschedule.md"


def occurrence(capsys, ws: Path, case: str, entry: str = ENTRY) -> tuple[int, str, str]:  # noqa: ANN001
    """``memtui occurred``: the one record of an occurrence, read by the entry's counters and the ladder."""
    return run_cli(capsys, "occurred", "-w", str(ws), entry, "--case", case, "--source-request", f"SR-{case}")


def ladder(capsys, ws: Path) -> list[dict]:  # noqa: ANN001
    code, out, _ = run_cli(capsys, "consolidate", "-w", str(ws), "--kind", "ladder", "--json")
    assert code in (0, 1)
    return [c for c in json.loads(out)["candidates"] if c["kind"] == "ladder"]


def test_the_signature_is_normalised_and_the_fix_shape_is_part_of_it() -> None:
    a = {"symptom": "„Route LOCKED“ on  reschedule", "systems": ["RouteCore", "DepotScan"],
         "mechanism": "The route is frozen.", "fix_shape": "config cell"}
    b = {"symptom": "route locked on reschedule", "systems": ["depotscan", "routecore"],
         "mechanism": "the route is   frozen.", "fix_shape": "Config Cell"}
    assert fix_signature(a) == fix_signature(b) is not None
    assert fix_signature({**b, "fix_shape": "data fix"}) != fix_signature(a)
    assert fix_signature({k: v for k, v in a.items() if k != "mechanism"}) is None


def test_the_third_occurrence_asks_for_a_skill_or_an_article_naming_the_cases(sample_copy: Path, capsys) -> None:  # noqa: ANN001
    assert ladder(capsys, sample_copy) == []
    code, out, _ = occurrence(capsys, sample_copy, "C-1")
    assert code == 0 and "2 cases share its fix signature now" in out and "occurrences 1" in out
    assert ladder(capsys, sample_copy) == []
    code, out, _ = occurrence(capsys, sample_copy, "C-2")
    assert code == 0 and "asks for a skill or an article" in out
    [candidate] = ladder(capsys, sample_copy)
    assert candidate["articles"] == [ENTRY] and candidate["detail"]["cases"] == ["exp-002", "C-1", "C-2"]
    assert candidate["reason"].startswith("3 cases share this fix signature: propose a skill or an article")
    assert candidate["owner"] == "support.curator"
    for n in range(3, 7):
        assert occurrence(capsys, sample_copy, f"C-{n}")[0] == 0
    [candidate] = ladder(capsys, sample_copy)
    assert candidate["detail"]["step"] == 7 and "refine the existing skill or article" in candidate["reason"]


def test_a_case_counts_once_on_the_ladder_and_only_experience_entries_have_a_signature(sample_copy: Path, capsys) -> None:  # noqa: ANN001
    assert occurrence(capsys, sample_copy, "C-1")[0] == 0
    code, out, _ = occurrence(capsys, sample_copy, "C-1")  # recorded again (a counter of its own) …
    assert code == 0 and "2 cases share its fix signature now" in out  # … but one case on the ladder
    code, out, _ = occurrence(capsys, sample_copy, "exp-002")  # the entry's own case
    assert code == 0 and "2 cases share" in out
    code, out, _ = run_cli(capsys, "log", "-w", str(sample_copy), "--json", "--limit", "1")
    assert json.loads(out)["entries"][0]["action"] == "governance.occurred"
    entry = "support/parcels-lost/scan-gaps.md"
    code, out, err = occurrence(capsys, sample_copy, "C-9", entry=entry)
    assert "fix signature" not in out  # not an experience entry: counted, not on the ladder
