"""``memtui secret set|get|delete git-token|graph-token``: tokens in the OS keyring.

``get`` prints only whether the token is set and where (keyring or environment), never the
value. ``set`` reads the token from standard input (or a hidden prompt on a terminal), never
from the command line, where other users could see it in the process list.
Exit codes: 0 done, 1 (``get``) not set, 2 usage, 4 the keyring failed or did not answer
(the message names the fallback: ``MEMTUI_GIT_TOKEN``).
"""

from __future__ import annotations

import argparse
import getpass
import sys

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core import secrets


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui secret``."""
    parser = sub.add_parser(
        "secret", help="store, check or remove a token (git, remote graph) in the OS keyring",
        description="The git token for https backup remotes (git-token) and the bearer token of the remote "
                    "graph (graph-token) live in the OS keyring. Without a keyring (headless Linux), set "
                    "MEMTUI_GIT_TOKEN or MEMTUI_GRAPH_TOKEN in the environment instead; memtui never "
                    "writes a token to a file, and refuses a keyring backend that keeps it in a plain "
                    "file (keyrings.alt's default one).",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb, text in (("set", "store the token (read from standard input or a hidden prompt)"),
                       ("get", "say whether the token is set, and where (never prints it)"),
                       ("delete", "remove the token from the keyring")):
        p = verbs.add_parser(verb, help=text, description=text)
        p.add_argument("name", choices=sorted(secrets.NAMES), help="the secret")
        _common.add_json_arg(p)  # no -w: the keyring is the user's, not a workspace's
        p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """The keyring failing or not answering (exit 4, naming the fallback) reaches the CLI's
    exit-code table."""
    if args.verb == "get":
        found = secrets.get(args.name)
        if args.json:
            _common.emit_json({"name": args.name, "set": found.value is not None, "source": found.source,
                               "note": found.note})
        else:
            if found.note:
                print(f"note: {found.note}", file=sys.stderr)
            print(f"{args.name} is set (from the {found.source})" if found.value
                  else f"{args.name} is not set (keyring or {secrets.NAMES[args.name]})")
        return ExitCode.OK if found.value else ExitCode.PROBLEM
    if args.verb == "set":
        if _common.interactive():
            value = getpass.getpass(f"{args.name}: ")
        else:
            value = sys.stdin.readline().rstrip("\r\n")
        try:
            warning = secrets.set(args.name, value)
        except ValueError as exc:
            _common.fail(str(exc), ExitCode.USAGE)
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
        message = f"{args.name} stored in the keyring"
    else:
        message = f"{args.name} removed from the keyring" if secrets.delete(args.name) \
            else f"{args.name} was not in the keyring"
    if args.json:
        _common.emit_json({"name": args.name, "done": args.verb, "message": message})
    else:
        print(message)
    return ExitCode.OK
