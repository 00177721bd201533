"""``memtui versions ARTICLE``: the version history of an article, oldest first (a page:
``--limit``, ``--cursor``; ``--json``: ``{"article", "versions", "count", "total", "cursor",
"counters"}``, the entry's distinct counters: occurrences, verified reuses, clean executions),
and the diff between any two versions (``--diff A B``). Read-only (seed 000 §7.4b)."""

from __future__ import annotations

import argparse

from memtui.core import text
from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import governance as gov
from memtui.core.paging import Page


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("versions", help="the version history of an article",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, acting=False)
    p.add_argument("article", metavar="ARTICLE", help="the article, relative to memory/")
    p.add_argument("--diff", nargs=2, type=_common.positive_int, metavar=("A", "B"),
                   help="print the diff from version A to B (version numbers, 1 or more)")
    _common.add_page_args(p, "versions")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with _gov.reading(args, "versions") as s:
        ledger = gov.Ledger(s.store)
        article = gov.normalise_article(args.article)  # GovernanceError: not an article (exit 1)
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
        page = Page.of(versions, args.cursor or 0, args.limit)
        if args.json:
            _common.emit_json(_common.page_json("versions", page, [
                {**v.to_json(content=False), "retired_how": gov.retired_how(v)} for v in page.items],
                article=article, counters=gov.counters(s.store, article).to_json()))
        else:
            for v in page.items:
                print(_gov.version_line(v))
                _gov.print_evaluation(_gov.evaluation_of(v))
            _common.print_more(page, "versions")
    return ExitCode.OK
