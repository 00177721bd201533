"""What is wrong in one node of the memory tree: its index, its articles, its links, its symbolic links and its owner.

Per-article results are cached between audits in the user cache folder
(:class:`ArticleCache`), keyed by size and modification time.
"""

from __future__ import annotations

import os
import stat as stat_mod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from memtui.core import scan
from memtui.core.scan.chunk import HINTS, Chunk, literal
from memtui.core.files import is_inside
from memtui.core.tree import integrity, shape
from memtui.core.findings import Finding, Severity
from memtui.core.tree.model import MemoryTree
from memtui.core.tree.index import NodeIndex, index_line, iter_links, one_liner_matches, raw_links
from memtui.core.workspace import NODE_INDEX, Workspace


def check_links(ws: Workspace, text: str, file: Path, shown: str, first_line: int,
                 raw: list[tuple[int, str]] | None = None) -> Iterable[Finding]:
    """Links in ``text`` whose target leaves the workspace. The check is lexical (``..`` and
    absolute paths); symbolic links on the way are reported by the symlink checks. ``raw``:
    :func:`memtui.core.tree.index.raw_links` of ``text``, when the caller has them."""
    if (not raw) if raw is not None else "](" not in text:
        return
    folder = os.path.dirname(os.fspath(file))
    root = os.fspath(ws.root)
    for offset, target in iter_links(text, raw):
        candidate = os.path.normpath(os.path.join(folder, target))
        if target.startswith("/") or not (candidate == root or candidate.startswith(root + os.sep)):
            yield Finding.make(
                "link-outside", shown,
                f"the link {target!r} leads outside the workspace",
                "link only to files inside the workspace (relative links, no leading /)",
                line=first_line + offset)


def check_symlink(ws: Workspace, path: Path, shown: str) -> Finding | None:
    """A finding for a symbolic link leaving the workspace or pointing at nothing, else None."""
    target = os.readlink(path)
    if not os.path.exists(path):
        return Finding.make("symlink-broken", shown, f"is a symbolic link to {target!r}, which does not exist",
                            "remove the link or restore its target")
    if not is_inside(ws.root, path):
        return Finding.make("symlink-outside", shown,
                            f"is a symbolic link to {os.path.realpath(path)}, outside the workspace; not followed",
                            "replace the link with a copy of the file inside the workspace")
    return None


@dataclass(slots=True)
class ArticleFacts:
    """What the audit keeps of one article: its own findings (reading, front matter, links
    leaving the workspace, secrets, personal data, entry shape), its ``summary``, its title
    and its relative links (``[line, target, anchor]``, resolved again on every audit because
    their targets may change while the article does not)."""

    findings: list[Finding]
    summary: str | None
    title: str
    links: list[list] = field(default_factory=list)


#: Bump when what the audit finds in an article changes, so old cache entries are dropped.
#: 2: secrets, personal data, entry shape, diary notes and the links to resolve.
#: 3: the secret formats of gitleaks' rules and the AI-provider keys (core/scan/rules.py).
#: 4: findings carry their reference apart from their sentences.
CACHE_FORMAT = 4


class ArticleCache:
    """Per-article audit results keyed by (size, mtime_ns), kept between audits in the user
    cache folder (never in the workspace: opening one writes nothing there, DESIGN.md §2).

    A file whose size or modification time changed is read again; a changed memtui version,
    cache format, ``max_file_bytes`` or scan rule set (:func:`memtui.core.scan.rules_fingerprint`)
    drops the whole cache.
    """

    def __init__(self, entries: dict[str, list] | None = None) -> None:
        self.entries: dict[str, list] = entries or {}
        self.new: dict[str, list] = {}
        self.hits: list[str] = []
        self._by_folder: dict[str, dict[str, list]] | None = None  # built on the first subset()

    def get(self, path: str, stamp: tuple[int, int]) -> ArticleFacts | None:
        entry = self.entries.get(path)
        if entry is None or entry[0] != stamp[0] or entry[1] != stamp[1]:
            return None
        self.hits.append(path)  # still live: kept in the next save
        return ArticleFacts([_finding_from(d) for d in entry[2]], entry[3], entry[4],
                            entry[5] if len(entry) > 5 else [])

    def put(self, path: str, stamp: tuple[int, int], facts: ArticleFacts) -> None:
        self.new[path] = [stamp[0], stamp[1], [f.to_json() for f in facts.findings], facts.summary, facts.title,
                          facts.links]

    def subset(self, nodes: list[str]) -> "ArticleCache":
        """The entries of the articles of ``nodes`` (what one worker needs)."""
        if self._by_folder is None:
            by_folder: dict[str, dict[str, list]] = {}
            for path, entry in self.entries.items():
                by_folder.setdefault(path.rsplit("/", 1)[0] if "/" in path else "", {})[path] = entry
            self._by_folder = by_folder
        keep: dict[str, list] = {}
        for node in nodes:
            keep.update(self._by_folder.get(node, {}))
        return ArticleCache(keep)

    #: The folder of the user cache this kind of cache lives in.
    FOLDER = "audit"

    @classmethod
    def _file(cls, ws: Workspace) -> Path:
        return cache_file(cls.FOLDER, ws)

    @classmethod
    def load(cls, ws: Workspace) -> "ArticleCache":
        """The cache of ``ws`` (empty when absent, unreadable or made by another version)."""
        from memtui import __version__
        from memtui.core import jsonio

        try:
            data = jsonio.loads(cls._file(ws).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        head = [CACHE_FORMAT, __version__, ws.config.max_file_bytes, os.fspath(ws.root), scan.rules_fingerprint()]
        if not isinstance(data, dict) or data.get("head") != head or not isinstance(data.get("entries"), dict):
            return cls()
        return cls(data["entries"])

    def save(self, ws: Workspace) -> None:
        """Write the entries of the articles this audit met (reused or read; the rest are gone),
        atomically; a failure to write is ignored (the cache only saves time)."""
        import json

        from memtui import __version__
        from memtui.core.atomic import write_text

        merged = {path: self.entries[path] for path in self.hits if path in self.entries}
        merged.update(self.new)
        file = self._file(ws)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            write_text(file, json.dumps({"head": [CACHE_FORMAT, __version__, ws.config.max_file_bytes,
                                                  os.fspath(ws.root), scan.rules_fingerprint()],
                                         "entries": merged},
                                        ensure_ascii=False, separators=(",", ":")))
        except (OSError, ValueError):
            pass


def cache_file(folder: str, ws: Workspace) -> Path:
    """The file of ``ws``'s cache of one kind (``folder``) in the user cache folder."""
    import hashlib

    from memtui.paths import cache_dir

    key = hashlib.sha256(os.fsencode(ws.root)).hexdigest()[:24]
    return cache_dir() / folder / f"{key}.json"


def _finding_from(data: dict) -> Finding:
    return Finding(Severity(data["severity"]), data["code"], data["path"], data["line"], data["message"],
                   data["fix"], data.get("column"), data.get("fingerprint"), data.get("reference"))


def _article_facts(ws: Workspace, tree: MemoryTree, articles: list, scanned: list[list[Finding]],  # noqa: ANN001
                   diary: set[int], linked: set[int]) -> list[ArticleFacts]:
    """Everything the audit finds in each article's own bytes (cached by size and mtime).

    Args:
        articles: ``(article, file, shown)`` of each article read.
        scanned: the secret and personal-data findings of each readable article's text, in
            order (:func:`memtui.core.scan.findings_many`).
        diary: indexes (into ``articles``) whose body may hold a date or a session reference
            (:func:`memtui.core.tree.shape.diary_candidates`).
        linked: indexes (into ``articles``) whose text holds ``](`` (the others have no link).
    """
    out: list[ArticleFacts] = []
    root = os.fspath(ws.root)
    found_scans = iter(scanned)
    for index, (article, file, shown) in enumerate(articles):
        found = list(article.findings)
        links: list[list] = []
        if article.ok:
            raw = raw_links(article.body) if index in linked else []
            found.extend(check_links(ws, article.body, file, shown, article.body_line, raw))
            found.extend(next(found_scans))
            links = shape.collect_links(article.body, article.body_line, raw)
            found.extend(shape.own_anchor_findings(article.body, links, shown))
            if shape.is_experience(article.node):
                found.extend(shape.experience_findings(article.meta, shown, os.path.dirname(os.fspath(file)), root))
            elif index in diary:
                found.extend(shape.diary_findings(article.body, shown, article.body_line))
        out.append(ArticleFacts(found, article.summary, article.title, links))
    return out


def _index_text(ws: Workspace, index: NodeIndex, file: Path) -> str | None:
    """The text of a node index to scan: as parsed, or (unreadable as UTF-8) read again with
    replacement characters; ``None`` when it cannot be read."""
    if index.text or not index.findings:
        return index.text
    try:
        return file.read_text(encoding="utf-8", errors="replace")[:ws.config.max_file_bytes]
    except OSError:
        return None


def _index_facts(ws: Workspace, node: str, index: NodeIndex, folder: Path, shown: str,
                 facts: ArticleFacts | None) -> list[Finding]:
    """A node index's links, secrets and personal data (``facts``: its scans, cached like an
    article's; ``None`` when it could not be read)."""
    found = list(check_links(ws, index.body, folder / NODE_INDEX, shown, index.body_line))
    if facts is None:
        return found
    found.extend(facts.findings)
    if facts.links:  # entry and redirect lines have their own checks (index-missing-file, redirects)
        entry_lines = {e.line for e in index.entries + index.children} | {r.line for r in index.redirects}
        links = [link for link in facts.links if link[0] not in entry_lines]
        found.extend(shape.resolve_links(links, os.fspath(folder / NODE_INDEX), shown, os.fspath(ws.root), {}))
    return found


def _listed(ws: Workspace, tree: MemoryTree, index, folder: Path, index_shown: str,  # noqa: ANN001
            findings: list[Finding]) -> dict[str, int]:
    """The memory paths ``index`` lists (path → line), adding an ``index-missing-file``
    finding for each line whose target does not exist."""
    listed: dict[str, int] = {}
    for entry in index.entries + index.children:
        if entry.path is None:
            target = os.path.normpath(os.path.join(folder, entry.target))
            if not is_inside(ws.root, Path(target)):
                continue  # reported by the link check
            # inside the workspace but outside the memory tree
            if not os.path.exists(target):
                findings.append(Finding.make(
                    "index-missing-file", index_shown, f"links to {entry.target!r}, which does not exist",
                    "fix the link or delete the line", line=entry.line))
            continue
        listed.setdefault(entry.path, entry.line)
        if not os.path.lexists(tree.abs(entry.path)):
            what = "child node index" if entry.is_child_node else "file"
            findings.append(Finding.make(
                "index-missing-file", index_shown,
                f"links to {entry.target!r}, but that {what} does not exist",
                "create the file, fix the link, or delete the line", line=entry.line))
    for redirect in index.redirects:  # a merge's redirect: the old file is gone by design
        if redirect.new_path is not None and not os.path.lexists(tree.abs(redirect.new_path)):
            findings.append(Finding.make(
                "index-missing-file", index_shown,
                f"redirects {redirect.target!r} to {redirect.new_target!r}, which does not exist",
                "point the redirect at the article it was merged into, or delete the line",
                line=redirect.line))
    return listed


def _one_liner_findings(tree: MemoryTree, index: NodeIndex, index_shown: str,
                        read: dict[str, ArticleFacts]) -> list[Finding]:
    """``one-liner-mismatch`` for each index line whose one-liner differs from its article's
    ``summary`` (white space aside); ``read`` holds the articles already read."""
    findings: list[Finding] = []
    summaries: dict[str, str | None] = {}
    for item in index.entries:
        if item.path is None or item.one_liner is None or item.path in summaries:
            continue
        facts = read.get(item.path)
        if facts is None:
            if not os.path.isfile(tree.abs(item.path)):
                continue
            article = tree.read_article(item.path)
            facts = ArticleFacts([], article.summary, article.title)
        summary = facts.summary
        summaries[item.path] = summary
        if summary and not one_liner_matches(item.one_liner, summary):
            findings.append(Finding.make(
                "one-liner-mismatch", index_shown,
                f"the one-liner for {item.target!r} is {item.one_liner!r} but the article's summary is "
                f"{summary!r}",
                "make the index line and the article's `summary` say the same", line=item.line))
    return findings


#: The name of the link hint (a ``](``) in :data:`memtui.core.scan.chunk.HINTS`.
_LINKS = "links"
HINTS.add(_LINKS, [literal("](")])


def _node_facts(ws: Workspace, tree: MemoryTree, node: str, index: NodeIndex, index_shown: str,
                cache: "ArticleCache | None") -> tuple[dict[str, ArticleFacts], ArticleFacts | None,
                                                    list[tuple[str, Path, str]]]:
    """The facts of a node's articles and of its index: from ``cache`` where the file is
    unchanged, else read now and scanned together (one :class:`~memtui.core.scan.chunk.Chunk`
    for the node: the index first, then the articles read), and put in ``cache``.

    Returns:
        ``(facts by memory path, the index's facts or None when it is absent or unreadable,
        (path, file, shown) of each article in order)``; a symbolic link leaving the
        workspace is left out (reported by the symlink checks, never followed).
    """
    files: list[tuple[str, Path, str]] = []
    read: dict[str, ArticleFacts] = {}
    pending: list[tuple[str, tuple[int, int] | None]] = []  # read now: path, stamp to cache under
    articles: list[tuple] = []  # read now: (article, file, shown)
    for path in tree.article_files(node):
        file = tree.abs(path)
        shown = tree.shown(path)
        try:
            stat = os.lstat(file)
        except OSError:
            continue
        link = stat_mod.S_ISLNK(stat.st_mode)
        if link and check_symlink(ws, file, shown):
            continue  # reported by the node's symlink check, never followed
        files.append((path, file, shown))
        stamp = (stat.st_size, stat.st_mtime_ns)
        facts = cache.get(path, stamp) if cache is not None and not link else None
        if facts is None:
            pending.append((path, None if link else stamp))
            articles.append((tree.read_article(path), file, shown))
        else:
            read[path] = facts
    index_facts: ArticleFacts | None = None
    index_file = tree.abs(node) / NODE_INDEX
    index_key = f"{node}/{NODE_INDEX}" if node else NODE_INDEX
    index_text: str | None = None
    index_stamp: tuple[int, int] | None = None
    if index.exists:
        try:
            stat = os.stat(index_file)
            index_stamp = (stat.st_size, stat.st_mtime_ns)
            index_facts = cache.get(index_key, index_stamp) if cache is not None else None
            if index_facts is None:
                index_text = _index_text(ws, index, index_file)
        except OSError:
            pass
    first = 1 if index_text is not None else 0  # chunk position of the first article
    readable = [n for n, (article, _, _) in enumerate(articles) if article.ok]
    texts = [index_text] if index_text is not None else []
    places = [index_shown] if index_text is not None else []
    texts += [articles[n][0].text for n in readable]
    places += [articles[n][2] for n in readable]
    chunk = Chunk(texts)
    scanned = scan.findings_many(texts, places, chunk=chunk)
    bodies = {first + k: len(articles[n][0].text) - len(articles[n][0].body)
              for k, n in enumerate(readable) if not shape.is_experience(articles[n][0].node)}
    candidates = shape.diary_candidates(chunk, bodies)
    diary = {n for k, n in enumerate(readable) if first + k in candidates}
    with_links = {chunk.owner(end - 1) for _, end in chunk.hints(_LINKS)}
    linked = {n for k, n in enumerate(readable) if first + k in with_links}
    made = _article_facts(ws, tree, articles, scanned[first:], diary, linked)
    for (path, cache_stamp), facts in zip(pending, made, strict=True):
        read[path] = facts
        if cache is not None and cache_stamp is not None:
            cache.put(path, cache_stamp, facts)
    if index_text is not None and index_stamp is not None:
        found = scanned[0]
        links = shape.collect_links(index.body, index.body_line)
        found.extend(shape.own_anchor_findings(index.body, links, index_shown))
        index_facts = ArticleFacts(found, None, "", links)
        if cache is not None:
            cache.put(index_key, index_stamp, index_facts)
    return read, index_facts, files


def _dependencies(tree: MemoryTree, index: NodeIndex, folder: Path, read: dict[str, ArticleFacts],
                  index_facts: ArticleFacts | None, symlinks: list, deps: set[str]) -> None:
    """Add to ``deps`` the absolute paths a node's findings read beyond its own folder: the
    targets of its index's lines and redirects, of its articles' and index's links (as written
    and percent-decoded), and of its symbolic links."""
    from urllib.parse import unquote

    base = os.fspath(folder)
    for entry in index.entries + index.children:
        if entry.path is not None:
            deps.add(os.fspath(tree.abs(entry.path)))
        elif entry.target:
            deps.add(os.path.normpath(os.path.join(base, entry.target)))
    for redirect in index.redirects:
        if redirect.new_path is not None:
            deps.add(os.fspath(tree.abs(redirect.new_path)))
    for path, facts in read.items():
        here = os.path.dirname(os.fspath(tree.abs(path)))
        for _line, target, _anchor in facts.links:
            if target:
                deps.add(os.path.normpath(os.path.join(here, target)))
                deps.add(os.path.normpath(os.path.join(here, unquote(target))))
    for _line, target, _anchor in (index_facts.links if index_facts is not None else []):
        if target:
            deps.add(os.path.normpath(os.path.join(base, target)))
            deps.add(os.path.normpath(os.path.join(base, unquote(target))))
    for entry in symlinks:
        deps.add(os.path.realpath(entry.path))


def audit_node(ws: Workspace, tree: MemoryTree, node: str, cache: "ArticleCache | None" = None,
               deps: set[str] | None = None) -> tuple[list[Finding], int]:
    """Audit one node: its index, its articles, its links, its symlinks and its owner.

    Args:
        cache: per-article results of an earlier audit, reused for files whose size and
            modification time are unchanged (and filled with the ones read now).
        deps: when given, filled with the absolute paths outside the node's own folder whose
            change can change these findings (what its index lists or redirects to, what its
            articles and index link to, where its symbolic links lead); the node's folder and
            the indexes above it are dependencies of every node and not listed
            (:func:`memtui.core.audit.rerun`).

    Returns:
        ``(findings, number of articles read)``.
    """
    findings: list[Finding] = []
    folder = tree.abs(node)
    index = tree.index(node)
    index_shown = tree.shown(f"{node}/{NODE_INDEX}" if node else NODE_INDEX)
    read, index_facts, files = _node_facts(ws, tree, node, index, index_shown, cache)
    findings.extend(index.findings)
    if not index.exists:
        if not node:
            findings.append(Finding.make(
                "no-root-index", tree.shown(""), "the memory tree has no root AGENTS.md (the protocol and top index)",
                "write memory/AGENTS.md with the protocol and one line per top branch"))
    else:
        findings.extend(_index_facts(ws, node, index, folder, index_shown, index_facts))
    # symbolic links directly in the node folder
    try:
        with os.scandir(folder) as it:
            links = [e for e in it if e.is_symlink()]
    except OSError:
        links = []
    for entry in links:
        problem = check_symlink(ws, Path(entry.path), tree.shown(f"{node}/{entry.name}" if node else entry.name))
        if problem:
            findings.append(problem)
    if deps is not None:
        _dependencies(tree, index, folder, read, index_facts, links, deps)
    listed = _listed(ws, tree, index, folder, index_shown, findings)
    root = os.fspath(ws.root)
    anchor_cache: dict[str, set[str] | None] = {}
    for path, file, shown in files:
        facts = read[path]
        findings.extend(facts.findings)
        if facts.links:
            findings.extend(shape.resolve_links(facts.links, os.fspath(file), shown, root, anchor_cache))
        if index.exists and path not in listed:
            findings.append(Finding.make(
                "article-unlisted", shown, f"is not listed in {index_shown}",
                f"add a line '{index_line(facts.title, Path(path).name, '<one-liner>')}' to {index_shown}"))
    articles = len(files)
    if index.exists:
        findings.extend(_one_liner_findings(tree, index, index_shown, read))
    findings.extend(integrity.node_findings(tree, node))
    # owner: report the top-most node of every chain without an owner
    owner, _ = tree.owner(node)
    if owner is None and (index.exists or not node):
        parent = tree.parent_node(node)
        if parent is None or tree.owner(parent)[0] is not None:
            findings.append(Finding.make(
                "node-no-owner", index_shown if index.exists else tree.shown(node),
                f"node {node or '(root)'!s} has no owner, and neither has any node above it, so nobody may "
                "activate writes here",
                "add 'owner: <profile>' to the front matter of its AGENTS.md, or an [owners] line in memtui.toml"))
    return findings, articles
