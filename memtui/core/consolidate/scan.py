"""The consolidation pass (seed 000 §4 step 5): "merge duplicates, prune stale entries against
the running system, resolve or explicitly mark contradictions, refresh the node's AGENTS.md
one-liners" — as a list of **candidates**, each with the action that settles it.

Kinds of candidate (:data:`KINDS`):

``duplicate``
    two articles that say the same thing (:mod:`~memtui.core.consolidate.duplicates`);
    action: merge (a proposal that retires one into the other).
``contested``
    an active version with an open contest (an owner marked it, or a use or re-verification
    recorded a contradiction); action: resolve, naming why (or publish a new version).
``conflict``
    two active articles giving different values for the same field of the same subject:
    the same ``subject`` (or, for experience entries, the same symptom signature) and a
    different ``fix_shape`` or ``value`` (:data:`CONFLICT_FIELDS`); action: contest one
    against the other (or merge them).
``stale``
    an entry whose verification is too old or whose environment moved on
    (:mod:`~memtui.core.consolidate.stale`); action: re-verify (a check with case and
    verdict) or retire.
``one-liner``
    a node index line whose one-liner no longer says its article's ``summary``; action:
    refresh the one-liner (the owner's write of the index line, no proposal).
``ladder``
    3, 7 or 20 cases share one fix signature (seed 000 Part II §9,
    :mod:`~memtui.core.consolidate.ladder`); action: propose a skill or an article at the
    third, refine it with the evidence of use at the seventh and the twentieth.
``skill-defect``
    a case met a skill defect and lacks one of its three artefacts (delivered work, amended
    skill, memory entry), or failed twice (seed 000 Part II §11,
    :mod:`~memtui.core.consolidate.defects`); action: close it with them, or ask the owner.

Reading is all the pass does: it opens the store read-only and writes nothing.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from memtui.core.consolidate import duplicates as dup
from memtui.core.consolidate import defects, ladder
from memtui.core.consolidate.stale import staleness
from memtui.core.governance.counters import counters
from memtui.core.governance.model import Ledger, Version
from memtui.core.search.analysis import normalize
from memtui.core.store import Store
from memtui.core.tree.index import one_liner_matches
from memtui.core.tree.model import MemoryTree
from memtui.core.tree.shape import is_experience
from memtui.core.workspace import Workspace

KINDS = ("duplicate", "contested", "conflict", "stale", "one-liner", "ladder", "skill-defect")

#: The fields whose values two articles of one subject must not disagree on.
CONFLICT_FIELDS = ("fix_shape", "value")

#: ``(phase, done, total)``: phase ``"reading"`` (articles) or ``"comparing"`` (articles signed).
Progress = Callable[[str, int, int], None]

_QUOTES = re.compile(r"[\"'`„“”«»‚‘’]")


def subject_key(meta: dict[str, Any]) -> str | None:
    """The subject two articles must share to conflict: front matter ``subject``, else an
    experience entry's ``symptom`` signature; normalised (case, quotes, white space)."""
    for key in ("subject", "symptom"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(_QUOTES.sub("", normalize(value)).split())
    return None


@dataclass(slots=True)
class Candidate:
    """One thing the pass found, with the action that settles it.

    Attributes:
        kind: one of :data:`KINDS`.
        node: the node it belongs to (memory-relative; the first article's node).
        owner: that node's owner (``None`` when nobody owns it).
        articles: the articles concerned (memory-relative), the one acted on first.
        reason: a sentence saying what was found.
        action: what settles it, in words (``merge``, ``resolve``, ...).
        command: the CLI command that does it.
        owners: the owner of every article's node (a merge across nodes needs both).
        detail: kind-specific facts, JSON-ready.
    """

    kind: str
    node: str
    owner: str | None
    articles: list[str]
    reason: str
    action: str
    command: str
    owners: list[str | None] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    #: the distinct counters of each governed article (seed 000 §5), by article
    counters: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """A stable id of the candidate: ``kind:article[:article]``."""
        return ":".join([self.kind, *self.articles])

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "node": self.node, "owner": self.owner,
                "owners": list(self.owners), "articles": list(self.articles), "reason": self.reason,
                "action": self.action, "command": self.command, "detail": self.detail,
                "counters": self.counters}


@dataclass(slots=True)
class Report:
    """What :func:`scan` found: candidates sorted by node, owner, kind; counts; wall time."""

    candidates: list[Candidate] = field(default_factory=list)
    nodes: int = 0
    articles: int = 0
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        """``{kind: number of candidates}`` for every kind."""
        return {k: sum(1 for c in self.candidates if c.kind == k) for k in KINDS}

    def summary(self) -> str:
        """``"3 candidates in 41 articles: 1 duplicate, 2 stale"``."""
        counts = {k: n for k, n in self.counts().items() if n}
        listed = ", ".join(f"{n} {k}" for k, n in counts.items()) or "nothing to consolidate"
        return f"{len(self.candidates)} candidate{'s' if len(self.candidates) != 1 else ''} in " \
               f"{self.articles} article{'s' if self.articles != 1 else ''}: {listed}"


@dataclass(slots=True)
class _Read:
    path: str
    node: str
    meta: dict[str, Any]
    title: str


def _q(word: str) -> str:
    """A path as one shell word in a suggested command."""
    return word if re.fullmatch(r"[\w./@-]+", word) else "'" + word.replace("'", "'\\''") + "'"


def scan(ws: Workspace, store: Store | None = None, *, node: str | None = None,
         progress: Progress | None = None, today: _dt.date | None = None) -> Report:
    """Run the consolidation pass over the whole memory tree.

    Args:
        ws: the workspace.
        store: its store (opened read-only here when ``None``).
        node: keep only candidates touching this node or a node below it (memory-relative;
            the whole tree is still read, since a duplicate may lie in another node).
        progress: called as the pass advances (:data:`Progress`).
        today: the day staleness is measured from (default: today, UTC).

    Returns:
        A :class:`Report`. Never raises for a bad file: an unreadable article is skipped
        (the audit reports it).
    """
    started = time.perf_counter()
    own = store is None
    store = store or Store.open(ws, read_only=True)
    try:
        report = _scan(ws, store, progress, today or _dt.datetime.now(_dt.timezone.utc).date())
        if not store.damaged:
            tracked = Ledger(store).tracked()
            for c in report.candidates:
                c.counters = {a: counters(store, a).to_json() for a in c.articles if a in tracked}
    finally:
        if own:
            store.close()
    if node:
        prefix = node.strip("/")
        report.candidates = [c for c in report.candidates
                             if any(a == prefix or a.startswith(prefix + "/") for a in c.articles)]
    report.seconds = time.perf_counter() - started
    return report


def _scan(ws: Workspace, store: Store, progress: Progress | None, today: _dt.date) -> Report:
    tree = MemoryTree(ws)
    ledger = Ledger(store)
    report = Report()
    owners: dict[str, str | None] = {}

    def owner(n: str) -> str | None:
        if n not in owners:
            owners[n] = tree.owner(n)[0]
        return owners[n]

    active: dict[str, Version] = {v.article: v for v in ledger.versions() if v.state == "active"}
    checks: dict[str, list[Any]] = {}
    for check in ledger.checks():
        if check.verdict == "pass" and check.article in active and check.version == active[check.article].id:
            checks.setdefault(check.article, []).append(check)
    nodes = [n for n in tree.walk_nodes() if tree.index(n).exists or not n]
    files = [(n, p) for n in nodes for p in tree.article_files(n)]
    report.nodes = sum(1 for n in nodes if tree.index(n).exists)
    docs: list[dup.Doc] = []
    read: dict[str, _Read] = {}
    found: list[Candidate] = []
    cfg = ws.config
    total = len(files)
    for done, (n, path) in enumerate(files, 1):
        article = tree.read_article(path)
        if progress and (done % 250 == 0 or done == total):
            progress("reading", done, total)
        if not article.ok or os.path.islink(tree.abs(path)):
            continue
        report.articles += 1
        meta = article.meta if isinstance(article.meta, dict) else {}
        read[path] = _Read(path, n, meta, article.title)
        aliases = meta.get("aliases")
        names = [(article.title, "title")]
        if isinstance(aliases, list):
            names += [(a, "alias") for a in aliases if isinstance(a, str)]
        if article.summary:
            names.append((article.summary, "summary"))
        docs.append(dup.doc_of(path, article.body, names))
        stale = staleness(meta, checks.get(path, []), environments=cfg.environments,
                          stale_after_days=cfg.consolidate.stale_after_days, today=today)
        if stale is not None:
            how = (f"memtui reverify {_q(path)} --case ID --source-request ID --verdict pass --check TEXT"
                   if path in active else f"memtui adopt {_q(path)}, then memtui reverify {_q(path)} …")
            found.append(Candidate("stale", n, owner(n), [path], "; ".join(stale.reasons),
                                   "re-verify or retire", how, [owner(n)], stale.to_json()))
    found.extend(_one_liners(tree, nodes, read, owner))
    found.extend(_contested(ledger, active, read, owner))
    found.extend(_conflicts(read, active, owner))
    found.extend(_duplicates(docs, read, active, ledger, owner, progress))
    found.extend(ladder.candidates({p: (i.node, i.meta) for p, i in read.items() if is_experience(i.node)},
                                   store, owner, Candidate))
    found.extend(defects.candidates(store, owner, Candidate))
    found.sort(key=lambda c: (c.node, c.owner or "", KINDS.index(c.kind), c.articles))
    report.candidates = found
    return report


def _one_liners(tree: MemoryTree, nodes: list[str], read: dict[str, _Read], owner) -> list[Candidate]:  # noqa: ANN001
    """Index lines whose one-liner no longer matches the article's ``summary``."""
    found = []
    for n in nodes:
        for entry in tree.index(n).entries:
            item = read.get(entry.path or "")
            summary = item.meta.get("summary") if item else None
            if item is None or entry.one_liner is None or not isinstance(summary, str) or not summary.strip():
                continue
            if not one_liner_matches(entry.one_liner, summary):
                found.append(Candidate(
                    "one-liner", n, owner(n), [item.path],
                    f"the index line says {entry.one_liner!r} but the article's summary is {summary.strip()!r}",
                    "refresh the one-liner", f"memtui refresh {_q(item.path)}", [owner(n)],
                    {"line": entry.line, "one_liner": entry.one_liner, "summary": " ".join(summary.split())}))
    return found


def _contested(ledger: Ledger, active: dict[str, Version], read: dict[str, _Read], owner) -> list[Candidate]:  # noqa: ANN001
    """Active versions with an open contest, each with the first contest's reason."""
    open_by_version: dict[str, list[Any]] = {}
    for contest in ledger.contests():
        if contest.open:
            open_by_version.setdefault(contest.version, []).append(contest)
    found = []
    for path, version in sorted(active.items()):
        contests = open_by_version.get(version.id, [])
        if not contests or path not in read:
            continue
        n = version.node
        first = contests[0]
        why = f"{version.id} is contested: {first.reason}"
        if first.against:
            why += f" (against {first.against})"
        found.append(Candidate("contested", n, owner(n), [path], why, "resolve (or publish a new version)",
                               f"memtui resolve {_q(path)} --why TEXT", [owner(n)],
                               {"version": version.id, "contests": [c.to_json() for c in contests]}))
    return found


def _conflicts(read: dict[str, _Read], active: dict[str, Version], owner) -> list[Candidate]:  # noqa: ANN001
    """Active articles of one subject that give different values for a field."""
    groups: dict[str, list[_Read]] = {}
    for item in read.values():
        key = subject_key(item.meta)
        if key and item.path in active:
            groups.setdefault(key, []).append(item)
    out: list[Candidate] = []
    for items in groups.values():
        items.sort(key=lambda i: i.path)
        for i, a in enumerate(items):
            for b in items[i + 1:]:
                for name in CONFLICT_FIELDS:
                    va, vb = a.meta.get(name), b.meta.get(name)
                    if va in (None, "") or vb in (None, ""):
                        continue
                    if normalize(str(va)).strip() != normalize(str(vb)).strip():
                        out.append(Candidate(
                            "conflict", a.node, owner(a.node), [a.path, b.path],
                            f"the same subject, but {name} is {va!r} in {a.path} and {vb!r} in {b.path}",
                            "contest one against the other (or merge them)",
                            f"memtui contest {_q(a.path)} --against {_q(b.path)} --reason TEXT",
                            [owner(a.node), owner(b.node)], {"field": name, "values": [va, vb]}))
                        break
    return out


def _duplicates(docs: list[dup.Doc], read: dict[str, _Read], active: dict[str, Version], ledger: Ledger,
                owner, progress: Progress | None) -> list[Candidate]:  # noqa: ANN001
    def signed(done: int, total: int) -> None:
        if progress:
            progress("comparing", done, total)

    pins: dict[str, int] = {}
    for pin in ledger.pins():
        article = str(pin.get("version", "")).rsplit("@", 1)[0]
        pins[article] = pins.get(article, 0) + 1
    size = {d.path: len(d.words) for d in docs}
    out: list[Candidate] = []
    for pair in dup.find(docs, signed):
        a, b = read[pair.a], read[pair.b]
        # keep the one cases leaned on more, then the one with more to say, then the first by path
        keep, drop = sorted((a, b), key=lambda i: (-pins.get(i.path, 0), -size.get(i.path, 0), i.path))
        untracked = [i.path for i in (keep, drop) if i.path not in active]
        command = f"memtui merge {_q(keep.path)} {_q(drop.path)}"
        if untracked:
            command = f"memtui adopt {' '.join(_q(p) for p in untracked)}, then {command}"
        out.append(Candidate("duplicate", keep.node, owner(keep.node), [keep.path, drop.path], pair.reason,
                             f"merge {drop.path} into {keep.path}", command,
                             [owner(keep.node), owner(drop.node)], pair.to_json()))
    return out
