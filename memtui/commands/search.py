"""``memtui search QUERY``: full-text search over the workspace.

The index is brought up to date first (quick when nothing changed; progress on standard
error when it is a terminal), then the query runs. ``memtui index`` is in
:mod:`memtui.commands.index`.

The results are a page (``--limit``, ``--cursor``). The search core takes no offset
yet, so a later page asks it for ``cursor + limit`` hits and shows the last ``limit``: the
ranking, ``total`` and the verdicts are those of the whole list from the first hit.
"""

from __future__ import annotations

import argparse
import os
import sys

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core.paging import Page
from memtui.core.search.index import IndexReport, SearchIndex
from memtui.core.search.query import Hit, QueryError, Results, search
from memtui.core.search.sources import KINDS
from memtui.core.text import plural, visible


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``search`` subcommand."""
    p = subparsers.add_parser(
        "search", help="search the workspace (articles, experience, notes, skills, graph)",
        description="Search every item of the workspace. Plain words are ranked (symptom and "
        'alias matches count most); "a phrase", prefix*, fuzzy~, a AND b; filters kind:K '
        "node:N owner:P state:S tag:T. Proposals and retired versions are left out unless "
        "--include-proposed. Exit code 1 when nothing matches. The results are a page: the "
        "JSON's `cursor` (or the footer on standard error) gives the next one with --cursor.",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("query", nargs="+", help="the query words (quote the whole query in the shell)")
    _common.add_workspace_arg(p)
    _common.add_json_arg(p)
    _common.add_page_args(p, "results", default=10)
    p.add_argument("--kind", action="append", choices=KINDS, metavar="K",
                   help=f"only this kind of item (repeatable): {', '.join(KINDS)}")
    p.add_argument("--include-proposed", action="store_true",
                   help="also show proposals and retired versions")
    p.set_defaults(func=run_search)


def _progress():
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\rindexing {done}/{total} files")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def update_index(index: SearchIndex, rebuild: bool = False) -> IndexReport:
    """Bring ``index`` up to date, with progress on a terminal. IndexBusyError (another process
    is updating it) and IndexWriteError reach the CLI's exit-code table: exit 1, try again."""
    return index.update(progress=_progress(), rebuild=rebuild)


def print_findings(findings) -> None:  # noqa: ANN001
    """Print each finding as ``memtui: place: message`` on standard error."""
    for f in findings:
        print(f"memtui: {visible(f.place)}: {visible(f.message)}", file=sys.stderr)


def run_search(args: argparse.Namespace) -> int:
    """``memtui search``: 0 with results, 1 with none, 2 for a query that cannot be used."""
    ws = _common.open_workspace(args)
    index = SearchIndex(ws)
    report = update_index(index)
    text = " ".join(args.query)
    offset = args.cursor or 0
    try:
        res = search(index, text, limit=offset + args.limit, include_proposed=args.include_proposed,
                     kinds=args.kind)
    except QueryError as exc:
        _common.fail(f"the query cannot be used: {exc}", ExitCode.USAGE)
        raise AssertionError("unreachable") from exc  # pragma: no cover
    page = _page(res, offset, args.limit)
    findings = [f for f in report.findings if f.code == "search-index-damaged"] + list(res.findings)
    marks = _marks(ws, page.items)
    if args.json:
        _common.emit_json(_common.page_json(
            "hits", page, [{**h.to_json(), "marks": list(m)} for h, m in zip(page.items, marks, strict=True)],
            query=text, total_at_least=res.at_least, total_estimated=res.estimated, ms=round(res.ms, 2),
            likelihood=round(res.likelihood, 4), findings=[f.to_json() for f in findings],
            reading=res.reading.to_json() if res.reading else None, known=res.known))
    else:
        print_findings(findings)
        if res.reading and res.reading.summary:
            print(res.reading.summary)
        if res.hits and not offset:  # the verdict is about the first results; later pages show none
            print(_answer_line(res.likelihood, res.hits[0].verdict))
        for h, m in zip(page.items, marks, strict=True):
            where = h.path + (f":{h.line}" if h.line else "")
            label = h.entry_id or h.title
            state = "" if h.state in ("active", "") else f" [{h.state}]"
            state += "".join(f" [{mark}]" for mark in m)
            print(f"{h.verdict:<8} {h.score:7.2f}  {h.kind:<10} {visible(where)}  {visible(label)}{state}")
            if h.snippet and h.snippet.text:
                print("                    " + visible(_marked(h.snippet.text, h.snippet.spans)))
            if h.why:
                print("                    set apart: " + visible(h.why, limit=400))
        if not res.hits and res.known == 0.0:
            print("no precedent: none of its words occurs in the memory (is it in a language the memory "
                  "is not written in?)")
        about = "at least " if res.at_least else "about " if res.estimated else ""
        more = f"; the next page: --cursor {page.next}" if page.next is not None else ""
        print(f"{about}{plural(res.total, 'result')} in {res.ms:.0f} ms{more}", file=sys.stderr)
    return int(ExitCode.OK if res.total else ExitCode.PROBLEM)


def _page(res: Results, offset: int, limit: int) -> Page[Hit]:
    """The hits from ``offset`` on (``res`` holds at most ``offset + limit``). There is a next
    page when this one is full and more matched (or may have: an estimated or lower-bound
    total)."""
    end = offset + limit
    full = len(res.hits) >= end
    more = full and (res.total > end or res.at_least or res.estimated)
    return Page(res.hits[offset:end], res.total, end if more else None)


def _marks(ws, hits) -> list[tuple[str, ...]]:  # noqa: ANN001
    """The marks of each hit's article (:meth:`Ledger.marks`; an index line carries its article's).
    A workspace without a store has no versions, so no marks (and governance is not loaded)."""
    if not hits or not os.path.lexists(ws.state_dir / "store.json"):
        return [() for _ in hits]
    from memtui.core import governance as gov
    from memtui.core.store import Store

    store = Store.open(ws, read_only=True)
    try:
        ledger = gov.Ledger(store)
        return [ledger.marks_at(ws, h.target or h.path) for h in hits]
    finally:
        store.close()


def _answer_line(likelihood: float, first: str) -> str:
    """What the answer as a whole is: likely or only possible precedents."""
    if first == "likely":
        return f"likely precedent: {likelihood:.0%} sure that a result marked likely is the right one:"
    return (f"no confident precedent (only {likelihood:.0%} sure of the best); the best candidates are "
            "marked possible:")


def _marked(text: str, spans: list[tuple[int, int]]) -> str:
    """The snippet on one line with highlights as »word« (plain text, no markup)."""
    out, last = [], 0
    for s, e in spans:
        out.append(text[last:s])
        out.append("\u00bb" + text[s:e] + "\u00ab")
        last = e
    out.append(text[last:])
    return " ".join("".join(out).split())
