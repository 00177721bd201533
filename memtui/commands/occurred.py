"""``memtui occurred ARTICLE``: record that a case met the symptom of an entry (an occurrence).

Occurrence, verified reuse and clean platform execution are distinct counters: an occurrence
says the symptom was seen again; it is not a use (`memtui use` records a reuse with its check
and verdict) and promotes nothing. A mirror, fork or subcase counts as the case it derives from.
Prints the entry's counters after recording; --client-id makes a retry record it once.
An experience entry's occurrences also count on its fix signature (its symptom, systems,
mechanism and fix shape): at the third distinct case the Consolidate area asks for a skill or
an article, at the seventh and the twentieth for refining it with the evidence of use."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import governance as gov


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("occurred", help="record that a case met an entry's symptom (an occurrence)",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p)
    p.add_argument("article", metavar="ARTICLE", help="the entry, relative to memory/")
    p.add_argument("--case", required=True, metavar="ID")
    p.add_argument("--source-request", required=True, metavar="ID")
    p.add_argument("--origin", default="independent", choices=gov.ORIGINS,
                   help="how the case relates to another (default: independent)")
    p.add_argument("--origin-of", metavar="CASE", help="the case it mirrors, forks or is a subcase of")
    p.add_argument("--symptom", default="", metavar="TEXT", help="what the case saw, in its words")
    p.add_argument("--client-id", metavar="ID",
                   help="an id for this request: a retry with the same id is not recorded twice; the same "
                        "id with another request is a conflict (exit 1)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.origin != "independent" and not (args.origin_of or "").strip():
        _common.fail(f"--origin {args.origin} needs --origin-of CASE (the case it is a {args.origin} of)",
                     ExitCode.USAGE)
    with _gov.session(args, "occurred") as s:
        record = gov.occurred(s, args.article, case=args.case, source_request=args.source_request,
                              origin=args.origin, origin_of=args.origin_of, symptom=args.symptom,
                              client_id=args.client_id)
        counts = gov.counters(s.store, record["article"])
        if args.json:
            _common.emit_json({"occurrence": record, "counters": counts.to_json()})
        else:
            print(f"recorded: case {record['case']} met the symptom of {record['article']}")
            print(f"{record['article']}: {counts.summary()}")
            _ladder_note(s, record["article"])
    return ExitCode.OK


def _ladder_note(session, article: str) -> None:  # noqa: ANN001 - Session
    """After an occurrence of an experience entry: its fix signature's case count and rung."""
    from memtui.core.consolidate import ladder

    rung = ladder.rung_of(session.ws, session.store, article)
    if rung is None:
        return
    print(f"{rung.count} case{'s' if rung.count != 1 else ''} share its fix signature now")
    if rung.step == ladder.STEPS[0]:
        print("the Consolidate area now asks for a skill or an article (`memtui consolidate --kind ladder`)")
    elif rung.step:
        print(f"{rung.step} or more cases: the Consolidate area asks to refine the skill or article")
