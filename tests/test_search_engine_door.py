"""The search engine has one door — only memtui.core.search.engine imports Whoosh."""

from __future__ import annotations

import ast
from pathlib import Path

import memtui

PACKAGE = Path(memtui.__file__).parent
ENGINE = PACKAGE / "core" / "search" / "engine"


def _imports_whoosh(path: Path) -> list[int]:
    tree = ast.parse(path.read_text("utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "whoosh" for a in node.names) or isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "whoosh" and not node.level:
            lines.append(node.lineno)
    return lines


def test_only_the_engine_imports_whoosh() -> None:
    outside = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
               if ENGINE not in p.parents and (n := _imports_whoosh(p))}
    assert outside == {}, f"Whoosh imported outside memtui/core/search/engine: {outside}"
    assert _imports_whoosh(ENGINE / "index.py"), "the check must see the engine's own imports"


def test_the_english_stop_words_are_whooshs() -> None:
    from whoosh.lang.stopwords import stoplists

    from memtui.core.search.analysis import EN_STOP

    assert frozenset(stoplists["en"]) == EN_STOP
