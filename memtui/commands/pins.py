"""``memtui pins``: version pinning (seed 000 §7.4b). `--case ID` lists the versions a case
relied on, each with its state now (active, retired, contested); `--version ARTICLE@N` lists
the cases that pinned a version, so a retraction shows which past cases leaned on the
retracted text. Read-only."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import consolidate
from memtui.core import governance as gov
from memtui.core.session import Session
from memtui.core.text import visible


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pins", help="what a case relied on, or which cases relied on a version",
                       description=__doc__, epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, acting=False)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--case", metavar="ID", help="the versions this case relied on")
    which.add_argument("--version", metavar="ID", help="the cases that pinned this version (article@N)")
    _common.add_page_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ws = _common.open_workspace(args)
    with Session.open(ws, purpose="cli pins", read_only=True) as s:
        ledger = gov.Ledger(s.store)
        if args.case is not None:
            pins = _gov.guarded(lambda: consolidate.case_pins(ledger, args.case))
        else:
            pins = _gov.guarded(lambda: consolidate.version_pins(ledger, args.version))
    listed = _common.page(pins, args.limit, args.cursor)
    if args.json:
        _common.emit_json({**listed, "items": [p.to_json() for p in listed["items"]]})
        return ExitCode.OK
    if not pins:
        print(f"no pins for {'case ' + args.case if args.case is not None else args.version}")
    for p in listed["items"]:
        first = p.version if args.case is not None else f"case {p.case}"
        seen = "" if p.same_content else "  (saw another hash)"
        print(f"{visible(first)}  {p.status}  pinned {p.time}{seen}")
    if listed["cursor"]:
        print(f"(showing {listed['count']} of {listed['total']}; next page: --cursor {listed['cursor']})")
    return ExitCode.OK
