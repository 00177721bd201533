"""Searching the index: the query language, BM25F ranking, filters and snippets (issue 8).

Query language (what a user types, and what a pasted ticket is read as):

- plain words: ranked by BM25F over the weighted fields of
  :data:`memtui.core.search.sources.TEXT_FIELDS`, indexed as one field whose term
  frequencies are weighted per field (a symptom or alias match counts more than a title or
  summary match, which counts more than a body match); any word may match;
- ``"quoted phrase"``: the words in this order (straight double quotes), within one field;
- ``prefix*``: words starting so (at least :data:`PREFIX_MIN` letters; in a longer query
  expanded to at most :data:`PREFIX_LIMIT` terms, the most frequent first — LIBRARY-NOTES:
  unbounded prefix expansion took 33 s at 100k articles); scored by
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
import heapq
import itertools
import pickle
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from rapidfuzz.distance import OSA
from whoosh import query as wq
from whoosh.matching.wrappers import FilterMatcher
from whoosh.util.numeric import byte_to_length, length_to_byte

from memtui.core.errors import MemtuiError
from memtui.core.search import confidence as confidence_model
from memtui.core.search.analysis import KEY_MARK, article_key, normalize, stem_word, term_spans, terms
from memtui.core.search.index import SearchIndex, is_damage
from memtui.core.search.sources import CONTENT_FIELD, KINDS, TEXT_FIELDS, TRANSLIT_FIELD, TRANSLIT_WEIGHT

#: A query of more plain words than this (a pasted ticket) searches only this many of them:
#: those occurring in the fewest documents (highest IDF). Common words add little to BM25F
#: but each costs a pass over a long posting list (issue 8: ticket p95 6.3 s at 10k articles).
MAX_QUERY_WORDS = 16
#: Letters of a ``word~`` taken as typed (the edit distance applies to the rest). With 1,
#: ``adress~`` walked the 199,450 body terms starting with ``a`` at 100k articles (2.3 s).
#: The lexicon is read from the third letter on (see :func:`_fuzzy`).
FUZZY_PREFIX = 2
#: A pasted ticket is scored in full only on the first TICKET_CANDIDATES documents that its
#: TICKET_RARE rarest words find (issue 8: ticket p95 32 s at 100k articles otherwise).
TICKET_RARE = 6
TICKET_CANDIDATES = 300
#: The sound key of an ASCII word is searched only when it finds more than this many times
#: the documents its plain term finds (see :func:`_word_query`).
KEY_GAIN = 1.5
#: Shortest prefix accepted before ``*`` (letters).
PREFIX_MIN = 3
#: Most terms a prefix or fuzzy word expands to, per field.
PREFIX_LIMIT = 50
#: Highest score of a ``prefix*`` or ``word~`` (:func:`expansion_score`): the weight of the
#: heaviest field.
PREFIX_CAP = max(TEXT_FIELDS.values())
#: Terms looked at when choosing the most frequent expansions of a prefix.
PREFIX_SCAN = 2000
#: Terms sharing a fuzzy word's first letters looked at (per field).
FUZZY_SCAN = 50_000
#: Most document frequencies remembered per index reader (:func:`_df`).
DF_CACHE = 100_000
#: Marks a prefix (not a term) in the highlight set of :func:`build`.
PREFIX_MARK = "\x01"
#: States hidden unless asked for.
HIDDEN_STATES = ("proposed", "retired", "rejected")
#: Filters the query language knows.
FILTERS = ("kind", "node", "owner", "state", "tag")
#: Weight of a word's second-best field match relative to its best (DisjunctionMax tiebreak).
FIELD_TIEBREAK = 0.3
#: Characters of context shown around the first highlighted word of a snippet.
SNIPPET_CHARS = 160
#: After a field's first match, its words are analysed for this many snippet widths more
#: (the excerpt shows the densest cluster there); analysing every word of every result's
#: body was a third of a common-word query's time in a new process (issue 8).
SNIPPET_LOOKAHEAD = 3
#: Snippets are looked for in this many leading characters of a field.
SNIPPET_SCAN = 50_000


class QueryError(MemtuiError):
    """The query cannot be used; ``str()`` says what is wrong and how to write it."""


@dataclass(slots=True)
class Snippet:
    """A piece of an item's text with the matched words marked.

    Attributes:
        text: the excerpt, exactly as in the item (never altered or marked up).
        spans: ``(start, end)`` code-point offsets into ``text`` of each highlighted word,
            sorted, non-overlapping (``B08``: whole words, whatever precedes them).
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

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every attribute (snippet as :meth:`Snippet.to_json`)."""
        return {"kind": self.kind, "path": self.path, "node": self.node, "state": self.state,
                "score": round(self.score, 4), "title": self.title, "entry_id": self.entry_id,
                "target": self.target, "line": self.line,
                "confidence": round(self.confidence, 4), "verdict": self.verdict,
                "snippet": self.snippet.to_json() if self.snippet else None}


@dataclass(slots=True)
class Results:
    """The answer to :func:`search`: hits best first, ``total`` (how many items matched, at
    least ``len(hits)``), the time in ms, findings (an index repaired on the way), and how
    far ``total`` is to be trusted: exact when fewer hits than the limit came back (every
    match was collected); else ``estimated`` (Whoosh's estimate: counting exactly would walk
    every match) or ``at_least`` (a lone ``prefix*`` or ``word~`` stops reading once a page
    is full). ``likelihood`` is the calibrated probability that the first hits hold the
    right precedent (:func:`memtui.core.search.confidence.probability`; it sets each hit's
    ``verdict``)."""

    hits: list[Hit] = field(default_factory=list)
    total: int = 0
    ms: float = 0.0
    query_words: int = 0
    findings: list[Any] = field(default_factory=list)
    at_least: bool = False
    estimated: bool = False
    likelihood: float = 0.0

    def assess(self) -> "Results":
        """Set :attr:`likelihood` and every hit's ``verdict`` (an index line and the article
        it lists are one item: the item's first hit carries its label, later ones the same);
        returns ``self``."""
        firsts: dict[str, int] = {}
        scores: list[float] = []
        for h in self.hits:
            key = h.target or h.path
            if key not in firsts:
                firsts[key] = len(scores)
                scores.append(h.score)
        complete = not (self.at_least or self.estimated) or len(self.hits) < 1
        self.likelihood = confidence_model.probability(scores, self.query_words, complete=complete)
        labels = confidence_model.verdicts(self.likelihood, len(scores))
        for h in self.hits:
            h.verdict = labels[firsts[h.target or h.path]]
        return self


# -- parsing ----------------------------------------------------------------------------------
@dataclass(slots=True)
class _Item:
    kind: str  # word, phrase, prefix, fuzzy, and
    text: str


_FILTER_RE = re.compile(r"^(kind|node|owner|state|tag):(\S+)$", re.I)


def parse(text: str) -> tuple[list[_Item], dict[str, list[str]]]:
    """Split a query into items (words, phrases, prefixes, fuzzy words, ``AND``) and filters.

    Raises:
        QueryError: an unclosed ``"``, a prefix shorter than :data:`PREFIX_MIN`, a filter
            with an unknown value (``kind:``), or nothing to search for.
    """
    if text.count('"') % 2:
        raise QueryError('a quote (") is not closed; close it, or remove it to search the words')
    items: list[_Item] = []
    filters: dict[str, list[str]] = {}
    pieces = re.split(r'("[^"]*")', text)
    for piece in pieces:
        if piece.startswith('"') and piece.endswith('"') and len(piece) >= 2:
            inner = piece[1:-1].strip()
            if inner:
                items.append(_Item("phrase", inner))
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
                items.append(_Item("and", raw))
                continue
            if raw == "OR":
                continue
            if raw.endswith("*") and len(raw) > 1 and raw.count("*") == 1:
                stem = raw[:-1]
                letters = normalize(stem)
                if len(letters) < PREFIX_MIN or not re.fullmatch(r"[^\W_]+", letters):
                    raise QueryError(
                        f"{raw}: a prefix needs at least {PREFIX_MIN} letters before * "
                        "(shorter prefixes match too many words)")
                items.append(_Item("prefix", letters))
                continue
            if raw.endswith("~") and len(raw) > 1:
                core = normalize(raw.rstrip("~"))
                if re.fullmatch(r"[^\W_]{3,}", core):
                    items.append(_Item("fuzzy", core))
                    continue
            items.append(_Item("word", raw))
    if not any(i.kind != "and" for i in items) and not filters:
        raise QueryError("the query is empty; type a word, a \"phrase\", a prefix* or a filter such as kind:skill")
    return items, filters


# -- building ---------------------------------------------------------------------------------
def _union(subs: list[wq.Query]) -> wq.Or:
    """``Or(subs)`` matched by Whoosh's tree of union matchers in every segment. Whoosh
    otherwise preloads and scores every match of a segment under 5,000 documents (its
    ``ArrayUnionMatcher``: no pruning; a build leaves such segments, and each save adds one)."""
    q = wq.Or(subs)
    q.matcher_type = wq.Or.DEFAULT_MATCHER
    return q


def _df(reader, fieldname: str, term: str) -> int:  # noqa: ANN001 - a Whoosh reader
    """``reader.doc_frequency(fieldname, term)``, remembered on the reader (immutable; the
    index's searcher and its reader are kept between searches): over 26 segments each
    lookup reads 26 term tables, and a pasted ticket asks for its words' frequencies
    several times (issue 8: a fifth of a ticket's time at 100k articles)."""
    cache = getattr(reader, "_memtui_df", None)
    if cache is None:
        cache = {}
        try:
            reader._memtui_df = cache
        except AttributeError:
            return reader.doc_frequency(fieldname, term)
    key = (fieldname, term)
    got = cache.get(key)
    if got is None:
        if len(cache) > DF_CACHE:
            cache.clear()
        got = cache[key] = reader.doc_frequency(fieldname, term)
    return got


def _word_query(term_variants: list[str], reader=None) -> wq.Query:
    """One query word: its plain term in :data:`CONTENT_FIELD` (BM25F over the weighted
    fields) and its sound key in the ``translit`` field; the best match counts, the others
    add :data:`FIELD_TIEBREAK` of theirs.

    With a ``reader``, the sound key of a word typed in ASCII is left out when it finds at
    most :data:`KEY_GAIN` times the documents its plain term finds: then it is the same word
    in the same script, and a second long posting list for nothing (4x the CPU of an OR of
    common words at 10k articles). A Latin-typed Bulgarian word (``polica``), rare as typed
    and common as a key, keeps its key; so does every Cyrillic word.
    """
    subs: list[wq.Query] = []
    keys: list[str] = []
    plain_df = 0
    ascii_word = all(t.isascii() for t in term_variants if not t.startswith(KEY_MARK))
    for t in term_variants:
        if t.startswith(KEY_MARK):
            keys.append(t)
            continue
        subs.append(wq.Term(CONTENT_FIELD, t))
        if reader is not None and ascii_word:
            plain_df = max(plain_df, _df(reader, CONTENT_FIELD, t))
    for t in keys:
        if plain_df and _df(reader, TRANSLIT_FIELD, t) <= KEY_GAIN * plain_df:
            continue
        subs.append(wq.Term(TRANSLIT_FIELD, t, boost=TRANSLIT_WEIGHT))
    if len(subs) == 1:
        return subs[0]
    return wq.DisjunctionMax(subs, tiebreak=FIELD_TIEBREAK)


#: Inflectional endings the stemmers strip (English Porter2, Savoy's Bulgarian): a prefix
#: that ends in the start of one of them may be a stem plus that start (``routi`` = stem
#: ``rout`` + the ``i`` of ``ing``), see :func:`_stems_of`.
_ENDINGS = (
    "s", "es", "ed", "ing", "ings", "ingly", "edly", "ly", "er", "ers", "est", "ation", "ations",
    "ational", "ion", "ions", "ness", "ment", "ments", "ful", "ive", "ize", "ized", "izes", "izing",
    "ise", "able", "ible", "al", "ally", "ism", "ist", "ists", "ity", "ities", "ous", "ance", "ence",
    "ant", "ent", "y", "ies", "ied", "e", "en",
    "ът", "ят", "та", "то", "те", "ия", "ият", "ите", "ата", "ото", "ове", "еве", "овци", "ища",
    "ци", "зи", "си", "и", "а", "о", "е", "я", "ен",
)


def _stems_of(reader, fieldname: str, prefix: str) -> list[str]:
    """Index terms (stems) that words starting with ``prefix`` can have but no expansion of
    ``prefix`` reaches: the stem of ``prefix`` itself (``наложен`` → ``наложн``), and each
    shorter start of it (down to 4 letters shorter, at least :data:`PREFIX_MIN`) whose rest
    begins an ending the stemmers strip (``routi`` → ``rout``, as in "routing"; but not
    ``quokkaq`` → ``quokka``: no ending starts with ``q``)."""
    found = [prefix[:k] for k in range(max(PREFIX_MIN, len(prefix) - 4), len(prefix))
             if any(e.startswith(prefix[k:]) for e in _ENDINGS) and (fieldname, prefix[:k]) in reader]
    own = stem_word(prefix)
    if own != prefix and own not in found and len(own) >= PREFIX_MIN and (fieldname, own) in reader:
        found.append(own)
    return found


def _expand(reader, fieldname: str, prefix: str, stems: list[str]) -> list[str]:
    """The :data:`PREFIX_LIMIT` most frequent terms of ``fieldname`` starting with ``prefix``
    (of the first :data:`PREFIX_SCAN`), and ``stems`` (:func:`_stems_of` the prefix)."""
    found: list[tuple[int, str]] = []
    try:
        for i, term in enumerate(reader.expand_prefix(fieldname, prefix)):
            if i >= PREFIX_SCAN:
                break
            term = term.decode("utf-8") if isinstance(term, bytes) else term
            found.append((reader.doc_frequency(fieldname, term), term))
    except KeyError:
        return []
    found.sort(key=lambda x: (-x[0], x[1]))
    return [t for _, t in found[:PREFIX_LIMIT]] + stems


def _third_letter_edits(word: str) -> set[str]:
    """Spellings one edit from ``word`` at its third letter (:data:`FUZZY_PREFIX` kept):
    that letter deleted, changed or swapped with the fourth, or a letter inserted before
    it, over the alphabet of the word's script."""
    head, rest = word[:FUZZY_PREFIX], word[FUZZY_PREFIX:]
    alphabet = _CYRILLIC_LETTERS if any("\u0400" <= c <= "\u04ff" for c in word) else _LATIN_LETTERS
    out = {head + c + rest for c in alphabet}  # inserted
    if rest:
        out.update(head + c + rest[1:] for c in alphabet)  # changed
        out.add(head + rest[1:])  # deleted
    if len(rest) > 1:
        out.add(head + rest[1] + rest[0] + rest[2:])  # swapped
    out.discard(word)
    return out


_LATIN_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"
_CYRILLIC_LETTERS = "абвгдежзийклмнопрстуфхцчшщъьюя"


def _fuzzy(reader, fieldname: str, word: str) -> list[tuple[str, float]]:
    """Terms of ``fieldname`` within edit distance 1 (2 for words of 6+ letters) of ``word``
    after its first :data:`FUZZY_PREFIX` letters, with their similarity (Lucene's fuzzy
    boost: ``1 - distance / min(len(term), len(word))``), the closest and then the most
    frequent first, at most :data:`PREFIX_LIMIT`.

    Terms sharing the first three letters are read from the lexicon (at most
    :data:`FUZZY_SCAN`) and compared by rapidfuzz's optimal string alignment distance (a
    swap of two neighbours is one edit, as Whoosh's ``terms_within``); a typo in the third
    letter is found by looking up its :func:`_third_letter_edits` (so two edits there count
    only after the third letter). Reading every term with the first two letters took
    60 ms at 10k articles (issue 8); Whoosh's own pure-Python distance over them 0.1 s a
    field.
    """
    maxdist = 2 if len(word) >= 6 else 1
    found: dict[str, tuple[float, int]] = {}

    def consider(term: str) -> None:
        if abs(len(term) - len(word)) > maxdist or term in found:
            return
        dist = OSA.distance(word, term, score_cutoff=maxdist)
        if dist <= maxdist:
            similarity = 1.0 - dist / max(1, min(len(term), len(word)))
            found[term] = (similarity, reader.doc_frequency(fieldname, term))

    scan = word[:FUZZY_PREFIX + 1]
    try:
        for i, term in enumerate(reader.expand_prefix(fieldname, scan)):
            if i >= FUZZY_SCAN:
                break
            consider(term.decode("utf-8") if isinstance(term, bytes) else term)
    except KeyError:
        return []
    for term in _third_letter_edits(word):
        if not term.startswith(scan) and (fieldname, term) in reader:
            consider(term)
    ranked = sorted(found.items(), key=lambda x: (-x[1][0], -x[1][1], x[0]))
    return [(t, sim) for t, (sim, _) in ranked[:PREFIX_LIMIT]]


def _most_informative(reader, pool: list[tuple[str, ...]], keep: int) -> list[tuple[str, ...]]:
    """The ``keep`` words of ``pool`` (each a tuple of its term variants) that occur in the
    fewest documents (highest IDF), in their query order; words found nowhere are dropped."""
    ranked: list[tuple[int, int]] = []
    for i, vs in enumerate(pool):
        df = 0
        for t in vs:
            df = max(df, _df(reader, TRANSLIT_FIELD if t.startswith(KEY_MARK) else CONTENT_FIELD, t))
        if df:
            ranked.append((df, i))
    ranked.sort()
    return [pool[i] for _, i in sorted(ranked[:keep], key=lambda x: x[1])]


def build(items: list[_Item], filters: dict[str, list[str]], reader,
          extra: dict[str, Any] | None = None) -> tuple[wq.Query | None, set[str], wq.Query | None, int]:
    """Turn parsed items into a Whoosh query.

    ``extra``, when given, receives ``"rare"``: for a pasted ticket, the query of its
    :data:`TICKET_RARE` rarest words (the candidate step of :func:`search`).

    Returns:
        ``(query, highlight_terms, filter_query, word_count)``; ``query`` is ``None`` when
        every word was a stop word (then only filters apply).
    """
    groups: list[list[wq.Query]] = [[]]
    join_next = False
    # a pasted ticket: only its most informative words are searched (see MAX_QUERY_WORDS)
    long_query = (sum(1 for i in items if i.kind == "word") > MAX_QUERY_WORDS
                  and not any(i.kind == "and" for i in items))
    pool: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()
    highlight: set[str] = set()
    count = 0
    for item in items:
        if item.kind == "and":
            join_next = bool(groups[-1])
            continue
        q: wq.Query | None = None
        if item.kind == "word":
            variants: dict[int, list[str]] = {}
            for term, w in terms(item.text):
                group = variants.setdefault(w.pos * 2 + (0 if w.whole else 1), [])
                group.append(term)
                extra_key = article_key(w.text) if term.startswith(KEY_MARK) else None
                if extra_key and extra_key not in group:
                    group.append(extra_key)
            subs = []
            for key in sorted(variants):
                vs = tuple(variants[key])
                if vs in seen:
                    continue
                seen.add(vs)
                if long_query:
                    pool.append(vs)
                    continue
                highlight.update(vs)
                subs.append(_word_query(list(vs), reader))
            count += len(subs)
            if subs:
                q = subs[0] if len(subs) == 1 else _union(subs)
        elif item.kind == "phrase":
            kept = [(t, w.pos) for t, w in terms(item.text) if not w.whole and not t.startswith(KEY_MARK)]
            parts = [t for t, _ in kept]
            # stop words leave gaps in the positions (in the query as in the text): allow them
            slop = max([b - a for (_, a), (_, b) in zip(kept, kept[1:])] or [1])
            highlight.update(parts)  # the phrase matches plain terms only
            if len(parts) == 1:
                q = _word_query(parts)
            elif parts:
                q = _Phrase(parts, slop=max(1, slop))
            count += 1
        elif item.kind == "prefix":
            highlight.add(PREFIX_MARK + item.text)
            stems = _stems_of(reader, CONTENT_FIELD, item.text)
            highlight.update(stems)  # words found by their stem
            q = _Expansions([(t, 1.0) for t in _expand(reader, CONTENT_FIELD, item.text, stems)])
            count += 1
        elif item.kind == "fuzzy":
            expanded = _fuzzy(reader, CONTENT_FIELD, stem_word(item.text))
            highlight.update(t for t, _ in expanded)
            q = _Expansions(expanded) if expanded else wq.NullQuery
            count += 1
        if q is None:
            continue
        if join_next and groups[-1]:
            prev = groups[-1].pop()
            groups[-1].append(wq.And([prev, q]))
        else:
            groups[-1].append(q)
        join_next = False
    if pool:
        kept = _most_informative(reader, pool, MAX_QUERY_WORDS)
        for vs in kept:
            highlight.update(vs)
            groups[-1].append(_word_query(list(vs), reader))
        count += len(pool)
        if extra is not None:
            rarest = _most_informative(reader, pool, TICKET_RARE)
            if rarest:
                extra["rare"] = wq.Or([_word_query(list(vs), reader) for vs in rarest])
    clauses = [c for g in groups for c in g]
    query = None if not clauses else (clauses[0] if len(clauses) == 1 else _union(clauses))
    fq: list[wq.Query] = []
    for name, values in filters.items():
        alts: list[wq.Query] = []
        for v in values:
            if name == "node":
                alts.append(wq.Term("node", v))
                alts.append(wq.Prefix("node", v + "/"))
            elif name in ("owner", "tag", "state", "kind"):
                alts.append(wq.Term(name, v.lower()))
        fq.append(wq.Or(alts) if len(alts) > 1 else alts[0])
    filter_query = None if not fq else (fq[0] if len(fq) == 1 else wq.And(fq))
    return query, highlight, filter_query, count


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
    every word of a field (a third of a ``prefix*`` query at 10k articles)."""
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


_POSITIONS: dict[bytes, frozenset[int]] = {}
_NEXT_POSITIONS: dict[bytes, frozenset[int]] = {}
#: Posting values whose positions are remembered (most values are one position, and the
#: same bytes recur across documents).
POSITIONS_CACHE = 1 << 16


def _positions(value: bytes) -> frozenset[int]:
    """The positions in a posting value of Whoosh's ``Positions`` format (a count, then a
    pickled list of deltas; see :class:`~memtui.core.search.index.WeightedPositions`),
    remembered in :data:`_POSITIONS` (a plain dict: the phrase loop looks it up inline)."""
    got = _POSITIONS.get(value)
    if got is None:
        if len(_POSITIONS) >= POSITIONS_CACHE:
            _POSITIONS.clear()
        got = _POSITIONS[value] = frozenset(itertools.accumulate(pickle.loads(value[4:])))
    return got


def _next_positions(value: bytes) -> frozenset[int]:
    """:func:`_positions` plus one: where the next word of a phrase must be."""
    got = _NEXT_POSITIONS.get(value)
    if got is None:
        if len(_NEXT_POSITIONS) >= POSITIONS_CACHE:
            _NEXT_POSITIONS.clear()
        got = _NEXT_POSITIONS[value] = frozenset(p + 1 for p in _positions(value))
    return got


class _Phrase(wq.Query):
    """``"a phrase"``: documents with ``words`` in this order, each within ``slop``
    positions of the one before (Whoosh's ``Phrase`` semantics), scored as the sum of the
    words' BM25F scores (as Whoosh scores a phrase).

    Whoosh's phrase matcher checks each document holding every word through span objects,
    about 13 µs a document (issue 8: two common words with a rare phrase, 100 ms at 10k
    articles). Here the posting lists are read as arrays, the rarest first: a rare word's
    few documents are looked up in a common word's list by skipping blocks, and a
    document's positions are compared as sets.
    """

    def __init__(self, words: list[str], slop: int = 1) -> None:
        self.words = list(words)
        self.slop = slop
        self.boost = 1.0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Phrase) and (other.words, other.slop) == (self.words, self.slop)

    def __hash__(self) -> int:
        return hash((tuple(self.words), self.slop))

    def __repr__(self) -> str:
        return f"_Phrase({self.words!r}, slop={self.slop})"

    def is_leaf(self) -> bool:
        return True

    def terms(self, phrases: bool = True) -> Iterator[tuple[str, str]]:
        for w in self.words:
            yield CONTENT_FIELD, w

    def estimate_size(self, ixreader) -> int:  # noqa: ANN001
        return min((ixreader.doc_frequency(CONTENT_FIELD, w) for w in self.words), default=0)

    def matcher(self, searcher, context=None):  # noqa: ANN001, ANN201
        from whoosh.matching import ListMatcher, NullMatcher

        reader = searcher.reader()
        words = self.words
        if any((CONTENT_FIELD, w) not in reader for w in words):
            return NullMatcher()
        order = sorted(set(words), key=lambda w: reader.doc_frequency(CONTENT_FIELD, w))
        if len(order) == 2 and len(words) == 2 and self.slop == 1 and \
                reader.doc_frequency(CONTENT_FIELD, order[0]) * 8 >= reader.doc_frequency(CONTENT_FIELD, order[1]):
            found = _adjacent(reader, words[0], words[1])
            if not found:
                return NullMatcher()
            scorers = [searcher.weighting.scorer(searcher, CONTENT_FIELD, w) for w in words]
            ids = sorted(found)
            return ListMatcher(ids, weights=[(scorers[0]._score(found[d][0], scorers[0].dfl(d))
                                              + scorers[1]._score(found[d][1], scorers[1].dfl(d))) * self.boost
                                             for d in ids])
        postings: dict[str, dict[int, tuple[float, bytes]]] = {}
        candidates: list[int] | None = None
        for w in order:
            postings[w] = got = _postings_of(reader.postings(CONTENT_FIELD, w), candidates,
                                             reader.doc_frequency(CONTENT_FIELD, w))
            candidates = sorted(got) if candidates is None else [d for d in candidates if d in got]
            if not candidates:
                return NullMatcher()
        slop = self.slop
        ids: list[int] = []
        if len(words) == 2 and slop == 1:  # the common case, at about 1 µs a document
            first, second = postings[words[0]], postings[words[1]]
            ids = [d for d in candidates if not _next_positions(first[d][1]).isdisjoint(_positions(second[d][1]))]
        else:
            for d in candidates:
                starts: Iterable[int] = _positions(postings[words[0]][d][1])
                for w in words[1:]:
                    here = _positions(postings[w][d][1])
                    if slop == 1:
                        starts = here.intersection(p + 1 for p in starts)
                    else:
                        starts = {q for q in here if any(1 <= q - p <= slop for p in starts)}
                    if not starts:
                        break
                if starts:
                    ids.append(d)
        if not ids:
            return NullMatcher()
        scorers = {w: searcher.weighting.scorer(searcher, CONTENT_FIELD, w) for w in set(words)}
        scores = [sum(scorers[w]._score(postings[w][d][0], scorers[w].dfl(d)) for w in words) for d in ids]
        return ListMatcher(ids, weights=[s * self.boost for s in scores])


def _adjacent(reader, first: str, second: str) -> dict[int, tuple[float, float]]:  # noqa: ANN001
    """``{document: (weight of first, weight of second)}`` for the documents of a segment
    where ``second`` directly follows ``first``, when both posting lists are long: the
    rarer list is read into a dictionary, and the other streamed against it block by block
    (issue 8: two common words at 100k articles, 55,000 documents holding both)."""
    rare, common = sorted((first, second), key=lambda w: reader.doc_frequency(CONTENT_FIELD, w))
    values: dict[int, bytes] = {}
    weights: dict[int, float] = {}
    for ids, ws, vs in _posting_blocks(reader.postings(CONTENT_FIELD, rare), values=True):
        values.update(zip(ids, vs))
        weights.update(zip(ids, ws))
    found: dict[int, tuple[float, float]] = {}
    rare_first = rare == first
    at, after = _POSITIONS.get, _NEXT_POSITIONS.get  # inline cache lookups: ~1 µs a document
    for ids, ws, vs in _posting_blocks(reader.postings(CONTENT_FIELD, common), values=True):
        if rare_first:
            hits = [(d, w) for d, w, v in zip(ids, ws, vs)
                    if d in values and not (after(values[d]) or _next_positions(values[d])).isdisjoint(
                        at(v) or _positions(v))]
            found.update((d, (weights[d], w)) for d, w in hits)
        else:
            hits = [(d, w) for d, w, v in zip(ids, ws, vs)
                    if d in values and not (after(v) or _next_positions(v)).isdisjoint(
                        at(values[d]) or _positions(values[d]))]
            found.update((d, (w, weights[d])) for d, w in hits)
    return found


def _postings_of(matcher, only: list[int] | None, size: int) -> dict[int, tuple[float, bytes]]:  # noqa: ANN001
    """``{document: (weight, value)}`` of a segment's posting list of ``size`` postings;
    with ``only`` (sorted document numbers), just those: found by skipping (the blocks
    between them unread) when they are few against the list, else by reading it all."""
    out: dict[int, tuple[float, bytes]] = {}
    if only is not None and len(only) * 8 < size:
        for d in only:
            if not matcher.is_active():
                break
            if matcher.id() < d:
                matcher.skip_to(d)
                if not matcher.is_active():
                    break
            if matcher.id() == d:
                out[d] = (matcher.weight(), matcher.value())
        return out
    wanted = set(only) if only is not None else None
    for ids, weights, values in _posting_blocks(matcher, values=True):
        if wanted is None:
            out.update(zip(ids, zip(weights, values)))
        else:
            out.update((d, (w, v)) for d, w, v in zip(ids, weights, values) if d in wanted)
    return out


class _DocSet(wq.Query):
    """Matches the given documents (top-level numbers), scoring nothing: a candidate set
    to intersect a query with, so the query's long posting lists are skipped through."""

    def __init__(self, docnums: list[int], top_reader) -> None:  # noqa: ANN001
        self.docnums = sorted(set(docnums))
        self.leaves = list(top_reader.leaf_readers())
        self.boost = 1.0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _DocSet) and other.docnums == self.docnums

    def __hash__(self) -> int:
        return hash(tuple(self.docnums))

    def __repr__(self) -> str:
        return f"_DocSet({len(self.docnums)} documents)"

    def is_leaf(self) -> bool:
        return True

    def estimate_size(self, ixreader) -> int:  # noqa: ANN001
        return len(self.docnums)

    def matcher(self, searcher, context=None):  # noqa: ANN001, ANN201
        from whoosh.matching import ListMatcher, NullMatcher

        reader = searcher.reader()
        offset = next((off for leaf, off in self.leaves if leaf is reader), None)
        if offset is None:
            return NullMatcher()
        size = reader.doc_count_all()
        ids = [d - offset for d in self.docnums if offset <= d < offset + size]
        return ListMatcher(ids, weights=[0.0] * len(ids)) if ids else NullMatcher()  # adds no score


def _posting_blocks(matcher, skip: Callable[[float], bool] | None = None,
                    values: bool = False) -> Iterator[tuple[Any, ...] | None]:  # noqa: ANN001 - a Whoosh leaf matcher
    """``(document numbers, weights)`` (and ``values`` if asked) of each block of a
    segment's posting list, read as arrays (whoosh 2.7's ``W3LeafMatcher``: Whoosh keeps
    128 postings a block with their highest weight in its header; the deleted documents of
    a segment, which Whoosh's ``FilterMatcher`` hides, are left out); ``None`` for a block
    whose highest weight ``skip`` rejects, left unread. Any other matcher is one block,
    read posting by posting."""
    deleted: Any = ()
    if isinstance(matcher, FilterMatcher) and matcher._exclude:
        deleted, matcher = matcher._ids, matcher.child
    fast = ("_read_ids", "_read_weights", "_read_values", "_next_block", "block_max_weight")
    if not all(hasattr(matcher, a) for a in fast):
        block: tuple[list[Any], ...] = ([], [], [])
        while matcher.is_active():
            if matcher.id() not in deleted:
                block[0].append(matcher.id())
                block[1].append(matcher.weight())
                block[2].append(matcher.value() if values else None)
            matcher.next()
        yield block if values else block[:2]
        return
    while matcher.is_active():
        if skip is not None and skip(matcher.block_max_weight()):
            yield None
        else:
            matcher._read_ids()
            matcher._read_weights()
            arrays: tuple[Any, ...] = (matcher._ids, matcher._weights)
            if values:
                matcher._read_values()
                arrays += (matcher._values,)
            if deleted:
                kept = [row for row in zip(*arrays) if row[0] not in deleted]
                arrays = tuple([row[i] for row in kept] for i in range(len(arrays)))
            yield arrays
        matcher._next_block()


def expansion_score(weight: float, boost: float = 1.0) -> float:
    """A document's score for one expansion of ``prefix*`` or ``word~``: the posting's
    weighted frequency (BM25F's ``sum(w_f * tf_f)``, see
    :class:`~memtui.core.search.index.WeightedPositions`) capped at :data:`PREFIX_CAP`,
    times the expansion's ``boost`` (1 for a prefix; the similarity for a fuzzy word). So
    a title word (2) ranks above a body word (1), and no expansion outweighs much of a
    whole-word match. Constant per document, as Lucene's rewrite of prefix and fuzzy
    queries (no IDF, no length), so reading postings suffices: a document scores its
    best expansion."""
    return min(weight, PREFIX_CAP) * boost


class _Expansions(wq.Query):
    """``prefix*`` or ``word~`` in a longer query: a document scores
    :func:`expansion_score` of its best expansion.

    ``terms`` are ``(term, boost)`` pairs (:func:`_expand`: the most frequent
    :data:`PREFIX_LIMIT`; :func:`_fuzzy`). BM25 over every expansion scored each posting in
    Python through a matcher per expansion (issue 8: a 3-letter prefix took 1.8 s at 10k
    articles, a fuzzy word 130 ms); this reads the postings' arrays only.
    """

    def __init__(self, terms: list[tuple[str, float]]) -> None:
        self.terms = list(terms)
        self.boost = 1.0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Expansions) and other.terms == self.terms

    def __hash__(self) -> int:
        return hash(tuple(self.terms))

    def __repr__(self) -> str:
        return f"_Expansions({len(self.terms)} terms)"

    def is_leaf(self) -> bool:
        return True

    def estimate_size(self, ixreader) -> int:  # noqa: ANN001
        return sum(ixreader.doc_frequency(CONTENT_FIELD, t) for t, _ in self.terms)

    def matcher(self, searcher, context=None):  # noqa: ANN001, ANN201
        from whoosh.matching import ListMatcher, NullMatcher

        reader = searcher.reader()
        best: dict[int, float] = {}
        for t, boost in self.terms:
            if (CONTENT_FIELD, t) not in reader:
                continue
            for ids, weights in _posting_blocks(reader.postings(CONTENT_FIELD, t)):
                for d, w in zip(ids, weights):
                    score = expansion_score(w, boost)
                    if best.get(d, 0.0) < score:
                        best[d] = score
        if not best:
            return NullMatcher()
        ids = sorted(best)
        return ListMatcher(ids, weights=[best[d] for d in ids])


def _prefix_expansions(prefix: str, stems: list[str]) -> Callable[[Any], Iterator[tuple[bytes, Any, float]]]:
    """The expansions of ``prefix*`` in one segment, for :func:`_expansions_alone`: its
    first :data:`PREFIX_SCAN` terms with the prefix, in lexicon order (one walk of the
    lexicon, no lookups), then ``stems`` (:func:`_stems_of` the prefix)."""
    encoded = [t.encode("utf-8") for t in stems]

    def of(leaf) -> Iterator[tuple[bytes, Any, float]]:  # noqa: ANN001
        for term, info in itertools.islice(leaf.iter_prefix(CONTENT_FIELD, prefix), PREFIX_SCAN):
            yield term, info, 1.0
        for term in encoded:
            if (CONTENT_FIELD, term) in leaf:
                yield term, leaf.term_info(CONTENT_FIELD, term), 1.0
    return of


def _listed_expansions(terms: list[tuple[str, float]]) -> Callable[[Any], Iterator[tuple[bytes, Any, float]]]:
    """The expansions ``terms`` (``(term, boost)``, highest boost first: :func:`_fuzzy`)
    present in one segment, for :func:`_expansions_alone`."""
    encoded = [(t.encode("utf-8"), boost) for t, boost in terms]

    def of(leaf) -> Iterator[tuple[bytes, Any, float]]:  # noqa: ANN001
        for term, boost in encoded:
            if (CONTENT_FIELD, term) in leaf:
                yield term, leaf.term_info(CONTENT_FIELD, term), boost
    return of


def _expansions_alone(searcher, expansions: Callable[[Any], Iterator[tuple[bytes, Any, float]]], limit: int,
                      mask: set[int] | None, filter_query) -> tuple[list[tuple[int, float]], int, bool]:  # noqa: ANN001
    """The top ``limit`` documents of a query that is one ``prefix*`` or ``word~`` (and
    filters), scored by :func:`expansion_score` of their best expansion.

    ``expansions(segment reader)`` yields a segment's ``(term, term info, boost)``, boosts
    never rising. An expansion or a posting block (128 postings, with its highest weight
    in its header) that cannot beat the page's worst score is skipped unread, and a
    segment's walk stops once the page is full at the highest score the remaining
    expansions can give (issue 8: ``dre*`` at 100k articles matches most documents; a page
    fills from a few blocks). Of equal scores, the documents read first stay on the page,
    and the page shows the shorter (weighted length) first.

    Returns:
        ``(docnum, score)`` best first, how many documents were found, and whether that
        count is complete (else a lower bound).
    """
    reader = searcher.reader()
    allowed = set(searcher.docs_for_query(filter_query)) if filter_query is not None else None
    best: dict[int, float] = {}
    page: list[tuple[float, int]] = []  # min-heap of (score, -docnum), stale entries skipped
    found: set[int] = set()
    skipped = False

    def floor() -> float:
        """The page's worst score once it is full (a document must beat it), else -1."""
        while page and best.get(-page[0][1]) != page[0][0]:
            heapq.heappop(page)
        return page[0][0] if len(best) >= limit and page else -1.0

    for leaf, offset in reader.leaf_readers():
        for term, info, boost in expansions(leaf):
            if floor() >= PREFIX_CAP * boost:
                skipped = True  # a full page nothing unread in this segment can enter
                break
            if expansion_score(info.max_weight(), boost) <= floor():
                skipped = True
                continue
            blocks = _posting_blocks(leaf.postings(CONTENT_FIELD, term),
                                     skip=lambda w: expansion_score(w, boost) <= floor())
            for block in blocks:
                if block is None:
                    skipped = True
                    continue
                for d, w in zip(*block):
                    d += offset
                    if (mask is not None and d in mask) or (allowed is not None and d not in allowed):
                        continue
                    found.add(d)
                    score = expansion_score(w, boost)
                    if score <= best.get(d, 0.0) or score <= floor():
                        continue
                    if len(best) >= limit and d not in best:
                        worst = heapq.heappop(page)  # floor() left a live entry on top
                        del best[-worst[1]]
                    best[d] = score
                    heapq.heappush(page, (score, -d))
    # equal scores: the shorter document first (its match is more of it, as BM25 weighs)
    ranked = sorted(best.items(), key=lambda x: (-x[1], reader.doc_field_length(x[0], CONTENT_FIELD, 0), x[0]))
    return ranked, len(found), not skipped


def _length_bytes(leaf, fieldname: str) -> Any:  # noqa: ANN001
    """A segment's per-document length bytes of ``fieldname`` as loaded into memory by
    :func:`memtui.core.search.index._load_lengths`, else ``None``."""
    cache = getattr(getattr(leaf, "_perdoc", None), "_readers", None)
    column = cache.get(f"_{fieldname}_len") if isinstance(cache, dict) else None
    return column if isinstance(column, bytearray) else None


def _term_alone(searcher, term: str, boost: float, limit: int,
                mask: set[int] | None) -> tuple[list[tuple[int, float]], int]:  # noqa: ANN001
    """The top ``limit`` documents of a query that is one word of :data:`CONTENT_FIELD`,
    scored exactly as Whoosh's BM25F scores a ``Term`` (same formula, same order of
    operations, same tie order: lower document number first).

    Whoosh scores a common word posting by posting through its collector, about 2 µs each,
    and cannot skip its blocks: every block holds some short document (an index line)
    whose bound reaches the page (issue 8: ``route`` at 100k articles, 96,252 documents,
    200 ms). Here each block's scores are computed in one comprehension from the weights
    and the segment's length bytes, and a block whose bound (its highest weight at its
    shortest length) cannot beat the page's worst score is skipped unread.

    Returns:
        ``(docnum, score)`` best first, and the number of matching documents (the
        postings of skipped blocks counted without the mask, as Whoosh's estimate).
    """
    reader = searcher.reader()
    scorer = searcher.weighting.scorer(searcher, CONTENT_FIELD, term)
    idf, avgfl, B, K1 = scorer.idf, scorer.avgfl, scorer.B, scorer.K1
    # whoosh.scoring.bm25: idf * ((tf * (K1 + 1)) / (tf + K1 * ((1 - B) + B * fl / avgfl)))
    norms = _norms(B, K1, avgfl)
    page: list[tuple[float, int]] = []  # min-heap of (score, -docnum)
    total = 0

    def bound(max_weight: float, min_length: float) -> float:
        return idf * ((max_weight * (K1 + 1)) / (max_weight + K1 * ((1 - B) + B * min_length / avgfl))) * boost

    for leaf, offset in reader.leaf_readers():
        if (CONTENT_FIELD, term) not in leaf:
            continue
        lengths = _length_bytes(leaf, CONTENT_FIELD)
        matcher = leaf.postings(CONTENT_FIELD, term)
        leaf_matcher = matcher.child if isinstance(matcher, FilterMatcher) else matcher
        if lengths is None:
            get = leaf.doc_field_length
            lengths = bytearray(length_to_byte(get(d, CONTENT_FIELD, 1)) for d in range(leaf.doc_count_all()))

        def skip(max_weight: float, m=leaf_matcher) -> bool:  # noqa: ANN001
            if len(page) < limit:
                return False
            if bound(max_weight, m.block_min_length()) <= page[0][0]:
                nonlocal total
                total += m._blocklength
                return True
            return False

        for block in _posting_blocks(matcher, skip=skip):
            if block is None:
                continue
            ids, weights = block
            scores = [idf * ((w * (K1 + 1)) / (w + norms[lengths[d]])) * boost for d, w in zip(ids, weights)]
            for d, score in zip(ids, scores):
                d += offset
                if mask is not None and d in mask:
                    continue
                total += 1
                if len(page) < limit:
                    heapq.heappush(page, (score, -d))
                elif score > page[0][0]:
                    heapq.heapreplace(page, (score, -d))
    ranked = sorted(((-d, score) for score, d in page), key=lambda x: (-x[1], x[0]))
    return ranked, total


@functools.lru_cache(maxsize=64)
def _norms(B: float, K1: float, avgfl: float) -> list[float]:
    """BM25's length part ``K1 * ((1 - B) + B * fl / avgfl)`` for each of the 256 length
    bytes (``fl`` as Whoosh decodes it), computed as Whoosh computes it."""
    return [K1 * ((1 - B) + B * byte_to_length(b) / avgfl) for b in range(256)]


# -- searching --------------------------------------------------------------------------------
def search(index: SearchIndex, text: str, limit: int = 10, include_proposed: bool = False,
           kinds: list[str] | None = None, snippets: bool = True) -> Results:
    """Run the query ``text`` over ``index``.

    Args:
        index: an opened (or openable) :class:`SearchIndex`; it is not updated here.
        text: the query (see the module docstring), or a pasted ticket.
        limit: most hits returned (the total is counted anyway).
        include_proposed: include proposals and retired versions.
        kinds: extra ``kind:`` filter values (the CLI's ``--kind``).
        snippets: compute highlighted snippets (off for the triage test's speed).

    Returns:
        :class:`Results`. An index found damaged (on opening or while searching) or of an
        older schema is rebuilt from the files first and the search repeated once; the
        repair's finding (``search-index-damaged``) is in ``Results.findings`` (``B06``).

    Raises:
        QueryError: the query cannot be used (what is wrong is in the message).
        memtui.core.search.index.IndexBusyError / IndexWriteError: only when a repair is
            needed and cannot be done.
    """
    started = time.perf_counter()
    items, filters = parse(text) if text.strip() or not kinds else ([], {})
    for k in kinds or []:
        if k not in KINDS:
            raise QueryError(f"--kind {k} is not a kind; use one of: {', '.join(KINDS)}")
        filters.setdefault("kind", []).append(k)
    if not items and not filters:
        raise QueryError("the query is empty; type a word, a \"phrase\", a prefix* or a filter")
    findings: list[Any] = []
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
                return _run(index, items, filters, limit, include_proposed, snippets, started, findings).assess()
        except Exception as exc:  # noqa: BLE001 - only damage is handled here
            if attempt or not is_damage(exc):
                raise
            report = index.repair(exc)
            findings.extend(report.findings)
    raise AssertionError("unreachable")  # pragma: no cover


def _run(index, items, filters, limit, include_proposed, snippets, started, findings) -> Results:
    searcher = index.searcher()  # kept between searches (SearchIndex.searcher)
    reader = searcher.reader()
    mask = None
    if not include_proposed and "state" not in filters:
        # a set of document numbers: a query as mask is re-checked per document (slow)
        hidden = wq.Or([wq.Term("state", s) for s in HIDDEN_STATES])
        mask = set(searcher.docs_for_query(hidden)) or None
    if len(items) == 1 and items[0].kind in ("prefix", "fuzzy"):
        _, _, filter_query, count = build([], filters, reader)
        if items[0].kind == "prefix":
            stems = _stems_of(reader, CONTENT_FIELD, items[0].text)
            expansions = _prefix_expansions(items[0].text, stems)
            highlight = {PREFIX_MARK + items[0].text, *stems}
        else:
            terms = _fuzzy(reader, CONTENT_FIELD, stem_word(items[0].text))
            expansions = _listed_expansions(terms)
            highlight = {t for t, _ in terms}
        ranked, total, complete = _expansions_alone(searcher, expansions, limit, mask, filter_query)
        hits = [_hit(searcher.stored_fields(d), score, count, highlight, snippets) for d, score in ranked]
        return Results(hits=hits, total=max(len(hits), total), ms=(time.perf_counter() - started) * 1000,
                       query_words=count or 1, findings=findings, at_least=not complete)
    extra: dict[str, Any] = {}
    query, highlight, filter_query, count = build(items, filters, reader, extra)
    if query is not None and "rare" in extra:
        # a pasted ticket: score it in full only on the documents its rarest words rank
        # first (each common word's posting list is walked by skipping, not in full)
        rare = extra["rare"] if filter_query is None else wq.And([extra["rare"], filter_query.with_boost(0.0)])
        candidates = [h.docnum for h in searcher.search(rare, limit=TICKET_CANDIDATES, mask=mask)]
        if candidates:
            query = wq.And([query, _DocSet(candidates, reader)])
    if isinstance(query, wq.Term) and query.fieldname == CONTENT_FIELD and filter_query is None:
        ranked, total = _term_alone(searcher, query.text, query.boost, limit, mask)
        hits = [_hit(searcher.stored_fields(d), score, count, highlight, snippets) for d, score in ranked]
        full = len(hits) >= limit
        return Results(hits=hits, total=max(len(hits), total) if full else len(hits),
                       ms=(time.perf_counter() - started) * 1000, query_words=count, findings=findings,
                       estimated=full)
    if query is None:
        query = filter_query if filter_query is not None else wq.NullQuery
        filter_query = None
    elif filter_query is not None:
        # a filter as a zero-weight required clause: the intersection skips along the
        # filter's postings, where a collector filter checks every match (2x at 10k)
        query = wq.And([query, filter_query.with_boost(0.0)])
        filter_query = None
    # no terms=True and no len(res): both walk every matching document (LIBRARY-NOTES)
    res = searcher.search(query, limit=limit, filter=filter_query, mask=mask)
    hits = [_hit(r.fields(), float(r.score or 0.0), count, highlight, snippets) for r in res]
    # fewer hits than the limit: every match was collected, so the count is exact (Whoosh's
    # estimate adds up its clauses' sizes and ignores filters and hidden states)
    full = len(hits) >= limit
    return Results(hits=hits, total=max(len(hits), res.estimated_length()) if full else len(hits),
                   ms=(time.perf_counter() - started) * 1000, query_words=count, findings=findings,
                   estimated=full)


def _hit(stored: dict[str, Any], score: float, count: int, highlight: set[str], snippets: bool) -> Hit:
    hit = Hit(kind=stored.get("kind", ""), path=stored.get("path", ""),
              node=stored.get("node", ""), state=stored.get("state", ""),
              score=score, title=stored.get("title", ""),
              entry_id=stored.get("entry_id", ""), target=stored.get("target", ""),
              line=stored.get("line"), confidence=confidence(score, count))
    if snippets:
        hit.snippet = snippet_for(stored, highlight)
    return hit
