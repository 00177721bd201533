"""``memtui backup``: back the workspace up to git; ``--status`` and ``--history`` show the repo.

- ``backup [--repo PATH] [--path SUBDIR] [--message M] [--push] [--remote NAME]``: render the
  workspace into the backup path, commit only that path (nothing when nothing changed), push
  when asked (never forced).
- ``backup --status``: the repository, branch, remote, last backup and its counts,
  ahead/behind, uncommitted changes under the backup path.
- ``backup --history [--limit N] [--cursor C]``: the backups (commits of the backup path),
  newest first, with their changed-file counts; a page (``--json``: ``{"history", "count",
  "total", "cursor", "state"}``).

A file with an open secret finding, or a session history rewritten since memtui last saw it,
stops the backup before anything is written (exit 1, each place named): remove the secret or
allow it (``memtui audit allow``), accept the rewrite with ``--accept-rewrite KEY``.
What memtui sees of the session histories is recorded at each backup (an audit entry
``sessions.seen`` when they grew).

Exit codes: 0 done (or nothing to do), 1 the store cannot be read, a secret or a rewritten
history blocks it, 2 no repository given,
3 refused (detached HEAD, no git identity, unsafe path), 4 git or the push failed.
The backup takes the writer lock only to record the session histories as seen; it reads the rest.
"""

from __future__ import annotations

import argparse

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core.backup import commit as core
from memtui.core.paging import Page
from memtui.core.store import StoreDamagedError
from memtui.core.text import visible


#: Backups on one page of ``--history``.
LIMIT = 50


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui backup``."""
    parser = sub.add_parser(
        "backup", help="back the workspace up to a git repository (commits only the backup path)",
        description="Render the whole workspace (files byte for byte, the store as markdown, a MANIFEST "
                    "with sha256 sums) into a folder of a git repository and commit only that folder. "
                    "Nothing is committed when nothing changed; other changes in the repository stay "
                    "as they were. --push pushes the branch, never forced. Settings: memtui.toml "
                    "[backup] repo/path/remote/push and [git] name/email.",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(parser)
    _common.add_json_arg(parser)
    add_repo_args(parser)
    parser.add_argument("--message", "-m", metavar="M", help="the commit subject (the counts are added below it)")
    parser.add_argument("--push", action=argparse.BooleanOptionalAction, default=None,
                        help="push the branch to the remote afterwards (default: memtui.toml [backup] push)")
    parser.add_argument("--remote", metavar="NAME", help="the remote to push to (default: upstream, else origin)")
    parser.add_argument("--accept-rewrite", metavar="KEY", action="append", default=[],
                        help="accept that session history KEY was rewritten (audited; repeat for several)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--status", action="store_true", help="show the backup repository's state; back nothing up")
    what.add_argument("--history", action="store_true", help="list the backups, newest first; back nothing up")
    parser.add_argument("--limit", type=_common.positive_int, default=None, metavar="N",
                        help=f"with --history: at most N backups on a page (default {LIMIT})")
    parser.add_argument("--cursor", type=_common.cursor, default=None, metavar="C",
                        help="with --history: the page after the one whose JSON `cursor` (or footer) gave C")
    parser.set_defaults(func=run)


def add_repo_args(parser: argparse.ArgumentParser, spec: bool = False) -> None:
    """``--repo`` and ``--path`` (shared by backup, restore and verify)."""
    parser.add_argument("--repo", metavar="PATH@REV" if spec else "PATH",
                        help="the backup repository" + (", optionally @REV (a commit, tag or branch)" if spec else "")
                             + " (default: memtui.toml [backup] repo)")
    parser.add_argument("--path", metavar="SUBDIR",
                        help=f"the backup folder inside the repository (default: [backup] path, else {core.DEFAULT_PATH})")


def run(args: argparse.Namespace) -> int:
    ws = _common.open_workspace(args)
    if not args.history and (args.limit is not None or args.cursor is not None):
        _common.fail("--limit and --cursor page the list of backups: give them with --history", ExitCode.USAGE)
    conf = core.settings(ws, args.repo, args.path, args.remote, args.push)
    if args.status or args.history:
        offset = args.cursor or 0
        state = core.status(conf.repo, conf.path, conf.remote, history_limit=args.limit or LIMIT,
                            history_offset=offset)
        if args.status and conf.repo and state["exists"] and state["last"] and not state["problem"]:
            state["pending"] = _pending(ws, conf.repo, conf.path)
        end = offset + len(state["history"])
        page = Page(state["history"], state["history_total"], end if end < state["history_total"] else None)
        if args.json:
            _common.emit_json(_common.page_json("history", page, state=state["state"]) if args.history else state)
        elif args.history:
            print_history(state)
            _common.print_more(page, "backups")
        else:
            print_status(state)
        return ExitCode.OK if not state["problem"] else ExitCode.EXTERNAL
    if not conf.repo:
        _common.fail("no backup repository: give --repo PATH, or set [backup] repo in memtui.toml", ExitCode.USAGE)
    from memtui.core.session import Session

    session = Session.open(ws, purpose="cli backup")
    try:
        result = core.backup(ws, conf.repo, conf.path, message=args.message, push=conf.push,
                             remote=conf.remote, git_table=conf.git, session=session,
                             accept_rewrite=args.accept_rewrite)
    except core.BackupBlocked as exc:  # a secret or a rewritten history: each place, masked
        if args.json:
            _common.emit_json(_common.all_json("findings", [f.to_json() for f in exc.findings], ok=False,
                                               error=str(exc), exit=int(ExitCode.PROBLEM)))
            raise SystemExit(int(ExitCode.PROBLEM)) from None
        for finding in exc.findings:
            print(finding.summary())
        _common.fail(f"backup not made: {exc}", ExitCode.PROBLEM)
    except StoreDamagedError as exc:  # refused (3) and git (4) go to the exit-code table as they are
        _common.fail(f"no backup made: {exc}", ExitCode.PROBLEM)
    if args.json:
        _common.emit_json(result.to_json())
    else:
        for finding in result.findings:
            print(finding.summary())
        counts = result.counts
        what = f"{counts['files']} files, {counts['records']} store records"
        if result.commit:
            print(f"backed up {what} to {result.repo} ({result.path}/) as commit {result.commit[:10]} on "
                  f"{result.branch}, author {result.identity} (from {result.identity.source}); "
                  f"{len(result.written)} files written, {len(result.removed)} removed")
        else:
            print(f"nothing changed since the last backup ({what}); no commit made")
        for note in result.notes:
            print(f"note: {note}")
        if result.push is not None:
            print(result.push.message if result.push.ok else f"backup NOT complete: {result.push.message}")
        if result.remote_missing:
            print(f"backup NOT complete: {visible(result.remote_missing)}")
    if not result.ok:
        return ExitCode.EXTERNAL
    return ExitCode.PROBLEM if result.remote_missing else ExitCode.OK


def _pending(ws, repo: str, subdir: str) -> dict:  # noqa: ANN001 - a Workspace
    """What a backup now would change, as JSON: ``{"count", "sentence",
    "files", "tables", "compared"}`` or ``{"error"}`` when it cannot be told."""
    from memtui.core.backup.render import BackupFormatError
    from memtui.core.errors import MemtuiError

    try:
        found = core.pending(ws, repo, subdir)
    except (MemtuiError, BackupFormatError, OSError) as exc:
        return {"error": str(exc)}
    if found is None:
        return {"error": "no backup to compare with"}
    return {"count": found.count, "sentence": found.sentence(), "files": found.files, "tables": found.tables,
            "compared": found.compared}


def print_status(state: dict) -> None:
    print(f"repository: {state['repo'] or '(none)'}  path: {state['path']}/")
    print(f"state: {state['state']}")
    if state["remote"]:
        against = core.compared(state)
        print(f"remote: {state['remote']} ({state['url']})" + (f", {against}" if against else ""))
    last = state["last"]
    if last:
        counts = last.get("counts") or {}
        print(f"last backup: {last['commit'][:10]} {last['date']} by {last['author']}: "
              f"{counts.get('files', '?')} files, {counts.get('records', '?')} store records")
    pending = state.get("pending")
    if pending is not None:
        if "error" in pending:
            print(f"changes since the last backup: cannot tell ({pending['error']})")
        else:
            print(f"{pending['sentence']} "
                  f"({pending['compared']:,} files and store tables compared)")
            for name in (pending["files"] + pending["tables"])[:20]:
                print(f"  {name}")
            if pending["count"] > 20:
                print(f"  … and {pending['count'] - 20:,} more")
    if state["uncommitted"]:
        print(f"uncommitted changes under {state['path']}/: {len(state['uncommitted'])}")
        for name in state["uncommitted"][:20]:
            print(f"  {name}")


def print_history(state: dict) -> None:
    if not state["history"]:
        print(f"no backups yet ({state['state'].removesuffix('; no backups yet')})")
    for entry in state["history"]:
        print(f"{entry['commit'][:10]}  {entry['date']}  {entry['changed']:>6} files changed  {entry['subject']}")
