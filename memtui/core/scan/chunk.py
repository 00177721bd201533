"""Many texts searched as one: the scans' prefilters run once over a node's files.

A :class:`Chunk` joins texts with a newline as UTF-8 bytes. The scans' prefilters (literals,
classes repeated, hints: :class:`Hints`) then run in one Hyperscan pass over the chunk instead
of once per text and per detector (a Python call per text and per detector is most of the
cost of scanning short files), and a match is mapped back to its text and line with
:func:`bisect.bisect_right`.

Why this finds everything a search of each text finds: every detector of memtui's scans looks
at one line at a time (detect-secrets' plugins are line scanners; the personal-data patterns
never match a newline), and the newline that joins two texts ends a line, so no match spans
two texts and each text's matches are in the chunk where they are in the text. A hint is
mapped to the line of its last byte, which is the line it marks (a hint may begin with the
newline before it, never go past the next one). A prefilter may only let through more (a
candidate the exact check then rejects), never fewer.

Class maps: :meth:`Chunk.mapped` translates the bytes through a 256-byte table
(``bytes.translate``) that sends every byte to the representative of its class: in
:data:`CLASSES` every digit is ``0``, every capital ``A``, every small letter and ``_`` ``a``,
every byte of a non-ASCII character ``u``, and the rest stays. A pattern over classes
(``[+\\d][\\d .-]{5,40}\\d``) becomes one over a few bytes that starts with a literal
(``0[0 .-]{5,40}0``), which Python's ``re`` searches with a fast literal scan instead of
testing a class at every position: the same matches (``finditer`` spans included, which a
prefilter cannot give), found about ten times faster. Such a pattern sees ASCII classes; a
text with non-ASCII characters (where ``\\d`` matches other scripts' digits) is searched on
its own (:attr:`Chunk.ascii`).
"""

from __future__ import annotations

import bisect
import re
import string
import threading
from typing import Any, Sequence


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


class _Compiled:
    """One compilation of :class:`Hints`: per pass, a Hyperscan database (``None``: nothing
    to search); :attr:`where`: per name, ``(pass, first id, number of patterns)`` (a name's
    patterns have consecutive ids). Never changed once made (a new contribution makes a new
    one)."""

    __slots__ = ("databases", "where")

    def __init__(self, databases: list[Any], where: dict[str, tuple[int, int, int]]) -> None:
        self.databases = databases
        self.where = where


class Hints:
    """Named patterns searched in one pass over a chunk by Hyperscan (Intel's multi-pattern
    matcher), contributed by the scans (the secret detectors' literals, token runs and quoted
    strings; the personal-data hints; the diary's dates; links): one pass finds them all.

    A pattern is a Hyperscan expression over bytes; every end offset of every match is
    reported (:meth:`Chunk.hints`). A group may ask for a pass of its own (a class repeated
    many times, matched at almost every byte, slows down the literal search of the others
    more than a second pass costs). The databases are compiled on the first scan after a
    contribution (a few hundredths of a second), once per process.

    Threads: a compilation is never changed (:class:`_Compiled`), and each thread scans with
    scratch space of its own (Hyperscan's scratch serves one scan at a time: a second thread
    scanning with it gets ``ScratchInUseError``).
    """

    def __init__(self) -> None:
        self._groups: dict[str, tuple[list[tuple[bytes, bool, bool]], bool]] = {}
        self._compiled: _Compiled | None = None
        self._lock = threading.Lock()
        self._local = threading.local()

    def add(self, name: str, patterns: Sequence[bytes | tuple[bytes, bool, bool]], own_pass: bool = False) -> None:
        """Contribute ``patterns`` under ``name`` (again: replaced). A pattern is an expression,
        or ``(expression, caseless, multiline)`` (caseless: ASCII case; multiline: ``^`` and
        ``$`` at every line)."""
        group = ([p if isinstance(p, tuple) else (p, False, False) for p in patterns], own_pass)
        with self._lock:
            if self._groups.get(name) != group:
                self._groups[name] = group
                self._compiled = None

    def compiled(self) -> _Compiled:
        """The databases of every contribution so far (compiled now if one came since)."""
        compiled = self._compiled
        if compiled is None:
            with self._lock:
                if self._compiled is None:
                    self._compiled = self._compile()
                compiled = self._compiled
        return compiled

    def _compile(self) -> _Compiled:
        import hyperscan

        passes: list[list[tuple[bytes, bool, bool]]] = [[]]
        where: dict[str, tuple[int, int, int]] = {}
        for name, (group, own_pass) in self._groups.items():
            if own_pass:
                passes.append([])
            number = len(passes) - 1 if own_pass else 0
            if group:
                where[name] = (number, len(passes[number]), len(group))
            passes[number].extend(group)
        databases: list[Any] = []
        for patterns in passes:
            database = None
            if patterns:
                database = hyperscan.Database()
                database.compile(
                    expressions=[p[0] for p in patterns], ids=list(range(len(patterns))), elements=len(patterns),
                    flags=[(hyperscan.HS_FLAG_CASELESS if p[1] else 0) | (hyperscan.HS_FLAG_MULTILINE if p[2] else 0)
                           for p in patterns])
            databases.append(database)
        return _Compiled(databases, where)

    def _scratch(self, compiled: _Compiled, number: int) -> Any:
        """This thread's scratch space for pass ``number`` of ``compiled``."""
        local = self._local
        if getattr(local, "compiled", None) is not compiled:
            local.compiled, local.scratch = compiled, {}
        scratch = local.scratch.get(number)
        if scratch is None:
            import hyperscan

            scratch = local.scratch[number] = hyperscan.Scratch(compiled.databases[number])
        return scratch

    def scan(self, compiled: _Compiled, data: bytes, number: int) -> list[tuple[int, int]]:
        """``[(id, end offset)]`` of every match of pass ``number`` of ``compiled`` in ``data``
        (:attr:`_Compiled.where` says which ids are whose)."""
        found: list[tuple[int, int]] = []
        database = compiled.databases[number]
        if database is None:
            return found
        add = found.append

        def on_match(id_: int, _start: int, end: int, _flags: int, _context: object) -> None:
            add((id_, end))

        database.scan(data, match_event_handler=on_match, scratch=self._scratch(compiled, number))
        return found


#: The hints of every scan (:class:`Hints`).
HINTS = Hints()


def literal(value: str | bytes) -> bytes:
    """``value`` (UTF-8) as a Hyperscan expression matching it literally."""
    raw = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
    return b"".join(b"\\x%02x" % byte for byte in raw)


class Chunk:
    """Texts joined by newlines as UTF-8 bytes, for one search over all of them.

    Attributes:
        texts: the texts, as given.
        data: ``b"\\n".join`` of their UTF-8 encodings (lone surrogates kept, ``surrogatepass``).
        starts: the byte offset of each text in :attr:`data`.
        ascii: per text, True when it is ASCII (byte offsets are then character offsets).
    """

    __slots__ = ("texts", "data", "starts", "ascii", "_mapped", "_hints", "_newlines")

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
        self._mapped: dict[bytes, bytes] = {}
        self._hints: tuple[_Compiled, dict[int, list[tuple[int, int]]]] | None = None
        self._newlines: list[int] | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def owner(self, offset: int) -> int:
        """The index of the text holding byte ``offset`` of :attr:`data`."""
        return bisect.bisect_right(self.starts, offset) - 1

    def end(self, index: int) -> int:
        """The byte offset just after text ``index`` in :attr:`data`."""
        return self.starts[index + 1] - 1 if index + 1 < len(self.starts) else len(self.data)

    def line(self, offset: int) -> tuple[int, int]:
        """``(text index, 0-based line in that text)`` of byte ``offset`` of :attr:`data`."""
        index = bisect.bisect_right(self.starts, offset) - 1
        if self._newlines is None:  # counting from the text's start per hint was quadratic in one big text
            self._newlines = [m.start() for m in re.finditer(b"\n", self.data)]
        newlines = self._newlines
        return index, bisect.bisect_left(newlines, offset) - bisect.bisect_left(newlines, self.starts[index])

    def hints(self, name: str) -> list[tuple[int, int]]:
        """``[(pattern index, end offset)]`` of the :data:`HINTS` contributed as ``name`` in
        :attr:`data` (each pass scanned once for every name it holds, kept while no hint is
        added)."""
        if not self.data:
            return []  # nothing to find (a warm audit reads nothing: no database is compiled)
        compiled = HINTS.compiled()
        if self._hints is None or self._hints[0] is not compiled:
            self._hints = (compiled, {})
        place = compiled.where.get(name)
        if place is None:
            return []
        number, first, count = place
        found = self._hints[1].get(number)
        if found is None:
            found = self._hints[1][number] = HINTS.scan(compiled, self.data, number)
        last = first + count
        return [(id_ - first, end) for id_, end in found if first <= id_ < last]

    def mapped(self, table: bytes) -> bytes:
        """:attr:`data` translated through ``table`` (a :func:`class_map`), kept for reuse."""
        out = self._mapped.get(table)
        if out is None:
            out = self._mapped[table] = self.data.translate(table)
        return out
