"""Reading a pasted ticket the way a support person does, before it is searched.

A ticket arrives as it was pasted: an e-mail with its headers, its quoted history ("On …
wrote:", "На … написа:", ``>`` lines, Outlook's "From:/Sent:" blocks), a signature and a
disclaimer; an HTML mail source; a log with hundreds of lines; a transcript. What a
support person reads first is the newest message, or a log's error lines; the rest is
context. :func:`read_ticket` sets that context apart (it still counts, weighted lower: see
:data:`ASIDE_WEIGHT`) and says what it read, in one sentence (:attr:`Reading.summary`).

- E-mail structure is read by ``mail-parser-reply`` (its per-language tables of reply
  headers, signatures and disclaimers; 13 languages). It has no Bulgarian, so
  :data:`BULGARIAN` adds one in the library's own table format (Gmail's and Outlook's
  Bulgarian headers, the usual closings): the rules are the mail clients', not a corpus's.
- An HTML mail is read as its text (the standard library's ``html.parser``: tags apart,
  scripts and styles dropped); a raw MIME source by the standard library's ``email``
  parser (the text part; attachments named, not read).
- Attachment data (base64 blocks), lines repeated verbatim and everything past
  :data:`MAX_CHARS` are not read, and the summary says so: the work is bounded whatever
  is pasted.
- A log (most lines stamped with a time or a level): its error lines (and the lines of a
  stack trace's cause) are read; the other lines are set apart.

Nothing here imports the engine; the ranking only sees words and their weights.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

#: Characters of a pasted ticket that are read at all; the rest is said to be left unread.
MAX_CHARS = 100_000
#: Words of the message itself and of what is set apart that are searched (each): a ticket's
#: precedent shows in its first few hundred words; a 1 MB paste must not cost more.
MAX_WORDS = 400
#: Lines (after repeats and attachment data are set apart) whose structure is read: the
#: mail client conventions are matched line by line, and a paste of 20,000 short lines must
#: not cost more than a page of mail.
MAX_LINES = 1_000
#: Weight of a word set apart (quoted history, signature, a log's other lines) beside a
#: word of the message itself (1): counted half. A fixed reading of "counted less", not
#: fitted on any case.
ASIDE_WEIGHT = 0.5

@functools.cache
def _mail_parser() -> Any:
    """``mail-parser-reply``'s ``EmailMessage``, with Bulgarian added to its table of
    languages: Gmail's reply header ("На пн, 1.12.2026 г. в 9:14 Иван <…> написа:"),
    Outlook's and Gmail's header blocks ("От:/Изпратено:/До:/Относно:", "Дата:/Тема:/Копие:"),
    the usual closings and the mobile clients' "Изпратено от …". Imported when a pasted text
    is first read (a typed query never needs it)."""
    from mailparser_reply import constants as mail_constants
    from mailparser_reply.parser import EmailMessage

    bulgarian: dict[str, object] = {
        "wrote_header": (r"^(?!На[.\s]*На\s(.+?\s?.+?)\sнаписа:)(" + mail_constants.QUOTED_MATCH_INCLUDE
                         + r"На\s(?:.+?\s?.+?)\s?написа:)$"),
        "from_header": (r"((?:(?:^|\n|\n" + mail_constants.QUOTED_MATCH_INCLUDE
                        + r")[* ]*(?:От|Изпратено|До|Относно|Дата|Тема|Копие):[ *]*(?:\s{,2}).*){2,}(?:\n.*){,1})"),
        "disclaimers": [r"Това (?:съобщение|писмо|електронно писмо)", r"(?:ПОВЕРИТЕЛНО|Поверително):"],
        "signatures": ["Поздрави", "Поздрав,", "С уважение", "Благодаря,", "Благодаря предварително", "Хубав ден"],
        "sent_from": "Изпратено от",
    }
    mail_constants.MAIL_LANGUAGES.setdefault("bg", bulgarian)
    return EmailMessage

_BASE64_LINE = re.compile(r"^[A-Za-z0-9+/]{60,}={0,2}$")
#: The last, shorter line of a base64 block.
_BASE64_TAIL = re.compile(r"^[A-Za-z0-9+/]{4,}={0,2}$")
_LOG_LINE = re.compile(r"^\s*(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|\[?\d{1,2}:\d{2}:\d{2}|"
                       r"\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|SEVERE|CRITICAL)\b)")
_LOG_ERROR = re.compile(r"\b(?:ERROR|FATAL|SEVERE|CRITICAL|Exception|Error|Caused by|failed|denied|refused|"
                        r"timeout|timed out)\b|\b[A-Z]{2,5}-\d{3,6}\b|\bHTTP \d{3}\b")
_MIME_HEADERS = re.compile(r"^(?:Received|Return-Path|MIME-Version|Content-Type|Message-ID|Delivered-To|"
                           r"X-[\w-]+|DKIM-Signature):", re.I | re.M)
_HTML = re.compile(r"<(?:html|body|div|p|br|table|span)\b", re.I)


@dataclass(slots=True)
class Reading:
    """What :func:`read_ticket` made of a pasted text.

    Attributes:
        message: the text read as the ticket itself (weight 1).
        aside: the text set apart (quoted history, signature, a log's other lines; weight
            :data:`ASIDE_WEIGHT`).
        lines: lines of ``message``.
        parts: what was set apart or left unread, each ``(what, count)``: ``("quoted
            history", messages)``, ``("signature", 1)``, ``("headers", 1)``,
            ``("attachment data lines", lines)``, ``("repeated lines", lines)``, ``("HTML markup",
            1)``, ``("characters", n)`` (past :data:`MAX_CHARS`), ``("other log lines", lines)`` …
        kind: ``"e-mail"``, ``"thread"`` (the newest message read with the one it answers
            or forwards), ``"log"`` or ``"text"``.
    """

    message: str
    aside: str = ""
    lines: int = 0
    parts: list[tuple[str, int]] = field(default_factory=list)
    kind: str = "text"

    @property
    def summary(self) -> str:
        """One sentence saying what was read ("read the newest message, 9 lines; quoted
        history and signature counted less"); ``""`` for a plain query read as typed."""
        if self.kind == "text" and not self.parts:
            return ""
        if not self.lines and not self.message.strip():
            names = _join([name for name, _ in self.parts if name in _COUNTED_LESS] or ["what was set apart"])
            return f"no message found, only {names}: read, counted less"
        what = {"e-mail": "the newest message", "thread": "the newest message and the one it answers",
                "log": "the log's error lines"}.get(self.kind, "the ticket")
        out = f"read {what}, {_count(self.lines, 'line')}"
        less = [name for name, _ in self.parts if name in _COUNTED_LESS]
        unread = [_count(n, name[:-1]) if name.endswith("s") else name for name, n in self.parts
                  if name not in _COUNTED_LESS]
        if less:
            out += "; " + _join(less) + " counted less"
        if unread:
            out += "; not read: " + _join(unread)
        return out

    def to_json(self) -> dict[str, object]:
        """``{"kind", "lines", "summary", "set_apart": [{"what", "count"}]}``."""
        return {"kind": self.kind, "lines": self.lines, "summary": self.summary,
                "set_apart": [{"what": w, "count": n} for w, n in self.parts]}


#: Parts that are read, weighted lower; the others are not read at all.
_COUNTED_LESS = ("older history", "signature", "disclaimer", "headers", "other log lines", "text around the log")


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def is_pasted(text: str) -> bool:
    """True for a text that is read as a pasted ticket rather than a typed query: it holds a
    line break or is longer than a typed query is (300 characters)."""
    return "\n" in text.strip() or len(text) > 300


class _Text(HTMLParser):
    """The text of an HTML document: block elements end a line; scripts and styles dropped."""

    _BLOCKS = frozenset({"p", "div", "br", "tr", "li", "table", "h1", "h2", "h3", "h4", "blockquote", "hr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:  # noqa: ANN001
        if tag in ("script", "style", "head"):
            self._skip += 1
        elif tag in self._BLOCKS:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head"):
            self._skip = max(0, self._skip - 1)
        elif tag in self._BLOCKS:
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.out.append(data)


def html_text(html: str) -> str:
    """The text of ``html`` (never raises on broken markup)."""
    parser = _Text()
    try:
        parser.feed(html)
        parser.close()
    except (AssertionError, ValueError):  # pragma: no cover - html.parser is lenient
        pass
    return re.sub(r"[ \t\r\f\v]+", " ", "".join(parser.out))


def _mime_text(text: str, parts: list[tuple[str, int]]) -> str:
    """The text part of a raw MIME source (HTML read as text); attachments counted."""
    import email
    import email.policy

    msg = email.message_from_string(text, policy=email.policy.default)
    attachments = sum(1 for _ in msg.iter_attachments()) if msg.is_multipart() else 0
    if attachments:
        parts.append(("attachments", attachments))
    parts.append(("headers", 1))
    body = msg.get_body(preferencelist=("plain", "html"))
    if body is None:
        return ""
    try:
        content = body.get_content()
    except (LookupError, ValueError):
        payload = body.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload or "")
    if body.get_content_subtype() == "html":
        parts.append(("HTML markup", 1))
        return html_text(str(content))
    return str(content)


def _clean_lines(text: str, parts: list[tuple[str, int]]) -> list[str]:
    """The lines of ``text`` without attachment data and without verbatim repeats (each line
    is read once)."""
    out: list[str] = []
    seen: set[str] = set()
    b64 = repeated = 0
    in_block = False
    for line in text.splitlines():
        s = line.strip()
        if _BASE64_LINE.match(s) or (in_block and _BASE64_TAIL.match(s)):
            b64 += 1
            in_block = True
            continue
        in_block = False
        if s and s in seen:
            repeated += 1
            continue
        if not s and (not out or not out[-1].strip()):
            continue  # one blank line between paragraphs is enough
        seen.add(s)
        out.append(line)
    if b64:
        parts.append(("attachment data lines", b64))
    if repeated:
        parts.append(("repeated lines", repeated))
    return out


def _words(text: str) -> int:
    return len(text.split())


def _cap(text: str) -> str:
    """``text`` cut after :data:`MAX_WORDS` words."""
    words = text.split()
    return text if len(words) <= MAX_WORDS else " ".join(words[:MAX_WORDS])


def read_ticket(text: str) -> Reading:
    """Read a pasted ticket: the message itself apart from its context (module docstring).

    Args:
        text: the text as pasted (any size; only the first :data:`MAX_CHARS` are read).

    Returns:
        A :class:`Reading`; ``message`` and ``aside`` hold at most :data:`MAX_WORDS` words
        each. Never raises on any text.
    """
    parts: list[tuple[str, int]] = []
    if len(text) > MAX_CHARS:
        cut = text.rfind("\n", 0, MAX_CHARS)
        cut = cut if cut > 0 else MAX_CHARS  # at a line's end, so the last line read is whole
        parts.append(("characters", len(text) - cut))
        text = text[:cut]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _MIME_HEADERS.search(text[:5000]) and re.match(r"^[\w-]+:", text):
        text = _mime_text(text, parts)
    elif _HTML.search(text[:5000]):
        text = html_text(text)
        parts.append(("HTML markup", 1))
    lines = _clean_lines(text, parts)
    if len(lines) > MAX_LINES:
        parts.append(("lines", len(lines) - MAX_LINES))
        lines = lines[:MAX_LINES]
    nonblank = [line for line in lines if line.strip()]
    logged = sum(1 for line in nonblank if _LOG_LINE.match(line))
    if len(nonblank) >= 5 and logged * 2 >= len(nonblank):
        return _read_log(nonblank, parts)
    return _read_mail("\n".join(lines), parts)


def _read_log(lines: list[str], parts: list[tuple[str, int]]) -> Reading:
    """A log: its error lines are the message; the rest is set apart."""
    errors = [line for line in lines if _LOG_ERROR.search(line) and not line.lstrip().startswith("at ")]
    if not errors:
        return Reading(_cap("\n".join(lines)), "", len(lines), parts, "log")
    others = [line for line in lines if line not in set(errors)]
    if others:
        parts.insert(0, ("other log lines", len(others)))
    return Reading(_cap("\n".join(errors)), _cap("\n".join(others)), len(errors), parts, "log")


#: A header line of a mail client's header block ("From: …", "> Sent: …").
_HEADER_LINE = re.compile(r"^[>\s*]*([^\W\d][\w .-]{0,30}?)\s*:")
#: Header names whose value is what the message is about (English and Bulgarian clients).
_SUBJECTS = frozenset({"subject", "тема", "относно"})


def _header_block(headers: str) -> tuple[list[str], list[str], list[str]]:
    """A reply's header block as ``(subject values, header lines, other lines)``: the
    library's block may hold a line of the message after the headers."""
    subjects: list[str] = []
    kept: list[str] = []
    text: list[str] = []
    lines = headers.splitlines()
    block = any(_HEADER_LINE.match(line) for line in lines) and not re.search(r"(?:wrote|написа):\s*$", headers)
    for line in lines:
        m = _HEADER_LINE.match(line)
        if not block or not re.search(r"[^\W\d_]", line):  # "On … wrote:", "-----Original Message-----"
            kept.append(line)
        elif m is None:
            text.append(line)
        elif m.group(1).strip().casefold() in _SUBJECTS:
            subjects.append(line[m.end():].strip())
        else:
            kept.append(line)
    return subjects, kept, text


def _read_mail(text: str, parts: list[tuple[str, int]]) -> Reading:
    """An e-mail (or any text): the newest message and the one it answers, apart from older
    history, header lines, signatures and disclaimers; subject lines are read with their
    message."""
    mail = _mail_parser()(text, ["bg"], keep_hyphen_lists=True).read()
    pieces: list[str] = []
    header_lines: list[str] = []
    for r in mail.replies:
        subjects, kept, stray = _header_block(r.headers or "")
        header_lines.extend(kept)
        run: list[str] = []
        quoted = False
        for line in [*subjects, *stray, *r.body.splitlines()]:  # runs of quoted and own lines, in order
            q = line.lstrip().startswith(">")
            if run and q != quoted:
                pieces.append("\n".join(run).strip())
                run = []
            quoted = q
            run.append(line.lstrip().lstrip("> ") if q else line)
        if run:
            pieces.append("\n".join(run).strip())
    pieces = [p for p in pieces if re.search(r"[^\W\d_]", p)]
    if not pieces:  # nothing but a signature, a disclaimer or headers: read them, counted less
        rest = [r.signatures for r in mail.replies if r.signatures] + [
            d for r in mail.replies for d in r.disclaimers] + header_lines
        if not any(x.strip() for x in rest):
            return Reading(_cap(text), "", len(text.splitlines()), parts)
        return Reading("", _cap("\n".join(rest)), 0, [("signature", 1)] + parts, "e-mail")
    # the newest message and the one it answers or forwards: the thread's report, the longest
    # earlier message (a cover note like "any news on the one below?" is about it); the rest
    # of the history is context
    answered = max(range(1, len(pieces)), key=lambda i: len(pieces[i].split()), default=None)
    read = [pieces[0]] + ([pieces[answered]] if answered is not None else [])
    message = "\n".join(read)
    aside = [p for i, p in enumerate(pieces) if i not in (0, answered)]
    history = len(aside)
    signatures = [r.signatures for r in mail.replies if r.signatures]
    disclaimers = [d for r in mail.replies for d in r.disclaimers if not any(d in x for x in signatures)]
    aside.extend(signatures + disclaimers + header_lines)
    mine: list[tuple[str, int]] = []
    for name, present in (("older history", history), ("signature", signatures), ("disclaimer", disclaimers),
                          ("headers", header_lines)):
        if present:
            mine.append((name, history if name == "older history" else 1))
    kind = ("thread" if len(read) > 1 else "e-mail") if mine else "text"
    lines = len([line for line in message.splitlines() if line.strip()])
    return Reading(_cap(message), _cap("\n".join(a for a in aside if a.strip())), lines,
                   mine + [p for p in parts if p[0] != "headers" or not header_lines], kind)
