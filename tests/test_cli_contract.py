"""The CLI contract, for every command at once (seed 004's defect classes).

- numbers are validated, never replaced: an out-of-range number is a usage error (exit 2)
  naming the option and the range, and nothing runs;
- every list in ``--json`` is a page: the list, ``count``, ``total``, ``cursor``; following
  the cursors gives the whole list once; an empty list is ``[]``, never ``null``;
- an option a command does not know is rejected, naming the options it does know;
- every command's ``--help`` runs; ``-w`` is taken by every command that works on a
  workspace, and the README names the ones that do not.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from pathlib import Path

import pytest

from memtui.cli import build_parser
from memtui.commands import _common

from tests.conftest import run_cli

REPO = Path(__file__).resolve().parent.parent


_run = run_cli


@pytest.fixture(autouse=True)
def _no_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))


def _commands() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """``(words, parser)`` of every command and verb (aliases once)."""
    found = []

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        found.append((words, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                seen: set[int] = set()
                for name, child in action.choices.items():
                    if id(child) not in seen:
                        seen.add(id(child))
                        walk(child, (*words, name))

    walk(build_parser(), ())
    return found


COMMANDS = _commands()
LEAVES = [(words, p) for words, p in COMMANDS
          if words and not any(isinstance(a, argparse._SubParsersAction) for a in p._actions)]
NUMERIC = [(words, action) for words, p in LEAVES for action in p._actions
           if action.option_strings and action.type is not None
           and getattr(action.type, "__module__", "") == _common.__name__ and action.type is not _common.cursor]


# -- --help, -w ------------------------------------------------------------------------------------

@pytest.mark.parametrize("words", [w for w, _ in COMMANDS], ids=lambda w: " ".join(w) or "memtui")
def test_every_commands_help_runs_and_exits_0(words, capsys) -> None:
    code, out, err = _run(capsys, *words, "--help")
    assert code == 0 and err == ""
    assert out.startswith(f"usage: memtui{' ' if words else ''}{' '.join(words)}")


def test_every_command_on_a_workspace_takes_w_and_the_readme_names_the_others() -> None:
    without = sorted({words[0] for words, p in LEAVES
                      if not any("-w" in a.option_strings for a in p._actions)})
    assert without == ["secret", "skills", "themes"]  # skills: `skills schema` prints what memtui ships
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    sentence = re.search(r"Every subcommand that works on a workspace takes `-w/--workspace PATH`[^.]*\.",
                         readme.replace("\n", " "))
    assert sentence, "the README says which commands take -w"
    assert all(re.search(f"`{name}[` ]", sentence.group(0)) for name in without)


def test_no_command_reads_a_number_past_the_one_checked_type() -> None:
    """One rule, one place: every numeric option uses a type of commands/_common.py."""
    raw = [f"{' '.join(words)} {'/'.join(a.option_strings) or a.dest}" for words, p in LEAVES
           for a in p._actions if a.type in (int, float)]
    assert raw == []
    assert len(NUMERIC) >= 14, [(" ".join(w), a.option_strings) for w, a in NUMERIC]


# -- numbers ---------------------------------------------------------------------------------------

def _bad_values(action: argparse.Action) -> list[str]:
    if action.type is _common.probability:
        return ["0", "1", "1.5", "-0.2", "nan", "x"]
    low = 0 if action.type is _common.byte_count else 1 if action.type is _common.positive_int else 2
    return [str(low - 1), "-3", "x", "1.5"] if low != 2 else ["1", "-3", "x"]


@pytest.mark.parametrize("words,action", NUMERIC, ids=lambda x: " ".join(x) if isinstance(x, tuple)
                         else "/".join(x.option_strings))
def test_every_number_out_of_range_is_a_usage_error_naming_option_and_range(words, action, capsys) -> None:
    option = action.option_strings[-1]
    for bad in _bad_values(action):
        values = [bad] * (action.nargs if isinstance(action.nargs, int) else 1)
        code, out, err = _run(capsys, *words, option, *values)
        assert code == 2, (words, option, bad, err)
        assert f"argument {'/'.join(action.option_strings)}" in err or f"argument {option}" in err
        assert re.search(r"(whole number (of|from) -?\d+|probability between 0 and 1)", err), err
        assert repr(bad) in err and out == ""


def test_search_and_log_limit_0_or_negative_are_refused_not_clamped(bare_sample_copy: Path, capsys) -> None:
    """Two defects a new user met: `search --limit 0` gave one result, `log --limit 0`
    printed "the audit log is empty" over 24 entries."""
    for argv in (("search", "--limit", "0", "parcel"), ("search", "--limit", "-3", "parcel"),
                 ("log", "--limit", "0"), ("log", "--limit", "-1", "--json")):
        code, out, err = _run(capsys, *argv[:1], "-w", str(bare_sample_copy), *argv[1:])
        assert code == 2 and out == "", argv
        assert "argument --limit: must be a whole number of 1 or more" in err
        assert "empty" not in err and not (bare_sample_copy / ".memtui" / "index").exists()


def test_backup_paging_options_without_history_are_a_usage_error(sample_copy: Path, capsys) -> None:
    code, _, err = _run(capsys, "backup", "-w", str(sample_copy), "--repo", str(sample_copy / "r"), "--limit", "5")
    assert code == 2 and "give them with --history" in err and not (sample_copy / "r").exists()


# -- unknown options -------------------------------------------------------------------------------

@pytest.mark.parametrize("words,parser", COMMANDS, ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_an_unknown_option_is_rejected_with_the_known_ones(words, parser, capsys) -> None:
    code, out, err = _run(capsys, *words, "--no-such-option") if words else _run(capsys, "--no-such-option")
    assert code == 2 and out == ""
    if not words:  # `memtui --no-such-option` is the TUI's parser
        assert "unknown option --no-such-option; memtui takes the options -h/--help, --theme NAME" in err
        return
    prog = "memtui " + " ".join(words)
    verbs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if verbs and verbs[0].required:  # the missing verb is named first, with every verb
        assert f"{prog}: error: the following arguments are required" in err
        assert f"{prog} takes one of {', '.join(verbs[0].choices)}" in err
        return
    if any(a.required for a in parser._actions if not isinstance(a, argparse._SubParsersAction)):
        return  # argparse names the missing required argument first (tested below for one)
    assert f"{prog}: error: unknown option --no-such-option; {prog} takes " in err
    for action in parser._actions:
        for name in action.option_strings:
            assert name in err, (prog, name)
    for name in (verbs[0].choices if verbs else ()):
        assert name in err


def test_themes_w_is_rejected_naming_what_themes_takes(capsys) -> None:
    code, out, err = _run(capsys, "themes", "-w", "X")
    assert code == 2 and out == ""
    assert "memtui themes: error: unknown option -w; memtui themes takes the options -h/--help, --json" in err


def test_a_command_with_required_options_names_unknown_ones_once_they_are_given(capsys, tmp_path) -> None:
    code, _, err = _run(capsys, "notes", "set", "-w", str(tmp_path), "--from", "-", "--expected-hash", "x")
    assert code == 2 and "unknown option --expected-hash" in err and "--base-hash/--expect-hash H" in err
    assert not (tmp_path / "memory").exists()


def test_an_extra_argument_is_named(capsys, tmp_path) -> None:
    code, _, err = _run(capsys, "skills", "list", "-w", str(tmp_path), "surplus")
    assert code == 2 and "unexpected argument 'surplus'; memtui skills list takes the options" in err


def test_a_mistyped_command_is_named_with_the_nearest_one(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "serch", "lockout")
    assert code == 2 and out == ""
    assert "'serch' is neither a command nor a folder; did you mean `memtui search`?" in err


# -- pages -----------------------------------------------------------------------------------------

def _json(capsys, *argv: str) -> dict:
    code, out, err = _run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def _all_pages(capsys, name: str, *argv: str, limit: int) -> list:
    """Follow the cursors from the first page; every page is the page shape."""
    items, cursor, pages = [], None, 0
    while True:
        extra = ("--cursor", cursor) if cursor is not None else ()
        page = _json(capsys, *argv, "--limit", str(limit), *extra)
        assert isinstance(page[name], list) and page["count"] == len(page[name]) <= limit
        assert page["total"] >= page["count"]
        assert page["cursor"] is None or isinstance(page["cursor"], str)
        items.extend(page[name])
        pages += 1
        cursor = page["cursor"]
        if cursor is None:
            return items
        assert page["count"] == limit, "only a full page has a next one"
        assert pages < 100


def test_graph_entities_pages_hold_the_whole_filtered_list_once(sample_copy: Path, capsys) -> None:
    whole = _json(capsys, "graph", "entities", "-w", str(sample_copy), "--limit", "1000")
    assert whole["count"] == whole["total"] == 50 and whole["cursor"] is None
    paged = _all_pages(capsys, "entities", "graph", "entities", "-w", str(sample_copy), limit=7)
    assert paged == whole["entities"]
    first = _json(capsys, "graph", "entities", "-w", str(sample_copy), "--limit", "7")
    assert (first["count"], first["total"], first["cursor"]) == (7, 50, "7")
    kind = whole["entities"][0]["entityType"]
    typed = _json(capsys, "graph", "entities", "-w", str(sample_copy), "--type", kind, "--limit", "1")
    assert typed["total"] == sum(1 for e in whole["entities"] if e["entityType"] == kind)
    code, _, err = _run(capsys, "graph", "entities", "-w", str(sample_copy), "--limit", "7")
    assert code == 0 and "7 of 50 entities shown; the next page: --cursor 7" in err


def test_skills_list_is_a_page_and_keeps_the_catalogue_counts(sample_copy: Path, capsys) -> None:
    whole = _json(capsys, "skills", "list", "-w", str(sample_copy))
    assert whole["count"] == whole["total"] == len(whole["skills"]) and whole["cursor"] is None
    assert whole["valid"] + whole["with_problems"] == whole["total"]
    assert _all_pages(capsys, "skills", "skills", "list", "-w", str(sample_copy), limit=3) == whole["skills"]
    first = _json(capsys, "skills", "list", "-w", str(sample_copy), "--limit", "3")
    assert first["valid"] == whole["valid"], "the counts are of the catalogue, not of the page"


def test_search_pages_continue_the_ranking(sample_copy: Path, capsys) -> None:
    whole = _json(capsys, "search", "-w", str(sample_copy), "parcel", "--limit", "12")
    assert whole["count"] == len(whole["hits"]) and whole["total"] >= whole["count"]
    paged = _all_pages(capsys, "hits", "search", "-w", str(sample_copy), "parcel", limit=4)
    assert [h["path"] for h in paged[:12]] == [h["path"] for h in whole["hits"]]
    assert len(paged) == whole["total"] or whole["total_estimated"] or whole["total_at_least"]


def test_log_pages_do_not_shift_when_entries_are_written_meanwhile(sample_copy: Path, tmp_path: Path, capsys) -> None:
    before = _json(capsys, "log", "-w", str(sample_copy))["total"]  # the sample's own history
    source = tmp_path / "n.md"
    for i in range(7):
        source.write_text(f"note {i}\n", encoding="utf-8")
        assert _run(capsys, "notes", "set", "-w", str(sample_copy), "--from", str(source))[0] == 0
    first = _json(capsys, "log", "-w", str(sample_copy), "--limit", "3")
    assert (first["count"], first["total"]) == (3, before + 7) and first["cursor"] is not None
    source.write_text("written between two pages\n", encoding="utf-8")
    assert _run(capsys, "notes", "set", "-w", str(sample_copy), "--from", str(source))[0] == 0
    second = _json(capsys, "log", "-w", str(sample_copy), "--limit", "3", "--cursor", first["cursor"])
    third = _json(capsys, "log", "-w", str(sample_copy), "--limit", "3", "--cursor", second["cursor"])
    ids = [e["id"] for e in first["entries"] + second["entries"] + third["entries"]]
    newest = first["entries"][0]["id"]
    assert ids == list(range(newest, newest - 9, -1)), "no entry twice, none skipped"
    assert second["total"] == before + 8
    assert [e["id"] for e in _all_pages(capsys, "entries", "log", "-w", str(sample_copy), limit=5)] == \
        list(range(newest + 1, newest + 1 - before - 8, -1))
    code, _, err = _run(capsys, "log", "-w", str(sample_copy), "--limit", "3")
    assert code == 0 and f"3 of {before + 8} entries shown; the next page: --cursor {newest - 1}" in err


def test_proposals_and_versions_are_pages(sample_copy: Path, tmp_path: Path, capsys) -> None:
    queued = _json(capsys, "proposals", "list", "-w", str(sample_copy))["total"]  # the sample's own
    source = tmp_path / "p.md"
    for i in range(5):
        source.write_text(f"# Case {i}\n\nWhat happened {i}.\n", encoding="utf-8")
        assert _run(capsys, "propose", "-w", str(sample_copy), "--node", "support/experience",
                    "--article", "exp-paged.md", "--from", str(source), "--case", f"C{i}",
                    "--source-request", f"SR{i}", "--profile", "support.investigator")[0] == 0
    whole = _json(capsys, "proposals", "list", "-w", str(sample_copy))
    assert whole["state"] == "proposed" and whole["count"] == whole["total"] == queued + 5
    assert whole["cursor"] is None
    assert _all_pages(capsys, "proposals", "proposals", "list", "-w", str(sample_copy), limit=2) == whole["proposals"]
    versions = _json(capsys, "versions", "support/experience/exp-paged.md", "-w", str(sample_copy), "--limit", "2")
    assert versions["article"] == "support/experience/exp-paged.md"
    assert (versions["count"], versions["total"], versions["cursor"]) == (2, 5, "2")
    paged = _all_pages(capsys, "versions", "versions", "support/experience/exp-paged.md", "-w", str(sample_copy),
                       limit=2)
    assert [v["number"] for v in paged] == [1, 2, 3, 4, 5]


def test_empty_lists_are_empty_pages_never_null(tmp_path: Path, capsys) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "AGENTS.md").write_text("# Root\n", encoding="utf-8")
    for argv, name in ((("log",), "entries"), (("graph", "entities"), "entities"),
                       (("proposals", "list"), "proposals"), (("skills", "list"), "skills")):
        page = _json(capsys, *argv, "-w", str(tmp_path))
        assert (page[name], page["count"], page["total"], page["cursor"]) == ([], 0, 0, None), argv


def test_boot_json_has_the_same_shape_with_and_without_skills(sample_copy: Path, capsys) -> None:
    """`boot --json` gave `skills: null` without --with-skills."""
    bare = _json(capsys, "boot", "-w", str(sample_copy), ".")
    full = _json(capsys, "boot", "-w", str(sample_copy), ".", "--with-skills")
    assert bare["with_skills"] is False and full["with_skills"] is True
    assert bare["skills"]["entries"] == [] and full["skills"]["entries"]

    def shape(value):  # noqa: ANN001, ANN202
        if isinstance(value, dict):
            return {k: shape(v) for k, v in value.items()}
        return "list" if isinstance(value, list) else type(value).__name__

    assert shape(bare["skills"]) == shape(full["skills"])
    assert not [k for k, v in bare.items() if v is None]


def test_an_option_value_before_the_path_is_not_taken_for_a_command(capsys, tmp_path, monkeypatch) -> None:
    """`memtui --theme nope PATH` said "'nope' is neither a command nor a folder"."""
    monkeypatch.setattr("memtui.ui.launch.has_terminal", lambda: False)  # stop before the app starts
    code, _out, err = _run(capsys, "--theme", "memtui-light", str(tmp_path))
    assert "neither a command" not in err and "needs a terminal" in err and code == 2
    code, _out, err = _run(capsys, "--theme", "memtui-light", "serch")
    assert code == 2 and "did you mean `memtui search`" in err


def test_a_word_that_is_neither_a_command_nor_a_folder_says_so(capsys, tmp_path, monkeypatch) -> None:
    """`memtui frobnicate` said only "frobnicate does not exist", as if a folder were meant."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "frobnicate")
    assert code == 2 and out == ""
    assert "'frobnicate' is neither a command nor a folder (`memtui --help` lists the commands)" in err
    code, _out, err = _run(capsys, str(tmp_path / "missing"))  # a path that is not there is still a path
    assert code == 2 and "does not exist" in err


def test_an_unknown_theme_is_said_as_the_themes_problem_with_the_themes(capsys, tmp_path, monkeypatch) -> None:
    """`memtui --theme nosuch audit` said "audit does not exist"."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("memtui.ui.launch.has_terminal", lambda: False)
    for argv in (["--theme", "nosuch", "audit"], ["--theme=nosuch", str(tmp_path)]):
        code, out, err = _run(capsys, *argv)
        assert code == 2 and out == ""
        assert "--theme nosuch is not a theme; the themes are memtui-dark" in err and "textual-dark" in err
        assert "does not exist" not in err and "needs a terminal" not in err


def test_a_command_after_an_option_of_the_tui_is_named_as_a_command(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _out, err = _run(capsys, "--theme", "memtui-light", "audit")
    assert code == 2 and "does not exist" not in err
    assert "audit is a command: the command comes first" in err and "`memtui audit --help`" in err
