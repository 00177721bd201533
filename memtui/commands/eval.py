"""``memtui eval triage``: the retrieval acceptance test of seed 000 §7.2; ``memtui eval
promotion`` (:mod:`memtui.commands._promotion`): the promotion rules measured.

Runs every case's ticket through memtui's search and, on the same cases, through the
seed's grep baseline; prints the metrics of ``../shared/triage/README.md`` side by side and
writes memtui's ranked entry ids per case to ``--results``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core.atomic import write_text
from memtui.core.search import confidence, triage
from memtui.core.text import visible


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``eval`` with its ``triage``, ``domains`` and ``promotion`` subcommands."""
    p = subparsers.add_parser("eval", help="measure the memory (the triage retrieval test, the promotion rules)",
                              epilog=_common.EXIT_CODES_HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="eval_command", metavar="TEST", required=True)
    t = sub.add_parser(
        "triage", help="does search surface the right precedent for past tickets?",
        description="For each case (JSON lines: id, ticket, language, relevant, near_miss, and "
        "optionally style — the way the ticket is written — or form for a ticket with no "
        "precedent) run the ticket as a search and report hit@1, hit@k, MRR, the false-precedent "
        "rate (rank 1 a near miss, or any result when no precedent exists), time and rank of the "
        "first relevant entry, and hit@k and the false-precedent rate per language and per style, "
        "for memtui and for the grep baseline. Exit code 1 when memtui does not "
        "beat the baseline's hit@k.",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(t)
    _common.add_json_arg(t)
    t.add_argument("--cases", required=True, action="append", metavar="FILE",
                   help="a cases file (JSON lines); give it more than once to test (and --fit or "
                   "--folds) on several files as one set")
    t.add_argument("--k", type=_common.positive_int, default=5, metavar="K",
                   help="the cut-off of hit@k, 1 or more (default 5)")
    t.add_argument("--likely", type=_common.probability, default=confidence.LIKELY, metavar="P",
                   help="probability from which an answer is shown as a precedent "
                   f"(default {confidence.LIKELY}: more likely right than wrong)")
    t.add_argument("--folds", type=_common.whole_number(2, off=0), default=0, metavar="K",
                   help="also cross-validate the confidence calibration: fit it on K-1 folds "
                   "of the cases, measure the fold left out, for each fold (a 'k-fold' column); "
                   "K from 2 to the number of cases (default 0: none)")
    t.add_argument("--leave-out", action="append", choices=triage.GROUPINGS, default=[], metavar="BY",
                   help="also judge the calibration on ways of writing it was not fitted on: one fold "
                   "per style (a case's \"style\") or per language, each answered by a calibration "
                   "fitted on the others; prints each left-out group's figures and reliability table "
                   "(predicted against observed, expected calibration error) and the pooled ones "
                   "(repeatable: style, language)")
    t.add_argument("--fit", action="store_true",
                   help="fit the calibration on these cases and use it (in-sample figures; "
                   "prints the coefficients to ship in memtui/core/search/confidence.py)")
    t.add_argument("--results", metavar="OUT",
                   help='write {"id", "ranked", "scores", "ms", "possible"} per case to OUT')
    t.set_defaults(func=run_triage)
    d = sub.add_parser(
        "domains", help="the eval sets of the tree's domains and their last figures",
        description="List every node's eval set (<node>/evals/cases.jsonl): its owner, cases, problems and "
        "last recorded figures beside the grep baseline (beats / does not beat / no cases). The figures are "
        "recorded by each governed change of the domain, or now with --run (an audited write). --json: "
        '{"domains": [{"node", "owner", "cases", "problems", "last"}]}.',
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_workspace_arg(d)
    _common.add_json_arg(d)
    d.add_argument("--run", action="store_true",
                   help="measure every eval set on the memory as it is now and record the figures")
    d.set_defaults(func=run_domains)
    from memtui.commands import _promotion

    _promotion.register(sub)


def run_domains(args: argparse.Namespace) -> int:
    """``memtui eval domains``: 0, or 1 when a domain's set has problems or does not beat its baseline."""
    from memtui.core import evalsets
    from memtui.core.governance import gate
    from memtui.core.governance.model import now
    from memtui.core.search.index import SearchIndex
    from memtui.core.session import Session
    from memtui.core.tree.model import MemoryTree

    ws = _common.open_workspace(args)
    tree = MemoryTree(ws)
    sets = {node: evalsets.load(ws, node, tree) for node in evalsets.all_sets(ws)}
    with Session.open(ws, purpose="cli eval domains", read_only=not args.run) as s:
        if args.run and sets:
            index = SearchIndex(ws)
            index.update()
            ids = triage.entry_ids(ws)
            from memtui.core.skills.gating import gated_ids  # the skills gated on a set are its entries too

            measured = {node: gate.run_set(ws, index, es.cases, {**ids, **gated_ids(ws, node)})[0]
                        for node, es in sets.items()}

            def change(tx) -> None:  # noqa: ANN001 - Tx
                at = now()
                for node, fig in measured.items():
                    evalsets.record_figures(tx.table(evalsets.T_FIGURES), node, fig, at, "eval domains --run")
                tx.detail["domains"] = {node or ".": fig.get("hit@5") for node, fig in measured.items()}

            s.write("eval.record", ".memtui/store.json", change)
        rows: list[dict[str, Any]] = [{"node": node or ".", "owner": es.owner, "cases": len(es.cases),
                 "problems": [f.to_json() for f in es.findings if f.severity.value == "error"],
                 "last": evalsets.last_figures(s.store, node)} for node, es in sets.items()]
    bad = any(r["problems"] or (r["last"] and r["last"]["figures"].get("beats") is False) for r in rows)
    if args.json:
        _common.emit_json({"domains": rows})
    else:
        if not rows:
            print("no eval sets: a node holds its cases in <node>/evals/cases.jsonl")
        for r in rows:
            fig = (r["last"] or {}).get("figures") or {}
            beats = {True: "beats", False: "does NOT beat", None: "no cases"}[fig.get("beats")]
            last = (f"hit@5 {_fmt(fig.get('hit@5'), 'pct')} vs grep {_fmt(fig.get('baseline_hit@5'), 'pct')}: {beats}"
                    f" (at {r['last']['at']}, {r['last']['by']})") if r["last"] else "not measured yet"
            problems = f", {len(r['problems'])} problems" if r["problems"] else ""
            print(f"{visible(r['node'], limit=40)}  owner {r['owner'] or '-'}  {r['cases']} cases{problems}  {last}")
    return int(ExitCode.PROBLEM if bad else ExitCode.OK)


_ROWS = [
    ("hit@1", "hit@1", "pct"),
    ("hit@k", "hit@{k}", "pct"),
    ("MRR", "mrr", "num"),
    ("false-precedent rate", "false_precedent_rate", "pct"),
    ("  rank 1 is a near miss", "false_near_miss_rate", "pct"),
    ("  result when none exists", "false_no_precedent_rate", "pct"),
    ("first relevant: mean rank", "first_relevant_rank_mean", "num"),
    ("first relevant: median rank", "first_relevant_rank_median", "num"),
    ("first relevant: median ms", "first_relevant_ms_median", "ms"),
    ("first relevant: p90 ms", "first_relevant_ms_p90", "ms"),
]


def _fmt(value, how: str) -> str:  # noqa: ANN001
    if value is None:
        return "—"
    if how == "pct":
        return f"{value * 100:.1f}%"
    if how == "ms":
        return f"{value:.1f}"
    return f"{value:.2f}"


def _print_reliability(title: str, rel: dict) -> None:
    """A reliability table: per bin of predicted probability, cases, predicted, observed."""
    print(f"\nreliability, {title} ({rel['cases']} cases; expected calibration error {_fmt(rel['ece'], 'pct')})")
    print(f"{'predicted':<14}{'cases':>7}{'mean predicted':>16}{'observed':>10}")
    for row in rel["rows"]:
        print(f"{row['low']:.1f}–{row['high']:.1f}{'':<7}{row['cases']:>7}{_fmt(row['predicted'], 'pct'):>16}"
              f"{_fmt(row['observed'], 'pct'):>10}")


def _print_left_out(by: str, left: dict, key: str) -> None:
    """Each left-out group's figures (answered by a calibration that never saw it), then the
    pooled figures and reliability, then each group's reliability table."""
    print(f"\nleave one {by} out (each {by} answered by a calibration fitted on the others)")
    print(f"{by:<24}{'cases':>7}{key:>9}{'false prec.':>13}{'ECE':>8}")
    rows = [*left["groups"].items(), ("(pooled)", left["pooled"])]
    for name, g in rows:
        m, rel = g["metrics"], g["reliability"]
        print(f"{visible(name, limit=23):<24}{m['cases']:>7}{_fmt(m.get(key), 'pct'):>9}"
              f"{_fmt(m['false_precedent_rate'], 'pct'):>13}{_fmt(rel['ece'], 'pct'):>8}")
    print(f"precedent taken out but answered: {_fmt(left['pooled']['counterfactual_answered'], 'pct')}")
    _print_reliability(f"leave one {by} out, pooled", left["pooled"]["reliability"])
    for name, g in left["groups"].items():
        _print_reliability(f"{by} {name} left out", g["reliability"])


def _print_triage(report: triage.TriageReport, k: int) -> None:
    """The triage report as text: the calibration, the metrics of memtui (and its k-fold,
    no-cut variants) beside the grep baseline, then per language, style, fold and domain."""
    ours, base = report.memtui, report.baseline
    key = f"hit@{k}"
    cal = report.calibration
    how = (f"calibration fitted on these {cal.cases} cases (in-sample)" if report.fitted
           else f"shipped calibration (fitted on {cal.cases} cases)")
    print(f"triage test: {ours['cases']} cases ({ours['with_relevant']} with a precedent), "
          f"k={k}; an answer is shown when its probability is at least {report.likely} ({how})")
    if report.fitted:
        coef = ", ".join(f"{c:.4f}" for c in cal.coef)
        print(f"  coefficients ({', '.join(confidence.FEATURES)}): ({coef}), intercept {cal.intercept:.4f}")
        print(f"  lower ({', '.join(f'{v:.4f}' for v in cal.lower)}), upper ({', '.join(f'{v:.4f}' for v in cal.upper)})")
    columns = [("memtui", ours)]
    if report.kfold is not None:
        columns.append((f"{report.folds}-fold", report.kfold))
    columns += [("no cut", report.no_cut or {}), ("grep baseline", base)]
    print(f"{'metric':<30}" + "".join(f"{name:>15}" for name, _ in columns))
    for label, name, how_ in _ROWS:
        if name == "hit@{k}" and k == 1:
            continue  # hit@1 has its own row
        name = name.format(k=k)
        label = label.replace("hit@k", key)
        print(f"{label:<30}" + "".join(f"{_fmt(m.get(name), how_):>15}" for _, m in columns))
    cf = report.counterfactual
    cf_cols = {"memtui": cf.get("memtui"), f"{report.folds}-fold": cf.get("kfold"), "no cut": cf.get("no_cut")}
    print(f"{'precedent taken out: answered':<30}"
          + "".join(f"{_fmt(cf_cols.get(name), 'pct'):>15}" for name, _ in columns))
    for axis in ("language", "style"):
        for name in sorted(set().union(*(m.get(f"{key}_by_{axis}", {}) for _, m in columns))):
            print(f"{visible(key + ' ' + (name or '?'), limit=29):<30}"
                  + "".join(f"{_fmt(m.get(f'{key}_by_{axis}', {}).get(name), 'pct'):>15}" for _, m in columns))
        for name in sorted(set().union(*(m.get(f"false_precedent_rate_by_{axis}", {}) for _, m in columns))):
            print(f"{visible('false prec. ' + (name or '?'), limit=29):<30}"
                  + "".join(f"{_fmt(m.get(f'false_precedent_rate_by_{axis}', {}).get(name), 'pct'):>15}"
                            for _, m in columns))
    for i, m in enumerate(report.fold_metrics, start=1):
        lang = ", ".join(f"{name or '?'} {_fmt(v, 'pct')}" for name, v in m.get(f"{key}_by_language", {}).items())
        print(f"fold {i} of {report.folds} ({m['cases']} cases): hit@1 {_fmt(m['hit@1'], 'pct')}, "
              f"{key} {_fmt(m.get(key), 'pct')}, false-precedent rate {_fmt(m['false_precedent_rate'], 'pct')}"
              f" ({lang})")
    if report.kfold_reliability is not None:
        _print_reliability(f"{report.folds}-fold, pooled", report.kfold_reliability)
    for by, left in report.left_out.items():
        _print_left_out(by, left, key)
    for axis, rows in report.domains.items():
        # seed 000 §7.2: the figures are recorded per domain
        print(f"\nper {axis} (a false precedent is charged to the domain answered)")
        print(f"{axis:<30}{'cases':>7}{'hit@1':>9}{key:>9}{'baseline':>10}{'beats':>7}"
              f"{'answers':>9}{'false':>7}{'false rate':>12}")
        for name, m in rows.items():
            beats = {True: "yes", False: "NO", None: "—"}[m["beats_baseline"]]
            print(f"{visible(name, limit=29):<30}{m['cases']:>7}{_fmt(m['hit@1'], 'pct'):>9}{_fmt(m[key], 'pct'):>9}"
                  f"{_fmt(m[f'baseline_{key}'], 'pct'):>10}{beats:>7}{m['answers']:>9}"
                  f"{m['false_precedents']:>7}{_fmt(m['false_precedent_rate'], 'pct'):>12}")
    for f in report.index.get("findings", []):
        print(f"memtui: {f['path']}: {f['message']}", file=sys.stderr)


def run_triage(args: argparse.Namespace) -> int:
    """``memtui eval triage``: 0 when memtui's hit@k beats the baseline's, else 1."""
    ws = _common.open_workspace(args)
    try:
        cases = triage.load_cases(*[Path(p) for p in args.cases])
    except triage.CasesError as exc:  # each sentence starts with the file: name the flag it came from
        _common.fail(f"--cases {exc}", ExitCode.USAGE)
    try:
        report = triage.run(ws, cases, k=args.k, likely=args.likely, folds=args.folds, refit=args.fit,
                            leave_out=tuple(dict.fromkeys(args.leave_out)))
    except ValueError as exc:  # --folds over the number of cases, --fit on cases that cannot fit
        _common.fail(str(exc), ExitCode.USAGE)
    if args.results:
        lines = "".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in report.results)
        try:
            write_text(Path(args.results), lines)
        except OSError as exc:
            _common.fail(f"cannot write {args.results}: {exc.strerror or exc}", ExitCode.PROBLEM)
    ours, base = report.memtui, report.baseline
    key = f"hit@{args.k}"
    if args.json:
        _common.emit_json(report.to_json())
    else:
        _print_triage(report, args.k)
    beat = (ours.get(key) or 0) > (base.get(key) or 0)
    return int(ExitCode.OK if beat else ExitCode.PROBLEM)
