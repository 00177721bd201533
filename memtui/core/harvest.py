"""The dreaming pass of one case (seed 000 §4 steps 1, 2 and 4): from the case's papers, what
was learned, what was reused and what was missing, each candidate classified, and the
cross-domain ones handed to their owning domain as proposals with the evidence.

**The case's papers** (:func:`papers`):

- its session histories: ``sessions/durable/<key>.jsonl`` whose key is the case id or starts
  with it (``CASE-3001-2026-11-20``), or any of whose lines names it (``"case": "CASE-3001"``);
- its proposals (provenance ``case``; a harvest's own requests left out), its uses (with their verdicts) and its pins.

**Candidates** (:func:`harvest`):

- *learned*: each proposal the case filed, with the class it carries, else the class
  :func:`memtui.core.classify.suggest` gives its content;
- *reused*: each version the case used or pinned (``nothing`` to write: the use is recorded
  and counts toward promotion); a use whose verdict is ``contradiction`` is *missing* instead
  — the contradicted claim needs fixing where it is made;
- *missing*: each search the case ran (a tool call whose name holds ``search``) that memtui's
  search, run again now, answers with no confident precedent
  (:meth:`memtui.core.search.triage.Candidates.assess`); its class comes from the case's answer
  after it, or ``nothing`` — justified — when the papers hold none.

Classes are those of §4 step 2 (:data:`memtui.core.classify.HARVEST_CLASSES`); ``nothing``
always carries its justification. A missing candidate whose nearest (unconfident) precedent
lies in another domain than the case's is *cross-domain*: :func:`file_requests` proposes it to
that domain, evidence attached, once (its article is named after the candidate, so a repeated
pass finds it filed). Evidence holding personal data or a secret is not filed (the store would keep
it); the report says so.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from memtui.core import classify, sessions
from memtui.core.errors import MemtuiError
from memtui.core.workspace import Workspace

#: Migration classes read as dreaming classes: a mechanic is a skill candidate, a drop nothing.
_AS_HARVEST = {"mechanic": "skill", "drop": "nothing", "article": "article", "experience": "experience",
               "index-line": "index-line", "skill": "skill", "nothing": "nothing"}
#: Characters of the case's answer kept as evidence.
ANSWER_CHARS = 400


@dataclass(slots=True)
class Candidate:
    """One harvested candidate.

    Attributes:
        kind: ``learned``, ``reused`` or ``missing``.
        what: one line saying what it is.
        cls: its class (:data:`memtui.core.classify.HARVEST_CLASSES`).
        reason: why that class (for ``nothing``, the justification).
        evidence: where in the papers it comes from (``path:line``, version ids) and what.
        domain: the node that owns it (where it would be written), ``""`` when unknown.
        cross_domain: ``domain`` lies outside the case's domain.
        proposal: the proposal filed for it (:func:`file_requests`), if any.
        held: why it was not filed (personal data or a secret in the evidence), if so.
    """

    kind: str
    what: str
    cls: str
    reason: str
    evidence: list[str] = field(default_factory=list)
    domain: str = ""
    cross_domain: bool = False
    proposal: str | None = None
    held: str | None = None
    answer: str = ""

    def key(self, case: str) -> str:
        """A stable id of this candidate within ``case`` (the client id of its proposal)."""
        return hashlib.sha256(json.dumps([case, self.kind, self.what]).encode()).hexdigest()[:16]


@dataclass(slots=True)
class Papers:
    """A case's papers: session keys, proposals (versions), uses and pins."""

    case: str
    sessions: list[str] = field(default_factory=list)
    proposals: list[Any] = field(default_factory=list)
    uses: list[Any] = field(default_factory=list)
    pins: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "sessions": self.sessions, "proposals": [v.id for v in self.proposals],
                "uses": [u.version for u in self.uses], "pins": [p.get("version") for p in self.pins]}


@dataclass(slots=True)
class Harvest:
    """The harvest of one case: its papers and its candidates."""

    case: str
    domain: str
    papers: Papers
    candidates: list[Candidate]

    def by_kind(self, kind: str) -> list[Candidate]:
        return [c for c in self.candidates if c.kind == kind]

    def to_json(self) -> dict[str, Any]:
        """``{"case", "domain", "papers", "learned", "reused", "missing", "counts", "rule"}``."""
        counts: dict[str, int] = {c: 0 for c in classify.HARVEST_CLASSES}
        for c in self.candidates:
            counts[c.cls] = counts.get(c.cls, 0) + 1
        return {"case": self.case, "domain": self.domain, "papers": self.papers.to_json(),
                **{kind: [asdict(c) for c in self.by_kind(kind)] for kind in ("learned", "reused", "missing")},
                "counts": counts, "rule": "seed 000 §4 steps 1, 2, 4"}


def _names_case(history: sessions.History, case: str) -> bool:
    for turn in history.turns:
        raw = turn.raw or {}
        if str(raw.get("case") or raw.get("case_id") or "") == case:
            return True
    return False


def case_sessions(ws: Workspace, case: str) -> list[str]:
    """The session keys of ``case``: the key is the case id or starts with it followed by
    ``-``/``_``/``.``, or a line of the history names it in ``case``/``case_id``."""
    out = []
    low = case.lower()
    for key in sessions.keys(ws):
        k = key.lower()
        if k == low or (k.startswith(low) and k[len(low)] in "-_."):
            out.append(key)
            continue
        try:
            if _names_case(sessions.read(ws, key), case):
                out.append(key)
        except MemtuiError:
            continue
    return out


_DAY_SUFFIX = re.compile(r"[-_.]\d{4}-\d{2}-\d{2}$")


def case_of(history: sessions.History) -> str:
    """The case a session history belongs to: the ``case``/``case_id`` its lines name, else its
    key without a trailing day (``CASE-3001-2026-11-20`` is a history of ``CASE-3001``, the key
    form :func:`case_sessions` matches), else the key itself."""
    named = next((str(t.raw.get("case") or t.raw.get("case_id")) for t in history.turns
                  if t.raw and (t.raw.get("case") or t.raw.get("case_id"))), None)
    return named or _DAY_SUFFIX.sub("", history.key) or history.key


def papers(ws: Workspace, store: Any, case: str) -> Papers:
    """The papers of ``case`` (module docstring)."""
    from memtui.core.governance import Ledger

    ledger = Ledger(store)
    out = Papers(case, case_sessions(ws, case))
    out.proposals = [v for v in ledger.versions() if (v.provenance or {}).get("case") == case]
    out.uses = [u for v in ledger.versions() for u in ledger.uses(v.id) if u.case == case]
    out.pins = ledger.pins(case)
    return out


_QUOTED_ARG = re.compile(r"""\(\s*(?:query\s*=\s*)?["'](.+?)["']""", re.S)


def _query_of(text: str) -> str:
    """The query of a search tool call's arguments (JSON ``query``/``q``/``text``, or the
    first quoted argument of ``name("…")``), else the text itself."""
    try:
        args = json.loads(text)
    except (ValueError, TypeError):
        args = None
    if isinstance(args, dict):
        for name in ("query", "q", "text", "search"):
            if isinstance(args.get(name), str):
                return args[name]
    m = _QUOTED_ARG.search(text)
    return m.group(1) if m else text.strip()


def searches(history: sessions.History) -> list[tuple[int, str, str]]:
    """``(line, query, the case's answer after it)`` of each search tool call in ``history``:
    a call whose tool name holds ``search`` (a result line counts when no call was seen)."""
    out: list[tuple[int, str, str]] = []
    for i, turn in enumerate(history.turns):
        for tool in turn.tools:
            if "search" not in tool.name.lower():
                continue
            if tool.result and out and out[-1][0] >= turn.line - 2:
                continue  # the result of the call just taken
            text = tool.text
            if tool.result:
                text = text.split("->", 1)[0]
            answer = next((t.text for t in history.turns[i + 1:] if t.role == "assistant" and t.text), "")
            out.append((turn.line, _query_of(text), answer))
    return out


def _under(node: str, domain: str) -> bool:
    return not domain or node == domain or node.startswith(domain + "/")


def harvest(ws: Workspace, store: Any, case: str, domain: str = "") -> Harvest:
    """Harvest ``case`` (module docstring) as a case of ``domain`` (memory-relative; ``""``:
    no domain, so nothing is cross-domain).

    Raises:
        memtui.core.search.index.IndexBusyError / IndexWriteError: the search index cannot be
            brought up to date.
    """
    from memtui.core.search import triage
    from memtui.core.search.index import SearchIndex

    domain = domain.strip().strip("/")
    found = papers(ws, store, case)
    out: list[Candidate] = []
    for v in found.proposals:
        if str((v.provenance or {}).get("source_request", "")).startswith("harvest:"):
            continue  # an earlier pass's own request (file_requests finds it again by name)
        kept = classify.class_of(v)
        if kept:
            cls, reason = _AS_HARVEST.get(kept, kept), (v.classification or {}).get("reason", "")
        else:
            s = classify.suggest(v.article.rsplit("/", 1)[-1], v.content, v.one_liner)
            cls, reason = _AS_HARVEST[s.cls], s.reason
        if cls == "nothing" and not reason:
            reason = "classified as nothing to keep when it was filed"
        out.append(Candidate("learned", f"proposal {v.id} ({v.state}): {v.title}", cls, reason,
                             [f"proposal {v.id}, filed {v.created}"], v.node, not _under(v.node, domain)))
    used: set[str] = set()
    for u in found.uses:
        used.add(u.version)
        node = u.version.rsplit("@", 1)[0].rsplit("/", 1)[0] if "/" in u.version else ""
        if u.verdict == "contradiction":
            out.append(Candidate("missing", f"a contradiction met on {u.version}", "article",
                                 "the claim is contradicted by this case: fix it where it is made (a new version)",
                                 [f"use of {u.version}: verdict contradiction — {u.check}"], node,
                                 not _under(node, domain)))
        else:
            out.append(Candidate("reused", f"used {u.version} ({u.verdict})", "nothing",
                                 "already in the memory; the use is recorded and counts toward its promotion",
                                 [f"use of {u.version}: {u.check}"], node, False))
    for p in found.pins:
        if p.get("version") in used:
            continue
        version = str(p.get("version"))
        node = version.rsplit("@", 1)[0].rsplit("/", 1)[0] if "/" in version else ""
        out.append(Candidate("reused", f"pinned {version}", "nothing",
                             "already in the memory; the pin keeps the case's reasoning reconstructable",
                             [f"pin of {version} at {p.get('time')}"], node, False))
    asked: list[tuple[str, str, str]] = []  # (place, query, answer)
    for key in found.sessions:
        try:
            history = sessions.read(ws, key)
        except MemtuiError:
            continue
        for line, query, answer in searches(history):
            asked.append((f"{history.path}:{line}", query, answer))
    if asked:
        index = SearchIndex(ws)
        index.update()
        ids = triage.entry_ids(ws)
        domains = triage.entry_domains(ws, ids)
        cases = [triage.Case(f"q{i}", q) for i, (_, q, _) in enumerate(asked) if q.strip()]
        cands = {c.id: c for c in triage.candidates(index, cases, ids)}
        for i, (place, query, answer) in enumerate(asked):
            cand = cands.get(f"q{i}")
            if cand is None:
                continue
            ranked = cand.assess(triage.confidence.DEFAULT)
            if ranked.ranked:
                best = ranked.ranked[0]
                node = domains.get(best, ("", ""))[0]
                out.append(Candidate("reused", f"search {query!r} found {best}", "nothing",
                                     "a confident precedent exists: nothing new to write", [f"{place}: searched {query!r}"],
                                     node, False))
                continue
            nearest, node = _nearest(index, query)
            owner = node or domain
            evidence = [f"{place}: searched {query!r}; no confident precedent"
                        + (f" (nearest: {nearest}, probability {ranked.likelihood:.2f})" if nearest and ranked.likelihood is not None else "")]
            if answer.strip():
                s = classify.suggest(f"{case}.md", answer)
                cls, reason = _AS_HARVEST[s.cls], f"the case's answer: {s.reason}"
                if cls == "nothing":
                    reason = f"the case's answer {s.reason.split(':', 1)[0]}: nothing to carry into the tree"
            else:
                cls, reason = "nothing", ("the case's papers hold no answer to it: a gap with no content to "
                                          "write yet, reported so the next case that answers it files it")
            out.append(Candidate("missing", f"no precedent for {query!r}", cls, reason, evidence, owner,
                                 bool(node) and not _under(node, domain),
                                 answer=" ".join(answer.split())[:ANSWER_CHARS]))
    return Harvest(case, domain, found, out)


#: Item kinds whose node owns what they say (a session turn or the graph owns no domain).
_OWNED = ("article", "experience", "index-line", "node")


def _nearest(index: Any, query: str) -> tuple[str | None, str]:
    """The best hit of ``query`` that lies in a node of the tree, and that node (``""``: none):
    the domain a missing precedent most likely belongs to."""
    from memtui.core.search.query import QueryError, search

    try:
        res = search(index, query, limit=10, snippets=False)
    except QueryError:
        return None, ""
    for hit in res.hits:
        if hit.kind in _OWNED and hit.node:
            return hit.entry_id or hit.path, hit.node
    return None, ""


def request_text(case: str, c: Candidate) -> str:
    """The article a cross-domain candidate is proposed as: what the case met, its class and
    reason, and the evidence (seed 000 §4 step 4: "with the evidence, as a request record")."""
    title = c.what[:1].upper() + c.what[1:]
    meta = {"title": f"From case {case}: {title}"[:120], "summary": c.what[:160], "class": c.cls,
            "harvested_from": case}
    head = "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in meta.items())
    body = [f"A case of another domain met this and the memory held no confident precedent. "
            f"Class: {c.cls} — {c.reason}.", "", "## Evidence", ""]
    body += [f"- {e}" for e in c.evidence]
    if c.answer:
        body += ["", "## What the case found", "", c.answer]
    return f"---\n{head}---\n\n" + "\n".join(body) + "\n"


def file_requests(session: Any, result: Harvest, profile: str = "harvest") -> list[Candidate]:
    """Propose each missing cross-domain candidate (class other than ``nothing``) to its owning
    domain (a learned one is already a proposal there),
    with the evidence; one guarded write each, named after the candidate, so a repeated pass
    finds it filed and files nothing twice. Evidence with personal data or a secret is held back.

    Returns:
        The candidates filed (their ``proposal`` set) or held (``held`` set).
    """
    from memtui.core import governance as gov
    from memtui.core import migrate

    done = []
    for c in result.candidates:
        if c.kind != "missing" or not c.cross_domain or c.cls == "nothing" or c.proposal:
            continue
        name = f"from-{re.sub(r'[^a-z0-9]+', '-', result.case.lower()).strip('-')}-{c.key(result.case)[:8]}.md"
        earlier = gov.Ledger(session.store).versions(f"{c.domain}/{name}".strip("/"))
        if earlier:  # an earlier pass filed it: once is enough
            c.proposal = earlier[0].id
            done.append(c)
            continue
        text = request_text(result.case, c)
        found = migrate.practice(session.ws, c.domain, name, text, c.cls)
        if any(f.code.startswith(migrate.HOLDS) for f in found):
            c.held = "the evidence holds personal data or a secret; rewrite it before it is proposed"
            done.append(c)
            continue
        v = gov.propose(session, c.domain, name, text, case=result.case, source_request=f"harvest:{result.case}",
                        profile=session.profile or profile, sources=[e.split(":", 1)[0] for e in c.evidence],
                        classification=classify.classification(c.cls, c.reason),
                        client_id=f"harvest-{c.key(result.case)}")
        c.proposal = v.id
        done.append(c)
    return done


def cases_since(ws: Workspace, store: Any, since: _dt.date) -> list[str]:
    """The cases with papers from ``since`` on: proposals filed, uses recorded, and session
    histories begun on or after it (a history's case: :func:`case_of`), in order."""
    from memtui.core.governance import Ledger

    day = since.isoformat()
    found: dict[str, None] = {}
    ledger = Ledger(store)
    for v in ledger.versions():
        if (v.created or "") >= day and (v.provenance or {}).get("case"):
            found[str(v.provenance["case"])] = None
        for u in ledger.uses(v.id):
            if (u.time or "") >= day:
                found[u.case] = None
    for key in sessions.keys(ws):
        try:
            history = sessions.read(ws, key)
        except MemtuiError:
            continue
        if (history.first or "") >= day:
            found[case_of(history)] = None
    return list(found)


def markdown(result: Harvest) -> str:
    """The harvest report of one case in Markdown."""
    data = result.to_json()
    out = [f"# Harvest of case {result.case}" + (f" (domain {result.domain})" if result.domain else ""), "",
           f"- papers: {len(result.papers.sessions)} session histories, {len(result.papers.proposals)} proposals, "
           f"{len(result.papers.uses)} uses, {len(result.papers.pins)} pins"]
    out.append("- classes: " + ", ".join(f"{n} {c}" for c, n in data["counts"].items()))
    for kind, title in (("learned", "Learned"), ("reused", "Reused"), ("missing", "Missing")):
        out += ["", f"## {title}", ""]
        rows = result.by_kind(kind)
        if not rows:
            out.append("(none)")
        for c in rows:
            out.append(f"- {c.what} — **{c.cls}**: {c.reason}")
            for e in c.evidence:
                out.append(f"  - {e}")
            if c.cross_domain:
                where = (f"proposed to {c.domain} as {c.proposal}" if c.proposal else
                         f"not proposed: {c.held}" if c.held else
                         f"for the owner of {c.domain}" + (" (nothing to propose)" if c.cls == "nothing" else ""))
                out.append(f"  - cross-domain: {where}")
    return "\n".join(out) + "\n"
