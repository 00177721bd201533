"""The skills catalogue core: discovery, tolerant parsing, validation, shadowing, cascade,
index budget and minimal saves. Real inputs are read in place from ../shared."""

from __future__ import annotations

import hashlib

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from memtui.core.session import Session

from memtui.core.errors import ConflictError, ReadOnlyError
from memtui.core.findings import CODES, Severity
from memtui.core.skills import (
    DEFAULT_INDEX_BUDGET, build_index, check_name, index_line, load_catalogue, load_folder,
    save_skill_field, save_skill_text, scan_root, set_front_matter_field,
)
from memtui.core.workspace import Workspace


def codes(skill) -> set[str]:
    return {f.code for f in skill.findings}


def by_key(cat):
    return {s.key: s for s in cat.skills}


def write_skill(folder: Path, name: str | None, description: str | None, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {json.dumps(description)}")
    if extra:
        lines.append(extra)
    lines += ["---", "", f"# {name}", "", "Body."]
    path = folder / "SKILL.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# BOM and CRLF ------------------------------------------------------------------------

def test_bom_and_crlf_skills_all_four_parse_with_their_real_names(shared):
    cat = load_folder(shared / "bug-inputs" / "B18")
    skills = by_key(cat)
    assert set(skills) == {"bom-skill", "crlf-skill", "bom-crlf-skill", "lf-control"}
    for key, skill in skills.items():
        assert skill.name == key
        assert skill.description and not skill.description.startswith(("---", "\ufeff"))
        assert not skill.body.lstrip("\r\n").startswith(("---", "name:", "\ufeff"))
        assert skill.body.lstrip().startswith("#")
        assert skill.valid, [f.message for f in skill.findings]
    assert skills["bom-crlf-skill"].bom and skills["bom-crlf-skill"].crlf
    assert {"bom", "crlf"} <= codes(skills["bom-crlf-skill"])
    assert all(f.severity is Severity.INFO for f in skills["bom-crlf-skill"].findings)
    assert "bom" not in codes(skills["lf-control"])
    assert cat.count_line() == "4 skills: 4 valid, 0 with problems"


@pytest.fixture
def bom_crlf_skills(shared, tmp_path) -> Path:
    target = tmp_path / "B18"
    shutil.copytree(shared / "bug-inputs" / "B18", target)
    return target


@pytest.mark.parametrize("key, bom, crlf", [
    ("bom-crlf-skill", True, True), ("bom-skill", True, False),
    ("crlf-skill", False, True), ("lf-control", False, False)])
def test_saving_a_description_keeps_bom_and_line_ends(bom_crlf_skills, key, bom, crlf):
    skill = by_key(load_folder(bom_crlf_skills))[key]
    before = skill.skill_md.read_bytes()
    saved = save_skill_field(Session.open(bom_crlf_skills), skill, "description", "Use when a file came from Notepad: keep its bytes")
    after = skill.skill_md.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf---") == bom
    if crlf:
        assert after.count(b"\n") == after.count(b"\r\n")
    else:
        assert b"\r" not in after
    assert saved.description == "Use when a file came from Notepad: keep its bytes"
    assert saved.name == key and saved.valid
    # only the description line changed
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)) if a != b]
    assert len(changed) == 1 and new_lines[changed[0]].startswith(b"description: ")


def test_save_whole_text_from_an_lf_editor_keeps_crlf_and_bom(bom_crlf_skills):
    skill = by_key(load_folder(bom_crlf_skills))["bom-crlf-skill"]
    editor_text = skill.skill_md.read_text(encoding="utf-8-sig").replace("\r\n", "\n").replace(
        "Body text.", "Body text, edited.\nA second line.")
    save_skill_text(Session.open(bom_crlf_skills), skill, editor_text)
    data = skill.skill_md.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\r\n")
    assert data.count(b"\n") == data.count(b"\r\n")
    assert b"Body text, edited.\r\nA second line." in data


def test_a_saved_skill_ends_with_a_line_end_in_the_files_own_style(bom_crlf_skills):
    skill = by_key(load_folder(bom_crlf_skills))["bom-crlf-skill"]
    editor_text = skill.skill_md.read_text(encoding="utf-8-sig").replace("\r\n", "\n").rstrip("\n") + "\nLast line"
    save_skill_text(Session.open(bom_crlf_skills), skill, editor_text)
    assert skill.skill_md.read_bytes().endswith(b"\r\nLast line\r\n")


def test_save_refuses_when_the_file_changed_on_disk(bom_crlf_skills):
    skill = by_key(load_folder(bom_crlf_skills))["lf-control"]
    other = skill.skill_md.read_bytes().replace(b"Body text.", b"Someone else's edit.")
    skill.skill_md.write_bytes(other)
    with pytest.raises(ConflictError, match="changed on disk"):
        save_skill_field(Session.open(bom_crlf_skills), skill, "description", "Use when testing")
    assert skill.skill_md.read_bytes() == other


def test_a_skill_edit_is_one_guarded_write_with_an_audit_entry(bom_crlf_skills):
    """`skills set` once rewrote SKILL.md while another process held the lock, and
    left no audit entry. Now it waits for the lock like every write, and is recorded."""
    from memtui.core import lock
    from memtui.core.errors import BusyError

    skill = by_key(load_folder(bom_crlf_skills))["lf-control"]
    before = skill.skill_md.read_bytes()
    session = Session.open(bom_crlf_skills, wait=0.2)
    held = lock.acquire(bom_crlf_skills, "cli other")
    try:
        with pytest.raises(BusyError):
            save_skill_field(session, skill, "description", "Use when testing the lock")
    finally:
        held.release()
    assert skill.skill_md.read_bytes() == before and session.audit.entries() == []
    save_skill_field(session, skill, "description", "Use when testing the lock", client_id="k-1")
    [entry] = session.audit.entries()
    assert (entry.action, entry.target, entry.client_id) == ("skills.set", "skills/lf-control/SKILL.md", "k-1")
    assert entry.before == hashlib.sha256(before).hexdigest()
    assert entry.after == hashlib.sha256(skill.skill_md.read_bytes()).hexdigest()


def test_administrators_copy_is_read_only(tmp_path):
    write_skill(tmp_path / "shared-skills" / "report", "report", "Use when a report is due")
    skill = by_key(load_catalogue(Workspace.open(tmp_path)))["report"]
    before = skill.skill_md.read_bytes()
    with pytest.raises(ReadOnlyError, match="read-only"):
        save_skill_field(Session.open(tmp_path), skill, "description", "changed")
    assert skill.skill_md.read_bytes() == before


# invalid or unusual front matter -----------------------------------------------------

B19_EXPECTED = {
    "colon-in-description": ("front-matter-invalid", "description contains ': ' — put the text in quotes", 3),
    "tab-indent": ("front-matter-invalid", "tab used for indentation", 3),
    "unclosed-frontmatter": ("front-matter-unclosed", "front matter is never closed", 1),
    "empty-frontmatter": ("skill-no-name", "name is missing", 1),
    "no-frontmatter": ("skill-no-front-matter", "no front matter: name and description missing", 1),
    "duplicate-keys": ("skill-duplicate-key", "name is given twice (second value used)", 4),
    "list-description": ("skill-bad-field-type", "description is a list, expected text", 3),
}


def test_unusual_front_matter_all_eight_appear_seven_with_plain_word_problems(shared):
    cat = load_folder(shared / "bug-inputs" / "B19")
    skills = by_key(cat)
    assert len(skills) == 8
    assert cat.count_line() == "8 skills: 1 valid, 7 with problems"
    assert skills["valid-control"].valid
    assert skills["valid-control"].description == "A valid skill: quoted, so the colon is fine"
    for key, (code, words, line) in B19_EXPECTED.items():
        skill = skills[key]
        assert skill.has_problems, key
        match = [f for f in skill.findings if f.code == code]
        assert match, (key, [f.code for f in skill.findings])
        assert words in match[0].message
        assert match[0].line == line
        assert match[0].path == f"skills/{key}/SKILL.md"
        assert "Error" not in match[0].message  # no exception class names, plain words
    colon = [f for f in skills["colon-in-description"].findings if f.code == "front-matter-invalid"][0]
    assert colon.column is not None
    assert skills["duplicate-keys"].name == "duplicate-keys-second"


def test_fixing_the_colon_by_saving_the_description_keeps_everything_else(shared, tmp_path):
    shutil.copytree(shared / "bug-inputs" / "B19", tmp_path / "B19")
    skill = by_key(load_folder(tmp_path / "B19"))["colon-in-description"]
    before = skill.skill_md.read_text(encoding="utf-8")
    fixed = save_skill_field(
        Session.open(tmp_path / "B19"), skill, "description", "Use this skill when: the nightly job fails and the on-call channel is quiet")
    after = skill.skill_md.read_text(encoding="utf-8")
    assert fixed.valid and fixed.name == "colon-in-description"
    assert fixed.description.startswith("Use this skill when: the nightly job")
    assert after.split("---", 2)[2] == before.split("---", 2)[2]  # body untouched


def test_looking_never_writes(shared):
    folder = shared / "bug-inputs" / "B19"
    stamps = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.rglob("SKILL.md")}
    cat = load_folder(folder)
    build_index(cat)
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.rglob("SKILL.md")} == stamps


# typed values ------------------------------------------------------------------------

def test_typed_yaml_values_are_kept_as_written_and_json_safe(shared):
    cat = load_folder(shared / "bug-inputs" / "B03")
    skills = by_key(cat)
    assert len(skills) == 4
    typed = skills["typed-values"]
    assert typed.name == "2024" and typed.description == "yes"
    assert typed.front_matter["version"] == "1.10"
    messages = [f.message for f in typed.findings if f.code == "skill-bad-field-type"]
    assert any(m.startswith("name is a number") for m in messages)
    assert any(m.startswith("description is a boolean") for m in messages)
    dated = skills["dated-skill"].front_matter
    assert dated["created"] == "2024-05-01" and dated["updated"] == "2024-06-12T08:45:00"
    nested = skills["nested-metadata"].front_matter["metadata"]
    assert nested["window"]["start"] == "22:00" and nested["checksum"] == "0x1F"
    # plain json (no json_safe) must work: values are the author's text
    text = json.dumps([s.to_json() for s in cat.skills])
    assert "2024-05-01" in text and skills["plain-skill"].valid


# --- The real corpus --------------------------------------------------------------------------

def corpus_notes(shared) -> dict[str, str]:
    with open(shared / "corpus" / "MANIFEST.tsv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return {r["relative_path"]: r["notes"] for r in rows
            if r["relative_path"].startswith("skills/") and r["relative_path"].endswith("/SKILL.md")
            and r["notes"].startswith(("MALFORMED", "UNUSUAL"))}


#: MANIFEST note words → the finding codes memtui must give.
NOTE_CODES = [
    ("no YAML frontmatter", {"skill-no-front-matter"}),
    ("invalid YAML", {"front-matter-invalid"}),
    ("makes YAML invalid", {"front-matter-invalid"}),
    ("lacks name", {"skill-no-name"}),
    ("uppercase and spaces", {"skill-name-invalid", "skill-name-upload-pattern", "skill-name-mismatch"}),
    ("start with '-'", {"skill-name-invalid", "skill-name-upload-pattern"}),
    ("underscore in name", {"skill-name-invalid"}),
    ("over the 1,024 limit", {"skill-description-length"}),
    ("extra key", {"skill-unknown-key"}),
    ("extra keys", {"skill-unknown-key"}),
]


@pytest.fixture(scope="module")
def corpus_cat(shared):
    return load_folder(shared / "corpus" / "skills")


def test_every_corpus_skill_is_catalogued(shared, corpus_cat):
    on_disk = sorted(p.relative_to(shared / "corpus" / "skills").as_posix()
                     for p in (shared / "corpus" / "skills").rglob("SKILL.md"))
    assert sorted(s.path for s in corpus_cat.skills) == on_disk
    assert len(corpus_cat.roots) == len([p for p in (shared / "corpus" / "skills").iterdir() if p.is_dir()])


def test_every_flagged_corpus_skill_gets_its_finding(shared, corpus_cat):
    notes = corpus_notes(shared)
    assert len(notes) >= 10
    paths = {s.path: s for s in corpus_cat.skills}
    checked = 0
    for relative, note in notes.items():
        skill = paths[relative.removeprefix("skills/")]
        for words, expected in NOTE_CODES:
            if words in note:
                assert expected <= codes(skill), (relative, note, codes(skill))
                checked += 1
        if "nested SKILL.md" in note:
            children = [s for s in corpus_cat.skills if s.nested_in and s.path.startswith(skill.path.rsplit("/", 1)[0] + "/")]
            assert len(children) == 8 and all("skill-nested" in codes(c) for c in children)
            assert all(c.name != c.key for c in children)  # "sub-skill names differ from folders"
            assert all("skill-name-mismatch" in codes(c) for c in children)
            checked += 1
        assert skill.has_problems or "hidden folder" in note or "CRLF" in note or "nested" in note, relative
    assert checked >= 10


def test_corpus_named_cases(corpus_cat):
    paths = {s.path: s for s in corpus_cat.skills}
    api = paths["anthropics__skills/claude-api/SKILL.md"]
    assert len(api.description) == 1068 and "skill-description-length" in codes(api)
    assert "\n" not in index_line(api).rstrip("\n")
    template = paths["anthropics__skills/template/SKILL.md"]
    assert template.name == "template-skill" and "skill-name-mismatch" in codes(template)
    geo = paths["K-Dense-AI__claude-scientific-skills/geomaster/SKILL.md"]
    assert geo.crlf and geo.name == "geomaster" and geo.valid and geo.description
    risk = paths["ComposioHQ__awesome-claude-skills/-21risk-automation/SKILL.md"]
    spec_msg = [f.message for f in risk.findings if f.code == "skill-name-invalid"][0]
    assert "starts with a hyphen" in spec_msg and "breaks the platform's upload pattern too" in spec_msg
    under = paths["ComposioHQ__awesome-claude-skills/anthropic_administrator-automation/SKILL.md"]
    msg = [f.message for f in under.findings if f.code == "skill-name-invalid"][0]
    assert "underscore" in msg and "the platform's upload pattern accepts it" in msg
    assert "skill-name-upload-pattern" not in codes(under)
    creators = [s for s in corpus_cat.skills if s.key == "skill-creator"]
    assert len(creators) == 2 and all("skill-name-duplicate" in codes(s) for s in creators)


def test_scan_root_on_one_collection(shared):
    root = shared / "corpus" / "skills" / "github__awesome-copilot"
    skills = scan_root(root, "copilot")
    top = [s for s in skills if s.nested_in is None]
    assert [s.key for s in top] == ["qdrant-scaling"]
    deep = [s for s in skills if "horizontal-scaling" in s.path][0]
    assert deep.nested_in == "qdrant-scaling/scaling-data-volume/SKILL.md"
    assert all(s.root == "copilot" for s in skills)


# --- name rules -------------------------------------------------------------------------------

@pytest.mark.parametrize("name, spec_breaks, upload_breaks", [
    ("pdf-tools", False, False),
    ("my_skill", True, False),         # seed 002 allows _, Agent Skills does not
    ("v1.2", True, False),             # seed 002 allows ., Agent Skills does not
    ("-lead", True, True),
    ("trail-", True, False),
    ("double--hyphen", True, False),
    ("Upper", True, True),
    ("a" * 65, True, True),
    ("", True, True),
])
def test_check_name_says_which_rule_breaks(name, spec_breaks, upload_breaks):
    spec, upload = check_name(name)
    assert bool(spec) == spec_breaks and bool(upload) == upload_breaks


def test_reserved_name_in_agent_root_is_an_error(tmp_path):
    write_skill(tmp_path / "skills" / "shared-content", "shared-content", "Use when sharing files")
    skill = by_key(load_catalogue(Workspace.open(tmp_path)))["shared-content"]
    found = [f for f in skill.findings if f.code == "skill-name-reserved"]
    assert found and found[0].severity is Severity.ERROR and "reserved" in found[0].message
    assert found[0].reference == "seed 002"


def test_description_quality_hint(tmp_path):
    write_skill(tmp_path / "skills" / "files", "files", "File utilities")
    write_skill(tmp_path / "skills" / "export", "export", "Use when the user asks for a file exported or sent")
    skills = by_key(load_catalogue(Workspace.open(tmp_path)))
    assert "skill-description-vague" in codes(skills["files"])
    assert "skill-description-vague" not in codes(skills["export"])
    assert skills["files"].valid  # a hint, not a problem


def test_agent_skills_keys_and_lengths(tmp_path):
    write_skill(tmp_path / "skills" / "k", "k", "Use when testing " + "x" * 1100,
                extra="compatibility: " + "y" * 501 + "\nrequires: rube")
    skill = by_key(load_catalogue(Workspace.open(tmp_path)))["k"]
    assert {"skill-description-length", "skill-compatibility-length", "skill-unknown-key"} <= codes(skill)
    assert "requires" in [f for f in skill.findings if f.code == "skill-unknown-key"][0].message


# --- shadowing and the cascade ----------------------------------------------------------------

def test_administrators_copy_wins_and_the_shadowed_copy_stays_listed(tmp_path):
    write_skill(tmp_path / "skills" / "report", "report", "Use when mine")
    write_skill(tmp_path / "shared-skills" / "report", "report", "Use when the admin's")
    write_skill(tmp_path / "skills" / "own", "own", "Use when only mine")
    cat = load_catalogue(Workspace.open(tmp_path))
    mine = [s for s in cat.skills if s.root == "skills" and s.key == "report"][0]
    admin = [s for s in cat.skills if s.root == "shared-skills"][0]
    assert mine.shadowed_by == admin.path == "shared-skills/report/SKILL.md"
    assert "skill-shadowed" in codes(mine) and mine.valid  # shown, marked, not a problem
    index = build_index(cat)
    assert [s.path for s, _ in index.lines] == ["skills/own/SKILL.md", "shared-skills/report/SKILL.md"]
    assert (mine, "shadowed by shared-skills/report/SKILL.md") in index.left_out


def test_cascade_later_scope_wins_without_mounted_root(tmp_path):
    d = tmp_path / "shared-skills.d"
    write_skill(d / "tenant" / "report", "report", "Use when tenant")
    write_skill(d / "subscription-agent" / "report", "report", "Use when subscription-agent")
    write_skill(d / "tenant-agent" / "only-here", "only-here", "Use when tenant-agent")
    write_skill(tmp_path / "skills" / "report", "report", "Use when mine")
    cat = load_catalogue(Workspace.open(tmp_path))
    tenant = [s for s in cat.skills if s.scope == "tenant"][0]
    winner = [s for s in cat.skills if s.scope == "subscription-agent"][0]
    mine = [s for s in cat.skills if s.root == "skills"][0]
    assert tenant.shadowed_by == winner.path and "skill-scope-overridden" in codes(tenant)
    assert mine.shadowed_by == winner.path
    index = build_index(cat)
    assert {s.description for s, _ in index.lines} == {"Use when subscription-agent", "Use when tenant-agent"}


def test_cascade_names_the_scope_of_each_mounted_skill_and_mismatches(tmp_path):
    d = tmp_path / "shared-skills.d"
    write_skill(d / "tenant" / "report", "report", "Use when tenant")
    write_skill(d / "subscription" / "report", "report", "Use when subscription")
    write_skill(d / "tenant" / "lost", "lost", "Use when never mounted")
    write_skill(tmp_path / "shared-skills" / "report", "report", "Use when subscription")
    write_skill(tmp_path / "shared-skills" / "stray", "stray", "Use when from nowhere")
    cat = load_catalogue(Workspace.open(tmp_path))
    mounted = {s.key: s for s in cat.skills if s.root == "shared-skills"}
    assert mounted["report"].scope == "subscription"
    mismatch = [f for f in cat.findings if f.code == "skill-cascade-mismatch"]
    assert {f.path for f in mismatch} == {"shared-skills/stray/SKILL.md", "shared-skills.d/tenant/lost/SKILL.md"}
    index = build_index(cat)
    assert sorted(s.path for s, _ in index.lines) == ["shared-skills/report/SKILL.md", "shared-skills/stray/SKILL.md"]


# --- the index and its budget -----------------------------------------------------------------

def test_index_budget_cuts_and_names_what_it_cut(tmp_path):
    for i in range(30):
        write_skill(tmp_path / "skills" / f"s{i:02d}", f"s{i:02d}", "Use when " + "word " * 60)
    cat = load_catalogue(Workspace.open(tmp_path))
    full = build_index(cat, budget=10**9)
    assert full.size == full.full_size and not full.cut
    assert full.text.count("\n") == 30
    index = build_index(cat)  # default 8 KiB
    assert index.budget == DEFAULT_INDEX_BUDGET == 8192
    assert index.size <= 8192 < full.full_size
    assert index.cut and len(index.lines) + len(index.cut) == 30
    assert index.size + sum(len(ln.encode()) for _, ln in index.cut) == full.full_size
    assert [s.key for s, _ in index.cut] == [f"s{i:02d}" for i in range(len(index.lines), 30)]
    assert build_index(cat, budget=0).lines == []
    with pytest.raises(ValueError):
        build_index(cat, budget=-1)


def test_index_line_is_one_line_with_name_description_and_path(tmp_path):
    write_skill(tmp_path / "skills" / "x", "x", "Use when\nthe  user asks")
    skill = by_key(load_catalogue(Workspace.open(tmp_path)))["x"]
    assert index_line(skill) == "- x: Use when the user asks (skills/x/SKILL.md)\n"


def test_corpus_index_leaves_out_broken_and_nested_skills_by_name(corpus_cat):
    index = build_index(corpus_cat)
    listed = {s.path for s, _ in index.lines} | {s.path for s, _ in index.cut}
    left = {s.path: why for s, why in index.left_out}
    assert "oracle__skills/fusion/SKILL.md" in left
    assert any("nested inside" in why for why in left.values())
    assert not listed & set(left)
    assert len(listed) + len(left) == len(corpus_cat.skills)
    assert index.cut  # the corpus index is larger than 8 KiB, and the cut is named


# --- scanning never stops ---------------------------------------------------------------------

def test_binary_and_linked_out_skills_appear_with_findings(tmp_path):
    (tmp_path / "skills" / "binary").mkdir(parents=True)
    (tmp_path / "skills" / "binary" / "SKILL.md").write_bytes(b"---\x00\x01\x02")
    outside = tmp_path / "outside"
    write_skill(outside / "evil", "evil", "Use when leaving")
    ws_root = tmp_path / "ws"
    (ws_root / "skills").mkdir(parents=True)
    shutil.move(str(tmp_path / "skills" / "binary"), ws_root / "skills" / "binary")
    os.symlink(outside / "evil", ws_root / "skills" / "evil")
    write_skill(ws_root / "skills" / "fine", "fine", "Use when fine")
    cat = load_catalogue(Workspace.open(ws_root))
    skills = by_key(cat)
    assert set(skills) == {"binary", "evil", "fine"}
    assert "not-utf8" in codes(skills["binary"])
    assert "symlink-outside" in codes(skills["evil"]) and skills["evil"].description is None
    assert skills["fine"].valid


def test_new_codes_are_registered():
    for code in ("skill-scope-overridden", "skill-cascade-mismatch", "skill-name-duplicate"):
        assert code in CODES


def test_set_front_matter_field_edits_only_that_key():
    text = "---\nname: a\ndescription: |\n  two\n  lines\nlicense: MIT\n---\nbody\n"
    out = set_front_matter_field(text, "description", "yes")
    assert out == '---\nname: a\ndescription: "yes"\nlicense: MIT\n---\nbody\n'
    added = set_front_matter_field("---\nname: a\n---\n", "description", "Use when x")
    assert added == "---\nname: a\ndescription: Use when x\n---\n"
    for bad in ("no front matter\n", "---\nname: a\n", "---\nname: a\nname: b\n---\n"):
        with pytest.raises(ValueError):
            set_front_matter_field(bad, "name", "c")


def test_audit_includes_skill_findings(sample_copy):
    from memtui.core import audit

    report = audit.run(Workspace.open(sample_copy))
    skill_findings = [f for f in report.findings if f.path.startswith(("skills/", "shared-skills/"))]
    assert {f.code for f in skill_findings} >= {"skill-name-invalid", "skill-no-description", "skill-shadowed"}


def test_audit_of_a_plain_tree_reports_no_skills(shared):
    from memtui.core.skills import audit_findings

    assert audit_findings(Workspace.open(shared / "corpus" / "agents-trees" / "PrefectHQ__prefect")) == []
