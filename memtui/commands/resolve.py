"""``memtui resolve ARTICLE --why TEXT``: resolve the open contests of ARTICLE's active version,
naming why (the mark goes, the records stay with the resolution; seed 000 §4 step 5). A new
version clears the mark too. Owner only."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import consolidate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("resolve", help="resolve a contested article, naming why (owner only)",
                       description=__doc__, epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, confirm=True)
    p.add_argument("article", metavar="ARTICLE")
    p.add_argument("--why", required=True, help="why the contest is settled (recorded)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with _gov.session(args, "resolve") as s:
        consolidate.check_owner(s, [args.article], "resolve contested knowledge")
        _gov.confirm(args, s, f"Resolve the contests of {args.article}")
        done = consolidate.resolve(s, args.article, why=args.why)
        if done:
            _gov.reindex(s, done[0].article)
        if args.json:
            _common.emit_json(_common.all_json("resolved", [c.to_json() for c in done]))
        else:
            for c in done:
                print(f"resolved {c.id}: {args.why}")
    return ExitCode.OK
