"""Personal data in text: e-mail addresses, phone numbers, the Bulgarian ЕГН, IBANs and card
numbers (seed 000 §2.2 and §5: "no customer PII").

Numbers are told apart by their own rules, through libraries: ``phonenumbers`` (Google's
libphonenumber; a number without a country code is read as Bulgarian, :data:`REGION`, and
must be a valid number of that plan), ``python-stdnum`` for the ЕГН (date and checksum),
IBAN (ISO 13616 mod 97) and card numbers (the Luhn checksum, 13–19 digits, ISO/IEC 7812's
industry digits 2–6). So a 10-digit order number is no ЕГН unless its date and check digit
hold, and a waybill number is no phone number.

E-mail addresses in the domains reserved for documentation (RFC 2606 and RFC 6761:
``example.com``, ``*.example``, ``*.test``, ``*.invalid``, ``localhost``) are no one's,
and an scp-style git remote (``git@host:path``) is no address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from memtui.core.scan.chunk import CLASSES, HINTS, Chunk
from memtui.core.scan.secrets import fingerprint, mask

#: The default region of phone numbers written without a country code.
REGION = "BG"

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w-])")
_RESERVED_DOMAINS = ("example.com", "example.org", "example.net", "localhost")
_RESERVED_TLDS = ("example", "test", "invalid", "localhost")
#: A run of digits with the separators people write in numbers.
_DIGITS = re.compile(r"[+\d][\d \-./()]{5,40}\d")
_NON_DIGIT = re.compile(r"\D")
_IBAN_HINT = re.compile(r"[A-Z][A-Z][0-9][0-9]")  # written out: twice as fast as [A-Z]{2}\d{2}
#: Dates and times are no numbers of a person (ISO 8601, 02.11.2026, 22:00).
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}[./]\d{1,2}[./]\d{2,4}")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])")


@dataclass(frozen=True, slots=True)
class Personal:
    """One piece of personal data.

    Attributes:
        code: the finding code (``pii-email``, ``pii-phone``, ``pii-egn``, ``pii-iban``, ``pii-card``).
        kind: what it is, in words (``"an e-mail address"``).
        line, column: 1-based place (the line counted from the caller's ``first_line``).
        masked: :func:`~memtui.core.scan.secrets.mask` of the value.
        fingerprint: :func:`~memtui.core.scan.secrets.fingerprint` of the value.
    """

    code: str
    kind: str
    line: int
    column: int
    masked: str
    fingerprint: str


def _reserved(domain: str) -> bool:
    domain = domain.lower()
    if any(domain == d or domain.endswith("." + d) for d in _RESERVED_DOMAINS):
        return True
    return domain.rsplit(".", 1)[-1] in _RESERVED_TLDS


def _line_of(starts: list[int], offset: int) -> tuple[int, int]:
    import bisect

    index = bisect.bisect_right(starts, offset) - 1
    return index + 1, offset - starts[index] + 1


def _starts(text: str) -> list[int]:
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


@dataclass(frozen=True, slots=True)
class _Span:
    """Where a number the phone matcher found lies (the shape of a match for :func:`_alone`)."""

    begin: int
    finish: int

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.finish


def _alone(text: str, match: "re.Match[str] | _Span") -> bool:
    """The digit run is not part of a word or a longer number (``BP0000012345``, ``1,200``)."""
    start = match.start()
    before = text[start - 1:start]
    after = text[match.end():match.end() + 1]
    if before in ("-", "/", "#") and text[start - 2:start - 1].isalnum():
        return False  # the number part of an identifier: ORA-06942, INC-160944, case/4411
    return not (before and (before.isalnum() or before in "_.,") or after and (after.isalnum() or after == "_"))


def _card(digits: str) -> bool:
    from stdnum import luhn

    return 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn.is_valid(digits)


def find(text: str, first_line: int = 1) -> list[Personal]:
    """Personal data in ``text``, in order of place.

    Args:
        text: the text to look through (a whole file).
        first_line: the file line of the text's first line.
    """
    return _find(text, first_line, [m.span() for m in _DIGITS.finditer(text)], "@" in text,
                 bool(_IBAN_HINT.search(text)))


#: :data:`_DIGITS` over the shared class map (:data:`memtui.core.scan.chunk.CLASSES`: digits
#: are ``0``, the separators stay); without its leading ``+`` it starts with a literal, which
#: ``re`` searches fast (a text where a ``+`` can start a match uses the whole pattern).
_DIGITS_MAPPED = re.compile(rb"0[0 \-./()]{5,40}0")
_DIGITS_MAPPED_PLUS = re.compile(rb"[+0][0 \-./()]{5,40}0")
#: The name of the personal-data hints in :data:`memtui.core.scan.chunk.HINTS`: an ``@``, the
#: :data:`_IBAN_HINT`, a ``+`` that can start a :data:`_DIGITS` match (all ASCII, exact).
HINTS_NAME = "personal"
_AT, _IBAN_AT, _PLUS = range(3)
HINTS.add(HINTS_NAME, [b"@", b"[A-Z][A-Z][0-9][0-9]", b"\\+[0-9 \\-./()]{5,40}[0-9]"])


def find_many(texts: Sequence[str], first_lines: Sequence[int] | None = None,
              chunk: Chunk | None = None) -> list[list[Personal]]:
    r""":func:`find` of each of ``texts``, the number search run once over all of them (a
    :class:`~memtui.core.scan.chunk.Chunk`; pass one to share it with other scans).

    An ASCII text's digit runs are found in the chunk's class map (the same matches as
    :data:`_DIGITS`); a text with other characters is searched on its own, since ``\d``
    matches every script's digits.
    """
    chunk = chunk if chunk is not None else Chunk(texts)
    mapped = chunk.mapped(CLASSES)
    flags: dict[int, set[int]] = {_AT: set(), _IBAN_AT: set(), _PLUS: set()}
    for kind, end in chunk.hints(HINTS_NAME):
        flags[kind].add(chunk.owner(end - 1))
    emails, ibans = flags[_AT], flags[_IBAN_AT]
    own = flags[_PLUS] | {i for i, plain in enumerate(chunk.ascii) if not plain}
    spans: dict[int, list[tuple[int, int]]] = {}
    for match in _DIGITS_MAPPED.finditer(mapped):
        if match.end() - match.start() == 10 and mapped[match.start():match.end()] == b"0000-00-00":
            continue  # an ISO date (:data:`_DATE`), the most common digit run
        spans.setdefault(chunk.owner(match.start()), []).append(match.span())
    out: list[list[Personal]] = []
    for index, text in enumerate(chunk.texts):
        if index in own:
            numbers = [m.span() for m in (_DIGITS_MAPPED_PLUS.finditer(mapped, chunk.starts[index], chunk.end(index))
                                          if chunk.ascii[index] else _DIGITS.finditer(text))]
            if chunk.ascii[index]:
                numbers = [(s - chunk.starts[index], e - chunk.starts[index]) for s, e in numbers]
        else:
            base = chunk.starts[index]
            numbers = [(s - base, e - base) for s, e in spans.get(index, ())]
        if not numbers and index not in emails and index not in ibans:
            out.append([])
            continue
        out.append(_find(text, first_lines[index] if first_lines else 1, numbers, index in emails, index in ibans))
    return out


def _find(text: str, first_line: int, numbers: list[tuple[int, int]], emails: bool, ibans: bool) -> list[Personal]:
    """The personal data of ``text``, given its :data:`_DIGITS` matches (spans) and whether
    it holds an ``@`` and an IBAN hint."""
    out: list[Personal] = []
    starts: list[int] | None = None

    def add(code: str, kind: str, offset: int, value: str) -> None:
        nonlocal starts
        if starts is None:
            starts = _starts(text)
        line, column = _line_of(starts, offset)
        out.append(Personal(code, kind, line + first_line - 1, column, mask(value), fingerprint(value)))

    if emails:
        for match in _EMAIL.finditer(text):
            value = match.group(0)
            if _reserved(value.rsplit("@", 1)[1]) or text[match.end():match.end() + 1] == ":":
                continue
            add("pii-email", "an e-mail address", match.start(), value)
    taken: set[str] = set()
    # a date, or a run that is part of a word or a longer number, is nobody's number
    numbers = [(begin, finish) for begin, finish in numbers
               if not _DATE.fullmatch(text[begin:finish].strip()) and _alone(text, _Span(begin, finish))]
    if numbers:
        from stdnum.bg import egn

        for begin, finish in numbers:
            value = text[begin:finish]
            digits = _NON_DIGIT.sub("", value)
            if len(digits) == 10 and egn.is_valid(digits):
                add("pii-egn", "a Bulgarian personal number (ЕГН)", begin, value)
                taken.add(digits)
            elif _card(digits):
                add("pii-card", "a payment card number", begin, value)
                taken.add(digits)
        out.extend(_phones(text, numbers, taken, first_line))
    if ibans:
        from stdnum import iban

        for match in _IBAN.finditer(text):
            if iban.is_valid(match.group(0)):
                add("pii-iban", "a bank account number (IBAN)", match.start(), match.group(0))
    out.sort(key=lambda p: (p.line, p.column))
    return out


def _phones(text: str, numbers: list[tuple[int, int]], taken: set[str], first_line: int) -> list[Personal]:
    """Phone numbers on the lines holding a digit run (the matcher is slow: it only sees
    those); ``numbers``: the runs that are no date and stand alone."""
    shortest, longest = _plan_lengths()
    wanted = [begin for begin, finish in numbers if shortest <= len(_NON_DIGIT.sub("", text[begin:finish])) <= longest]
    if not wanted:
        return []
    import phonenumbers
    from phonenumbers import Leniency, PhoneNumberMatcher

    starts = _starts(text)
    lines = sorted({_line_of(starts, begin)[0] for begin in wanted})
    out: list[Personal] = []
    for line in lines:
        begin = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(text)
        for found in PhoneNumberMatcher(text[begin:end], REGION, leniency=Leniency.VALID):
            digits = _NON_DIGIT.sub("", found.raw_string)
            if digits in taken or not phonenumbers.is_valid_number(found.number):
                continue
            at = begin + found.start
            if not _alone(text, _Span(at, at + len(found.raw_string))):
                continue
            out.append(Personal("pii-phone", "a phone number", line + first_line - 1, found.start + 1,
                                mask(found.raw_string), fingerprint(found.raw_string)))
    return out


@lru_cache(maxsize=1)
def _plan_lengths() -> tuple[int, int]:
    """Digit counts a phone number can have: the default region's shortest possible length
    (libphonenumber's metadata; local-only lengths need an area code to be dialled, so they
    are not counted) up to E.164's 15 digits."""
    import phonenumbers

    metadata = phonenumbers.PhoneMetadata.metadata_for_region(REGION)
    general = metadata.general_desc if metadata else None
    lengths = [n for n in (general.possible_length if general else ()) if n > 0]
    return (min(lengths) if lengths else 4), 15
