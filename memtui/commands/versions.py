"""``memtui versions ARTICLE``: the version history of an article, and the diff between any
two versions (``--diff A B``). Read-only (issue 5; seed 000 §7.4b)."""

from __future__ import annotations

import argparse

from memtui.core import text
from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import governance as gov
from memtui.core.session import Session


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("versions", help="the version history of an article",
                       description=__doc__, epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, acting=False)
    p.add_argument("article", metavar="ARTICLE", help="the article, relative to memory/")
    p.add_argument("--diff", nargs=2, type=int, metavar=("A", "B"), help="print the diff from version A to B")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ws = _common.open_workspace(args)
    with Session.open(ws, purpose="cli versions", read_only=True) as s:
        ledger = gov.Ledger(s.store)
        article = _gov.guarded(lambda: gov.normalise_article(args.article))
        versions = ledger.versions(article)
        if not versions:
            _common.fail(f"{article} has no recorded versions (untracked: `memtui adopt {article}`)",
                         ExitCode.PROBLEM)
        if args.diff:
            by = {v.number: v for v in versions}
            missing = [n for n in args.diff if n not in by]
            if missing:
                _common.fail(f"{article} has no version {missing[0]}", ExitCode.PROBLEM)
            a, b = by[args.diff[0]], by[args.diff[1]]
            patch = text.unified_diff(a.content, b.content, a.id, b.id)
            if args.json:
                _common.emit_json({"from": a.id, "to": b.id, "diff": patch})
            else:
                print(patch, end="")
            return ExitCode.OK
        if args.json:
            _common.emit_json([{**v.to_json(content=False), "retired_how": gov.retired_how(v)}
                               for v in versions])
        else:
            for v in versions:
                print(_gov.version_line(v))
    return ExitCode.OK
