"""The core never imports Textual or Rich (DESIGN.md §3)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "memtui" / "core"


def test_core_source_has_no_textual_or_rich_import() -> None:
    offenders = []
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in {"textual", "rich"}:
                    offenders.append(f"{path.name}:{node.lineno} imports {name}")
    assert offenders == []


def test_importing_every_core_module_loads_no_textual_or_rich() -> None:
    modules = sorted(
        "memtui.core." + ".".join(p.relative_to(CORE).with_suffix("").parts)
        for p in CORE.rglob("*.py") if p.name != "__init__.py"
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
