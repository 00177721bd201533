"""Governed memory: proposals, versions, uses, pins, approval, rollback (issue 5).

The rules come from seed 000 §2 rules 4, 6 and 7, §5 and §7.4b, and DESIGN.md §1 and §4
invariants 5–7. The files under ``memory/`` are what agents read; this module keeps their
governance in the store (:mod:`memtui.core.store`), in these tables:

``versions``
    one record per version of an article (a proposal is a version in state ``proposed``):
    ``id`` (``"<article>@<number>"``), ``article`` (path relative to ``memory/``, such as
    ``support/lockout.md``), ``node``, ``number``, ``state`` (``proposed``, ``active``,
    ``retired``, ``rejected``), ``content`` (the exact text of the file, BOM and line ends
    included) and its ``sha256`` (of the UTF-8 bytes), ``created`` (ISO 8601 UTC),
    ``author`` and ``profile_version``, ``provenance`` (``kind``: proposal / baseline /
    external edit / rollback; ``case``, ``source_request``, ``sources``, ``human_reviewed``,
    ``untrusted``, ``rollback_of``), ``based_on`` (the active number when it was filed) and
    ``base_hash``, ``title`` and ``one_liner`` (the node index line), ``new_node`` (owner,
    title and one-liner of a node the version creates), ``decision`` (``action``, ``by``,
    ``at``, ``why``) and ``retirement`` (the same, when an active version is retired).
``uses``
    seed 000's MEMORY_USES: ``version``, ``hash`` it was recorded against, ``case``,
    ``source_request``, ``origin`` (``independent``, ``mirror``, ``subcase`` or ``fork``),
    ``origin_of`` (the case it mirrors/forks/is a subcase of), ``check`` (the independent
    check performed: mere retrieval is not a use), ``verdict`` (``pass``/``contradiction``),
    ``time``, ``by``.
``pins``
    ``case`` relied on ``version`` with ``hash`` (so a retraction is traceable).
``assignments``
    a validation ``case`` assigned to a proposal by its owner.
``intents``
    a pending multi-file change (see "One atomic change" below).

Rules (each has a test in ``tests/test_governance.py``):

- Only the owning profile (DESIGN.md §1 owner resolution, :meth:`MemoryTree.owner`)
  activates, rejects, retires, rolls back, assigns validation cases, adopts an external edit
  or reverts one; anyone may propose into any node and record a use. A refusal is
  :class:`RefusedError` with the owner's name (``support/experience is owned by
  support.curator; you act as x``).
- Eligibility by uses (§7.4b): two ``pass`` uses with distinct source-request ids (also
  distinct from the proposal's), neither a mirror, subcase or fork of the proposing case nor
  of each other, each recorded against the proposal's current hash, and no
  ``contradiction``. Otherwise only human review promotes (:func:`eligibility` says why).
- Activation retires the previous active version, writes the article and its node index
  line, and records ``governance.activate``; rejection needs a reason; retiring removes the
  file and its index line (the record stays); rollback publishes a new version holding an
  earlier accepted content. Decided records are never edited (:func:`_transition` refuses).
- Untrusted provenance propagates: a version built on an untrusted one is untrusted.
- A new node (§2 rule 4) is created only with an owner, and the parent node's index gains
  its line in the same change.
- Adoption is explicit: articles in the tree with no record are *untracked*;
  :func:`adopt` records them as version 1 (``baseline``). An article whose bytes differ from
  its active version is an *unrecorded edit* (:func:`audit_findings`), adopted as a new
  version (``external edit``) or reverted (:func:`revert`).

One atomic change. An activation touches up to three files (article, node index, parent
index) and the store. Before the first file is written, an ``intents`` record holds the
complete new bytes of every file, the hash each file had, and the state changes to make.
That record is the commit point: :func:`recover` (run by every writer here and when a
session opens) completes any intent it finds, idempotently — a file already at its new
hash is left, one at its old hash is written, state changes are re-applied, and the audit
record is written under the intent's id as client id (so a retry is not doubled). A file
holding neither hash was edited by someone else meanwhile: the intent stays and
:class:`~memtui.core.errors.ConflictError` says which file. Each single write is atomic
(:mod:`memtui.core.atomic`), so a crash at any point leaves either the old state with no
intent, or an intent that the next open completes.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from tinydb import Query

from memtui.core import atomic, frontmatter
from memtui.core.errors import ConfinementError, ConflictError, MemtuiError
from memtui.core.files import confine
from memtui.core.findings import Finding
from memtui.core.store import Store
from memtui.core.tree import MemoryTree, parse_index
from memtui.core.workspace import NODE_INDEX, SPECIAL_FILES, Workspace

STATES = ("proposed", "active", "retired", "rejected")
VERDICTS = ("pass", "contradiction")
ORIGINS = ("independent", "mirror", "subcase", "fork")
#: Where agents and scripts drop proposals for :func:`ingest` (workspace-relative).
INBOX = "proposals/inbox"
T_VERSIONS, T_USES, T_PINS, T_ASSIGN, T_INTENTS = "versions", "uses", "pins", "assignments", "intents"


class GovernanceError(MemtuiError):
    """A governance request cannot be done as given (unknown version, bad state, bad input)."""


class RefusedError(GovernanceError):
    """The acting profile may not do this (not the owner, no profile, no owner, no review).

    ``str(exc)`` says why, naming the owner and the acting profile.
    """


def now() -> str:
    """The current time, ISO 8601 UTC with seconds (``2026-09-02T10:00:00+00:00``)."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


# -- the model ---------------------------------------------------------------------------------

@dataclass(slots=True)
class Version:
    """A read-only view of one ``versions`` record (see the module docstring for fields)."""

    id: str
    article: str
    node: str
    number: int
    state: str
    content: str
    sha256: str
    created: str
    author: str | None
    profile_version: str | None
    provenance: dict[str, Any]
    based_on: int | None
    base_hash: str | None
    title: str
    one_liner: str
    new_node: dict[str, Any] | None = None
    decision: dict[str, Any] | None = None
    retirement: dict[str, Any] | None = None
    intake_key: str | None = None
    doc_id: int = 0

    @classmethod
    def from_doc(cls, doc: Any) -> "Version":
        names = cls.__slots__  # type: ignore[attr-defined]
        data = {k: doc.get(k) for k in names if k != "doc_id"}
        data["provenance"] = dict(data.get("provenance") or {})
        return cls(**data, doc_id=int(getattr(doc, "doc_id", 0)))

    @property
    def untrusted(self) -> bool:
        """The provenance chain reaches untrusted content (seed 000 §7.4b)."""
        return bool(self.provenance.get("untrusted"))

    def to_json(self, content: bool = True) -> dict[str, Any]:
        """The record as a JSON-ready dict (``content`` left out when ``content=False``)."""
        data = {k: getattr(self, k) for k in self.__slots__ if k != "doc_id"}  # type: ignore[attr-defined]
        if not content:
            data.pop("content")
        return data


@dataclass(slots=True)
class Use:
    """A ``uses`` record (seed 000 MEMORY_USES): a case that relied on a version."""

    version: str
    hash: str
    case: str
    source_request: str
    origin: str
    origin_of: str | None
    check: str
    verdict: str
    time: str
    by: str | None

    @classmethod
    def from_doc(cls, doc: Any) -> "Use":
        return cls(**{k: doc.get(k) for k in cls.__slots__})  # type: ignore[attr-defined]

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}  # type: ignore[attr-defined]


@dataclass(slots=True)
class Eligibility:
    """Whether a proposal may be promoted by uses, and why not yet.

    Attributes:
        by_uses: two independent passing uses exist (seed 000 §7.4b).
        counted: the uses that count, at most two shown.
        reasons: plain sentences, why it is not (yet) eligible; empty when it is.
    """

    by_uses: bool
    counted: list[Use] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    @property
    def summary(self) -> str:
        """``"eligible by uses"`` or ``"human review only: <first reason>"``."""
        if self.by_uses:
            return "eligible by uses"
        return "human review only: " + (self.reasons[0] if self.reasons else "no uses yet")

    def to_json(self) -> dict[str, Any]:
        return {"by_uses": self.by_uses, "summary": self.summary, "reasons": list(self.reasons),
                "counted": [u.to_json() for u in self.counted]}


class Ledger:
    """Reads of the governance tables of one store (no writes; safe on a read-only store)."""

    def __init__(self, store: Store):
        self.store = store

    def versions(self, article: str | None = None) -> list[Version]:
        """Versions of ``article`` (all articles when ``None``), by article then number."""
        table = self.store.table(T_VERSIONS)
        docs = table.search(Query().article == article) if article else table.all()
        return sorted((Version.from_doc(d) for d in docs), key=lambda v: (v.article, v.number))

    def get(self, version_id: str) -> Version:
        """The version ``version_id`` (``article@N``).

        Raises:
            GovernanceError: no such version.
        """
        docs = self.store.table(T_VERSIONS).search(Query().id == version_id)
        if not docs:
            raise GovernanceError(f"there is no version {version_id!r}; `memtui proposals list` and "
                                  "`memtui versions ARTICLE` show the ids (article@number).")
        return Version.from_doc(docs[0])

    def active(self, article: str) -> Version | None:
        """The active version of ``article``, or ``None``."""
        docs = self.store.table(T_VERSIONS).search((Query().article == article) & (Query().state == "active"))
        return Version.from_doc(docs[0]) if docs else None

    def proposals(self, state: str | None = "proposed") -> list[Version]:
        """Versions filed as proposals, in ``state`` (any when ``None``), oldest first."""
        out = [v for v in self.versions() if v.provenance.get("kind") == "proposal"
               and (state is None or v.state == state)]
        return sorted(out, key=lambda v: (v.created, v.id))

    def uses(self, version_id: str) -> list[Use]:
        """Uses recorded for ``version_id``, oldest first."""
        return [Use.from_doc(d) for d in self.store.table(T_USES).search(Query().version == version_id)]

    def assignments(self, version_id: str) -> list[dict[str, Any]]:
        """Validation cases assigned to ``version_id``: ``[{"case", "by", "time"}]``."""
        return [dict(d) for d in self.store.table(T_ASSIGN).search(Query().version == version_id)]

    def pins(self, case: str | None = None) -> list[dict[str, Any]]:
        """Pins (``{"case", "version", "hash", "time"}``), of ``case`` when given."""
        table = self.store.table(T_PINS)
        return [dict(d) for d in (table.search(Query().case == case) if case else table.all())]

    def tracked(self) -> dict[str, list[Version]]:
        """``{article: [versions]}`` for every article with a record."""
        out: dict[str, list[Version]] = {}
        for v in self.versions():
            out.setdefault(v.article, []).append(v)
        return out

    def intents(self) -> list[dict[str, Any]]:
        """Pending intents (interrupted changes), oldest first."""
        return sorted((dict(d) for d in self.store.table(T_INTENTS).all()), key=lambda d: d.get("time", ""))


# -- paths and owners ----------------------------------------------------------------------------

def normalise_article(article: str) -> str:
    """``article`` as a clean memory-relative path (``support/x.md``).

    Raises:
        GovernanceError: absolute, leads out (``..``), not ``.md``, or a node index/notes file.
    """
    raw = article.strip().replace("\\", "/")
    if raw.startswith("memory/"):
        raw = raw[len("memory/"):]
    path = PurePosixPath(raw)
    if not raw or path.is_absolute() or ".." in path.parts:
        raise GovernanceError(f"{article!r} is not an article path inside memory/ (like support/lockout.md).")
    if path.suffix.lower() != ".md":
        raise GovernanceError(f"{article!r} is not a Markdown article (it must end in .md).")
    if path.name == NODE_INDEX or (len(path.parts) == 1 and path.name in SPECIAL_FILES):
        raise GovernanceError(f"{article!r} is a node index or a notes file, not an article.")
    return str(path)


def node_of(article: str) -> str:
    """The node folder of a memory-relative article path (``""`` for the root)."""
    return article.rsplit("/", 1)[0] if "/" in article else ""


def owner_of(ws: Workspace, node: str) -> tuple[str | None, str]:
    """The owner of ``node`` (DESIGN.md §1: front matter, ``[owners]``, else inherited)."""
    return MemoryTree(ws).owner(node)


def require_owner(session, node: str, action: str) -> str:  # noqa: ANN001 - Session
    """The acting profile, when it owns ``node``.

    Raises:
        RefusedError: no acting profile, no owner, or another owner (named in the sentence).
    """
    shown = node or "the root node"
    owner, _how = owner_of(session.ws, node)
    if not session.profile:
        raise RefusedError(f"no acting profile to {action} in {shown}: pass --as PROFILE or set "
                           "[user] profile in memtui.toml")
    if owner is None:
        raise RefusedError(f"{shown} has no owner, so nobody may {action} there; set `owner:` in its "
                           f"AGENTS.md or [owners] in memtui.toml")
    if owner != session.profile:
        raise RefusedError(f"{shown} is owned by {owner}; you act as {session.profile}")
    return owner


def _mem_path(ws: Workspace, article: str) -> Path:
    prefix = f"{ws.memory_rel}/" if ws.memory_rel else ""
    return confine(ws.root, prefix + article)


def _shown(ws: Workspace, article: str) -> str:
    return f"{ws.memory_rel}/{article}" if ws.memory_rel else article


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _sha(data: bytes | None) -> str | None:
    return None if data is None else atomic.sha256(data)


def title_and_line(content: str, fallback_title: str, fallback_line: str = "") -> tuple[str, str]:
    """The index title and one-liner of an article's text: front matter ``title``/``summary``,
    else its first heading / first sentence of the body, else the fallbacks."""
    fm = frontmatter.split(content)
    meta = fm.meta if isinstance(fm.meta, dict) else {}
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    summary = meta.get("summary") if isinstance(meta.get("summary"), str) else None
    body_lines = [ln.strip() for ln in fm.body.splitlines() if ln.strip()]
    if not title:
        for ln in body_lines[:40]:
            if ln.startswith("#"):
                title = ln.lstrip("#").strip()
                break
    if not summary:
        summary = fallback_line or next((ln for ln in body_lines if not ln.startswith("#")), "")
    one = " ".join((summary or "").split())
    return " ".join((title or fallback_title).split()), (one[:157] + "…") if len(one) > 160 else one


# -- node index editing --------------------------------------------------------------------------

def _eol(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line(title: str, target: str, one_liner: str) -> str:
    title = title.replace("[", "(").replace("]", ")")
    return f"- [{title}]({target}) — {one_liner}" if one_liner else f"- [{title}]({target})"


def index_with_line(text: str, node: str, target: str, title: str, one_liner: str,
                    child: bool = False) -> str:
    """``text`` (a node's ``AGENTS.md``) with the line for ``target`` set to
    ``- [title](target) — one_liner``: replaced in place when listed (bullet kept), else added
    after the last line of its kind (article or child-node lines), else under an empty
    ``## Articles`` / ``## Child nodes`` heading (a new node's index has one), else in a new
    section at the end. BOM and line ends are kept."""
    index = parse_index(text, node, NODE_INDEX)
    entries = index.children if child else index.entries
    want = os.path.normpath(os.path.join(node, target)).replace(os.sep, "/")
    lines = text.splitlines(keepends=True)
    eol = _eol(text)
    new = _line(title, target, one_liner)
    for entry in entries:
        if entry.path == want:
            old = lines[entry.line - 1]
            stripped = old.rstrip("\r\n")
            ending = old[len(stripped):]
            indent = stripped[: len(stripped) - len(stripped.lstrip())]
            bullet = stripped.lstrip().split(" ", 1)[0]
            lines[entry.line - 1] = indent + bullet + new[1:] + ending
            return "".join(lines)
    if entries:
        at = max(e.line for e in entries)
        if not lines[at - 1].endswith(("\n", "\r")):
            lines[at - 1] += eol
        lines.insert(at, new + eol)
        return "".join(lines)
    heading = "## Child nodes" if child else "## Articles"
    for h, ln in enumerate(lines):  # an empty section of its kind: fill it (no second heading)
        if ln.strip().lower() == heading.lower():
            if not ln.endswith(("\n", "\r")):
                lines[h] += eol
            j = h + 1
            if j < len(lines) and not lines[j].strip():
                j += 1
            lines.insert(j, new + eol)
            if j + 1 < len(lines) and lines[j + 1].strip():
                lines.insert(j + 1, eol)
            return "".join(lines)
    out = text
    if out and not out.endswith(("\n", "\r")):
        out += eol
    if out.strip("\ufeff"):
        out += eol
    return out + heading + eol + eol + new + eol


def index_without_line(text: str, node: str, target: str) -> str:
    """``text`` without the article line(s) for ``target`` (unchanged when not listed)."""
    index = parse_index(text, node, NODE_INDEX)
    want = os.path.normpath(os.path.join(node, target)).replace(os.sep, "/")
    drop = {e.line for e in index.entries if e.path == want}
    return "".join(ln for i, ln in enumerate(text.splitlines(keepends=True), 1) if i not in drop)


def new_node_index(title: str, owner: str, one_liner: str) -> str:
    """The ``AGENTS.md`` of a new node: front matter ``owner:``, heading, description."""
    return f"---\nowner: {owner}\n---\n# {title}\n\n{one_liner}\n\n## Articles\n\n"


# -- eligibility ---------------------------------------------------------------------------------

def _root_case(case: str, origin: str, origin_of: str | None) -> str:
    return origin_of if origin in ("mirror", "subcase", "fork") and origin_of else case


def eligibility(ledger: Ledger, version: Version) -> Eligibility:
    """Whether ``version`` may be promoted by uses (seed 000 §7.4b), and why not yet.

    A use counts when it is a ``pass``, was recorded against the version's hash, and its case
    is not the proposing case nor a mirror, subcase or fork of it; two counted uses must have
    distinct source-request ids (also distinct from the proposal's) and not be mirrors,
    subcases or forks of each other. Any ``contradiction`` blocks. A proposal filed on an older
    active version than the one active now needs review.
    """
    reasons: list[str] = []
    prov = version.provenance
    proposing = prov.get("case") or ""
    proposing_sr = prov.get("source_request") or ""
    uses = ledger.uses(version.id)
    contradictions = [u for u in uses if u.verdict == "contradiction"]
    for u in contradictions:
        reasons.append(f"case {u.case} recorded a contradiction ({u.check})")
    candidates: list[Use] = []
    for u in uses:
        if u.verdict != "pass":
            continue
        if u.hash != version.sha256:
            reasons.append(f"the use by case {u.case} was recorded against another hash "
                           f"({(u.hash or '')[:12]}), not this content")
            continue
        root = _root_case(u.case, u.origin, u.origin_of)
        if u.case == proposing or root == proposing:
            how = "is the proposing case" if u.case == proposing else f"is a {u.origin} of the proposing case {proposing}"
            reasons.append(f"the use by case {u.case} does not count: it {how}")
            continue
        if proposing_sr and u.source_request == proposing_sr:
            reasons.append(f"the use by case {u.case} has the proposal's own source request {u.source_request}")
            continue
        candidates.append(u)
    counted: list[Use] = []
    for u in candidates:
        clash = None
        for c in counted:
            if c.source_request == u.source_request:
                clash = f"cases {c.case} and {u.case} share the source request {u.source_request}"
            elif _root_case(u.case, u.origin, u.origin_of) in (c.case, _root_case(c.case, c.origin, c.origin_of)) \
                    or _root_case(c.case, c.origin, c.origin_of) == u.case:
                clash = f"case {u.case} is a {u.origin} of case {c.case}, not an independent use"
        if clash:
            reasons.append(clash)
        elif len(counted) < 2:
            counted.append(u)
    if len(counted) < 2:
        need = 2 - len(counted)
        reasons.append(f"{need} more independent passing use{'s' if need > 1 else ''} needed "
                    f"({len(counted)} of 2)")
    active = ledger.active(version.article)
    if version.state == "proposed" and active is not None and version.based_on != active.number:
        reasons.append(f"it was filed on version {version.based_on or 'none'} but version "
                       f"{active.number} is active now: review the diff")
    by_uses = len(counted) >= 2 and not contradictions and not (
        version.state == "proposed" and active is not None and version.based_on != active.number)
    return Eligibility(by_uses, counted, [] if by_uses else reasons)


# -- writes: helpers -------------------------------------------------------------------------------

def _next_number(ledger: Ledger, article: str) -> int:
    return max((v.number for v in ledger.versions(article)), default=0) + 1


def _chain_untrusted(ledger: Ledger, number: int | None, article: str) -> bool:
    if number is None:
        return False
    for v in ledger.versions(article):
        if v.number == number:
            return v.untrusted
    return False


_FROZEN = ("content", "sha256", "provenance", "article", "number", "created", "author", "id")
_ALLOWED = {("proposed", "active"), ("proposed", "rejected"), ("active", "retired")}


def _transition(store: Store, version: Version, state: str, field_name: str, decision: dict[str, Any],
                provenance: dict[str, Any] | None = None) -> None:
    """Move ``version`` to ``state`` recording ``decision`` in ``field_name``; the only edit
    ever made to a version record. Decided records (retired, rejected) are never edited.
    ``provenance`` (only on proposed→active, the decision itself) adds provenance facts that
    the decision establishes, such as ``human_reviewed``.

    Raises:
        GovernanceError: the transition is not one of proposed→active/rejected, active→retired.
    """
    if (version.state, state) not in _ALLOWED:
        raise GovernanceError(f"version {version.id} is {version.state}; it cannot become {state} "
                              "(decided records are never edited).")
    update: dict[str, Any] = {"state": state, field_name: decision}
    if provenance and (version.state, state) == ("proposed", "active"):
        update["provenance"] = {**version.provenance, **provenance}
    store.table(T_VERSIONS).update(update, doc_ids=[version.doc_id])


def _insert_version(store: Store, data: dict[str, Any]) -> Version:
    doc_id = store.table(T_VERSIONS).insert(data)
    return Version.from_doc(_Doc(data, doc_id))


class _Doc(dict):
    def __init__(self, data: dict[str, Any], doc_id: int):
        super().__init__(data)
        self.doc_id = doc_id


def _version_record(ws: Workspace, ledger: Ledger, article: str, content: str, *, author: str | None,
                    profile_version: str | None, provenance: dict[str, Any], state: str,
                    title: str | None = None, one_liner: str | None = None,
                    new_node: dict[str, Any] | None = None, intake_key: str | None = None,
                    decision: dict[str, Any] | None = None) -> dict[str, Any]:
    active = ledger.active(article)
    number = _next_number(ledger, article)
    listed = _listed_line(ws, article)
    auto_title, auto_line = title_and_line(content, PurePosixPath(article).stem,
                                           listed[1] if listed else "")
    based_on = active.number if active else None
    prov = {"kind": "proposal", "case": None, "source_request": None, "sources": [],
            "human_reviewed": False, "untrusted": False, **provenance}
    if _chain_untrusted(ledger, based_on, article) and prov.get("kind") != "baseline":
        prov["untrusted"] = True
    return {
        "id": f"{article}@{number}", "article": article, "node": node_of(article), "number": number,
        "state": state, "content": content, "sha256": atomic.sha256(content.encode("utf-8")),
        "created": now(), "author": author, "profile_version": profile_version, "provenance": prov,
        "based_on": based_on, "base_hash": active.sha256 if active else None,
        "title": title or (listed[0] if listed and not _has_meta_title(content) else auto_title),
        "one_liner": one_liner or auto_line, "new_node": new_node, "decision": decision,
        "retirement": None, "intake_key": intake_key,
    }


def _has_meta_title(content: str) -> bool:
    meta = frontmatter.split(content).meta
    return isinstance(meta, dict) and isinstance(meta.get("title"), str)


def _listed_line(ws: Workspace, article: str) -> tuple[str, str] | None:
    node = node_of(article)
    index = MemoryTree(ws).index(node)
    for e in index.entries:
        if e.path == article:
            return e.title, e.one_liner or ""
    return None


# -- intents: the one atomic change -----------------------------------------------------------------

def _plan_files(ws: Workspace, version: Version, content: str | None) -> list[dict[str, Any]]:
    """File writes that put ``content`` (``None``: remove) in place with its index lines."""
    files: list[dict[str, Any]] = []
    node = version.node
    article_path = _mem_path(ws, version.article)
    files.append({"path": _shown(ws, version.article), "old": _sha(_read(article_path)),
                  "new": content})
    index_rel = f"{node}/{NODE_INDEX}" if node else NODE_INDEX
    index_path = _mem_path(ws, index_rel)
    index_bytes = _read(index_path)
    target = PurePosixPath(version.article).name
    if index_bytes is None:
        if content is None:
            return files
        spec = version.new_node or {}
        if not spec.get("owner"):
            raise RefusedError(f"{node or 'the root'} is not a node yet (no AGENTS.md); a new node is "
                               "created only with an owner (seed 000 §2 rule 4): propose with --new-node-owner")
        index_text = new_node_index(spec.get("title") or PurePosixPath(node).name, spec["owner"],
                                    spec.get("one_liner") or "")
        tree = MemoryTree(ws)
        parent = tree.parent_node(node)
        if parent is None:
            raise GovernanceError("the root node cannot be created by a proposal")
        parent_rel = f"{parent}/{NODE_INDEX}" if parent else NODE_INDEX
        parent_path = _mem_path(ws, parent_rel)
        parent_bytes = _read(parent_path)
        if parent_bytes is None:
            raise GovernanceError(f"the parent node {parent or 'root'} has no AGENTS.md to list the new node in")
        child_target = os.path.relpath(f"{node}/{NODE_INDEX}", parent or ".").replace(os.sep, "/")
        parent_text = index_with_line(parent_bytes.decode("utf-8"), parent, child_target,
                                      spec.get("title") or PurePosixPath(node).name,
                                      spec.get("one_liner") or "", child=True)
        files.append({"path": _shown(ws, parent_rel), "old": _sha(parent_bytes), "new": parent_text})
        old_index = None
    else:
        try:
            index_text = index_bytes.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GovernanceError(f"{index_rel} is not UTF-8 text; fix it before publishing here") from exc
        old_index = _sha(index_bytes)
    if content is None:
        new_index = index_without_line(index_text, node, target)
    else:
        new_index = index_with_line(index_text, node, target, version.title, version.one_liner)
    if old_index is None or new_index != index_text:
        files.append({"path": _shown(ws, index_rel), "old": old_index, "new": new_index})
    return files


def _run_intent(session, intent: dict[str, Any]) -> None:  # noqa: ANN001 - Session
    ws: Workspace = session.ws
    store: Store = session.store
    for f in intent["files"]:
        path = confine(ws.root, f["path"])
        current = _sha(_read(path))
        new_bytes = None if f["new"] is None else f["new"].encode("utf-8")
        want = _sha(new_bytes)
        if current == want:
            continue
        if current != f["old"]:
            raise ConflictError(
                f"{f['path']} changed on disk while a governance change was pending (expected "
                f"{(f['old'] or 'absent')[:12]}, found {(current or 'absent')[:12]}); nothing more was "
                "written. Look at the file, then run the command again.", path=path)
        if new_bytes is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic.write_bytes(path, new_bytes)
    table = store.table(T_VERSIONS)
    for change in intent["changes"]:
        docs = table.search(Query().id == change["id"])
        if not docs:
            continue
        v = Version.from_doc(docs[0])
        if v.state == change["state"]:
            continue
        _transition(store, v, change["state"], change["field"], change["decision"], change.get("provenance"))
    first = intent["files"][0] if intent["files"] else {"path": intent["target"], "old": None, "new": None}
    session.audit.record(intent["action"], intent["target"], first["old"],
                         _sha(None if first["new"] is None else first["new"].encode("utf-8")),
                         client_id=intent["id"], detail=intent.get("detail") or {})
    store.table(T_INTENTS).remove(Query().id == intent["id"])


def _commit(session, action: str, target: str, files: list[dict[str, Any]],  # noqa: ANN001
            changes: list[dict[str, Any]], detail: dict[str, Any]) -> str:
    intent = {"id": uuid.uuid4().hex, "time": now(), "action": action, "target": target,
              "files": files, "changes": changes, "detail": detail}
    session.store.table(T_INTENTS).insert(intent)
    _run_intent(session, intent)
    return intent["id"]


def recover(session) -> list[str]:  # noqa: ANN001 - Session
    """Complete every pending intent (an activation, retirement, rollback or revert cut short).

    Returns:
        The audit targets completed. Does nothing on a read-only session.

    Raises:
        ConflictError: a file of an intent was changed by someone else meanwhile (the intent
            stays; nothing of it is overwritten).
    """
    if session.read_only:
        return []
    done = []
    for intent in Ledger(session.store).intents():
        _run_intent(session, intent)
        done.append(intent["target"])
    return done


def _begin(session) -> Ledger:  # noqa: ANN001 - Session
    session.require_writable()
    recover(session)
    return Ledger(session.store)


def _decision(session, action: str, why: str = "") -> dict[str, Any]:  # noqa: ANN001
    return {"action": action, "by": session.profile, "at": now(), "why": why}


def _check_disk(session, ledger: Ledger, version: Version) -> None:  # noqa: ANN001 - Session
    """Refuse to publish over an unrecorded edit or an untracked file (ConflictError)."""
    active = ledger.active(version.article)
    on_disk = _read(_mem_path(session.ws, version.article))
    if active is not None and _sha(on_disk) != active.sha256:
        raise ConflictError(
            f"{_shown(session.ws, version.article)} differs from its active version {active.number} "
            "(an unrecorded edit); adopt it (`memtui adopt`) or revert it before publishing a new version.")
    if active is None and on_disk is not None and version.provenance.get("kind") != "external edit":
        raise ConflictError(
            f"{_shown(session.ws, version.article)} exists but is untracked; adopt it first "
            f"(`memtui adopt {version.article}`) so its current text is kept as a version.")


def _activation(session, ledger: Ledger, version: Version, action: str, why: str,  # noqa: ANN001
                extra_detail: dict[str, Any] | None = None,
                decision_extra: dict[str, Any] | None = None,
                provenance: dict[str, Any] | None = None) -> Version:
    """Publish ``version`` (already stored, proposed): files, state changes, audit record."""
    _check_disk(session, ledger, version)
    active = ledger.active(version.article)
    files = _plan_files(session.ws, version, version.content)
    changes = []
    if active is not None:
        changes.append({"id": active.id, "state": "retired", "field": "retirement",
                        "decision": {**_decision(session, "retire", f"superseded by version {version.number}"),
                                     "superseded_by": version.id}})
    changes.append({"id": version.id, "state": "active", "field": "decision",
                    "decision": {**_decision(session, action, why), **(decision_extra or {})},
                    "provenance": provenance or None})
    _commit(session, f"governance.{action}", _shown(session.ws, version.article), files, changes,
            {"version": version.id, "retired": active.id if active else None, **(extra_detail or {})})
    return ledger.get(version.id)


# -- writes: the actions ---------------------------------------------------------------------------

def propose(session, node: str, article: str, content: str, *, case: str, source_request: str,  # noqa: ANN001
            profile: str, profile_version: str | None = None, sources: Iterable[str] = (),
            untrusted: bool = False, title: str | None = None, one_liner: str | None = None,
            new_node_owner: str | None = None, new_node_title: str | None = None,
                new_node_line: str | None = None, intake_key: str | None = None,
            client_id: str | None = None) -> Version:
    """File a proposal: a candidate version of ``node/article`` (seed 000 §2 rule 7).

    Anyone may propose into any node. The proposal is stored (state ``proposed``) and absent
    from the tree and from search; nothing under ``memory/`` is written.

    Args:
        node: the node folder relative to ``memory/`` (``support/experience``).
        article: the file name (``exp-013.md``) or a path inside the node.
        content: the complete text of the article.
        case, source_request: the proposing case and its source-request id (required).
        profile, profile_version: the authoring agent profile and its version.
        sources: URLs or paths the content was derived from.
        untrusted: the content derives from untrusted input (propagates to later versions).
        title, one_liner: the node index line (default: from the content's front matter).
        client_id: the request's id; a retry with the same id returns the version filed the
            first time instead of filing it twice (seed 004).
        new_node_owner: when ``node`` has no ``AGENTS.md`` yet, the owner of the new node
            (seed 000 §2 rule 4); ``new_node_title``/``new_node_line`` its parent index line.

    Returns:
        The stored :class:`Version`.

    Raises:
        ReadOnlyError: the session is read-only. GovernanceError: bad path, empty content,
        missing case or source request, or a new node without an owner.
    """
    ledger = _begin(session)
    earlier = session.audit.find(client_id) if client_id else None
    if earlier is not None and earlier.action == "governance.propose" and earlier.detail.get("version"):
        return ledger.get(earlier.detail["version"])  # a retry (seed 004): filed once already
    node = node.strip().strip("/")
    if node.startswith("memory/"):
        node = node[len("memory/"):]
    name = article.strip()
    path = normalise_article(name if "/" in name and name.startswith(node + "/") else f"{node}/{name}" if node else name)
    if not content.strip():
        raise GovernanceError("the proposed article is empty; nothing was filed.")
    if not case.strip() or not source_request.strip():
        raise GovernanceError("a proposal needs its case id and source-request id (provenance, seed 000 §7.4b).")
    if not profile.strip():
        raise GovernanceError("a proposal needs the authoring --profile.")
    new_node = None
    if not MemoryTree(session.ws).is_node(node_of(path)):
        if not new_node_owner:
            raise GovernanceError(
                f"{node_of(path) or 'the root'} is not a node (no AGENTS.md); a new node is created "
                "only with an owner (seed 000 §2 rule 4): give --new-node-owner PROFILE")
        new_node = {"owner": new_node_owner, "title": new_node_title or PurePosixPath(node).name,
                    "one_liner": new_node_line or ""}
    prov = {"kind": "proposal", "case": case.strip(), "source_request": source_request.strip(),
            "sources": [str(s) for s in ([sources] if isinstance(sources, str) else sources) if s],
            "human_reviewed": False, "untrusted": bool(untrusted)}
    data = _version_record(session.ws, ledger, path, content, author=profile.strip(),
                           profile_version=profile_version, provenance=prov, state="proposed",
                           title=title, one_liner=one_liner, new_node=new_node, intake_key=intake_key)
    version = _insert_version(session.store, data)
    session.audit.record("governance.propose", _shown(session.ws, path), None, version.sha256,
                         client_id=client_id, detail={"version": version.id, "case": case,
                                                      "untrusted": version.untrusted})
    return version


def use(session, version_id: str, *, case: str, source_request: str, verdict: str, check: str,  # noqa: ANN001
        origin: str = "independent", origin_of: str | None = None, hash: str | None = None) -> Use:
    """Record that ``case`` used ``version_id`` (seed 000 §7.4b MEMORY_USES), and pin it.

    Args:
        verdict: ``pass`` or ``contradiction``.
        check: the independent check performed against current evidence (required: mere
            retrieval is not a use).
        origin: ``independent``, ``mirror``, ``subcase`` or ``fork``; ``origin_of`` names the
            case it derives from (required unless independent).
        hash: the article hash the case saw (default: the version's).

    Returns:
        The stored :class:`Use`.

    Raises:
        GovernanceError: unknown version, bad verdict/origin, missing check or ids.
        ReadOnlyError: the session is read-only.
    """
    ledger = _begin(session)
    version = ledger.get(version_id)
    if verdict not in VERDICTS:
        raise GovernanceError(f"verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}.")
    if origin not in ORIGINS:
        raise GovernanceError(f"origin must be one of {', '.join(ORIGINS)}, not {origin!r}.")
    if origin != "independent" and not (origin_of or "").strip():
        raise GovernanceError(f"a {origin} must name the case it derives from (--origin-of CASE).")
    if not (check or "").strip():
        raise GovernanceError("a use needs the independent check performed (--check); mere retrieval "
                              "is not a use (seed 000 §7.4b).")
    if not case.strip() or not source_request.strip():
        raise GovernanceError("a use needs its case id and source-request id.")
    record = Use(version.id, hash or version.sha256, case.strip(), source_request.strip(), origin,
                 (origin_of or "").strip() or None, check.strip(), verdict, now(), session.profile)
    session.store.table(T_USES).insert(record.to_json())
    session.store.table(T_PINS).insert({"case": record.case, "version": version.id, "hash": record.hash,
                                        "time": record.time})
    session.audit.record("governance.use", _shown(session.ws, version.article), None, record.hash,
                         detail={"version": version.id, "case": record.case, "verdict": verdict,
                                 "origin": origin})
    return record


def pin(session, case: str, version_id: str) -> dict[str, Any]:  # noqa: ANN001 - Session
    """Record that ``case`` relied on ``version_id`` (seed 000 §7.4b version pinning)."""
    ledger = _begin(session)
    version = ledger.get(version_id)
    record = {"case": case, "version": version.id, "hash": version.sha256, "time": now()}
    session.store.table(T_PINS).insert(record)
    session.audit.record("governance.pin", _shown(session.ws, version.article), None, version.sha256,
                         detail={"version": version.id, "case": case})
    return record


def assign(session, version_id: str, cases: Iterable[str]) -> list[str]:  # noqa: ANN001
    """Assign validation cases to a proposal (seed 000 §7.4b); owner only.

    Returns:
        The cases newly assigned.

    Raises:
        RefusedError: not the owner. GovernanceError: not a proposal, no case, the proposing
        case itself, or a case assigned already.
    """
    ledger = _begin(session)
    version = ledger.get(version_id)
    require_owner(session, version.node, "assign validation cases")
    if version.state != "proposed":
        raise GovernanceError(f"{version.id} is {version.state}; validation cases are assigned to proposals.")
    wanted = [c.strip() for c in cases if c and c.strip()]
    if not wanted:
        raise GovernanceError("name at least one validation case.")
    have = {a["case"] for a in ledger.assignments(version.id)}
    for c in wanted:
        if c == version.provenance.get("case"):
            raise GovernanceError(f"{c} is the proposing case; a validation case must be another case.")
        if c in have or wanted.count(c) > 1:
            raise GovernanceError(f"{c} is already assigned to {version.id}.")
    for c in wanted:
        session.store.table(T_ASSIGN).insert({"version": version.id, "case": c, "by": session.profile,
                                              "time": now()})
    session.audit.record("governance.assign", _shown(session.ws, version.article), None, version.sha256,
                         detail={"version": version.id, "cases": wanted})
    return wanted


def approve(session, version_id: str, *, reviewed: bool = False, why: str = "",  # noqa: ANN001
            replace_newer: bool = False) -> Version:
    """Activate a proposal: the owner's write into the shared tree (seed 000 §2 rule 7).

    Args:
        reviewed: a human reviewed it (required unless :func:`eligibility` says eligible by
            uses); recorded as ``human_reviewed`` in the decision.
        why: the decision's note.
        replace_newer: activate it even though it was filed on an older version than the one
            active now, knowingly dropping the newer change; recorded in the decision as
            ``replaced_newer`` (the id of the version it replaces). Without it such an
            approval is refused (seed 000 §7.4b: a change is a new version based on the
            active one).

    Returns:
        The now active :class:`Version`; the previous active version is retired, the article
        and its node index line (and a new node's parent line) written in one change
        (module docstring), and ``governance.activate`` recorded.

    Raises:
        RefusedError: not the owner; neither eligible by uses nor reviewed; or filed on an
            older version than the active one (or on a version since retired) without
            ``replace_newer`` (``based on @1, but @2 is active now: file the change again on @2``).
        ConflictError: the article on disk differs from its active version.
        GovernanceError: not a proposal. ReadOnlyError: read-only session.
    """
    ledger = _begin(session)
    version = ledger.get(version_id)
    require_owner(session, version.node, "activate")
    if version.state != "proposed":
        raise GovernanceError(f"{version.id} is {version.state}, not a proposal; decided records are never edited.")
    _check_disk(session, ledger, version)  # an edit on disk is the first thing to settle
    active = ledger.active(version.article)
    stale = stale_base(ledger, version)
    if stale and not replace_newer:
        raise RefusedError(f"{version.id} is {stale}; approving it would silently undo that change "
                           "(or pass --replace-newer to replace it knowingly)")
    verdict = eligibility(ledger, version)
    if not verdict.by_uses and not reviewed:
        raise RefusedError(f"{version.id} is not eligible by uses ({'; '.join(verdict.reasons)}); only "
                           "human review promotes it: review the diff and approve as reviewed")
    how = "uses" if verdict.by_uses and not reviewed else "human review"
    note = why or f"promoted by {how}"
    if reviewed and why:
        note += " (human reviewed)"
    extra: dict[str, Any] = {}
    if stale:
        replaced = active.id if active else f"{version.article} (retired)"
        note += f"; replaces the newer {replaced} (it was based on @{version.based_on}, --replace-newer)"
        extra["replaced_newer"] = replaced
    return _activation(session, ledger, version, "activate", note,
                       {"promoted_by": how, "human_reviewed": bool(reviewed),
                        "uses": [u.case for u in verdict.counted], **extra},
                       decision_extra={**extra, "human_reviewed": bool(reviewed)},
                       provenance={"human_reviewed": True} if reviewed else None)


def retired_how(version: Version) -> str | None:
    """How a retired version was retired, from its own record (no record is edited for it).

    Returns ``"retired_by: activation of @N"`` when a newer version's activation (or adopted
    external edit) replaced it, ``"retired: by <profile>"`` when its owner retired it
    explicitly, ``None`` when it is not retired. Records written before ``superseded_by``
    existed are read from the retirement's sentence (``superseded by version N``).
    """
    if version.state != "retired":
        return None
    r = version.retirement or {}
    number = None
    if r.get("superseded_by"):
        number = str(r["superseded_by"]).rsplit("@", 1)[-1]
    else:
        why = str(r.get("why") or "")
        for prefix in ("superseded by version ", "superseded by external edit, version "):
            if why.startswith(prefix) and why[len(prefix):].isdigit():
                number = why[len(prefix):]
    if number is not None:
        return f"retired_by: activation of @{number}"
    return f"retired: by {r.get('by') or 'unknown'}"


def stale_base(ledger: Ledger, version: Version) -> str | None:
    """Why ``version`` (a proposal) is built on an outdated base, or ``None`` when its base is
    the version active now (seed 000 §7.4b: a change is a new version based on the active one).

    Returns a sentence such as ``"based on @1, but @2 is active now: file the change again
    on @2"``; a proposal for a new article (no base) is never stale while nothing is active.
    """
    active = ledger.active(version.article)
    if active is not None and version.based_on != active.number:
        base = f"@{version.based_on}" if version.based_on else "no version"
        return (f"based on {base}, but @{active.number} is active now: file the change again "
                f"on @{active.number}")
    if active is None and version.based_on is not None:
        return (f"based on @{version.based_on}, but that version was retired and nothing is active "
                "now: file the change again as a new article")
    return None


def reject(session, version_id: str, reason: str) -> Version:  # noqa: ANN001 - Session
    """Reject a proposal with a reason (required); owner only. The record stays, decided."""
    ledger = _begin(session)
    version = ledger.get(version_id)
    require_owner(session, version.node, "reject proposals")
    if not (reason or "").strip():
        raise GovernanceError("rejecting needs a reason; nothing was recorded.")
    if version.state != "proposed":
        raise GovernanceError(f"{version.id} is {version.state}, not a proposal; decided records are never edited.")
    _transition(session.store, version, "rejected", "decision", _decision(session, "reject", reason.strip()))
    session.audit.record("governance.reject", _shown(session.ws, version.article), None, version.sha256,
                         detail={"version": version.id, "reason": reason.strip()})
    return ledger.get(version.id)


def retire(session, article: str, reason: str = "") -> Version:  # noqa: ANN001 - Session
    """Retire the active version of ``article``: its file and index line leave the tree; the
    record stays (seed 000 §7.4b). Owner only.

    Raises:
        RefusedError: not the owner. GovernanceError: nothing active.
        ConflictError: the file differs from the active version (adopt or revert first).
    """
    ledger = _begin(session)
    article = normalise_article(article)
    active = ledger.active(article)
    if active is None:
        raise GovernanceError(f"{article} has no active version to retire.")
    require_owner(session, active.node, "retire articles")
    if _sha(_read(_mem_path(session.ws, article))) not in (active.sha256, None):
        raise ConflictError(f"{_shown(session.ws, article)} differs from its active version "
                            f"{active.number}; adopt or revert the unrecorded edit first.")
    files = _plan_files(session.ws, active, None)
    changes = [{"id": active.id, "state": "retired", "field": "retirement",
                "decision": _decision(session, "retire", reason or "retired")}]
    _commit(session, "governance.retire", _shown(session.ws, article), files, changes,
            {"version": active.id, "reason": reason})
    return ledger.get(active.id)


def rollback(session, article: str, to: int, reason: str = "") -> Version:  # noqa: ANN001
    """Publish a new version holding version ``to``'s content (seed 000 §7.4b); owner only.

    ``to`` must have been accepted once (active or retired, not a proposal or a rejection).
    The new version's provenance names the rollback (``kind: rollback``, ``rollback_of``) and
    keeps ``to``'s untrusted mark; nothing earlier is edited.

    Raises:
        RefusedError: not the owner. GovernanceError: no such accepted version, or it is the
        active content already. ConflictError: unrecorded edit on disk.
    """
    ledger = _begin(session)
    article = normalise_article(article)
    target = next((v for v in ledger.versions(article) if v.number == to), None)
    if target is None or target.decision is None or target.state not in ("active", "retired"):
        raise GovernanceError(f"{article} has no accepted version {to} to roll back to; "
                              f"`memtui versions {article}` lists them.")
    require_owner(session, target.node, "roll back")
    active = ledger.active(article)
    if active is not None and active.sha256 == target.sha256:
        raise GovernanceError(f"version {active.number} already holds the content of version {to}.")
    prov = {"kind": "rollback", "rollback_of": to, "case": None, "source_request": None,
            "sources": list(target.provenance.get("sources") or []),
            "human_reviewed": True, "untrusted": target.untrusted}
    data = _version_record(session.ws, ledger, article, target.content, author=session.profile,
                           profile_version=None, provenance=prov, state="proposed",
                           title=target.title, one_liner=target.one_liner)
    data["provenance"]["untrusted"] = target.untrusted  # the restored content's own chain
    version = _insert_version(session.store, data)
    return _activation(session, ledger, version, "rollback", reason or f"rollback to version {to}",
                       {"rollback_of": to})


def untracked(ws: Workspace, store: Store, under: str | None = None) -> list[str]:
    """Articles in the tree (memory-relative) with no accepted version (active or retired),
    under ``under`` (a node folder, memory-relative); an article with only proposals counts."""
    tracked = {a for a, vs in Ledger(store).tracked().items() if any(v.state in ("active", "retired") for v in vs)}
    tree = MemoryTree(ws)
    out = []
    prefix = (under or "").strip("/")
    for node in tree.walk_nodes():
        if prefix and not (node == prefix or node.startswith(prefix + "/") or prefix.startswith(node)):
            continue
        for path in tree.article_files(node):
            if path in tracked:
                continue
            if prefix and not (path == prefix or path.startswith(prefix + "/")):
                continue
            out.append(path)
    return out


def adopt(session, path: str | None = None, reason: str = "") -> list[Version]:  # noqa: ANN001
    """Record articles explicitly (never done by opening a workspace).

    An untracked article becomes version 1 (``active``, provenance ``baseline``); anyone may
    adopt a baseline, since it publishes nothing new. An article with an unrecorded edit
    becomes a new active version (provenance ``external edit``, untrusted when the chain is);
    that is an activation, so only the owner may do it. ``path`` is an article or a node
    folder (memory-relative); ``None`` means the whole tree.

    Returns:
        The versions recorded (empty when nothing needed adopting).

    Raises:
        RefusedError: an external edit in a node the acting profile does not own.
        GovernanceError: ``path`` is neither an article nor a folder of the tree.
    """
    ledger = _begin(session)
    ws = session.ws
    target = (path or "").strip().strip("/")
    if target.startswith("memory/"):
        target = target[len("memory/"):]
    if target.endswith(".md"):
        target = normalise_article(target)
        if not _mem_path(ws, target).is_file():
            raise GovernanceError(f"{_shown(ws, target)} is not a file of the tree.")
        candidates = [target]
    else:
        if target and not _mem_path(ws, target).is_dir():
            raise GovernanceError(f"{target!r} is neither an article nor a folder of the memory tree.")
        candidates = untracked(ws, session.store, target or None)
        candidates += [a for a, vs in ledger.tracked().items()
                       if (not target or a.startswith(target + "/")) and _edited(ws, ledger, a)]
    out: list[Version] = []
    for article in candidates:
        data = _read(_mem_path(ws, article))
        if data is None:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        active = ledger.active(article)
        if active is None:
            record = _version_record(ws, ledger, article, text, author=session.profile, profile_version=None,
                                     provenance={"kind": "baseline", "human_reviewed": False},
                                     state="active", decision=_decision(session, "adopt", reason or "baseline"))
            version = _insert_version(session.store, record)
            session.audit.record("governance.adopt", _shown(ws, article), None, version.sha256,
                                 detail={"version": version.id, "provenance": "baseline"})
            out.append(version)
        elif active.sha256 != atomic.sha256(data):
            require_owner(session, active.node, "adopt an external edit")
            record = _version_record(ws, ledger, article, text, author=session.profile, profile_version=None,
                                     provenance={"kind": "external edit", "human_reviewed": False},
                                     state="proposed")
            version = _insert_version(session.store, record)
            # the file already holds the bytes: the activation writes only the index line if needed
            _adopt_activation(session, ledger, version, active, data, reason)
            out.append(ledger.get(version.id))
    return out


def _adopt_activation(session, ledger: Ledger, version: Version, active: Version,  # noqa: ANN001
                      data: bytes, reason: str) -> None:
    files = [f for f in _plan_files(session.ws, version, version.content)]
    changes = [{"id": active.id, "state": "retired", "field": "retirement",
                "decision": {**_decision(session, "retire", f"superseded by external edit, version {version.number}"),
                             "superseded_by": version.id}},
               {"id": version.id, "state": "active", "field": "decision",
                "decision": _decision(session, "adopt", reason or "external edit")}]
    files[0]["old"] = _sha(data)
    _commit(session, "governance.adopt", _shown(session.ws, version.article), files, changes,
            {"version": version.id, "provenance": "external edit", "retired": active.id})


def _edited(ws: Workspace, ledger: Ledger, article: str) -> bool:
    active = ledger.active(article)
    if active is None:
        return False
    data = _read(_mem_path(ws, article))
    return data is not None and atomic.sha256(data) != active.sha256


def revert(session, article: str) -> Version:  # noqa: ANN001 - Session
    """Put the active version's bytes back over an unrecorded edit (owner only).

    Raises:
        RefusedError: not the owner. GovernanceError: no active version or nothing to revert.
    """
    ledger = _begin(session)
    article = normalise_article(article)
    active = ledger.active(article)
    if active is None:
        raise GovernanceError(f"{article} has no active version to revert to.")
    require_owner(session, active.node, "revert articles")
    path = _mem_path(session.ws, article)
    current = _sha(_read(path))
    if current == active.sha256:
        raise GovernanceError(f"{_shown(session.ws, article)} already holds its active version {active.number}.")
    files = [{"path": _shown(session.ws, article), "old": current, "new": active.content}]
    _commit(session, "governance.revert", _shown(session.ws, article), files, [],
            {"version": active.id})
    return active


def ingest(session, folder: str = INBOX) -> tuple[list[Version], list[Finding]]:  # noqa: ANN001
    """File every ``*.md`` in the inbox as a proposal, then remove the file.

    An inbox file's front matter carries the :func:`propose` fields (``node``, ``article``,
    ``case``, ``source_request``, ``profile``, ``profile_version``, ``sources``,
    ``untrusted``, ``new_node_owner``…: :data:`INBOX_FIELDS`); the article stored is the file
    minus those governance keys (:func:`article_from_inbox`), so ``title``, ``summary``,
    ``tags`` and other article metadata stay in its front matter.
    Interrupt-safe: a file is removed only after its proposal is stored, and a proposal
    stored from the same bytes (its ``intake_key``) is not stored twice, so an ingest cut
    short loses nothing and doubles nothing.

    Returns:
        ``(proposals stored now, findings for files left in the inbox)``.
    """
    ledger = _begin(session)
    ws = session.ws
    try:
        inbox = confine(ws.root, folder)
    except ConfinementError as exc:
        raise GovernanceError(str(exc)) from exc
    if not inbox.is_dir():
        return [], []
    stored: list[Version] = []
    findings: list[Finding] = []
    known = {v.intake_key for v in ledger.versions() if v.intake_key}
    for file in sorted(inbox.glob("*.md")):
        shown = ws.shown(file)
        data = file.read_bytes()
        key = atomic.sha256(file.name.encode("utf-8") + b"\0" + data)
        if key in known:
            file.unlink()
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            findings.append(Finding.make("proposal-inbox-invalid", shown, "is not UTF-8 text", "re-save it as UTF-8"))
            continue
        fm = frontmatter.split(text)
        meta = fm.meta if isinstance(fm.meta, dict) else {}
        missing = [k for k in ("node", "article", "case", "source_request", "profile") if not meta.get(k)]
        if fm.error or missing:
            findings.append(Finding.make(
                "proposal-inbox-invalid", shown,
                fm.error or f"the front matter misses {', '.join(missing)}",
                "give node, article, case, source_request and profile in the front matter"))
            continue
        sources = meta.get("sources") or []
        try:
            version = propose(
                session, str(meta["node"]), str(meta["article"]), article_from_inbox(fm),
                case=str(meta["case"]), source_request=str(meta["source_request"]),
                profile=str(meta["profile"]), profile_version=_opt(meta.get("profile_version")),
                sources=[str(s) for s in (sources if isinstance(sources, list) else [sources])],
                untrusted=bool(meta.get("untrusted")), title=_opt(meta.get("title")),
                one_liner=_opt(meta.get("summary")), new_node_owner=_opt(meta.get("new_node_owner")),
                intake_key=key)
        except GovernanceError as exc:
            findings.append(Finding.make("proposal-inbox-invalid", shown, str(exc), "fix the file and ingest again"))
            continue
        stored.append(version)
        known.add(key)
        file.unlink()  # only now: the proposal is stored
    return stored, findings


#: Inbox front-matter keys that are governance (provenance, routing), not article metadata;
#: :func:`ingest` removes them from the stored article and keeps every other key.
INBOX_FIELDS = ("node", "article", "case", "source_request", "profile", "profile_version", "sources",
                "untrusted", "new_node_owner", "new_node_title", "new_node_line", "client_id")


def article_from_inbox(fm: frontmatter.FrontMatter) -> str:
    """The article text of an inbox file: its front matter without the :data:`INBOX_FIELDS`
    keys (and their indented or list continuation lines), every other key kept as written
    (``title``, ``summary``, ``tags``…), then the body. No front matter is left when only
    governance keys were given. Line ends follow the file (CRLF kept)."""
    kept: list[str] = []
    dropping = False
    for line in fm.raw.splitlines(keepends=True):
        top = line[:1] not in (" ", "\t", "-", "#", "\n", "") or line.startswith("---")
        if top:
            key = line.split(":", 1)[0].strip().strip("'\"")
            dropping = key in INBOX_FIELDS
        if not dropping:
            kept.append(line)
    block = "".join(kept)
    body = fm.body.lstrip("\r\n") if not block.strip() else fm.body
    if not block.strip():
        return body
    if not block.endswith("\n"):
        block += "\n"
    eol = "\r\n" if fm.crlf else "\n"
    block = block.replace("\n", eol)
    return f"---{eol}{block}---{eol}{body}"


def _opt(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


# -- views ------------------------------------------------------------------------------------------

def diff(old: str, new: str, old_label: str, new_label: str) -> str:
    """A unified diff (``difflib``) of two article texts; ``""`` when equal."""
    a = old.replace("\r\n", "\n").splitlines(keepends=True)
    b = new.replace("\r\n", "\n").splitlines(keepends=True)
    return "".join(ln if ln.endswith("\n") else ln + "\n" for ln in difflib.unified_diff(a, b, old_label, new_label))


def side_by_side(old: str, new: str) -> list[tuple[str, str, str]]:
    """Aligned rows ``(tag, left, right)`` for a two-column diff; tag is ``equal``,
    ``replace``, ``delete`` or ``insert`` (from ``difflib.SequenceMatcher``)."""
    a = old.replace("\r\n", "\n").splitlines()
    b = new.replace("\r\n", "\n").splitlines()
    rows: list[tuple[str, str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        left, right = a[i1:i2], b[j1:j2]
        for k in range(max(len(left), len(right))):
            rows.append((tag, left[k] if k < len(left) else "", right[k] if k < len(right) else ""))
    return rows


def entry_states(ws: Workspace, node: str, store: Store | None = None) -> dict[str, tuple[str, int | None]]:
    """State and version of the articles of ``node`` for the tree view.

    Returns:
        ``{memory-relative article path: (state, active version number or None)}`` for every
        article with a record: ``active``, ``edited`` (unrecorded edit), ``retired`` or
        ``proposed`` (only proposals, nothing published yet). Articles absent from the result
        are untracked.
    """
    own = store is None
    store = store or Store.open(ws, read_only=True)
    try:
        out: dict[str, tuple[str, int | None]] = {}
        ledger = Ledger(store)
        prefix = f"{node}/" if node else ""
        for article, versions in ledger.tracked().items():
            if not article.startswith(prefix) or "/" in article[len(prefix):]:
                continue
            active = next((v for v in versions if v.state == "active"), None)
            if active is not None:
                state = "edited" if _edited(ws, ledger, article) else "active"
                out[article] = (state, active.number)
            elif any(v.state == "retired" for v in versions):
                out[article] = ("retired", None)
            elif any(v.state == "proposed" for v in versions):
                out[article] = ("proposed", None)
        return out
    finally:
        if own:
            store.close()


def audit_findings(ws: Workspace) -> list[Finding]:
    """``unrecorded-edit``, ``active-missing``, ``untracked`` and ``governance-pending``
    findings (contributed to :data:`memtui.core.audit.CHECKS`). Reads the store read-only.

    ``untracked`` is one info finding per node that has untracked articles (one line per
    node, not one per article), and only once the workspace is governed (the store holds a
    version): a tree that never used governance is not flagged everywhere.
    """
    store = Store.open(ws, read_only=True)
    try:
        if store.damaged:
            return []
        ledger = Ledger(store)
        findings: list[Finding] = []
        for article, versions in ledger.tracked().items():
            active = next((v for v in versions if v.state == "active"), None)
            if active is None:
                continue
            try:
                data = _read(_mem_path(ws, article))
            except ConfinementError:
                continue
            shown = _shown(ws, article)
            if data is None:
                findings.append(Finding.make(
                    "active-missing", shown, f"version {active.number} is active but the file is missing",
                    f"the owner puts it back (`memtui adopt --revert {article}`) or retires it "
                    f"(`memtui retire {article}`)"))
            elif atomic.sha256(data) != active.sha256:
                findings.append(Finding.make(
                    "unrecorded-edit", shown,
                    f"differs from its active version {active.number} (edited outside governance)",
                    f"the owner adopts it (`memtui adopt {article}`) or reverts it (`memtui adopt --revert {article}`)"))
        by_node: dict[str, list[str]] = {}
        for article in (untracked(ws, store) if ledger.tracked() else []):
            by_node.setdefault(node_of(article), []).append(PurePosixPath(article).name)
        for node, names in by_node.items():
            shown = _shown(ws, f"{node}/{NODE_INDEX}" if node else NODE_INDEX)
            listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            findings.append(Finding.make(
                "untracked", shown, f"{len(names)} article{'s' if len(names) != 1 else ''} not recorded "
                f"as versions: {listed}", f"adopt them as a baseline: `memtui adopt {node}`".rstrip()))
        if ledger.intents():
            findings.append(Finding.make("governance-pending", ".memtui/store.json",
                                         "a governance change was interrupted and is not complete yet",
                                         "open the workspace with memtui (it completes the change)"))
        return findings
    finally:
        store.close()


def touched_paths(ws: Workspace, article: str) -> list[str]:
    """Workspace-relative files an action on ``article`` may have written: the article, its
    node index and the parent node's index (for :func:`refresh_search`)."""
    tree = MemoryTree(ws)
    node = node_of(article)
    out = [_shown(ws, article), _shown(ws, f"{node}/{NODE_INDEX}" if node else NODE_INDEX)]
    parent = tree.parent_node(node) if node else None
    if parent is not None:
        out.append(_shown(ws, f"{parent}/{NODE_INDEX}" if parent else NODE_INDEX))
    return out


def refresh_search(ws: Workspace, paths: list[str]) -> str | None:
    """Make saved files searchable (``SearchIndex.update(only=paths)``) when a search index
    exists; the index is derived data, so a failure is returned as a sentence, not raised."""
    from memtui.core.search.index import SearchIndex

    index = SearchIndex(ws)
    if not index.exists():
        return None
    try:
        index.update(only=paths)
    except MemtuiError as exc:
        return f"the search index was not updated ({exc}); run `memtui index`"
    return None
