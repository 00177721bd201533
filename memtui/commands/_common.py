"""What every subcommand shares: the workspace option, JSON output, exit codes, refusals.

Exit codes (the same for every command; ``memtui --help`` lists them):

====  =====================================================================================
0     success; for ``audit``: no error finding
1     the command ran and found a problem (error findings, a failed check, a conflict)
2     the workspace cannot be opened, or the command's words are wrong (usage)
3     refused: the action is not allowed (read-only workspace, not the owner, confinement)
4     an operation failed outside memtui (git, network, keyring, a full disk)
====  =====================================================================================
"""

from __future__ import annotations

import argparse
import re
import sys
from enum import IntEnum
from typing import Any, Callable, NoReturn

from memtui.core.errors import WorkspaceError
from memtui.core.frontmatter import json_safe
from memtui.core.paging import Page
from memtui.core.text import cut_values, json_text
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
  3  refused: not allowed (read-only workspace or file system, not the owner, outside the workspace)
  4  an operation outside memtui failed (git, network, keyring, a full disk)"""


def add_workspace_arg(parser: argparse.ArgumentParser,
                      help: str = "the workspace folder (default: the current folder)") -> None:
    """Add ``-w/--workspace PATH`` (default: the current folder); ``help`` says what it is
    for where that is not the obvious (``restore``: only its memtui.toml settings)."""
    parser.add_argument("-w", "--workspace", default=".", metavar="PATH", help=help)


def described(doc: str | None) -> str:
    """A module docstring as a ``--help`` description: reST ````literals```` shown as
    `literals`, as in the rest of memtui's help."""
    return re.sub(r"``(.+?)``", r"`\1`", doc or "", flags=re.S)


def add_json_arg(parser: argparse.ArgumentParser) -> None:
    """Add ``--json``: print machine-readable output instead of text."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


class Parser(argparse.ArgumentParser):
    """The parser of ``memtui`` and of every subcommand (``memtui.cli`` makes the top-level
    one; ``add_subparsers`` hands the class down to every subcommand and verb).

    A usage error exits 2. An option the command does not know is named together with the
    options it does know (argparse's own "unrecognized arguments" named neither the
    command nor what it takes): ``memtui themes -w X`` says that ``themes`` takes
    ``-h/--help, --json``.
    """

    def parse_known_args(self, args=None, namespace=None):  # noqa: ANN001, ANN201 - argparse's signature
        """As argparse's, but nothing is left over: an unknown word is this command's usage
        error (argparse hands a subcommand's leftovers to the top-level parser, which no
        longer knows which command they were meant for)."""
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(self.unknown(extras))
        return namespace, extras

    def unknown(self, extras: list[str]) -> str:
        """The sentence for words this command does not take: the unknown options (or the
        extra arguments), then every option it knows."""
        options = [word for word in extras if word.startswith("-") and word != "-"]
        if options:
            names = [word.split("=", 1)[0] for word in options]
            what = f"unknown option{'s' if len(names) > 1 else ''} {', '.join(names)}"
        else:
            what = f"unexpected argument{'s' if len(extras) > 1 else ''} {' '.join(map(repr, extras))}"
        return f"{what}; {self.prog} takes {self.known()} (see {self.prog} --help)"

    def known(self) -> str:
        """``-w/--workspace PATH, --json, ...`` and the verbs, as one phrase."""
        options: list[str] = []
        verbs: list[str] = []
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                verbs.extend(action.choices)
            elif action.option_strings and action.help is not argparse.SUPPRESS:
                names = "/".join(action.option_strings)
                if action.nargs != 0:
                    metavar = action.metavar or action.dest.upper()
                    names += " " + (" ".join(metavar) if isinstance(metavar, tuple) else metavar)
                options.append(names)
        text = "the options " + ", ".join(options) if options else "no options"
        if verbs:
            text += " and one of " + ", ".join(verbs)
        return text

    def hint(self, message: str) -> str:  # noqa: ARG002 - a subclass looks at the message
        """An extra line after a usage error (none here; see ``memtui graph``)."""
        return ""

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print the usage and ``PROG: error: MESSAGE`` (and any :meth:`hint`); exit 2. A
        missing verb names the verbs."""
        verbs = [name for a in self._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices]
        if verbs and message.startswith("the following arguments are required"):
            message += f"; {self.prog} takes one of {', '.join(verbs)}"
        self.print_usage(sys.stderr)
        hint = self.hint(message)
        self.exit(int(ExitCode.USAGE), f"{self.prog}: error: {message}\n" + (f"{self.prog}: hint: {hint}\n" if hint else ""))


def whole_number(low: int, high: int | None = None, *, unit: str = "",
                 off: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number from ``low`` to ``high`` (no upper bound when
    ``None``); ``off`` is one more accepted value meaning "none" (``--folds 0``).

    A number out of range is a usage error naming the range (argparse names the option):
    ``argument --limit: must be a whole number of 1 or more, not '0'``. It is never
    replaced by the nearest allowed value (seed 004: a clamped ``--limit 0`` hid the log).
    """
    if high is None:
        span = f"of {low}{unit} or more"
    else:
        span = f"from {low} to {high}{unit}"
    if off is not None:
        span += f" ({off} for none)"

    def parse(value: str) -> int:
        try:
            number = int(value.strip())
        except ValueError:
            number = None
        if number is None or not (number == off or (low <= number and (high is None or number <= high))):
            raise argparse.ArgumentTypeError(f"must be a whole number {span}, not {value!r}")
        return number

    parse.__name__ = f"whole number {span}"
    return parse


#: ``--limit``, ``--k``, version and line numbers: 1 or more.
positive_int = whole_number(1)
#: Sizes in bytes (``--budget``): 0 or more.
byte_count = whole_number(0, unit=" bytes")


def probability(value: str) -> float:
    """argparse ``type`` for a probability strictly between 0 and 1 (``--likely``).

    Raises:
        argparse.ArgumentTypeError: with the accepted range.
    """
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not 0.0 < number < 1.0:  # also false for nan
        raise argparse.ArgumentTypeError(f"must be a probability between 0 and 1 (both excluded), not {value!r}")
    return number


#: Items on one page of a list unless ``--limit`` says otherwise.
PAGE_SIZE = 100


def add_page_args(parser: argparse.ArgumentParser, what: str, default: int = PAGE_SIZE) -> None:
    """``--limit N`` (1 or more) and ``--cursor C`` (from the previous page) for a list of
    ``what`` (plural noun) that can be longer than one page."""
    parser.add_argument("--limit", type=positive_int, default=default, metavar="N",
                        help=f"at most N {what} on a page (default {default})")
    parser.add_argument("--cursor", type=cursor, default=None, metavar="C",
                        help="the page after the one whose JSON `cursor` (or text footer) gave C")


def cursor(value: str) -> int:
    """argparse ``type`` for ``--cursor``: the ``cursor`` a previous page gave.

    Raises:
        argparse.ArgumentTypeError: not a cursor memtui gives out.
    """
    text = value.strip()
    if not text.isdigit() or not text.isascii():
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a cursor memtui gave; pass the `cursor` of the previous page as it is")
    return int(text)


def page_json(name: str, page: Page[Any], items: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    """The JSON of one page: ``{name: [...], "count": on this page, "total": in the whole
    filtered list, "cursor": the next page's --cursor or null}`` and ``extra`` keys first.
    ``items`` are the JSON of ``page.items`` (default: the items themselves)."""
    shown = list(page.items if items is None else items)
    return {**extra, name: shown, "count": len(shown), "total": page.total,
            "cursor": None if page.next is None else str(page.next)}


def all_json(name: str, items: list[Any], **extra: Any) -> dict[str, Any]:
    """:func:`page_json` of a list shown whole (an action's results): count = total, no cursor."""
    return page_json(name, Page(list(items), len(items)), **extra)


def print_more(page: Page[Any], what: str) -> None:
    """Under a text list, on standard error: how many of how many were shown and the
    ``--cursor`` of the rest (nothing when the page holds the whole list)."""
    if page.next is not None:
        print(f"{len(page.items)} of {page.total} {what} shown; the next page: --cursor {page.next}",
              file=sys.stderr)


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


def fail(message: str, code: ExitCode, reference: str | None = None) -> NoReturn:
    """Print ``memtui: <message>`` to standard error and exit with ``code``; under ``--json``
    also ``{"ok": false, "error": message, "exit": code}`` on standard output, with
    ``"reference"`` (where the rule is written) when one is given."""
    print(f"memtui: {message}", file=sys.stderr)
    if _JSON_ERRORS:
        data: dict[str, Any] = {"ok": False, "error": message, "exit": int(code)}
        if reference:
            data["reference"] = reference
        emit_json(data)
    raise SystemExit(int(code))


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON (dates and other non-JSON values made safe), valid
    UTF-8 whatever the names in it, each string value bounded (:func:`memtui.core.text.cut_values`)."""
    sys.stdout.write(json_text(cut_values(json_safe(data))))
    sys.stdout.write("\n")


def interactive() -> bool:
    """True when standard input is a terminal; commands never prompt otherwise."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def confirm(args: Any, question: str) -> None:
    """Ask ``question`` ("Retire x as p") before a change, unless ``--yes`` was given.

    The one confirmation of every command. Without a terminal to ask on (a script, cron, an
    agent) and without ``--yes`` the command line is incomplete: exit 2 (usage), naming the flag.
    An answer other than ``y``/``yes`` cancels: exit 3, nothing changed.

    Raises:
        SystemExit: 2 with no terminal and no ``--yes``; 3 when the person declines.
    """
    if getattr(args, "yes", False):
        return
    if not interactive():
        fail(f"{question}: this needs confirmation and standard input is not a terminal, so memtui "
             "does not ask; add --yes to confirm. Nothing was changed.", ExitCode.USAGE)
    answer = input(f"{question}? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        fail("cancelled; nothing was changed.", ExitCode.REFUSED)
