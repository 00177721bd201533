"""``memtui themes``: the colour themes available to ``memtui --theme NAME``: memtui's theme
files and Textual's built-in themes (the built-in ones were left out)."""

from __future__ import annotations

import argparse
import sys

from memtui import userconfig
from memtui.commands import _common
from memtui.commands._common import ExitCode


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui themes``."""
    parser = sub.add_parser("themes", help="list the colour themes (and which one is remembered)",
                            description="List the themes memtui --theme accepts: memtui's theme files "
                                        "(with any file that was rejected and why) and Textual's built-in "
                                        "themes.")
    _common.add_json_arg(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the theme names; exit 1 when a theme file was rejected."""
    from textual.theme import BUILTIN_THEMES

    from memtui.themes import load_themes  # imports Textual's colour parser, not the app

    loaded = load_themes()
    current = userconfig.get("theme")
    builtin = {name: theme for name, theme in BUILTIN_THEMES.items() if name not in loaded.themes}
    if args.json:
        _common.emit_json({"themes": sorted(loaded.themes), "builtin": sorted(builtin), "remembered": current,
                           "warnings": loaded.warnings})
    else:
        for source, themes in (("memtui", loaded.themes), ("textual", builtin)):
            for name, theme in sorted(themes.items()):
                mark = "*" if name == current else " "
                print(f"{mark} {name:24} {'dark' if theme.dark else 'light':6} {source}")
        for warning in loaded.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    return ExitCode.PROBLEM if loaded.warnings else ExitCode.OK
