"""What every subcommand shares: the workspace option, JSON output, exit codes, refusals.

Exit codes (the same for every command; ``memtui --help`` lists them):

====  =====================================================================================
0     success; for ``audit``: no error finding
1     the command ran and found a problem (error findings, a failed check, a conflict)
2     the workspace cannot be opened, or the command's words are wrong (usage)
3     refused: the action is not allowed (read-only workspace, not the owner, confinement)
4     an operation failed outside memtui (git, network, keyring)
====  =====================================================================================
"""

from __future__ import annotations

import argparse
import json
import sys
from enum import IntEnum
from typing import Any

from memtui.core.errors import WorkspaceError
from memtui.core.frontmatter import json_safe
from memtui.core.workspace import Workspace


class ExitCode(IntEnum):
    """Process exit codes, documented in ``memtui --help`` and the README."""

    OK = 0
    PROBLEM = 1
    USAGE = 2
    REFUSED = 3
    EXTERNAL = 4


EXIT_CODES_HELP = """exit codes (the same for every command):
  0  success (audit: no error finding)
  1  the command ran and found a problem (error findings, a failed check, a conflict)
  2  the workspace cannot be opened, or the command line is wrong
  3  refused: not allowed (read-only workspace, not the owner, outside the workspace)
  4  an operation outside memtui failed (git, network, keyring)"""


def add_workspace_arg(parser: argparse.ArgumentParser) -> None:
    """Add ``-w/--workspace PATH`` (default: the current folder)."""
    parser.add_argument("-w", "--workspace", default=".", metavar="PATH",
                        help="the workspace folder (default: the current folder)")


def add_json_arg(parser: argparse.ArgumentParser) -> None:
    """Add ``--json``: print machine-readable output instead of text."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def byte_count(value: str) -> int:
    """argparse type for a size in bytes (a whole number, 0 or more).

    Raises:
        argparse.ArgumentTypeError: with a sentence argparse prints as the usage error.
    """
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of bytes") from None
    if number < 0:
        raise argparse.ArgumentTypeError("the budget must be 0 bytes or more")
    return number


def open_workspace(args: argparse.Namespace) -> Workspace:
    """Open ``args.workspace``; on failure print the reason and exit with code 2."""
    try:
        return Workspace.open(args.workspace)
    except WorkspaceError as exc:
        fail(str(exc), ExitCode.USAGE)
        raise AssertionError("unreachable") from exc  # pragma: no cover


#: Set by :func:`json_errors` when the running command was given ``--json``.
_JSON_ERRORS = False


def json_errors(on: bool) -> None:
    """Make :func:`fail` also print ``{"ok": false, "error", "exit"}`` on standard output
    (called by ``memtui.cli.main`` with the command's ``--json``), so a script reading JSON
    gets an object for refusals and errors too."""
    global _JSON_ERRORS
    _JSON_ERRORS = bool(on)


def fail(message: str, code: ExitCode) -> None:
    """Print ``memtui: <message>`` to standard error and exit with ``code``; under ``--json``
    also ``{"ok": false, "error": message, "exit": code}`` on standard output."""
    print(f"memtui: {message}", file=sys.stderr)
    if _JSON_ERRORS:
        emit_json({"ok": False, "error": message, "exit": int(code)})
    raise SystemExit(int(code))


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON (dates and other non-JSON values made safe)."""
    json.dump(json_safe(data), sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def interactive() -> bool:
    """True when standard input is a terminal; commands never prompt otherwise."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
