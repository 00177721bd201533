"""The calibrated confidence of an answer, Latin-typed Bulgarian through every field
and the whole body, and words mixing the two alphabets."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from memtui.core.search import confidence
from memtui.core.search.analysis import terms
from memtui.core.search.index import SearchIndex
from memtui.core.search.query import Results, Hit, search
from memtui.core.workspace import Workspace


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _entry(mem: Path, name: str, symptom: str = "", body: str = "", aliases: str = "[]") -> None:
    _write(mem / "exp" / f"{name}.md",
           f"---\nid: {name}\ntitle: {name}\nsummary: ''\nsymptom: '{symptom}'\naliases: {aliases}\n---\n\n{body}\n")


# -- the calibration --------------------------------------------------------------------------
def test_fit_learns_the_direction_that_separates_the_classes() -> None:
    xs = [(s, 0.1, 0.2) for s in (0.1, 0.2, 0.3, 0.35)] + [(s, 0.5, 1.0) for s in (0.45, 0.6, 0.8, 1.2)]
    ys = [0, 0, 0, 0, 1, 1, 1, 1]
    cal = confidence.fit(xs, ys, cases=8)
    assert cal.cases == 8 and all(c > 0 for c in cal.coef)
    assert cal.probability((1.0, 0.5, 1.0)) > 0.9 > 0.1 > cal.probability((0.1, 0.1, 0.2))
    with pytest.raises(ValueError, match="both right and wrong"):
        confidence.fit(xs[:3], ys[:3])


def test_features_are_scale_free_and_a_flat_list_has_no_lead() -> None:
    standing_out = confidence.features([9.0, 3.0, 2.0, 1.5, 1.0])
    scaled = confidence.features([90.0, 30.0, 20.0, 15.0, 10.0])
    assert standing_out == pytest.approx(scaled), "the score shape does not depend on the scale"
    flat = confidence.features([3.0, 2.9, 2.9, 2.8, 2.8])
    assert flat[0] == pytest.approx(math.log(3 / 2.9)) and flat[0] < standing_out[0]
    assert confidence.probability([3.0, 2.9, 2.9, 2.8, 2.8]) < confidence.probability([9.0, 3.0, 2.0, 1.5, 1.0])
    # a page cut short (more matches not fetched) gives no lead, a list that ends gives the cap
    assert confidence.features([5.0], complete=False)[0] == 0.0
    assert confidence.features([5.0])[0] == pytest.approx(math.log(confidence.MAX_LEAD))
    assert confidence.features([]) is None and confidence.probability([]) == 0.0


def test_no_feature_moves_with_a_tickets_length() -> None:
    """The same ranked list, from a ticket of 5 words or of 500 (a forwarded e-mail), is
    as likely right: no feature reads the word count."""
    assert confidence.FEATURES == ("lead", "spread", "agreement")
    assert confidence.features([9.0, 3.0, 2.0, 1.5, 1.0], agreement=0.4) == pytest.approx(
        confidence.features([90.0, 30.0, 20.0, 15.0, 10.0], agreement=0.4))


def test_verdicts_label_a_likely_answer_or_the_best_possible_ones() -> None:
    assert confidence.verdicts(0.9, 7) == ["likely"] * 5 + ["", ""]
    assert confidence.verdicts(0.2, 7) == ["possible"] * 3 + [""] * 4
    assert confidence.verdicts(0.2, 2) == ["possible"] * 2


def test_an_index_line_and_its_article_are_one_item() -> None:
    hits = [Hit("index-line", "memory/AGENTS.md", "", "active", 9.0, "A", target="memory/a.md", line=3),
            Hit("article", "memory/a.md", "", "active", 8.0, "A"),
            Hit("article", "memory/b.md", "", "active", 2.0, "B")]
    res = Results(hits=hits, total=3, query_words=2).assess()
    assert res.likelihood == pytest.approx(confidence.probability([9.0, 2.0]))
    assert hits[0].verdict == hits[1].verdict


# -- analysis ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected", "absent"), [
    ("VPNа", {"vpn"}, {"vpnа", "vpna", "а"}),          # English word, Bulgarian article, no hyphen
    ("SMSът", {"sms"}, {"ът"}),
    ("crash-ва", {"crash"}, {"ва"}),                    # verb ending after a hyphen
    ("PаyGate", {"paygat", "pay", "gate"}, set()),      # a Cyrillic а inside a Latin word
    ("пoлицата", {"полиц"}, set()),                     # a Latin o inside a Cyrillic word
])
def test_words_mixing_alphabets_are_read_in_one(text: str, expected: set[str], absent: set[str]) -> None:
    got = {t for t, _ in terms(text)}
    assert expected <= got and not (absent & got), got


def test_one_script_words_are_untouched() -> None:
    assert [t for t, _ in terms("СА0000ВХ")] == ["са0000вх"]  # a plate: digits and Cyrillic only
    assert "полиц" in {t for t, _ in terms("полицата")}


# -- Latin-typed Bulgarian through weighted fields and the whole body ---------------------------
@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    mem = root / "memory"
    _write(mem / "AGENTS.md", "# Memory\n")
    filler = " ".join(f"word{i}" for i in range(400))  # about 3,000 characters
    _entry(mem, "in-symptom", symptom="касата не се затваря")
    _entry(mem, "in-body", body="Отчет: касата не се затваря в края на деня.")
    _entry(mem, "deep-body", body=f"{filler} Фискалното устройство не печата.")
    return Workspace.open(root)


def test_a_latin_typed_word_counts_by_its_field_weight(ws: Workspace) -> None:
    """The same Cyrillic phrase in a symptom and in a body: typed in Latin letters, the
    symptom match must outrank the body match as it does typed in Cyrillic (the sound keys
    were unweighted: both scored as body matches)."""
    idx = SearchIndex(ws)
    idx.update()
    cyr = search(idx, "касата не се затваря")
    lat = search(idx, "kasata ne se zatvarya")
    assert [h.entry_id for h in cyr.hits[:2]] == ["in-symptom", "in-body"]
    assert [h.entry_id for h in lat.hits[:2]] == ["in-symptom", "in-body"]
    assert lat.hits[0].score / lat.hits[1].score == pytest.approx(cyr.hits[0].score / cyr.hits[1].score, rel=0.1)


def test_a_latin_typed_word_reaches_the_end_of_a_long_body(ws: Workspace) -> None:
    """``fiskalnoto ustroystvo`` is the body's last words typed in Latin letters, past its
    first 1,000 characters (where the sound keys used to stop)."""
    idx = SearchIndex(ws)
    idx.update()
    res = search(idx, "fiskalnoto ustroystvo")
    assert res.hits and res.hits[0].entry_id == "deep-body"


# -- agreement between the query and the best item (false precedents) ----------------
def test_coverage_is_the_share_of_the_query_word_weight_an_item_holds(tmp_path: Path) -> None:
    """An entry holding a ticket's rare word covers more of it than one holding only its
    common words, however those score; agreement counts the symptom, aliases, title and
    summary only."""
    mem = tmp_path / "ws" / "memory"
    _write(mem / "AGENTS.md", "# Memory\n")
    for i in range(12):
        _entry(mem, f"common-{i:02d}", body="policy payment policy payment " * (i + 1))
    _entry(mem, "rare-in-body", body="policy zanzibarite")
    _entry(mem, "rare-in-symptom", symptom="zanzibarite", body="payment")
    idx = SearchIndex(Workspace.open(tmp_path / "ws"))
    idx.update()
    res = search(idx, "policy payment zanzibarite")
    by_id = {h.entry_id: h for h in res.hits}
    common, body, symptom = by_id["common-11"], by_id["rare-in-body"], by_id["rare-in-symptom"]
    assert common.coverage is not None and common.coverage < body.coverage < 1.0
    assert body.coverage > 0.5, "the rare word carries most of the weight"
    assert symptom.agreement > 0.5 and body.agreement == 0.0, "only the symptom says it"
    assert common.agreement == 0.0
    # a query with no plain word has no word to miss
    assert all(h.coverage == 1.0 for h in search(idx, "zanzi*").hits if h.coverage is not None)


def test_features_carry_agreement_and_default_to_one() -> None:
    assert confidence.features([5.0, 1.0], agreement=0.25)[2] == 0.25
    assert confidence.features([5.0, 1.0])[2] == 1.0
    low = confidence.probability([5.0, 1.0], agreement=0.0)
    high = confidence.probability([5.0, 1.0], agreement=0.9)
    assert low < high, "the shipped calibration trusts an answer that holds the ticket's words"


def test_weights_change_the_fit_as_repeated_examples_would() -> None:
    xs = [(0.1,), (0.2,), (0.8,), (0.9,), (0.5,)]
    ys = [0, 0, 1, 1, 0]
    doubled = confidence.fit(xs + [(0.5,)], ys + [0])
    weighted = confidence.fit(xs, ys, weights=[1, 1, 1, 1, 2])
    assert weighted.coef == pytest.approx(doubled.coef, rel=1e-6)
    assert weighted.intercept == pytest.approx(doubled.intercept, rel=1e-6)


# -- Latin typing conventions and the candidate step of a pasted ticket ---------------
@pytest.mark.parametrize("latin, cyrillic", [
    ("grajdanska", "гражданска"),  # j for ж
    ("vijda", "вижда"),
    ("stupkite", "стъпките"),  # u for ъ
    ("pyt", "път"),  # y for ъ
    ("klientat", "клиентът"),  # the full article
])
def test_latin_typing_readings_reach_the_cyrillic_key(latin: str, cyrillic: str) -> None:
    from memtui.core.search.analysis import reading_keys, translit_key
    assert translit_key(latin) != translit_key(cyrillic), "the default reading misses it"
    assert translit_key(cyrillic) in reading_keys(latin)


def test_readings_leave_words_that_are_not_latin_letters_alone() -> None:
    from memtui.core.search.analysis import reading_keys
    assert reading_keys("гражданска") == [] and reading_keys("ora-00001") == [] and reading_keys("jo") == []


def test_digits_of_latin_typing_are_read_as_letters_and_codes_stay() -> None:
    from memtui.core.search.analysis import latin_digits
    assert latin_digits("4asa vsi4ki pla6tat o6te") == "chasa vsichki plashtat oshte"
    assert latin_digits("mp4 ipv6 4 6 ORA-00001 COM3") == "mp4 ipv6 4 6 ORA-00001 COM3"


def test_a_latin_typed_ticket_with_digits_finds_the_cyrillic_symptom(tmp_path: Path) -> None:
    mem = tmp_path / "ws" / "memory"
    _write(mem / "AGENTS.md", "# Memory\n")
    _entry(mem, "cash", symptom="касата не се затваря вечер")
    _entry(mem, "other", symptom="принтерът не печата")
    idx = SearchIndex(Workspace.open(tmp_path / "ws"))
    idx.update()
    res = search(idx, "kasata ne se zatvarq ve4er")
    assert res.hits and res.hits[0].entry_id == "cash"
    assert search(idx, "ve4er").hits[0].entry_id == "cash"


def test_a_precedent_sharing_only_a_tickets_less_rare_words_is_scored(tmp_path: Path) -> None:
    """A pasted ticket (more than 16 words) used to score only the documents its six rarest
    words find: in a small memory those six can be words one look-alike holds, and the
    precedent holding the ticket's next rarest words was never a candidate."""
    mem = tmp_path / "ws" / "memory"
    _write(mem / "AGENTS.md", "# Memory\n")
    rare = [f"rareword{i}" for i in range(6)]
    _entry(mem, "lookalike", body=" ".join(rare))
    _entry(mem, "precedent", symptom="alpha bravo charlie delta echo foxtrot golf hotel india juliet")
    for i in range(3):  # the precedent's words are less rare than the look-alike's
        _entry(mem, f"filler-{i}", body="alpha bravo charlie delta echo foxtrot golf hotel india juliet")
    idx = SearchIndex(Workspace.open(tmp_path / "ws"))
    idx.update()
    ticket = " ".join(rare) + " alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima"
    ids = [h.entry_id for h in search(idx, ticket, limit=10).hits]
    assert "precedent" in ids


def test_known_is_the_share_of_the_query_words_the_memory_holds(tmp_path: Path) -> None:
    mem = tmp_path / "ws" / "memory"
    _write(mem / "AGENTS.md", "# Memory\n")
    _entry(mem, "one", symptom="printer jams", body="the printer jams every morning")
    idx = SearchIndex(Workspace.open(tmp_path / "ws"))
    idx.update()
    assert search(idx, "printer jams").known == 1.0
    half = search(idx, "printer jams toner cartridge")
    assert half.known == pytest.approx(0.5)
    assert search(idx, "print*").known is None, "a lone prefix has no plain word"


def test_keyed_is_the_share_of_known_words_found_only_by_their_sound_key(tmp_path: Path) -> None:
    mem = tmp_path / "ws" / "memory"
    _write(mem / "AGENTS.md", "# Memory\n")
    _entry(mem, "cash", symptom="касата не се затваря", body="the cash desk")
    idx = SearchIndex(Workspace.open(tmp_path / "ws"))
    idx.update()
    assert search(idx, "касата затваря").keyed == 0.0, "Cyrillic words meet their plain terms"
    latin = search(idx, "kasata zatvarya cash")
    assert latin.known == 1.0 and latin.keyed == pytest.approx(2 / 3)


def test_a_question_favours_the_article_that_answers_it(tmp_path: Path) -> None:
    """A ticket that asks (holds ``?``) wants a checklist or procedure: articles' scores
    are multiplied by QUESTION_ARTICLE_BOOST and the page ranked again; experiences keep theirs."""
    from memtui.core.search import query
    mem = tmp_path / "ws" / "memory"
    _write(mem / "AGENTS.md", "# Memory\n")
    _entry(mem, "past-case", symptom="card refund", aliases="[card refund, refund to the card]", body="refund card")
    _write(mem / "kb" / "refunds.md", "---\nid: refunds\ntitle: Refunds\nsummary: card refund\n---\n\nnothing\n")
    idx = SearchIndex(Workspace.open(tmp_path / "ws"))
    idx.update()
    told = search(idx, "refund to the card")
    asked = search(idx, "refund to the card?")
    told_s = {h.entry_id: h.score for h in told.hits}
    asked_s = {h.entry_id: h.score for h in asked.hits}
    assert asked_s["refunds"] == pytest.approx(told_s["refunds"] * query.QUESTION_ARTICLE_BOOST)
    assert asked_s["past-case"] == pytest.approx(told_s["past-case"])
    assert [h.entry_id for h in told.hits] == ["past-case", "refunds"]
    assert [h.entry_id for h in asked.hits] == ["refunds", "past-case"], "the article rises"
    assert asked.hits[0].coverage is not None, "its coverage is measured where it now stands"


def test_a_left_out_sound_key_is_not_highlighted_and_a_searched_one_is(tmp_path: Path) -> None:
    """An English word's sound key finds no more than the word itself, so it is neither
    searched nor highlighted (highlighting by key analyses every word of a snippet for its
    sound); a Latin-typed Bulgarian word is searched and highlighted by its key."""
    from memtui.core.search.analysis import KEY_MARK
    from memtui.core.search.engine.matching import rank
    from memtui.core.search.query import parse
    mem = tmp_path / "ws" / "memory"
    _write(mem / "AGENTS.md", "# Memory\n")
    _entry(mem, "one", symptom="касата не се затваря", body="the printer jams")
    idx = SearchIndex(Workspace.open(tmp_path / "ws"))
    idx.update()
    idx.open()
    english = rank(idx, *parse("printer"), 10, False).highlight
    latin = rank(idx, *parse("kasata"), 10, False).highlight
    assert "printer" in english and not any(t.startswith(KEY_MARK) for t in english)
    assert any(t.startswith(KEY_MARK) for t in latin)
    assert search(idx, "kasata").hits[0].snippet.spans, "the Cyrillic word is highlighted"


def test_a_calibration_is_never_extrapolated_past_what_it_was_fitted_on() -> None:
    """A one-word search is not a ticket shorter than any the model learnt from: each
    feature is read within the range of the fitted examples (a one-word query got 29 %
    for an answer the same model gives 94 % at the shortest ticket's length)."""
    xs = [(0.1, 1.0), (0.2, 2.0), (0.8, 3.0), (0.9, 4.0)]
    cal = confidence.fit(xs, [0, 0, 1, 1])
    assert cal.lower == (0.1, 1.0) and cal.upper == (0.9, 4.0)
    assert cal.probability((0.5, -10.0)) == pytest.approx(cal.probability((0.5, 1.0)))
    assert cal.probability((5.0, 4.0)) == pytest.approx(cal.probability((0.9, 4.0)))
    d = confidence.DEFAULT
    assert len(d.lower) == len(d.upper) == len(d.coef) == len(confidence.FEATURES)
    one_word = confidence.features([5.2, 5.1, 5.1, 4.9, 4.9], agreement=1.0)
    assert d.probability(one_word) >= confidence.LIKELY
