"""``memtui restore --repo PATH[@REV] --to DIR``: restore a backup offline into a folder.

The target must be empty or new (``--force`` writes into a non-empty one). The store is
rebuilt from the backup's store files; the search index is rebuilt on first use. Entries
that would land outside the target are refused, each with a finding.

Exit codes: 0 restored cleanly, 1 restored with refused or mismatched entries (listed) or an
unreadable backup tree, 2 no repository given, 3 refused (target not empty, a link, a file or
the whole backup over ``[backup] max_restore_file_bytes`` / ``max_restore_bytes``),
4 git failed (not a repository, no such commit, nothing under the path).
"""

from __future__ import annotations

import argparse

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.commands.backup import add_repo_args
from memtui.core.backup import commit as core
from memtui.core.backup.git import Limits, split_spec
from memtui.core.backup.render import BackupFormatError
from memtui.core.backup.restore import restore
from memtui.core.errors import WorkspaceError
from memtui.core.workspace import Workspace


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui restore``."""
    parser = sub.add_parser(
        "restore", help="restore a backup (any commit) into an empty folder, offline",
        description="Read the backup tree of a commit straight from git (no checkout, no network) and "
                    "write it as a workspace into --to: files byte for byte, the store rebuilt record "
                    "for record. A non-empty folder is refused unless --force, and so is a backup holding a "
                    "file or files in all over memtui.toml's [backup] max_restore_file_bytes / "
                    "max_restore_bytes (256 MiB, 2 GiB); nothing is written then.",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(parser, help="the workspace whose memtui.toml [backup] settings name the "
                              "repository and path (default: the current folder); the restore goes to --to")
    _common.add_json_arg(parser)
    add_repo_args(parser, spec=True)
    parser.add_argument("--to", required=True, metavar="DIR", help="the folder to restore into (empty or new)")
    parser.add_argument("--force", action="store_true", help="write into a non-empty folder")
    parser.set_defaults(func=run)


def repo_and_path(args: argparse.Namespace) -> tuple[str, str | None, str, Limits]:
    """``(repo, rev, subdir, limits)`` from ``--repo``/``--path`` or the workspace's memtui.toml
    (the size limits of ``[backup]``; their defaults without a workspace)."""
    try:
        ws = Workspace.open(args.workspace)
    except WorkspaceError:
        ws = None
    conf = core.settings(ws, None, args.path) if ws else None
    spec = args.repo or (conf.repo if conf else None)
    if not spec:
        _common.fail("no backup repository: give --repo PATH[@REV], or set [backup] repo in memtui.toml",
                     ExitCode.USAGE)
    repo, rev = split_spec(spec)
    limits = Limits.of(ws.config.backup if ws else None)
    return repo, rev, (conf.path if conf else args.path) or core.DEFAULT_PATH, limits


def run(args: argparse.Namespace) -> int:
    repo, rev, subdir, limits = repo_and_path(args)
    try:  # refused (3: a target in use, a backup over the size limits) and git (4) go to the table as they are
        result = restore(repo, rev, subdir, args.to, force=args.force, limits=limits)
    except BackupFormatError as exc:
        _common.fail(f"restore failed: the backup tree cannot be read: {exc}", ExitCode.PROBLEM)
    if args.json:
        _common.emit_json(result.to_json())
    else:
        for finding in result.findings:
            print(finding.summary())
        for note in result.notes():
            print(f"note: {note}")
        print(f"restored commit {(result.commit or '')[:10]} into {result.target}: {result.files} files, "
              f"{result.records} store records; the search index is rebuilt on first use")
    return ExitCode.OK if result.ok else ExitCode.PROBLEM
