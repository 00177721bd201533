"""``memtui rollback ARTICLE --to N``: publish a new version holding version N's content,
with provenance naming the rollback; nothing earlier is edited (seed 000 §7.4b). Owner only."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import governance as gov


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rollback", help="publish an earlier accepted version again, as a new version",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, confirm=True)
    p.add_argument("article", metavar="ARTICLE")
    p.add_argument("--to", type=_common.positive_int, required=True, metavar="N",
                   help="the version number (1 or more) whose content comes back")
    p.add_argument("--reason", default="", help="why, recorded with the new version")
    _gov.add_regression_args(p, reason=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with _gov.session(args, "rollback") as s:
        gov.check_rollback(s, args.article, args.to)  # refused before asking
        ev = _gov.evaluate(args, s, "rollback", article=args.article, to=args.to)
        _gov.confirm(args, s, f"Roll {args.article} back to version {args.to}")
        v = gov.rollback(s, args.article, args.to, args.reason, accept_regression=_gov.accepted(args),
                         evaluation=ev, progress=_gov._progress())
        _gov.reindex(s, v.article)
        if args.json:
            _common.emit_json(v.to_json(content=False))
        else:
            print(f"published {v.id} with the content of version {args.to}")
    return ExitCode.OK
