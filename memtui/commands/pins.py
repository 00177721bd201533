"""``memtui pins``: version pinning (seed 000 §7.4b). `--case ID` lists the versions a case
relied on, each with its state now (active, retired, contested); `--version ARTICLE@N` lists
the cases that pinned a version, so a retraction shows which past cases leaned on the
retracted text. Read-only."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.core.paging import Page
from memtui.commands._common import ExitCode
from memtui.core import consolidate
from memtui.core import governance as gov
from memtui.core.text import visible


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pins", help="what a case relied on, or which cases relied on a version",
                       description=__doc__, epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, acting=False)
    # required by hand in run(): argparse would report a missing group before an unknown option
    which = p.add_mutually_exclusive_group()
    which.add_argument("--case", metavar="ID", help="the versions this case relied on")
    which.add_argument("--version", metavar="ID", help="the cases that pinned this version (article@N)")
    _common.add_page_args(p, "pins")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.case is None and args.version is None:
        _common.fail("give --case ID (what a case relied on) or --version ID (who pinned it)", ExitCode.USAGE)
    with _gov.reading(args, "pins") as s:
        ledger = gov.Ledger(s.store)
        if args.case is not None:
            pins = consolidate.case_pins(ledger, args.case)
        else:
            pins = consolidate.version_pins(ledger, args.version)
    listed = Page.of(pins, args.cursor or 0, args.limit)
    if args.json:
        _common.emit_json(_common.page_json("pins", listed, [p.to_json() for p in listed.items]))
        return ExitCode.OK
    if not pins:
        print(f"no pins for {'case ' + args.case if args.case is not None else args.version}")
    for p in listed.items:
        first = p.version if args.case is not None else f"case {p.case}"
        seen = "" if p.same_content else "  (saw another hash)"
        print(f"{visible(first)}  {p.status}  pinned {p.time}{seen}")
    _common.print_more(listed, "pins")
    return ExitCode.OK
