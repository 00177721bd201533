"""``memtui store``: check memtui's own store, and set a damaged one aside."""

from __future__ import annotations

import argparse

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core import store
from memtui.core.session import Session


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui store check`` and ``memtui store set-aside``."""
    parser = sub.add_parser(
        "store", help="check memtui's store (.memtui/store.json), or set a damaged one aside",
        description="memtui keeps versions, provenance and the audit log in .memtui/store.json. "
                    "A damaged store is never written over: `check` says where it breaks, and "
                    "`set-aside` renames it beside itself so a fresh store can start.",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    check = verbs.add_parser("check", help="say whether the store can be read (exit 1 when damaged)")
    _common.add_workspace_arg(check)
    _common.add_json_arg(check)
    check.set_defaults(func=run_check)
    aside = verbs.add_parser("set-aside", help="rename the store to store.json.damaged-<time> and start fresh")
    _common.add_workspace_arg(aside)
    aside.add_argument("-y", "--yes", action="store_true", help="do it without asking (required without a terminal)")
    aside.set_defaults(func=run_set_aside)


def run_check(args: argparse.Namespace) -> int:
    """0 readable (or absent), 1 damaged."""
    ws = _common.open_workspace(args)
    opened = store.Store.open(ws, read_only=True)
    if args.json:
        _common.emit_json({"store": str(opened.path), "exists": opened.path.exists(),
                           "damaged": opened.damaged, "tables": sorted(opened.tables()),
                           "findings": [f.to_json() for f in opened.findings]})
    elif opened.damaged:
        print(opened.reason)
    else:
        print(f"{opened.path}: readable; tables: {', '.join(sorted(opened.tables())) or 'none'}")
    return ExitCode.PROBLEM if opened.damaged else ExitCode.OK


def run_set_aside(args: argparse.Namespace) -> int:
    """0 set aside, 1 nothing to do, 3 refused (lock held, not confirmed)."""
    ws = _common.open_workspace(args)
    path = ws.state_dir / store.STORE_NAME
    if not path.exists():
        print(f"{path} does not exist; nothing to set aside")
        return ExitCode.PROBLEM
    _common.confirm(args, f"Rename {path} aside and start an empty store")
    with Session.open(ws, purpose="cli store set-aside") as session:
        moved, _entry = session.set_aside_store()
    print(f"the old store is kept, unchanged, as {moved}")
    return ExitCode.OK
