"""``memtui refresh ARTICLE``: refresh ARTICLE's one-liner in its node index from the
article's `summary` (seed 000 §4 step 5 "refresh the node's AGENTS.md one-liners"): one
confirmed, audited write of the index line by the node's owner, no proposal (the index is
the owner's). `--undo` puts back the one-liner the last refresh replaced."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import consolidate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("refresh", help="refresh an article's index one-liner from its summary (owner only)",
                       description=__doc__, epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, confirm=True)
    p.add_argument("article", metavar="ARTICLE")
    p.add_argument("--undo", action="store_true", help="put back the one-liner the last refresh replaced")
    _gov.add_regression_args(p, reason=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with _gov.session(args, "refresh") as s:
        consolidate.check_owner(s, [args.article], "refresh the node's one-liners")
        what = "Put back the previous one-liner of" if args.undo else "Refresh the index one-liner of"
        ev = None if args.undo else _gov.evaluate(args, s, "refresh", article=args.article,
                                                            measure=consolidate.evaluate_refresh)
        _gov.confirm(args, s, f"{what} {args.article}")
        if args.undo:
            done = consolidate.undo_refresh_line(s, args.article)
        else:
            done = consolidate.refresh_line(s, args.article, accept_regression=_gov.accepted(args), evaluation=ev,
                                            progress=_gov._progress())
        _gov.reindex(s, done["article"])
        if args.json:
            _common.emit_json(done)
        else:
            print(f"{done['index']}:{done['line']}: {done['before']!r} -> {done['after']!r}")
    return ExitCode.OK
