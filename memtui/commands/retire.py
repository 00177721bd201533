"""``memtui retire ARTICLE``: retire the active version; the article and its node index line
leave the tree, the record stays (seed 000 §7.4b). Owner only; --reason is required and
recorded with the retirement."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import governance as gov


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("retire", help="retire an article's active version (owner only)",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, confirm=True)
    p.add_argument("article", metavar="ARTICLE", help="the article, relative to memory/")
    p.add_argument("--reason", default="", help="why the version leaves the tree (required; recorded with "
                                                "the retirement and in the audit log)")
    _gov.add_regression_args(p, reason=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.reason.strip():
        _common.fail("retire needs a reason: add --reason TEXT saying why the version leaves the tree "
                     "(it is recorded with the retirement). Nothing was retired.", ExitCode.USAGE)
    with _gov.session(args, "retire") as s:
        ev = _gov.evaluate(args, s, "retire", article=args.article)
        _gov.confirm(args, s, f"Retire {args.article}")
        v = gov.retire(s, args.article, args.reason, accept_regression=_gov.accepted(args), evaluation=ev,
                       progress=_gov._progress())
        _gov.reindex(s, v.article)
        if args.json:
            _common.emit_json(v.to_json(content=False))
        else:
            print(f"retired {v.id}")
    return ExitCode.OK
