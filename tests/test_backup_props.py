"""Property-based round trips over generated nasty workspaces (DESIGN.md invariant 9).

For every generated workspace W: ``render(restore(render(W))) == render(W)`` byte for byte
(executable bits included), the restored files equal W's, and the restored store equals the
original record for record. Bounded: few examples, no deadline, a few seconds in all.
"""

from __future__ import annotations

import json
import os
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from backup_helpers import isolate_git, tree_bytes
from memtui.core.backup import render as rd
from memtui.core.backup.commit import backup
from memtui.core.backup.restore import restore_tree
from memtui.core.backup.verify import verify
from memtui.core.store import STORE_NAME, parse as parse_store
from memtui.core.workspace import Workspace

NASTY = "aZ09 -_'\"`[]{}#*.,;~é\u0301кирилицаЖ日本🚀\t"
text_names = st.text(NASTY, min_size=1, max_size=10).map(str.encode)
nfd_names = st.text("éüñ", min_size=1, max_size=4).map(lambda s: unicodedata.normalize("NFD", s).encode())
byte_names = st.binary(min_size=1, max_size=8).map(lambda b: b.replace(b"/", b"_").replace(b"\0", b"_"))
names = st.one_of(text_names, nfd_names, byte_names).filter(
    lambda n: n not in (b".", b"..") and n.lower() != b".git")
paths = st.lists(names, min_size=1, max_size=3).map(lambda parts: b"/".join(parts))
contents = st.one_of(
    st.binary(max_size=120),
    st.lists(st.sampled_from(["line", "кирилица", "", " trailing ", "```", "\t"]), max_size=5).flatmap(
        lambda lines: st.sampled_from(["\n", "\r\n", "\r"]).map(lambda eol: eol.join(lines).encode())),
    st.just(b""),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30) | st.text("ab\n\r`\t ё", max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)
records = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
tables = st.dictionaries(st.text(min_size=1, max_size=12), st.lists(records, max_size=4), max_size=4)
workspaces = st.tuples(st.dictionaries(paths, st.tuples(contents, st.booleans()), max_size=12),
                       st.one_of(st.none(), tables), st.lists(paths, max_size=2))


def build(root: Path, spec) -> dict[str, dict[str, object]] | None:
    """Write a generated workspace; return its store tables (None: no store file)."""
    files, store, empty_dirs = spec
    root_b = os.fsencode(root)
    os.makedirs(root_b)
    for path, (data, executable) in files.items():
        if path.split(b"/")[0] == b".memtui":
            continue
        full = os.path.join(root_b, path)
        try:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "xb") as handle:
                handle.write(data)
        except (FileExistsError, NotADirectoryError, IsADirectoryError, OSError):
            continue  # a generated name clashes with a folder of another: skip it
        os.chmod(full, 0o755 if executable else 0o644)
    for folder in empty_dirs:
        if folder.split(b"/")[0] == b".memtui":
            continue
        try:
            os.makedirs(os.path.join(root_b, folder), exist_ok=True)
        except (FileExistsError, NotADirectoryError, OSError):
            continue
    if store is None:
        return None
    data = {}
    for name, recs in store.items():
        data[name] = {str(i * 2 + 1): rec for i, rec in enumerate(recs)}  # ids with gaps
    os.makedirs(os.path.join(root_b, b".memtui"), exist_ok=True)
    (root / ".memtui" / STORE_NAME).write_bytes(json.dumps(data, ensure_ascii=False).encode("utf-8"))
    return data


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=workspaces)
def test_round_trip_of_generated_workspaces(spec) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        store = build(ws, spec)
        tree = rd.render(ws)
        result = restore_tree(tree.files, Path(tmp) / "out")
        assert result.ok, result.findings
        again = rd.render(Path(tmp) / "out")
        assert {p: (e.data, e.executable) for p, e in again.files.items()} == \
               {p: (e.data, e.executable) for p, e in tree.files.items()}
        assert tree_bytes(Path(tmp) / "out") == tree_bytes(ws)
        if store is not None:
            restored = parse_store((Path(tmp) / "out/.memtui" / STORE_NAME).read_bytes(), Path(tmp))
            assert restored == store


@settings(max_examples=60, deadline=None)
@given(table=st.dictionaries(st.integers(1, 10**6).map(str), records, max_size=6))
def test_table_markdown_parses_back_exactly(table) -> None:
    data = rd.render_table("t", table)
    assert rd.parse_table(data) == table
    assert rd.render_table("t", rd.parse_table(data)) == data


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(spec=workspaces)
def test_round_trip_through_git(spec, monkeypatch: pytest.MonkeyPatch, tmp_path_factory) -> None:
    isolate_git(monkeypatch, tmp_path_factory.mktemp("home"))
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        build(ws, spec)
        backup(Workspace.open(ws), Path(tmp) / "repo", "b")
        result = verify(Path(tmp) / "repo", None, "b")
        assert result.ok, (result.differences, result.findings)
