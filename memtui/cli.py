"""The ``memtui`` command: ``memtui [PATH]`` opens the TUI; subcommands work headless.

Subcommands live in :mod:`memtui.commands` (one module each, discovered at start-up).
Textual is imported only when the TUI is opened, so headless commands start fast.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import pkgutil
import sys

from memtui import __version__
from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core.errors import ExternalError, MemtuiError, RefusedError, WorkspaceError, write_failure
from memtui.core.text import TerminalStream, guard_stream

#: The one map from exception to exit code (README "exit codes"): the first class that
#: matches wins. A command lets a :class:`MemtuiError` it cannot handle better propagate;
#: ``main`` prints its sentence and exits with this code.
EXIT_CODES: tuple[tuple[type[MemtuiError], ExitCode], ...] = (
    (WorkspaceError, ExitCode.USAGE),
    (RefusedError, ExitCode.REFUSED),
    (ExternalError, ExitCode.EXTERNAL),
    (MemtuiError, ExitCode.PROBLEM),
)


#: The system errors that are a sentence wherever a command meets them (a write's own guard
#: names the file; this is the net): a full disk or quota (exit 4), a read-only file system (3).
_SYSTEM_REFUSALS = (errno.ENOSPC, getattr(errno, "EDQUOT", 122), errno.EROFS)


def exit_code(exc: MemtuiError) -> ExitCode:
    """The exit code of ``exc`` (:data:`EXIT_CODES`)."""
    return next(code for kind, code in EXIT_CODES if isinstance(exc, kind))

_DESCRIPTION = """memtui: a terminal workbench for the memory of AI agents.

Run `memtui` to open a copy of the bundled sample workspace, or `memtui PATH` to open any
workspace (a folder with memory/, or any folder holding AGENTS.md files). The subcommands
below work without a terminal, for scripts and cron; each that works on a workspace takes
-w/--workspace PATH (all but `themes` and `secret`, which are yours, not a workspace's)."""


def _command_modules() -> list[str]:
    import memtui.commands as package

    return sorted(m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_"))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand found in :mod:`memtui.commands`, or of ``only`` that one
    (a command's module is named after it; importing just it keeps a CLI call ~0.35 s faster)."""
    parser = _common.Parser(
        prog="memtui", description=_DESCRIPTION, epilog=_common.EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"memtui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in ([only] if only else _command_modules()):
        module = importlib.import_module(f"memtui.commands.{name}")
        module.register(sub)
    return parser


def _tui_parser() -> argparse.ArgumentParser:
    parser = _common.Parser(
        prog="memtui", description=_DESCRIPTION, epilog=_common.EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?", metavar="PATH",
                        help="the workspace to open (default: your copy of the sample workspace)")
    parser.add_argument("--theme", metavar="NAME",
                        help="the colour theme (remembered for next time); see `memtui themes`")
    parser.add_argument("--read-only", action="store_true",
                        help="browse without writing anything (every change is refused)")
    parser.add_argument("--as", dest="as_profile", metavar="PROFILE",
                        help="act as this profile (default: $MEMTUI_PROFILE, else memtui.toml [user] profile)")
    parser.add_argument("--version", action="version", version=f"memtui {__version__}")
    return parser


#: The TUI's options that take a value (the value is not the PATH).
_TUI_VALUED = frozenset({"--theme", "--as"})


def _tui_path(argv: list[str]) -> str | None:
    """The first word of ``argv`` that is neither an option nor an option's value: the PATH
    the TUI would open (``memtui --theme nope PATH`` took ``nope`` for a mistyped command)."""
    words = iter(argv)
    for word in words:
        if word == "--":
            return next(words, None)
        if word.startswith("-"):
            if word in _TUI_VALUED:
                next(words, None)
            continue
        return word
    return None


def _tui_option(argv: list[str], option: str) -> str | None:
    """The value of the TUI's ``option`` in ``argv`` (``--theme X`` or ``--theme=X``), or ``None``."""
    for i, word in enumerate(argv):
        if word == "--":
            break
        if word == option and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(option + "="):
            return word.split("=", 1)[1]
    return None


def _reader_left() -> int:
    """The reader of standard output went away (``memtui graph list --json | head``).

    That is the reader's choice, not an error: stdout is pointed at the null device so the
    interpreter's final flush cannot raise again (Python's documented recipe, "Note on
    SIGPIPE"), and the exit code is 0 with nothing on standard error.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (tests)
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run memtui with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    Ctrl+C at any moment (also while the command's modules are still loading) ends with
    ``memtui: interrupted`` and exit code 130, never a traceback.
    """
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("memtui: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):  # a lone surrogate in any value is shown, never a crash
        guard_stream(stream)
    _common.json_errors(False)  # until a command's own --json says otherwise
    commands = set(_command_modules())
    first = next((a for a in argv if not a.startswith("-")), None)
    if argv and argv[0] in ("-h", "--help"):
        parser = build_parser()
        parser.print_help()
        print("\nTo open the TUI: memtui [PATH] [--theme NAME] [--read-only] [--as PROFILE]")
        return 0
    if first is not None and first in commands and argv[0] == first:
        parser = build_parser(only=first)
        sys.stdout = TerminalStream.wrap(sys.stdout)  # a terminal gets no escape
        args = parser.parse_args(argv)
        _common.json_errors(bool(getattr(args, "json", False)))
        try:
            code = int(args.func(args))
            sys.stdout.flush()  # a closed pipe shows here, inside the guard
            return code
        except BrokenPipeError:
            return _reader_left()
        except (MemtuiError, OSError) as exc:
            if not isinstance(exc, MemtuiError):  # a full disk or a read-only file system met anywhere
                sentence = write_failure(exc) if exc.errno in _SYSTEM_REFUSALS else None
                if sentence is None:
                    raise
                exc = sentence
            code = exit_code(exc)
            message = str(exc)
            if code is ExitCode.REFUSED and not message.lower().startswith("refused"):
                message = f"refused: {message}"
            try:
                _common.fail(message, code, exc.reference)
            except SystemExit as done:
                return int(done.code or 0)
    theme = _tui_option(argv, "--theme")
    if theme is not None:  # before the PATH: `memtui --theme nosuch audit` is the theme's problem
        from memtui.themes import theme_names

        names = theme_names()
        if theme not in names:
            _common.fail(f"--theme {theme} is not a theme; the themes are {', '.join(names)} "
                         "(`memtui themes` shows them)", ExitCode.USAGE)
    path = _tui_path(argv)
    if path is not None and path in commands and not os.path.exists(path):
        _common.fail(f"{path} is a command: the command comes first, its options after it "
                     f"(`memtui {path} --help`); --theme, --read-only and --as are for opening the TUI",
                     ExitCode.USAGE)
    if path is not None and path not in commands and not os.path.exists(path):
        import difflib

        near = difflib.get_close_matches(path, sorted(commands), n=1)
        if near:  # `memtui serch x` would otherwise try to open a folder named serch
            _common.fail(f"{path!r} is neither a command nor a folder; did you mean `memtui {near[0]}`? "
                         "(`memtui --help` lists the commands)", ExitCode.USAGE)
        if os.sep not in path and "/" not in path:  # a bare word; a path that is not there "does not exist"
            _common.fail(f"{path!r} is neither a command nor a folder (`memtui --help` lists the commands)",
                         ExitCode.USAGE)
    args = _tui_parser().parse_args(argv)
    from memtui.ui.launch import run_tui

    return run_tui(args.path, theme=args.theme, read_only=args.read_only, profile=args.as_profile)
