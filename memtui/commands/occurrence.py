"""``memtui occurrence ENTRY --case C --source-request R``: record that a case met the fix
signature of an experience entry (its symptom, systems, mechanism and fix shape). The ladder
counts the distinct cases of each signature: at the third the Consolidate area asks for a skill
or an article, at the seventh and the twentieth for refining it with the evidence of use.
A wrong claim is corrected at once with ``memtui contest`` instead."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core.consolidate import ladder


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("occurrence", help="record that a case met an experience entry's fix signature",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p)
    p.add_argument("entry", metavar="ENTRY", help="the experience entry, relative to memory/")
    p.add_argument("--case", required=True, metavar="ID", help="the case that met it")
    p.add_argument("--source-request", required=True, metavar="ID", help="the case's source-request id")
    p.add_argument("--client-id", metavar="ID", help="an id for this request (a retry is not counted twice)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with _gov.session(args, "occurrence") as s:
        done = ladder.record(s, args.entry, case=args.case, source_request=args.source_request,
                             client_id=args.client_id)
    if args.json:
        _common.emit_json(done)
        return ExitCode.OK
    print(f"recorded: case {args.case} met the fix signature of {args.entry} ({done['count']} "
          f"case{'s' if done['count'] != 1 else ''} now)")
    if done["step"] == ladder.STEPS[0]:
        print("the Consolidate area now asks for a skill or an article (`memtui consolidate --kind ladder`)")
    elif done["step"]:
        print(f"{done['step']} or more cases: the Consolidate area asks to refine the skill or article")
    return ExitCode.OK
