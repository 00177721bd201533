"""``memtui use``: record that a case used a version (seed 000 §7.4b MEMORY_USES), with the
independent check performed and its verdict; the case is pinned to the version. Mere
retrieval is not a use. --execution says what the case did with the platform: `executed` a
write following the version (with a pass, a clean execution) or only `proposed` one (SQL, an
owner report: never counted as an execution). The entry's distinct counters (occurrences,
verified reuses, clean executions; a mirror, fork or subcase counts as its origin) are printed
after the use."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import governance as gov


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("use", help="record a case's use of a version (verdict pass or contradiction)",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p)
    p.add_argument("--version", required=True, metavar="ID", help="the version id (article@N)")
    p.add_argument("--case", required=True, metavar="ID")
    p.add_argument("--source-request", required=True, metavar="ID")
    p.add_argument("--origin", default="independent", choices=gov.ORIGINS,
                   help="how the case relates to another (default: independent)")
    p.add_argument("--origin-of", metavar="CASE", help="the case it mirrors, forks or is a subcase of")
    p.add_argument("--verdict", required=True, choices=gov.VERDICTS)
    p.add_argument("--check", required=True, metavar="TEXT", help="the independent check performed")
    p.add_argument("--execution", default="none", choices=gov.EXECUTIONS,
                   help="executed: the case executed a platform write following the version; proposed: it "
                        "only proposed one (SQL, an owner report); none (default): not recorded")
    p.add_argument("--hash", metavar="SHA256", help="the article hash the case saw (default: the version's)")
    p.add_argument("--client-id", metavar="ID",
                   help="an id for this request: a retry with the same id is not recorded twice; the same "
                        "id with another request is a conflict (exit 1)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.origin != "independent" and not (args.origin_of or "").strip():
        _common.fail(f"--origin {args.origin} needs --origin-of CASE (the case it is a {args.origin} of)",
                     ExitCode.USAGE)
    with _gov.session(args, "use") as s:
        u = gov.use(
            s, args.version, case=args.case, source_request=args.source_request, verdict=args.verdict,
            check=args.check, origin=args.origin, origin_of=args.origin_of, hash=args.hash,
            client_id=args.client_id, execution=args.execution)
        ledger = gov.Ledger(s.store)
        version = ledger.get(args.version)
        e = gov.eligibility(ledger, version)
        counts = gov.counters(s.store, version.article)
        if args.json:
            _common.emit_json({"use": u.to_json(), "eligibility": e.to_json(), "counters": counts.to_json()})
        else:
            print(f"recorded: case {u.case} used {u.version}: {u.verdict}")
            print(f"{u.version}: {e.summary}")
            print(f"{version.article}: {counts.summary()}")
    return ExitCode.OK
