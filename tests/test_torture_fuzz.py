"""A fuzz of mutated inputs over audit, graph, skills, search and backup (torture tests).

Real files of the sample workspace (articles, node indexes, SKILL.md, graph.jsonl, session
histories, memtui.toml, member notes, the store) are mutated the ways real files go bad —
truncation, a BOM, CRLF, NUL bytes, bad UTF-8, deep nesting, huge lines, alias bombs,
impossible dates, JSON specials, a second front matter block, a name that is not UTF-8 — a
few at a time in a fresh copy, and every reader runs over them, in-process and through the
CLI. Required: no traceback (no exception escapes any reader, no command prints one), and no
silent drop (each mutated file is either read whole or named by a finding).

``MEMTUI_TORTURE_SCALE`` multiplies the number of mutated inputs (200 by default).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import traceback
from pathlib import Path
from typing import Callable

import pytest

from tests import torture
from tests.conftest import SAMPLE

DEEP_JSON = "[" * 1500 + "]" * 1500


def _front_matter_insert(data: bytes, line: bytes) -> bytes:
    if data.startswith(b"---\n"):
        return b"---\n" + line + b"\n" + data[4:]
    return b"---\n" + line + b"\n---\n" + data


def _bomb() -> bytes:
    lines = [b"l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{n}: &l{n} [".encode() + b", ".join([f"*l{n - 1}".encode()] * 9) + b"]" for n in range(1, 9)]
    return b"\n".join(lines)


def _odd_strings(rng: random.Random, data: bytes, kind: str) -> bytes:
    """Strings JSON allows that are not text (lone surrogates, NUL, noncharacters) and
    terminal escapes: in names and texts of JSON records, raw in the other files."""
    escaped = rng.choice([b"\\ud800", b"\\udfff", b"\\udcff", b"\\u0000", b"\\ufffe", b"\\uffff",
                          b"\\ud83f\\udfff", b"\\u001b]0;title\\u0007", b"\\u009b2J", b"\\u202e"])
    if kind in ("graph", "session"):
        return data + (b"\n" if data and not data.endswith(b"\n") else b"") + (
            b'{"type":"entity","name":"odd' + escaped + b'","entityType":"t' + escaped +
            b'","observations":["o' + escaped + b'"]}\n' if kind == "graph" else
            b'{"ts":"2026-01-01T00:00:00Z","role":"user' + escaped + b'","content":"c' + escaped + b'"}\n')
    raw = rng.choice(["\x1b]0;title\x07", "\x1b[2J", "\x9b31m", "\x1bP1$q\x1b\\", "\u202e", "\x7f", "\x0c"])
    at = rng.randrange(0, len(data) + 1)
    return data[:at] + raw.encode("utf-8") + data[at:]


def _mutators(rng: random.Random) -> dict[str, Callable[[bytes, str], bytes | None]]:
    def truncate(data: bytes, _kind: str) -> bytes:
        return data[: rng.randrange(0, max(1, len(data)))]

    def bom(data: bytes, _kind: str) -> bytes:
        return b"\xef\xbb\xbf" + data

    def crlf(data: bytes, _kind: str) -> bytes:
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")

    def nul(data: bytes, _kind: str) -> bytes:
        at = rng.randrange(0, len(data) + 1)
        return data[:at] + b"\x00" * rng.randint(1, 4) + data[at:]

    def bad_utf8(data: bytes, _kind: str) -> bytes:
        at = rng.randrange(0, len(data) + 1)
        return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\x80\x80"]) + data[at:]

    def deep(data: bytes, kind: str) -> bytes | None:
        if kind in ("graph", "session"):
            return data + b'\n{"type":"entity","name":"deep","entityType":"x","observations":[],"x":' + \
                DEEP_JSON.encode() + b"}\n"
        if kind == "toml":
            return data + b"\nnested = " + DEEP_JSON.encode() + b"\n"
        if kind == "store":
            return b'{"audit": {"1": {"x": ' + DEEP_JSON.encode() + b"}}}"
        return _front_matter_insert(data, b"deep: " + b"[" * 2000 + b"]" * 2000)

    def huge_line(data: bytes, kind: str) -> bytes:
        size = rng.choice([300_000, 3_000_000] if torture.SCALE > 1 else [300_000])
        if kind in ("graph", "session"):
            return data + b'\n{"type":"entity","name":"huge","entityType":"x","observations":["' + \
                b"huge " * (size // 5) + b'"]}\n'
        return data + b"\n" + b"huge words " * (size // 11) + b"\n"

    def alias_bomb(data: bytes, kind: str) -> bytes | None:
        if kind not in ("article", "index", "skill"):
            return None
        return _front_matter_insert(data, _bomb())

    def bad_date(data: bytes, kind: str) -> bytes | None:
        if kind not in ("article", "index", "skill"):
            return None
        value = rng.choice([b"2024-13-45", b"2024-02-30", b"2023-02-29T25:61:00", b"0000-00-00", b"!!int twelve"])
        return _front_matter_insert(data, b"verified_at: " + value)

    def json_specials(data: bytes, kind: str) -> bytes | None:
        if kind not in ("graph", "session", "store"):
            return None
        special = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"1" * 5000, b'"\\ud800"',
                              b'"\\udfff\\ud800"', b"null", b"[]", b'{"a":1,"a":2}'])
        if kind == "store":
            return data.replace(b'"time":', b'"x": ' + special + b', "time":', 1)
        return data + b'\n{"type":"entity","name":"special","entityType":' + special + \
            b',"observations":[' + special + b"]}\n" + b"[" + special + b"]\n"

    def second_block(data: bytes, kind: str) -> bytes | None:
        if kind not in ("article", "index", "skill"):
            return None
        return b"---\n---\n" + (data[4:] if data.startswith(b"---\n") else b"title: t\n---\n" + data)

    def flip(data: bytes, _kind: str) -> bytes:
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if out:
                out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)

    def empty(_data: bytes, _kind: str) -> bytes:
        return b""

    return {"truncate": truncate, "bom": bom, "crlf": crlf, "nul": nul, "bad-utf8": bad_utf8, "deep": deep,
            "huge-line": huge_line, "alias-bomb": alias_bomb, "bad-date": bad_date,
            "json-specials": json_specials, "odd-strings": lambda data, kind: _odd_strings(rng, data, kind), "second-block": second_block, "flip": flip, "empty": empty,
            "name-not-utf8": lambda data, _kind: data}


def _seed_files(root: Path) -> list[tuple[str, str]]:
    """``(workspace-relative path, kind)`` of the files the fuzz mutates."""
    out = []
    for path in sorted((root / "memory").rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        kind = "index" if path.name == "AGENTS.md" else "notes" if path.parent == root / "memory" else "article"
        out.append((rel, kind))
    out += [(p.relative_to(root).as_posix(), "skill") for p in sorted((root / "skills").rglob("SKILL.md"))]
    out += [(p.relative_to(root).as_posix(), "session") for p in sorted((root / "sessions").rglob("*.jsonl"))]
    out += [("memory/graph.jsonl", "graph"), ("memtui.toml", "toml"), (".memtui/store.json", "store")]
    return out


def _mentioned(findings: list, rel: str) -> bool:
    from memtui.core.text import visible

    shown = visible(rel)
    return any(f.path == rel or f.path == shown or f.path.startswith(rel + "/") or rel in f.message
               for f in findings)


def _read_whole(ws, rel: str, kind: str, data: bytes) -> bool:  # noqa: ANN001 - Workspace
    """True when the file's reader took all of it (nothing for a finding to report)."""
    from memtui.core import graph as g
    from memtui.core.tree.model import MemoryTree

    if kind == "graph":
        graph = g.load(ws.root / rel, rel)
        return graph.to_bytes() == data and not graph.bad_lines()
    if kind in ("article", "notes"):
        article = MemoryTree(ws).read_article(rel.removeprefix("memory/"))
        text = data.decode("utf-8", "replace").lstrip("\ufeff")
        return article.ok and (article.text == text)
    if kind == "session":
        # of the readers fuzzed, only the backup keeps a session history (checked apart, byte for
        # byte); graph provenance only looks a line up in it, and the search leaves it out
        return True
    if kind in ("toml", "index", "skill"):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return b"\x00" not in data
    if kind == "store":
        from memtui.core.store import Store

        store = Store.open(ws, read_only=True)
        try:
            return not store.damaged
        finally:
            store.close()
    return False


def _apply(root: Path, rel: str, kind: str, mutator: str, mutate, rng: random.Random) -> str | None:  # noqa: ANN001
    path = root / rel
    data = path.read_bytes()
    new = mutate(data, kind)
    if new is None:
        return None
    if mutator == "name-not-utf8":
        if kind in ("toml", "store", "graph"):
            return None
        bad = os.path.join(os.fsencode(path.parent), os.fsencode(path.stem) + b"-\xe5" + os.fsencode(path.suffix))
        os.rename(path, bad)
        return os.fsdecode(os.path.relpath(bad, os.fsencode(root)))
    path.write_bytes(new)
    return rel


def _in_process(root: Path, mutated: list[tuple[str, str, str]], failures: list[str], drops: list[str]) -> None:
    from memtui.core import audit, graph as g, skills
    from memtui.core.backup.render import render
    from memtui.core.graph.audit import audit as graph_audit
    from memtui.core.search.index import SearchIndex
    from memtui.core.session import Session
    from memtui.core.workspace import Workspace

    what = ", ".join(f"{m}:{r}" for r, _k, m in mutated)
    steps: dict[str, Callable[[], object]] = {}
    ws = Workspace.open(root)
    report_box: dict[str, object] = {}

    def run_audit() -> None:
        report_box["audit"] = audit.run(ws, use_cache=False)

    def run_graph() -> None:
        path = ws.graph_file
        graph = g.load(path, ws.shown(path))
        graph_audit(graph, near=True)
        if graph.entities and not graph.legacy:
            with Session.open(root, purpose="fuzz") as session:
                if not session.read_only:
                    try:
                        g.commit(path, graph, g.AddObservation(graph.entities[0].name, "fuzz was here"),
                                 session=session)
                    except (g.GraphEditError, g.GraphConflictError):
                        pass

    def run_skills() -> None:
        catalogue = skills.load_catalogue(ws)
        skills.build_index(catalogue)

    def run_search() -> None:
        index = SearchIndex(ws)
        report_box["search"] = index.update(rebuild=True)
        index.search("parcel") if hasattr(index, "search") else None

    def run_backup() -> None:
        report_box["backup"] = render(root)

    steps = {"audit": run_audit, "graph": run_graph, "skills": run_skills, "search": run_search,
             "backup": run_backup}
    from memtui.core.errors import MemtuiError

    for name, step in steps.items():
        try:
            step()
        except MemtuiError:
            pass  # a refusal with a sentence (a damaged store is not backed up): not a crash
        except Exception:  # every other escape is a failure of the test
            failures.append(f"[{what}] {name}: {traceback.format_exc(limit=3).strip().splitlines()[-1]}")
    report = report_box.get("audit")
    findings = list(getattr(report, "findings", []))
    findings += list(getattr(report_box.get("search"), "findings", []))
    tree = report_box.get("backup")
    for rel, kind, mutator in mutated:
        path = root / rel
        if not os.path.lexists(os.fsencode(path)):
            continue
        data = path.read_bytes()
        if not (_mentioned(findings, rel) or _read_whole(Workspace.open(root), rel, kind, data)):
            drops.append(f"[{mutator}] {rel}: neither read whole nor named by a finding")
        if tree is not None and not rel.startswith(".memtui/"):
            backed = getattr(tree, "files", {}).get(b"files/" + os.fsencode(rel))
            if (backed is None or backed.data != data) and not _mentioned(getattr(tree, "findings", []), rel):
                drops.append(f"[{mutator}] {rel}: not in the backup tree and no backup finding")


_CLI = [["audit", "--json"], ["graph", "check", "--json", "--no-fuzzy"], ["skills", "list", "--json"],
        ["index"], ["search", "--json", "parcel"], ["boot", "support"], ["graph", "show", "--json", "RouteCore"]]


def _cli(root: Path, mutated: list[tuple[str, str, str]], failures: list[str]) -> None:
    what = ", ".join(f"{m}:{r}" for r, _k, m in mutated)
    for args in _CLI:
        done = torture.memtui(*args, "-w", str(root), timeout=300)
        err = done.stderr.decode("utf-8", "replace")
        if "Traceback" in err or done.returncode not in (0, 1, 2, 3, 4):
            failures.append(f"[{what}] memtui {' '.join(args)}: exit {done.returncode}: "
                            f"{err.strip().splitlines()[-1] if err.strip() else ''}")
        if "--json" in args and done.stdout:
            try:
                json.loads(done.stdout.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                failures.append(f"[{what}] memtui {' '.join(args)}: output is not JSON in UTF-8 ({exc})")


@pytest.mark.slow
def test_mutated_inputs_never_crash_and_are_never_dropped(tmp_path: Path) -> None:
    rng = random.Random(int(os.environ.get("MEMTUI_TORTURE_SEED", "2015")))
    mutators = _mutators(rng)
    total = torture.scaled(200, least=50)
    per_round = 16
    failures: list[str] = []
    drops: list[str] = []
    used: dict[str, int] = {}
    done_inputs = 0
    rounds = 0
    names = sorted(mutators)
    while done_inputs < total:
        rounds += 1
        root = tmp_path / f"ws{rounds}"
        shutil.copytree(SAMPLE, root, symlinks=True)
        seeds = _seed_files(root)
        rng.shuffle(seeds)
        mutated: list[tuple[str, str, str]] = []
        while seeds and len(mutated) < per_round and done_inputs + len(mutated) < total:
            name = names[(done_inputs + len(mutated)) % len(names)]  # every kind of damage in turn
            for rel, kind in list(seeds):  # on a file it applies to (JSON specials: JSON files)
                result = _apply(root, rel, kind, name, mutators[name], rng)
                if result is not None:
                    seeds.remove((rel, kind))
                    mutated.append((result, kind, name))
                    used[name] = used.get(name, 0) + 1
                    break
            else:
                names.remove(name) if name in names and len(names) > 1 else None
                if len(names) <= 1:
                    break
        done_inputs += len(mutated)
        _in_process(root, mutated, failures, drops)
        if rounds % 5 == 1 or torture.SCALE > 1:
            _cli(root, mutated, failures)
        shutil.rmtree(root, ignore_errors=True)
    torture.report("fuzz-mutated-inputs", inputs=done_inputs, rounds=rounds, mutations=used,
                   tracebacks=len(failures), silent_drops=len(drops), what=(failures + drops)[:20])
    if os.environ.get("MEMTUI_TORTURE_REPORT"):
        with open(os.environ["MEMTUI_TORTURE_REPORT"] + ".fuzz.txt", "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write("\n".join(failures + drops))
    assert not failures, "\n".join(failures[:20])
    assert not drops, "\n".join(drops[:20])
