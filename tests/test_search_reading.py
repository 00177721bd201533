"""Reading a pasted ticket before it is searched: e-mail structure in Bulgarian and English,
logs, HTML and MIME sources, and bad input (a 1 MB paste, attachment data, 10,000 repeated
lines, a signature alone, a language the memory does not hold) answered within bounds."""

from __future__ import annotations

import base64
import shutil
import time
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core.search import reading
from memtui.core.search.index import SearchIndex
from memtui.core.search.query import QueryError, search
from memtui.core.search.reading import read_ticket
from memtui.core.workspace import Workspace

#: A generous bound for one search of a bad input (the target is 1 s; a loaded shared
#: machine must not make the test flaky: the bounded work is asserted apart).
SLOW = 10.0

BG_GMAIL = """Здравейте,

препращам оплакването на клиента: не може да плати вноската с карта в MyPolicy, излиза 3DS timeout.

Поздрави,
Мария Иванова
Отдел Обслужване на клиенти

На пн, 1.12.2026 г. в 9:14 Иван Петров <ivan.petrov@example.bg> написа:
> Здравейте, опитвам да платя вноската по полица POL-0000123,
> но след кода от банката страницата зависва.
"""

BG_OUTLOOK = """Колеги, вижте по-долу.

С уважение,
Георги Георгиев

От: Петър Петров <petar@example.bg>
Изпратено: понеделник, 1 декември 2026 г. 10:02
До: Support <support@example.bg>
Относно: RE: грешка при издаване

При запис на полицата излиза ORA-00001: unique constraint (POL.PK_POLICY) violated.

От: Support <support@example.bg>
Изпратено: понеделник, 1 декември 2026 г. 09:40
До: Петър Петров
Относно: грешка при издаване

Моля, изпратете точния текст на грешката.
"""

EN_OUTLOOK = """FYI, see below.

Best regards,
Kate
________________________________
From: Broker Office <office@broker.example>
Sent: Monday, December 1, 2026 10:02 AM
To: Support <support@example.com>
Subject: Blank policy PDF

Hello, the printed policy document comes out empty since this morning, only the header shows.
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, shared: Path) -> SearchIndex:
    root = tmp_path_factory.mktemp("reading") / "ws"
    shutil.copytree(shared / "triage" / "memory", root / "memory")
    idx = SearchIndex(Workspace.open(root))
    idx.update()
    return idx


# -- e-mail structure -------------------------------------------------------------------------
def test_a_bulgarian_gmail_reply_reads_the_new_message_and_the_one_it_answers() -> None:
    r = read_ticket(BG_GMAIL)
    assert "3DS timeout" in r.message and "POL-0000123" in r.message, "the newest message and the quoted report"
    assert "Мария Иванова" in r.aside and "Мария Иванова" not in r.message, "the signature counts less"
    assert "написа:" in r.aside and "написа:" not in r.message
    assert r.summary.startswith("read the newest message and the one it answers")
    assert "signature" in r.summary and "counted less" in r.summary


def test_a_bulgarian_outlook_thread_keeps_subjects_and_sets_older_history_apart() -> None:
    r = read_ticket(BG_OUTLOOK)
    assert "ORA-00001" in r.message and "грешка при издаване" in r.message, "the report and its subject"
    assert "Моля, изпратете точния текст" in r.aside, "the older message counts less"
    assert "Изпратено:" in r.aside and "Изпратено:" not in r.message, "header lines count less"
    assert "older history" in r.summary


def test_an_english_outlook_forward_reads_the_forwarded_report() -> None:
    r = read_ticket(EN_OUTLOOK)
    assert "comes out empty" in r.message and "Blank policy PDF" in r.message
    assert "Kate" in r.aside and "Sent:" in r.aside


def test_a_plain_ticket_is_read_as_typed_and_says_nothing() -> None:
    text = "Не мога да издам полица, излиза ORA-00001 при запис."
    r = read_ticket(text)
    assert r.message == text and r.aside == "" and r.summary == ""


def test_a_log_reads_its_error_lines() -> None:
    log = "\n".join([f"2026-03-01 10:00:{i:02d} INFO poll ok id={i}" for i in range(20)]
                    + ["2026-03-01 10:00:21 ERROR PayGate callback failed: PKIX path validation failed",
                       "    at com.example.Callback.handle(Callback.java:42)"])
    r = read_ticket(log)
    assert r.kind == "log" and "PKIX" in r.message and "poll ok" not in r.message
    assert "poll ok" in r.aside and r.summary.startswith("read the log's error lines, 1 line")


def test_html_and_mime_sources_are_read_as_their_text() -> None:
    html = "<html><head><style>p{}</style></head><body><p>Клиентът не вижда <b>полицата</b></p><br>" \
           "<script>alert(1)</script></body></html>"
    r = read_ticket(html)
    assert "Клиентът не вижда полицата" in r.message and "alert" not in r.message + r.aside
    assert "HTML" in r.summary
    attachment = base64.b64encode(b"%PDF-1.4 " * 400).decode()
    mime = ("From: a@example.com\nTo: b@example.com\nSubject: blank PDF\nMIME-Version: 1.0\n"
            'Content-Type: multipart/mixed; boundary="XX"\n\n--XX\nContent-Type: text/plain; charset=utf-8\n\n'
            "The policy PDF is blank.\n--XX\nContent-Type: application/pdf\nContent-Disposition: attachment; "
            'filename="p.pdf"\nContent-Transfer-Encoding: base64\n\n'
            + "\n".join(attachment[i:i + 76] for i in range(0, len(attachment), 76)) + "\n--XX--\n")
    r = read_ticket(mime)
    assert "policy PDF is blank" in r.message and "JVBER" not in r.message + r.aside
    assert "not read: 1 attachment" in r.summary


# -- bad input: bounded work, an answer or a clear sentence -------------------------------------
def _timed(index: SearchIndex, text: str):  # noqa: ANN202
    started = time.perf_counter()
    res = search(index, text, limit=10, snippets=True)
    return res, time.perf_counter() - started


def test_a_megabyte_email_is_read_in_part_and_says_so(index: SearchIndex) -> None:
    big = BG_GMAIL + ("\n> " + "стара кореспонденция за вноската и плащането с карта " * 8) * 3000
    assert len(big) > 1_000_000
    r = read_ticket(big)
    assert len(r.message.split()) <= reading.MAX_WORDS and len(r.aside.split()) <= reading.MAX_WORDS
    assert "not read" in r.summary and "characters" in r.summary
    res, took = _timed(index, big)
    assert res.reading is not None and res.hits and took < SLOW


def test_base64_attachment_blocks_are_not_read(index: SearchIndex) -> None:
    block = base64.b64encode(bytes(range(256)) * 200).decode()
    text = "Полицата излиза празна при печат.\n" + "\n".join(block[i:i + 76] for i in range(0, len(block), 76))
    r = read_ticket(text)
    assert r.message.strip() == "Полицата излиза празна при печат."
    assert "attachment data line" in r.summary
    res, took = _timed(index, text)
    assert res.hits and took < SLOW


def test_ten_thousand_repeated_lines_are_read_once(index: SearchIndex) -> None:
    text = "ORA-00001: unique constraint (POL.PK_POLICY) violated\n" * 10_000
    r = read_ticket(text)
    assert r.message.count("ORA-00001") == 1 and "repeated lines" in r.summary and "not read" in r.summary
    res, took = _timed(index, text)
    assert res.hits and took < SLOW


def test_an_html_mail_source_finds_its_precedent(index: SearchIndex) -> None:
    html = ("<html><body><div>Здравейте,</div><div>при запис на полица излиза "
            "ORA-00001: unique constraint (POL.PK_POLICY) violated</div>" + "<div>&nbsp;</div>" * 20_000
            + "</body></html>")
    res, took = _timed(index, html)
    assert res.reading is not None and "HTML markup" in res.reading.summary
    assert any(h.entry_id == "exp-001" for h in res.hits[:5]) and took < SLOW


def test_twenty_thousand_short_lines_are_read_in_part(index: SearchIndex) -> None:
    text = "\n".join(f"ред {i} грешка" for i in range(20_000))
    r = read_ticket(text)
    assert len(r.message.splitlines()) + len(r.aside.splitlines()) <= reading.MAX_LINES
    res, took = _timed(index, text)
    assert res.reading is not None and "not read" in res.reading.summary and took < SLOW


def test_a_ticket_that_is_only_a_signature_says_so(index: SearchIndex) -> None:
    text = "--\nИван Петров\nтел. 0888 000 000\nИзпратено от моя iPhone"
    res, took = _timed(index, text)
    assert res.reading is not None and res.reading.summary.startswith("no message found, only signature")
    assert took < SLOW and res.likelihood < 0.5, "a signature is no precedent"


def test_a_language_the_memory_does_not_hold_is_a_clear_answer(index: SearchIndex,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    text = "Γεια σας,\nτο συμβόλαιο δεν εκδίδεται σήμερα το πρωί.\nΕυχαριστώ"
    res, took = _timed(index, text)
    assert not res.hits and res.known == 0.0 and took < SLOW
    code = main(["search", "-w", str(index.ws.root), text])
    assert code == 1
    assert "none of its words occurs in the memory" in capsys.readouterr().out


def test_a_paste_of_only_symbols_is_a_clear_error(index: SearchIndex) -> None:
    with pytest.raises(QueryError, match="nothing to search for"):
        search(index, "-----\n*****\n=====\n" * 3)


def test_no_confident_precedent_names_the_entries_set_apart_and_why(index: SearchIndex,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    text = "Hi,\nour office printer shows paper jam on page two of every claim form.\nBest regards,\nIvan"
    res = search(index, text)
    possible = [h for h in res.hits if h.verdict == "possible"]
    assert res.likelihood < 0.5 and possible
    first = possible[0]
    assert first.shares and first.lacks and first.cause
    assert first.why.startswith("shares ") and "; lacks " in first.why and "its cause: " in first.why
    assert first.to_json()["why"] == first.why
    assert all(not h.why for h in res.hits if h.verdict != "possible")
    assert main(["search", "-w", str(index.ws.root), text]) == 0
    out = capsys.readouterr().out
    assert "no confident precedent" in out and "set apart: shares " in out


def test_the_page_size_does_not_change_how_likely_an_answer_is(index: SearchIndex) -> None:
    """An index line and its article are one item: a page of one hit was judged on a list
    too short to see its tail, and said another probability than a page of ten."""
    text = ("Hello,\nthe printer in the Ruse office jams on every second page of the claim form since the "
            "toner change.\nThanks,\nIvan")
    ten = search(index, text, limit=10)
    assert len(search(index, text, limit=1).hits) == 1
    for limit in (1, 3):
        assert search(index, text, limit=limit).likelihood == pytest.approx(ten.likelihood)
