"""``memtui merge KEEP DROP``: file the merge of DROP into KEEP (seed 000 §4 step 5): a proposal
for KEEP carrying DROP's title, aliases and links. Approving it (`memtui proposals approve`,
or the Proposals area) retires DROP and leaves a redirect line to KEEP in DROP's node index,
so old links still lead somewhere; rejecting it undoes the merge. Owner of both nodes only."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import consolidate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("merge", help="propose merging a duplicate article into another (owner only)",
                       description=__doc__, epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, confirm=True)
    p.add_argument("keep", metavar="KEEP", help="the article that stays (memory-relative)")
    p.add_argument("drop", metavar="DROP", help="the article merged into it and retired")
    p.add_argument("--reason", default="", help="why they are the same (recorded)")
    p.add_argument("--case", metavar="ID", help="the case that found the duplicate, if any")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with _gov.session(args, "merge") as s:
        consolidate.check_owner(s, [args.keep, args.drop], "merge articles")
        _gov.confirm(args, s, f"Propose merging {args.drop} into {args.keep}")
        v = consolidate.merge(s, args.keep, args.drop, reason=args.reason, case=args.case)
        if args.json:
            _common.emit_json(v.to_json(content=False))
        else:
            merge = v.merge or {}
            print(f"proposed {v.id}: merges {merge.get('retire_version')} into {v.article}")
            print(f"approve it to retire {merge.get('retire')}: memtui proposals approve {v.id} --reviewed")
    return ExitCode.OK
