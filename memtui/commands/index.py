"""``memtui index``: update, rebuild or inspect the search index."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.commands.search import print_findings, update_index
from memtui.core.search.index import SearchIndex


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``index`` subcommand."""
    q = subparsers.add_parser(
        "index", help="update, rebuild or inspect the search index",
        description="Bring the search index (.memtui/index) up to date with the files. "
        "The index is derived data: --rebuild reads every file again.",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(q)
    _common.add_json_arg(q)
    q.add_argument("--rebuild", action="store_true", help="build the index from scratch")
    q.add_argument("--status", action="store_true", help="show the index's state, change nothing")
    q.set_defaults(func=run_index)


def run_index(args: argparse.Namespace) -> int:
    """``memtui index``: 0 when up to date, 1 when files were skipped or the index is damaged
    (``--status``: 1 when it is damaged, incomplete, outdated or refused)."""
    ws = _common.open_workspace(args)
    index = SearchIndex(ws)
    if args.status:
        status = index.status()
        if args.json:
            _common.emit_json(status)
        else:
            for key, value in status.items():
                if key == "updated" and isinstance(value, (int, float)):
                    value = datetime.fromtimestamp(value, tz=timezone.utc).isoformat(timespec="seconds")
                print(f"{key}: {value}")
        sound = status["state"] == "ready" or status["state"].startswith("absent")
        return int(ExitCode.OK if sound else ExitCode.PROBLEM)
    report = update_index(index, rebuild=args.rebuild)
    if args.json:
        _common.emit_json(report.to_json())
    else:
        print_findings(report.findings)
        verb = "rebuilt" if report.rebuilt else "updated"
        print(f"index {verb}: {report.added} added, {report.updated} changed, {report.removed} removed, "
              f"{report.unchanged} unchanged; {report.documents} documents in {report.seconds:.2f} s")
    return int(ExitCode.PROBLEM if report.findings else ExitCode.OK)
