"""``memtui use``: record that a case used a version (seed 000 §7.4b MEMORY_USES), with the
independent check performed and its verdict; the case is pinned to the version. Mere
retrieval is not a use. --execution says what the case did with the platform: `executed` a
write following the version (with a pass, a clean execution) or only `proposed` one (SQL, an
owner report: never counted as an execution). The entry's distinct counters (occurrences,
verified reuses, clean executions; a mirror, fork or subcase counts as its origin) are printed
after the use.

``--skill NAME@N`` (repeatable) pins the skill versions the case ran (a
running case keeps the version it started with); with one ``--skill``, ``--verdict`` and
``--check`` it is also a use that counts for that version's two-uses rule."""

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
    # --version, --verdict and --check are required for an article (checked in run()); --skill pins skills
    p.add_argument("--version", metavar="ID", help="the version id (article@N)")
    p.add_argument("--skill", action="append", default=[], metavar="NAME@N",
                   help="a skill version the case ran (repeatable): pinned to the case")
    p.add_argument("--case", required=True, metavar="ID")
    p.add_argument("--source-request", required=True, metavar="ID")
    p.add_argument("--origin", default="independent", choices=gov.ORIGINS,
                   help="how the case relates to another (default: independent)")
    p.add_argument("--origin-of", metavar="CASE", help="the case it mirrors, forks or is a subcase of")
    p.add_argument("--verdict", choices=(*gov.VERDICTS, "skill-defect"),
                   help="pass or contradiction; skill-defect (with --skill) when the skill failed the case")
    p.add_argument("--check", metavar="TEXT", help="the independent check performed")
    p.add_argument("--execution", default="none", choices=gov.EXECUTIONS,
                   help="executed: the case executed a platform write following the version; proposed: it "
                        "only proposed one (SQL, an owner report); none (default): not recorded")
    p.add_argument("--hash", metavar="SHA256", help="the article hash the case saw (default: the version's)")
    p.add_argument("--client-id", metavar="ID",
                   help="an id for this request: a retry with the same id is not recorded twice; the same "
                        "id with another request is a conflict (exit 1)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.skill and args.version is None:
        return _skills(args)
    missing = [name for name, value in (("--version", args.version), ("--verdict", args.verdict),
                                        ("--check", args.check)) if value is None]
    if missing:
        _common.fail(f"a use of an article needs {', '.join(missing)} (or give --skill NAME@N to pin skills)",
                     ExitCode.USAGE)
    if args.skill:
        _common.fail("give --skill in a use of its own, without --version", ExitCode.USAGE)
    if args.verdict == "skill-defect":
        _common.fail("skill-defect is a verdict on a skill version: give --skill NAME@N", ExitCode.USAGE)
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


def _skills(args: argparse.Namespace) -> int:
    from memtui.core.skills import versions as sv

    if args.verdict is not None and len(args.skill) > 1:
        _common.fail("a verdict is recorded for one skill version at a time; give one --skill with --verdict",
                     ExitCode.USAGE)
    if (args.verdict is None) != (args.check is None):
        _common.fail("give --verdict and --check together (or neither, to pin only)", ExitCode.USAGE)
    done = []
    with _gov.session(args, "use") as s:
        for ref in args.skill:
            done.append(sv.use(s, ref, case=args.case, source_request=args.source_request, verdict=args.verdict,
                               check=args.check, client_id=args.client_id if len(args.skill) == 1 else None))
    if args.json:
        _common.emit_json({"skills": done})
    else:
        for d in done:
            pin = d["pin"]
            tail = f": {d['use']['verdict']}" if d["use"] else ""
            print(f"pinned: case {pin['case']} ran {pin['version']} (content {pin['hash'][:12]}){tail}")
    if args.verdict == "skill-defect":
        _defect_note(args)
    return ExitCode.OK


def _defect_note(args: argparse.Namespace) -> None:
    """After a skill-defect use: what the case closes with, and after two attempts, ask the owner."""
    from memtui.core.consolidate.defects import defect_cases
    from memtui.core.governance import owner_of

    with _gov.reading(args, "use") as s:
        name = args.skill[0].removeprefix("skill:").split("@", 1)[0]
        item = next((d for d in defect_cases(s.store) if d.case == args.case.strip() and d.skill == name), None)
        owner = owner_of(s.ws, item.node)[0] if item is not None else None
    if item is None:
        return
    if item.ask_owner:
        print(f"{len(item.versions)} attempts failed: ask the owner of {name} ({owner or 'nobody owns it'}) "
              "rather than trying a third time")
    if item.missing:
        print(f"case {item.case} closes with {', '.join(item.missing)}")
