"""Many texts searched as one: the scans' prefilters run once over a node's articles.

A :class:`Chunk` joins texts with a newline as UTF-8 bytes. A literal search, an
Aho–Corasick pass or a regular expression then runs once over the chunk at C speed instead
of once per text (a Python call per text and per detector is most of the cost of scanning
short files), and a match is mapped back to its text and line with :func:`bisect.bisect_right`.

Why this finds everything a search of each text finds: every detector of memtui's scans looks
at one line at a time (detect-secrets' plugins are line scanners; the personal-data patterns
and the prefilters here never match a newline), and the newline that joins two texts ends a
line, so no match spans two texts and each text's matches are in the chunk where they are in
the text. A prefilter may only let through more (a candidate the exact check then rejects),
never fewer.

Class maps: :meth:`Chunk.mapped` translates the bytes through a 256-byte table
(``bytes.translate``) that sends every byte to the representative of its class: in
:data:`CLASSES` every digit is ``0``, every capital ``A``, every small letter and ``_`` ``a``,
every byte of a non-ASCII character ``u``, and the rest stays. A pattern over classes
(``[+\\d][\\d .-]{5,40}\\d``) becomes one over a few bytes that starts with a literal
(``0[0 .-]{5,40}0``), which Python's ``re`` searches with a fast literal scan instead of
testing a class at every position: the same matches, found about ten times faster. Such a
pattern sees ASCII classes; where a pattern's class holds non-ASCII characters (``\\d`` and
``\\w`` in a ``str`` pattern), the caller puts ``u`` in the class (a superset) or handles
non-ASCII texts on their own (:attr:`Chunk.ascii`).
"""

from __future__ import annotations

import bisect
import re
import string
from typing import Iterator, Sequence


def class_map(classes: dict[bytes, bytes], other: bytes | None = None, high: bytes | None = None) -> bytes:
    """A ``bytes.translate`` table: each byte of a key goes to that key's value (one byte),
    bytes of 0x80 and above to ``high`` (when given), every other byte to ``other`` (default:
    itself); a newline always stays a newline."""
    table = bytearray(range(256)) if other is None else bytearray(other * 256)
    if high is not None:
        table[0x80:] = high * 128
    for members, to in classes.items():
        for byte in members:
            table[byte] = to[0]
    table[ord("\n")] = ord("\n")
    return bytes(table)


#: The shared class map (module docstring): digits ``0``, capitals ``A``, small letters and
#: ``_`` ``a``, non-ASCII bytes ``u``, every other byte itself.
CLASSES = class_map({string.digits.encode(): b"0", string.ascii_uppercase.encode(): b"A",
                     (string.ascii_lowercase + "_").encode(): b"a"}, high=b"u")


def mapped_class(chars: str, table: bytes = CLASSES) -> bytes:
    """A regular-expression class (``[...]``, bytes) of what the ASCII ``chars`` become in
    ``table``: over the mapped bytes it matches where the class of ``chars`` matched (and
    where other characters of the same classes are)."""
    members = sorted({table[ord(c)] for c in chars if ord(c) < 0x80})
    return b"[" + b"".join(re.escape(bytes([m])) for m in members) + b"]"


class Chunk:
    """Texts joined by newlines as UTF-8 bytes, for one search over all of them.

    Attributes:
        texts: the texts, as given.
        data: ``b"\\n".join`` of their UTF-8 encodings (lone surrogates kept, ``surrogatepass``).
        starts: the byte offset of each text in :attr:`data`.
        ascii: per text, True when it is ASCII (byte offsets are then character offsets).
    """

    __slots__ = ("texts", "data", "starts", "ascii", "_folded", "_mapped")

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)
        parts = [t.encode("utf-8", "surrogatepass") for t in self.texts]
        self.ascii = [len(p) == len(t) for p, t in zip(parts, self.texts, strict=True)]
        self.data = b"\n".join(parts)
        starts: list[int] = []
        at = 0
        for part in parts:
            starts.append(at)
            at += len(part) + 1
        self.starts = starts
        self._folded: tuple[bytes, list[int]] | None = None
        self._mapped: dict[bytes, bytes] = {}

    def __len__(self) -> int:
        return len(self.texts)

    def owner(self, offset: int) -> int:
        """The index of the text holding byte ``offset`` of :attr:`data`."""
        return bisect.bisect_right(self.starts, offset) - 1

    def end(self, index: int) -> int:
        """The byte offset just after text ``index`` in :attr:`data`."""
        return self.starts[index + 1] - 1 if index + 1 < len(self.starts) else len(self.data)

    def line(self, offset: int, folded: bool = False) -> tuple[int, int]:
        """``(text index, 0-based line in that text)`` of byte ``offset`` of :attr:`data`
        (or of :meth:`folded`'s bytes when ``folded``)."""
        data, starts = self.folded() if folded else (self.data, self.starts)
        index = bisect.bisect_right(starts, offset) - 1
        return index, data.count(b"\n", starts[index], offset)

    def folded(self) -> tuple[bytes, list[int]]:
        """The chunk of the texts' ``casefold()`` and its text starts (case folding may change
        a text's length, never its lines)."""
        if self._folded is None:
            if all(self.ascii):
                self._folded = (self.data.lower(), self.starts)  # ASCII: casefold() is lower()
            else:
                parts = [t.casefold().encode("utf-8", "surrogatepass") for t in self.texts]
                starts, at = [], 0
                for part in parts:
                    starts.append(at)
                    at += len(part) + 1
                self._folded = (b"\n".join(parts), starts)
        return self._folded

    def mapped(self, table: bytes) -> bytes:
        """:attr:`data` translated through ``table`` (a :func:`class_map`), kept for reuse."""
        out = self._mapped.get(table)
        if out is None:
            out = self._mapped[table] = self.data.translate(table)
        return out

    def holding(self, data: bytes, needle: bytes) -> Iterator[int]:
        """The indexes of the texts whose part of ``data`` (:attr:`data` or a translation of
        it: same offsets) holds ``needle`` (which holds no newline), in order."""
        assert b"\n" not in needle
        at = data.find(needle)
        while at >= 0:
            index = self.owner(at)
            yield index
            if index + 1 >= len(self.starts):
                return
            at = data.find(needle, self.starts[index + 1])
