"""The knowledge graph core: lenient reading, lossless writing, operations, commit."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from pathlib import Path

import pytest

from memtui.core import graph as g

CORPUS_COUNTS = {  # from ../shared/corpus/README.md and MANIFEST.tsv notes
    "omriwen__PRISM": (60, 60, 60),
    "vbrevik__ontology-manager": (7, 7, 6),
    "sm-moshi__dmetrics-go": (80, 66, 106),
}


def _graph_bytes(*records: dict, final_newline: bool = True) -> bytes:
    text = "\n".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in records)
    return (text + ("\n" if final_newline else "")).encode()


def E(name: str, etype: str = "thing", obs: list[str] | None = None, **extra) -> dict:  # noqa: N802
    return {"type": "entity", "name": name, "entityType": etype, "observations": obs or [], **extra}


def R(a: str, b: str, rtype: str = "uses", **extra) -> dict:  # noqa: N802
    return {"type": "relation", "from": a, "to": b, "relationType": rtype, **extra}


# -- reading ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CORPUS_COUNTS))
def test_corpus_graphs_load_with_expected_counts_and_round_trip(shared: Path, name: str) -> None:
    path = shared / "corpus" / "graphs" / name / "memory.jsonl"
    data = path.read_bytes()
    graph = g.loads(data, name)
    entities, distinct, relations = CORPUS_COUNTS[name]
    assert len(graph.entities) == entities
    assert len({e.name for e in graph.entities}) == distinct
    assert len(graph.relations) == relations
    assert graph.bad_lines() == []
    assert graph.to_bytes() == data  # untouched file: byte for byte
    assert graph.final_newline == data.endswith(b"\n")


def test_a_damaged_file_loads_every_good_record_is_loaded_and_every_bad_line_reported(shared: Path) -> None:
    folder = shared / "bug-inputs" / "B15"
    graph = g.load(folder / "memory.jsonl", "memory.jsonl")
    assert [e.name for e in graph.entities] == ["harbor-cron", "tide-gauge", "ferry-schedule", "port-log"]
    assert [r.triple for r in graph.relations] == [("tide-gauge", "harbor-cron", "feeds")]
    assert graph.bom and not graph.final_newline
    port_log = graph.entity("port-log")
    assert "\x00" in port_log.observations[0] and port_log.observations[0].endswith("departures")
    findings = {f.line: f for f in graph.read_findings() if f.code != "graph-server-unreadable"}
    with open(folder / "expected-load.tsv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    must_report = {int(r["# line"]) for r in rows if "report line" in r["what memtui must do"]}
    assert must_report == {5, 6, 7, 9, 12}
    assert {n for n, f in findings.items() if f.severity.value == "error"} == must_report
    assert "two JSON values" in findings[5].message
    assert "observations` is a JSON string" in findings[6].message
    assert "without `entityType`" in findings[7].message and "missing field" in findings[7].message
    assert "not a JSON object" in findings[9].message
    assert "cut off" in findings[12].message
    assert findings[8].code == "graph-record-unknown"
    server = [f for f in graph.read_findings() if f.code == "graph-server-unreadable"]
    assert len(server) == 1 and "byte order mark" in server[0].message
    # the string observations of buoy-7 are never exploded into characters
    assert not any(e.name == "buoy-7" for e in graph.entities)


def test_an_edit_of_a_damaged_file_changes_only_the_edited_line_and_keeps_bad_lines(shared: Path, tmp_path: Path, graph_session) -> None:
    original = (shared / "bug-inputs" / "B15" / "memory.jsonl").read_bytes()
    target = tmp_path / "graph.jsonl"
    target.write_bytes(original)
    saved = g.commit(target, g.load(target), g.AddObservation("tide-gauge", "calibrated in May"), session=graph_session)
    after = target.read_bytes()
    assert after.startswith(g.BOM)
    old_lines = original[3:].split(b"\n")
    new_lines = after[3:].split(b"\n")
    assert new_lines[-1] == b""  # the saved file ends with a newline, so an append starts a line
    new_lines.pop()
    assert len(new_lines) == len(old_lines)
    changed = [i + 1 for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)) if a != b]
    assert changed == [2]
    assert json.loads(new_lines[1])["observations"] == ["reads sensor data", "calibrated in May"]
    assert new_lines[2].endswith(b"\r")  # the CRLF line keeps its CR
    assert saved.graph.entity("tide-gauge").observations[-1] == "calibrated in May"
    assert saved.graph.source_sha256 == hashlib.sha256(after).hexdigest()


def test_bad_lines_of_every_kind_are_findings_with_line_numbers() -> None:
    data = b"\n".join([
        b'{"type":"entity","name":"a","entityType":"t","observations":[]}',
        b'{"type":"entity","name":"b"',                      # cut off
        b'{"type":"entity","name":"c","entityType":"t","observations":[]} trailing',
        b'"just a string"',
        b'null',
        b'{"type":"relation","from":"a","to":5,"relationType":"r"}',  # wrong type
        b'{"type":"entity","name":"d","entityType":"t","observations":["ok",3]}',
        b'\xff\xfe not utf-8',
        b'{"type":"entity","name":"e","entityType":"t","observations":[NaN]}',
        b'',
        b'{"no":"type"}',
    ]) + b"\n"
    graph = g.loads(data)
    by_line = {f.line: f.message for f in graph.read_findings() if f.code != "graph-server-unreadable"}
    assert [e.name for e in graph.entities] == ["a"]
    assert "cut off" in by_line[2]
    assert "extra text" in by_line[3]
    assert "JSON string" in by_line[4]
    assert "JSON null" in by_line[5]
    assert "`to` is a JSON number" in by_line[6]
    assert "observation 2 is a JSON number" in by_line[7]
    assert "not valid UTF-8" in by_line[8]
    assert "NaN" in by_line[9]
    assert 10 not in by_line  # blank line: silently accepted
    assert "unknown type (none)" in by_line[11]
    assert graph.to_bytes() == data  # nothing dropped, nothing changed


def test_crlf_blank_lines_and_no_final_newline_are_kept() -> None:
    data = b'{"type":"entity","name":"a","entityType":"t","observations":[]}\r\n\r\n  \r\n' \
           b'{"type":"relation","from":"a","to":"a","relationType":"self"}'
    graph = g.loads(data)
    assert len(graph.entities) == 1 and len(graph.relations) == 1
    assert not graph.final_newline and graph.newline() == b"\r\n"
    assert graph.to_bytes() == data
    change = g.CreateEntity("b", "t").apply(graph)
    out = change.graph.to_bytes()
    assert out.split(b"\r\n")[1] == b'{"type":"entity","name":"b","entityType":"t","observations":[]}'
    assert not out.endswith(b"\n")  # the server's convention kept


def test_legacy_single_object_layout_is_recognised_and_converted(tmp_path: Path, graph_session) -> None:
    legacy = {"entities": [{"name": "x", "entityType": "t", "observations": ["o"]}],
              "relations": [{"from": "x", "to": "x", "relationType": "self"}]}
    for data in (json.dumps(legacy).encode(), json.dumps(legacy, indent=2).encode()):
        graph = g.loads(data)
        assert graph.legacy
        assert [e.name for e in graph.entities] == ["x"] and len(graph.relations) == 1
        codes = [f.code for f in graph.read_findings()]
        assert codes == ["graph-legacy-layout"]
        with pytest.raises(g.GraphEditError, match="convert"):
            g.AddObservation("x", "more").apply(graph)
        target = tmp_path / "graph.jsonl"
        target.write_bytes(data)
        g.commit(target, g.loads(data), g.ConvertLegacy(), session=graph_session)
        converted = g.load(target)
        assert not converted.legacy
        assert g.server_view(converted) == {
            "entities": [{"name": "x", "entityType": "t", "observations": ["o"]}],
            "relations": [{"from": "x", "to": "x", "relationType": "self"}]}


def test_missing_file_is_an_empty_graph_and_first_save_creates_it(tmp_path: Path, graph_session) -> None:
    target = tmp_path / "graph.jsonl"
    graph = g.load(target)
    assert not graph.exists and graph.entities == [] and graph.read_findings() == []
    g.commit(target, graph, g.CreateEntity("first", "note", ("hello",)), session=graph_session)
    assert target.read_bytes() == b'{"type":"entity","name":"first","entityType":"note","observations":["hello"]}\n'


# -- the server's form ---------------------------------------------------------------------------

def test_new_lines_are_in_the_servers_form() -> None:
    record = g.Entity("Zoë [/] \"q\" \\ \u2028", "тип", ("line\nbreak\ttab\x01", "emoji 🧭"))
    raw = g.entity_line(record)
    text = raw.decode("utf-8")
    # JSON.stringify: compact, key order type,name,entityType,observations, no ASCII escaping
    assert text.startswith('{"type":"entity","name":"Zoë [/] \\"q\\" \\\\ \u2028","entityType":"тип",')
    assert '"line\\nbreak\\ttab\\u0001"' in text and "🧭" in text
    assert list(json.loads(text)) == ["type", "name", "entityType", "observations"]
    lone = g.server_json({"x": "a\ud800b"})
    assert lone == b'{"x":"a\\ud800b"}'
    assert list(json.loads(g.relation_line(g.Relation("a", "b", "r")))) == ["type", "from", "to", "relationType"]


def test_edited_line_keeps_its_extra_keys_after_the_known_ones() -> None:
    data = _graph_bytes(E("a", obs=["x"], createdAt="2025-01-01", version=1), R("a", "a", createdAt="c"))
    change = g.AddObservation("a", "y").apply(g.loads(data))
    first = change.graph.to_bytes().split(b"\n")[0]
    obj = json.loads(first)
    assert list(obj) == ["type", "name", "entityType", "observations", "createdAt", "version"]
    assert obj["observations"] == ["x", "y"] and obj["createdAt"] == "2025-01-01"
    renamed = g.RenameEntity("a", "b").apply(g.loads(data)).graph.to_bytes().split(b"\n")[1]
    assert json.loads(renamed) == {"type": "relation", "from": "b", "to": "b", "relationType": "uses", "createdAt": "c"}


# -- operations ----------------------------------------------------------------------------------

def _sample() -> g.Graph:
    return g.loads(_graph_bytes(
        E("alice", "Person", ["likes tea"]),
        {"type": "annotation", "note": "kept"},
        E("Alice ", "person", ["likes tea", "works at ACME"]),
        E("acme", "org", ["a company"]),
        E("bob", "people", ["plays chess"]),
        R("alice", "acme", "works_at"),
        R("Alice ", "acme", "works_at"),
        R("Alice ", "alice", "same_as"),
        R("bob", "Alice ", "knows"),
    ))


def test_merge_unites_observations_rewires_and_deduplicates_relations() -> None:
    before = _sample()
    change = g.MergeEntities(("Alice ",), "alice").apply(before)
    after = change.graph
    assert [e.name for e in after.entities] == ["alice", "acme", "bob"]
    assert after.entity("alice").observations == ("likes tea", "works at ACME", "alias: Alice ")
    assert [r.triple for r in after.relations] == [("alice", "acme", "works_at"), ("bob", "alice", "knows")]
    assert any("duplicate" in n for n in change.notes) and any("between merged" in n for n in change.notes)
    assert any("'person'" in n for n in change.notes)
    assert b'"annotation"' in after.to_bytes()  # unknown record kept
    assert len(before.entities) == 4  # pure: the input graph is unchanged


def test_merge_of_same_name_duplicates() -> None:
    graph = g.loads(_graph_bytes(E("x", obs=["a"]), E("y"), E("x", obs=["b", "a"]), R("x", "y")))
    after = g.MergeEntities((), "x").apply(graph).graph
    assert [e.name for e in after.entities] == ["x", "y"]
    assert after.entity("x").observations == ("a", "b")
    assert len(after.relations) == 1


def test_rename_makes_relations_follow_and_refuses_a_taken_name() -> None:
    graph = _sample()
    after = g.RenameEntity("bob", "Robert").apply(graph).graph
    assert [r.triple for r in after.relations if "Robert" in r.triple] == [("Robert", "Alice ", "knows")]
    assert not after.find("bob")
    with pytest.raises(g.GraphEditError, match="merge"):
        g.RenameEntity("bob", "acme").apply(graph)
    with pytest.raises(g.GraphEditError, match="did you mean 'bob'"):
        g.RenameEntity("bobb", "x").apply(graph)
    with pytest.raises(g.GraphEditError, match="empty"):
        g.RenameEntity("bob", "  ").apply(graph)


def test_retype_across_variants_and_type_variants() -> None:
    graph = _sample()
    assert g.type_variants(graph, "PERSON") == ["Person", "people", "person"]
    change = g.Retype(tuple(g.type_variants(graph, "person")), "Person").apply(graph)
    assert {e.entity_type for e in change.graph.entities if e.name != "acme"} == {"Person"}
    assert "on 2 entities" in change.summary
    with pytest.raises(g.GraphEditError):
        g.Retype(("nope",), "x").apply(graph)


def test_observation_add_edit_delete() -> None:
    graph = _sample()
    added = g.AddObservation("bob", "likes go").apply(graph).graph
    assert added.entity("bob").observations == ("plays chess", "likes go")
    same = g.AddObservation("bob", "plays chess").apply(graph)
    assert not same.changed and same.graph is graph
    edited = g.EditObservation("bob", "plays chess", "plays go").apply(graph).graph
    assert edited.entity("bob").observations == ("plays go",)
    deleted = g.DeleteObservation("Alice ", "likes tea").apply(graph).graph
    assert deleted.entity("Alice ").observations == ("works at ACME",)
    with pytest.raises(g.GraphEditError):
        g.DeleteObservation("bob", "never said").apply(graph)
    with pytest.raises(g.GraphEditError, match="empty"):
        g.AddObservation("bob", "").apply(graph)


def test_relations_create_delete_and_entity_delete() -> None:
    graph = _sample()
    created = g.CreateRelation("bob", "acme", "visits").apply(graph).graph
    assert created.relations[-1].triple == ("bob", "acme", "visits")
    assert not g.CreateRelation("bob", "Alice ", "knows").apply(graph).changed
    with pytest.raises(g.GraphEditError):
        g.CreateRelation("bob", "nobody", "knows").apply(graph)
    assert g.CreateRelation("bob", "nobody", "knows", allow_dangling=True).apply(graph).changed
    removed = g.DeleteRelation("bob", "Alice ", "knows").apply(graph).graph
    assert ("bob", "Alice ", "knows") not in [r.triple for r in removed.relations]
    gone = g.DeleteEntity("Alice ").apply(graph).graph
    assert not gone.find("Alice ")
    assert [r.triple for r in gone.relations] == [("alice", "acme", "works_at")]


def test_new_entity_goes_after_the_last_entity_and_not_after_a_cut_off_line() -> None:
    data = _graph_bytes(E("a"), R("a", "a")) + b'{"type":"entity","name":"cut'
    graph = g.loads(data)
    out = g.CreateRelation("a", "a", "again").apply(graph).graph
    out = g.CreateEntity("b", "t").apply(out).graph
    lines = out.to_bytes().split(b"\n")
    assert [json.loads(x)["name"] if b'"entity"' in x and x.endswith(b"}") else x[:20] for x in lines[:2]] == ["a", "b"]
    assert lines[-2] == b'{"type":"entity","name":"cut' and lines[-1] == b""


def test_repair_splits_glued_records_and_returns_the_rest_for_a_backup(shared: Path) -> None:
    graph = g.load(shared / "bug-inputs" / "B15" / "memory.jsonl")
    change = g.Repair().apply(graph)
    repaired = change.graph
    assert not repaired.bom and repaired.bad_lines() == []
    assert {"dock-alpha", "dock-beta"} <= {e.name for e in repaired.entities}
    rejects = g.repair_rejects(graph)
    assert rejects.count(b"\n") == 4 and b"cargo-scan" in rejects and b"buoy-7" in rejects
    assert [f.code for f in repaired.read_findings()] == ["graph-record-unknown"]


# -- commit: no lost update ---------------------------------------------------------------------

def test_commit_reapplies_on_content_an_agent_changed(tmp_path: Path, graph_session) -> None:
    target = tmp_path / "graph.jsonl"
    target.write_bytes(_graph_bytes(E("a", obs=["one"]), E("b")))
    loaded = g.load(target)
    # an agent (the server) rewrites the file meanwhile: adds an observation, no final newline
    target.write_bytes(_graph_bytes(E("a", obs=["one", "two"]), E("b"), E("c"), final_newline=False))
    saved = g.commit(target, loaded, g.AddObservation("a", "three"), session=graph_session)
    assert saved.reapplied
    after = g.load(target)
    assert after.entity("a").observations == ("one", "two", "three")
    assert [e.name for e in after.entities] == ["a", "b", "c"]


def test_a_delete_that_would_take_a_relation_an_agent_added_meanwhile_is_refused(tmp_path: Path,
                                                                                  graph_session) -> None:
    """The question named 2 relations; an agent related a third while it was open; the delete,
    re-applied on the new file, deleted 3 and said so only afterwards."""
    target = tmp_path / "graph.jsonl"
    target.write_bytes(_graph_bytes(E("a"), E("b"), E("c"), R("a", "b", "uses"), R("c", "a", "feeds")))
    loaded = g.load(target)
    assert "2 relations" in g.DeleteEntity("a").apply(loaded).summary  # what the person confirms
    agent = _graph_bytes(E("a"), E("b"), E("c"), R("a", "b", "uses"), R("c", "a", "feeds"), R("b", "a", "knows"))
    target.write_bytes(agent)
    with pytest.raises(g.GraphConflictError, match="other than what was confirmed"):
        g.commit(target, loaded, g.DeleteEntity("a"), session=graph_session)
    assert target.read_bytes() == agent  # nothing written


def test_commit_refuses_with_a_diff_when_the_edit_no_longer_applies(tmp_path: Path, graph_session) -> None:
    target = tmp_path / "graph.jsonl"
    first = _graph_bytes(E("a", obs=["one"]), E("b"))
    target.write_bytes(first)
    loaded = g.load(target)
    theirs = _graph_bytes(E("b"))
    target.write_bytes(theirs)
    with pytest.raises(g.GraphConflictError) as info:
        g.commit(target, loaded, g.AddObservation("a", "three"), loaded_bytes=first, session=graph_session)
    assert "nothing was written" in str(info.value)
    assert '-{"type":"entity","name":"a"' in info.value.diff
    assert target.read_bytes() == theirs  # their update survives
    target.unlink()
    with pytest.raises(g.GraphConflictError, match="deleted"):
        g.commit(target, loaded, g.AddObservation("b", "x"), session=graph_session)
    assert not target.exists()


def test_commit_without_change_writes_nothing(tmp_path: Path, graph_session) -> None:
    target = tmp_path / "graph.jsonl"
    target.write_bytes(_graph_bytes(E("a", obs=["one"])))
    stamp = target.stat().st_mtime_ns
    saved = g.commit(target, g.load(target), g.AddObservation("a", "one"), session=graph_session)
    assert not saved.written and target.stat().st_mtime_ns == stamp


def test_failed_write_leaves_the_file_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, graph_session) -> None:
    target = tmp_path / "graph.jsonl"
    data = _graph_bytes(E("a"))
    target.write_bytes(data)

    def broken(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken)  # the new file cannot be made durable: nothing is installed
    with pytest.raises(OSError):
        g.commit(target, g.load(target), g.AddObservation("a", "x"), session=graph_session)
    assert target.read_bytes() == data


def test_undo_restores_the_previous_bytes_unless_the_file_changed_since(tmp_path: Path, graph_session) -> None:
    target = tmp_path / "graph.jsonl"
    original = _graph_bytes(E("a", obs=["one"]), final_newline=False)
    target.write_bytes(original)
    before = g.load(target)
    saved = g.commit(target, before, g.AddObservation("a", "two"), session=graph_session)
    g.commit(target, saved.graph, g.Restore(before, saved.graph.source_sha256), session=graph_session)
    assert target.read_bytes() == original + b"\n"  # the records put back; memtui's write ends with a line end
    saved = g.commit(target, g.load(target), g.AddObservation("a", "two"), session=graph_session)
    target.write_bytes(target.read_bytes() + b"\n")  # an agent touched it
    with pytest.raises(g.GraphConflictError):
        g.commit(target, saved.graph, g.Restore(before, saved.graph.source_sha256), session=graph_session)
    assert target.read_bytes().endswith(b"\n")


def test_import_merges_in_one_pass_as_entity_by_entity_would() -> None:
    """`graph import` of 20,000 entities once did not end in 10 minutes (each
    new entity re-indexed the whole graph); the one-pass import must give the same records."""
    import json as _json

    from memtui.core import graph as g

    base = (b'{"type":"entity","name":"A","entityType":"system","observations":["a1"]}\n'
            b'{"type":"relation","from":"A","to":"A2","relationType":"uses"}\n')
    graph = g.loads(base)
    incoming = (g.Entity("A", "system", ("a1", "a2")), g.Entity("B", "role", ("b1", "b1", "b2")),
                g.Entity("A", "system", ("a2", "a3")), g.Entity("B", "role", ("b3",)))
    relations = (g.Relation("A", "B", "owns"), g.Relation("A", "B", "owns"), g.Relation("A", "A2", "uses"))
    change = g.ImportRecords(incoming, relations).apply(graph)
    records = [_json.loads(line) for line in change.graph.to_bytes().decode().splitlines()]
    assert records == [
        {"type": "entity", "name": "A", "entityType": "system", "observations": ["a1", "a2", "a3"]},
        {"type": "entity", "name": "B", "entityType": "role", "observations": ["b1", "b2", "b3"]},
        {"type": "relation", "from": "A", "to": "A2", "relationType": "uses"},
        {"type": "relation", "from": "A", "to": "B", "relationType": "owns"},
    ]
    assert "1 new entity, observations for 1, 1 new relation" in change.summary
    with pytest.raises(g.GraphEditError):
        g.ImportRecords((g.Entity("C", " ", ()),), ()).apply(graph)


def test_memtuis_write_ends_with_a_line_end_so_an_agents_append_is_its_own_record(
        tmp_path: Path, graph_session) -> None:
    """A graph the server wrote (no final newline) is read and kept as it is; once memtui writes
    it, it ends with a line end, so an agent's `echo >>` adds a record instead of gluing one."""
    target = tmp_path / "graph.jsonl"
    target.write_bytes(_graph_bytes(E("a"), E("b"), final_newline=False))
    loaded = g.load(target)
    assert loaded.to_bytes() == target.read_bytes()  # read as written
    g.commit(target, loaded, g.AddObservation("a", "seen"), session=graph_session)
    assert target.read_bytes().endswith(b"}\n")
    with open(target, "ab") as agent:
        agent.write(_graph_bytes(E("c")))
    graph = g.load(target)
    assert [e.name for e in graph.entities] == ["a", "b", "c"] and graph.read_findings() == []


def test_records_glued_on_one_line_are_a_finding_and_kept() -> None:
    """The other side of the same fault: an append to a file with no final newline glues two
    records; that line is an error finding (never silently read as one record) and is kept."""
    data = _graph_bytes(E("a"), final_newline=False) + _graph_bytes(E("b"))
    graph = g.loads(data)
    found = [f for f in graph.read_findings() if f.code == "graph-line-malformed"]
    assert [f.line for f in found] == [1] and "glued" in found[0].message
    assert graph.to_bytes() == data
