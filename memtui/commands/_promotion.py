"""``memtui eval promotion``: the promotion rules measured (seed 000 §7.4b).

For every version promoted by two independent uses and every one promoted by human review:
was it later contested, contradicted, rolled back or retired, and how soon; and, given
held-out triage cases (--cases, the format of `memtui eval triage`), what each promoted
version still in the memory did on them: a right precedent (among the answer of a case it
is relevant to), a false one (the first answer of a case it is not relevant to), another
answer, or never surfaced. Figures per node and per rule, then one line per version; the
rule each node requires now (a node whose AGENTS.md front matter says `promotion: review`,
or memtui.toml [promotion] "node" = "review", requires human review instead of two uses)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core.governance import promotion
from memtui.core.search.triage import CasesError
from memtui.core.store import Store
from memtui.core.text import visible


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``eval promotion`` to the ``eval`` subcommands ``sub``."""
    p = sub.add_parser("promotion", help="what became of versions promoted by two uses and by review",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(p)
    _common.add_json_arg(p)
    p.add_argument("--domain", metavar="NODE", help="only versions in this node and the nodes below it")
    p.add_argument("--cases", action="append", default=[], metavar="FILE",
                   help="held-out triage cases (JSON lines, as for `memtui eval triage`); repeatable")
    p.add_argument("--k", type=_common.positive_int, default=5, metavar="K",
                   help="how many of a case's answers count as surfaced (default 5)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """0 the measurement ran; 2 bad arguments or an unusable cases file."""
    ws = _common.open_workspace(args)
    domain = (args.domain or "").strip().strip("/")
    if domain.startswith("memory/") and ws.memory_rel == "memory":
        domain = domain[len("memory/"):]
    if domain and not (ws.memory / domain).is_dir():
        _common.fail(f"--domain {args.domain!r} is not a folder of the memory tree", ExitCode.USAGE)
    store = Store.open(ws, read_only=True)
    try:
        if store.damaged:
            f = store.findings[0]
            _common.fail(f"{f.place}: {f.message}", ExitCode.PROBLEM)
        promoted = promotion.history(store, domain or None)
    finally:
        store.close()
    measured = None
    if args.cases:
        try:
            measured = promotion.held_out(ws, promoted, [Path(c) for c in args.cases], k=args.k)
        except CasesError as exc:
            _common.fail(str(exc), ExitCode.USAGE)
    rows = promotion.summarise(promoted)
    nodes = sorted({p.node for p in promoted} | ({domain} if domain else set()))
    required = {n: promotion.required_rule(ws, n) for n in nodes}
    if args.json:
        _common.emit_json({"domain": domain or None, "held_out": measured, "nodes": rows,
                           "versions": [p.to_json() for p in promoted],
                           "required": {n: {"rule": r, "set_in": w or None} for n, (r, w) in required.items()},
                           "rule": "seed 000 §7.4b: measure the two-uses rule on the §7.2 held-out set"})
        return ExitCode.OK
    if not promoted:
        print("nothing was promoted by uses or by review yet" + (f" under {domain}" if domain else ""),
              file=sys.stderr)
    for line in promotion.report_lines(promoted, rows, required, measured):
        print(visible(line))
    return ExitCode.OK
