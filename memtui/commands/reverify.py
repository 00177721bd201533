"""``memtui reverify ARTICLE``: record that a case re-verified ARTICLE's active version against
the running system (seed 000 §7.3 "re-verify before relying"), with the check and its
verdict, like a use; the case is pinned to the version. A pass makes a stale entry fresh
again (give --observed-version when the environment moved on); a contradiction also marks it
contested. Owner only. (`memtui retire ARTICLE` is the other way to settle a stale entry.)"""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import consolidate
from memtui.core import governance as gov


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reverify", help="record a re-verification of an entry (owner only)",
                       description=__doc__, epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p)
    p.add_argument("article", metavar="ARTICLE")
    p.add_argument("--case", required=True, metavar="ID")
    p.add_argument("--source-request", required=True, metavar="ID")
    p.add_argument("--verdict", required=True, choices=gov.VERDICTS)
    p.add_argument("--check", required=True, metavar="TEXT", help="the check performed against the running system")
    p.add_argument("--environment", metavar="NAME", help="where it was checked (default: the entry's)")
    p.add_argument("--observed-version", metavar="V", help="the version running there now")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with _gov.session(args, "reverify") as s:
        c = consolidate.reverify(
            s, args.article, case=args.case, source_request=args.source_request, verdict=args.verdict,
            check=args.check, environment=args.environment, observed_version=args.observed_version)
        marks = gov.Ledger(s.store).marks(c.article)
        if args.json:
            _common.emit_json({"check": c.to_json(), "marks": list(marks)})
        else:
            print(f"recorded: case {c.case} re-verified {c.version}: {c.verdict}"
                  + (f" [{', '.join(marks)}]" if marks else ""))
    return ExitCode.OK
