"""``memtui harvest CASE`` (or ``--since DATE``): the dreaming pass of a closed case — from its
papers (session histories, proposals, uses and verdicts, the searches it ran) what was learned,
what was reused and what was missing, each candidate classified (skill, article, experience,
index-line, or nothing with the reason). Candidates that belong to another domain than the
case's (``--domain``) are proposed to that domain with the evidence, once; ``--dry-run`` only
lists them."""

from __future__ import annotations

import argparse
import datetime as _dt

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import harvest


def _date(value: str) -> _dt.date:
    try:
        return _dt.date.fromisoformat(value.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a date written YYYY-MM-DD, not {value!r}") from None


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``harvest``."""
    p = sub.add_parser("harvest", help="the dreaming pass of a case: learned, reused, missing, classified",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p)
    p.add_argument("case", nargs="?", metavar="CASE", help="the case id (its session keys start with it)")
    p.add_argument("--since", type=_date, metavar="DATE",
                   help="harvest every case with papers from DATE (YYYY-MM-DD) on: the scheduled pass")
    p.add_argument("--domain", default="", metavar="NODE",
                   help="the case's own domain: candidates owned elsewhere are proposed to their domain")
    p.add_argument("--dry-run", action="store_true", help="list the candidates; propose nothing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if bool(args.case) == bool(args.since):
        _common.fail("give a CASE, or --since DATE for every case since then (not both)", ExitCode.USAGE)
    with _gov.session(args, "harvest") as s:
        cases = [args.case] if args.case else harvest.cases_since(s.ws, s.store, args.since)
        results = []
        for case in cases:
            result = harvest.harvest(s.ws, s.store, case, args.domain)
            if not args.dry_run and not s.read_only:
                harvest.file_requests(s, result)
            results.append(result)
    if args.case and not (results[0].papers.sessions or results[0].papers.proposals or results[0].papers.uses
                          or results[0].papers.pins):
        _common.fail(f"case {args.case} has no papers here: no session history, proposal, use or pin names it",
                     ExitCode.PROBLEM)
    if args.json:
        if args.case:
            _common.emit_json(results[0].to_json())
        else:
            _common.emit_json(_common.all_json("cases", [r.to_json() for r in results], since=args.since.isoformat()))
    else:
        for r in results:
            print(harvest.markdown(r))
        if not results:
            print(f"no case has papers from {args.since.isoformat()} on")
    return int(ExitCode.OK)
