"""Start the TUI: choose the workspace (the user's sample copy by default) and the theme."""

from __future__ import annotations

import shutil
import os
import sys
from pathlib import Path

from memtui import userconfig
from memtui.core.errors import WorkspaceError
from memtui.core.workspace import Workspace
from memtui.paths import bundled, data_dir


def sample_copy() -> Path:
    """The user's own copy of the bundled sample workspace, made on first use.

    The bundled folder itself is never opened (DESIGN.md §2), so memtui never writes into
    its own installation or repository.

    Raises:
        FileNotFoundError: the bundled sample workspace is missing (a broken install).
        OSError: the copy cannot be made.
    """
    target = data_dir() / "sample_workspace"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(bundled("sample_workspace"), partial, symlinks=True)
        partial.rename(target)
    return target


def has_terminal() -> bool:
    """True when standard input and output are a terminal (the TUI draws on one and reads keys
    from it; without one it wrote escape codes into a file and never ended)."""
    try:
        return sys.stdin is not None and sys.stdout is not None and sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def run_tui(path: str | None, theme: str | None = None, read_only: bool = False,
            profile: str | None = None) -> int:
    """Open the TUI on ``path`` (default: :func:`sample_copy`); return the exit code.

    ``theme`` (from ``--theme``) is remembered in the user config; without it the last
    remembered theme is used. ``read_only`` (``--read-only``) refuses every write. ``profile``
    (``--as``) is the acting profile, as the CLI's ``--as`` (:func:`memtui.core.session.resolve_profile`).
    """
    if path and not os.path.exists(path):
        print(f"memtui: {path} does not exist", file=sys.stderr)
        return 2
    if not has_terminal():
        print("memtui: the TUI needs a terminal (standard input and output are not one); for scripts, "
              "use the commands: `memtui --help` lists them", file=sys.stderr)
        return 2
    try:
        folder = Path(path) if path else sample_copy()
        workspace = Workspace.open(folder)
    except (WorkspaceError, FileNotFoundError, OSError) as exc:
        print(f"memtui: {exc}", file=sys.stderr)
        return 2
    if path is None:
        print(f"memtui: opening your copy of the sample workspace at {folder}", file=sys.stderr)
    from memtui.ui.app import MemtuiApp

    chosen = theme or userconfig.get("theme")

    def remember(name: str) -> None:
        userconfig.set_value("theme", name)

    from memtui.core.session import Session

    session = Session.open(workspace, purpose="tui", read_only=read_only, profile=profile)
    app = MemtuiApp(workspace, theme=chosen, remember_theme=remember, session=session)
    if theme and app.theme == theme:
        try:
            remember(theme)
        except OSError:
            pass
    app.run()
    return int(app.return_code or 0)
