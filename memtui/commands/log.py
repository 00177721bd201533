"""``memtui log``: the audit log, newest first (DESIGN.md §4 invariant 7)."""

from __future__ import annotations

import argparse
import sys

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core.auditlog import AuditLog
from memtui.core.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui log``."""
    parser = sub.add_parser(
        "log", help="the audit log: every write memtui made, newest first",
        description="Print the audit log kept in .memtui/store.json: time (UTC), acting profile, action, "
                    "target, content hashes before and after, and the client id of each write. "
                    "Reading the log needs no lock. The log is paged: --limit entries a page, and the "
                    "page's cursor (JSON `cursor`, or the footer on standard error) gives the older ones "
                    "with --cursor; entries written meanwhile never shift a page.",
        epilog=_common.EXIT_CODES_HELP + "\n  (log: 1 when the store is damaged)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(parser)
    _common.add_json_arg(parser)
    _common.add_page_args(parser, "entries")
    parser.set_defaults(func=run)


def _short(value: str | None) -> str:
    return "absent" if value is None else value[:12]


def run(args: argparse.Namespace) -> int:
    """Print the log; 0 ok, 1 the store is damaged (the finding says where), 2 cannot open."""
    ws = _common.open_workspace(args)
    store = Store.open(ws, read_only=True)
    page = AuditLog(store).page(args.limit, before=args.cursor)
    entries = page.items
    if args.json:
        _common.emit_json(_common.page_json(
            "entries", page, [e.to_json() for e in entries],
            store=str(store.path), findings=[f.to_json() for f in store.findings]))
    else:
        for f in store.findings:
            print(f"memtui: {f.place}: {f.severity.value}: [{f.code}] {f.message}", file=sys.stderr)
            if f.fix:
                print(f"    fix: {f.fix}", file=sys.stderr)
        for e in entries:
            print(f"{e.time}  {e.profile or '-'}  {e.action}  {e.target}  "
                  f"{_short(e.before)} -> {_short(e.after)}  client {e.client_id}")
        _common.print_more(page, "entries")
        if not page.total and not store.findings:
            print("the audit log is empty", file=sys.stderr)
        elif not entries and args.cursor is not None:
            print(f"no entries older than entry {args.cursor} (the log holds {page.total})", file=sys.stderr)
    store.close()
    return ExitCode.PROBLEM if store.damaged else ExitCode.OK
