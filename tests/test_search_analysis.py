"""Search analysis: tokenising, normalising, stemming, Latin-letter Bulgarian."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from memtui.core.frontmatter import split
from memtui.core.search.analysis import KEY_MARK, normalize, stem_bg, terms, translit_key, words
from memtui.core.search.query import snippet_for


def _terms(text: str) -> list[str]:
    return [t for t, _ in terms(text)]


@pytest.mark.parametrize("word, stem", [
    # definite articles (Savoy 2007: -ът, -ят, -та, -то, -те, -ия, -ият)
    ("полицата", "полиц"), ("полица", "полиц"), ("графикът", "график"),
    ("учителят", "учител"), ("грешките", "грешк"),
    # plurals with stem changes: -ци → -к, -зи → -г, -си → -х, -ове, е…и → я
    ("ученици", "ученик"), ("подлози", "подлог"), ("градове", "град"), ("брегове", "брег"),
    ("успехи", "успях"),  # the е…и → я rule (as for бряг/брези) applies to every such word
    # short words are kept
    ("ток", "ток"), ("да", "да"),
])
def test_savoy_bulgarian_stemmer(word: str, stem: str) -> None:
    assert stem_bg(word) == stem


def test_inflected_forms_share_one_stem() -> None:
    forms = ["грешка", "грешката", "грешки", "грешките"]
    assert len({stem_bg(f) for f in forms}) == 1


def test_normalize_folds_case_nfd_stress_and_yo() -> None:
    nfd = unicodedata.normalize("NFD", "Издайте")  # й decomposed into и + breve
    assert normalize(nfd) == "издайте"
    assert normalize("па\u0301мет") == "памет"  # stress mark removed
    assert normalize("ЁЛКА") == "елка"
    assert normalize("Café") == "cafe"
    assert _terms(nfd) == _terms("издайте")  # NFD no longer splits the word


def test_latin_letter_bulgarian_meets_cyrillic() -> None:
    latin = {t for t in _terms("ne moga da izdam polica") if t.startswith(KEY_MARK)}
    cyrillic = {t for t in _terms("Не мога да издам полицата") if t.startswith(KEY_MARK)}
    assert latin and latin == cyrillic
    assert translit_key("zatvorya") == translit_key("затворя")
    assert translit_key("kasata") == translit_key("касата") == translit_key("каса")


def test_function_words_are_dropped_in_both_scripts() -> None:
    assert _terms("не мога да") == []
    assert _terms("ne moga da") == []
    assert _terms("the and of") == []


@pytest.mark.parametrize("text, expected", [
    ("ORA-00001", {"ora-00001", "ora", "00001"}),
    ("(POL.PK_POLICY)", {"pol.pk_policy", "pk_policy", "pol", "pk", "polici"}),
    ("/api/claims/submit", {"api/claims/submit", "api", "claim", "submit"}),
    ("NullPointerException", {"nullpointerexcept", "null", "pointer", "except"}),
])
def test_identifiers_kept_whole_and_by_parts(text: str, expected: set[str]) -> None:
    plain = {t for t in _terms(text) if not t.startswith(KEY_MARK)}
    assert expected <= plain


def test_word_offsets_are_code_points_of_the_input() -> None:
    text = "📧 ✅ Журнал: память"
    for w in words(text):
        assert text[w.start:w.end] == w.text


def test_snippet_highlights_whole_cyrillic_words(shared: Path) -> None:
    """Each expected highlight is exactly a span of the snippet, on its own line."""
    folder = shared / "bug-inputs" / "B08"
    body = split((folder / "notes" / "highlight-mix.md").read_text("utf-8")).body
    lines = [ln for ln in body.splitlines() if ln.strip()]
    checked = 0
    for row in (folder / "expected-highlights.tsv").read_text("utf-8").splitlines():
        if not row.strip() or row.startswith("#"):
            continue
        query, line_no, exact = row.split("\t")[:3]
        line = lines[int(line_no) - 1]
        highlight = {t for t, _ in terms(query)}
        snip = snippet_for({"body": line}, highlight, width=400)
        assert snip is not None and snip.text == line  # text never altered
        marked = [snip.text[s:e] for s, e in snip.spans]
        assert exact in marked, (query, line, marked)
        checked += 1
    assert checked >= 8
    # ёлка and елка are one word for search: both highlighted, consistently
    line4 = lines[3]
    snip = snippet_for({"body": line4}, {t for t, _ in terms("елка")}, width=400)
    assert snip is not None
    assert sorted(snip.text[s:e] for s, e in snip.spans) == ["елка", "ёлка"]


def test_analyzer_fast_path_gives_the_terms_of_terms() -> None:
    """The index analyser skips Word objects for speed; its tokens must equal :func:`terms`."""
    from memtui.core.search.analysis import terms
    from memtui.core.search.engine.analyzer import MemtuiAnalyzer

    text = ("Не мога да издам полица: ORA-00001 on PK_POLICY at /api/claims/submit, "
            "NullPointerException in ClaimService — ne moga da izdam polica; café naïve ёлка")
    for keys, plain in ((True, True), (False, True), (True, False)):
        want = [(t, w.pos, w.start, w.end) for t, w in terms(text, keys=keys, plain=plain)]
        got = [(tok.text, tok.pos, tok.startchar, tok.endchar)
               for tok in MemtuiAnalyzer(keys=keys, plain=plain)(text, positions=True, chars=True)]
        assert got == want and len(got) > 10


def test_term_spans_match_terms() -> None:
    from memtui.core.search.analysis import term_spans, terms

    text = "Не мога да издам полица: ORA-00001 on /api/claims/submit — ne moga da izdam polica, naïve"
    assert list(term_spans(text)) == [(t, w.start, w.end) for t, w in terms(text)]


def test_english_stems_are_snowball_porter2_and_thread_safe() -> None:
    """PyStemmer's stemmer objects are not thread-safe; the TUI stems in worker threads
    (search as you type while the index catches up). Each thread gets its own."""
    from concurrent.futures import ThreadPoolExecutor

    from memtui.core.search.analysis import _stem_en

    words = ["routing", "invoices", "added", "generously", "customs", "depots", "scanning"] * 300
    expected = {"routing": "rout", "invoices": "invoic", "added": "add", "generously": "generous"}
    assert {w: _stem_en(w) for w in expected} == expected
    alone = [_stem_en(w) for w in words]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(_stem_en, words))
    assert together == alone


def test_snippet_never_starts_or_ends_inside_a_word() -> None:
    """New-user test: snippets began "срочване за днес…" (inside "пренасрочване") where the
    words before the match were joined by table bars, not spaces."""
    from memtui.core.search.query import snippet_for

    body = "Въведение " * 10 + "пренасрочване|днес|отказ|заявка|клиент|куриер|маршрут|заключен" + " край" * 40
    snip = snippet_for({"body": body}, {"маршрут"}, width=60)
    assert snip is not None and snip.spans
    start = body.index(snip.text)
    assert start == 0 or not body[start - 1].isalnum(), snip.text
    end = start + len(snip.text)
    assert end == len(body) or not body[end].isalnum() or not body[end - 1].isalnum(), snip.text


def test_snippet_reads_a_long_field_only_near_its_first_match() -> None:
    """a field is analysed up to SNIPPET_LOOKAHEAD widths past its first
    match, so the excerpt comes from there even if a denser cluster lies much later."""
    from memtui.core.search.query import SNIPPET_LOOKAHEAD, snippet_for

    width = 60
    far = " filler" * (SNIPPET_LOOKAHEAD * width)
    body = "Depot opens late." + far + " depot depot depot at the end"
    snip = snippet_for({"body": body}, {"depot"}, width=width)
    assert snip is not None and snip.text.startswith("Depot opens late")
    assert [snip.text[a:b] for a, b in snip.spans] == ["Depot"]


def test_fullwidth_and_ligature_letters_fold_to_plain_letters() -> None:
    """New-user test: ``ｒｏｕｔｅ`` found nothing. Compatibility forms fold (NFKD) before
    matching; Cyrillic й keeps its breve."""
    from memtui.core.search.analysis import normalize, terms

    assert normalize("ｒｏｕｔｅ") == "route"
    assert normalize("ﬁle") == "file"
    assert normalize("Й") == "й"
    assert [t for t, _ in terms("ｒｏｕｔｅｓ") if not t.startswith("§")] == [t for t, _ in terms("routes") if not t.startswith("§")]


def test_the_build_analysis_keeps_each_chunk_once() -> None:
    """The analyses that cache their result per chunk do not also fill the split cache (a
    build worker kept every chunk twice, a 100k worker's memory)."""
    from memtui.core.search import analysis

    analysis.split_chunk.cache_clear()
    analysis._chunk_terms.cache_clear()
    analysis._chunk_spans.cache_clear()
    text = "Policy ORA-00001 на полицата PK_POLICY NullPointerException"
    assert analysis.term_positions_and_keys(text) == analysis.term_positions_and_keys(text)
    list(analysis.term_spans(text))
    assert analysis._chunk_terms.cache_info().currsize > 0 and analysis._chunk_spans.cache_info().currsize > 0
    assert analysis.split_chunk.cache_info().currsize == 0


def test_the_written_out_combining_marks_are_those_of_the_unicode_database() -> None:
    """The analyser's table of combining marks (written out so a start need not walk every
    code point) is the walk itself for its Unicode version, and another version walks."""
    import unicodedata

    from memtui.core.search import analysis

    if unicodedata.unidata_version == analysis._MARK_SPANS_VERSION:
        assert list(analysis._MARK_SPANS) == analysis._walk_mark_spans()
    assert analysis._mark_spans() == analysis._walk_mark_spans()
    assert analysis.is_word("नमस्ते")  # a Devanagari vowel sign stays inside the word
