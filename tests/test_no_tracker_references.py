"""Comments, docstrings and names say what and why, never which ticket.

A newcomer has the code, the seeds and the bug inputs, not the tracker: a ticket's number or a
bug input's id in a comment or a test name tells them nothing. This walks every Python file of memtui/
and tests/ (and pyproject.toml, .ci/run) and fails on a tracker id in a comment, a docstring, a
function, class or file name. A bug input's folder may still be named as a path
(``bug-inputs/`` and its id), which is where the reader finds it.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent

#: A ticket's number ("issue" and digits) or a bug input's id (B and two digits) outside its path.
TRACKER = re.compile(r"\b[Ii]ssues?\s+\d+|(?<!bug-inputs/)(?<![\w/])B\d{2}\b(?!/)")
#: A name that records history: a bug input's or a ticket's id, or "fixes".
HISTORY_NAME = re.compile(r"(?:^|_)(?:b\d{2}|issue_?\d+)(?:_|$)|_fixes$", re.IGNORECASE)

def _python_files() -> list[Path]:
    return sorted(p for top in ("memtui", "tests") for p in (ROOT / top).rglob("*.py")
                  if ".venv" not in p.parts and "__snapshots__" not in p.parts)


def _offences(path: Path) -> list[str]:
    """Every comment, docstring and name of ``path`` that carries a tracker id."""
    rel = path.relative_to(ROOT).as_posix()
    text = path.read_text(encoding="utf-8")
    out = []
    if HISTORY_NAME.search(path.stem.removeprefix("test_")) and path.stem != "whoosh_fixes":
        out.append(f"{rel}: file name {path.name}")
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT and TRACKER.search(token.string):
            out.append(f"{rel}:{token.start[0]}: {token.string.strip()}")
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc and TRACKER.search(doc):
                line = getattr(node, "lineno", 1)
                out.append(f"{rel}:{line}: docstring: {TRACKER.search(doc).group(0)!r}")
        if (isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and HISTORY_NAME.search(node.name.removeprefix("test_"))):
            out.append(f"{rel}:{node.lineno}: name {node.name}")
    return out


def _config_offences() -> list[str]:
    out = []
    for rel in ("pyproject.toml", ".ci/run"):
        path = ROOT / rel
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            comment = line[line.index("#"):] if "#" in line else ""
            if TRACKER.search(comment):
                out.append(f"{rel}:{number}: {comment.strip()}")
    return out




def test_the_pattern_finds_tracker_ids_and_spares_paths_and_words() -> None:
    for found in ("(issue 15 item 8)", "Issue 19: x", "(B17)", "bug input B22's note", "see issues 3 and 4"):
        assert TRACKER.search(found), found
    for spared in ('shared / "bug-inputs/B17"', "bug-inputs/B17/memory.jsonl", "B18/skills", "ABC12",
                   "seed 004 round 2", "a round trip", "Issue tracker"):
        assert not TRACKER.search(spared), spared
    for name in ("b17_names_in_the_tree", "audit_issue17", "governance_fixes", "damaged_store_b01_cli"):
        assert HISTORY_NAME.search(name), name
    for name in ("odd_entity_names_in_the_tree", "audit_privacy_and_integrity", "big_note_saves_whole"):
        assert not HISTORY_NAME.search(name), name


def test_no_tracker_id_in_comments_docstrings_or_names() -> None:
    offences = [o for p in _python_files() for o in _offences(p)]
    offences += _config_offences()
    assert not offences, "say what and why instead:\n" + "\n".join(offences)

