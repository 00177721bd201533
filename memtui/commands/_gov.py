"""What the governance commands share: ``--as``, the session, confirmation, the
version lines.

Their errors reach the user through the CLI's one exit-code table (``memtui.cli.EXIT_CODES``):
3 when refused (not the owner, read-only workspace, no confirmation without a terminal: the
reason is printed), 1 when the request failed (unknown version, a conflict with an edit on
disk, bad input), 0 on success.
"""

from __future__ import annotations

import argparse
import sys

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core import governance as gov
from memtui.core.errors import ReadOnlyError
from memtui.core.session import Session


def add_common(parser: argparse.ArgumentParser, *, acting: bool = True, confirm: bool = False) -> None:
    """``-w``, ``--json``, and for acting commands ``--as PROFILE`` (and ``--yes``)."""
    _common.add_workspace_arg(parser)
    _common.add_json_arg(parser)
    if acting:
        parser.add_argument("--as", dest="as_profile", metavar="PROFILE",
                            help="act as this profile (default: memtui.toml [user] profile)")
    if confirm:
        parser.add_argument("-y", "--yes", action="store_true",
                            help="do it without asking (required when there is no terminal)")


def reading(args: argparse.Namespace, purpose: str) -> Session:
    """A read-only session for a command that lists what the store holds (proposals, versions,
    pins). A damaged store fails the command (exit 1) with the store's own finding: an empty
    list from a store that could not be read looked like a workspace with nothing in it.

    Raises:
        SystemExit: 1 when the store is damaged; 2 when the workspace cannot be opened.
    """
    ws = _common.open_workspace(args)
    s = Session.open(ws, purpose=f"cli {purpose}", read_only=True)
    if s.store.damaged:
        finding = next((f for f in s.store.findings if f.code == "store-damaged"), None)
        s.close()
        where = f"{finding.place}: {finding.message}" if finding else "the store cannot be read"
        _common.fail(f"{where} — so nothing it holds can be listed; `memtui store check` says where it breaks, "
                     "`memtui store set-aside` starts a fresh store (the damaged one is kept)", ExitCode.PROBLEM)
    return s


def session(args: argparse.Namespace, purpose: str) -> Session:
    """The session of an acting command. A damaged store is refused first (exit 3, with the
    store's own sentence: where the JSON breaks and how to recover), as a write would be: a
    damaged store reads as empty, so a check against it ("has no recorded version") would
    blame the entry instead of the store.

    Raises:
        ReadOnlyError: the store is damaged or cannot be read. SystemExit: 2 when the workspace
        cannot be opened or ``--accept-regression`` comes without a reason.
    """
    accepted(args)  # --accept-regression without a reason is a usage error before anything is measured
    ws = _common.open_workspace(args)
    s = Session.open(ws, purpose=f"cli {purpose}", profile=getattr(args, "as_profile", None))
    if s.store.damaged:
        reason = s.store.reason or f"memtui's store {s.store.path} cannot be read."
        s.close()
        raise ReadOnlyError(reason)
    return s


def confirm(args: argparse.Namespace, s: Session, question: str) -> None:
    """Ask ``question``, naming the acting profile, unless ``--yes`` (:func:`_common.confirm`)."""
    _common.confirm(args, f"{question} as {s.profile or '(no profile)'}")


def reindex(s: Session, article: str) -> None:
    problem = gov.refresh_search(s.ws, gov.touched_paths(s.ws, article))
    if problem:
        print(f"memtui: {problem}", file=sys.stderr)


def version_line(v: gov.Version, ledger: gov.Ledger | None = None) -> str:
    mark = " [untrusted]" if v.untrusted else ""
    extra = ""
    if ledger is not None and v.state == "proposed":
        extra = "  " + gov.eligibility(ledger, v).summary
    if v.state == "retired":
        extra += "  " + retired_phrase(v)
    cls = f"  [{v.classification['class']}]" if v.classification and v.classification.get("class") else ""
    record = evaluation_of(v)
    if record:
        extra += "  " + gov.gate.verdict(record)
    return f"{v.id}  {v.state}  {v.author or '-'}  {v.created}{cls}{mark}{extra}"


def retired_phrase(v: gov.Version) -> str:
    """How a retired version was retired, for text: ``retired by PROFILE: REASON`` when its owner
    retired it with a reason, else :func:`memtui.core.governance.retired_how`'s phrase (a
    replacing activation or merge says why by itself)."""
    how = gov.retired_how(v) or ""
    r = v.retirement or {}
    why = " ".join(str(r.get("why") or "").split())
    if how.startswith("retired: by ") and why:
        return f"retired by {r.get('by') or 'unknown'}: {why}"
    return how


def evaluation_of(v: gov.Version) -> dict | None:
    """The one evaluation record a version's text shows: its approval's, else its retirement's."""
    return v.provenance.get("evaluation") or (v.retirement or {}).get("evaluation")


def print_version(v: gov.Version) -> None:
    print(f"{v.id}: {v.state}{' [untrusted]' if v.untrusted else ''}")
    print(f"  article: {v.article}  title: {v.title}")
    print(f"  one-liner: {v.one_liner}")
    prov = v.provenance
    print(f"  provenance: {prov.get('kind')}  case {prov.get('case') or '-'}  source request "
          f"{prov.get('source_request') or '-'}  by {v.author or '-'} {v.profile_version or ''}".rstrip())
    if prov.get("sources"):
        print("  sources: " + ", ".join(prov["sources"]))
    if prov.get("rollback_of"):
        print(f"  rollback of version {prov['rollback_of']}")
    if v.decision:
        d = v.decision
        print(f"  decision: {d.get('action')} by {d.get('by')} at {d.get('at')}: {d.get('why')}")
    if v.retirement:
        d = v.retirement
        print(f"  retired by {d.get('by')} at {d.get('at')}: {d.get('why')}")


def add_regression_args(parser: argparse.ArgumentParser, *, reason: bool) -> None:
    """``--accept-regression`` (and ``--reason`` when the command has none yet): make a change
    that makes a domain's eval figures worse, with the reason recorded."""
    parser.add_argument("--accept-regression", action="store_true",
                        help="make the change even though it makes the eval figures of a domain it sits in "
                             "worse (needs --reason; recorded with the evaluation)")
    if reason:
        parser.add_argument("--reason", default="", help="why a regression is accepted (with --accept-regression)")


def accepted(args: argparse.Namespace) -> str | None:
    """The reason a regression is accepted with, or ``None``; a usage error (exit 2) when
    ``--accept-regression`` comes without a reason."""
    if not getattr(args, "accept_regression", False):
        return None
    reason = (getattr(args, "reason", "") or "").strip()
    if not reason:
        _common.fail("--accept-regression needs --reason WHY: the reason is recorded with the evaluation",
                     ExitCode.USAGE)
    return reason


def _progress() -> gov.gate.Progress:
    """Progress of an evaluation on standard error: each stage once, with its count when a
    terminal shows it updating."""
    shown: dict[str, int] = {}
    tty = sys.stderr.isatty()

    def tell(stage: str, done: int, total: int) -> None:
        if tty:
            print(f"\r{stage}: {done}/{total}\033[K", end="" if done < total else "\n", file=sys.stderr, flush=True)
        elif stage not in shown:
            shown[stage] = 1
            print(f"{stage} ({total})", file=sys.stderr, flush=True)

    return tell


def evaluate(args: argparse.Namespace, s: Session, action: str, **kw: object) -> gov.Evaluation | None:
    """Measure a change before it is confirmed (:func:`memtui.core.governance.evaluate_change`),
    print its figures and case changes (text output), and refuse a regression that is not
    accepted (exit 3, nothing changed)."""
    s.require_writable()  # a read-only workspace is refused before anything is measured
    measure = kw.pop("measure", None)
    if callable(measure):  # a change measured by its own module (a one-liner refresh)
        ev = measure(s, progress=_progress(), **kw)
    else:
        ev = gov.evaluate_change(s, action, progress=_progress(), **kw)  # type: ignore[arg-type]
    if ev is None:
        return None
    if not args.json:
        for line in gov.gate.lines(ev.to_json()):
            print(line)
    try:
        gov.gate.refuse(ev, accepted(args))
    except gov.RegressionRefused as exc:
        if args.json:
            _common.emit_json({"refused": str(exc), "evaluation": ev.to_json()})
        _common.fail(f"refused: {exc}", ExitCode.REFUSED)
    return ev


def print_evaluation(record: dict | None) -> None:
    """A version's recorded evaluation, indented under it."""
    for line in gov.gate.lines(record):
        print(f"  {line}")
