"""Governed knowledge: versions, uses and the ledger that reads them (seed 000 §7.4b).

An article's **versions** are immutable records in the store (``versions`` table): id
``<article>@<number>``, state (``proposed``, ``active``, ``retired``, ``rejected``), content
and its hash, provenance, and the decision that moved it. **Uses** record that a case relied
on a version with an independent check and a verdict; **pins** that a case relied on it.

The :class:`Ledger` reads them through indexes (versions by article and by id, the active
version of each article, uses and assignments by version, contests by article) built in one
pass over a table and kept with the store's parse (:meth:`memtui.core.store.Store.derived`):
a page of proposals with their eligibility costs one parse and a few look-ups a row, not a
scan of every version a row (which made a 10,000-proposal page quadratic).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from collections.abc import Iterator, Sequence
from typing import Any, overload

from tinydb import Query

from memtui.core import atomic, frontmatter
from memtui.core.errors import MemtuiError
from memtui.core.evalsets import EVAL_REL, is_set_path, node_of_set
from memtui.core import errors
from memtui.core.files import confine
from memtui.core.store import Store
from memtui.core.workspace import NODE_INDEX, SPECIAL_FILES, Workspace


STATES = ("proposed", "active", "retired", "rejected")


VERDICTS = ("pass", "contradiction")


ORIGINS = ("independent", "mirror", "subcase", "fork")


T_VERSIONS, T_USES, T_PINS, T_ASSIGN = "versions", "uses", "pins", "assignments"

#: Contest marks (seed 000 §4 step 5: contradictions are marked, never silently deleted) and
#: re-verification checks (seed 000 §7.3: "re-verify before relying").
T_CONTESTS, T_CHECKS = "contests", "checks"

#: The marks :meth:`Ledger.marks` can give, in the order they are shown.
MARKS = ("untrusted", "contested")


class GovernanceError(MemtuiError):
    """A governance request cannot be done as given (unknown version, bad state, bad input)."""


class RefusedError(GovernanceError, errors.RefusedError):
    """The acting profile may not do this (not the owner, no profile, no owner, no review).

    ``str(exc)`` says why, naming the owner and the acting profile.
    """


class NeedsReview(RefusedError):
    """A proposal is not eligible by uses and was not approved as reviewed (seed 000 §7.4b:
    only human review, or two independent passing uses, promotes it). Each face names its own
    way to approve as reviewed (the CLI's ``--reviewed``, the Proposals area's question)."""


def now() -> str:
    """The current time, ISO 8601 UTC with seconds (``2026-09-02T10:00:00+00:00``)."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


@dataclass(frozen=True, slots=True)
class Version:
    """A read-only view of one ``versions`` record (see the module docstring for fields).

    Frozen: the ledger shares one view of a record between its readers."""

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
    #: a merge proposal (seed 000 §4 step 5): ``{"retire": article, "retire_version": id}``;
    #: activating it retires that article and leaves a redirect line in its node index
    merge: dict[str, Any] | None = None
    #: what the proposal is and why (optional): ``{"class": one of
    #: :data:`memtui.core.classify.CLASSES`, "reason": text}`` (seed 000 §4 step 2, §7.1 pass 2)
    classification: dict[str, Any] | None = None
    doc_id: int = 0

    @classmethod
    def from_doc(cls, doc: Any, doc_id: int | None = None) -> "Version":
        """The view of ``doc`` (a TinyDB document, or a raw record with its ``doc_id``)."""
        data = {k: doc.get(k) for k in _VERSION_FIELDS}
        data["provenance"] = dict(data.get("provenance") or {})
        return cls(**data, doc_id=int(getattr(doc, "doc_id", 0) if doc_id is None else doc_id))

    @property
    def untrusted(self) -> bool:
        """The provenance chain reaches untrusted content (seed 000 §7.4b)."""
        return bool(self.provenance.get("untrusted"))

    def to_json(self, content: bool = True) -> dict[str, Any]:
        """The record as a JSON-ready dict (``content`` left out when ``content=False``)."""
        data = {k: getattr(self, k) for k in self.__slots__ if k != "doc_id"}
        if not content:
            data.pop("content")
        return data


_VERSION_FIELDS = tuple(k for k in Version.__slots__ if k != "doc_id")


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
    #: what the case did with the platform (seed 000 §5): ``executed`` a write, only
    #: ``proposed`` one (SQL, an owner report), or ``none``/``None`` (not recorded)
    execution: str | None = None

    @classmethod
    def from_doc(cls, doc: Any) -> "Use":
        return cls(**{k: doc.get(k) for k in cls.__slots__})

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(slots=True)
class Contest:
    """A ``contests`` record: an active version marked **contested** (DESIGN.md §1).

    Attributes:
        id: ``<version id>#<n>``.
        article, version, hash: what is contested (the mark belongs to that version: a new
            version of the article is not contested by it).
        reason: why, in the contester's words.
        case: the contradicting case, or ``None``.
        against: the contradicting article (memory-relative), or ``None``.
        source: ``owner`` (marked by hand), ``use`` (a use's contradiction verdict) or
            ``check`` (a re-verification's contradiction verdict).
        by, time: who marked it and when (ISO 8601 UTC).
        resolution: ``None`` while open; ``{"by", "at", "why"}`` once resolved.
    """

    id: str
    article: str
    version: str
    hash: str
    reason: str
    case: str | None
    against: str | None
    source: str
    by: str | None
    time: str
    resolution: dict[str, Any] | None = None

    @classmethod
    def from_doc(cls, doc: Any) -> "Contest":
        return cls(**{k: doc.get(k) for k in cls.__slots__})

    @property
    def open(self) -> bool:
        """True until a resolution is recorded."""
        return self.resolution is None

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(slots=True)
class Check:
    """A ``checks`` record: a case re-verified an active version against the running system
    (seed 000 §7.3), recorded like a use, with its verdict.

    Attributes:
        article, version, hash: what was checked.
        case, source_request: the checking case and its source-request id.
        verdict: ``pass`` or ``contradiction`` (a contradiction also contests the version).
        check: the check performed.
        environment, observed_version: what the check ran against (``observed_version``
            replaces the front matter's for staleness once the check passes).
        time, by: when (ISO 8601 UTC) and by whom.
    """

    article: str
    version: str
    hash: str
    case: str
    source_request: str
    verdict: str
    check: str
    environment: str | None
    observed_version: str | None
    time: str
    by: str | None

    @classmethod
    def from_doc(cls, doc: Any) -> "Check":
        return cls(**{k: doc.get(k) for k in cls.__slots__})

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


def contest_record(table: Any, version: "Version", *, reason: str, case: str | None, against: str | None,
                   source: str, by: str | None) -> Contest:
    """Insert a contest of ``version`` into the ``contests`` ``table`` (inside a guarded write)
    and return it; its id is ``<version id>#<n>``, n counting that version's contests."""
    n = len(table.search(Query().version == version.id)) + 1
    record = Contest(f"{version.id}#{n}", version.article, version.id, version.sha256, reason.strip(),
                     (case or "").strip() or None, (against or "").strip() or None, source, by, now())
    table.insert(record.to_json())
    return record


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
    """Reads of the governance tables of one store (no writes; safe on a read-only store).

    Every read goes through the store's current parse and the indexes kept with it
    (module docstring), so it sees another process's write at once. Returned lists are the
    caller's own; the :class:`Version` records in them are shared and frozen.
    """

    def __init__(self, store: Store):
        self.store = store

    def _versions(self) -> "_VersionIndex":
        return self.store.derived("ledger.versions", _VersionIndex)

    def _by_version(self, table: str) -> dict[str, list[tuple[int, dict[str, Any]]]]:
        return self.store.derived(f"ledger.by-version.{table}", lambda tables: _group(tables, table, "version"))

    def _by_article(self, table: str) -> dict[str, list[tuple[int, dict[str, Any]]]]:
        return self.store.derived(f"ledger.by-article.{table}", lambda tables: _group(tables, table, "article"))

    def versions(self, article: str | None = None) -> list[Version]:
        """Versions of ``article`` (all articles when ``None``), by article then number."""
        index = self._versions()
        return list(index.of(index.by_article.get(article, []) if article else index.ordered))

    def get(self, version_id: str) -> Version:
        """The version ``version_id`` (``article@N``).

        Raises:
            GovernanceError: no such version.
        """
        index = self._versions()
        found = index.by_id.get(version_id)
        if found is None:
            raise GovernanceError(f"there is no version {version_id!r}; `memtui proposals list` and "
                                  "`memtui versions ARTICLE` show the ids (article@number).")
        return index.version(found)

    def active(self, article: str) -> Version | None:
        """The active version of ``article``, or ``None``."""
        index = self._versions()
        found = index.active.get(article)
        return None if found is None else index.version(found)

    def marks(self, article: str) -> tuple[str, ...]:
        """The marks every consumer of ``article``'s knowledge shows beside it (search hits,
        Tree rows, the boot preview, ``--json``): ``"untrusted"`` when the active version's
        provenance chain reaches untrusted content (seed 000 §7.4b: "marked as such and stays
        marked"); ``"contested"`` while a contest of the active version is open (seed 000 §4
        step 5: it stays active, marked, until a new version or a resolution). The one place
        that decides them, so every consumer shows the same marks.

        Args:
            article: memory-relative path (``support/lockout.md``).

        Returns:
            The marks, in a fixed order; ``()`` for an untracked article or one with no
            active version.
        """
        active = self.active(article)
        if active is None:
            return ()
        return _marks(active, {c.version for c in self.contests(article) if c.open})

    def marks_at(self, ws: Workspace, shown: str) -> tuple[str, ...]:
        """:meth:`marks` of the article at the workspace-relative path ``shown`` (a search hit's
        ``path`` or ``target``); ``()`` for anything that is not an article of the tree."""
        prefix = f"{ws.memory_rel}/" if ws.memory_rel else ""
        if not shown.endswith(".md") or (prefix and not shown.startswith(prefix)):
            return ()
        return self.marks(shown[len(prefix):])

    def all_marks(self) -> dict[str, tuple[str, ...]]:
        """:meth:`marks` of every article that has any, in one read of the store (for a
        consumer showing many articles at once: the consolidation pass, a search page)."""
        contested = {c.version for c in self.contests() if c.open}
        out: dict[str, tuple[str, ...]] = {}
        index = self._versions()
        for version in index.of(index.active_in_order):
            found = _marks(version, contested)
            if found:
                out[version.article] = found
        return out

    def contests(self, article: str | None = None) -> list[Contest]:
        """Contest records of ``article`` (all when ``None``), oldest first."""
        docs = (self._by_article(T_CONTESTS).get(article, []) if article
                else _rows(self.store, T_CONTESTS))
        return sorted((Contest.from_doc(d) for _, d in docs), key=lambda c: (c.time, c.id))

    def open_contests(self, article: str) -> list[Contest]:
        """The open contests of ``article``'s active version (what makes it contested)."""
        active = self.active(article)
        if active is None:
            return []
        return [c for c in self.contests(article) if c.open and c.version == active.id]

    def checks(self, article: str | None = None) -> list[Check]:
        """Re-verification checks of ``article`` (all when ``None``), oldest first."""
        docs = self._by_article(T_CHECKS).get(article, []) if article else _rows(self.store, T_CHECKS)
        return sorted((Check.from_doc(d) for _, d in docs), key=lambda c: c.time)

    def proposals(self, state: str | None = "proposed") -> list[Version]:
        """Versions filed as proposals, in ``state`` (any when ``None``), oldest first."""
        return list(self.queue(state))

    def queue(self, state: str | None = "proposed") -> Versions:
        """:meth:`proposals` as a :class:`Versions`: a page of it (``Page.of``, a slice)
        makes only that page's views, for lists shown a page at a time."""
        index = self._versions()
        ids = index.proposals if state is None else [i for i in index.proposals if index.docs[i].get("state") == state]
        return index.of(ids)

    def uses(self, version_id: str) -> list[Use]:
        """Uses recorded for ``version_id``, oldest first."""
        return [Use.from_doc(d) for _, d in self._by_version(T_USES).get(version_id, [])]

    def assignments(self, version_id: str) -> list[dict[str, Any]]:
        """Validation cases assigned to ``version_id``: ``[{"case", "by", "time"}]``."""
        return [dict(d) for _, d in self._by_version(T_ASSIGN).get(version_id, [])]

    def pins(self, case: str | None = None) -> list[dict[str, Any]]:
        """Pins (``{"case", "version", "hash", "time"}``), of ``case`` when given."""
        return [dict(d) for _, d in _rows(self.store, T_PINS) if case is None or d.get("case") == case]

    def tracked(self) -> dict[str, list[Version]]:
        """``{article: [versions]}`` for every article with a record."""
        index = self._versions()
        return {article: list(index.of(ids)) for article, ids in index.by_article.items()}


class Versions(Sequence["Version"]):
    """Versions in a fixed order, each made into a :class:`Version` only when it is read: a
    page of a 10,000-proposal queue makes 100 views, not 10,000 (``len``, indexing, slicing
    and iterating work as on a list; a slice is a list)."""

    def __init__(self, index: "_VersionIndex", ids: list[int]) -> None:
        self._index = index
        self._ids = ids

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, at: int) -> "Version": ...

    @overload
    def __getitem__(self, at: slice) -> list["Version"]: ...

    def __getitem__(self, at: int | slice) -> "Version | list[Version]":
        if isinstance(at, slice):
            return [self._index.version(i) for i in self._ids[at]]
        return self._index.version(self._ids[at])

    def __iter__(self) -> Iterator["Version"]:
        return (self._index.version(i) for i in self._ids)

    def position(self, version_id: str) -> int | None:
        """Where the version ``version_id`` is in this order, or ``None`` (no view is made)."""
        docs = self._index.docs
        return next((n for n, i in enumerate(self._ids) if docs[i].get("id") == version_id), None)


class _VersionIndex:
    """The ``versions`` table read once: every look-up of :class:`Ledger` in one place, by
    document id; a :class:`Version` view is made on first use and kept.

    Attributes:
        docs: ``{document id: record}``.
        ordered: every document id, by article then number.
        by_article: ``{article: its document ids by number}`` (articles in ``ordered``'s order).
        by_id: ``{version id: document id}`` (the first record of an id, as a search finds it).
        active: ``{article: the document id of its active version}`` (the first, likewise).
        active_in_order: the active versions' document ids in table order.
        proposals: the document ids of versions filed as proposals, oldest first (created,
            then id).
    """

    def __init__(self, tables: dict[str, dict[str, Any]]) -> None:
        docs = {int(doc_id): doc for doc_id, doc in tables.get(T_VERSIONS, {}).items()}
        self.docs = docs
        self._made: dict[int, Version] = {}
        self.ordered = sorted(docs, key=lambda i: (docs[i].get("article"), docs[i].get("number")))
        self.by_article: dict[str, list[int]] = {}
        for i in self.ordered:
            self.by_article.setdefault(docs[i].get("article"), []).append(i)
        self.by_id: dict[str, int] = {}
        self.active: dict[str, int] = {}
        self.active_in_order: list[int] = []
        for i, doc in docs.items():
            self.by_id.setdefault(doc.get("id"), i)
            if doc.get("state") == "active":
                self.active.setdefault(doc.get("article"), i)
                self.active_in_order.append(i)
        self.proposals = sorted((i for i in self.ordered if (docs[i].get("provenance") or {}).get("kind") == "proposal"),
                                key=lambda i: (docs[i].get("created"), docs[i].get("id")))

    def version(self, doc_id: int) -> Version:
        made = self._made.get(doc_id)
        if made is None:
            made = self._made[doc_id] = Version.from_doc(self.docs[doc_id], doc_id)
        return made

    def of(self, ids: list[int]) -> Versions:
        return Versions(self, ids)


def _rows(store: Store, table: str) -> list[tuple[int, dict[str, Any]]]:
    """``(document id, record)`` of every record of ``table``, in table order."""
    return store.derived(f"ledger.rows.{table}", lambda tables: [
        (int(doc_id), doc) for doc_id, doc in tables.get(table, {}).items()])


def _group(tables: dict[str, dict[str, Any]], table: str, field_name: str) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """The records of ``table`` grouped by their ``field_name`` text, in table order (a record
    whose value is not text matches no look-up, as in a search by that field)."""
    out: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for doc_id, doc in tables.get(table, {}).items():
        key = doc.get(field_name)
        if isinstance(key, str):
            out.setdefault(key, []).append((int(doc_id), doc))
    return out


def _marks(active: Version, contested_versions: set[str]) -> tuple[str, ...]:
    """The rule of :meth:`Ledger.marks` for one active version (seed 000 §7.4b untrusted chain;
    §4 step 5 an open contest of this very version)."""
    found = {"untrusted": active.untrusted, "contested": active.id in contested_versions}
    return tuple(m for m in MARKS if found[m])


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
    if path.suffix.lower() != ".md" and not is_set_path(str(path)):
        raise GovernanceError(f"{article!r} is not a Markdown article (it must end in .md) nor a node's "
                              f"eval set ({EVAL_REL}).")
    if path.name == NODE_INDEX or (len(path.parts) == 1 and path.name in SPECIAL_FILES):
        raise GovernanceError(f"{article!r} is a node index or a notes file, not an article.")
    return str(path)


def node_of(article: str) -> str:
    """The node folder of a memory-relative article path (``""`` for the root); for a node's
    eval set (``support/x/evals/cases.jsonl``), the node it belongs to (``support/x``)."""
    if is_set_path(article):
        return node_of_set(article)
    return article.rsplit("/", 1)[0] if "/" in article else ""


def mem_path(ws: Workspace, article: str) -> Path:
    """The absolute path of ``article`` (relative to the memory tree), confined to the workspace."""
    prefix = f"{ws.memory_rel}/" if ws.memory_rel else ""
    return confine(ws.root, prefix + article)


def shown_path(ws: Workspace, article: str) -> str:
    """``article`` as the workspace shows it (with the memory folder's prefix), for messages and the audit log."""
    return f"{ws.memory_rel}/{article}" if ws.memory_rel else article


def read_or_none(path: Path) -> bytes | None:
    """The bytes of ``path``, or ``None`` when the file does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def sha_or_none(data: bytes | None) -> str | None:
    """The sha256 (hex) of ``data``, or ``None`` for no data."""
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


def retired_how(version: Version) -> str | None:
    """How a retired version was retired, from its own record (no record is edited for it).

    Returns ``"retired_by: activation of @N"`` when a newer version's activation (or adopted
    external edit) replaced it, ``"retired_by: merge into <version id>"`` when a merge
    retired it, ``"retired: by <profile>"`` when its owner retired it
    explicitly, ``None`` when it is not retired. Records written before ``superseded_by``
    existed are read from the retirement's sentence (``superseded by version N``).
    """
    if version.state != "retired":
        return None
    r = version.retirement or {}
    number = None
    if r.get("merged_into"):
        return f"retired_by: merge into {r['merged_into']}"
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
