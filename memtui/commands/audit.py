"""``memtui audit``: every finding in a workspace (issue 2)."""

from __future__ import annotations

import argparse
import sys

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core import audit
from memtui.core.findings import CODES, Severity
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
    parser.add_argument("--codes", action="store_true", help="list every finding code and exit")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the findings; exit 0 (no error), 1 (errors) or 2 (cannot open)."""
    if args.codes:
        for code, (severity, meaning) in CODES.items():
            print(f"{code:28} {severity.value:8} {meaning}")
        return ExitCode.OK
    ws = _common.open_workspace(args)
    show_progress = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int) -> None:
        print(f"\rauditing: {done}/{total} nodes", end="", file=sys.stderr, flush=True)

    report = audit.run(ws, progress if show_progress else None)
    if show_progress:
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
    limit = Severity(args.severity).rank
    shown = [f for f in report.findings if f.severity.rank <= limit]
    if args.json:
        _common.emit_json({
            "workspace": str(ws.root), "nodes": report.nodes, "articles": report.articles,
            "counts": report.counts, "seconds": round(report.seconds, 3),
            "findings": [f.to_json() for f in shown],
        })
    else:
        for f in shown:
            print(f"{visible(f.place)}: {f.severity.value}: [{f.code}] {visible(f.message)}")
            if f.fix:
                print(f"    fix: {visible(f.fix)}")
        print(f"{report.summary()} ({report.seconds:.2f} s)")
    return ExitCode.PROBLEM if report.has_errors else ExitCode.OK
