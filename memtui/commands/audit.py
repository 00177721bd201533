"""``memtui audit``: every finding in a workspace.

``memtui audit allow CODE PLACE --reason R`` marks the secret or personal-data finding(s) at
``PLACE`` (``PATH:LINE`` as the audit prints it, or ``PATH``) as false positives: a governed
write (audit log entry ``audit.allow``, kept in the store); the next audit and backup leave
them out. ``memtui audit --allowed`` lists the allowances.
"""

from __future__ import annotations

import argparse
import sys

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core import audit
from memtui.core.findings import CODES, REFERENCES, Severity
from memtui.core.text import visible


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui audit``."""
    parser = sub.add_parser(
        "audit", help="list every finding in the workspace (exit 1 when any is an error)",
        description="Walk the whole workspace and list every finding: index drift, unlisted articles, "
                    "bad front matter, non-UTF-8 or oversized files, links and symbolic links leaving the "
                    "workspace, nodes without an owner, and more (`--codes` lists them all).",
        epilog=_common.EXIT_CODES_HELP + "\n  (audit: 0 no error finding, 1 at least one error, 2 cannot open)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(parser)
    _common.add_json_arg(parser)
    parser.add_argument("--severity", choices=[s.value for s in Severity], default="info",
                        help="show findings of this severity and worse (default: info, i.e. all)")
    parser.add_argument("--codes", action="store_true", help="list every finding code (its severity, meaning, and where its rule is written) and exit")
    parser.add_argument("verb", nargs="?", choices=["allow"],
                        help="allow CODE PLACE: mark a secret/personal-data finding as a false positive")
    parser.add_argument("code", nargs="?", help="with allow: the finding code (secret, pii-email, …)")
    parser.add_argument("place", nargs="?", help="with allow: PATH:LINE (or PATH) as the audit shows it")
    parser.add_argument("--reason", help="with allow: why it is no secret (kept with the allowance)")
    parser.add_argument("--as", dest="as_profile", metavar="PROFILE", help="with allow: the acting profile")
    parser.add_argument("--client-id", metavar="ID", help="with allow: an id that makes a retry do nothing twice")
    parser.add_argument("--allowed", action="store_true", help="list the allowed findings and exit")
    parser.add_argument("--offline", action="store_true",
                        help="read nothing over the network: a remote graph's findings come from its last read "
                             "kept (said so, with its time); without it the remote graph is read within "
                             "[graph] timeout, and a failed read falls back to that last read the same way")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the findings; exit 0 (no error), 1 (errors) or 2 (cannot open)."""
    if args.codes:
        if args.json:
            _common.emit_json({"codes": [
                {"code": code, "severity": severity.value, "meaning": meaning, "reference": REFERENCES.get(code)}
                for code, (severity, meaning) in CODES.items()]})
            return ExitCode.OK
        for code, (severity, meaning) in CODES.items():
            reference = REFERENCES.get(code)
            print(f"{code:28} {severity.value:8} {meaning}" + (f" [{reference}]" if reference else ""))
        return ExitCode.OK
    if args.verb == "allow":
        return _allow(args)
    ws = _common.open_workspace(args)
    if args.allowed:
        return _list_allowed(args, ws)
    show_progress = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int) -> None:
        print(f"\rauditing: {done}/{total} nodes", end="", file=sys.stderr, flush=True)

    report = audit.run(ws, progress if show_progress else None, offline=args.offline)
    if show_progress:
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
    limit = Severity(args.severity).rank
    shown = [f for f in report.findings if f.severity.rank <= limit]
    if args.json:
        _common.emit_json({
            "workspace": str(ws.root), "nodes": report.nodes, "articles": report.articles,
            "counts": report.counts, "seconds": round(report.seconds, 3),
            "findings": [f.to_json() for f in shown], "allowed": len(report.allowed),
        })
    else:
        for f in shown:
            print(f"{visible(f.place)}: {f.severity.value}: [{f.code}] {visible(f.message)}")
            if f.fix:
                print(f"    fix: {visible(f.fix)}")
        print(f"{report.summary()} ({report.seconds:.2f} s)")
    return ExitCode.PROBLEM if report.has_errors else ExitCode.OK


def _allow(args: argparse.Namespace) -> int:
    from memtui.core import scan
    from memtui.core.errors import MemtuiError, ReadOnlyError
    from memtui.core.session import Session

    if not args.code or not args.place:
        _common.fail("usage: memtui audit allow CODE PLACE --reason WHY", ExitCode.USAGE)
    if args.code not in scan.ALLOWABLE:  # the command line is wrong: exit 2, as for any usage error
        _common.fail(f"{args.code!r} cannot be allowed; only findings of a value can: "
                     f"{', '.join(sorted(scan.ALLOWABLE))}", ExitCode.USAGE)
    if not (args.reason or "").strip():
        _common.fail("say why with --reason: the reason is kept with the allowance and in the audit log",
                     ExitCode.USAGE)
    ws = _common.open_workspace(args)
    with Session.open(ws, purpose="cli audit allow", profile=args.as_profile) as session:
        try:
            done = audit.allow(session, args.code, args.place, args.reason or "", client_id=args.client_id)
        except ReadOnlyError as exc:
            _common.fail(f"refused: {exc}", ExitCode.REFUSED)
        except MemtuiError as exc:
            _common.fail(str(exc), ExitCode.PROBLEM)
    made = done.result or []
    if args.json:
        _common.emit_json(_common.all_json("allowed", made, retried=done.retried,
                                           entry=done.entry.to_json() if done.entry is not None else None))
    elif done.retried:
        print(f"already done by client id {args.client_id}; nothing changed")
    else:
        for doc in made:
            print(f"allowed {doc['code']} at {visible(doc['path'])}:{doc['line']} (value {doc['fingerprint']}): "
                  f"{visible(doc['reason'])}")
    return ExitCode.OK


def _list_allowed(args: argparse.Namespace, ws) -> int:  # noqa: ANN001
    from memtui.core.scan import allow
    from memtui.core.store import Store

    store = Store.open(ws, read_only=True)
    docs = allow.records(None if store.damaged else store)
    if args.json:
        _common.emit_json(_common.all_json("allowed", docs))
    else:
        for doc in docs:
            print(f"{doc.get('code')} {visible(str(doc.get('path')))}:{doc.get('line')} value {doc.get('fingerprint')} "
                  f"by {doc.get('by') or '(no profile)'} at {doc.get('time')}: {visible(str(doc.get('reason')))}")
        if not docs:
            print("no finding is allowed")
    return ExitCode.OK
