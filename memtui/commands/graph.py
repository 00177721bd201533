"""``memtui graph``: browse, audit and curate the knowledge graph headless, local or remote.

The graph is the local file or the member's remote graph over MCP (``--remote URL``, ``[graph]
remote``, or the ``memory`` block of the workspace's ``config.json``;
:func:`memtui.core.graph.backend.open_graph`); every command works the same on both. A local
write goes through :func:`memtui.core.graph.commit` (sha256 check, re-apply or refuse with a
diff, atomic write); a remote one through :meth:`memtui.core.graph.remote.RemoteGraph.save`
(re-read, tool sequence, journal). Errors reach the user through the CLI's one exit-code table (``memtui.cli.EXIT_CODES``; a
remote failure is a sentence with exit code 4); only the conflict (its diff) and unreadable
files are handled here. Names that start with ``-`` are given after ``--``:
``memtui graph delete --yes -- --help``. Nothing here prompts unless standard input is a
terminal; destructive commands (delete, merge, repair, convert) then need ``--yes``.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from typing import Any, cast
import time
from pathlib import Path

from memtui.commands import _common
from memtui.commands._common import ExitCode
from memtui.core import graph as g
from memtui.core.errors import MemtuiError
from memtui.core.findings import Severity, sort_key
from memtui.core.text import visible, visible_lines
from memtui.core.session import Session

DASH_HINT = ("names that start with '-' go after '--', with every option before it: "
             "memtui graph delete --yes -- --help")


class _GraphParser(_common.Parser):
    """The subcommands' parser: its usage errors also explain how to pass names starting with ``-``."""

    def hint(self, message: str) -> str:
        if "required" in message or "expected" in message:
            return DASH_HINT
        # an unknown option that reads like one (`--type`) was meant as an option: the list of
        # known options says enough; anything else (`-rf`, `-`) may be a name starting with '-'
        unknown = re.search(r"unknown option (\S+?)[;:,]", message)
        if unknown and not re.fullmatch(r"--[a-z][a-z0-9-]*", unknown.group(1)):
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
            confirm: bool = False, write: bool = False, provenance: bool = False,
            cached: bool = False) -> argparse.ArgumentParser:
        child = sub.add_parser(name, help=help_text, description=help_text, aliases=list(aliases))
        _common.add_workspace_arg(child)
        child.add_argument("--remote", metavar="URL",
                           help="the remote graph's MCP endpoint (https://…/v1/mcp), over [graph] remote and "
                                "the memory block of config.json; 'local' uses memory/graph.jsonl")
        if json_arg:
            _common.add_json_arg(child)
        if cached:
            child.add_argument("--cached", action="store_true",
                               help="a remote graph: answer from memtui's last read of it (kept in the user cache "
                                    "folder; said so, with its time, on standard error and as `cached` in --json) "
                                    "instead of reading the remote; without a kept read, read the remote. Writes "
                                    "never answer from it")
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

    p = add("show", "show one entity: observations, relations out and in", _cmd_show, cached=True)
    p.add_argument("name", metavar="NAME")
    p = add("entities", "list entities (name, type, observations, relations)", _cmd_entities, aliases=("list",),
            cached=True)
    p.add_argument("--type", dest="types", action="append", metavar="TYPE",
                   help="only this entityType (repeatable)")
    p.add_argument("--match", metavar="TEXT", help="only names containing TEXT (case-insensitive)")
    _common.add_page_args(p, "entities")
    p = add("check", "audit the graph: bad lines, duplicates, dangling relations, orphans, type variants",
            _cmd_check, aliases=("audit",), cached=True)
    p.add_argument("--no-fuzzy", action="store_true", help="skip the near-duplicate name search")
    p = add("create", "create an entity (exit 1 when the name exists)", _cmd_write(
        lambda a, _g: g.CreateEntity(a.name, a.entity_type, tuple(a.observations)), names=_named), write=True,
        provenance=True)
    p.add_argument("name", metavar="NAME")
    p.add_argument("entity_type", metavar="TYPE")
    p.add_argument("observations", nargs="*", metavar="OBSERVATION")
    p = add("add-observation", "add an observation to an entity",
            _cmd_write(lambda a, gr: g.AddObservation(a.name, a.text, _record(a, gr)), names=_named_record), write=True,
                       provenance=True)
    p.add_argument("name", metavar="NAME")
    p.add_argument("text", metavar="TEXT")
    _add_line_arg(p)
    p = add("edit-observation", "replace an observation of an entity",
            _cmd_write(lambda a, gr: g.EditObservation(a.name, a.old, a.new, _record(a, gr)), names=_named_record),
            write=True)
    p.add_argument("name", metavar="NAME")
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    _add_line_arg(p)
    p = add("delete-observation", "delete an observation from an entity",
            _cmd_write(lambda a, gr: g.DeleteObservation(a.name, a.text, _record(a, gr)), names=_named_record),
            write=True)
    p.add_argument("name", metavar="NAME")
    p.add_argument("text", metavar="TEXT")
    _add_line_arg(p)
    p = add("delete-record", "delete one record of an entity written several times (its relations stay)",
            _cmd_write(lambda a, gr: g.DeleteRecord(a.name, _record(a, gr)), confirm=True), confirm=True, write=True)
    p.add_argument("name", metavar="NAME")
    _add_line_arg(p, required=True)
    p = add("rename", "rename an entity; its relations follow",
            _cmd_write(lambda a, _g: g.RenameEntity(a.old, a.new), names=lambda a: [a.old, a.new], relations=True),
            write=True)
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p = add("merge", "merge entities into INTO (observations united, relations rewired, "
            "old names kept as 'alias:' observations); INTO alone merges its duplicate records",
            _cmd_write(lambda a, _g: g.MergeEntities(tuple(a.sources), a.into), confirm=True,
                       names=lambda a: [a.into, *a.sources], relations=True), confirm=True, write=True)
    p.add_argument("into", metavar="INTO")
    p.add_argument("sources", nargs="*", metavar="SOURCE")
    p = add("retype", "set entityType on every entity of the given types", _cmd_write(_retype_op), write=True)
    p.add_argument("--to", required=True, metavar="NEW", help="the entityType to set")
    p.add_argument("--variants", action="store_true",
                   help="also every spelling variant of the given types (Person/person/people)")
    p.add_argument("types", nargs="+", metavar="TYPE")
    p = add("relate", "create the relation FROM --TYPE--> TO", _cmd_write(
        lambda a, _g: g.CreateRelation(a.source, a.target, a.relation_type, allow_dangling=a.allow_dangling),
        names=_ends), write=True)
    p.add_argument("--allow-dangling", action="store_true", help="accept ends that are not entities")
    p.add_argument("source", metavar="FROM")
    p.add_argument("relation_type", metavar="TYPE")
    p.add_argument("target", metavar="TO")
    p = add("unrelate", "delete the relation FROM --TYPE--> TO",
            _cmd_write(lambda a, _g: g.DeleteRelation(a.source, a.target, a.relation_type), names=_ends), write=True)
    p.add_argument("source", metavar="FROM")
    p.add_argument("relation_type", metavar="TYPE")
    p.add_argument("target", metavar="TO")
    p = add("delete", "delete an entity and its relations", _cmd_write(
        lambda a, _g: g.DeleteEntity(a.name), confirm=True, names=_named, relations=True), confirm=True,
        write=True)
    p.add_argument("name", metavar="NAME")
    add("repair", "make the file readable by the MCP server: split glued records, drop the BOM, "
        "move unreadable lines to a backup in .memtui/backups/", _cmd_write(
            lambda a, _g: g.Repair(), confirm=True, backup="rejects"), confirm=True, write=True)
    add("convert", "rewrite a legacy single-object file as one record a line (the original is backed up)",
        _cmd_write(lambda a, _g: g.ConvertLegacy(), confirm=True, backup="original"), confirm=True, write=True)
    p = add("export", "print the graph as JSONL (server form), Graphviz DOT or Mermaid", _cmd_export,
            json_arg=False, cached=True)
    p.add_argument("--format", choices=("jsonl", "dot", "mermaid"), default="jsonl")
    p = add("search", "search the graph as the server's search_nodes does (names, types, observations)",
            _cmd_search, cached=True)
    p.add_argument("--semantic", action="store_true",
                   help="use the remote server's semantic_search (only when it lists one)")
    p.add_argument("query", metavar="QUERY")
    p = add("pull", "copy the remote graph into memory/graph.jsonl (a diff first, then confirmation)",
            _cmd_pull, confirm=True, write=True)
    p.add_argument("--dry-run", action="store_true", help="show the difference and change nothing")
    p = add("push", "make the remote graph hold the records of memory/graph.jsonl (a diff first, then "
            "confirmation)", _cmd_push, confirm=True, write=True)
    p.add_argument("--dry-run", action="store_true", help="show the tool calls and change nothing")
    p = add("resume", "finish the last remote write sequence that stopped half-way, or undo what it applied",
            _cmd_resume, confirm=True)
    p.add_argument("--undo", action="store_true", help="undo what the interrupted sequence applied")
    p = add("import", "bring in the records of another graph file (new entities, missing "
            "observations, new relations; nothing removed)", _cmd_import, write=True)
    p.add_argument("file", metavar="FILE")


# -- helpers ---------------------------------------------------------------------------------------

def _backend(args: argparse.Namespace, ws=None):  # noqa: ANN001 - Workspace
    """The workspace's graph backend (local file or remote); exits 2/3/4."""
    from memtui.core.graph.backend import LocalGraph, open_graph

    ws = ws or _common.open_workspace(args)
    backend = open_graph(ws, getattr(args, "remote", None))  # a keyring failure: ExternalError, exit 4
    if isinstance(backend, LocalGraph):
        ws.path(ws.shown(ws.graph_file))  # ConfinementError: refused (exit 3)
    return ws, backend


def _load(args: argparse.Namespace, ws=None, backend=None):  # noqa: ANN001 - Workspace, GraphBackend
    """Open the workspace and its graph (``backend`` when the caller has opened it):
    ``(workspace, backend, graph, loaded bytes)``; exits 2/3, or 4 (a sentence) when the remote
    cannot be used."""
    from memtui.core.errors import ExternalError

    if backend is None or ws is None:
        ws, backend = _backend(args, ws)
    try:
        graph = _read_graph(backend)
    except ExternalError:  # the remote cannot be used: its sentence, exit 4
        backend.close()
        raise
    except (MemtuiError, OSError) as exc:
        backend.close()
        _common.fail(f"cannot read {backend.shown}: {exc}", ExitCode.USAGE)
    return ws, backend, graph, backend.loaded_bytes or b""


def _add_line_arg(parser: argparse.ArgumentParser, required: bool = False) -> None:
    parser.add_argument("--line", type=_common.positive_int, metavar="N", required=required,
                        help="the record at line N (as `graph show` lists them), for a name written several "
                             "times; default: every record (edits) or the first (add-observation)")


def _named(args: argparse.Namespace) -> list[str]:
    return [args.name]


def _named_record(args: argparse.Namespace) -> list[str] | None:
    """The entity named, unless ``--line`` picks a record by its line in the whole graph."""
    return None if getattr(args, "line", None) else [args.name]


def _ends(args: argparse.Namespace) -> list[str]:
    return [args.source, args.target]


def _record(args: argparse.Namespace, graph: g.Graph) -> str:
    """The record key of ``--line N`` of entity ``args.name`` (``""`` without ``--line``); exits 2
    when that line holds no record of that name."""
    line = getattr(args, "line", None)
    if not line:
        return ""
    found = [e for e in graph.find(args.name) if e.line == line]
    if not found:
        lines = ", ".join(str(e.line) for e in graph.find(args.name)) or "none"
        _common.fail(f"line {line} holds no record of {visible(args.name)!r} (its records are at lines {lines}); "
                     "`memtui graph show` lists them", ExitCode.USAGE)
    return graph.record_key(found[0])


def _read_graph(backend):  # noqa: ANN001, ANN202 - GraphBackend -> Graph
    """``backend.load()``, with the seconds and megabytes received on one line of standard error
    while it runs, when that is a terminal (a big remote graph takes a while; a local file
    reports nothing); the line is cleared once the read ends."""
    from memtui.core.mcp.client import throttled

    if not sys.stderr.isatty():
        return backend.load()
    started = time.monotonic()
    shown: list[bool] = []

    def show(count: int) -> None:  # short: a line wider than the terminal would not be overwritten
        shown.append(True)
        print(f"\rreading the remote graph… {time.monotonic() - started:.0f} s, {count / 1e6:,.1f} MB\033[K",
              end="", file=sys.stderr, flush=True)

    try:
        return backend.load(progress=throttled(show, 0.5))
    finally:
        if shown:  # a read that said nothing (the local file) leaves the terminal untouched
            print("\r\033[K", end="", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _kept_read_hint(ws, backend, asked: bool):  # noqa: ANN001, ANN202 - Workspace, GraphBackend
    """A live remote read that fails (exit 4) also says when ``--cached`` would answer: from
    memtui's last read, or from a restored backup's graph (``asked``: ``--cached`` was given, or
    cannot apply, so nothing is added). A live read stays live: it never answers from them."""
    from memtui.core.errors import ExternalError

    try:
        yield
    except ExternalError as exc:
        found = None if asked else backend.kept(ws.root)
        if found is None:
            raise
        raise ExternalError(f"{exc} Add --cached to answer from the graph kept {found.label()} "
                        f"({found.entities:,} entities).") from None


class _Read:
    """A read-only command's graph: read live (then kept as the remote's snapshot by
    :meth:`keep`, once the answer is out), or answered from that snapshot (``--cached``)."""

    def __init__(self, args: argparse.Namespace, rows: bool = False) -> None:
        from memtui.core.graph import snapshot

        self.ws, self.backend = _backend(args)
        self.cached: snapshot.Snapshot | None = None
        self.graph: g.Graph | None = None
        self.rows: list | None = None
        self._live = False
        cached = getattr(args, "cached", False)
        if cached:
            found = self.backend.kept(self.ws.root)
            if found is not None:
                try:
                    if rows:
                        self.rows = found.rows()
                    else:
                        self.graph = found.graph()
                    self.cached = found
                except snapshot.SnapshotError:
                    self.rows = self.graph = None
            if self.cached is None:
                print(f"memtui: no usable earlier read of {visible(self.backend.shown)} is kept; reading it.",
                      file=sys.stderr)
            else:
                print(f"memtui: cached: the remote graph at {visible(self.backend.shown)} {self.cached.label()} "
                      f"({self.cached.entities:,} entities), not read now; drop --cached to read it.", file=sys.stderr)
        if self.cached is None:
            with _kept_read_hint(self.ws, self.backend, cached):
                _ws, self.backend, graph, _data = _load(args, self.ws, self.backend)
            self.backend.close()
            self.graph, self._live = graph, True

    def json(self) -> dict:
        """``{"cached": snapshot or false}`` for ``--json`` (a local file is never answered from a kept read)."""
        return {"cached": self.cached.to_json() if self.cached is not None else False}

    def keep(self) -> None:
        """After a live read: the backend keeps it (a remote's snapshot; a failure is ignored)."""
        if self._live and self.graph is not None:
            self.backend.keep(self.ws.root, self.graph)


def _retype_op(args: argparse.Namespace, graph: g.Graph) -> g.Retype:
    types = list(args.types)
    if args.variants:
        for name in args.types:
            types.extend(g.type_variants(graph, name))
    return g.Retype(tuple(dict.fromkeys(types)), args.to)


def _confirm(args: argparse.Namespace, what: str, notes: tuple[str, ...] = ()) -> None:
    """Ask before a destructive change (:func:`_common.confirm`). The change's ``notes`` (the
    relations a delete takes with it) are said first, so no one confirms what they were not shown."""
    if notes and not getattr(args, "yes", False):
        for note in notes:
            print(visible(note), file=sys.stderr)
    _common.confirm(args, f"About to change {visible(what)}. Go ahead")


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


def _cmd_write(build, confirm: bool = False, backup: str = "", names=None, relations: bool = False):
    """A subcommand that applies the operation ``build(args)`` and saves it through ``commit``.

    ``names(args)`` gives the entity names the edit reads and writes (``None``: it needs the
    whole graph): on a remote graph only their records are read (``open_nodes``), so an edit
    costs what it changes; ``relations``: the edit also needs every relation of those entities.

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
            return _write(args, session, build, confirm, backup, names, relations)

    return run


def _write(args: argparse.Namespace, session: Session, build, confirm: bool, backup: str, names=None,
           relations: bool = False) -> int:
    ws, backend = _backend(args, session.ws)
    graph = None
    if names is not None:  # a remote reads only these records; the local file is read whole
        try:
            graph = backend.load_records(names(args), relations=relations)
        except Exception:
            backend.close()
            raise
        loaded = b""
    if graph is None:
        ws, backend, graph, loaded = _load(args, session.ws, backend)
    try:
        return _write_to(args, session, backend, graph, loaded, build, confirm, backup)
    finally:
        backend.close()


def _write_to(args: argparse.Namespace, session: Session, backend, graph, loaded: bytes, build, confirm: bool,
              backup: str) -> int:
    from memtui.core.graph.remote import RemoteSequenceError

    ws = session.ws
    path = Path(ws.graph_file)
    client_id = getattr(args, "client_id", None)
    operation = build(args, graph)
    retried = backend.retried(session, operation, client_id)
    if retried is None:
        change = operation.apply(graph)  # check before asking
        if confirm and change.changed:
            _confirm(args, f"{backend.shown}: {change.summary}", change.notes)
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
        saved = backend.save(graph, operation, session=session, client_id=client_id,
                             provenance=_provenance(args, operation), also_write=also)
    except RemoteSequenceError as exc:
        _common.fail(str(exc), ExitCode.EXTERNAL)
    except g.GraphConflictError as exc:  # the diff first, then the sentence (exit 1)
        if exc.diff:
            sys.stderr.write(visible_lines(exc.diff))
        raise
    except OSError as exc:
        _common.fail(f"cannot write {ws.shown(path)}: {exc.strerror or exc}; the file is unchanged.",
                     ExitCode.EXTERNAL)
    entry = saved.audit_entry
    result = {"summary": saved.change.summary, "notes": list(saved.change.notes),
              "written": saved.written, "reapplied": saved.reapplied, "retried": saved.retried,
              "file": backend.shown, "remote": backend.kind == "remote", "backup": kept or None,
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
    read = _Read(args)
    _ws, graph = read.ws, read.graph
    assert graph is not None
    try:
        return _show(args, _ws, graph, read)
    finally:
        read.keep()


def _show(args: argparse.Namespace, _ws, graph: g.Graph, read: _Read) -> int:  # noqa: ANN001 - Workspace
    records = graph.find(args.name)
    if not records:
        graph.entity(args.name)  # GraphEditError: no such entity, with similar names (exit 1)
    outgoing, incoming = graph.relations_of(args.name)
    origins = _provenance_of(_ws, args.name)
    if args.json:
        _common.emit_json({**read.json(), "records": [r.to_json() for r in records],
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
        print(f"  note: written {len(records)} times; `memtui graph merge -- NAME` unites them, "
              "`memtui graph delete-record --line N -- NAME` deletes one, and --line N makes an "
              "observation edit change that record only")
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
        return ProvenanceBook(cast(Any, store)).of_entity(name)  # a Store is a StoreLike (tables by name)
    except MemtuiError:
        return {}
    finally:
        store.close()


def _cmd_entities(args: argparse.Namespace) -> int:
    from memtui.core.graph import snapshot

    read = _Read(args, rows=True)
    if read.rows is not None:  # the snapshot's listing: the page without reading a record
        page = snapshot.page_of(read.rows, g.entity_filter(args.types or (), args.match or ""), args.cursor or 0,
                                args.limit)
        items = [(r.name, r.entity_type, r.observations, r.relations, r.line) for r in page.items]
    else:
        assert read.graph is not None
        entity_page = g.entity_page(read.graph, args.types or (), args.match or "", args.cursor or 0, args.limit)
        page = entity_page
        items = [(e.name, e.entity_type, len(e.observations), degree, e.line) for e, degree in entity_page.items]
    if args.json:
        _common.emit_json(_common.page_json("entities", page, [
            {"name": name, "entityType": kind, "observations": count, "relations": degree, "line": line}
            for name, kind, count, degree, line in items], **read.json()))
    else:
        for name, kind, count, degree, _line in items:
            print(f"{visible(name)}\t{visible(kind)}\t{count} obs\t{degree} rel")
        _common.print_more(page, "entities")
    sys.stdout.flush()
    read.keep()
    return int(ExitCode.OK)


def _cmd_check(args: argparse.Namespace) -> int:
    read = _Read(args)
    graph = read.graph
    assert graph is not None
    from memtui.core.graph.audit import audit  # rapidfuzz: only the check reads near names

    findings = sorted(audit(graph, near=not args.no_fuzzy), key=sort_key)
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    read.keep()
    if args.json:
        _common.emit_json({**read.json(), "summary": graph.summary(), "findings": [f.to_json() for f in findings]})
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

    read = _Read(args)
    graph = read.graph
    assert graph is not None
    read.keep()
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


# -- the remote graph ----------------------------------------------------------------------------------

def _cmd_search(args: argparse.Namespace) -> int:
    from memtui.core.graph import snapshot
    from memtui.core.graph.backend import search_records

    _ws, backend = _backend(args)
    cached = None
    if args.cached and not args.semantic:
        cached = backend.kept(_ws.root)
    try:
        if cached is not None:
            try:
                found = search_records(cached.graph(), args.query)
                print(f"memtui: cached: searched the remote graph at {visible(backend.shown)} {cached.label()}, "
                      "not the remote now; drop --cached to search it.", file=sys.stderr)
            except snapshot.SnapshotError:
                cached = None
        if cached is None:
            with _kept_read_hint(_ws, backend, args.cached or args.semantic):
                found = backend.search(args.query, semantic=args.semantic)
    except g.GraphEditError as exc:
        _common.fail(str(exc), ExitCode.PROBLEM)
    finally:
        backend.close()
    how = "semantic_search" if args.semantic else "search_nodes"
    if args.json:
        mark = {"cached": cached.to_json() if cached is not None else False}
        _common.emit_json({**mark, "query": args.query, "search": how, "source": backend.shown,
                           "entities": [e.to_json() for e in found.entities],
                           "relations": [r.to_json() for r in found.relations]})
        return int(ExitCode.OK)
    label = "semantic matches" if args.semantic else "matches"
    print(f"{len(found.entities):,} {label} in {visible(backend.shown)} ({how})")
    for e in found.entities:
        print(f"{visible(e.name)}\t{visible(e.entity_type)}\t{len(e.observations)} obs")
    return int(ExitCode.OK)


def _remote_or_fail(args: argparse.Namespace, ws):  # noqa: ANN001
    from memtui.core.graph.remote import RemoteGraph, resolve

    if getattr(args, "remote", None) == "local":
        _common.fail("pull and push move a graph between the remote and memory/graph.jsonl; give the remote "
                     "with --remote URL.", ExitCode.USAGE)
    endpoint = resolve(ws, getattr(args, "remote", None))
    if endpoint is None:
        _common.fail("no remote graph is configured: give --remote URL, set [graph] remote in memtui.toml, or "
                     "add the memory block to the workspace's config.json.", ExitCode.USAGE)
    return RemoteGraph(endpoint)


def _cmd_pull(args: argparse.Namespace) -> int:
    from memtui.core.graph.backend import LocalGraph

    ws = _common.open_workspace(args)
    remote = _remote_or_fail(args, ws)
    try:
        theirs = remote.load()
    finally:
        remote.close()
    local = LocalGraph(ws)
    try:
        mine = local.load()
    except (MemtuiError, OSError) as exc:
        _common.fail(f"cannot read {local.shown}: {exc}", ExitCode.USAGE)
    operation = g.ReplaceRecords.of(theirs)  # every field of every record, as the server holds it
    try:
        change = operation.apply(mine)
    except g.GraphEditError as exc:
        _common.fail(str(exc), ExitCode.PROBLEM)
    from memtui.core.text import unified_diff

    if not change.changed:
        print(f"{local.shown} already holds the records of {visible(remote.shown)}; nothing to do.")
        return int(ExitCode.OK)
    diff = unified_diff(local.loaded_bytes or b"", change.graph.to_bytes(), f"{local.shown} (now)",
                        f"{local.shown} (from {remote.shown})", limit=200, normalise_eol=False)
    if args.dry_run or not args.json:
        sys.stdout.write(visible_lines(diff) if diff else "")
        print(f"{visible(change.summary)} (from {visible(remote.shown)})")
    if args.dry_run:
        return int(ExitCode.OK)
    _confirm(args, f"{local.shown} with the records of {remote.shown}")
    with Session.open(ws, purpose="cli graph pull") as session:
        if session.read_only:
            _common.fail(f"refused: {session.reason} Nothing was changed.", ExitCode.REFUSED)
        saved = local.save(mine, operation, session=session, client_id=args.client_id)
    if args.json:
        _common.emit_json({"summary": saved.change.summary, "written": saved.written, "file": local.shown,
                           "remote": remote.shown, "audit_entry": saved.audit_entry.to_json() if saved.audit_entry else None})
    else:
        print(f"pulled: {visible(saved.change.summary)}")
    return int(ExitCode.OK)


def _cmd_push(args: argparse.Namespace) -> int:
    from memtui.core.graph.backend import LocalGraph
    from memtui.core.graph.remote import RemoteSequenceError, plan, view_of

    ws = _common.open_workspace(args)
    local = LocalGraph(ws)
    try:
        mine = local.load()
    except (MemtuiError, OSError) as exc:
        _common.fail(f"cannot read {local.shown}: {exc}", ExitCode.USAGE)
    if not mine.exists:
        _common.fail(f"{local.shown} does not exist; nothing to push.", ExitCode.USAGE)
    remote = _remote_or_fail(args, ws)
    try:
        theirs = remote.load()
        operation = g.ReplaceRecords.of(mine)
        try:
            change = operation.apply(theirs)
            steps = plan(view_of(theirs), view_of(change.graph)).steps if change.changed else []
        except g.GraphEditError as exc:
            _common.fail(str(exc), ExitCode.PROBLEM)
        if not steps:
            print(f"{visible(remote.shown)} already holds the records of {local.shown}; nothing to do.")
            return int(ExitCode.OK)
        bad = len(mine.bad_lines()) + sum(1 for line in mine.lines if line.kind == g.OTHER)
        if not args.json or args.dry_run:
            print(f"to make {visible(remote.shown)} hold the records of {local.shown}: "
                  f"{len(steps)} tool call{'s' if len(steps) != 1 else ''}")
            for step in steps:
                print(f"  {step.tool}: {visible(step.summary)}")
            if bad:
                print(f"  note: {bad} lines of {local.shown} are not records and are not sent")
        if args.dry_run:
            return int(ExitCode.OK)
        _confirm(args, f"{remote.shown}: {change.summary}")
        with Session.open(ws, purpose="cli graph push") as session:
            if session.read_only:
                _common.fail(f"refused: {session.reason} Nothing was changed.", ExitCode.REFUSED)
            try:
                saved = remote.save(theirs, operation, session=session, client_id=args.client_id)
            except RemoteSequenceError as exc:
                _common.fail(str(exc), ExitCode.EXTERNAL)
            except g.GraphConflictError as exc:
                if exc.diff:
                    sys.stderr.write(visible_lines(exc.diff))
                _common.fail(str(exc), ExitCode.PROBLEM)
    finally:
        remote.close()
    if args.json:
        _common.emit_json({"summary": saved.change.summary, "notes": list(saved.change.notes), "written": saved.written,
                           "remote": remote.shown, "steps": len(steps),
                           "audit_entry": saved.audit_entry.to_json() if saved.audit_entry else None})
    else:
        print(f"pushed: {visible(saved.change.summary)}")
        for note in saved.change.notes:
            print(f"  note: {visible(note)}")
    return int(ExitCode.OK)


def _cmd_resume(args: argparse.Namespace) -> int:
    from memtui.core.graph.remote import RemoteSequenceError

    ws = _common.open_workspace(args)
    remote = _remote_or_fail(args, ws)
    try:
        with Session.open(ws, purpose="cli graph resume") as session:
            if session.read_only:
                _common.fail(f"refused: {session.reason} Nothing was changed.", ExitCode.REFUSED)
            record = remote.pending(session)
            if record is None:
                print(f"no interrupted write sequence is recorded for {visible(remote.shown)}; nothing to do.")
                return int(ExitCode.OK)
            applied = int(record.get("applied") or 0)
            total = len(record.get("steps") or [])
            what = (f"undo the {applied} applied steps of" if args.undo else f"send the {total - applied} remaining "
                    "steps of")
            _confirm(args, f"{remote.shown}: {what} '{record.get('summary', '')}'")
            try:
                summary, sent = remote.resume(session, undo=args.undo)
            except RemoteSequenceError as exc:
                _common.fail(str(exc), ExitCode.EXTERNAL)
    finally:
        remote.close()
    if args.json:
        _common.emit_json({"summary": summary, "steps_sent": sent, "remote": remote.shown})
    else:
        print(f"{visible(summary)} ({sent} tool call{'s' if sent != 1 else ''})")
    return int(ExitCode.OK)
