"""What the search index reads: the workspace's searchable items, as plain documents.

Kept apart from the index so Whoosh code never walks files. :func:`scan` walks the
workspace once (with ``os.walk``: one pass, no per-node caches, which a 100k-article build
needs) for nodes (folders with ``AGENTS.md``), articles, member notes, the notebook, skills
and the graph; node index lines are parsed by :func:`memtui.core.tree.parse_index` and owners
resolved by :meth:`memtui.core.tree.MemoryTree.owner`, so search agrees with the tree view.

Every document is a ``dict`` of index fields (see :data:`TEXT_FIELDS` and the id fields
in :mod:`memtui.core.search.index`); every problem is a :class:`Finding`, never an
exception (invariant 10).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from memtui.core import jsonio
from memtui.core.files import is_inside, read_text, rel, text_name
from memtui.core.findings import Finding
from memtui.core.frontmatter import split
from memtui.core.tree import MemoryTree, parse_index
from memtui.core.workspace import (GRAPH_FILE, MEMBER_NOTES, NODE_INDEX, NOTEBOOK, OPERATOR_FILES,
                                   Workspace)

#: Text fields of a document, with their BM25F weights (a symptom or alias match counts more
#: than a title/summary match, which counts more than a body match).
TEXT_FIELDS: dict[str, float] = {
    "symptom": 3.0,
    "aliases": 3.0,
    "title": 2.0,
    "summary": 2.0,
    "mechanism": 1.5,
    "systems": 1.2,
    "tagtext": 1.2,
    "environment": 0.8,
    "fix_shape": 0.8,
    "body": 1.0,
}

#: Weight of an item's own id (front matter ``id``: ``exp-002``, ``art-012``) in the text: above
#: any field, so quoting an entry's id finds that entry first (new-user test: ``exp-002``
#: ranked the entry below the files that mention it).
ID_WEIGHT = 5.0

#: The one indexed text field: every field of :data:`TEXT_FIELDS`, each occurrence weighted
#: by its field's weight (BM25F; see :class:`memtui.core.search.index.WeightedPositions`).
#: The fields themselves are stored only (snippets, titles).
CONTENT_FIELD = "text"

#: The field of sound keys (Latin-letter Bulgarian, analysis step 4) and its weight: one field
#: fed from :data:`TRANSLIT_SOURCES` and the whole body, each weighted as in
#: :data:`TEXT_FIELDS`, so a query word costs one key lookup instead of one per field. The
#: whole body, not its head: a Latin-typed ticket word that names an English body word by
#: its sound (``sistemata`` – "system") is found wherever the body says it (the
#: body's first 1,000 characters were keyed before).
TRANSLIT_FIELD = "translit"
TRANSLIT_WEIGHT = 1.0
TRANSLIT_SOURCES = ("symptom", "aliases", "title", "summary", "mechanism", "systems", "tagtext", "body")

#: Item kinds (the values of the ``kind:`` filter).
KINDS = ("article", "experience", "index-line", "node", "notes", "notebook", "skill", "entity",
         "proposal", "session")

#: Index reads a file up to this size (bytes), far above the preview limit, so a 5 MB note
#: is searchable to its end.
INDEX_MAX_FILE_BYTES = 32 * 1024 * 1024
#: Stored body text kept for snippets (characters).
STORED_BODY_CHARS = 200_000

_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)


@dataclass(slots=True)
class Source:
    """One file the index reads: ``rel`` (workspace-relative, ``/``), ``location`` (absolute,
    a ``str`` or a ``Path``; :attr:`path` as a ``Path``), ``kind`` (``tree``, ``notes``,
    ``notebook``, ``skill``, ``graph``) and ``stat``, the file's status as :func:`scan` saw
    it (``None`` when made otherwise)."""

    rel: str
    location: str | Path
    kind: str
    stat: os.stat_result | None = None

    @property
    def path(self) -> Path:
        """The absolute path (made when asked: making one for every file of a scan was
        most of the catch-up's time)."""
        loc = self.location
        return loc if isinstance(loc, Path) else Path(loc)


@dataclass(slots=True)
class Scan:
    """The sources found by :func:`scan`, and the problems met while walking.

    With ``known`` stamps given to :func:`scan`, ``sources`` holds only the files that are
    new or whose stamp differs; ``unchanged`` counts the others and ``seen`` lists every
    source's path (unchanged or not)."""

    sources: list[Source] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    unchanged: int = 0
    seen: list[str] = field(default_factory=list)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple, set)):
        return "\n".join(_text(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(f"{k}: {_text(v)}" for k, v in value.items())
    return str(value)


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, (list, tuple)):
        return []
    return [str(v).strip().lower() for v in value if str(v).strip()]


def scan(ws: Workspace, known: dict[str, tuple[int, int]] | None = None) -> Scan:
    """Walk the workspace for searchable files (never follows symlinks out of it).

    One ``os.scandir`` pass: a file's type comes from its directory entry and its status
    from one ``stat`` (kept in :attr:`Source.stat`); with ``known`` (path → ``(mtime ns,
    size)``, the index manifest's stamps) a file whose stamp is unchanged is only counted,
    so the no-change catch-up at start does one system call and no object a file (three
    calls and five path objects a file made it grow to seconds).

    Returns:
        A :class:`Scan`: sources sorted by path; findings for directories named like notes
        (``search-file-skipped``), broken links (``symlink-broken``) and links leaving the
        workspace (``symlink-outside``).
    """
    out = Scan()
    root = ws.root
    special = {MEMBER_NOTES: "notes", NOTEBOOK: "notebook"}
    skip_top = set(OPERATOR_FILES) | {GRAPH_FILE}
    memory_shown = rel(root, ws.memory)
    top_prefix = "" if memory_shown in ("", ".") else memory_shown + "/"
    at_root = ws.memory == root

    sources = out.sources
    seen = out.seen
    S_ISREG = stat.S_ISREG
    stamps = known if known is not None else {}
    unchanged = 0

    def walk(folder: str, prefix: str, top: bool) -> None:
        nonlocal unchanged
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            return
        subdirs: list[os.DirEntry] = []
        for entry in entries:
            name = entry.name
            if name[0] == "." or not text_name(name):  # not UTF-8: the audit reports it
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if top and at_root and name in ("skills", "shared-skills", "sessions"):
                    continue
                if name.endswith(".md"):
                    out.findings.append(Finding.make(
                        "search-file-skipped", prefix + name, "is a directory, not a note",
                        "rename the folder so its name does not end in .md"))
                if not entry.is_symlink():  # never walk into linked folders
                    subdirs.append(entry)
                continue
            if not name.endswith(".md"):
                continue
            if entry.is_symlink():
                problem = _link_problem(root, Path(entry.path), prefix + name)
                if problem is not None:
                    out.findings.append(problem)
                    continue
            try:
                st = entry.stat()
            except OSError:
                continue
            if not S_ISREG(st.st_mode) or (top and name in skip_top):
                continue
            shown = prefix + name
            seen.append(shown)
            if stamps.get(shown) == (st.st_mtime_ns, st.st_size):
                unchanged += 1
                continue
            sources.append(Source(shown, entry.path, special.get(name, "tree") if top else "tree", st))
        subdirs.sort(key=lambda e: e.name)
        for entry in subdirs:
            walk(entry.path, prefix + entry.name + "/", False)

    walk(os.fspath(ws.memory), top_prefix, True)
    out.unchanged = unchanged + _stamp_others(ws, stamps, out)
    out.sources.sort(key=lambda s: s.rel)
    return out


def _stamp_others(ws: Workspace, stamps: dict[str, tuple[int, int]], out: Scan) -> int:
    """Add the sources outside the memory tree to ``out`` (seen, and a source when its stamp
    differs from ``stamps``); returns how many were unchanged."""
    unchanged = 0
    for src in _other_sources(ws):
        try:
            st = src.path.stat()
        except OSError:
            continue
        src.stat = st
        out.seen.append(src.rel)
        if stamps.get(src.rel) == (st.st_mtime_ns, st.st_size):
            unchanged += 1
        else:
            out.sources.append(src)
    return unchanged


def _other_sources(ws: Workspace) -> list[Source]:
    """The sources outside the memory tree: the graph file, each skill's ``SKILL.md``, the
    governance store (proposals and retired versions) and the session histories."""
    root = ws.root
    others: list[Source] = []
    graph = ws.graph_file
    if graph.is_file() and is_inside(root, graph):
        others.append(Source(rel(root, graph), graph, "graph"))
    else:  # a restored backup's remote graph (same file form), searchable offline
        restored = _restored_graph(ws)
        if restored is not None:
            others.append(Source(rel(root, restored), restored, "graph"))
    for skill_root in ws.skill_roots.values():
        if not skill_root.is_dir() or ws.linked_outside(skill_root) is not None:  # never list a root linked out
            continue
        for skill_dir in sorted(skill_root.iterdir()):
            skill = skill_dir / "SKILL.md"
            if text_name(skill_dir.name) and skill.is_file() and is_inside(root, skill):
                others.append(Source(rel(root, skill), skill, "skill"))
    store = ws.state_dir / "store.json"
    if store.is_file() and not store.is_symlink():
        others.append(Source(rel(root, store), store, "governance"))
    from memtui.core import sessions

    for key in sessions.keys(ws):  # seed 002's histories, one document a turn
        history = sessions.path_of(ws, key)
        if is_inside(root, history):
            others.append(Source(rel(root, history), history, "session"))
    return others


def _restored_graph(ws: Workspace) -> Path | None:
    """The remote graph a restore left in the workspace (``.memtui/remote-graph.jsonl``, the
    server's file form, as ``graph.jsonl``), when the workspace has no ``graph.jsonl``; else ``None``."""
    from memtui.core.workspace import REMOTE_STATE  # not the backup package: a search start loads none of it

    path = ws.root / REMOTE_STATE
    if ws.graph_file.exists() or path.is_symlink() or not path.is_file():
        return None
    return path


def _link_problem(root: Path, link: Path, shown: str) -> Finding | None:
    """Why a symbolic link to a note is not indexed (broken, or leading out of the
    workspace), or ``None`` when it is."""
    if not link.exists():
        return Finding.make("symlink-broken", shown, "is a broken link (points at nothing); not indexed",
                            "remove the link or restore its target")
    if not is_inside(root, link):
        return Finding.make("symlink-outside", shown, "links outside the workspace; not indexed",
                            "copy the file into the workspace instead of linking it")
    return None


def fingerprint(data: bytes) -> str:
    """The content hash the incremental update compares (SHA-1 hex, 40 characters)."""
    return hashlib.sha1(data).hexdigest()


def source_for(ws: Workspace, shown: str) -> Source | None:
    """The :class:`Source` of one workspace-relative path, without walking the tree (the fast
    path after a save); ``None`` when the path is not something the index reads, does not
    exist, or leads outside the workspace."""
    path = ws.root / shown
    if not path.is_file() or not is_inside(ws.root, path):
        return None
    if path == ws.graph_file or path == _restored_graph(ws):
        return Source(shown, path, "graph")
    if path.parent == ws.root / "sessions" / "durable" and path.suffix == ".jsonl":
        return Source(shown, path, "session")
    for skill_root in ws.skill_roots.values():
        if path.name == "SKILL.md" and path.parent.parent == skill_root:
            return Source(shown, path, "skill")
    if path.suffix != ".md" or ws.memory not in path.parents:
        return None
    if any(part.startswith(".") for part in path.relative_to(ws.memory).parts):
        return None
    if path.parent == ws.memory:
        if path.name in OPERATOR_FILES:
            return None
        return Source(shown, path, {MEMBER_NOTES: "notes", NOTEBOOK: "notebook"}.get(path.name, "tree"))
    return Source(shown, path, "tree")


def _node_of(ws: Workspace, folder: Path, cache: dict[Path, str]) -> str:
    """The node (memory-tree-relative folder with an AGENTS.md) holding ``folder``."""
    chain = []
    while True:
        if folder in cache:
            found = cache[folder]
            break
        chain.append(folder)
        if (folder / NODE_INDEX).is_file():
            found = rel(ws.memory, folder) if folder != ws.memory else ""
            break
        if folder == ws.memory or ws.memory not in folder.parents:
            found = ""
            break
        folder = folder.parent
    for f in chain:
        cache[f] = found
    return found


@dataclass(slots=True)
class Parsed:
    """The documents of one source, and the findings met reading it."""

    docs: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    ok: bool = True


def _base(src: Source, kind: str, path: str, node: str = "") -> dict[str, Any]:
    return {"source": src.rel, "kind": kind, "path": path, "node": node, "state": "active",
            "owner": "", "tag": "", "entry_id": "", "target": ""}


def parse(ws: Workspace, src: Source, text: str, node_cache: dict[Path, str] | None = None,
          owners: dict[str, str] | None = None) -> Parsed:
    """Turn the text of ``src`` into index documents.

    Args:
        ws: the workspace.
        src: the source (its ``kind`` decides the parsing).
        text: the decoded file text.
        node_cache: folder → node memo shared across one update (optional).
        owners: node → owner profile from node front matter and ``memtui.toml`` (optional).

    Returns:
        :class:`Parsed`; broken front matter gives a ``front-matter-invalid`` finding and the
        file is still indexed as plain text; a bad graph line is skipped with a finding.
    """
    node_cache = {} if node_cache is None else node_cache
    owners = owners if owners is not None else {}  # an empty lazy map is falsy, yet full
    out = Parsed()
    if src.kind == "graph":
        _parse_graph(src, text, out)
        return out
    if src.kind == "governance":
        _parse_governance(ws, src, text, out)
        return out
    if src.kind == "session":
        _parse_session(src, text, out)
        return out
    fm = split(text)
    meta = fm.meta if isinstance(fm.meta, dict) else {}
    if fm.error:
        out.findings.append(Finding.make(
            "front-matter-invalid", src.rel, f"front matter: {fm.error}; indexed as plain text",
            "fix the YAML between the --- lines", line=fm.error_line))
    body = fm.body
    if src.kind == "skill":
        doc = _base(src, "skill", src.rel, "")
        doc.update(title=_text(meta.get("name")) or src.path.parent.name,
                   summary=_text(meta.get("description")), body=body)
        out.docs.append(doc)
        return out
    if src.kind in ("notes", "notebook"):
        doc = _base(src, src.kind, src.rel, "")
        heading = _HEADING.search(body)
        doc.update(title=heading.group(1) if heading else src.path.name, body=body)
        out.docs.append(doc)
        return out
    folder = src.path.parent
    node = _node_of(ws, folder, node_cache)
    owner = _text(meta.get("owner")).strip() or owners.get(node, "")
    if src.path.name == NODE_INDEX:
        heading = _HEADING.search(body)
        doc = _base(src, "node", src.rel, node)
        doc.update(title=_text(meta.get("title")) or (heading.group(1) if heading else node or "memory"),
                   summary=_text(meta.get("summary") or meta.get("description")), body=body,
                   owner=owner)
        out.docs.append(doc)
        prefix = f"{ws.memory_rel}/" if ws.memory_rel else ""
        for entry in parse_index(text, node, src.rel).entries:
            if entry.path is None:
                continue
            line_doc = _base(src, "index-line", src.rel, node)
            line_doc.update(title=entry.title, summary=entry.one_liner or "",
                            target=prefix + entry.path, owner=owner, line=entry.line)
            out.docs.append(line_doc)
        return out
    is_exp = "symptom" in meta or "mechanism" in meta or "experience" in node.split("/")
    state = _text(meta.get("state")).strip().lower() or "active"
    doc = _base(src, "experience" if is_exp else "article", src.rel, node)
    tags = _tags(meta.get("tags"))
    heading = _HEADING.search(body)
    doc.update(
        title=_text(meta.get("title")) or (heading.group(1) if heading else src.path.stem),
        summary=_text(meta.get("summary") or meta.get("description")),
        aliases=_text(meta.get("aliases")),
        symptom=_text(meta.get("symptom")),
        systems=_text(meta.get("systems")),
        environment=_text(meta.get("environment")),
        mechanism=_text(meta.get("mechanism")),
        fix_shape=_text(meta.get("fix_shape")),
        tagtext=" ".join(tags),
        tag=",".join(tags),
        body=body,
        owner=owner,
        state=state,
        entry_id=_text(meta.get("id")).strip(),
    )
    out.docs.append(doc)
    return out


def _parse_session(src: Source, text: str, out: Parsed) -> None:
    """One document a turn of a session history (read by :mod:`memtui.core.sessions`, the one
    reader of the format): its text and its tool calls and results; a hit opens at the turn."""
    from memtui.core import sessions

    history = sessions.parse(src.path.stem, src.rel, text.encode("utf-8", "surrogatepass"))
    for turn in history.turns:
        body = "\n".join([turn.text] + [t.text for t in turn.tools if t.text != turn.text])
        if not body.strip():
            continue
        doc = _base(src, "session", src.rel, "")
        doc.update(title=f"{history.key} · {turn.role} · line {turn.line}", body=body, line=turn.line)
        out.docs.append(doc)


def _parse_graph(src: Source, text: str, out: Parsed) -> None:
    """Entities of a server-memory JSONL graph; bad lines become findings and are skipped."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = jsonio.loads(line.lstrip("\ufeff"))
        except json.JSONDecodeError as exc:
            out.findings.append(Finding.make(
                "search-file-skipped", src.rel, f"line is not JSON ({exc.msg}); not indexed",
                "fix or remove the line", line=lineno))
            continue
        if not isinstance(item, dict) or item.get("type") != "entity":
            continue
        name = item.get("name")
        if not isinstance(name, str) or not name:
            continue
        doc = _base(src, "entity", f"{src.rel}#{name}", "")
        obs = item.get("observations")
        doc.update(title=name, summary=_text(item.get("entityType")),
                   body=_text(obs if isinstance(obs, list) else ""), line=lineno)
        out.docs.append(doc)


#: Version states the index holds from the governance store: the text of a proposal or of a
#: retired version lives only there (active versions are the files of the tree).
_STORE_STATES = {"proposed": "proposal", "retired": "article"}


def _parse_governance(ws: Workspace, src: Source, text: str, out: Parsed) -> None:
    """Proposals and retired versions from ``.memtui/store.json`` (seed 000 §2 rule 7):
    indexed with their state, so normal search excludes them and ``--include-proposed`` (the
    Search area's "proposals & retired") shows them, labelled by state, path ``article@N``."""
    try:
        data = jsonio.loads(text, allow_nan=True)
    except json.JSONDecodeError:
        return  # a damaged store is reported by the store itself
    versions = data.get("versions") if isinstance(data, dict) else None
    if not isinstance(versions, dict):
        return
    prefix = f"{ws.memory_rel}/" if ws.memory_rel else ""
    for record in versions.values():
        if not isinstance(record, dict):
            continue
        state = record.get("state")
        kind = _STORE_STATES.get(state) if isinstance(state, str) else None
        content = record.get("content")
        if kind is None or not isinstance(content, str):
            continue
        fm = split(content)
        meta = fm.meta if isinstance(fm.meta, dict) else {}
        article = _text(record.get("article"))
        doc = _base(src, kind, f"{prefix}{article}@{_text(record.get('number'))}", _text(record.get("node")))
        tags = _tags(meta.get("tags"))
        doc.update(
            title=_text(meta.get("title") or record.get("title")) or article,
            summary=_text(meta.get("summary") or record.get("one_liner")),
            aliases=_text(meta.get("aliases")), symptom=_text(meta.get("symptom")),
            mechanism=_text(meta.get("mechanism")), tagtext=" ".join(tags), tag=",".join(tags),
            body=fm.body, owner=_text(record.get("author")), state=state,
            entry_id=_text(meta.get("id")).strip(), target=prefix + article)
        out.docs.append(doc)


def read_source(src: Source) -> tuple[bytes | None, Finding | None]:
    """The bytes of ``src`` (up to :data:`INDEX_MAX_FILE_BYTES`), or a finding why not."""
    tf = read_text(src.path, src.rel, limit=INDEX_MAX_FILE_BYTES, note_encoding=False)
    if not tf.ok:
        return None, tf.findings[0] if tf.findings else None
    return tf.text.encode("utf-8"), (tf.findings[0] if tf.findings else None)


def iter_owner_map(ws: Workspace) -> dict[str, str]:
    """Node → owner profile (``""`` when none), resolved by :meth:`MemoryTree.owner`: the
    node's ``AGENTS.md`` front matter, then ``memtui.toml [owners]``, then the parent's
    (seed 000 §7.4b). Lazy: a node is resolved when first asked for."""
    tree = MemoryTree(ws)

    class _Owners(dict):
        def __missing__(self, node: str) -> str:
            value = tree.owner(node)[0] or ""
            self[node] = value
            return value

        def get(self, node: str, default: str = "") -> str:  # type: ignore[override]  # noqa: ARG002 - every node has one
            return self[node]

    return _Owners()


def iter_docs(parsed: Parsed) -> Iterator[dict[str, Any]]:
    """The documents of ``parsed`` (a convenience for callers that only want documents)."""
    yield from parsed.docs
