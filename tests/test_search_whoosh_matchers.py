"""The Whoosh matcher fixes ranking relies on (memtui/core/search/engine/whoosh_fixes.py)."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
from whoosh import fields, query, scoring
from whoosh.filedb.filestore import FileStorage
from whoosh.matching import ListMatcher
from whoosh.matching.binary import DisjunctionMaxMatcher

import memtui.core.search.engine.index as index_mod  # noqa: F401 - applies the fixes
from memtui.core.search.index import SearchIndex
from memtui.core.search.engine.matching import FIELD_TIEBREAK
from memtui.core.search.query import search
from memtui.core.workspace import Workspace


_FOLDERS: list[Path] = []


@pytest.fixture(autouse=True)
def _index_folder(tmp_path: Path) -> None:
    _FOLDERS[:] = [tmp_path]


def _storage() -> FileStorage:
    """A Whoosh storage in a fresh folder under this test's tmp_path."""
    folder = Path(tempfile.mkdtemp(prefix="ix-", dir=_FOLDERS[0]))
    return FileStorage(str(folder))


def _ram_index(docs: list[dict[str, str]]):  # noqa: ANN202
    """An index of ``docs`` in its own temporary folder: Whoosh's in-memory storage writes
    its segments through one shared ``/tmp/MAIN.tmp``, which two test workers building at
    once remove from under each other."""
    schema = fields.Schema(n=fields.ID(stored=True), x=fields.TEXT, y=fields.TEXT)
    ix = _storage().create_index(schema)
    with ix.writer() as w:
        for i, d in enumerate(docs):
            w.add_document(n=str(i), **d)
    return ix


def _scores(searcher, q, optimize: bool = True) -> dict[str, float]:  # noqa: ANN001
    return {hit["n"]: hit.score for hit in searcher.search(q, limit=None, optimize=optimize)}


def test_dismax_scores_each_document_by_its_own_fields() -> None:
    """Whoosh scored a document with a sub-matcher standing on a later document (its field
    score for another document), and ignored the tiebreak."""
    rng = random.Random(3)
    docs = []
    for _ in range(60):
        d = {}
        if rng.random() < 0.5:
            d["x"] = " ".join(rng.choice(["alpha", "beta", "gamma"]) for _ in range(rng.randint(1, 9)))
        if rng.random() < 0.5:
            d["y"] = " ".join(rng.choice(["alpha", "delta"]) for _ in range(rng.randint(1, 30)))
        docs.append(d or {"x": "gamma"})
    ix = _ram_index(docs)
    with ix.searcher(weighting=scoring.BM25F()) as s:
        sx = _scores(s, query.Term("x", "alpha"))
        sy = _scores(s, query.Term("y", "alpha", boost=2.0))
        q = query.DisjunctionMax([query.Term("x", "alpha"), query.Term("y", "alpha", boost=2.0)],
                                 tiebreak=FIELD_TIEBREAK)
        got = _scores(s, q, optimize=False)
        assert set(got) == set(sx) | set(sy)
        for n, score in got.items():
            a, b = sx.get(n, 0.0), sy.get(n, 0.0)
            assert score == pytest.approx(max(a, b) + FIELD_TIEBREAK * min(a, b)), n
        assert _scores(s, q, optimize=True) == pytest.approx(got), "pruning changes no score"
        top = s.search(q, limit=5)
        assert [h.score for h in top] == pytest.approx(sorted(got.values(), reverse=True)[:5])


def test_dismax_replace_keeps_both_sides_while_either_can_count() -> None:
    """Pruning (replace) must not change a document's score: Whoosh dropped a side whose
    best score was below the threshold, losing its tiebreak share of shared documents."""
    a = ListMatcher([2], weights=[0.4])
    b = ListMatcher([2, 3], weights=[1.0, 1.0])
    m = DisjunctionMaxMatcher(a, b, tiebreak=0.3).replace(0.5)
    assert m.id() == 2 and m.score() == pytest.approx(1.0 + 0.3 * 0.4)
    m.next()
    assert m.id() == 3 and m.score() == pytest.approx(1.0)
    low = DisjunctionMaxMatcher(ListMatcher([1], weights=[0.1]), ListMatcher([2], weights=[0.1]), tiebreak=0.3)
    assert not low.replace(1.0).is_active(), "neither side can reach the threshold"


def test_parallel_build_ranks_exactly_as_a_serial_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parallel build (one segment per worker) gives the same scores as one segment."""
    root = tmp_path / "ws"
    mem = root / "memory"
    rng = random.Random(5)
    words = ["parcel", "depot", "route", "courier", "label", "invoice", "refund", "quota", "cache", "пратка", "куриер"]
    lines = ["# Memory", ""]
    for i in range(40):
        body = " ".join(rng.choice(words) for _ in range(rng.randint(5, 60)))
        (mem).mkdir(parents=True, exist_ok=True)
        (mem / f"a{i:02d}.md").write_text(f"---\ntitle: {rng.choice(words)} {i}\n---\n{body}\n", "utf-8")
        lines.append(f"- [a{i:02d}](a{i:02d}.md) — {rng.choice(words)} {rng.choice(words)}")
    (mem / "AGENTS.md").write_text("\n".join(lines) + "\n", "utf-8")
    queries = ["parcel", "route AND depot", "courier invoice quota", '"parcel depot"', "пратка"]

    def ranked() -> list[list[tuple[str, float]]]:
        idx = SearchIndex(Workspace.open(root))
        idx.update(rebuild=True)
        return [[(h.path, round(h.score, 6)) for h in search(idx, q, limit=100, snippets=False).hits]
                for q in queries]

    monkeypatch.setattr(index_mod, "PARALLEL_SOURCES", 10**9)
    serial = ranked()
    monkeypatch.setattr(index_mod, "PARALLEL_SOURCES", 5)
    monkeypatch.setattr(index_mod, "_workers", lambda: 2)
    parallel = ranked()
    segments = [p for p in (root / ".memtui" / "index").iterdir() if p.name.endswith(".pst")]
    assert len(segments) == 2, "one segment per worker"
    for s, p in zip(serial, parallel, strict=True):
        assert [score for _, score in s] == [score for _, score in p]
        assert sorted(s) == sorted(p)


@pytest.mark.parametrize("seed", range(6))
def test_pruned_top_n_equals_the_exhaustive_ranking(seed: int) -> None:
    """Block-quality pruning over DisMax trees of four fields (two words, OR) returns exactly
    the top scores of an exhaustive search."""
    rng = random.Random(seed)
    schema = fields.Schema(n=fields.ID(stored=True), a=fields.TEXT, b=fields.TEXT, c=fields.TEXT, d=fields.TEXT)
    ix = _storage().create_index(schema)
    vocab = ["red", "blue", "green", "grey", "pink"]
    with ix.writer() as w:
        for i in range(900):
            doc = {f: " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 40 if f == "d" else 5)))
                   for f in "abcd"}
            w.add_document(n=str(i), **{f: v for f, v in doc.items() if v})
    weights = {"a": 3.0, "b": 2.0, "c": 1.2, "d": 1.0}

    def word(t: str) -> query.Query:
        return query.DisjunctionMax([query.Term(f, t, boost=wt) for f, wt in weights.items()],
                                    tiebreak=FIELD_TIEBREAK)

    q = query.Or([word("red"), word("pink")])
    with ix.searcher(weighting=scoring.BM25F()) as s:
        exhaustive = sorted(_scores(s, q, optimize=False).values(), reverse=True)[:10]
        pruned = [h.score for h in s.search(q, limit=10, optimize=True)]
    assert pruned == pytest.approx(exhaustive)


def test_a_zero_weight_filter_clause_does_not_break_pruning() -> None:
    """search() adds filters as zero-boost AND clauses; Whoosh divided by the zero boost when
    pruning asked that side for quality (ZeroDivisionError at 100k articles, tag: filter)."""
    rng = random.Random(1)
    schema = fields.Schema(n=fields.ID(stored=True), x=fields.TEXT, tag=fields.KEYWORD)
    ix = _storage().create_index(schema)
    with ix.writer() as w:
        for i in range(2000):
            w.add_document(n=str(i), x=" ".join(rng.choice(["alpha", "beta"]) for _ in range(rng.randint(1, 30))),
                           tag=rng.choice(["t", "u"]))
    q = query.And([query.Term("x", "alpha"), query.Term("tag", "t").with_boost(0.0)])
    with ix.searcher(weighting=scoring.BM25F()) as s:
        m = q.matcher(s)
        m.skip_to_quality(m.max_quality() + 1.0)  # raised ZeroDivisionError
        exhaustive = sorted(_scores(s, q, optimize=False).values(), reverse=True)[:10]
        assert [h.score for h in s.search(q, limit=10)] == pytest.approx(exhaustive)


def _phrase_docs() -> list[str]:
    """Texts where every document holds both words, laid out across Whoosh's posting blocks
    (128 postings): a strong phrase match first and, in the same block, a stronger document
    where the words are apart (so the block's bound stays above the page's bar), a block of
    weak documents with one weak phrase match in it, then a block opening with a strong
    document where the words are apart (never "red fox")."""
    weak = "red " + "cat dog owl elk " * 10 + "fox"
    texts = ["red fox red fox"]  # 0: the phrase, strong
    texts += [weak] * 130  # 1..130: words apart, weak
    texts[50] = "fox fox fox fox fox red red red red red"  # apart, stronger: the first block stays open
    texts.append("red fox " + "cat dog owl elk " * 10)  # 131: the phrase, weak
    texts += [weak] * (256 - len(texts))  # to the end of the second block
    texts.append("fox fox fox fox red red red red")  # 256: apart, the strongest of all
    texts += [weak] * 40
    return texts


def _holds_phrase(text: str) -> bool:
    return "red fox" in text


def test_pruned_phrase_search_returns_only_phrase_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whoosh's phrase matcher never let the top-N collector skip by quality (its ``next()``
    returned nothing), so every document holding the words had its positions checked (a
    phrase of two common words: 100 ms at 10k articles). Pruned, it must still return only
    phrase matches, with the scores of the unpruned search, and skip the weak block."""
    from whoosh.query.spans import SpanNear2

    texts = _phrase_docs()
    ix = _ram_index([{"x": t} for t in texts])
    expected = {str(i) for i, t in enumerate(texts) if _holds_phrase(t)}
    q = query.Phrase("x", ["red", "fox"])
    with ix.searcher(weighting=scoring.BM25F()) as s:
        full = _scores(s, q, optimize=False)
        assert set(full) == expected
        checked: list[int] = []
        spans = SpanNear2.SpanNear2Matcher._get_spans

        def spy(self):  # noqa: ANN001, ANN202
            checked.append(self.id())
            return spans(self)

        monkeypatch.setattr(SpanNear2.SpanNear2Matcher, "_get_spans", spy)
        for limit in (1, 2, 3):
            checked.clear()
            top = s.search(q, limit=limit, optimize=True)
            assert {h["n"] for h in top} <= expected, "a pruned phrase search returned a non-phrase document"
            assert [h.score for h in top] == pytest.approx(sorted(full.values(), reverse=True)[:limit])
            if limit == 1:
                assert not any(140 <= d < 256 for d in checked), "the weak block was not skipped"
        checked.clear()
        s.search(q, limit=1, optimize=False)
        assert any(140 <= d < 256 for d in checked), "without pruning every candidate is checked"


def test_filter_matcher_reports_new_blocks_and_skips_by_quality() -> None:
    """Fix 1: Whoosh's ``FilterMatcher`` (posting lists of a segment with deletions) dropped
    the child's "entered a new block" answer, so the collector never skipped by quality
    after one deletion, and its ``skip_to_quality()`` could stop on a deleted document."""
    from whoosh.matching.wrappers import FilterMatcher

    schema = fields.Schema(n=fields.ID(stored=True, unique=True), x=fields.TEXT)
    ix = _storage().create_index(schema)
    with ix.writer() as w:
        for i in range(300):  # block 1 (docs 0..127): the word once; block 2 on: three times
            w.add_document(n=str(i), x="alpha" if i < 128 else "alpha alpha alpha")
    with ix.writer() as w:
        w.delete_by_term("n", "128")  # the first document of the second block
    with ix.searcher(weighting=scoring.BM25F()) as s:
        reader = s.reader()
        m = reader.postings("x", "alpha", scorer=s.weighting.scorer(s, "x", "alpha"))
        assert isinstance(m, FilterMatcher), "a segment with a deletion wraps its postings"
        entered = []
        while m.is_active():
            entered.append(bool(m.next()))
        assert any(entered), "next() says when it enters a new block (the collector's cue to skip)"
        m = reader.postings("x", "alpha", scorer=s.weighting.scorer(s, "x", "alpha"))
        m.skip_to_quality(m.block_quality())  # skips the weak first block
        assert m.is_active() and m.id() != 128, "skipping by quality never stops on a deleted document"
        assert m.id() == 129


def test_top_collector_prunes_from_the_moment_the_page_is_full() -> None:
    """Fix 5: Whoosh's ``TopCollector`` set its pruning bar only when a document displaced
    another, so pruning began one page late; the bar is the page's worst score as soon as
    the page holds ``limit`` documents."""
    from whoosh import collectors

    ix = _ram_index([{"x": "alpha " * (i + 1)} for i in range(6)])
    with ix.searcher(weighting=scoring.BM25F()) as s:
        c = collectors.TopCollector(limit=3)
        c.prepare(s, query.Term("x", "alpha"), None)
        for docnum, score in [(0, 1.0), (1, 3.0), (2, 2.0)]:
            c._collect(docnum, score)
        assert c.minscore == 1.0, "the full page's worst score is the bar at once"
        c._collect(3, 0.5)
        assert c.minscore == 1.0 and sorted(sc for sc, _ in c.items) == [1.0, 2.0, 3.0]


def test_phrase_matcher_reports_new_blocks_and_skips_to_a_phrase_match() -> None:
    """Fix 4: Whoosh's ``SpanWrappingMatcher.next()`` returned nothing, never that it entered
    a new posting block (the collector's only cue to skip blocks by quality mid-list), and
    its ``skip_to_quality()`` could stop on a document that holds the words apart."""
    texts = _phrase_docs()
    ix = _ram_index([{"x": t} for t in texts])
    q = query.Phrase("x", ["red", "fox"])
    with ix.searcher(weighting=scoring.BM25F()) as s:
        m = q.matcher(s)
        entered = []
        while m.is_active():
            assert _holds_phrase(texts[m.id()]), "the matcher stands on phrase matches only"
            entered.append(bool(m.next()))
        assert any(entered), "next() says when the phrase's postings enter a new block"
        m = q.matcher(s)
        m.skip_to_quality(m.block_quality())  # past the first block
        assert not m.is_active() or _holds_phrase(texts[m.id()]), "skipping lands on a phrase match"
