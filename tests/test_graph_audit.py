"""The graph audit: seed 002's three rules and the hygiene findings."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from memtui.core import graph as g
from memtui.core.findings import CODES
from memtui.core.graph.audit import audit, near_duplicates
from memtui.core.text import visible


def _load(*records: dict) -> g.Graph:
    return g.loads(("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n").encode())


def E(name: str, etype: str = "thing", obs: list[str] | None = None) -> dict:  # noqa: N802
    return {"type": "entity", "name": name, "entityType": etype, "observations": obs or []}


def R(a: str, b: str, rtype: str = "uses") -> dict:  # noqa: N802
    return {"type": "relation", "from": a, "to": b, "relationType": rtype}


def _codes(findings) -> Counter:
    return Counter(f.code for f in findings)


def test_every_graph_code_is_registered() -> None:
    graph = _load(E("x", obs=["", "a", "a"]), E("x"), E("X "), E("tab\tname"), E(""), R("x", "nowhere"), R("x", "nowhere"))
    for finding in audit(graph):
        assert finding.code in CODES


def test_three_rules_findings() -> None:
    graph = _load(
        E("PostgreSQL database", "Service"), E("postgresql  Database", "service"),
        E("PostgreSQL databse", "services"), E("lonely", "Person"), E("people-1", "people"),
        E("node-000001", "x"), E("node-000002", "x"),
        R("PostgreSQL database", "postgresql  Database"), R("PostgreSQL databse", "ghost"),
        R("node-000001", "node-000002"), R("people-1", "node-000001"),
    )
    findings = audit(graph)
    by_code: dict[str, list] = {}
    for f in findings:
        by_code.setdefault(f.code, []).append(f)
    assert len(by_code["graph-similar-names"]) == 1
    assert "postgresql  Database" in by_code["graph-similar-names"][0].message
    near = [f.message for f in by_code["graph-near-duplicate"]]
    assert any("databse" in m for m in near)
    assert not any("node-00000" in m for m in near)  # numbered series are not misspellings
    assert [f.line for f in by_code["graph-dangling-relation"]] == [9]
    assert "ghost" in by_code["graph-dangling-relation"][0].message
    assert [f.message for f in by_code["graph-orphan"]] == ['entity "lonely" has no relation; nothing leads to it']
    variants = {f.message for f in by_code["graph-type-variants"]}
    assert any('"Service"' in m and '"services"' in m for m in variants)
    assert any('"Person"' in m and '"people"' in m for m in variants)


def test_observation_and_name_hygiene() -> None:
    graph = _load(E("a", obs=["x", "x", " ", "y"]), E("a"), E("line\nbreak"), E("zero\u200bwidth"), E(""),
                  R("a", "a"), R("a", "a"))
    codes = _codes(audit(graph))
    assert codes["graph-duplicate-observation"] == 1
    assert codes["graph-empty-observation"] == 1
    assert codes["graph-duplicate-entity"] == 1
    assert codes["graph-duplicate-relation"] == 1
    assert codes["graph-name-control"] == 2
    assert codes["graph-name-empty"] == 1


def test_odd_names_are_shown_visibly_and_flagged(shared: Path) -> None:
    graph = g.load(shared / "bug-inputs" / "B17" / "memory.jsonl", "memory.jsonl")
    assert len(graph.entities) == 18 and graph.bad_lines() == []
    findings = audit(graph)
    flagged = sorted(f.message.split('"')[1] for f in findings if f.code == "graph-name-control")
    assert flagged == sorted(["line one\\nline two", "tab\\there", "zero\\u200bwidth", "rtl \\u202eevil.md"])
    assert _codes(findings)["graph-name-empty"] == 1
    # no two distinct names look the same once made visible
    assert len({visible(e.name) for e in graph.entities}) == len(graph.entities)


def test_corpus_dmetrics_findings(shared: Path) -> None:
    graph = g.load(shared / "corpus" / "graphs" / "sm-moshi__dmetrics-go" / "memory.jsonl")
    codes = _codes(audit(graph))
    assert codes["graph-duplicate-entity"] == 80 - 66  # 80 entity lines, 66 distinct names
    assert codes["graph-dangling-relation"] == 1  # MANIFEST: 1 dangling
    assert codes["graph-type-variants"] >= 1 and codes["graph-near-duplicate"] >= 1
    clean = audit(g.load(shared / "corpus" / "graphs" / "vbrevik__ontology-manager" / "memory.jsonl"))
    assert clean == []


def test_near_duplicates_scale_without_all_pairs() -> None:
    names = [f"entity number {i:05d}" for i in range(20000)] + ["Kubernetes cluster", "Kubernetes clsuter"]
    pairs = near_duplicates(names)
    assert pairs == [("Kubernetes clsuter", "Kubernetes cluster", pairs[0][2])]


def test_sample_workspace_graph_shows_each_rule_once() -> None:
    sample = Path(__file__).resolve().parent.parent / "sample_workspace" / "memory" / "graph.jsonl"
    graph = g.load(sample, "memory/graph.jsonl")
    findings = audit(graph)
    codes = _codes(findings)
    assert graph.bad_lines() == [] and graph.read_findings() == []
    assert codes["graph-type-variants"] == 1 and codes["graph-dangling-relation"] == 1
    assert codes["graph-orphan"] == 1
    assert any("DepotScan" in f.message for f in findings if f.code == "graph-near-duplicate")
