"""Bad input of every class a new user met is a finding with a place and a fix, never a crash
(DESIGN.md invariant 10): deep nesting, impossible dates, alias
bombs, a second front matter block, names that are not UTF-8, a killed writer's temp files.
Each class is fixed where the input is read, so each test feeds several members of it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core import atomic, audit, frontmatter, jsonio
from memtui.core import graph as g
from memtui.core.config import load as load_config
from memtui.core.session import Session
from memtui.core.store import Store
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace
from tests.conftest import SAMPLE, REPO

DEEP = "[" * 1000 + "]" * 1000


def _ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root, symlinks=True)
    return root


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "-w", str(root)], capture_output=True,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)


def _codes(report) -> set[str]:  # noqa: ANN001
    return {f.code for f in report.findings}


# -- JSON: nesting, NaN, huge numbers (item 4) ----------------------------------------------------------

@pytest.mark.parametrize("text", [DEEP, '{"a":' * 500 + "1" + "}" * 500, "[" * 101 + "]" * 101])
def test_json_nested_too_deep_is_a_plain_error(text: str) -> None:
    with pytest.raises(jsonio.JSONError, match="levels deep"):
        jsonio.loads(text)
    assert jsonio.loads("[" * 100 + "]" * 100) is not None, "the bound itself is read"
    assert jsonio.loads('["' + "[" * 500 + '"]') == ["[" * 500], "brackets inside strings do not count"


def test_json_depth_is_the_deepest_branch_of_a_wide_value_and_is_named() -> None:
    """The bound is checked on the decoded value: a deep branch after thousands of shallow ones,
    inside an object, is found, and the sentence names its depth, as a text scan did."""
    shallow = ",".join(['{"name": "x", "observations": ["a", "b"]}'] * 5000)
    deep = "[" * 120 + "]" * 120
    with pytest.raises(jsonio.JSONError, match="nested 122 levels deep") as caught:
        jsonio.loads('{"entities": [' + shallow + "," + deep + "]}")
    assert caught.value.depth == 122
    assert len(jsonio.loads('{"entities": [' + shallow + "]}")["entities"]) == 5000
    with pytest.raises(jsonio.JSONError, match="nested 150 levels deep"):  # one value of a longer text
        jsonio.decode('1 ' + "[" * 150 + "]" * 150 + " 2", 2)
    with pytest.raises(jsonio.JSONError, match="nested 3,000 levels deep"):  # unterminated, past the decoder's guard
        jsonio.loads("[" * 3000)


@pytest.mark.parametrize("text", ['{"a": NaN}', "[Infinity]", "-Infinity", "1" * 5000])
def test_json_specials_are_plain_errors(text: str) -> None:
    with pytest.raises(jsonio.JSONError) as caught:
        jsonio.loads(text)
    assert isinstance(caught.value, ValueError) and str(caught.value)


def test_a_deep_graph_line_is_a_finding_and_every_graph_command_works(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    graph = root / "memory" / "graph.jsonl"
    before = graph.read_bytes()
    bad = ('{"type":"entity","name":"deep","entityType":"x","observations":[],"x":' + DEEP + '}').encode()
    graph.write_bytes(before + b"\n" + bad + b"\n" + b'{"type":"relation","from":"a","to":"b","relationType":'
                      + b"[" * 600 + b"]" * 600 + b"}\n")
    loaded = g.load(graph, "memory/graph.jsonl")
    problems = [f for f in loaded.read_findings() if f.code == "graph-line-malformed"]
    assert [f.line for f in problems] == [len(before.split(b"\n")) + 1, len(before.split(b"\n")) + 2]
    assert "levels deep" in problems[0].message
    for args in (["graph", "check", "--no-fuzzy"], ["graph", "entities"], ["graph", "show", "RouteCore"],
                 ["graph", "export"], ["audit"]):
        done = _cli(root, *args)
        assert done.returncode in (0, 1), (args, done.stderr.decode()[-400:])
        assert b"Traceback" not in done.stderr
    done = _cli(root, "graph", "add-observation", "RouteCore", "after the deep line")
    assert done.returncode == 0, done.stderr
    assert bad in graph.read_bytes(), "the bad line is kept byte for byte"


def test_a_store_nested_too_deep_is_damaged_and_read_only(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    (root / ".memtui" / "store.json").write_text('{"audit": {"1": {"x": ' + DEEP + "}}}")
    store = Store.open(Workspace.open(root))
    assert store.damaged and "levels deep" in store.reason
    with Session.open(root) as session:
        assert session.read_only


def test_a_config_nested_too_deep_gives_defaults_and_a_finding(tmp_path: Path) -> None:
    path = tmp_path / "memtui.toml"
    path.write_text("a = " + DEEP + "\n")
    config, findings = load_config(path)
    assert [f.code for f in findings] == ["config-invalid"] and "nested" in findings[0].message
    assert config.max_file_bytes > 0


# -- YAML front matter: values that cannot be built, bombs, loops (items 5, 7) ------------------------

@pytest.mark.parametrize("value", ["2024-13-45", "2024-02-30", "2023-02-29", "2024-01-01 25:00:00", "0000-01-01",
                                   "!!int abc", "!!float x", "!!timestamp nope", "1" * 5000])
def test_a_value_that_cannot_be_built_is_an_error_with_its_line(value: str) -> None:
    fm = frontmatter.split(f"---\ntitle: A\ndate: {value}\n---\nbody\n")
    assert fm.error and fm.error_line == 3, fm.error
    assert "quotes" in fm.error and fm.body == "body\n"


def _bomb(levels: int = 9) -> str:
    lines = ["name: bomb-skill", "description: Use when testing", "l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\n---\nbody\n"


@pytest.mark.parametrize("text", [_bomb(), _bomb(5), "---\na: &a [*a]\n---\n", "---\na: &a {k: *a}\n---\n",
                                  "---\nbase: &b {" + ", ".join(f"k{i}: {i}" for i in range(200)) + "}\n"
                                  + "".join(f"m{i}: *b\n" for i in range(60)) + "---\n"])
def test_aliases_that_loop_or_explode_are_an_error(text: str) -> None:
    fm = frontmatter.split(text)
    assert fm.error and ("alias" in fm.error), fm.error
    assert fm.meta == {}


def test_more_values_than_the_bound_without_an_alias_are_an_error_too() -> None:
    """The walk that counts values is left out only for a block too short to reach the bound."""
    fm = frontmatter.split("---\nitems: [" + ", ".join(["1"] * frontmatter.MAX_VALUES) + "]\n---\n")
    assert fm.error and "values" in fm.error and fm.meta == {}
    short = "---\n" + "\n".join(["?"] * ((frontmatter.MAX_VALUES - 1) // 6)) + "\n---\n"
    assert frontmatter.split(short).error is None


def test_a_few_aliases_are_fine() -> None:
    fm = frontmatter.split("---\ntags: &t [a, b]\nalso: *t\n---\n")
    assert fm.error is None and fm.meta == {"tags": ["a", "b"], "also": ["a", "b"]}


def test_an_alias_bomb_skill_is_listed_small_and_fast(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    (root / "skills" / "bomb-skill").mkdir()
    (root / "skills" / "bomb-skill" / "SKILL.md").write_text(_bomb())
    assert (root / "skills" / "bomb-skill" / "SKILL.md").stat().st_size < 1500
    done = _cli(root, "skills", "list", "--json")
    assert done.returncode in (0, 1), done.stderr
    assert len(done.stdout) < 200_000
    data = json.loads(done.stdout)
    [bomb] = [s for s in data["skills"] if s["path"] == "skills/bomb-skill/SKILL.md"]
    assert any("alias" in f["message"] for f in bomb["findings"])


def test_an_impossible_date_in_articles_is_a_finding_in_the_audit(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    article = root / "memory" / "support" / "triage-checklist.md"
    article.write_text(article.read_text().replace("---\n", "---\nverified_at: 2024-13-45\n", 1))
    report = audit.run(Workspace.open(root), use_cache=False)
    [found] = [f for f in report.findings if f.path == "memory/support/triage-checklist.md"
               and f.code == "front-matter-invalid"]
    assert found.line == 2 and "not a real date" in found.message and found.fix


# -- a second front matter block (item 11) --------------------------------------------------------

@pytest.mark.parametrize("text,line", [
    ("---\n---\ntitle: Real\nsummary: s\n---\nbody\n", 3),
    ("---\ntitle: stub\n---\n---\ntitle: Real\nsummary: s\n---\nbody\n", 4),
    ("---\ntitle: stub\n---\n\n---\ntitle: Real\n---\n", 5),
])
def test_a_second_block_is_found(text: str, line: int) -> None:
    fm = frontmatter.split(text)
    assert fm.second_block_line == line and "title" in fm.second_block_keys
    finding = fm.second_block_finding("x.md")
    assert finding is not None and finding.code == "front-matter-second-block" and finding.line == line


@pytest.mark.parametrize("text", ["---\ntitle: A\n---\n\n---\n\nSome prose after a rule.\n\n---\n",
                                  "---\ntitle: A\n---\nintro\n---\nnot: front matter\n", "---\n---\n# Heading\n"])
def test_a_thematic_break_is_not_a_second_block(text: str) -> None:
    assert frontmatter.split(text).second_block_line is None


def test_a_second_block_is_a_finding_and_edits_refuse_it(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    skill = root / "skills" / "parcel-utils" / "SKILL.md"
    text = "---\n---\nname: parcel-utils\ndescription: Use when a parcel helper is needed\n---\nbody\n"
    skill.write_text(text)
    article = root / "memory" / "support" / "triage-checklist.md"
    article.write_text("---\n---\n" + article.read_text().split("---\n", 1)[1])
    report = audit.run(Workspace.open(root), use_cache=False)
    places = {(f.path, f.line) for f in report.findings if f.code == "front-matter-second-block"}
    assert {("skills/parcel-utils/SKILL.md", 3), ("memory/support/triage-checklist.md", 3)} <= places
    done = _cli(root, "skills", "set", "parcel-utils", "description", "Use when something else")
    assert done.returncode == 1 and b"second front matter block" in done.stderr
    assert skill.read_text() == text, "nothing written into the stub block"


# -- names that are not UTF-8 (item 6) --------------------------------------------------------------

def _odd_names(root: Path) -> None:
    support = os.fsencode(root / "memory" / "support")
    with open(os.path.join(support, b"bokm\xe5l.md"), "w") as handle:
        handle.write("---\ntitle: Bokm\u00e5l\n---\nparcel\n")
    os.mkdir(os.path.join(support, b"dir\xfe"))
    with open(os.path.join(support, b"dir\xfe", b"AGENTS.md"), "w") as handle:
        handle.write("# Odd\n- [A](a.md) — a\n")
    os.makedirs(os.path.join(os.fsencode(root / "skills"), b"sk\xffill"))
    with open(os.path.join(os.fsencode(root / "skills"), b"sk\xffill", b"SKILL.md"), "w") as handle:
        handle.write("---\nname: skill\ndescription: Use when odd\n---\n")


def test_names_that_are_not_utf8_are_findings_and_left_out(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    _odd_names(root)
    ws = Workspace.open(root)
    tree = MemoryTree(ws)
    assert all(p.encode("utf-8") for p in tree.article_files("support"))
    assert "support/dir\udcfe" not in [c for c, _ in tree.children("support")]
    report = audit.run(ws, use_cache=False)
    odd = {f.path: f for f in report.findings if f.code == "name-not-utf8"}
    assert set(odd) == {"memory/support/bokm\\xe5l.md", "memory/support/dir\\xfe", "skills/sk\\xffill"}
    assert "0xE5" in odd["memory/support/bokm\\xe5l.md"].message
    assert "mv $'memory/support/bokm\\xe5l.md'" in odd["memory/support/bokm\\xe5l.md"].fix
    for args in (["audit", "--json"], ["skills", "list", "--json"], ["boot", "support"], ["graph", "check"]):
        done = _cli(root, *args)
        assert done.returncode in (0, 1) and b"Traceback" not in done.stderr, (args, done.stderr[-300:])
        done.stdout.decode("utf-8")  # valid UTF-8 output


# -- a killed writer's temp files (item 3) -----------------------------------------------------------

def test_leftover_temp_files_are_findings_skipped_by_backups_and_swept_by_the_next_write(tmp_path: Path) -> None:
    from memtui.core.backup.render import render

    root = _ws(tmp_path)
    leftovers = [root / "skills" / "parcel-utils" / ".SKILL.md.k3j_9x0a.tmp",
                 root / "memory" / "support" / "experience" / ".exp-001-cod-double-settlement.md.abcd1234.tmp",
                 root / "memory" / ".MEMORY_CUSTOM.md.zz99yy88.tmp"]
    for path in leftovers:
        path.write_bytes(b"half a write")
    (root / "memory" / ".notes.tmp").write_bytes(b"a user's own file")  # not memtui's pattern
    ws = Workspace.open(root)
    report = audit.run(ws, use_cache=False)
    found = sorted(f.path for f in report.findings if f.code == "temp-file-leftover")
    assert found == sorted(ws.shown(p) for p in leftovers)
    tree = render(root)
    names = [os.fsdecode(k) for k in tree.files]
    assert not any(".tmp" in n and "notes.tmp" not in n for n in names), "backups leave leftovers out"
    assert any(n.endswith(".notes.tmp") for n in names), "a user's own .tmp file is backed up"
    with Session.open(root) as session:
        session.write("notes.set", "memory/MEMORY_CUSTOM.md",
                      lambda tx: tx.replace("memory/MEMORY_CUSTOM.md", b"swept\n", base=tx.sha("memory/MEMORY_CUSTOM.md")))
    assert not leftovers[2].exists(), "the write of MEMORY_CUSTOM.md swept its own leftover"
    assert atomic.is_leftover(leftovers[0].name) and not atomic.is_leftover(".notes.tmp")


# -- a damaged store, a .memtui leading outside (item 13) -----------------------------------------------

@pytest.mark.parametrize("damage", [b'{"audit": {"1": {"x": 1}', b"\x00" * 64, b"", b'{"a": ' + DEEP.encode() + b"}"])
def test_a_damaged_store_is_an_error_of_the_audit(tmp_path: Path, damage: bytes) -> None:
    root = _ws(tmp_path)
    (root / ".memtui" / "store.json").write_bytes(damage)
    report = audit.run(Workspace.open(root), use_cache=False)
    assert [f.code for f in report.findings if f.path == ".memtui/store.json"] == ["store-damaged"]
    assert report.has_errors
    assert _cli(root, "audit").returncode == 1


def test_a_state_folder_leading_outside_is_an_error_of_the_audit(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    outside = tmp_path / "elsewhere"
    shutil.move(str(root / ".memtui"), outside)
    (root / ".memtui").symlink_to(outside)
    report = audit.run(Workspace.open(root), use_cache=False)
    [finding] = [f for f in report.findings if f.code == "symlink-outside" and f.path.startswith(".memtui")]
    assert "outside the workspace" in finding.message and report.has_errors


def test_a_notes_link_leading_outside_is_reported_once(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    outside = tmp_path / "outside-notes.md"
    outside.write_text("outside\n")
    notes = root / "memory" / "MEMORY_CUSTOM.md"
    notes.unlink()
    notes.symlink_to(outside)
    report = audit.run(Workspace.open(root), use_cache=False)
    assert [f.code for f in report.findings if f.path == "memory/MEMORY_CUSTOM.md"] == ["symlink-outside"]
