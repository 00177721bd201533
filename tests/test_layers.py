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


#: Modules that may write files themselves, and why: everything else writes a workspace file or
#: the store through Session.write ("grep finds one implementation").
WRITERS_ALLOWED = {
    "memtui/core/session.py": "the one guarded write",
    "memtui/core/atomic.py": "the atomic-write primitive Session.write uses",
    "memtui/core/store.py": "the store's batch commit (called by Session.write) and set-aside",
    "memtui/core/lock.py": "the lock's advisory holder record",
    "memtui/core/tree/audit.py": "the audit cache, in the user cache folder",
    "memtui/userconfig.py": "the user config, in the user config folder",
    "memtui/commands/notes.py": "the $EDITOR temporary file, outside the workspace",
    "memtui/commands/eval.py": "the results file the user names",
    "memtui/ui/launch.py": "the user's copy of the sample workspace, made on first use",
    "memtui/core/drafts.py": "the Notes editor's drafts, in the user data folder",
    "memtui/core/shown.py": "copies of the member notes memtui showed, in the user cache folder",
    "memtui/core/skills/content.py": "a scratch copy of a skill version its tests run in, outside the workspace",
    "memtui/core/migrate.py": "derived copies under .memtui/migrate/<domain>/ (the inherited files' mirror "
                              "and its index, the gate's scratch memory); the inherited folder is only read",
    "memtui/core/governance/gate.py": "the evaluation's scratch copy in .memtui/evals (derived, removed after; "
                                      "the live files are only read)",
}
def _write_calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            owner = node.func.value
            owner_name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
            if name in {"write_bytes", "write_text", "rmtree", "mkstemp"} or (
                    name in {"replace", "rename", "unlink", "remove"} and owner_name in {"os", "path", "file"}):
                found.append(f"{node.lineno}: {ast.unparse(node.func)}")
    return found


def test_every_workspace_write_goes_through_the_one_guarded_write() -> None:
    """Outside the allowed modules, no code writes files itself: the rule is implemented once,
    in Session.write (backup and search write their own places: the backup repository or a
    restore target, and the derived .memtui/index). Store tables are guarded at run time: the
    store refuses any write outside a guarded write (tests/test_store.py)."""
    root = CORE.parent.parent
    offenders = {}
    for path in sorted((root / "memtui").rglob("*.py")):
        shown = path.relative_to(root).as_posix()
        if shown in WRITERS_ALLOWED or shown.startswith(("memtui/core/backup/", "memtui/core/search/")):
            continue
        calls = _write_calls(path)
        if calls:
            offenders[shown] = calls
    assert offenders == {}
