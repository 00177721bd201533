"""``memtui log``: the audit log, newest first (DESIGN.md §4 invariant 7)."""

from __future__ import annotations

import argparse
import sys

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core.auditlog import AuditEntry, AuditLog, verify
from memtui.core.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui log``."""
    parser = sub.add_parser(
        "log", help="the audit log: every write memtui made, newest first",
        description="Print the audit log kept in .memtui/store.json: time (UTC), acting profile, action, "
                    "target, content hashes before and after, and the client id of each write. "
                    "Reading the log needs no lock. The log is paged: --limit entries a page, and the "
                    "page's cursor (JSON `cursor`, or the footer on standard error) gives the older ones "
                    "with --cursor; entries written meanwhile never shift a page. Each entry records the "
                    "claimed profile (--as) and, beside it, the OS user and host that made it.\n\n"
                    "The log is a hash chain: every entry carries the hash of the one before it. "
                    "--verify walks the chain and names the first entry that was changed, removed or "
                    "cut off the end outside memtui (exit 1); entries written by an older memtui "
                    "predate the chain and are reported as such.",
        epilog=_common.EXIT_CODES_HELP + "\n  (log: 1 when the store is damaged, or --verify finds a break)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(parser)
    _common.add_json_arg(parser)
    _common.add_page_args(parser, "entries")
    parser.add_argument("--verify", action="store_true",
                        help="check the hash chain instead of listing: name the first changed, removed "
                             "or cut-off entry (exit 1 when there is one)")
    parser.set_defaults(func=run)


def _short(value: str | None) -> str:
    return "absent" if value is None else value[:12]


def _by(entry: AuditEntry) -> str:
    return f"{entry.os_user or '?'}@{entry.host or '?'}" if entry.os_user or entry.host else "-"


def _verify(args: argparse.Namespace, store: Store) -> int:
    """``log --verify``: 0 the chain holds, 1 it is broken or the store is damaged."""
    try:
        report = None if store.damaged else verify(store)
    finally:
        store.close()
    if args.json:
        _common.emit_json({"store": str(store.path), "verify": report.to_json() if report else None,
                           "findings": [f.to_json() for f in store.findings]})
    elif report is None:
        for f in store.findings:
            print(f"memtui: {f.place}: {f.severity.value}: [{f.code}] {f.message}", file=sys.stderr)
    elif report.ok:
        print(f"the audit log's chain holds: {report.summary()}")
    else:
        print(f"memtui: .memtui/store.json: error: [audit-log-broken] {report.summary()}", file=sys.stderr)
    return ExitCode.OK if report is not None and report.ok else ExitCode.PROBLEM


def run(args: argparse.Namespace) -> int:
    """Print the log; 0 ok, 1 the store is damaged (the finding says where), 2 cannot open."""
    ws = _common.open_workspace(args)
    store = Store.open(ws, read_only=True)
    if args.verify:
        return _verify(args, store)
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
            print(f"{e.seq if e.seq is not None else '-'}  {e.time}  {e.profile or '-'}  {_by(e)}  {e.action}  {e.target}  "
                  f"{_short(e.before)} -> {_short(e.after)}  client {e.client_id}")
        _common.print_more(page, "entries")
        if not page.total and not store.findings:
            print("the audit log is empty", file=sys.stderr)
        elif not entries and args.cursor is not None:
            print(f"no entries older than entry {args.cursor} (the log holds {page.total})", file=sys.stderr)
    store.close()
    return ExitCode.PROBLEM if store.damaged else ExitCode.OK
