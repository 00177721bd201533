"""Duplicate articles: two articles of the tree that say the same thing (seed 000 §4 step 5,
"merge duplicates").

Two signals, each with its reason:

- **body**: the sets of content words of the two bodies (normalised: compatibility forms
  folded, case folded, accents dropped; stop words of English and Bulgarian removed) have a
  Jaccard similarity of at least :data:`BODY_JACCARD`. Candidates come from MinHash
  signatures in a locality-sensitive hash index (``datasketch``), so the pass does not
  compare every pair; each candidate's similarity is then computed exactly from the two
  texts. A word set (not word sequences) is used so that a paraphrase that reorders and
  rewords sentences but keeps the subject's vocabulary is still found.
- **names**: a title or summary of one article, normalised and read in Latin letters
  (Bulgarian official transliteration), equals a title, alias or summary of the other: the
  cross-language case, where an English article and a Bulgarian one share no body words but
  name the same thing. Two equal *aliases* alone do not count: an alias is a word people
  search with, and two articles on one topic share those (``"credit note"`` names a billing
  article and a past case about a credit note).

Why these numbers: :data:`BODY_JACCARD` is 0.5, "at least half of the two articles' words
together are shared by both", fixed before any labelled pair was looked at;
``bench/consolidate/`` measures the precision it gives on hand-labelled pairs.
"""

from __future__ import annotations

import re
import sys
import unicodedata
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterable

from memtui.core.search.analysis import BG_STOP, EN_STOP, normalize, to_latin

#: Jaccard similarity of two bodies' content-word sets from which they are duplicates.
BODY_JACCARD = 0.5
#: MinHash permutations: the estimate's standard error at J = 0.5 is about 0.044.
NUM_PERM = 128
#: The LSH index's threshold sits below :data:`BODY_JACCARD` so that pairs whose estimate
#: falls a little short are still checked exactly.
LSH_THRESHOLD = 0.4
#: A candidate whose MinHash estimate is this far below :data:`BODY_JACCARD` is not compared
#: exactly (about three standard errors of the estimate).
SCREEN_MARGIN = 0.13
#: Bodies with fewer content words are too short to judge by words (names still count).
MIN_WORDS = 12
#: A name (title, alias, summary) shorter than this many letters after normalising is too
#: generic to call two articles the same (``"FAQ"``, ``"Notes"``).
MIN_NAME_LETTERS = 8

_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(EN_STOP) | frozenset(BG_STOP)


_MARKS = re.compile("[\u0300-\u036f]")


def _fold(text: str) -> str:
    """:func:`normalize`'s folding for a whole text at C speed: compatibility forms, case,
    combining marks (the breve of ``й`` too, on both sides of a comparison alike)."""
    return _MARKS.sub("", unicodedata.normalize("NFKD", text.casefold())).replace("ё", "е")


def content_words(text: str) -> set[str]:
    """The set of content words of ``text``: folded (:func:`_fold`), stop words and one-letter
    words removed; digits kept (error codes are content)."""
    intern = sys.intern
    return {intern(w) for w in _WORD.findall(_fold(text)) if len(w) > 1 and w not in _STOP_FOLDED}


_STOP_FOLDED = frozenset(_fold(w) for w in _STOP)


def name_key(text: str) -> str | None:
    """A title, alias or summary as a comparable key: normalised, in Latin letters, only
    letters and digits separated by single spaces; ``None`` when shorter than
    :data:`MIN_NAME_LETTERS` letters."""
    words = [to_latin(w) for w in _WORD.findall(normalize(text))]
    key = " ".join(words)
    return key if sum(len(w) for w in words) >= MIN_NAME_LETTERS else None


def jaccard(a: set[str], b: set[str]) -> float:
    """``|a ∩ b| / |a ∪ b|`` (0.0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def _hash(data: bytes) -> int:
    return zlib.crc32(data)


@dataclass(slots=True)
class Doc:
    """What the detector needs of one article: its path, body words and names."""

    path: str
    words: set[str]
    names: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (name as written, role)


@dataclass(slots=True)
class Pair:
    """Two articles that say the same thing: ``a < b`` (paths), the exact body similarity,
    and the names they share (``[(name in a, name in b)]``)."""

    a: str
    b: str
    body: float
    names: list[tuple[str, str]] = field(default_factory=list)

    @property
    def reason(self) -> str:
        """A sentence saying why they are duplicates."""
        parts = []
        if self.body >= BODY_JACCARD:
            parts.append(f"{self.body:.0%} of their words are shared")
        if self.names:
            left, right = self.names[0]
            parts.append(f"{left!r} names both" if left == right else f"{left!r} and {right!r} name the same thing")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "body_similarity": round(self.body, 3),
                "names": [list(n) for n in self.names], "reason": self.reason}


def doc_of(path: str, body: str, names: Iterable[tuple[str, str]]) -> Doc:
    """The :class:`Doc` of an article: ``body`` without front matter, ``names`` its
    ``(name, role)`` pairs, role ``title``, ``alias`` or ``summary`` (a name given twice keeps
    its first role)."""
    keys: dict[str, tuple[str, str]] = {}
    for name, role in names:
        key = name_key(name) if isinstance(name, str) else None
        if key:
            keys.setdefault(key, (name.strip(), role))
    return Doc(path, content_words(body), keys)


def find(docs: list[Doc], progress=None) -> list[Pair]:  # noqa: ANN001 - Callable[[int, int], None]
    """The duplicate pairs among ``docs`` (module docstring), best first.

    Args:
        docs: one per article.
        progress: called with ``(done, total)`` documents signed.

    Returns:
        Pairs with a body similarity of at least :data:`BODY_JACCARD` or a shared name.
    """
    from datasketch import MinHash, MinHashLSH  # imported here: it brings numpy and scipy

    lsh = MinHashLSH(threshold=LSH_THRESHOLD, num_perm=NUM_PERM)
    by_path = {d.path: d for d in docs}
    candidates: set[tuple[str, str]] = set()
    signed = [d for d in docs if len(d.words) >= MIN_WORDS]
    total = len(signed)
    signatures: dict[str, Any] = {}
    first = MinHash(num_perm=NUM_PERM, hashfunc=_hash)  # one draw of permutations for all
    for done, doc in enumerate(signed, 1):
        m = MinHash(num_perm=NUM_PERM, hashfunc=_hash, permutations=first.permutations, scheme=first.scheme)
        m.update_batch([w.encode("utf-8") for w in doc.words])
        for other in lsh.query(m):
            # the estimate screens LSH's candidates; only plausible pairs are compared exactly
            if m.jaccard(signatures[other]) >= BODY_JACCARD - SCREEN_MARGIN:
                candidates.add((other, doc.path) if other < doc.path else (doc.path, other))
        lsh.insert(doc.path, m)
        signatures[doc.path] = m
        if progress and (done % 500 == 0 or done == total):
            progress(done, total)
    named: dict[str, list[str]] = {}
    for doc in docs:
        for key in doc.names:
            named.setdefault(key, []).append(doc.path)
    for paths in named.values():
        if 1 < len(paths) <= 5:  # a name shared by many articles is a topic, not one subject
            for i, a in enumerate(paths):
                for b in paths[i + 1:]:
                    candidates.add((a, b) if a < b else (b, a))
    pairs: list[Pair] = []
    for a, b in candidates:
        da, db = by_path[a], by_path[b]
        body = jaccard(da.words, db.words) if len(da.words) >= MIN_WORDS and len(db.words) >= MIN_WORDS else 0.0
        shared = [(da.names[k][0], db.names[k][0]) for k in da.names.keys() & db.names.keys()
                  if "alias" not in (da.names[k][1], db.names[k][1]) or da.names[k][1] != db.names[k][1]]
        if body >= BODY_JACCARD or shared:
            pairs.append(Pair(a, b, body, sorted(shared)))
    pairs.sort(key=lambda p: (-p.body, -len(p.names), p.a, p.b))
    return pairs
