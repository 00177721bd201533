"""``memtui consolidate``: the scheduled consolidation pass (seed 000 §4 step 5), as a list of
candidates by node and owner, each with the action that settles it: duplicate articles
(merge), contested knowledge (resolve), two articles disagreeing on one subject (contest),
stale entries (re-verify or retire), index one-liners that no longer say the article's
summary (refresh the one-liner). Read-only: the actions are their own commands
(`memtui merge`, `contest`, `resolve`, `reverify`, `retire`, `refresh`)."""

from __future__ import annotations

import argparse
import sys

from memtui.commands import _common
from memtui.core.paging import Page
from memtui.commands._common import ExitCode
from memtui.core import consolidate
from memtui.core.session import Session
from memtui.core.text import visible


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("consolidate", help="the consolidation pass: duplicates, contested, stale, one-liners",
                       description=__doc__, epilog=_common.EXIT_CODES_HELP +
                       "\n  (consolidate: 0 nothing to consolidate, 1 candidates found)",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(p)
    _common.add_json_arg(p)
    p.add_argument("--node", metavar="NODE", help="only candidates in this node or below (memory-relative)")
    p.add_argument("--kind", choices=consolidate.KINDS, action="append",
                   help="only candidates of this kind (repeatable)")
    _common.add_page_args(p, "candidates")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ws = _common.open_workspace(args)
    node = (args.node or "").strip().strip("/")
    if node.startswith("memory/") and ws.memory_rel == "memory":
        node = node[len("memory/"):]
    if node and not (ws.memory / node).is_dir():
        _common.fail(f"--node {args.node!r} is not a folder of the memory tree", ExitCode.USAGE)
    show = sys.stderr.isatty() and not args.json

    def progress(phase: str, done: int, total: int) -> None:
        print(f"\rconsolidating: {phase} {done}/{total}   ", end="", file=sys.stderr, flush=True)

    with Session.open(ws, purpose="cli consolidate", read_only=True) as s:
        report = consolidate.scan(ws, s.store, node=node or None, progress=progress if show else None)
    if show:
        print("\r" + " " * 50 + "\r", end="", file=sys.stderr)
    found = [c for c in report.candidates if not args.kind or c.kind in args.kind]
    listed = Page.of(found, args.cursor or 0, args.limit)
    if args.json:
        _common.emit_json(_common.page_json("candidates", listed, [c.to_json() for c in listed.items],
                                            counts=report.counts(), articles=report.articles,
                                            nodes=report.nodes, seconds=round(report.seconds, 3)))
    else:
        last: tuple[str, str | None] | None = None
        for c in listed.items:
            if (c.node, c.owner) != last:
                last = (c.node, c.owner)
                print(f"{visible(c.node or '(root)')}  owner {visible(c.owner or '(none)')}")
            print(f"  {c.kind}: {visible(', '.join(c.articles))}")
            print(f"    {visible(c.reason)}")
            print(f"    {c.action}: {visible(c.command)}")
        print(f"{report.summary()} ({report.seconds:.2f} s)")
        _common.print_more(listed, "candidates")
    return int(ExitCode.PROBLEM if found else ExitCode.OK)
