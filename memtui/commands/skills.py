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
"""

from __future__ import annotations

import argparse

from memtui.commands import _common
from memtui.core.text import clip as _clip, visible
from memtui.commands._common import ExitCode, add_json_arg, add_workspace_arg, emit_json, open_workspace
from memtui.core.findings import Finding, Severity
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
    cat = _load(args)
    findings = cat.all_findings()
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
    cat = _load(args)
    skill = _pick(cat, args.name)
    if args.json:
        data = skill.to_json()
        data["body"] = skill.body
        data["files_beside"] = skill.files_beside()
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
