"""Searching the index: the query language, BM25F ranking, filters and snippets.

Query language (what a user types, and what a pasted ticket is read as):

- plain words: ranked by BM25F over the weighted fields of
  :data:`memtui.core.search.sources.TEXT_FIELDS`, indexed as one field whose term
  frequencies are weighted per field (a symptom or alias match counts more than a title or
  summary match, which counts more than a body match); any word may match;
- ``"quoted phrase"``: the words in this order (straight double quotes), within one field;
- ``prefix*``: words starting so (at least :data:`PREFIX_MIN` letters). Alone, every term
  with the prefix, skipping blocks that cannot reach the page; in a longer query expanded
  to at most :data:`PREFIX_LIMIT` terms, the most frequent first (LIBRARY-NOTES: unbounded
  expansion there scores every expansion's postings); scored by
  :func:`expansion_score`;
- ``word~``: words within edit distance 1 (2 for words of 6+ letters) whose first
  :data:`FUZZY_PREFIX` letters are as typed (two edits only after the third letter),
  capped likewise; scored by :func:`expansion_score`, so closer spellings score more;
- ``a AND b``: both required;
- a query of more than :data:`MAX_QUERY_WORDS` plain words and no ``AND`` (a pasted ticket)
  searches only that many of them, those in the fewest documents (highest IDF); the
  confidence still divides by all of its words;
- filters ``kind:K``, ``node:N`` (the node and its sub-nodes), ``owner:P``, ``state:S``,
  ``tag:T``; a filter given twice accepts either value.

Proposals and retired versions are indexed but left out unless ``include_proposed`` is set
or a ``state:`` filter asks for them (seed 000 §2 rule 7, DESIGN.md invariant 6).

Every other character is text: parentheses, colons after unknown words, dashes and
typographic quotes in a pasted ticket are not syntax. A query that cannot be used
(an unclosed quote, a short prefix, an unknown kind) raises :class:`QueryError` with a sentence
saying what is wrong.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass, field
from typing import Any

from memtui.core.errors import MemtuiError
from memtui.core.search import confidence as confidence_model
from memtui.core.search.analysis import KEY_MARK, is_word, normalize, term_spans
from memtui.core.search.engine.index import SearchIndex, is_damage
from memtui.core.search.engine.matching import rank
from memtui.core.search.plan import PREFIX_MARK, PREFIX_MIN, Item
from memtui.core.search.reading import ASIDE_WEIGHT, Reading, is_pasted, read_ticket
from memtui.core.search.sources import KINDS
from memtui.core.text import well_formed

#: Filters the query language knows.
FILTERS = ("kind", "node", "owner", "state", "tag")
#: Characters of context shown around the first highlighted word of a snippet.
SNIPPET_CHARS = 160
#: After a field's first match, its words are analysed for this many snippet widths more
#: (the excerpt shows the densest cluster there); analysing every word of every result's
#: body was a large share of a common-word query's time in a new process.
SNIPPET_LOOKAHEAD = 3
#: Snippets are looked for in this many leading characters of a field.
SNIPPET_SCAN = 50_000
#: Score factor of an article (the memory's checklists, procedures and references) in the
#: answer to a query that asks a question (holds ``?``): a question asks for knowledge, a
#: report of a failure for a precedent (without it how-to tickets were answered with
#: a look-alike past case above the article that answers them). Chosen by nested 5-fold
#: cross-validation over the 226 triage cases, from 1, 1.25, 1.5 and 2 by hit@1 on the
#: other folds (1.5 in every fold); see the changelog for the figures.
QUESTION_ARTICLE_BOOST = 1.5


class QueryError(MemtuiError):
    """The query cannot be used; ``str()`` says what is wrong and how to write it."""


@dataclass(slots=True)
class Snippet:
    """A piece of an item's text with the matched words marked.

    Attributes:
        text: the excerpt, exactly as in the item (never altered or marked up).
        spans: ``(start, end)`` code-point offsets into ``text`` of each highlighted word,
            sorted, non-overlapping (whole words, whatever precedes them).
        field: the field the excerpt comes from (``symptom``, ``body`` …).
    """

    text: str
    spans: list[tuple[int, int]]
    field: str

    def to_json(self) -> dict[str, Any]:
        """``{"text", "spans": [[start, end], …], "field"}``."""
        return {"text": self.text, "spans": [list(s) for s in self.spans], "field": self.field}


@dataclass(slots=True)
class Hit:
    """One search result.

    Attributes:
        kind: a value of :data:`memtui.core.search.sources.KINDS`.
        path: the item's file, workspace-relative (``graph.jsonl#Name`` for an entity).
        node: the node holding it (memory-tree-relative, ``""`` for the root).
        state: ``active``, ``proposed``, ``retired`` …
        score: the BM25F score (higher is better; comparable within one query only).
        title: the item's title or name.
        entry_id: the front matter ``id`` (``""`` when absent); for an index line, the
            target article's path is in ``target``.
        target: for an index line, the workspace-relative path of the article it lists.
        line: the line in ``path`` (index lines and graph entities), else ``None``.
        snippet: the best excerpt with highlights, or ``None``.
        confidence: ``score`` per query word (see :func:`confidence`); comparable across
            queries, unlike ``score``.
        verdict: ``"likely"`` (one of the first items of an answer that probably holds
            the right precedent), ``"possible"`` (one of the best items of an answer that
            probably does not), or ``""``; see :mod:`memtui.core.search.confidence`.
        coverage: the share (0…1) of the query's word weight (idf) this item holds
            anywhere (:func:`memtui.core.search.engine.matching.coverage`); measured for the
            first results only, else ``None``.
        agreement: the same share in the item's symptom, aliases, title and summary
            (:data:`AGREEMENT_FIELDS`); ``None`` where ``coverage`` is.
    """

    kind: str
    path: str
    node: str
    state: str
    score: float
    title: str
    entry_id: str = ""
    target: str = ""
    line: int | None = None
    snippet: Snippet | None = None
    confidence: float = 0.0
    verdict: str = ""
    coverage: float | None = None
    agreement: float | None = None
    #: For a ``possible`` hit, why it was set apart: the ticket's words it shares (rarest
    #: first), the ticket's rare words it lacks, and its own cause (:func:`set_apart`).
    shares: list[str] = field(default_factory=list)
    lacks: list[str] = field(default_factory=list)
    cause: str = ""

    @property
    def why(self) -> str:
        """One sentence saying why a ``possible`` hit was not taken as the precedent
        (``""`` when not measured): "shares ORA-00001, PK_POLICY; lacks broker; its cause:
        …" — so a person can judge whether the ticket is the same case."""
        out = []
        if self.shares:
            out.append("shares " + ", ".join(self.shares))
        if self.lacks:
            out.append("lacks " + ", ".join(self.lacks))
        if self.cause:
            out.append("its cause: " + self.cause)
        return "; ".join(out)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every attribute (snippet as :meth:`Snippet.to_json`; ``why``
        with ``shares``, ``lacks`` and ``cause`` for a ``possible`` hit)."""
        return {"kind": self.kind, "path": self.path, "node": self.node, "state": self.state,
                "score": round(self.score, 4), "title": self.title, "entry_id": self.entry_id,
                "target": self.target, "line": self.line,
                "confidence": round(self.confidence, 4), "verdict": self.verdict,
                "snippet": self.snippet.to_json() if self.snippet else None,
                **({"why": self.why, "shares": self.shares, "lacks": self.lacks, "cause": self.cause}
                   if self.why else {})}


@dataclass(slots=True)
class Results:
    """The answer to :func:`search`: hits best first, ``total`` (how many items matched, at
    least ``len(hits)``), the time in ms, findings (an index repaired on the way), and how
    far ``total`` is to be trusted: exact when fewer hits than the limit came back (every
    match was collected); else ``estimated`` (Whoosh's estimate: counting exactly would walk
    every match) or ``at_least`` (a lone ``prefix*`` or ``word~`` stops reading once a page
    is full). ``likelihood`` is the calibrated probability that the first hits hold the
    right precedent (:func:`memtui.core.search.confidence.probability`; it sets each hit's
    ``verdict``); ``known`` the share (0…1) of the query's plain words the index holds at all
    and ``keyed`` the share of those it holds only under their sound key (``None`` for a
    query with none), two of its inputs."""

    hits: list[Hit] = field(default_factory=list)
    total: int = 0
    ms: float = 0.0
    query_words: int = 0
    findings: list[Any] = field(default_factory=list)
    at_least: bool = False
    estimated: bool = False
    likelihood: float = 0.0
    known: float | None = None
    keyed: float | None = None
    #: How a pasted ticket was read (:func:`memtui.core.search.reading.read_ticket`);
    #: ``None`` for a typed query.
    reading: Reading | None = None

    def assess(self) -> "Results":
        """Set :attr:`likelihood` and every hit's ``verdict`` (an index line and the article
        it lists are one item: the item's first hit carries its label, later ones the same);
        returns ``self``."""
        firsts: dict[str, int] = {}
        scores: list[float] = []
        agreed: list[float | None] = []
        for h in self.hits:
            key = h.target or h.path
            if key not in firsts:
                firsts[key] = len(scores)
                scores.append(h.score)
                agreed.append(h.agreement)
            else:  # an index line and its article: the item holds what either holds
                agreed[firsts[key]] = _max(agreed[firsts[key]], h.agreement)
        complete = not (self.at_least or self.estimated) or len(self.hits) < 1
        self.likelihood = confidence_model.probability(scores, complete=complete,
                                                       agreement=agreed[0] if agreed else None)
        if self.reading is not None and not self.reading.message.strip():
            self.likelihood = 0.0  # only a signature or headers: nothing was asked, no precedent
        labels = confidence_model.verdicts(self.likelihood, len(scores))
        for h in self.hits:
            h.verdict = labels[firsts[h.target or h.path]]
        return self

def _max(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


#: Fields whose agreement with the query is measured apart (a precedent's symptom and aliases
#: are the customer's own words; its title and summary name the case).
AGREEMENT_FIELDS = ("symptom", "aliases", "title", "summary")


def agreement(fields: dict[str, Any], terms: list[tuple[tuple[str, ...], float]]) -> float:
    """The share (0…1) of the query's word weight (``terms``: ``(variants, idf)``) whose word
    occurs in the :data:`AGREEMENT_FIELDS` of ``fields`` (stored text), as the index's
    analysis reads them (plain terms and sound keys)."""
    total = sum(idf for _, idf in terms)
    if total <= 0:
        return 1.0  # no word to miss
    found = _agreement_terms(fields)
    return sum(idf for vs, idf in terms if any(v in found for v in vs)) / total


#: Entries whose :data:`AGREEMENT_FIELDS` terms are remembered (:func:`_agreement_terms`): more
#: than the 30 candidates of 200 cases (an eval set at its largest measured).
AGREEMENT_CACHE = 16384
_AGREEMENT_TERMS: dict[tuple[str, ...], frozenset[str]] = {}


def _agreement_terms(fields: dict[str, Any]) -> frozenset[str]:
    """The terms (plain and sound keys) of the :data:`AGREEMENT_FIELDS` of ``fields``,
    remembered by those fields' text (the same entries come back for every case of an eval
    set, before and after the change measured; analysing them was a tenth of a search)."""
    key = tuple(str(fields.get(name) or "") for name in AGREEMENT_FIELDS)
    got = _AGREEMENT_TERMS.get(key)
    if got is None:
        found: set[str] = set()
        for text in key:
            if text:
                found.update(t for t, _s, _e in term_spans(text[:SNIPPET_SCAN]))
        if len(_AGREEMENT_TERMS) >= AGREEMENT_CACHE:
            _AGREEMENT_TERMS.clear()
        got = _AGREEMENT_TERMS[key] = frozenset(found)
    return got


# -- parsing ----------------------------------------------------------------------------------
_FILTER_RE = re.compile(r"^(kind|node|owner|state|tag):(\S+)$", re.I)


def parse(text: str) -> tuple[list[Item], dict[str, list[str]]]:
    """Split a query into items (words, phrases, prefixes, fuzzy words, ``AND``) and filters.

    Raises:
        QueryError: an unclosed ``"``, a prefix shorter than :data:`PREFIX_MIN`, a filter
            with an unknown value (``kind:``), or nothing to search for.
    """
    if text.count('"') % 2:
        raise QueryError('a quote (") is not closed; close it, or remove it to search the words')
    items: list[Item] = []
    filters: dict[str, list[str]] = {}
    pieces = re.split(r'("[^"]*")', text)
    for piece in pieces:
        if piece.startswith('"') and piece.endswith('"') and len(piece) >= 2:
            inner = piece[1:-1].strip()
            if inner:
                items.append(Item("phrase", inner))
            continue
        for raw in piece.split():
            m = _FILTER_RE.match(raw)
            if m:
                name, value = m.group(1).lower(), m.group(2).strip("/")
                if name == "kind" and value.lower() not in KINDS:
                    raise QueryError(f"kind:{value} is not a kind; use one of: {', '.join(KINDS)}")
                filters.setdefault(name, []).append(value)
                continue
            if raw == "AND":
                items.append(Item("and", raw))
                continue
            if raw == "OR":
                continue
            if raw.endswith("*") and len(raw) > 1 and raw.count("*") == 1:
                stem = raw[:-1]
                letters = normalize(stem)
                if len(letters) < PREFIX_MIN or not is_word(letters):
                    raise QueryError(
                        f"{raw}: a prefix needs at least {PREFIX_MIN} letters before * "
                        "(shorter prefixes match too many words)")
                items.append(Item("prefix", letters))
                continue
            if raw.endswith("~") and len(raw) > 1:
                core = normalize(raw.rstrip("~"))
                if len(core) >= 3 and is_word(core):
                    items.append(Item("fuzzy", core))
                    continue
            items.append(Item("word", raw))
    if not any(i.kind != "and" for i in items) and not filters:
        raise QueryError("the query is empty; type a word, a \"phrase\", a prefix* or a filter such as kind:skill")
    return items, filters

# -- snippets ---------------------------------------------------------------------------------
_SNIPPET_FIELDS = ["symptom", "aliases", "title", "summary", "mechanism", "body", "systems",
                   "tagtext", "environment", "fix_shape"]


def snippet_for(fields: dict[str, Any], highlight: set[str], width: int = SNIPPET_CHARS) -> Snippet | None:
    """The excerpt of ``fields`` (stored text by field name) that shows the most matches
    (counted from a field's first match to :data:`SNIPPET_LOOKAHEAD` widths after it).

    Spans cover whole words (as split by :func:`memtui.core.search.analysis.words`) whose
    term or sound key is in ``highlight``, or that start with a prefix given in ``highlight``
    as :data:`PREFIX_MARK` + prefix; offsets are code points of the returned text.
    Returns ``None`` when no stored field has text.
    """
    best: tuple[int, str, str, list[tuple[int, int]]] | None = None
    prefixes = tuple(h[len(PREFIX_MARK):] for h in highlight if h.startswith(PREFIX_MARK))
    keys = any(h.startswith(KEY_MARK) for h in highlight)
    plain = any(not h.startswith((KEY_MARK, PREFIX_MARK)) for h in highlight)
    for name in _SNIPPET_FIELDS:
        text = fields.get(name)
        if not text:
            continue
        text = str(text)[:SNIPPET_SCAN]
        spans: list[tuple[int, int]] = []
        for term, start, end in term_spans(text, keys=keys, plain=plain):
            if spans and start > spans[0][0] + SNIPPET_LOOKAHEAD * width:
                break  # the excerpt is near the first match: the rest of a long text is not read
            if term in highlight or (prefixes and _folded(text[start:end]).startswith(prefixes)):
                spans.append((start, end))
        spans = _merge(spans)
        if best is None or len(spans) > best[0]:
            best = (len(spans), name, text, spans)
    if best is None:
        return None
    _, name, text, spans = best
    if not spans:
        cut = text[:width]
        return Snippet(cut, [], name)
    # window starting a little before the densest cluster (first span with most spans within width)
    start_idx = max(range(len(spans)), key=lambda i: sum(1 for s in spans[i:] if s[1] - spans[i][0] <= width))
    first = spans[start_idx][0]
    lo = max(0, first - width // 4)
    if lo > 0 and not text[lo - 1].isspace():  # never start inside a word
        back = _last_space(text, lo)
        if back >= 0 and lo - back < 20:
            lo = back + 1
        else:
            ahead = _SPACE.search(text, lo, first)
            lo = ahead.end() if ahead else first
    hi = min(len(text), lo + width)
    if hi < len(text) and not text[hi].isspace():
        ahead = _SPACE.search(text, hi, hi + 20)
        hi = ahead.start() if ahead else hi
    # never cut a highlighted word
    for s, e in spans:
        if s < hi < e:
            hi = e
    excerpt = text[lo:hi]
    local = [(s - lo, e - lo) for s, e in spans if s >= lo and e <= hi]
    return Snippet(excerpt, local, name)


@functools.lru_cache(maxsize=65536)
def _folded(word: str) -> str:
    """:func:`~memtui.core.search.analysis.normalize`, cached: a prefix's snippet folds
    every word of a field (a large share of a ``prefix*`` query's time)."""
    return normalize(word)


_SPACE = re.compile(r"\s+")


def _last_space(text: str, end: int) -> int:
    """Index of the last whitespace character of ``text[:end]`` (-1 when none)."""
    for i in range(end - 1, max(-1, end - 200), -1):
        if text[i].isspace():
            return i
    return -1


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def confidence(score: float, query_words: int) -> float:
    """How sure a result is, comparable across queries: its BM25F score per query word.

    A long pasted ticket adds up many small matches, so the raw score grows with the
    query's length; dividing by the number of distinct query words (after stop words)
    leaves roughly the average strength of a word's match. The triage test's confidence
    threshold (:data:`memtui.core.search.triage.DEFAULT_THRESHOLD`) is on this value.
    """
    return score / max(1, query_words)


# -- searching --------------------------------------------------------------------------------
def search(index: SearchIndex, text: str, limit: int = 10, include_proposed: bool = False,
           kinds: list[str] | None = None, snippets: bool = True, count: bool = True) -> Results:
    """Run the query ``text`` over ``index``.

    Args:
        index: an opened (or openable) :class:`SearchIndex`; it is not updated here.
        text: the query (see the module docstring), or a pasted ticket.
        limit: most hits returned (the total is counted anyway).
        include_proposed: include proposals and retired versions.
        kinds: extra ``kind:`` filter values (the CLI's ``--kind``).
        snippets: compute highlighted snippets (off for the triage test's speed).
        count: count the matches beyond the page (``total``); off, a full page gives
            Whoosh's estimate instead (``estimated``): the hits, their order and scores and
            the likelihood are the same, and a query matching thousands of documents costs
            about a third less (the evaluations of :mod:`memtui.core.search.triage`).

    Returns:
        :class:`Results`. An index found damaged (on opening or while searching) or of an
        older schema is rebuilt from the files first and the search repeated once; the
        repair's finding (``search-index-damaged``) is in ``Results.findings``.

    Raises:
        QueryError: the query cannot be used (what is wrong is in the message).
        memtui.core.search.index.IndexBusyError / IndexWriteError: only when a repair is
            needed and cannot be done.
    """
    started = time.perf_counter()
    text = well_formed(text)  # a query from a non-UTF-8 argument or a pasted lone surrogate
    reading = read_ticket(text) if is_pasted(text) else None
    if reading is not None:  # a pasted ticket is text, never query syntax (its quotes, colons, stars)
        items = ticket_items(reading)
        filters: dict[str, list[str]] = {}
        if not items:
            raise QueryError("nothing to search for in the pasted text: " + (reading.summary or "it holds no words"))
    else:
        items, filters = parse(text) if text.strip() or not kinds else ([], {})
    for k in kinds or []:
        if k not in KINDS:
            raise QueryError(f"--kind {k} is not a kind; use one of: {', '.join(KINDS)}")
        filters.setdefault("kind", []).append(k)
    if not items and not filters:
        raise QueryError("the query is empty; type a word, a \"phrase\", a prefix* or a filter")
    findings: list[Any] = []
    # words are judged on ASSESSED hits; a lone prefix or fuzzy word keeps its early stop
    fetch = max(limit, ASSESSED) if any(i.kind == "word" for i in items) else limit
    for attempt in (0, 1):
        index.open()
        if index.needs_update:  # emptied because damaged or outdated: fill it before searching
            report = index.update()
            findings.extend(report.findings)
            index.open()
        findings.extend(index.findings)
        index.findings = []
        try:
            with index.search_lock:
                found = rank(index, items, filters, fetch, include_proposed,
                             {"article": QUESTION_ARTICLE_BOOST} if "?" in text else None, exact_total=count)
            hits = [_hit(stored, score, found.words, found.highlight, snippets and i < limit)
                    for i, (stored, score) in enumerate(found.docs)]
            for hit, (stored, _), covered in zip(hits, found.docs, found.coverage, strict=False):
                hit.coverage = covered
                hit.agreement = agreement(stored, found.terms)
            res = Results(hits=hits, total=found.total, ms=(time.perf_counter() - started) * 1000,
                           query_words=found.words, findings=findings, at_least=found.at_least,
                           estimated=found.estimated, known=found.known, keyed=found.keyed,
                           reading=reading).assess()
            if reading is not None or len(items) >= WHY_MIN_WORDS:
                set_apart(res, found.holds, found.terms, [stored for stored, _ in found.docs],
                          reading.message + "\n" + reading.aside if reading else text)
            # the answer was judged on ASSESSED hits: a shorter page (--limit 3) must not
            # change how likely it is
            res.hits = res.hits[:limit]
            return res
        except Exception as exc:  # noqa: BLE001 - only damage is handled here
            if attempt or not is_damage(exc):
                raise
            report = index.repair(exc)
            findings.extend(report.findings)
    raise AssertionError("unreachable")  # pragma: no cover

#: Hits an answer is judged on whatever the page size: an index line and its article are
#: one item, so twice the items a likely answer shows (a page of 3 judged the same list as
#: a page of 10).
ASSESSED = 2 * confidence_model.ANSWER_SIZE
#: A typed query of fewer words gets no reasons for its possible results (a word or two
#: is not a ticket; the reasons read each possible result's text).
WHY_MIN_WORDS = 4
#: Words named per reason of :func:`set_apart` (shared, lacked).
WHY_WORDS = 4
#: Characters of an entry's own cause shown in a reason.
WHY_CAUSE = 140
#: Fields read for an entry's own cause, the first present.
CAUSE_FIELDS = ("mechanism", "summary", "title")


def set_apart(results: Results, holds: list[set[int]], terms: list[tuple[tuple[str, ...], float]],
              stored: list[dict[str, Any]], text: str) -> None:
    """For each ``possible`` hit of ``results`` (an answer that is not likely), say why it
    was set apart: the query's words it holds (rarest first, as the ticket wrote them), the
    query's rarest words it lacks, and its own cause (its ``mechanism``, else its summary).

    Args:
        results: the answer (hits aligned with ``holds`` and ``stored``).
        holds: per hit, the indexes into ``terms`` of the words it holds (the engine's
            :attr:`~memtui.core.search.engine.matching.Ranking.holds`).
        terms: the query's words with their weight (``(variants, idf)``).
        stored: each hit's stored fields.
        text: the query or read ticket, to show each word as it was written.
    """
    if not terms or not any(h.verdict == "possible" for h in results.hits):
        return  # a likely answer sets nothing apart
    written: dict[str, str] = {}
    for term, start, end in term_spans(text[:SNIPPET_SCAN]):
        written.setdefault(term, text[start:end])

    def shown(vs: tuple[str, ...]) -> str:
        return next((written[v] for v in vs if v in written), vs[0])

    rarest = sorted(range(len(terms)), key=lambda k: -terms[k][1])
    for hit, held, fields in zip(results.hits, holds, stored, strict=False):
        if hit.verdict != "possible":
            continue
        hit.shares = list(dict.fromkeys(shown(terms[k][0]) for k in rarest if k in held))[:WHY_WORDS]
        hit.lacks = list(dict.fromkeys(shown(terms[k][0]) for k in rarest if k not in held))[:WHY_WORDS]
        cause = next((str(fields[f]) for f in CAUSE_FIELDS if fields.get(f)), "")
        hit.cause = " ".join(cause.split())[:WHY_CAUSE]


def ticket_items(reading: Reading) -> list[Item]:
    """The words of a read ticket as query items: the message's at weight 1, the set-apart
    text's at :data:`~memtui.core.search.reading.ASIDE_WEIGHT` (every character is text)."""
    items = [Item("word", w) for w in reading.message.split() if _WORDLIKE.search(w)]
    items += [Item("word", w, ASIDE_WEIGHT) for w in reading.aside.split() if _WORDLIKE.search(w)]
    return items


_WORDLIKE = re.compile(r"[^\W_]")


def _hit(stored: dict[str, Any], score: float, count: int, highlight: set[str], snippets: bool) -> Hit:
    hit = Hit(kind=stored.get("kind", ""), path=stored.get("path", ""),
              node=stored.get("node", ""), state=stored.get("state", ""),
              score=score, title=stored.get("title", ""),
              entry_id=stored.get("entry_id", ""), target=stored.get("target", ""),
              line=stored.get("line"), confidence=confidence(score, count))
    if snippets:
        hit.snippet = snippet_for(stored, highlight)
    return hit
