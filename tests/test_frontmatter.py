"""Front matter as real files contain it."""

from __future__ import annotations

import datetime as dt
import json

from memtui.core import frontmatter


def test_bom_and_crlf_front_matter_is_read() -> None:
    fm = frontmatter.split("\ufeff---\r\ntitle: Lockout\r\nsummary: Reset rules\r\n---\r\nBody\r\n")
    assert fm.meta == {"title": "Lockout", "summary": "Reset rules"}
    assert fm.bom and fm.crlf
    assert fm.body == "Body\r\n"
    assert fm.body_line == 5


def test_dashes_in_the_body_stay_in_the_body() -> None:
    fm = frontmatter.split("---\ntitle: A\n---\nintro\n---\nnot: front matter\n")
    assert fm.meta == {"title": "A"}
    assert fm.body == "intro\n---\nnot: front matter\n"


def test_dates_and_numbers_stay_typed_and_become_json_safe() -> None:
    fm = frontmatter.split("---\nupdated: 2026-10-14\nversion: 3\nratio: 0.5\nok: true\n---\n")
    assert fm.meta["updated"] == dt.date(2026, 10, 14)
    assert fm.meta["version"] == 3
    safe = frontmatter.json_safe(fm.meta)
    assert json.loads(json.dumps(safe)) == {"updated": "2026-10-14", "version": 3, "ratio": 0.5, "ok": True}


def test_tab_indentation_is_a_plain_words_error_with_its_line() -> None:
    fm = frontmatter.split("---\nname: a\n\tdescription: b\n---\nbody\n")
    assert fm.error is not None and "tab" in fm.error
    assert fm.error_line == 3
    assert fm.meta == {}
    assert fm.body == "body\n"


def test_unquoted_colon_says_to_quote() -> None:
    fm = frontmatter.split("---\nsummary: Lockout: reset the counter\n---\n")
    assert fm.error == "summary contains ': ' — put the text in quotes"
    assert fm.error_line == 2


def test_unclosed_front_matter_keeps_the_whole_text_as_body() -> None:
    text = "---\ntitle: A\nno closing fence\n"
    fm = frontmatter.split(text)
    assert fm.present and not fm.closed
    assert "never closed" in fm.error
    assert fm.body == text


def test_duplicate_keys_are_reported_with_the_second_line() -> None:
    fm = frontmatter.split("---\nname: first\nname: second\n---\n")
    assert fm.meta["name"] == "second"
    assert fm.duplicate_keys == [("name", 3)]


def test_a_list_as_front_matter_is_an_error_not_a_crash() -> None:
    fm = frontmatter.split("---\n- a\n- b\n---\n")
    assert fm.error is not None and "list" in fm.error
    assert fm.meta == {}


def test_no_front_matter() -> None:
    fm = frontmatter.split("# Title\n\ntext\n")
    assert not fm.present and fm.meta == {} and fm.body == "# Title\n\ntext\n"
