"""Every string JSON allows survives every reader: lone surrogates (``"\\ud800"`` is valid JSON,
though not a character), NUL and noncharacters. Each one is written, as JSON escapes, into a
graph line, a session history, the store, ``config.json`` and a skill's front matter; every
command that reads them (text and ``--json``), the index build, a search for it and the TUI's
start then work, and the bytes on disk are kept as they were.

The rule (:func:`memtui.core.text.well_formed`): a value is kept as read, so what is written
back keeps its bytes; each door that needs valid text makes it valid there (the search index
and queries as ``U+FFFD``, the terminal with ``visible``, ``--json`` as the JSON escape).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memtui.core.text import json_text, visible, well_formed
from tests.conftest import SAMPLE, run_cli

#: Strings JSON allows that are not ordinary text: lone high and low surrogates (one of them a
#: PEP 383 byte), NUL, the noncharacters U+FFFE, U+FFFF, U+1FFFF, and a valid surrogate pair.
STRINGS = {
    "high-surrogate": "\ud800",
    "low-surrogate": "\udfff",
    "pep383-byte": "\udcff",
    "nul": "\x00",
    "fffe": "\ufffe",
    "ffff": "\uffff",
    "1ffff": "\U0001ffff",
    "pair-then-lone": "\ud83d\ude00\udc00",
}


def _esc(value: str) -> str:
    """``value`` as the inside of a JSON string, every non-ASCII character escaped."""
    return json.dumps(value)[1:-1]


def _workspace(tmp_path: Path, odd: str) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root, symlinks=True)
    e = _esc(odd)
    graph = root / "memory" / "graph.jsonl"
    data = graph.read_bytes()
    data += (b"" if data.endswith(b"\n") else b"\n") + (
        f'{{"type":"entity","name":"Oddity{e}x","entityType":"kind{e}","observations":["zebrafish {e} tail"]}}\n'
        f'{{"type":"relation","from":"Oddity{e}x","to":"RouteCore","relationType":"uses{e}"}}\n').encode("ascii")
    graph.write_bytes(data)
    history = root / "sessions" / "durable" / "tg-7777-odd.jsonl"
    history.write_bytes((f'{{"ts": "2026-11-05T10:00:00Z", "role": "user", "content": "zebrafish {e} asks"}}\n'
                         f'{{"ts": "2026-11-05T10:00:{e}", "role": "assist{e}", "content": "ok {e}"}}\n')
                        .encode("ascii"))
    (root / "skills" / "odd-skill").mkdir()
    (root / "skills" / "odd-skill" / "SKILL.md").write_text(
        f'---\nname: odd-skill\ndescription: "Use when a zebrafish {e} swims"\n---\n\n# Odd\n', encoding="ascii")
    (root / "config.json").write_text(
        f'{{"tools": {{"mcp": {{"servers": {{"memory": {{"url": "http://127.0.0.1:9/mcp{e}"}}}}}}}}}}',
        encoding="ascii")
    return root


def _ok(code: int, out: str, err: str, what: str) -> None:
    assert code in (0, 1), f"{what}: exit {code}\n{err[-2000:]}"
    assert "Traceback" not in err and "internal error" not in err.lower(), f"{what}: {err[-2000:]}"
    out.encode("utf-8")  # what reached the terminal is valid UTF-8 (strict)
    err.encode("utf-8")
    for char in ("\ud800", "\udfff", "\udcff", "\udc00"):
        assert char not in out and char not in err, f"{what} printed {char!r}"


def test_well_formed_replaces_only_lone_surrogates() -> None:
    assert well_formed("a\ud800b\udcffc") == "a\ufffdb\ufffdc"
    plain = "plain \U0001ffff \ufffe \x00"
    assert well_formed(plain) is plain
    assert visible("a\ud800") == "a\\ud800" and json.loads(json_text("a\ud800")) == "a\ud800"


@pytest.mark.parametrize("odd", list(STRINGS.values()), ids=list(STRINGS))
def test_every_reader_survives_every_string_json_allows(tmp_path: Path, odd: str,
                                                        capsys: pytest.CaptureFixture,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    root = _workspace(tmp_path, odd)
    graph_before = (root / "memory" / "graph.jsonl").read_bytes()
    w = ["-w", str(root)]
    for argv in (["index", "--rebuild"], ["search", "zebrafish"], ["search", "--json", "zebrafish"],
                 ["graph", "entities"], ["graph", "entities", "--json"], ["graph", "show", f"Oddity{odd}x"],
                 ["graph", "show", "--json", f"Oddity{odd}x"], ["graph", "check"], ["sessions", "list"],
                 ["sessions", "show", "tg-7777-odd"], ["sessions", "show", "--json", "tg-7777-odd"],
                 ["sessions", "check"], ["skills", "list"], ["skills", "list", "--json"],
                 ["skills", "show", "odd-skill"], ["audit"], ["audit", "--json"], ["boot", "support"]):
        argv = [*argv[:-1], *w, argv[-1]] if argv[-1] not in ("--rebuild", "entities", "check", "list", "--json",
                                                                 "audit") else [*argv, *w]
        code, out, err = run_cli(capsys, *argv)
        _ok(code, out, err, " ".join(argv[:3]))
        if argv[0] == "search" and "--json" in argv:
            hits = json.loads(out)["hits"]
            assert any(h["kind"] == "entity" for h in hits), "the odd entity is found by its observation"
    # the graph's bytes are untouched by reading, and a write to another entity keeps the odd line
    assert (root / "memory" / "graph.jsonl").read_bytes() == graph_before
    code, out, err = run_cli(capsys, "graph", "add-observation", *w, "RouteCore", "checked")
    _ok(code, out, err, "graph add-observation")
    after = (root / "memory" / "graph.jsonl").read_bytes()
    odd_lines = [line for line in graph_before.splitlines() if b"Oddity" in line]
    assert all(line in after.splitlines() for line in odd_lines), "the odd records keep their bytes"
    # the store: a record holding the string is read by the commands that list it
    store = root / ".memtui" / "store.json"
    tables = json.loads(store.read_text(encoding="utf-8"))
    log = tables.get("audit_log") or next(t for t in tables.values() if t)
    first = next(iter(log.values()))
    for key, value in first.items():
        if isinstance(value, str) and key not in ("ts", "client_id", "id"):
            first[key] = value + odd
    store.write_text(json.dumps(tables), encoding="ascii")
    for argv in (["log"], ["log", "--json"], ["proposals", "list"], ["proposals", "list", "--json"], ["audit"]):
        code, out, err = run_cli(capsys, *argv, *w)
        _ok(code, out, err, " ".join(argv))


async def visit_every_area(pilot, app) -> None:  # noqa: ANN001
    """Wait for the app's audit and index (the index built without an error), then open every
    area in turn, each left to settle."""
    from memtui.ui.areas import AREAS
    from tests.conftest import settle, wait_for

    await wait_for(pilot, lambda: app.report is not None, what="the audit")
    await wait_for(pilot, lambda: app.index_report is not None or app.index_error is not None, what="the index")
    assert app.index_error is None
    for area in AREAS:
        await pilot.press(area.key)
        await settle(pilot)


@pytest.mark.parametrize("odd", ["\ud800", "\udcff", "\x00"], ids=["high-surrogate", "pep383-byte", "nul"])
async def test_the_tui_starts_and_searches_with_any_string_json_allows(tmp_path: Path, odd: str) -> None:
    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp

    root = _workspace(tmp_path, odd)
    app = MemtuiApp(Workspace.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        await visit_every_area(pilot, app)
        from tests.test_search_tui import _search_area, _type

        screen = await _search_area(pilot, app)
        await _type(pilot, screen, "zebrafish")
        assert any(h.kind == "entity" for h in screen._hits), "the odd entity is found in the TUI"
    app.session.close()
