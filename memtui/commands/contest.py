"""``memtui contest ARTICLE``: mark the active version of ARTICLE **contested** by a case or
another article, with a reason (seed 000 §4 step 5: contradictions are marked, never
deleted). It stays active; search hits, Tree rows, the boot preview and --json show the mark
until a new version is published or `memtui resolve` names why. Owner only."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import consolidate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("contest", help="mark an active article contested (owner only)",
                       description=__doc__, epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, confirm=True)
    p.add_argument("article", metavar="ARTICLE")
    p.add_argument("--reason", required=True, help="why it is contested")
    p.add_argument("--case", metavar="ID", help="the contradicting case")
    p.add_argument("--against", metavar="ARTICLE", help="the contradicting article")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not (args.case or args.against):
        _common.fail("name what contradicts it: --case ID or --against ARTICLE", ExitCode.USAGE)
    with _gov.session(args, "contest") as s:
        consolidate.check_owner(s, [args.article], "mark knowledge contested")
        _gov.confirm(args, s, f"Mark {args.article} contested")
        c = consolidate.contest(s, args.article, reason=args.reason, case=args.case,
                                                     against=args.against)
        _gov.reindex(s, c.article)
        if args.json:
            _common.emit_json(c.to_json())
        else:
            print(f"contested {c.version} ({c.id}): {c.reason}")
    return ExitCode.OK
