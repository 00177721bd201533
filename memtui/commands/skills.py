"""``memtui skills``: the skills catalogue, its findings, the skill index and one-field edits.

Subcommands (each takes ``-w/--workspace``; see :mod:`memtui.core.skills` for the rules):

- ``list [--limit N] [--cursor C] [--json]``: a table (name, root/scope, valid, shadowed,
  description) and the count line ``N skills: V valid, P with problems``; a page
  (``--json``: ``{"skills", "count", "total", "cursor", "valid", "with_problems", ...}``).
- ``check [--json]``: every finding with its place; exit 1 when any is an error.
- ``index [--budget BYTES] [--json]``: the index an agent's turn gets, its size against the
  budget (8 KiB by default, seed 002) and the skills cut or left out, named (seed 004).
- ``show NAME [--json]``: one skill: fields, findings, files beside it, its body.
- ``set NAME KEY VALUE``: change one front matter field, keeping BOM and line ends.
- ``status [NAME] [--json]``: each skill's governance: the node it is bound to and its owner,
  its manifest, its state (untracked, published, edited) and its last test run; exit 1 when
  a skill listed has an error finding (each is printed).
- ``bind NAME NODE``: bind a skill to a memory node (``metadata: memory-node`` in its front
  matter); the node's owner becomes the skill's owner (seed 000 Part II §10).
- ``test NAME[@N] [--timeout S] [--json]``: run the tests the skill's manifest names (its
  folder as it is, or version N in a scratch copy): no shell, a timeout that kills the process
  group, a restricted environment, output bounded; the result is recorded with the content
  hash (exit 1 when they fail).
- ``adopt NAME``: record the skill's folder as it is as its first published version (its
  baseline); a skill must be adopted before a change of it is proposed.
- ``schema``: print the JSON Schema of ``skill-manifest.json`` that memtui checks manifests with.
- ``versions NAME`` / ``diff NAME A B``: its history (state, provenance, test result of each
  version's content) and the difference between two versions, file by file.
- ``publish NAME@N [--reviewed]``: the owner publishes a proposal (refused, naming the part or
  the test, when the manifest is incomplete or the tests have not passed on that content);
  ``reject NAME@N --reason``; ``rollback NAME --to N`` publishes version N's content again as a
  new version; ``revert NAME`` puts the published version back over an unrecorded edit. A
  skill gated on an eval set (its manifest's verification names ``eval_set``) re-runs that set
  before and after each of the three, shows the figures, and is refused when they get worse
  unless ``--accept-regression --reason WHY``; the evaluation is kept with the version.
A skill change is filed with ``memtui propose --skill NAME --from FOLDER``; a case pins the
versions it ran with ``memtui use --skill NAME@N``, and ``memtui pins`` shows them both ways.
"""

from __future__ import annotations

import argparse
import sys

from memtui.commands import _common
from memtui.core.text import clip as _clip, visible, visible_lines
from memtui.commands._common import ExitCode, add_json_arg, add_workspace_arg, emit_json, open_workspace
from memtui.core.findings import Finding, Severity, sort_key
from memtui.core.governance import gate as gov_gate
from memtui.core.paging import Page
from memtui.core.skills import (
    DEFAULT_INDEX_BUDGET, Catalogue, Skill, build_index, load_catalogue, save_skill_field,
)


def _format_finding(f: Finding) -> str:
    text = f"{f.severity.value:7} {f.code:26} {visible(f.place)}: {visible(f.message)}"
    if f.fix:
        text += f"\n{'':8}fix: {visible(f.fix)}"
    return text


def _load(args: argparse.Namespace) -> Catalogue:
    return load_catalogue(open_workspace(args))


def _cmd_list(args: argparse.Namespace) -> int:
    cat = _load(args)
    page = Page.of(cat.skills, args.cursor or 0, args.limit)
    if args.json:
        emit_json(_common.page_json(
            "skills", page, [s.to_json() for s in page.items],
            valid=cat.valid_count, with_problems=cat.problem_count,
            roots={k: str(v) for k, v in cat.roots.items()}, findings=[f.to_json() for f in cat.findings]))
        return int(ExitCode.OK)
    rows = [(_clip(s.shown_name, 40), _clip(s.root_scope, 34), "yes" if s.valid else "NO",
             s.standing, _clip(s.description or "", 60) if s.description else "—")
            for s in page.items]
    header = ("name", "root/scope", "valid", "shadowed", "description")
    widths = [max([len(header[i])] + [len(r[i]) for r in rows]) for i in range(4)]
    print("  ".join(h.ljust(widths[i]) if i < 4 else h for i, h in enumerate(header)))
    for row in rows:
        print("  ".join(c.ljust(widths[i]) if i < 4 else c for i, c in enumerate(row)))
    print(cat.count_line())
    _common.print_more(page, "skills")
    return int(ExitCode.OK)


def _cmd_check(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    cat = load_catalogue(ws)
    findings = cat.all_findings()
    if args.governance:
        findings = sorted(findings + _governance_findings(ws, cat), key=sort_key)
    if not args.include_info:
        shown = [f for f in findings if f.severity is not Severity.INFO]
    else:
        shown = findings
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    if args.json:
        emit_json({"count": len(cat.skills), "valid": cat.valid_count,
                   "with_problems": cat.problem_count, "errors": errors,
                   "findings": [f.to_json() for f in shown]})
    else:
        for f in shown:
            print(_format_finding(f))
        hidden = len(findings) - len(shown)
        tail = f" ({hidden} info notes not shown; --info shows them)" if hidden else ""
        print(f"{cat.count_line()}; {errors} error finding{'s' if errors != 1 else ''}{tail}")
    return int(ExitCode.PROBLEM if errors else ExitCode.OK)




def _cmd_index(args: argparse.Namespace) -> int:
    cat = _load(args)
    index = build_index(cat, args.budget)
    if args.json:
        emit_json(index.to_json())
        return int(ExitCode.OK)
    print(index.text, end="")
    print(f"--- {len(index.lines)} skill{'s' if len(index.lines) != 1 else ''} in the index, "
          f"{index.size:,} of {index.budget:,} bytes")
    if index.cut:
        print(f"--- {len(index.cut)} cut by the budget (the whole index would be {index.full_size:,} bytes):")
        for skill, line in index.cut:
            print(f"    {visible(skill.name or skill.key)} ({skill.path}, {len(line.encode('utf-8')):,} bytes)")
    if index.left_out:
        print(f"--- {len(index.left_out)} not offered to agents:")
        for skill, why in index.left_out:
            print(f"    {visible(skill.shown_name)} ({skill.path}): {why}")
    return int(ExitCode.OK)


def _pick(cat: Catalogue, name: str) -> Skill:
    from memtui.commands._common import fail

    found = cat.find(name)
    if not found:
        fail(f"no skill is named {name!r}; `memtui skills list` shows the names", ExitCode.USAGE)
    live = [s for s in found if s.shadowed_by is None and s.nested_in is None] or found
    if len(live) > 1:
        fail(f"{len(live)} skills are named {name!r} ({', '.join(s.path for s in live)}); "
             "give the folder path instead", ExitCode.USAGE)
    return live[0]


def _cmd_show(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    cat = load_catalogue(ws)
    skill = _pick(cat, args.name)
    status = _status(ws, skill)
    if args.json:
        data = skill.to_json()
        data["body"] = skill.body
        data["files_beside"] = skill.files_beside()
        data["governance"] = status.to_json()
        emit_json(data)
        return int(ExitCode.OK)
    print(f"name:        {visible(skill.shown_name)}")
    print(f"description: {visible(skill.description or '—')}")
    print(f"path:        {skill.path}")
    print(f"root/scope:  {skill.root_scope}{'  (read-only)' if skill.read_only else ''}")
    print(f"valid:       {'yes' if skill.valid else 'no'}")
    for label, value in (("shadowed by", skill.shadowed_by), ("nested in", skill.nested_in)):
        if value:
            print(f"{label + ':':13}{value}")
    print(f"bound to:    {_bound(status)}")
    print(f"manifest:    {'complete' if status.manifest.complete else 'not publishable: ' + visible(status.manifest.why_not())}")
    if status.published or status.state != "untracked":
        print(f"state:       {status.state}{'  (' + status.published + ')' if status.published else ''}")
    if status.gated_on:
        print(f"gated on:    the eval set of {', '.join(n or '(root)' for n in status.gated_on)} "
              "(re-run on publish, rollback and revert)")
    files = skill.files_beside()
    if files:
        print(f"files:       {len(files)} beside SKILL.md: " + ", ".join(files[:10])
              + (" …" if len(files) > 10 else ""))
    for f in skill.findings:
        print(_format_finding(f))
    print("---")
    print(skill.body, end="" if skill.body.endswith("\n") else "\n")
    return int(ExitCode.OK)


def _cmd_set(args: argparse.Namespace) -> int:
    from memtui.commands._common import fail

    from memtui.core.session import Session

    ws = open_workspace(args)
    cat = load_catalogue(ws)
    skill = _pick(cat, args.name)
    try:
        with Session.open(ws, purpose="cli skills set") as session:
            saved = save_skill_field(session, skill, args.key, args.value, client_id=args.client_id)
    except ValueError as exc:
        fail(f"{skill.path}: {exc}", ExitCode.PROBLEM)
    except OSError as exc:
        fail(f"{skill.path} could not be written ({exc.strerror or exc}); it is unchanged", ExitCode.PROBLEM)
    print(f"{saved.path}: {args.key} saved"
          + (" (byte order mark kept)" if saved.bom else "")
          + (" (CRLF line ends kept)" if saved.crlf else ""))
    for f in saved.findings:
        if f.severity is not Severity.INFO:
            print(_format_finding(f))
    return int(ExitCode.OK)


def _status(ws, skill: Skill):  # noqa: ANN001, ANN202 - Workspace, SkillStatus
    from memtui.core.session import Session
    from memtui.core.skills.status import skill_status

    s = Session.open(ws, purpose="cli skills", read_only=True)
    try:
        return skill_status(ws, skill, s.store)
    finally:
        s.close()


def _governance_findings(ws, cat: Catalogue) -> list[Finding]:  # noqa: ANN001 - Workspace
    from memtui.core.session import Session
    from memtui.core.skills.status import governance_findings

    s = Session.open(ws, purpose="cli skills", read_only=True)
    try:
        return governance_findings(ws, cat, s.store)
    finally:
        s.close()


def _bound(status) -> str:  # noqa: ANN001 - SkillStatus
    b = status.binding
    if b.node is None:
        return "nothing (no owner): " + visible(b.finding.message if b.finding else "")
    owner = f"owner {b.owner} ({b.owner_how})" if b.owner else "no owner set on the node or above it"
    return f"{b.node or 'the root node'} ({b.how}); {owner}"


def _cmd_status(args: argparse.Namespace) -> int:
    from memtui.core.session import Session
    from memtui.core.skills.status import governed, skill_status

    ws = open_workspace(args)
    cat = load_catalogue(ws)
    skills = [_pick(cat, args.name)] if args.name else governed(cat)
    s = Session.open(ws, purpose="cli skills status", read_only=True)
    try:
        rows = [skill_status(ws, sk, s.store) for sk in skills]
    finally:
        s.close()
    # exit 1 = it ran and found a problem: an error finding of a skill listed
    found = ExitCode.PROBLEM if any(f.severity is Severity.ERROR for r in rows for f in r.findings) else ExitCode.OK
    if args.json:
        emit_json({"skills": [r.to_json() for r in rows], "count": len(rows)})
        return int(found)
    for r in rows:
        test = r.last_test
        tested = "not tested" if test is None else ("tests passed" if test.get("passed") else f"tests FAILED ({test.get('why')})")
        node = r.binding.node if r.binding.node is not None else "unbound"
        print(f"{_clip(r.skill.shown_name, 30):30}  {_clip(node or 'root', 26):26}  {_clip(r.binding.owner or '-', 20):20}  "
              f"{r.state:9}  {'manifest ok' if r.manifest.complete else 'manifest incomplete'}  {tested}")
        for f in r.findings:  # one skill: its findings; every skill: its errors (they set the exit code)
            if f.severity is Severity.ERROR or (args.name and f.severity is not Severity.INFO):
                print("    " + _format_finding(f).replace("\n", "\n    "))
    return int(found)


def _cmd_schema(args: argparse.Namespace) -> int:
    from memtui.core.skills.manifest import schema_text

    sys.stdout.write(schema_text())
    return int(ExitCode.OK)


def _cmd_bind(args: argparse.Namespace) -> int:
    from memtui.commands._common import fail
    from memtui.core.session import Session
    from memtui.core.skills.binding import METADATA_KEY
    from memtui.core.skills.edit import save_skill_metadata
    from memtui.core.tree.model import MemoryTree

    ws = open_workspace(args)
    cat = load_catalogue(ws)
    skill = _pick(cat, args.name)
    node = args.node.strip().strip("/")
    node = node[len("memory/"):] if node.startswith("memory/") else node
    if ".." in node.split("/") or not MemoryTree(ws).is_node(node):
        fail(f"{args.node!r} is not a node of the memory tree (a folder under memory/ with an AGENTS.md)", ExitCode.USAGE)
    status = _status(ws, skill)
    if status.published:
        fail(f"{skill.key} is governed ({status.published} is published): propose the new binding as a change "
             f"(`memtui propose --skill {skill.key} --from FOLDER`)", ExitCode.REFUSED)
    try:
        with Session.open(ws, purpose="cli skills bind", profile=getattr(args, "as_profile", None)) as session:
            saved = save_skill_metadata(session, skill, METADATA_KEY, node, client_id=args.client_id)
    except ValueError as exc:
        fail(f"{skill.path}: {exc}", ExitCode.PROBLEM)
    status = _status(ws, saved)
    print(f"{saved.path}: bound to {_bound(status)}")
    return int(ExitCode.OK)


def _cmd_test(args: argparse.Namespace) -> int:
    from memtui.commands import _gov
    from memtui.core.skills import versions as sv
    from memtui.core.skills.testrun import MAX_TIMEOUT

    if args.timeout is not None and args.timeout > MAX_TIMEOUT:
        _common.fail(f"argument --timeout: must be at most {MAX_TIMEOUT:.0f} seconds, not {args.timeout}", ExitCode.USAGE)
    with _gov.session(args, "skills test") as session:
        row, run = sv.test(session, args.ref, timeout=args.timeout)
    if args.json:
        emit_json(row)
        return int(ExitCode.OK if run.passed else ExitCode.PROBLEM)
    where = row["version"] or f"skills/{row['skill']}"
    print(f"{where}: ran {' '.join(run.argv)} ({run.seconds:.1f} s, content {row['sha256'][:12]})")
    for label, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        if text.strip():
            lines = text.rstrip("\n").splitlines()
            shown = lines[-10:]
            print(f"--- {label} (last {len(shown)} of {len(lines)} lines kept)")
            for line in shown:
                print("    " + visible(line))
    if run.truncated:
        print(f"--- output: {run.out_bytes:,} bytes printed, the first 64 KiB of each stream kept")
    if not run.watched:
        print("--- the workspace is too large to check for writes outside the skill folder; not checked")
    print(f"tests {'passed' if run.passed else 'FAILED: ' + visible(run.why())}; recorded for content {row['sha256'][:12]}")
    return int(ExitCode.OK if run.passed else ExitCode.PROBLEM)


def _version_line(v, ledger) -> str:  # noqa: ANN001 - SkillVersion, SkillLedger
    tested = ledger.test_state(v)
    prov = v.provenance
    how = prov.get("kind") or "-"
    if prov.get("rollback_of"):
        how += f" of @{prov['rollback_of']}"
    if prov.get("case"):
        how += f" (case {prov['case']})"
    line = f"{v.id}  {v.state:8}  {v.author or '-'}  {v.created}  {how}  {v.sha256[:12]}  {tested}"
    if prov.get("evaluation"):
        line += "  " + gov_gate.verdict(prov["evaluation"])
    return line


def _cmd_adopt(args: argparse.Namespace) -> int:
    from memtui.commands import _gov
    from memtui.core.skills import versions as sv

    with _gov.session(args, "skills adopt") as session:
        v = sv.adopt(session, args.name, args.reason)
    if args.json:
        emit_json(v.to_json())
    else:
        print(f"recorded {v.id} (baseline, {len(v.files)} file{'s' if len(v.files) != 1 else ''}, content {v.sha256[:12]}; bound to {v.node or 'the root node'})")
    return int(ExitCode.OK)


def _cmd_versions(args: argparse.Namespace) -> int:
    from memtui.commands import _gov
    from memtui.core.skills import versions as sv

    with _gov.reading(args, "skills versions") as session:
        ledger = sv.SkillLedger(session.store)
        versions = ledger.versions(args.name)
        if not versions:
            _common.fail(f"{args.name} has no recorded versions (`memtui skills adopt {args.name}` records its "
                         "folder as version 1)", ExitCode.PROBLEM)
        page = Page.of(versions, args.cursor or 0, args.limit)
        if args.json:
            emit_json(_common.page_json("versions", page, [
                {**v.to_json(), "last_test": ledger.last_test(v.skill, v.sha256)} for v in page.items], skill=args.name))
            return int(ExitCode.OK)
        for v in page.items:
            print(_version_line(v, ledger))
            _gov.print_evaluation(v.provenance.get("evaluation"))
        _common.print_more(page, "versions")
    return int(ExitCode.OK)


def _cmd_diff(args: argparse.Namespace) -> int:
    from memtui.commands import _gov
    from memtui.core.skills import versions as sv

    with _gov.reading(args, "skills diff") as session:
        patch = sv.diff(sv.SkillLedger(session.store), args.name, args.a, args.b)
    if args.json:
        emit_json({"from": sv.version_id(args.name, args.a), "to": sv.version_id(args.name, args.b), "diff": patch})
    else:
        print(visible_lines(patch) if patch else f"versions {args.a} and {args.b} of {args.name} hold the same files",
              end="" if patch else "\n")
    return int(ExitCode.OK)


def _cmd_publish(args: argparse.Namespace) -> int:
    from memtui.commands import _gov
    from memtui.core.skills import versions as sv

    with _gov.session(args, "skills publish") as session:
        version = sv.check_publish(session, args.ref, reviewed=args.reviewed)  # refused before asking
        ev = _gov.evaluate(args, session, "publish", measure=lambda s, progress: sv.evaluate_change(
            s, "publish", version.skill, ref=args.ref, reviewed=args.reviewed, progress=progress))
        _gov.confirm(args, session, f"Publish {args.ref}")
        v = sv.publish(session, args.ref, reviewed=args.reviewed, why=args.why,
                       accept_regression=_gov.accepted(args), evaluation=ev, progress=_gov._progress())
    if args.json:
        emit_json(v.to_json())
    else:
        print(f"published {v.id}: skills/{v.skill}/ holds it ({len(v.files)} file{'s' if len(v.files) != 1 else ''}, content {v.sha256[:12]})")
        _accepted_line(v.provenance.get("evaluation"))
    return int(ExitCode.OK)


def _accepted_line(record: dict | None) -> None:
    """Say that a regression was accepted, and why (the figures were printed before)."""
    if record and record.get("accepted_regression"):
        print(f"regression accepted: {visible(str(record.get('reason')))}")


def _cmd_reject(args: argparse.Namespace) -> int:
    from memtui.commands import _gov
    from memtui.core.skills import versions as sv

    with _gov.session(args, "skills reject") as session:
        v = sv.reject(session, args.ref, args.reason)
    if args.json:
        emit_json(v.to_json())
    else:
        print(f"rejected {v.id}: {args.reason}")
    return int(ExitCode.OK)


def _cmd_rollback(args: argparse.Namespace) -> int:
    from memtui.commands import _gov
    from memtui.core.skills import versions as sv

    with _gov.session(args, "skills rollback") as session:
        sv.check_rollback(session, args.name, args.to)
        ev = _gov.evaluate(args, session, "rollback", measure=lambda s, progress: sv.evaluate_change(
            s, "rollback", args.name, to=args.to, progress=progress))
        _gov.confirm(args, session, f"Roll the skill {args.name} back to version {args.to}")
        v = sv.rollback(session, args.name, args.to, args.reason, accept_regression=_gov.accepted(args),
                        evaluation=ev, progress=_gov._progress())
    if args.json:
        emit_json(v.to_json())
    else:
        print(f"published {v.id} with the content of version {args.to} (content {v.sha256[:12]})")
        _accepted_line(v.provenance.get("evaluation"))
    return int(ExitCode.OK)


def _cmd_revert(args: argparse.Namespace) -> int:
    from memtui.commands import _gov
    from memtui.core.skills import versions as sv

    with _gov.session(args, "skills revert") as session:
        sv.check_revert(session, args.name)
        ev = _gov.evaluate(args, session, "revert", measure=lambda s, progress: sv.evaluate_change(
            s, "revert", args.name, progress=progress))
        _gov.confirm(args, session, f"Put {args.name}'s published version back over the folder")
        v = sv.revert(session, args.name, accept_regression=_gov.accepted(args), evaluation=ev,
                      progress=_gov._progress())
    if args.json:
        emit_json(v.to_json())
    else:
        print(f"skills/{v.skill}/ holds {v.id} again")
    return int(ExitCode.OK)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memtui skills {list,check,index,show,set}`` (the skills rules: seed 002; the
    retry id: seed 004)."""
    parser = subparsers.add_parser(
        "skills", help="the skills catalogue, its findings and the skill index",
        description="The skills of a workspace: skills/ (the agent's) and shared-skills/ "
                    "(the administrator's, which wins on a name clash), with the scope cascade "
                    "of shared-skills.d/. A folder of skill folders can be given instead.")
    sub = parser.add_subparsers(dest="skills_command", metavar="ACTION", required=True)

    p = sub.add_parser("list", help="the catalogue as a table, with the valid/problem count")
    add_workspace_arg(p)
    add_json_arg(p)
    _common.add_page_args(p, "skills")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("check", help="the findings of every skill; exit 1 on an error finding")
    add_workspace_arg(p)
    add_json_arg(p)
    p.add_argument("--info", dest="include_info", action="store_true",
                   help="also show info notes (BOM, CRLF, unknown keys, description hints)")
    p.add_argument("--governance", action="store_true",
                   help="also check each skill's binding (its owner), its manifest and unrecorded edits")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("index", help="the skill index an agent's turn gets, against a byte budget")
    add_workspace_arg(p)
    add_json_arg(p)
    p.add_argument("--budget", type=_common.byte_count, default=DEFAULT_INDEX_BUDGET, metavar="BYTES",
                   help=f"bytes the index may take (default {DEFAULT_INDEX_BUDGET})")
    p.set_defaults(func=_cmd_index)

    p = sub.add_parser("show", help="one skill: fields, findings, files beside it and body")
    add_workspace_arg(p)
    add_json_arg(p)
    p.add_argument("name", metavar="NAME",
                   help="the skill's name or folder (put `--` before a name starting with -)")
    p.set_defaults(func=_cmd_show)

    p = sub.add_parser("set", help="change one front matter field, keeping BOM and line ends")
    add_workspace_arg(p)
    p.add_argument("name", metavar="NAME",
                   help="the skill's name or folder (put `--` before a name starting with -)")
    p.add_argument("key", metavar="KEY", help="the front matter key, e.g. description")
    p.add_argument("value", metavar="VALUE", help="the new text")
    p.add_argument("--client-id", metavar="ID",
                   help="an id for this request: a retry with the same id is not applied or logged twice")
    p.set_defaults(func=_cmd_set)

    p = sub.add_parser("status", help="each skill's node and owner, manifest, state and last test run")
    add_workspace_arg(p)
    add_json_arg(p)
    p.add_argument("name", metavar="NAME", nargs="?", help="one skill (default: every skill)")
    p.set_defaults(func=_cmd_status)

    p = sub.add_parser("schema", help="print the JSON Schema skill-manifest.json is checked against")
    p.set_defaults(func=_cmd_schema)

    p = sub.add_parser("bind", help="bind a skill to a memory node: the node's owner owns the skill")
    add_workspace_arg(p)
    p.add_argument("name", metavar="NAME", help="the skill's name or folder")
    p.add_argument("node", metavar="NODE", help="the node, relative to memory/ (support/parcels-lost)")
    p.add_argument("--as", dest="as_profile", metavar="PROFILE", help="act as this profile")
    p.add_argument("--client-id", metavar="ID", help="an id for this request (a retry is not applied twice)")
    p.set_defaults(func=_cmd_bind)

    p = sub.add_parser("test", help="run the tests a skill's manifest names, and record the result")
    add_workspace_arg(p)
    add_json_arg(p)
    p.add_argument("ref", metavar="NAME[@N]", help="the skill (its folder as it is) or one of its versions")
    p.add_argument("--timeout", type=_common.positive_int, metavar="SECONDS", help="seconds before the test and its processes are killed "
                                           "(default: the manifest's, else 60; at most 600)")
    p.add_argument("--as", dest="as_profile", metavar="PROFILE", help="act as this profile")
    p.set_defaults(func=_cmd_test)

    from memtui.commands import _gov

    p = sub.add_parser("adopt", help="record the skill's folder as it is as version 1 (its baseline)")
    _gov.add_common(p)
    p.add_argument("name", metavar="NAME", help="the skill (its folder in skills/)")
    p.add_argument("--reason", default="", help="why, recorded with the version")
    p.set_defaults(func=_cmd_adopt)

    p = sub.add_parser("versions", help="a skill's versions: state, provenance, content hash, test result")
    _gov.add_common(p, acting=False)
    p.add_argument("name", metavar="NAME")
    _common.add_page_args(p, "versions")
    p.set_defaults(func=_cmd_versions)

    p = sub.add_parser("diff", help="the difference between two versions of a skill, file by file")
    _gov.add_common(p, acting=False)
    p.add_argument("name", metavar="NAME")
    p.add_argument("a", metavar="A", type=_common.positive_int, help="the version number to diff from")
    p.add_argument("b", metavar="B", type=_common.positive_int, help="the version number to diff to")
    p.set_defaults(func=_cmd_diff)

    p = sub.add_parser("publish", help="publish a skill proposal (owner; tests passed on that content)")
    _gov.add_common(p, confirm=True)
    p.add_argument("ref", metavar="NAME@N", help="the proposal")
    p.add_argument("--reviewed", action="store_true", help="a person reviewed the change (else two independent uses)")
    p.add_argument("--why", default="", help="the decision's note")
    _gov.add_regression_args(p, reason=True)
    p.set_defaults(func=_cmd_publish)

    p = sub.add_parser("reject", help="reject a skill proposal with a reason (owner)")
    _gov.add_common(p)
    p.add_argument("ref", metavar="NAME@N")
    p.add_argument("--reason", required=True, help="why (recorded)")
    p.set_defaults(func=_cmd_reject)

    p = sub.add_parser("rollback", help="publish an earlier version's content again, as a new version (owner)")
    _gov.add_common(p, confirm=True)
    p.add_argument("name", metavar="NAME")
    p.add_argument("--to", type=_common.positive_int, required=True, metavar="N", help="the version whose content comes back")
    p.add_argument("--reason", default="", help="why, recorded with the new version (and why a regression "
                                                 "is accepted, with --accept-regression)")
    _gov.add_regression_args(p, reason=False)
    p.set_defaults(func=_cmd_rollback)

    p = sub.add_parser("revert", help="put the published version back over an unrecorded edit (owner)")
    _gov.add_common(p, confirm=True)
    p.add_argument("name", metavar="NAME")
    _gov.add_regression_args(p, reason=True)
    p.set_defaults(func=_cmd_revert)
