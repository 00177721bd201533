"""``memtui migrate``: migrate an inherited flat memory folder into one domain of the tree,
pass by pass — inventory, classify, rewrite, index, gate — each pass one audited write, the
state kept in memtui's store so a pass can be run again or resumed.

  memtui migrate inventory --from V1DIR --domain NODE   what the domain takes, and why
  memtui migrate classify  --domain NODE [--accept-suggested] [--set FILE=CLASS[:REASON]]
  memtui migrate rewrite   --domain NODE                file each kept item as a proposal
  memtui migrate index     --domain NODE --confirm      the owner confirms the one-liners
  memtui migrate gate      --domain NODE --cases FILE   held-out cases against the v1 baseline
  memtui migrate report    [--domain NODE]              where each migration stands

The inherited folder is only read; what the passes derive from it stays in the workspace's
.memtui/migrate/ folder. A domain whose gate does not beat the baseline is marked
"not migrated — re-classify" and the cases it lost are listed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import classify, migrate
from memtui.core.search.triage import CasesError


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``migrate`` and its passes."""
    p = sub.add_parser("migrate", help="migrate an inherited memory folder into a domain, pass by pass",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="step", metavar="PASS", required=True)

    def verb(name: str, help_: str, domain_required: bool = True) -> argparse.ArgumentParser:
        v = verbs.add_parser(name, help=help_, description=help_, epilog=_common.EXIT_CODES_HELP,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
        _gov.add_common(v, acting=name != "report")
        v.add_argument("--domain", required=domain_required, metavar="NODE",
                       help="the domain's node, relative to memory/ (support/parcels-lost)")
        v.add_argument("--markdown", action="store_true", help="print the whole report in Markdown after the pass")
        return v

    v = verb("inventory", "list the inherited files the domain takes (its seeds, and what a search of its "
                          "vocabulary finds), each with why, and what is not taken with why")
    v.add_argument("--from", dest="v1", required=True, metavar="V1DIR", help="the inherited folder (only read)")
    v.add_argument("--seed", action="append", default=[], metavar="FILE",
                   help="an inherited file the domain's seeds name (repeatable; default: seeds: in the "
                        "node's AGENTS.md front matter)")
    v.add_argument("--term", action="append", default=[], metavar="WORDS",
                   help="a term of the domain's vocabulary to search for (repeatable; default: vocabulary: "
                        "in the node's front matter, else its title)")
    v.add_argument("--max-files", type=_common.positive_int, default=migrate.MAX_FILES, metavar="N",
                   help=f"look at most at N entries of V1DIR (default {migrate.MAX_FILES})")
    v.set_defaults(func=run_inventory)
    v = verb("classify", "suggest a class per item (mechanic, article, experience, index-line, drop) and "
                         "record what the operator confirms")
    v.add_argument("--accept-suggested", action="store_true", help="confirm every unconfirmed item's suggested class")
    v.add_argument("--set", action="append", default=[], metavar="FILE=CLASS[:REASON]",
                   help="confirm one item's class, with an optional reason (repeatable)")
    v.set_defaults(func=run_classify)
    v = verb("rewrite", "file each kept item as a proposal in the domain, after the writing-practice checks")
    v.set_defaults(func=run_rewrite)
    v = verb("index", "the domain's one-liners from the migrated content, confirmed by its owner")
    v.add_argument("--confirm", action="store_true", help="the owner confirms the one-liners")
    v.set_defaults(func=run_index)
    v = verb("gate", "the acceptance test: held-out cases through the migrated content against the v1 baseline")
    v.add_argument("--cases", required=True, metavar="FILE", help="the held-out cases (triage JSON lines)")
    v.add_argument("--k", type=_common.positive_int, default=5, metavar="K", help="the cut-off of hit@k (default 5)")
    v.set_defaults(func=run_gate)
    v = verb("report", "where a domain's migration stands (every domain without --domain)", domain_required=False)
    v.set_defaults(func=run_report)


def _progress(step: str, done: int, total: int) -> None:
    """Progress on standard error: on a terminal one line rewritten, else a line every 5,000."""
    if done and (sys.stderr.isatty() or done % 5000 == 0):
        print(f"\r{step}: {done}{f' of {total}' if total else ''}", end="" if sys.stderr.isatty() else "\n",
              file=sys.stderr, flush=True)


def _finish(args: argparse.Namespace, record: dict, headline: str, code: ExitCode = ExitCode.OK) -> int:
    rep = migrate.report(record)
    if args.json:
        _common.emit_json(rep)
    else:
        print(headline)
        if args.markdown:
            print(migrate.markdown(rep))
        elif rep["next"]:
            print(f"next: memtui migrate {rep['next']} --domain {rep['domain']}")
    return int(code)


def run_inventory(args: argparse.Namespace) -> int:
    v1 = Path(args.v1).expanduser()
    if not v1.is_dir():
        _common.fail(f"{args.v1} is not a folder; give --from the folder of the inherited memory files",
                     ExitCode.USAGE)
    with _gov.session(args, "migrate inventory") as s:
        record = migrate.inventory(s, args.domain, v1, seeds=args.seed or None, vocabulary=args.term or None,
                                   max_files=args.max_files, progress=_progress)
    rep = migrate.report(record)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    return _finish(args, record, f"inventory of {rep['domain']}: {rep['counts']['items']} items taken, "
                                 f"{sum(rep['not_taken_counts'].values())} files not taken "
                                 f"(`memtui migrate report --domain {rep['domain']} --markdown` says why)")


def _choices(values: list[str]) -> dict[str, tuple[str, str]]:
    out = {}
    for value in values:
        name, eq, rest = value.partition("=")
        cls, _, reason = rest.partition(":")
        if not eq or not name.strip() or cls.strip() not in classify.MIGRATE_CLASSES:
            _common.fail(f"--set {value!r}: write FILE=CLASS[:REASON] with CLASS one of "
                         f"{', '.join(classify.MIGRATE_CLASSES)}", ExitCode.USAGE)
        out[name.strip()] = (cls.strip(), reason.strip())
    return out


def run_classify(args: argparse.Namespace) -> int:
    choices = _choices(args.set)
    with _gov.session(args, "migrate classify") as s:
        record = migrate.classify_items(s, args.domain, accept_suggested=args.accept_suggested, choices=choices)
    rep = migrate.report(record)
    waiting = rep["counts"]["unconfirmed"]
    if waiting:
        return _finish(args, record, f"{waiting} of {rep['counts']['items']} items await confirmation: "
                                     "--accept-suggested, or --set FILE=CLASS for each", ExitCode.PROBLEM)
    counts = ", ".join(f"{rep['counts'][c]} {c}" for c in classify.MIGRATE_CLASSES)
    return _finish(args, record, f"classified {rep['counts']['items']} items: {counts}")


def run_rewrite(args: argparse.Namespace) -> int:
    with _gov.session(args, "migrate rewrite") as s:
        record = migrate.rewrite(s, args.domain)
    rep = migrate.report(record)
    return _finish(args, record, f"{len(rep['proposals'])} proposals filed; {len(rep['held'])} held back and "
                                 f"{sum(1 for r in rep['to_rewrite'] if not r['held'])} filed with findings, for a "
                                 "person to rewrite")


def run_index(args: argparse.Namespace) -> int:
    with _gov.session(args, "migrate index") as s:
        if not args.confirm:
            record = migrate.state(s.store, migrate.normal_domain(args.domain))
            if record is None:
                _common.fail(f"no migration of {args.domain} was started; run `memtui migrate inventory` first",
                             ExitCode.PROBLEM)
            lines = migrate.index_lines(record)
            if args.json:
                _common.emit_json({"domain": record["domain"], "lines": lines, "confirmed": False})
            else:
                print("\n".join(ln["line"] for ln in lines) or "(no one-liners: no proposal was filed)")
                print(f"confirm them as the owner of {record['domain']}: memtui migrate index --domain "
                      f"{record['domain']} --confirm", file=sys.stderr)
            return int(ExitCode.PROBLEM)
        record = migrate.index(s, args.domain, confirm=True)
    return _finish(args, record, f"{len(record['index']['lines'])} one-liners confirmed by "
                                 f"{record['index']['confirmed_by']}")


def run_gate(args: argparse.Namespace) -> int:
    with _gov.session(args, "migrate gate") as s:
        try:
            record = migrate.gate(s, args.domain, Path(args.cases), k=args.k)
        except CasesError as exc:
            _common.fail(str(exc), ExitCode.USAGE)
    g = record["gate"]
    key = f"hit@{g['k']}"
    line = (f"gate of {record['domain']}: {key} {migrate._pct(g['memtui'][key])} against the v1 baseline's "
            f"{migrate._pct(g['baseline'][key])} on {g['cases']} held-out cases — {record['status']}")
    if not g["beats_baseline"]:
        line += f"; cases lost: {', '.join(g['lost']) or 'none (neither found them)'}"
    return _finish(args, record, line, ExitCode.OK if g["beats_baseline"] else ExitCode.PROBLEM)


def run_report(args: argparse.Namespace) -> int:
    with _gov.reading(args, "migrate report") as s:
        if args.domain:
            record = migrate.state(s.store, migrate.normal_domain(args.domain))
            if record is None:
                _common.fail(f"no migration of {args.domain} was started; run `memtui migrate inventory "
                             f"--from V1DIR --domain {args.domain}`", ExitCode.PROBLEM)
            rep = migrate.report(record)
            if args.json:
                _common.emit_json(rep)
            else:
                print(migrate.markdown(rep))
            return int(ExitCode.OK)
        reps = [migrate.report(r) for r in migrate.all_states(s.store)]
    if args.json:
        _common.emit_json(_common.all_json("migrations", reps))
    else:
        for rep in reps:
            print(f"{rep['domain']}  {rep['status']}  last pass: {rep['step'] or 'none'}  "
                  f"items: {rep['counts']['items']}  proposals: {len(rep['proposals'])}")
        if not reps:
            print("no migration was started")
    return int(ExitCode.OK)
