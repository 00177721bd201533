"""``memtui notes``: show, set, diff and edit the member notes without losing an update.

- ``notes show [--file custom|notebook|NAME] [--hash] [--json]``: print a notes file.
- ``notes set --from FILE|- [--base-hash H|absent] [--client-id ID]``: replace the member
  notes. When the file changed since ``H`` (or, without ``--base-hash``, since memtui last
  saved it), the change is three-way merged with yours when they do not overlap; when they
  do, nothing is written and the conflict is printed with markers (exit 1; DESIGN.md §4
  invariant 3).
- ``notes diff --from FILE|-``: the difference between the member notes and FILE (exit 1
  when they differ, like ``diff``).
- ``notes edit``: open ``$VISUAL``/``$EDITOR`` on the member notes, then save with the same
  conflict check (needs a terminal).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core import notes
from memtui.core.auditlog import ClientIdConflict
from memtui.core.errors import ConfinementError, ConflictError, ReadOnlyError
from memtui.core.session import Session
from memtui.core.text import plural, removed_lines, visible

#: Lines of a conflict's "would be removed" list printed before "… and N more".
LOST_SHOWN = 20



def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memtui notes`` and its sub-commands."""
    parser = sub.add_parser(
        "notes", help="show, set, diff or edit the member notes (memory/MEMORY_CUSTOM.md)",
        description="The member notes are the member's standing notes for the agent. memtui saves them "
                    "only if they still hold the bytes the new text was based on, so an edit made "
                    "meanwhile (the chat client, the agent's proxy) is never overwritten in silence.",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)

    show = verbs.add_parser("show", help="print a notes file",
                            description="Print a notes file's text (an absent file prints nothing).")
    _common.add_workspace_arg(show)
    _common.add_json_arg(show)
    show.add_argument("--file", default="custom", metavar="WHICH",
                      help=f"which file: {', '.join(notes.CHOICES)} (default: custom, the member notes)")
    show.add_argument("--hash", action="store_true",
                      help="print only the SHA-256 of the file's bytes (`absent` if there is no file), "
                           "for --base-hash")
    show.set_defaults(func=run_show)

    setp = verbs.add_parser(
        "set", help="replace the member notes with FILE (or standard input)",
        description="Replace memory/MEMORY_CUSTOM.md with the text of FILE ('-' reads standard input). "
                    "Its BOM and line ends are kept. FILE is taken as based on --base-hash H (from "
                    "`notes show --hash`), or else on the file as memtui last saved it. If the file "
                    "changed since, the other change is merged with yours when they touch different "
                    "lines; when they overlap, nothing is written, the conflict is printed with "
                    "<<<<<<< markers and the exit code is 1. memtui keeps a copy of the last versions "
                    "it showed or saved (in your user cache folder) to merge from; with no copy of "
                    "the base, your file is saved only if it removes no line now on disk, else the "
                    "lines it would remove are listed (exit 1) and only --keep-mine removes them.",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(setp)
    _common.add_json_arg(setp)
    _add_source(setp, "the new text")
    based = setp.add_mutually_exclusive_group()
    based.add_argument("--base-hash", "--expect-hash", dest="expect", metavar="H",
                       help="the SHA-256 (from `notes show --hash`) the new text is based on, or `absent` "
                            "(default: the file as memtui last saved it)")
    based.add_argument("--keep-mine", dest="keep_mine", metavar="H",
                       help="replace the file with yours as it is, removing the lines on disk your file "
                            "does not hold, if the file still has the SHA-256 H (from a conflict's message)")
    setp.add_argument("--client-id", metavar="ID",
                      help="an id for this request: a retry with the same id is not applied or logged twice")
    setp.set_defaults(func=run_set)

    diffp = verbs.add_parser("diff", help="the difference between the member notes and FILE",
                             description="Print a unified diff from the member notes on disk to FILE; "
                                         "exit 0 when equal, 1 when they differ.")
    _common.add_workspace_arg(diffp)
    _add_source(diffp, "the other text")
    diffp.set_defaults(func=run_diff)

    edit = verbs.add_parser("edit", help="edit the member notes in $VISUAL/$EDITOR, then save safely",
                            description="Open the member notes in your editor; when it exits, save with the "
                                        "conflict check. Needs a terminal; scripts use `notes set`.")
    _common.add_workspace_arg(edit)
    edit.set_defaults(func=run_edit)


def _add_source(parser: argparse.ArgumentParser, what: str) -> None:
    """FILE, given as the argument or as ``--from FILE`` (either; ``-`` reads standard input)."""
    parser.add_argument("file", nargs="?", metavar="FILE", help=f"{what} ('-': standard input)")
    parser.add_argument("--from", dest="source", metavar="FILE", help="the same as FILE")


def _source(args: argparse.Namespace) -> str:
    """The FILE given as the argument or with ``--from``; a usage error (exit 2) for none or two."""
    given = [value for value in (args.file, args.source) if value is not None]
    if not given:
        _common.fail(f"notes {args.verb} needs FILE (or --from FILE; '-' reads standard input)", ExitCode.USAGE)
    if len(given) == 2 and given[0] != given[1]:
        _common.fail(f"notes {args.verb}: FILE {given[0]!r} and --from {given[1]!r} differ; give one",
                     ExitCode.USAGE)
    return given[0]


def _read_source(source: str) -> str:
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        _common.fail(f"cannot read {source}: {exc.strerror or exc}", ExitCode.USAGE)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _common.fail(f"{source} is not UTF-8 text (byte {exc.start}); nothing was written", ExitCode.USAGE)
    return text[1:] if text.startswith("\ufeff") else text


def _load(args: argparse.Namespace, ws, which: str = "custom") -> notes.Note:  # noqa: ANN001
    try:
        return notes.load(ws, which)
    except ValueError as exc:
        _common.fail(str(exc), ExitCode.USAGE)
        raise AssertionError("unreachable") from exc  # pragma: no cover


def run_show(args: argparse.Namespace) -> int:
    """Print the file (or its hash); exit 0, or 1 when it cannot be read as text."""
    ws = _common.open_workspace(args)
    note = _load(args, ws, args.file)
    if args.json:
        _common.emit_json({
            "path": note.shown, "exists": note.exists, "hash": note.hash, "bytes": len(note.data),
            "bom": note.bom, "crlf": note.crlf, "writable": note.writable,
            "read_only_reason": note.read_only_reason, "truncated": note.truncated,
            "findings": [f.to_json() for f in note.findings], "text": note.text,
        })
    elif args.hash:
        print(note.hash or "absent")
    else:
        sys.stdout.write(note.text)
        for f in note.findings:
            print(f"memtui: {f.place}: {f.severity.value}: [{f.code}] {f.message}", file=sys.stderr)
    bad = any(f.severity.value == "error" for f in note.findings)
    return ExitCode.PROBLEM if bad else ExitCode.OK


def _expected(value: str | None, note: notes.Note, option: str = "--base-hash") -> object:
    if value is None:  # based on what memtui last saw, never a blind replace
        return notes.LAST_SEEN
    value = value.strip().lower()
    if value == "absent":
        return None
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        _common.fail(f"{option} {value!r} is not a SHA-256 (64 hex digits) or `absent`; "
                     "get it with `memtui notes show --hash`", ExitCode.USAGE)
    return value


def _listed(lines: list[str]) -> str:
    """``lines`` as an indented list for a message (at most :data:`LOST_SHOWN`, made visible)."""
    shown = "".join(f"\n  - {visible(line, limit=200)}" for line in lines[:LOST_SHOWN])
    more = len(lines) - LOST_SHOWN
    return shown + (f"\n  … and {plural(more, 'more line')}" if more > 0 else "")


def exc_base(base: object) -> str | None:
    """A base as JSON: the hash, ``None`` (absent), or ``"last-saved"`` (no --base-hash)."""
    return "last-saved" if base is notes.LAST_SEEN else base  # type: ignore[return-value]


def _save(session: Session, note: notes.Note, text: str, base: object, client_id: str | None,
          as_json: bool, *, merge_changes: bool = True) -> int:
    """Save (merging a change made since ``base``) and report. An overlapping change prints
    the conflict with markers, an unmergeable one the difference (exit 1); refusals (3) and a
    reused client id (1) reach the CLI's exit-code table."""
    try:
        result = notes.save(session, note, text, base, client_id=client_id,  # type: ignore[arg-type]
                            merge_changes=merge_changes)
    except ClientIdConflict:
        raise  # not the lost-update conflict below: no difference to show
    except notes.MergeConflict as exc:
        marked = exc.merged.with_markers("yours", f"{note.shown} on disk")
        if as_json:
            _common.emit_json({
                "conflict": True, "merged": False, "path": note.shown, "expected": exc.base_hash,
                "current": exc.current_hash, "text_with_markers": marked,
                "conflicts": [{"base": "".join(h.base), "yours": "".join(h.mine), "on_disk": "".join(h.theirs)}
                              for h in exc.merged.hunks if h.conflict]})
        else:
            sys.stdout.write(marked)
        print(f"memtui: {exc} The text printed above holds your lines and the file's, with a "
              "<<<<<<< block for each overlap: put the text printed above in your file, resolve each "
              f"block, and set it again with --base-hash {exc.current_hash or 'absent'}.", file=sys.stderr)
        return ExitCode.PROBLEM
    except notes.LinesWouldBeLost as exc:
        shown = notes.conflict_diff(note, exc, text)
        if as_json:
            _common.emit_json({"conflict": True, "merged": False, "path": note.shown, "expected": exc_base(base),
                               "current": exc.current_hash, "would_remove": exc.lost, "diff": shown})
        else:
            sys.stdout.write(shown)
        print(f"memtui: {exc} Your file does not hold {plural(len(exc.lost), 'line')} now in {note.shown}, "
              f"so saving it would remove {'it' if len(exc.lost) == 1 else 'them'}:{_listed(exc.lost)}\nCopy the lines to keep into your file and set "
              "it again (it is saved when it removes no line on disk). To remove them knowingly, set it "
              f"with --keep-mine {exc.current_hash or 'absent'} instead of --base-hash.", file=sys.stderr)
        return ExitCode.PROBLEM
    except ConflictError as exc:
        shown = notes.conflict_diff(note, exc, text)
        if as_json:
            _common.emit_json({"conflict": True, "path": note.shown, "expected": exc_base(base),
                               "current": exc.current_hash, "diff": shown})
        else:
            sys.stdout.write(shown)
        if merge_changes:
            advice = "Set your file again with the same base: memtui merges the other change with yours."
        else:  # --keep-mine named bytes the file no longer holds: say what replacing it now would drop
            lost = removed_lines(notes.text_of(note, exc.current), text)
            advice = ("The file changed again after the hash you gave to --keep-mine. "
                      + (f"Replacing it now would remove {plural(len(lost), 'line')}:{_listed(lost)}\n"
                         f"To remove {'it' if len(lost) == 1 else 'them'} knowingly, use --keep-mine "
                         f"{exc.current_hash or 'absent'}." if lost else
                         f"Your file holds every line now on disk: use --keep-mine {exc.current_hash or 'absent'}."))
        print(f"memtui: {exc} {advice}", file=sys.stderr)
        return ExitCode.PROBLEM
    if as_json:
        _common.emit_json({"conflict": False, "merged": result.merged, "path": note.shown, "written": result.written,
                           "retried": result.retried, "before": result.before, "after": result.after,
                           "entry": result.entry.to_json() if result.entry else None})
    elif result.retried:
        entry = f" (audit entry {result.entry.id})" if result.entry else ""
        print(f"{note.shown}: already saved by this client id{entry}; nothing done")
    elif not result.written:
        print(f"{note.shown}: unchanged")
    elif result.merged:
        print(f"{note.shown}: merged with the change made on disk since your base, and saved "
              f"({len(result.note.data):,} bytes, sha256 {result.after})")
    else:
        print(f"{note.shown}: saved ({len(result.note.data):,} bytes, sha256 {result.after})")
    return ExitCode.OK


def run_set(args: argparse.Namespace) -> int:
    """Replace the member notes; 0 saved/unchanged, 1 conflict, 2 usage, 3 refused."""
    ws = _common.open_workspace(args)
    text = _read_source(_source(args))
    with Session.open(ws, purpose="cli notes set") as session:
        session.require_writable()  # ReadOnlyError: refused (exit 3) with the reason
        note = _load(args, ws)
        if args.keep_mine is not None:  # knowingly over the bytes named: no merge, lines on disk go
            return _save(session, note, text, _expected(args.keep_mine, note, "--keep-mine"), args.client_id,
                         args.json, merge_changes=False)
        return _save(session, note, text, _expected(args.expect, note), args.client_id, args.json)


def run_diff(args: argparse.Namespace) -> int:
    """Print the unified diff; 0 equal, 1 different."""
    ws = _common.open_workspace(args)
    note = _load(args, ws)
    source = _source(args)
    other = _read_source(source)
    out = notes.diff(note.text, other, f"{note.shown} (on disk)", source)
    sys.stdout.write(out)
    return ExitCode.PROBLEM if out else ExitCode.OK


def _editor() -> list[str]:
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    return shlex.split(command)


def run_edit(args: argparse.Namespace) -> int:
    """Edit in ``$EDITOR`` and save with the conflict check; refuses without a terminal."""
    if not _common.interactive():
        _common.fail("`notes edit` needs a terminal; in scripts use `memtui notes set --from FILE "
                     "--base-hash H`", ExitCode.USAGE)
    ws = _common.open_workspace(args)
    note = _load(args, ws)
    if not note.writable:
        _common.fail(f"refused: {note.read_only_reason}", ExitCode.REFUSED)
    fd, name = tempfile.mkstemp(prefix="memtui-notes-", suffix=".md")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(note.text)
    try:
        code = subprocess.call([*_editor(), name])
    except OSError as exc:
        _common.fail(f"cannot start the editor {' '.join(_editor())}: {exc.strerror or exc}; "
                     f"set $EDITOR (your text is in {name})", ExitCode.EXTERNAL)
    if code != 0:
        _common.fail(f"the editor exited with code {code}; nothing saved (your text is in {name})",
                     ExitCode.EXTERNAL)
    text = Path(name).read_text(encoding="utf-8")
    if not note.dirty(text):
        os.unlink(name)
        print(f"{note.shown}: unchanged")
        return ExitCode.OK
    with Session.open(ws, purpose="cli notes edit") as session:
        if session.read_only:
            _common.fail(f"refused: {session.reason} Your text is kept in {name}.", ExitCode.REFUSED)
        try:  # a change made meanwhile is merged with yours when they touch different lines
            result = notes.save(session, note, text, note.hash, base_text=note.text)
        except ConflictError as exc:
            sys.stdout.write(notes.conflict_diff(note, exc, text))
            print(f"memtui: {exc}", file=sys.stderr)
            lost = removed_lines(notes.text_of(note, exc.current), text)
            if lost:
                print(f"Keeping yours removes {plural(len(lost), 'line')} now on disk:{_listed(lost)}")
            answer = input("Keep yours over the file on disk (k), or stop and keep your text aside (s)? [s] ")
            if answer.strip().lower() != "k":
                print(f"Nothing saved. Your text is in {name}.")
                return ExitCode.PROBLEM
            try:
                result = notes.keep_mine(session, note, text, exc)
            except ConflictError as again:
                print(f"memtui: {again} Your text is in {name}.", file=sys.stderr)
                return ExitCode.PROBLEM
        except (ReadOnlyError, ConfinementError) as exc:
            _common.fail(f"refused: {exc} Your text is kept in {name}.", ExitCode.REFUSED)
    os.unlink(name)
    print(f"{note.shown}: saved ({len(result.note.data):,} bytes, sha256 {result.after})")
    return ExitCode.OK
