"""The Whoosh side of a search (the engine's one door): a parsed query plan turned
into Whoosh queries and matched, BM25F over the one weighted text field, with memtui's
array-based paths where Whoosh's per-posting Python loop was the cost (a lone word,
phrases, prefixes and fuzzy words, ``a AND b``, and words any of which may match when no
exact total is asked for, as the evaluations of a change ask; each tested to give Whoosh's
documents, scores and tie order). What comes out is a :class:`Ranking`: stored fields and scores, best first.
"""

from __future__ import annotations

import functools
import heapq
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from whoosh import query as wq
from whoosh.matching.wrappers import FilterMatcher
from whoosh.util.numeric import byte_to_length, length_to_byte

from memtui.core.search.analysis import KEY_MARK, latin_digits, reading_keys, stem_word, terms
from memtui.core.search.engine.codec import decode_positions
from memtui.core.search.engine.index import SearchIndex
from memtui.core.search.plan import PREFIX_MARK, PREFIX_MIN, Item
from memtui.core.search.sources import CONTENT_FIELD, TEXT_FIELDS, TRANSLIT_FIELD, TRANSLIT_WEIGHT

#: A query of more plain words than this (a pasted ticket) searches only this many of them:
#: those occurring in the fewest documents (highest IDF). Common words add little to BM25F
#: but each costs a pass over a long posting list (tickets were the slowest queries).
MAX_QUERY_WORDS = 16
#: Letters of a ``word~`` taken as typed (the edit distance applies to the rest). With 1,
#: ``adress~`` walked every body term starting with ``a`` (a large share of the lexicon).
#: The lexicon is read from the third letter on (see :func:`_fuzzy`).
FUZZY_PREFIX = 2
#: A pasted ticket is scored in full only on the first TICKET_CANDIDATES documents that its
#: TICKET_RARE rarest words find (scoring every match of 16 words grew with the index).
TICKET_RARE = 6
TICKET_CANDIDATES = 300
#: The sound key of an ASCII word is searched only when it finds more than this many times
#: the documents its plain term finds (see :func:`_word_query`).
KEY_GAIN = 1.5
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
#: States hidden unless asked for.
HIDDEN_STATES = ("proposed", "retired", "rejected")
#: Weight of a word's second-best field match relative to its best (DisjunctionMax tiebreak).
FIELD_TIEBREAK = 0.3
#: An ``Or`` of words with no total asked for is ranked by :func:`_disjunction` (the same
#: documents, scores and order as Whoosh's collector; off: Whoosh ranks it).
ARRAY_OR = True
#: Results whose :func:`coverage` of the query is measured (the answer's confidence reads
#: the best items': :mod:`memtui.core.search.confidence`).
COVERED_DOCS = 10


@dataclass(slots=True)
class Ranking:
    """What :func:`rank` found: ``docs`` as ``(stored fields, score)`` best first, ``total``
    matches (see :class:`memtui.core.search.query.Results` for ``at_least``/``estimated``),
    the query's word count and the terms to highlight."""

    docs: list[tuple[dict[str, Any], float]]
    total: int
    words: int
    highlight: set[str] = field(default_factory=set)
    at_least: bool = False
    estimated: bool = False
    #: The query's plain words found in the index: ``(term variants, idf)`` (see :func:`coverage`).
    terms: list[tuple[tuple[str, ...], float]] = field(default_factory=list)
    #: For each of the first :data:`COVERED_DOCS` of ``docs``, the share of the query's word
    #: weight it holds (:func:`coverage`); nothing for the others.
    coverage: list[float] = field(default_factory=list)
    #: For each of the first :data:`COVERED_DOCS` of ``docs``, the indexes into ``terms`` of
    #: the query's words it holds (what a reason for setting it apart names).
    holds: list[set[int]] = field(default_factory=list)
    #: The share (0…1) of the query's distinct plain words that occur in the index at all
    #: (``None``: the query has no plain word): a ticket about something the memory never
    #: mentions has words it does not know, which :func:`coverage` leaves out.
    known: float | None = None
    #: Of the query's words the index holds, the share (0…1) it holds only under their sound
    #: key (a Latin-typed Bulgarian word, a transliteration); ``None`` where ``known`` is.
    keyed: float | None = None


# -- building ---------------------------------------------------------------------------------
def _union(subs: list[wq.Query]) -> wq.Or:
    """``Or(subs)`` matched by Whoosh's tree of union matchers in every segment. Whoosh
    otherwise preloads and scores every match of a segment under 5,000 documents (its
    ``ArrayUnionMatcher``: no pruning; a build leaves such segments, and each save adds one)."""
    q = wq.Or(subs)
    q.matcher_type = wq.Or.DEFAULT_MATCHER
    return q


def _kept_on(obj, name: str) -> dict | None:  # noqa: ANN001 - a Whoosh reader or searcher
    """The dict of values remembered on ``obj`` (a reader or searcher the index keeps between
    searches) under attribute ``name``, made on first use; ``None`` when ``obj`` takes no
    attributes (then nothing is remembered)."""
    cache = getattr(obj, name, None)
    if cache is None:
        cache = {}
        try:
            setattr(obj, name, cache)
        except AttributeError:
            return None
    return cache


def _df(reader, fieldname: str, term: str) -> int:  # noqa: ANN001 - a Whoosh reader
    """``reader.doc_frequency(fieldname, term)``, remembered on the reader (immutable; the
    index's searcher and its reader are kept between searches): each lookup reads every
    segment's term table, and a pasted ticket asks for its words' frequencies several
    times."""
    cache = _kept_on(reader, "_memtui_df")
    if cache is None:
        return reader.doc_frequency(fieldname, term)
    key = (fieldname, term)
    got = cache.get(key)
    if got is None:
        if len(cache) > DF_CACHE:
            cache.clear()
        got = cache[key] = reader.doc_frequency(fieldname, term)
    return got


def _word_query(term_variants: list[str], reader=None, weight: float = 1.0) -> wq.Query:
    """One query word: its plain term in :data:`CONTENT_FIELD` (BM25F over the weighted
    fields) and its sound key in the ``translit`` field; the best match counts, the others
    add :data:`FIELD_TIEBREAK` of theirs.

    With a ``reader``, the sound key of a word typed in ASCII is left out when it finds at
    most :data:`KEY_GAIN` times the documents its plain term finds: then it is the same word
    in the same script, and a second long posting list for nothing (most of the CPU of an OR
    of common words). A Latin-typed Bulgarian word (``polica``), rare as typed
    and common as a key, keeps its key; so does every Cyrillic word. ``weight`` scales the
    word's score (a word of a pasted ticket's quoted history counts less).
    """
    subs = [wq.Term(TRANSLIT_FIELD, t, boost=TRANSLIT_WEIGHT * weight) if t.startswith(KEY_MARK)
            else wq.Term(CONTENT_FIELD, t, boost=weight) for t in _searched(term_variants, reader)]
    if len(subs) == 1:
        return subs[0]
    return wq.DisjunctionMax(subs, tiebreak=FIELD_TIEBREAK)


def _searched(term_variants: list[str], reader=None) -> list[str]:  # noqa: ANN001
    """The variants of one query word that :func:`_word_query` searches: all but the sound
    keys it leaves out (see there). What is highlighted too: a left-out key found nothing
    the plain term did not, and highlighting by a key analyses every word of a snippet's
    text for its sound (most of a rare word's snippet time)."""
    plain_df = 0
    ascii_word = all(t.isascii() for t in term_variants if not t.startswith(KEY_MARK))
    if reader is not None and ascii_word:
        plain_df = max((_df(reader, CONTENT_FIELD, t) for t in term_variants if not t.startswith(KEY_MARK)), default=0)
    return [t for t in term_variants
            if not (t.startswith(KEY_MARK) and plain_df and _df(reader, TRANSLIT_FIELD, t) <= KEY_GAIN * plain_df)]


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
    only after the third letter). Reading every term with the first two letters, and
    Whoosh's own pure-Python distance over them, were the cost of a fuzzy word.
    """
    from rapidfuzz.distance import OSA  # only a fuzzy word needs it

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


def _most_informative(reader, pool: list[tuple[str, ...]], keep: int,
                      weights: list[float] | None = None) -> list[tuple[str, ...]]:
    """The ``keep`` words of ``pool`` (each a tuple of its term variants) that occur in the
    fewest documents (highest IDF), in their query order; words found nowhere are dropped.
    With ``weights`` (one per word), heavier words are taken first (a pasted ticket's own
    words before its quoted history's), the rarest first within a weight."""
    ranked: list[tuple[float, int, int]] = []
    for i, vs in enumerate(pool):
        df = 0
        for t in vs:
            df = max(df, _df(reader, TRANSLIT_FIELD if t.startswith(KEY_MARK) else CONTENT_FIELD, t))
        if df:
            ranked.append((-(weights[i] if weights else 1.0), df, i))
    ranked.sort()
    return [pool[i] for _, _, i in sorted(ranked[:keep], key=lambda x: x[2])]


def _candidate_words(reader, words: list[tuple[str, ...]]) -> list[tuple[str, ...]]:  # noqa: ANN001
    """The words of a pasted ticket whose documents are its candidates: the
    :data:`TICKET_RARE` rarest, and more of the next rarest while their document frequencies
    add up to under :data:`TICKET_CANDIDATES` (in a small memory the six
    rarest words can occur in a handful of documents, and a precedent that shared only the
    ticket's less rare words was never scored). A word added so is found in fewer than
    :data:`TICKET_CANDIDATES` documents, so the candidate step stays bounded."""
    ranked = sorted((max(_df(reader, TRANSLIT_FIELD if t.startswith(KEY_MARK) else CONTENT_FIELD, t) for t in vs), i)
                    for i, vs in enumerate(words))
    keep: list[int] = []
    total = 0
    for df, i in ranked:
        if not df:
            continue
        if len(keep) >= TICKET_RARE and total + df > TICKET_CANDIDATES:
            break
        keep.append(i)
        total += df
    return [words[i] for i in sorted(keep)]


def build(items: list[Item], filters: dict[str, list[str]], reader,
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
    weights: dict[tuple[str, ...], float] = {}
    seen: set[tuple[str, ...]] = set()
    highlight: set[str] = set()
    count = 0
    for item in items:
        if item.kind == "and":
            join_next = bool(groups[-1])
            continue
        q: wq.Query | None = None
        if item.kind == "word":
            variants = _word_variants(item.text)
            subs = []
            for key in sorted(variants):
                vs = tuple(variants[key])
                if vs in seen:
                    continue
                seen.add(vs)
                weights[vs] = item.weight
                if extra is not None:
                    extra.setdefault("words", []).append(vs)
                if long_query:
                    pool.append(vs)
                    continue
                highlight.update(_searched(list(vs), reader))
                subs.append(_word_query(list(vs), reader, item.weight))
            count += len(subs)
            if subs:
                q = subs[0] if len(subs) == 1 else _union(subs)
        elif item.kind == "phrase":
            q, parts = _phrase_query(item.text)
            highlight.update(parts)  # the phrase matches plain terms only
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
        count += _add_informative(pool, weights, reader, groups[-1], highlight, extra)
    if extra is not None:
        extra["weights"] = weights
    clauses = [c for g in groups for c in g]
    query = None if not clauses else (clauses[0] if len(clauses) == 1 else _union(clauses))
    return query, highlight, _filter_query(filters), count


def _word_variants(text: str) -> dict[int, list[str]]:
    """The terms of one query word, grouped by the word they come from (a whole word and
    its parts apart), each Latin-typed word's sound key with its other readings."""
    variants: dict[int, list[str]] = {}
    for term, w in terms(latin_digits(text)):
        group = variants.setdefault(w.pos * 2 + (0 if w.whole else 1), [])
        group.append(term)
        if term.startswith(KEY_MARK):  # the other readings of a Latin-typed word
            group.extend(k for k in reading_keys(w.text) if k not in group)
    return variants


def _phrase_query(text: str) -> tuple[wq.Query | None, list[str]]:
    """The query of a quoted phrase and its plain terms (``None`` when it holds only stop
    words); stop words leave gaps in the positions, in the query as in the text, so the
    phrase allows them."""
    kept = [(t, w.pos) for t, w in terms(text) if not w.whole and not t.startswith(KEY_MARK)]
    parts = [t for t, _ in kept]
    slop = max([b - a for (_, a), (_, b) in zip(kept, kept[1:], strict=False)] or [1])
    if len(parts) == 1:
        return _word_query(parts), parts
    if parts:
        return _Phrase(parts, slop=max(1, slop)), parts
    return None, parts


def _add_informative(pool: list[tuple[str, ...]], weights: dict[tuple[str, ...], float], reader,  # noqa: ANN001
                     clauses: list[wq.Query], highlight: set[str], extra: dict[str, Any] | None) -> int:
    """Add the most informative words of a pasted ticket's ``pool`` to ``clauses`` (and
    their terms to ``highlight``), and its rarest words' query to ``extra["rare"]``;
    returns the words it counts for (each set-apart word counts as its weight)."""
    informative = _most_informative(reader, pool, MAX_QUERY_WORDS, [weights[vs] for vs in pool])
    for vs in informative:
        highlight.update(_searched(list(vs), reader))
        clauses.append(_word_query(list(vs), reader, weights[vs]))
    if extra is not None:
        rarest = _candidate_words(reader, informative)
        if rarest:
            extra["rare"] = wq.Or([_word_query(list(vs), reader, weights[vs]) for vs in rarest])
    return max(1, round(sum(weights[vs] for vs in pool)))


def _filter_query(filters: dict[str, list[str]]) -> wq.Query | None:
    """The filters as one query (``None`` when there are none): a filter given twice
    accepts either value; ``node:`` takes the node and its sub-nodes."""
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
    return None if not fq else (fq[0] if len(fq) == 1 else wq.And(fq))


_POSITIONS: dict[bytes, frozenset[int]] = {}
_NEXT_POSITIONS: dict[bytes, frozenset[int]] = {}
#: Posting values whose positions are remembered (most values are one position, and the
#: same bytes recur across documents).
POSITIONS_CACHE = 1 << 16


def _positions(value: bytes) -> frozenset[int]:
    """The positions in a posting value (memtui's compact encoding,
    :func:`~memtui.core.search.engine.codec.encode_positions`), remembered in
    :data:`_POSITIONS` (a plain dict: the phrase loop looks it up inline)."""
    got = _POSITIONS.get(value)
    if got is None:
        if len(_POSITIONS) >= POSITIONS_CACHE:
            _POSITIONS.clear()
        got = _POSITIONS[value] = frozenset(decode_positions(value))
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

    Whoosh's phrase matcher checks each document holding every word through span objects
    (two common words with a rare phrase were among the slowest queries). Here the
    posting lists are read as arrays, the rarest first: a rare word's
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
        return min((_df(ixreader, CONTENT_FIELD, w) for w in self.words), default=0)

    def matcher(self, searcher, context=None):  # noqa: ANN001, ANN201
        from whoosh.matching import ListMatcher, NullMatcher

        reader = searcher.reader()
        words = self.words
        # frequencies remembered on the segment's reader (kept across searches): each lookup
        # reads the segment's term table, several times a word and segment otherwise
        if any(_df(reader, CONTENT_FIELD, w) == 0 for w in words):
            return NullMatcher()
        order = sorted(set(words), key=lambda w: _df(reader, CONTENT_FIELD, w))
        if len(order) == 2 and len(words) == 2 and self.slop == 1 and \
                _df(reader, CONTENT_FIELD, order[0]) * 8 >= _df(reader, CONTENT_FIELD, order[1]):
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
                                             _df(reader, CONTENT_FIELD, w))
            candidates = sorted(got) if candidates is None else [d for d in candidates if d in got]
            if not candidates:
                return NullMatcher()
        slop = self.slop
        ids: list[int] = []
        if len(words) == 2 and slop == 1:  # the common case: set operations, no loop a position
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
    (two common words, most documents holding both)."""
    rare, common = sorted((first, second), key=lambda w: _df(reader, CONTENT_FIELD, w))
    values: dict[int, bytes] = {}
    weights: dict[int, float] = {}
    for ids, ws, vs in _value_blocks(reader.postings(CONTENT_FIELD, rare)):
        values.update(zip(ids, vs, strict=False))
        weights.update(zip(ids, ws, strict=False))
    found: dict[int, tuple[float, float]] = {}
    rare_first = rare == first
    at, after = _POSITIONS.get, _NEXT_POSITIONS.get  # inline cache lookups: no call a document
    for ids, ws, vs in _value_blocks(reader.postings(CONTENT_FIELD, common)):
        both = [i for i, d in enumerate(ids) if d in values]  # a value is cut only when needed
        if rare_first:
            hits = [(ids[i], ws[i]) for i in both
                    if not (after(values[ids[i]]) or _next_positions(values[ids[i]])).isdisjoint(
                        at(vs[i]) or _positions(vs[i]))]
            found.update((d, (weights[d], w)) for d, w in hits)
        else:
            hits = [(ids[i], ws[i]) for i in both
                    if not (after(vs[i]) or _next_positions(vs[i])).isdisjoint(
                        at(values[ids[i]]) or _positions(values[ids[i]]))]
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
    for ids, weights, values in _value_blocks(matcher):
        if wanted is None:
            out.update(zip(ids, zip(weights, values, strict=False), strict=False))
        else:
            out.update((d, (w, v)) for d, w, v in zip(ids, weights, values, strict=False) if d in wanted)
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
                kept = [row for row in zip(*arrays, strict=False) if row[0] not in deleted]
                arrays = tuple([row[i] for row in kept] for i in range(len(arrays)))
            yield arrays
        matcher._next_block()


def _value_blocks(matcher) -> Iterator[tuple[Any, Any, Any]]:  # noqa: ANN001 - a Whoosh leaf matcher
    """:func:`_posting_blocks` with values and no skipping: every block's
    ``(document numbers, weights, values)``."""
    for block in _posting_blocks(matcher, values=True):
        if block is not None:
            yield block[0], block[1], block[2]


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
    Python through a matcher per expansion (short prefixes were the slowest
    queries); this reads the postings' arrays only.
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
        return sum(_df(ixreader, CONTENT_FIELD, t) for t, _ in self.terms)

    def matcher(self, searcher, context=None):  # noqa: ANN001, ANN201
        from whoosh.matching import ListMatcher, NullMatcher

        reader = searcher.reader()
        best: dict[int, float] = {}
        for t, boost in self.terms:
            if (CONTENT_FIELD, t) not in reader:
                continue
            for ids, weights in _posting_blocks(reader.postings(CONTENT_FIELD, t)):
                for d, w in zip(ids, weights, strict=False):
                    score = expansion_score(w, boost)
                    if best.get(d, 0.0) < score:
                        best[d] = score
        if not best:
            return NullMatcher()
        ids = sorted(best)
        return ListMatcher(ids, weights=[best[d] for d in ids])


def _prefix_expansions(prefix: str, stems: list[str]) -> Callable[[Any], Iterator[tuple[bytes, Any, float]]]:
    """The expansions of ``prefix*`` in one segment, for :func:`_expansions_alone`: every
    term with the prefix, in lexicon order (one walk of the lexicon, no lookups; no cap, as
    in SQLite FTS5 or Lucene: what cannot reach the page is skipped unread), then ``stems``
    (:func:`_stems_of` the prefix)."""
    encoded = [t.encode("utf-8") for t in stems]

    def of(leaf) -> Iterator[tuple[bytes, Any, float]]:  # noqa: ANN001
        for term, info in leaf.iter_prefix(CONTENT_FIELD, prefix):
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
    expansions can give (a short prefix matches most documents; a page fills from
    a few blocks). Of equal scores, the documents read first stay on the page,
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
            def skip(weight: float, b: float = boost) -> bool:
                return expansion_score(weight, b) <= floor()

            blocks = _posting_blocks(leaf.postings(CONTENT_FIELD, term), skip=skip)
            for block in blocks:
                if block is None:
                    skipped = True
                    continue
                for d, w in zip(*block, strict=False):
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

    Whoosh scores a common word posting by posting through its collector, and cannot skip
    its blocks: every block holds some short document (an index line) whose bound reaches
    the page (a word in most documents). Here each block's scores are computed in
    one comprehension from the weights
    and the segment's length bytes, and a block whose bound (its highest weight at its
    shortest length) cannot beat the page's worst score is skipped unread.

    Returns:
        ``(docnum, score)`` best first, and the number of matching documents (the
        postings of skipped blocks counted without the mask, as Whoosh's estimate).
    """
    reader = searcher.reader()
    if (CONTENT_FIELD, term) not in reader:  # a word of a script with no sound key, found nowhere
        return [], 0
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
            scores = [idf * ((w * (K1 + 1)) / (w + norms[lengths[d]])) * boost for d, w in zip(ids, weights, strict=False)]
            for d, score in zip(ids, scores, strict=False):
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


#: A clause of :func:`_conjunction`: one query word's ``(field, term, boost)`` variants (one,
#: or two scored as Whoosh's ``DisjunctionMax`` with :data:`FIELD_TIEBREAK`).
Clause = list[tuple[str, str, float]]


def _conjuncts(query) -> list[Clause] | None:  # noqa: ANN001 - a Whoosh query
    """The clauses of a query :func:`_conjunction` can match (an ``And`` of words, each a
    ``Term`` or a two-term ``DisjunctionMax``; or one such word), else ``None``."""
    if type(query) is wq.And and query.boost == 1.0:
        out: list[Clause] = []
        for sub in query.subqueries:
            got = _conjuncts(sub)
            if got is None:
                return None
            out.extend(got)
        return out
    if type(query) is wq.Term:
        return [[(query.fieldname, query.text, query.boost)]]
    if type(query) is wq.DisjunctionMax and query.boost == 1.0 and len(query.subqueries) == 2 \
            and query.tiebreak == FIELD_TIEBREAK and all(type(q) is wq.Term for q in query.subqueries):
        return [[(q.fieldname, q.text, q.boost) for q in query.subqueries]]
    return None


def _filter_docs(searcher, filter_query) -> frozenset[int]:  # noqa: ANN001
    """The documents (top-level numbers) ``filter_query`` matches, remembered on the searcher
    (kept between searches until the index changes): a filter is a set of documents, looked
    up, never scored."""
    cache = _kept_on(searcher, "_memtui_filters")
    if cache is None:
        return frozenset(searcher.docs_for_query(filter_query))
    got = cache.get(filter_query)
    if got is None:
        if len(cache) > FILTER_CACHE:
            cache.clear()
        got = cache[filter_query] = frozenset(searcher.docs_for_query(filter_query))
    return got


#: Filters whose documents a searcher remembers (:func:`_filter_docs`).
FILTER_CACHE = 256


def _leaf_lengths(leaf, fieldname: str) -> Any:  # noqa: ANN001
    """A segment's length bytes of ``fieldname`` (:func:`_length_bytes`; else read once and
    remembered on the segment's reader)."""
    got = _length_bytes(leaf, fieldname)
    if got is None:
        attr = f"_memtui_len_{fieldname}"
        got = getattr(leaf, attr, None)
        if got is None:
            get = leaf.doc_field_length
            got = bytearray(length_to_byte(get(d, fieldname, 1)) for d in range(leaf.doc_count_all()))
            try:
                setattr(leaf, attr, got)
            except AttributeError:
                pass
    return got


def _weights_of(matcher, only: list[int] | None, size: int) -> dict[int, float]:  # noqa: ANN001
    """``{document: weight}`` of a segment's posting list of ``size`` postings; with ``only``
    (sorted document numbers), just those: found by skipping when they are few against the
    list (the blocks between them unread), else by reading the blocks as arrays."""
    if only is not None and len(only) * 8 < size:
        out: dict[int, float] = {}
        for d in only:
            if not matcher.is_active():
                break
            if matcher.id() < d:
                matcher.skip_to(d)
                if not matcher.is_active():
                    break
            if matcher.id() == d:
                out[d] = matcher.weight()
        return out
    out = {}
    wanted = set(only) if only is not None else None
    for block in _posting_blocks(matcher):  # no skip function: every block is read
        if block is None:
            continue
        ids, weights = block
        if wanted is None:
            out.update(zip(ids, weights, strict=False))
        else:
            out.update((d, w) for d, w in zip(ids, weights, strict=False) if d in wanted)
    return out


def _conjunction(searcher, clauses: list[Clause], allowed: frozenset[int] | None, limit: int,
                 mask: set[int] | None) -> tuple[list[tuple[int, float]], int]:  # noqa: ANN001
    """The top ``limit`` documents holding every clause (and in ``allowed``, when given; none
    of ``mask``), scored as Whoosh scores the ``And`` of the clauses: the sum of each word's
    BM25F score (a two-variant word: the better plus :data:`FIELD_TIEBREAK` of the other),
    ties by lower document number.

    Whoosh intersects by moving matchers posting by posting and scores every document of the
    intersection through its collector (common words: thousands of Python calls a query).
    Here, per segment, the rarest clause's postings (or the filter's documents, when fewer)
    are the candidates; each further clause is looked up only at them (by skipping blocks
    when they are few, else by reading its blocks as arrays), and the scores are computed
    from the weights and the length bytes in one expression a posting.

    Returns:
        ``(docnum, score)`` best first, and the exact number of matching documents.
    """
    reader = searcher.reader()
    n_docs = reader.doc_count_all()
    consts: dict[tuple[str, str], tuple[float, list[float], float]] = {}
    for clause in clauses:
        for fieldname, text, _boost in clause:
            if (fieldname, text) not in consts and (fieldname, text) in reader:
                scorer = searcher.weighting.scorer(searcher, fieldname, text)
                consts[(fieldname, text)] = (scorer.idf, _norms(scorer.B, scorer.K1, scorer.avgfl), scorer.K1)
    if any(not any((f, t) in consts for f, t, _ in clause) for clause in clauses):
        return [], 0  # a word found nowhere: nothing holds every word
    page: list[tuple[float, int]] = []  # min-heap of (score, -docnum)
    total = 0
    for leaf, offset in reader.leaf_readers():
        size = leaf.doc_count_all()
        local_allowed: list[int] | None = None
        if allowed is not None:
            local_allowed = sorted(d - offset for d in allowed if offset <= d < offset + size) \
                if len(allowed) < n_docs else None
            if local_allowed is not None and not local_allowed:
                continue

        scores = _leaf_conjunction(leaf, clauses, consts, local_allowed)
        if not scores:
            continue
        for d, score in scores.items():
            d += offset
            if mask is not None and d in mask:
                continue
            total += 1
            if len(page) < limit:
                heapq.heappush(page, (score, -d))
            elif (score, -d) > page[0]:
                heapq.heapreplace(page, (score, -d))
    ranked = sorted(((-d, score) for score, d in page), key=lambda x: (-x[1], x[0]))
    return ranked, total


def _leaf_conjunction(leaf, clauses: list[Clause], consts: dict[tuple[str, str], tuple[float, list[float], float]],  # noqa: ANN001
                      local_allowed: list[int] | None) -> dict[int, float] | None:
    """``{document: summed score}`` of the segment's documents holding every clause (and in
    ``local_allowed``, segment numbers, when given); see :func:`_conjunction`."""
    def df(clause: Clause) -> int:
        return sum(leaf.doc_frequency(f, t) for f, t, _ in clause if (f, t) in consts)

    ordered = sorted(((df(c), i, c) for i, c in enumerate(clauses)), key=lambda x: (x[0], x[1]))
    if ordered[0][0] == 0:
        return None
    # the filter's documents are the candidates when fewer than the rarest word's, else
    # they are checked on that word's documents
    filter_first = local_allowed is not None and len(local_allowed) <= ordered[0][0]
    candidates: list[int] | None = local_allowed if filter_first else None
    scores: dict[int, float] | None = None
    for _df_c, _i, clause in ordered:
        got = _clause_scores(leaf, clause, consts, candidates)
        if scores is None:
            if local_allowed is not None and not filter_first:
                keep = set(local_allowed)
                got = {d: s for d, s in got.items() if d in keep}
            scores = got
        else:
            scores = {d: s + got[d] for d, s in scores.items() if d in got}
        if not scores:
            return None
        candidates = sorted(scores)
    return scores


def _clause_scores(leaf, clause: Clause, consts: dict[tuple[str, str], tuple[float, list[float], float]],  # noqa: ANN001
                   only: list[int] | None) -> dict[int, float]:
    """``{document: score}`` of one clause in one segment (at ``only``'s documents when
    given): BM25F as Whoosh computes it (``whoosh.scoring.bm25``, then the term's boost), a
    two-variant word combined as the fixed ``DisjunctionMaxMatcher`` combines its sides."""
    parts: list[dict[int, float]] = []
    for fieldname, text, boost in clause:
        if (fieldname, text) not in consts or (fieldname, text) not in leaf:
            parts.append({})
            continue
        idf, norms, K1 = consts[(fieldname, text)]
        lengths = _leaf_lengths(leaf, fieldname)
        weights = _weights_of(leaf.postings(fieldname, text), only, leaf.doc_frequency(fieldname, text))
        if boost == 1.0:
            parts.append({d: idf * ((w * (K1 + 1)) / (w + norms[lengths[d]])) for d, w in weights.items()})
        else:
            parts.append({d: idf * ((w * (K1 + 1)) / (w + norms[lengths[d]])) * boost for d, w in weights.items()})
    if len(parts) == 1:
        return parts[0]
    a, b = parts
    out = dict(b)
    for d, x in a.items():
        y = out.get(d)
        out[d] = x if y is None else (x + FIELD_TIEBREAK * y if x >= y else y + FIELD_TIEBREAK * x)
    return out


def _or_plan(query) -> tuple[Any, _DocSet | None] | None:  # noqa: ANN001 - a Whoosh query
    """``(scored part, candidate set)`` of a query :func:`_disjunction` can match exactly: an
    ``Or`` of words (each a ``Term`` or a ``DisjunctionMax`` of terms), or one such word,
    optionally intersected with a :class:`_DocSet`; else ``None``."""
    docset = None
    if type(query) is wq.And and query.boost == 1.0 and len(query.subqueries) == 2:
        first, second = query.subqueries
        if type(second) is _DocSet:
            query, docset = first, second
        elif type(first) is _DocSet:
            query, docset = second, first
        else:
            return None
    return (query, docset) if _or_supported(query) else None


def _or_supported(query) -> bool:  # noqa: ANN001
    """``query`` is a ``Term``, a ``DisjunctionMax`` of terms, or an ``Or`` of these (a
    word and its parts, ``inc-425431``: an ``Or`` too), each as :func:`_tree_scores`
    scores it (no boost on a compound, ``Or`` matched by Whoosh's tree of unions)."""
    if type(query) is wq.Term:
        return True
    if type(query) is wq.DisjunctionMax:
        return query.boost == 1.0 and all(type(q) is wq.Term for q in query.subqueries)
    if type(query) is wq.Or:
        return (query.boost == 1.0 and query.matcher_type == wq.Or.DEFAULT_MATCHER and not query.minmatch
                and not query.scale and all(_or_supported(q) for q in query.subqueries))
    return False


def _tree_scores(leaf, query, consts: dict[tuple[str, str], tuple[float, list[float], float]],  # noqa: ANN001
                 only: list[int] | None) -> dict[int, float]:
    """``{document: score}`` of ``query`` (:func:`_or_supported`) in one segment (at
    ``only``'s documents, segment numbers, when given), computed as Whoosh's matcher tree
    computes it: the tree Whoosh builds for the segment (``make_weighted_tree`` over the
    subqueries' size estimates in that segment), each ``Or`` node adding its sides' scores
    and each ``DisjunctionMax`` node combining them as the fixed ``DisjunctionMaxMatcher``
    does. Both are symmetric in their sides (IEEE addition is commutative; only its
    grouping, the tree, changes a sum), so each node copies its larger side and walks the
    smaller."""
    if type(query) is wq.Term:
        return _term_scores(leaf, query, consts, only)
    subs = query.subqueries
    if not subs:
        return {}
    if len(subs) == 1:
        return _tree_scores(leaf, subs[0], consts, only)
    from whoosh.query import compound

    parts = [_tree_scores(leaf, q, consts, only) for q in subs]
    tree = compound.make_weighted_tree(lambda a, b: (a, b), [(_size(leaf, q), i) for i, q in enumerate(subs)])
    dismax = type(query) is wq.DisjunctionMax
    tiebreak = query.tiebreak if dismax else 0.0

    def walk(node: Any) -> dict[int, float]:
        if isinstance(node, int):
            return parts[node]
        a, b = walk(node[0]), walk(node[1])
        if len(a) < len(b):
            a, b = b, a
        if not b:
            return a
        out = dict(a)
        get = out.get
        if dismax:
            for d, y in b.items():
                x = get(d)
                out[d] = y if x is None else (x + tiebreak * y if x >= y else y + tiebreak * x)
        else:
            for d, y in b.items():
                x = get(d)
                out[d] = y if x is None else x + y
        return out

    return walk(tree)


def _size(leaf, query) -> int:  # noqa: ANN001 - a Whoosh segment reader and query
    """``query.estimate_size(leaf)`` for the queries of :func:`_or_supported`, with the
    terms' document frequencies remembered on the segment's reader (:func:`_df`): a
    ``Term``'s is its document frequency, a compound's the sum of its parts' (at most the
    segment's document count), as Whoosh estimates them."""
    if type(query) is wq.Term:
        if query.fieldname not in leaf.schema:
            return 0
        return _df(leaf, query.fieldname, query.text)
    return min(sum(_size(leaf, q) for q in query.subqueries), leaf.doc_count())


def _term_scores(leaf, query, consts: dict[tuple[str, str], tuple[float, list[float], float]],  # noqa: ANN001
                 only: list[int] | None) -> dict[int, float]:
    """``{document: score}`` of one ``Term`` in one segment (at ``only``'s documents when
    given): BM25F as :func:`_clause_scores` computes it, each block's postings scored
    straight from its arrays (a term of a short query is read whole)."""
    key = (query.fieldname, query.text)
    const = consts.get(key)
    if const is None:
        return {}
    size = _df(leaf, *key)
    if not size:
        return {}
    idf, norms, K1 = const
    boost = query.boost
    k1p = K1 + 1  # the same float Whoosh's ``tf * (K1 + 1)`` multiplies by
    dn = _doc_norms(leaf, query.fieldname, norms)  # dn[d] is norms[lengths[d]]
    if only is not None:
        weights = _weights_of(leaf.postings(*key), only, size)
        if boost == 1.0:
            return {d: idf * ((w * k1p) / (w + dn[d])) for d, w in weights.items()}
        return {d: idf * ((w * k1p) / (w + dn[d])) * boost for d, w in weights.items()}
    out: dict[int, float] = {}
    for block in _posting_blocks(leaf.postings(*key)):
        if block is None:
            continue
        ids, ws = block
        if boost == 1.0:
            out.update({d: idf * ((w * k1p) / (w + dn[d])) for d, w in zip(ids, ws, strict=False)})
        else:
            out.update({d: idf * ((w * k1p) / (w + dn[d])) * boost for d, w in zip(ids, ws, strict=False)})
    return out


def _doc_norms(leaf, fieldname: str, norms: list[float]) -> list[float]:  # noqa: ANN001
    """Each document's BM25 length part in a segment: ``norms[lengths[d]]`` for every
    document ``d`` (:func:`_leaf_lengths`), remembered on the segment's reader for the
    last ``norms`` asked (one lookup a posting instead of two)."""
    cache = _kept_on(leaf, "_memtui_doc_norms")
    if cache is None:
        return [norms[b] for b in _leaf_lengths(leaf, fieldname)]
    got = cache.get(fieldname)
    if got is None or got[0] is not norms:
        got = cache[fieldname] = (norms, [norms[b] for b in _leaf_lengths(leaf, fieldname)])
    return got[1]


#: Per top-level reader (kept between searches until the index changes), the BM25F
#: constants of the terms :func:`_disjunction` scored: ``(idf, norms, K1)``.
_CONSTS_ATTR = "_memtui_bm25"


def _consts(searcher, reader, query, consts: dict[tuple[str, str], tuple[float, list[float], float]]) -> None:  # noqa: ANN001
    """Put each term of ``query`` the index holds in ``consts``: its BM25F constants as
    Whoosh's scorer computes them for ``searcher`` (remembered on ``reader``)."""
    cache = getattr(reader, _CONSTS_ATTR, None)
    if cache is None:
        cache = {}
        try:
            setattr(reader, _CONSTS_ATTR, cache)
        except AttributeError:
            pass
    stack = [query]
    while stack:
        q = stack.pop()
        if type(q) is not wq.Term:
            stack.extend(q.subqueries)
            continue
        key = (q.fieldname, q.text)
        if key in consts:
            continue
        got = cache.get(key)
        if got is None:
            if key not in reader:
                continue
            if len(cache) > DF_CACHE:
                cache.clear()
            scorer = searcher.weighting.scorer(searcher, q.fieldname, q.text)
            got = cache[key] = (scorer.idf, _norms(scorer.B, scorer.K1, scorer.avgfl), scorer.K1)
        consts[key] = got


def _all_matches(reader, query, mask: set[int] | None, cap: int) -> list[int] | None:  # noqa: ANN001
    """Every document (top-level number, none of ``mask``) that ``query`` (an ``Or`` of
    words, each a ``Term`` or an ``Or`` or ``DisjunctionMax`` of terms) matches, when they are at most ``cap``; else ``None``.
    Whoosh's top ``cap`` of a query matching at most ``cap`` documents is all of them (a
    word's BM25F score is never 0), whatever their scores: so the candidates of a pasted
    ticket (:func:`rank`) are read from the rare words' postings, not scored."""
    terms: list[tuple[str, str]] = []
    stack = [query]
    while stack:
        q = stack.pop()
        if not q.boost > 0:
            return None
        if type(q) is wq.Term:
            terms.append((q.fieldname, q.text))
        elif type(q) in (wq.Or, wq.DisjunctionMax) and not getattr(q, "minmatch", 0):
            stack.extend(q.subqueries)
        else:
            return None
    found: set[int] = set()
    for leaf, offset in reader.leaf_readers():
        for fieldname, text in terms:
            if fieldname not in leaf.schema or not _df(leaf, fieldname, text):
                continue
            for block in _posting_blocks(leaf.postings(fieldname, text)):
                if block is not None:
                    found.update(d + offset for d in block[0])
        if mask:
            found -= mask
        if len(found) > cap:
            return None
    return sorted(found)


def _disjunction(searcher, query, docset: _DocSet | None, limit: int,  # noqa: ANN001
                 mask: set[int] | None) -> list[tuple[int, float]]:
    """The top ``limit`` documents of ``query`` (an ``Or`` of words, :func:`_or_plan`; only
    those of ``docset`` when given; none of ``mask``), with the scores Whoosh's collector
    gives them, ties by lower document number: Whoosh's ranking of the query, bit for bit.

    Whoosh walks the union of the words' posting lists posting by posting through its
    collector, pruning by block bounds; a short query of common words (the eval sets'
    tickets in a large memory) still scores thousands of documents so, each through a
    tree of Python matchers. Here each word's postings in a segment are read as arrays and
    scored in one expression a posting, then added up along the same tree of nodes as
    Whoosh's (floating-point addition is not associative: the order is kept).
    """
    reader = searcher.reader()
    consts: dict[tuple[str, str], tuple[float, list[float], float]] = {}
    _consts(searcher, reader, query, consts)
    page: list[tuple[float, int]] = []  # min-heap of (score, -docnum)
    hidden = len(mask) if mask else 0
    for leaf, offset in reader.leaf_readers():
        size = leaf.doc_count_all()
        only: list[int] | None = None
        if docset is not None:
            only = [d - offset for d in docset.docnums if offset <= d < offset + size]
            if not only:
                continue
        scores = _tree_scores(leaf, query, consts, only)
        if len(scores) > limit + hidden:
            # only a document scoring at least the (limit + hidden)-th best of the segment
            # can be on the page (at most ``hidden`` of the better ones are left out)
            bar = sorted(scores.values(), reverse=True)[limit + hidden - 1]
            if page and len(page) >= limit:
                bar = max(bar, page[0][0])
            scores = {d: s for d, s in scores.items() if s >= bar}
        for d, score in scores.items():
            d += offset
            if mask is not None and d in mask:
                continue
            if len(page) < limit:
                heapq.heappush(page, (score, -d))
            elif (score, -d) > page[0]:
                heapq.heapreplace(page, (score, -d))
    return sorted(((-d, score) for score, d in page), key=lambda x: (-x[1], x[0]))


@functools.lru_cache(maxsize=64)
def _norms(B: float, K1: float, avgfl: float) -> list[float]:
    """BM25's length part ``K1 * ((1 - B) + B * fl / avgfl)`` for each of the 256 length
    bytes (``fl`` as Whoosh decodes it), computed as Whoosh computes it."""
    return [K1 * ((1 - B) + B * byte_to_length(b) / avgfl) for b in range(256)]


def query_terms(reader, words: list[tuple[str, ...]]) -> list[tuple[tuple[str, ...], float]]:  # noqa: ANN001
    """The words of a query (each its term variants: plain term, sound keys) that occur in
    the index, with their inverse document frequency (BM25's, from the most frequent
    variant: ``log(1 + (N - df + 0.5) / (df + 0.5))``)."""
    n = max(1, reader.doc_count_all())
    out: list[tuple[tuple[str, ...], float]] = []
    for vs in words:
        df = max((_df(reader, TRANSLIT_FIELD if t.startswith(KEY_MARK) else CONTENT_FIELD, t) for t in vs), default=0)
        if df:
            out.append((vs, math.log(1.0 + (n - df + 0.5) / (df + 0.5))))
    return out


def coverage(searcher, docnums: list[int], terms: list[tuple[tuple[str, ...], float]],  # noqa: ANN001
             holds: list[set[int]] | None = None) -> list[float]:
    """For each document, the share (0…1) of the query's word weight (idf, see
    :func:`query_terms`) whose word occurs in it (any variant, in any field): how much of
    what is specific in a ticket the document shares (1 for every document of a query with
    no plain word). A precedent holds a ticket's rare
    words; an entry that only shares its common domain words does not (tickets
    with no precedent got confident answers from such entries). One posting list a term
    and segment, skipped along the documents in order. ``holds``, when given, receives for
    each document the indexes (into ``terms``) of the words it holds."""
    if holds is not None:
        holds[:] = [set() for _ in docnums]
    total = sum(idf for _, idf in terms)
    if not docnums or total <= 0:
        return [1.0] * len(docnums)  # no word to miss (a lone prefix, a phrase, filters)
    reader = searcher.reader()
    leaves = list(reader.leaf_readers())
    held: dict[int, float] = {d: 0.0 for d in docnums}
    for k, (vs, idf) in enumerate(terms):
        found: set[int] = set()
        for t in vs:
            fieldname = TRANSLIT_FIELD if t.startswith(KEY_MARK) else CONTENT_FIELD
            for i, (leaf, offset) in enumerate(leaves):
                end = leaves[i + 1][1] if i + 1 < len(leaves) else offset + leaf.doc_count_all()
                local = sorted(d - offset for d in docnums if offset <= d < end and d not in found)
                if not local or not _df(leaf, fieldname, t):  # not in the segment
                    continue
                m = leaf.postings(fieldname, t)
                for d in local:
                    if not m.is_active():
                        break
                    m.skip_to(d)
                    if m.is_active() and m.id() == d:
                        found.add(d + offset)
        for d in found:
            held[d] += idf
        if holds is not None:
            for j, d in enumerate(docnums):
                if d in found:
                    holds[j].add(k)
    return [held[d] / total for d in docnums]


def _hidden(searcher) -> set[int] | None:  # noqa: ANN001 - a Whoosh searcher
    """The document numbers of :data:`HIDDEN_STATES` (``None`` when there are none), as a
    set (a query as mask is re-checked per document: slow). Each segment's are remembered
    on its reader, which the index keeps while the segment and its deletions stay the same
    (:func:`memtui.core.search.engine.index._reader_reusing`): asking every segment for
    three terms was a fixed cost of every search in a big index, again after every save."""
    cached = getattr(searcher, "_memtui_hidden", None)
    if cached is not None:
        return cached[0]
    found: set[int] = set()
    for leaf, offset in searcher.reader().leaf_readers():
        local = getattr(leaf, "_memtui_hidden", None)
        if local is None:
            local = []
            for state in HIDDEN_STATES:
                if ("state", state) in leaf:
                    local.extend(leaf.postings("state", state).all_ids())
            try:
                leaf._memtui_hidden = local
            except AttributeError:
                pass
        found.update(d + offset for d in local)
    got = found or None
    searcher._memtui_hidden = (got,)
    return got


def rank(index: SearchIndex, items: list[Item], filters: dict[str, list[str]], limit: int,
         include_proposed: bool, kind_boost: dict[str, float] | None = None, exact_total: bool = True) -> Ranking:
    """Rank the documents of ``index`` for a parsed query (``items`` and ``filters`` from
    :func:`memtui.core.search.query.parse`): the engine's side of a search. ``kind_boost``
    multiplies the scores of the documents of those kinds within the page fetched, which is
    then ranked again before its coverage is measured (a lone prefix or fuzzy word is not
    re-ranked). ``exact_total`` off: a full page's total is the query's size estimate, not a count
    (Whoosh's ``Results.estimated_length`` counts every match: a walk of every posting list).
    The caller holds ``index.search_lock``; Whoosh's errors on a damaged index
    pass through (the caller repairs)."""
    searcher = index.searcher()  # kept between searches (SearchIndex.searcher)
    reader = searcher.reader()
    mask = _hidden(searcher) if not include_proposed and "state" not in filters else None
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
        docs = [(searcher.stored_fields(d), score) for d, score in ranked]
        return Ranking(docs, max(len(docs), total), count or 1, highlight, at_least=not complete)
    extra: dict[str, Any] = {}
    query, highlight, filter_query, count = build(items, filters, reader, extra)
    if query is not None and "rare" in extra:
        # a pasted ticket: score it in full only on the documents its rarest words rank
        # first (each common word's posting list is walked by skipping, not in full)
        rare = extra["rare"] if filter_query is None else wq.And([extra["rare"], filter_query.with_boost(0.0)])
        found = _all_matches(reader, rare, mask, TICKET_CANDIDATES) if ARRAY_OR else None
        candidates = found if found is not None else \
            [h.docnum for h in searcher.search(rare, limit=TICKET_CANDIDATES, mask=mask)]
        if candidates:
            query = wq.And([query, _DocSet(candidates, reader)])
    if isinstance(query, wq.Term) and query.fieldname == CONTENT_FIELD and filter_query is None:
        ranked, total = _term_alone(searcher, query.text, query.boost, limit, mask)
        docs = [(searcher.stored_fields(d), score) for d, score in ranked]
        full = len(docs) >= limit
        docs, docnums = _boosted(docs, [d for d, _ in ranked], kind_boost)
        return _covered(Ranking(docs, max(len(docs), total) if full else len(docs), count, highlight, estimated=full),
                        searcher, docnums, extra)
    clauses = _conjuncts(query) if query is not None and "rare" not in extra else None
    if clauses is not None and (len(clauses) > 1 or filter_query is not None):
        # every word required (a AND b), or words and a filter: intersected here
        allowed = _filter_docs(searcher, filter_query) if filter_query is not None else None
        ranked, total = _conjunction(searcher, clauses, allowed, limit, mask)
        docs = [(searcher.stored_fields(d), score) for d, score in ranked]
        full = len(docs) >= limit
        docs, docnums = _boosted(docs, [d for d, _ in ranked], kind_boost)
        return _covered(Ranking(docs, max(len(docs), total) if full else len(docs), count, highlight, estimated=full),
                        searcher, docnums, extra)
    plan = _or_plan(query) if ARRAY_OR and query is not None and filter_query is None and not exact_total else None
    if plan is not None:
        # words any of which may match (a typed or pasted ticket): scored as arrays here
        ranked = _disjunction(searcher, plan[0], plan[1], limit, mask)
        docs = [(searcher.stored_fields(d), score) for d, score in ranked]
        full = len(docs) >= limit
        docs, docnums = _boosted(docs, [d for d, _ in ranked], kind_boost)
        total = max(len(docs), _estimate(query, reader)) if full else len(docs)
        return _covered(Ranking(docs, total, count, highlight, estimated=full), searcher, docnums, extra)
    if query is None:
        query = filter_query if filter_query is not None else wq.NullQuery
        filter_query = None
    elif filter_query is not None:
        # a filter as a zero-weight required clause: the intersection skips along the
        # filter's postings, where a collector filter checks every match
        query = wq.And([query, filter_query.with_boost(0.0)])
        filter_query = None
    # no terms=True and no len(res): both walk every matching document (LIBRARY-NOTES)
    res = searcher.search(query, limit=limit, filter=filter_query, mask=mask)
    docs = [(r.fields(), float(r.score or 0.0)) for r in res]
    # fewer hits than the limit: every match was collected, so the count is exact (Whoosh's
    # estimate adds up its clauses' sizes and ignores filters and hidden states)
    full = len(docs) >= limit
    docs, docnums = _boosted(docs, [r.docnum for r in res], kind_boost)
    total = len(docs)
    if full:
        total = max(total, res.estimated_length() if exact_total else _estimate(query, reader))
    return _covered(Ranking(docs, total, count, highlight, estimated=full), searcher, docnums, extra)


def _estimate(query, reader) -> int:  # noqa: ANN001 - a Whoosh query and reader
    """Whoosh's size estimate of ``query`` (its clauses' sizes added up), without walking a match."""
    try:
        return int(query.estimate_size(reader))
    except NotImplementedError:
        return 0


def _word_shares(reader, words: list[tuple[str, ...]]) -> tuple[float | None, float | None]:  # noqa: ANN001
    """``(known, keyed)`` of a query's words (each its term variants): the share the index
    holds under any variant, and of those the share it holds only under a sound key
    (``(None, None)`` for no word)."""
    if not words:
        return None, None
    plain = keyed = 0
    for vs in words:
        if any(not t.startswith(KEY_MARK) and _df(reader, CONTENT_FIELD, t) for t in vs):
            plain += 1
        elif any(t.startswith(KEY_MARK) and _df(reader, TRANSLIT_FIELD, t) for t in vs):
            keyed += 1
    known = plain + keyed
    return known / len(words), (keyed / known if known else 0.0)


def _boosted(docs: list[tuple[dict[str, Any], float]], docnums: list[int],
             kind_boost: dict[str, float] | None) -> tuple[list[tuple[dict[str, Any], float]], list[int]]:
    """``docs`` (and their ``docnums``) with each score times its kind's ``kind_boost``
    (1 for the kinds not named), best first again; ties keep their order."""
    if not kind_boost:
        return docs, docnums
    pairs = [((stored, score * kind_boost.get(stored.get("kind", ""), 1.0)), d)
             for (stored, score), d in zip(docs, docnums, strict=True)]
    pairs.sort(key=lambda p: -p[0][1])
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _covered(ranking: Ranking, searcher, docnums: list[int], extra: dict[str, Any]) -> Ranking:  # noqa: ANN001
    """``ranking`` with the query's terms, the :func:`coverage` of its first
    :data:`COVERED_DOCS` documents and the share of its words the index knows."""
    words = extra.get("words", [])
    weights = extra.get("weights", {})
    ranking.terms = [(vs, idf * weights.get(vs, 1.0)) for vs, idf in query_terms(searcher.reader(), words)]
    ranking.coverage = coverage(searcher, docnums[:COVERED_DOCS], ranking.terms, ranking.holds)
    # what the memory knows of the ticket's own words (set-apart names and signatures are not the question)
    own = [vs for vs in words if weights.get(vs, 1.0) >= 1.0] or words
    ranking.known, ranking.keyed = _word_shares(searcher.reader(), own)
    return ranking


