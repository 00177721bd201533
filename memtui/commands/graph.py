"""``memtui graph``: browse, audit and curate the knowledge graph headless (issue 4).

Every write goes through :func:`memtui.core.graph.commit`, the graph's share of the one
guarded write (sha256 check, re-apply or refuse with a diff, atomic write, one audit entry).
Errors reach the user through the CLI's one exit-code table (``memtui.cli.EXIT_CODES``); only
the conflict (its diff) and unreadable files are handled here. Names that start with ``-`` are given after ``--``:
``memtui graph delete --yes -- --help``. Nothing here prompts unless standard input is a
terminal; destructive commands (delete, merge, repair, convert) then need ``--yes``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core import graph as g
from memtui.core.errors import MemtuiError
from memtui.core.findings import Severity, sort_key
from memtui.core.graph.audit import audit
from memtui.core.text import visible
from memtui.core.session import Session

DASH_HINT = ("names that start with '-' go after '--', with every option before it: "
             "memtui graph delete --yes -- --help")


class _GraphParser(_common.Parser):
    """The subcommands' parser: its usage errors also explain how to pass names starting with ``-``."""

    def hint(self, message: str) -> str:
        if "unknown option" in message or "required" in message or "expected" in message:
            return DASH_HINT
        return ""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memtui graph`` and its subcommands to the top-level parser."""
    parser = subparsers.add_parser(
        "graph", help="browse, audit and curate the knowledge graph (memory/graph.jsonl)",
        description="Browse, audit and curate memory/graph.jsonl, the knowledge graph in the MCP "
                    "memory server's format. " + DASH_HINT[0].upper() + DASH_HINT[1:] + ".",
        epilog=_common.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="graph_command", metavar="SUBCOMMAND", parser_class=_GraphParser)
    parser.set_defaults(func=lambda args: (parser.print_help(), int(ExitCode.USAGE))[1])

    def add(name: str, help_text: str, func, aliases: tuple[str, ...] = (), json_arg: bool = True,
            confirm: bool = False, write: bool = False, provenance: bool = False) -> argparse.ArgumentParser:
        child = sub.add_parser(name, help=help_text, description=help_text, aliases=list(aliases))
        _common.add_workspace_arg(child)
        if json_arg:
            _common.add_json_arg(child)
        if confirm:
            child.add_argument("-y", "--yes", action="store_true",
                               help="do it without asking (needed when standard input is not a terminal)")
        if write:
            child.add_argument("--client-id", metavar="ID",
                               help="an id for this request: a retry with the same id is not applied or "
                                    "logged twice (seed 004)")
        if provenance:
            child.add_argument("--session", dest="session_key", metavar="KEY",
                               help="the agent session the observations come from "
                                    "(sessions/durable/KEY.jsonl); recorded as their provenance")
            child.add_argument("--session-line", type=_common.positive_int, metavar="N",
                               help="the line (1 or more) of that session history the observations come from")
        child.set_defaults(func=func)
        return child

    p = add("show", "show one entity: observations, relations out and in", _cmd_show)
    p.add_argument("name", metavar="NAME")
    p = add("entities", "list entities (name, type, observations, relations)", _cmd_entities, aliases=("list",))
    p.add_argument("--type", dest="types", action="append", metavar="TYPE",
                   help="only this entityType (repeatable)")
    p.add_argument("--match", metavar="TEXT", help="only names containing TEXT (case-insensitive)")
    _common.add_page_args(p, "entities")
    p = add("check", "audit the graph: bad lines, duplicates, dangling relations, orphans, type variants",
            _cmd_check, aliases=("audit",))
    p.add_argument("--no-fuzzy", action="store_true", help="skip the near-duplicate name search")
    p = add("create", "create an entity (exit 1 when the name exists)", _cmd_write(
        lambda a, _g: g.CreateEntity(a.name, a.entity_type, tuple(a.observations))), write=True, provenance=True)
    p.add_argument("name", metavar="NAME")
    p.add_argument("entity_type", metavar="TYPE")
    p.add_argument("observations", nargs="*", metavar="OBSERVATION")
    p = add("add-observation", "add an observation to an entity",
            _cmd_write(lambda a, _g: g.AddObservation(a.name, a.text)), write=True, provenance=True)
    p.add_argument("name", metavar="NAME")
    p.add_argument("text", metavar="TEXT")
    p = add("edit-observation", "replace an observation of an entity",
            _cmd_write(lambda a, _g: g.EditObservation(a.name, a.old, a.new)), write=True)
    p.add_argument("name", metavar="NAME")
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p = add("delete-observation", "delete an observation from an entity",
            _cmd_write(lambda a, _g: g.DeleteObservation(a.name, a.text)), write=True)
    p.add_argument("name", metavar="NAME")
    p.add_argument("text", metavar="TEXT")
    p = add("rename", "rename an entity; its relations follow",
            _cmd_write(lambda a, _g: g.RenameEntity(a.old, a.new)), write=True)
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p = add("merge", "merge entities into INTO (observations united, relations rewired, "
            "old names kept as 'alias:' observations); INTO alone merges its duplicate records",
            _cmd_write(lambda a, _g: g.MergeEntities(tuple(a.sources), a.into), confirm=True), confirm=True, write=True)
    p.add_argument("into", metavar="INTO")
    p.add_argument("sources", nargs="*", metavar="SOURCE")
    p = add("retype", "set entityType on every entity of the given types", _cmd_write(_retype_op), write=True)
    p.add_argument("--to", required=True, metavar="NEW", help="the entityType to set")
    p.add_argument("--variants", action="store_true",
                   help="also every spelling variant of the given types (Person/person/people)")
    p.add_argument("types", nargs="+", metavar="TYPE")
    p = add("relate", "create the relation FROM --TYPE--> TO", _cmd_write(
        lambda a, _g: g.CreateRelation(a.source, a.target, a.relation_type, allow_dangling=a.allow_dangling)), write=True)
    p.add_argument("--allow-dangling", action="store_true", help="accept ends that are not entities")
    p.add_argument("source", metavar="FROM")
    p.add_argument("relation_type", metavar="TYPE")
    p.add_argument("target", metavar="TO")
    p = add("unrelate", "delete the relation FROM --TYPE--> TO",
            _cmd_write(lambda a, _g: g.DeleteRelation(a.source, a.target, a.relation_type)), write=True)
    p.add_argument("source", metavar="FROM")
    p.add_argument("relation_type", metavar="TYPE")
    p.add_argument("target", metavar="TO")
    p = add("delete", "delete an entity and its relations", _cmd_write(
        lambda a, _g: g.DeleteEntity(a.name), confirm=True), confirm=True, write=True)
    p.add_argument("name", metavar="NAME")
    add("repair", "make the file readable by the MCP server: split glued records, drop the BOM, "
        "move unreadable lines to a backup in .memtui/backups/", _cmd_write(
            lambda a, _g: g.Repair(), confirm=True, backup="rejects"), confirm=True, write=True)
    add("convert", "rewrite a legacy single-object file as one record a line (the original is backed up)",
        _cmd_write(lambda a, _g: g.ConvertLegacy(), confirm=True, backup="original"), confirm=True, write=True)
    p = add("export", "print the graph as JSONL (server form), Graphviz DOT or Mermaid", _cmd_export,
            json_arg=False)
    p.add_argument("--format", choices=("jsonl", "dot", "mermaid"), default="jsonl")
    p = add("import", "bring in the records of another graph file (new entities, missing "
            "observations, new relations; nothing removed)", _cmd_import, write=True)
    p.add_argument("file", metavar="FILE")


# -- helpers ---------------------------------------------------------------------------------------

def _load(args: argparse.Namespace):
    """Open the workspace and its graph: ``(workspace, path, graph, loaded bytes)``; exits 2/3."""
    ws = _common.open_workspace(args)
    path = ws.path(ws.shown(ws.graph_file))  # ConfinementError: refused (exit 3)
    try:
        graph = g.load(path, ws.shown(path))
        data = path.read_bytes() if graph.exists else b""
    except (MemtuiError, OSError) as exc:
        _common.fail(f"cannot read {ws.shown(path)}: {exc}", ExitCode.USAGE)
    return ws, path, graph, data


def _retype_op(args: argparse.Namespace, graph: g.Graph) -> g.Retype:
    types = list(args.types)
    if args.variants:
        for name in args.types:
            types.extend(g.type_variants(graph, name))
    return g.Retype(tuple(dict.fromkeys(types)), args.to)


def _confirm(args: argparse.Namespace, what: str) -> None:
    """Ask before a destructive change (only on a terminal); exit 3 when not confirmed."""
    if getattr(args, "yes", False):
        return
    if not _common.interactive():
        _common.fail(f"refused: this needs confirmation ({visible(what)}), and standard input is not "
                     "a terminal, so memtui does not ask; add --yes to confirm. Nothing was changed.",
                     ExitCode.REFUSED)
    answer = input(f"About to change {visible(what)}. Go ahead? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        _common.fail("cancelled; nothing was changed.", ExitCode.REFUSED)


def _provenance(args: argparse.Namespace, operation: g.Operation) -> list:
    """Provenance records for ``--session KEY`` on create / add-observation (else none)."""
    import datetime as _dt

    from memtui.core.graph.provenance import Provenance, session_file

    key = getattr(args, "session_key", None)
    if not key:
        return []
    try:
        session_file(Path("."), key)
    except MemtuiError as exc:
        _common.fail(str(exc).replace("the provenance record may be damaged", "check --session"), ExitCode.USAGE)
    at = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    line = getattr(args, "session_line", None)
    if isinstance(operation, g.AddObservation):
        pairs = [(operation.entity, operation.text)]
    elif isinstance(operation, g.CreateEntity):
        pairs = [(operation.name, text) for text in dict.fromkeys(operation.observations)]
    else:  # pragma: no cover - only registered on the two commands above
        pairs = []
    return [Provenance(entity, text, key, at, line, "memtui") for entity, text in pairs]


def _cmd_write(build, confirm: bool = False, backup: str = ""):
    """A subcommand that applies the operation ``build(args)`` and saves it through ``commit``.

    A read-only workspace is refused before anything is asked (exit 3, with the reason); a
    ``--client-id`` that already recorded this very change prints the first result and
    writes nothing; the write leaves one audit-log entry. No lock is held while asking.
    """

    def run(args: argparse.Namespace) -> int:
        ws = _common.open_workspace(args)
        verb = getattr(args, "graph_command", "write")
        with Session.open(ws, purpose=f"cli graph {verb}") as session:
            if session.read_only:
                _common.fail(f"refused: {session.reason} Nothing was changed.", ExitCode.REFUSED)
            return _write(args, session, build, confirm, backup)

    return run


def _write(args: argparse.Namespace, session: Session, build, confirm: bool, backup: str) -> int:
    ws, path, graph, loaded = _load(args)
    client_id = getattr(args, "client_id", None)
    operation = build(args, graph)
    retried = g.retry_of(session, path, operation, client_id)
    if retried is None:
        change = operation.apply(graph)  # check before asking
        if confirm and change.changed:
            _confirm(args, f"{ws.shown(path)}: {change.summary}")
    kept = ""
    also: list[tuple[str, bytes]] = []
    if backup and retried is None and change.changed:
        import hashlib
        import time

        stamp = time.strftime("%Y%m%d-%H%M%S")
        original = loaded
        data = g.repair_rejects(graph) if backup == "rejects" else original
        if data:  # written with the repair, in the same guarded write
            kept = (f".memtui/backups/graph-{stamp}-{hashlib.sha256(original).hexdigest()[:8]}"
                    f".{'rejected' if backup == 'rejects' else 'orig'}")
            also.append((kept, data))
    try:
        saved = g.commit(path, graph, operation, loaded_bytes=loaded, session=session, client_id=client_id,
                         provenance=_provenance(args, operation), also_write=also)
    except g.GraphConflictError as exc:  # the diff first, then the sentence (exit 1)
        if exc.diff:
            sys.stderr.write(exc.diff)
        raise
    except OSError as exc:
        _common.fail(f"cannot write {ws.shown(path)}: {exc.strerror or exc}; the file is unchanged.",
                     ExitCode.EXTERNAL)
    entry = saved.audit_entry
    result = {"summary": saved.change.summary, "notes": list(saved.change.notes),
              "written": saved.written, "reapplied": saved.reapplied, "retried": saved.retried,
              "file": ws.shown(path), "backup": kept or None,
              "audit_entry": entry.to_json() if entry is not None else None}
    if args.json:
        _common.emit_json(result)
    else:
        print(visible(saved.change.summary) + ("" if saved.written or saved.retried else " (nothing written)"))
        for note in saved.change.notes:
            print(f"  note: {visible(note)}")
        if saved.reapplied:
            print("  the file had changed on disk; the edit was re-applied to the new content")
        if kept:
            print(f"  backup: {kept}")
    return int(ExitCode.OK)


# -- read-only commands -----------------------------------------------------------------------------

def _cmd_show(args: argparse.Namespace) -> int:
    _ws, _path, graph, _data = _load(args)
    records = graph.find(args.name)
    if not records:
        graph.entity(args.name)  # GraphEditError: no such entity, with similar names (exit 1)
    outgoing, incoming = graph.relations_of(args.name)
    origins = _provenance_of(_ws, args.name)
    if args.json:
        _common.emit_json({"records": [r.to_json() for r in records],
                           "outgoing": [r.to_json() for r in outgoing],
                           "incoming": [r.to_json() for r in incoming],
                           "provenance": {text: [p.to_json() for p in items] for text, items in origins.items()}})
        return int(ExitCode.OK)
    for record in records:
        print(f"{visible(record.name)}  ({visible(record.entity_type)})  line {record.line}")
        for text in record.observations:
            print(f"  - {visible(text)}")
            for item in origins.get(text, []):
                where = f", line {item.line}" if item.line else ""
                print(f"      from session {visible(item.session)} at {visible(item.at)}{where} "
                      f"(sessions/durable/{visible(item.session)}.jsonl; {item.source})")
    if len(records) > 1:
        print(f"  note: written {len(records)} times; `memtui graph merge -- NAME` unites them")
    for relation in outgoing:
        print(f"  --{visible(relation.relation_type)}--> {visible(relation.target)}")
    for relation in incoming:
        print(f"  <--{visible(relation.relation_type)}-- {visible(relation.source)}")
    return int(ExitCode.OK)


def _provenance_of(ws, name: str) -> dict:
    """``{observation: [Provenance, ...]}`` of entity ``name`` from the store, read-only
    (an unreadable store gives none: showing the graph never needs it)."""
    from memtui.core.graph.provenance import ProvenanceBook
    from memtui.core.store import Store

    store = Store.open(ws, read_only=True)
    try:
        return ProvenanceBook(store).of_entity(name)
    except MemtuiError:
        return {}
    finally:
        store.close()


def _cmd_entities(args: argparse.Namespace) -> int:
    _ws, _path, graph, _data = _load(args)
    page = g.entity_page(graph, args.types or (), args.match or "", args.cursor or 0, args.limit)
    if args.json:
        _common.emit_json(_common.page_json("entities", page, [
            {"name": e.name, "entityType": e.entity_type, "observations": len(e.observations),
             "relations": degree, "line": e.line} for e, degree in page.items]))
        return int(ExitCode.OK)
    for e, degree in page.items:
        print(f"{visible(e.name)}\t{visible(e.entity_type)}\t{len(e.observations)} obs\t{degree} rel")
    _common.print_more(page, "entities")
    return int(ExitCode.OK)


def _cmd_check(args: argparse.Namespace) -> int:
    _ws, _path, graph, _data = _load(args)
    findings = sorted(audit(graph, near=not args.no_fuzzy), key=sort_key)
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    if args.json:
        _common.emit_json({"summary": graph.summary(), "findings": [f.to_json() for f in findings]})
    else:
        s = graph.summary()
        print(f"{graph.shown}: {s['entities']} entities ({s['distinct_names']} names), {s['relations']} relations, "
              f"{s['observations']} observations, {s['bad_lines']} bad lines")
        for f in findings:
            print(f"{f.place}: {f.severity.value}: {f.code}: {f.message}")
            if f.fix:
                print(f"    fix: {f.fix}")
        print(f"{len(findings)} findings, {errors} errors")
    return int(ExitCode.PROBLEM if errors else ExitCode.OK)


def _cmd_export(args: argparse.Namespace) -> int:
    from memtui.core.graph import export as graph_export

    _ws, _path, graph, _data = _load(args)
    if args.format == "jsonl":
        sys.stdout.flush()
        sys.stdout.buffer.write(graph_export.to_jsonl(graph))
        sys.stdout.buffer.flush()
    elif args.format == "dot":
        sys.stdout.write(graph_export.to_dot(graph))
    else:
        sys.stdout.write(graph_export.to_mermaid(graph))
    return int(ExitCode.OK)


def _cmd_import(args: argparse.Namespace) -> int:
    source = Path(args.file)
    try:
        other = g.load(source, str(source))
    except (MemtuiError, OSError) as exc:
        _common.fail(f"cannot read {source}: {exc}", ExitCode.USAGE)
    if not other.exists:
        _common.fail(f"{source} does not exist.", ExitCode.USAGE)
    bad = other.bad_lines()
    if bad:
        print(f"memtui: note: {len(bad)} bad lines of {source} are not imported "
              f"(first: line {other.lines.index(bad[0]) + 1})", file=sys.stderr)
    run = _cmd_write(lambda a, _g: g.ImportRecords(tuple(other.entities), tuple(other.relations)))
    return run(args)
