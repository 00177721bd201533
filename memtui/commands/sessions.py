"""``memtui sessions``: the agents' session histories (seed 002).

- ``sessions list``: every history with its key, turns, size, first and last time.
- ``sessions show KEY [--line N] [--raw]``: a history as turns (role, time, text; tool calls
  and results folded to one line unless ``--tools``); ``--raw`` prints the JSON lines as written.
- ``sessions check [KEY] [--record]``: malformed lines, rewrites since memtui last saw a
  history (append-only), turns that claim a graph write the graph lacks; ``--record`` records
  what memtui sees now as "last seen" (audited; a rewritten history needs ``--accept-rewrite``).

Exit codes: 0 ok, 1 a check found an error (a rewrite) or a history is missing, 2 usage, 3 refused.
"""

from __future__ import annotations

import argparse
import sys

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core import sessions as core
from memtui.core.errors import MemtuiError, RefusedError, ReadOnlyError
from memtui.core.findings import Severity
from memtui.core.paging import Page
from memtui.core.text import clip, plural, visible


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui sessions``."""
    parser = sub.add_parser("sessions", help="list, show and check the agents' session histories",
                            description=__doc__, epilog=_common.EXIT_CODES_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    p = verbs.add_parser("list", help="every history: key, turns, size, first and last time")
    _common.add_workspace_arg(p)
    _common.add_json_arg(p)
    _common.add_page_args(p, "histories")
    p = verbs.add_parser("show", help="a history as turns")
    _common.add_workspace_arg(p)
    _common.add_json_arg(p)
    p.add_argument("key", help="the session key (`memtui sessions list`)")
    p.add_argument("--line", type=_common.positive_int, metavar="N", help="start at line N (a turn)")
    _common.add_page_args(p, "turns")
    p.add_argument("--tools", action="store_true", help="show tool calls and results whole, not folded")
    p.add_argument("--raw", action="store_true", help="print the JSON lines as written")
    p = verbs.add_parser("check", help="malformed lines, rewrites, unbacked graph-write claims")
    _common.add_workspace_arg(p)
    _common.add_json_arg(p)
    p.add_argument("key", nargs="?", help="check this history only")
    p.add_argument("--record", action="store_true",
                   help="record what memtui sees now as last seen (audited)")
    p.add_argument("--accept-rewrite", metavar="KEY", action="append", default=[],
                   help="with --record: accept that KEY was rewritten (audited)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ws = _common.open_workspace(args)
    try:
        if args.verb == "list":
            return _list(args, ws)
        if args.verb == "show":
            return _show(args, ws)
        return _check(args, ws)
    except MemtuiError as exc:
        _common.fail(str(exc), ExitCode.PROBLEM)
    return ExitCode.OK  # pragma: no cover


def _list(args: argparse.Namespace, ws) -> int:  # noqa: ANN001
    page = Page.of([h.summary() for h in core.histories(ws)], args.cursor or 0, args.limit)
    if args.json:
        _common.emit_json(_common.page_json("sessions", page))
        return ExitCode.OK
    if not page.total:
        print(f"no session histories in {core.FOLDER}/")
    if page.next is not None:
        print(f"(more: --cursor {page.next})", file=sys.stderr)
    for h in page.items:
        problems = f", {plural(h['problems'], 'malformed line')}" if h["problems"] else ""
        print(f"{visible(h['key'])}  {plural(h['turns'], 'turn')}  {h['bytes']} bytes  {h['first'] or '?'} .. {h['last'] or '?'}{problems}")
    return ExitCode.OK


def _fold(text: str, width: int = 100) -> str:
    return clip(" ".join(text.split()), width)


def _show(args: argparse.Namespace, ws) -> int:  # noqa: ANN001
    history = core.read(ws, args.key)
    page = Page.of([t for t in history.turns if not args.line or t.line >= args.line], args.cursor or 0, args.limit)
    turns = page.items
    if args.json:
        _common.emit_json(_common.page_json("turns", page, [
            {"line": t.line, "role": t.role, "time": t.time, "text": t.text,
             "tools": [{"name": c.name, "result": c.result, "text": c.text} for c in t.tools],
             **({"raw": t.raw if t.raw is not None else t.source} if args.raw else {})} for t in turns],
            **history.summary(), findings=[f.to_json() for f in history.findings]))
        return ExitCode.OK
    if page.next is not None:
        print(f"(more turns: --cursor {page.next})", file=sys.stderr)
    if args.raw:
        for t in turns:
            print(f"{t.line}: {visible(t.source)}")
        return ExitCode.OK
    for t in turns:
        head = f"[{t.line}] {t.role}" + (f"  {t.time}" if t.time else "")
        print(visible(head))
        tools = t.tools
        if tools and t.role == "tool":
            for call in tools:
                shown = call.text if args.tools else _fold(call.text)
                print(f"    ▸ {'result' if call.result else 'call'} {visible(call.name or '?')}: {visible(shown)}")
            continue
        for line in (t.text or "").splitlines() or [""]:
            if line or t.text:
                print(f"    {visible(line)}")
        for call in tools:
            shown = call.text if args.tools else _fold(call.text)
            print(f"    ▸ call {visible(call.name or '?')}: {visible(shown)}")
    return ExitCode.OK


def _check(args: argparse.Namespace, ws) -> int:  # noqa: ANN001
    if args.record:
        from memtui.core.session import Session

        with Session.open(ws, purpose="cli sessions check") as session:
            try:
                done = core.record(session, accept=args.accept_rewrite, only=[args.key] if args.key else None)
            except (RefusedError, ReadOnlyError) as exc:
                _common.fail(f"refused: {exc}", ExitCode.REFUSED)
        result = done.result or {"recorded": [], "accepted": []}
        if not args.json:
            print(f"recorded {len(result['recorded'])} histories as seen" if result["recorded"]
                  else "nothing new to record")
    findings = [f for f in core.audit_findings(ws)
                if not args.key or f.path.endswith(f"/{args.key}.jsonl")]
    if args.json:
        _common.emit_json(_common.all_json("findings", [f.to_json() for f in findings]))
    else:
        for f in findings:
            print(f"{visible(f.place)}: {f.severity.value}: [{f.code}] {visible(f.message)}")
            if f.fix:
                print(f"    fix: {visible(f.fix)}")
        if not findings:
            print("every session history is well formed and only grew")
    return ExitCode.PROBLEM if any(f.severity is Severity.ERROR for f in findings) else ExitCode.OK
