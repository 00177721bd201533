"""``memtui verify [--repo PATH[@REV]]``: prove a backup round-trips with zero differences.

Restores the backup into a temporary folder, renders it again and compares with the backup
tree byte for byte, and the rebuilt store with the store files record for record.
Exit codes: 0 zero differences, 1 differences (each file with a unified diff) or restore
findings, 2 no repository given, 3 refused (an unsafe --path, a folder that is not a
repository), 4 git failed.
"""

from __future__ import annotations

import argparse
import sys

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.commands.backup import add_repo_args
from memtui.commands.restore import repo_and_path
from memtui.core.backup.render import BackupFormatError
from memtui.core.text import plural
from memtui.core.backup.verify import verify


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui verify``."""
    parser = sub.add_parser(
        "verify", help="restore a backup into a temporary folder, render it again, compare (exit 1 on any difference)",
        description="The round trip render → restore → render must give the same bytes: every "
                    "differing file is listed with a unified diff. Exit 0 only with zero differences. "
                    "A backup over memtui.toml's [backup] restore size limits is refused (exit 3).",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(parser, help="the workspace whose memtui.toml [backup] settings name the "
                              "repository and path (default: the current folder)")
    _common.add_json_arg(parser)
    add_repo_args(parser, spec=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    repo, rev, subdir, limits = repo_and_path(args)
    try:  # refused (3: an unsafe path, a backup over the size limits) and git (4) go to the table as they are
        result = verify(repo, rev, subdir, limits=limits)
    except BackupFormatError as exc:
        _common.fail(f"verify failed: the backup tree cannot be read: {exc}", ExitCode.PROBLEM)
    if args.json:
        _common.emit_json(result.to_json())
    else:
        for finding in result.findings:
            print(finding.summary())
        for diff in result.differences:
            print(f"differs ({diff.kind}): {diff.path}")
            sys.stdout.write(diff.diff)
        for note in result.notes():
            print(f"note: {note}")
        verdict = "zero differences" if result.ok else plural(len(result.differences), "difference")
        if not result.ok and not result.differences:
            verdict += f", {plural(len(result.findings), 'finding')}"
        print(f"verified commit {(result.commit or '')[:10]}: {plural(result.files, 'file')} and "
              f"{plural(result.records, 'store record')} round-tripped; {verdict}")
    return ExitCode.OK if result.ok else ExitCode.PROBLEM
