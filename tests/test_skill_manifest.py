"""The skill manifest (skill-manifest.json beside SKILL.md): the five parts, dry-run, teardown,
coverage map and tests, checked against the shipped JSON Schema; bad input is a finding."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from memtui.core.findings import CODES
from memtui.core.skills.manifest import (
    MANIFEST_FILE, MAX_MANIFEST_BYTES, check_manifest_bytes, read_manifest, schema,
)

GOOD = {
    "inputs": [{"name": "waybill", "type": "string", "required": True}],
    "read_set": [{"system": "DepotScan", "reads": "the scan history of the waybill"}],
    "classification": {"outcomes": ["scan gap", "delivered", "returned"]},
    "write_packet": {
        "writes": [{"id": "w1", "target": "RouteCore search ticket", "path": "endpoint",
                    "teardown": "close the search ticket it opened"}],
        "dry_run": True,
    },
    "verification": [{"check": "the ticket exists with the waybill"}],
    "tests": {"command": "python3", "args": ["test_skill.py"], "timeout": 30},
}


def check(data: object) -> object:
    return check_manifest_bytes(json.dumps(data).encode(), "skills/x/skill-manifest.json")


def test_the_schema_ships_in_the_package_and_a_complete_manifest_has_no_finding() -> None:
    assert schema()["title"] == "skill manifest"
    m = check(GOOD)
    assert m.complete and m.findings == [] and m.missing == []
    assert m.tests.argv == ["python3", "test_skill.py"] and m.tests.timeout == 30


@pytest.mark.parametrize("part, words", [
    ("inputs", "inputs"), ("read_set", "read set"), ("classification", "classification"),
    ("write_packet", "write packet"), ("verification", "verification"), ("tests", "tests"),
])
def test_each_missing_part_is_a_finding_naming_it(part: str, words: str) -> None:
    data = copy.deepcopy(GOOD)
    del data[part]
    m = check(data)
    assert not m.complete
    assert [f.code for f in m.findings] == ["skill-manifest-part-missing"]
    assert words in m.findings[0].message and words in m.why_not()


def test_a_write_without_teardown_is_named_by_its_id() -> None:
    data = copy.deepcopy(GOOD)
    del data["write_packet"]["writes"][0]["teardown"]
    m = check(data)
    assert m.missing == ["the teardown of write w1"]
    assert "the teardown of write w1" in m.findings[0].message


def test_a_writing_skill_states_its_dry_run_or_an_exemption_test() -> None:
    data = copy.deepcopy(GOOD)
    del data["write_packet"]["dry_run"]
    m = check(data)
    assert m.missing == ["its dry-run default (or the recorded exemption test)"]
    data["write_packet"]["dry_run_exemption"] = {"test": "tests/exempt.py", "why": "idempotent"}
    assert check(data).complete
    data = copy.deepcopy(GOOD)
    data["write_packet"] = {"writes": []}  # a read-only skill has nothing to dry-run
    assert check(data).complete


def test_more_than_one_write_path_needs_the_coverage_map() -> None:
    data = copy.deepcopy(GOOD)
    data["write_packet"]["writes"].append({"id": "w2", "target": "BillingHub row", "path": "guarded-statement",
                                           "teardown": "restore the row from the packet's before image"})
    m = check(data)
    assert m.missing == ["the coverage map"] and "2 write paths" in m.findings[0].message
    data["write_packet"]["coverage"] = {"search ticket": {"path": "endpoint", "why": "RouteCore has one"},
                                        "billing row": {"path": "guarded-statement", "why": "no endpoint"}}
    assert check(data).complete


def test_a_wrong_shape_names_the_field_and_the_open_body_is_allowed() -> None:
    data = copy.deepcopy(GOOD)
    data["tests"]["args"] = "test_skill.py"
    data["x-case-extension"] = {"anything": [1, 2]}
    m = check(data)
    assert [f.code for f in m.findings] == ["skill-manifest-invalid"]
    assert "tests.args" in m.findings[0].message and m.tests is None


@pytest.mark.parametrize("raw, words", [
    (b"{not json", "is not JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[1, 2]", "not an object"),
    (b"[" * 100_000 + b"]" * 100_000, "nested deeper"),
    (b'{"inputs": ' + b"[" * 40 + b"]" * 40 + b"}", "nested deeper"),
])
def test_bad_input_is_one_finding_never_a_traceback(raw: bytes, words: str) -> None:
    m = check_manifest_bytes(raw, "skills/x/skill-manifest.json")
    assert [f.code for f in m.findings] == ["skill-manifest-unreadable"]
    assert words in m.findings[0].message and not m.complete


def test_a_50_mb_manifest_is_refused_by_its_size_before_it_is_read(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / MANIFEST_FILE
    with open(path, "wb") as fh:  # a sparse 50 MB file: its size is all that is looked at
        fh.truncate(50 * 1024 * 1024)
    opened: list[str] = []
    real_open = open

    def spy(file, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spy)
    m = read_manifest(tmp_path, "skills/x/skill-manifest.json")
    assert [f.code for f in m.findings] == ["skill-manifest-unreadable"]
    assert "52,428,800 bytes" in m.findings[0].message and f"{MAX_MANIFEST_BYTES:,}" in m.findings[0].message
    assert str(path) not in opened


def test_a_missing_manifest_is_its_own_finding(tmp_path: Path) -> None:
    m = read_manifest(tmp_path, "skills/x/skill-manifest.json")
    assert not m.present and [f.code for f in m.findings] == ["skill-manifest-missing"]
    assert "no skill-manifest.json" in m.why_not()


def test_every_manifest_code_is_registered() -> None:
    for code in ("skill-manifest-missing", "skill-manifest-unreadable", "skill-manifest-part-missing",
                 "skill-manifest-invalid"):
        assert code in CODES
