"""memtui's posting storage inside Whoosh's W3 codec: compact blocks, a compact pool.

Whoosh 2.7 writes each block of a posting list (up to 128 postings) as a pickled tuple of a
pickled tuple: every document number a pickled integer, every weight a pickled 8-byte float,
every value a pickled ``bytes``; and a term's first block carries ~25 bytes of pickled block
information. Most terms have one posting, so the postings file was most of an index
several times the size of SQLite FTS5's (the figures are in the changelog). And while a
segment is built, Whoosh keeps every posting as a 5-tuple of Python objects and sorts them
all at the end, so a build worker's memory was many times its postings' size.

Here, with the same matcher interface (so Whoosh's queries, memtui's array paths and the
fixes of :mod:`~memtui.core.search.engine.whoosh_fixes` work unchanged):

- :class:`CompactPostingsWriter` writes a block as one fixed header (:data:`BLOCK_HEAD`:
  count, last id, highest weight, compression, shortest and longest length bytes, encodings)
  and three arrays: document numbers as the first plus byte or short deltas when they fit
  (else absolute), weights as nothing (all 1), bytes (small whole numbers) or 4-byte floats
  (the in-memory type Whoosh already used), values as a length array plus their bytes;
  :class:`CompactLeafMatcher` reads them back with ``array`` (C speed, no unpickling).
- :class:`CompactPool` keeps a segment's postings per term in arrays (about 12 bytes a
  posting instead of ~150) and hands them to the writer block by block in term order,
  without sorting the postings (documents arrive in order): :func:`flush`.

Positions (the values of :class:`~memtui.core.search.engine.index.WeightedPositions`) have
their own compact encoding there (:func:`encode_positions`).
"""

from __future__ import annotations

import struct
import zlib
from array import array
from bisect import bisect_left
from itertools import accumulate
from typing import Any

from whoosh.codec import whoosh3
from whoosh.matching import ReadTooFar
from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC, W3Codec, W3LeafMatcher, W3PostingsWriter, W3TermInfo
from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.writing import PostingPool

#: ``<`` little-endian: block length (negative for the last block), count, last id, highest
#: weight, compression level, shortest and longest length byte, id encoding, weight
#: encoding, id bytes, weight bytes.
BLOCK_HEAD = struct.Struct("<iBIfBBBBBHH")
#: Posting list block size (Whoosh's default).
BLOCK_LIMIT = 128
_ONE = struct.pack("<f", 1.0)

_IDS_BYTE, _IDS_SHORT, _IDS_ABS = 0, 1, 2
_W_ONES, _W_BYTES, _W_FLOATS = 0, 1, 2


def encode_positions(positions: list[int]) -> bytes:
    """Absolute word positions as one type byte (``B``, ``H`` or ``I``) and an array."""
    top = max(positions)
    code = "B" if top < 256 else "H" if top < 65536 else "I"
    return code.encode() + array(code, positions).tobytes()


def decode_positions(value: bytes) -> array:
    """The positions :func:`encode_positions` wrote."""
    return array(chr(value[0]), value[1:])


def _encode_ids(ids: Any) -> tuple[int, bytes]:
    first = ids[0]
    if len(ids) == 1:
        return _IDS_ABS, array("I", (first,)).tobytes()
    deltas = [b - a for a, b in zip(ids, ids[1:], strict=False)]
    top = max(deltas)
    head = array("I", (first,)).tobytes()
    if top < 256:
        return _IDS_BYTE, head + array("B", deltas).tobytes()
    if top < 65536:
        return _IDS_SHORT, head + array("H", deltas).tobytes()
    return _IDS_ABS, array("I", ids).tobytes()


def _decode_ids(kind: int, raw: bytes) -> tuple[int, ...]:
    if kind == _IDS_ABS:
        return tuple(array("I", raw))
    first = array("I", raw[:4])[0]
    return tuple(accumulate(array("B" if kind == _IDS_BYTE else "H", raw[4:]), initial=first))


def _encode_weights(weights: Any) -> tuple[int, bytes]:
    if all(w == 1.0 for w in weights):
        return _W_ONES, b""
    if all(w == int(w) and w < 256 for w in weights):
        return _W_BYTES, bytes(int(w) for w in weights)
    return _W_FLOATS, array("f", weights).tobytes()


def _decode_weights(kind: int, raw: bytes, count: int) -> array:
    if kind == _W_ONES:
        return array("f", _ONE * count)
    if kind == _W_BYTES:
        return array("f", array("B", raw))  # the numbers, not the bytes as floats
    return array("f", raw)


class CompactPostingsWriter(W3PostingsWriter):
    """Whoosh's postings writer with :data:`BLOCK_HEAD` blocks (see the module)."""

    _ids: Any
    _weights: Any
    _values: Any

    def _write_block(self, last: bool = False) -> None:
        postfile = self._postfile
        if not self._blockcount:
            postfile.write(WHOOSH3_HEADER_MAGIC)
        self._terminfo.add_block(self)
        ids = self._ids
        id_kind, id_bytes = _encode_ids(ids)
        w_kind, w_bytes = _encode_weights(self._weights)
        data = id_bytes + w_bytes
        fixed = self._format.fixed_value_size()
        values = self._values
        if values and (fixed is None or fixed < 0):
            sizes = [len(v) for v in values]
            top = max(sizes)
            code = b"B" if top < 256 else b"H" if top < 65536 else b"I"
            data += code + array(code.decode(), sizes).tobytes() + b"".join(values)
        elif values and fixed:
            data += b"".join(values)
        comp = self._compression
        if comp:
            data = zlib.compress(data, comp)
        length = BLOCK_HEAD.size - 4 + len(data)
        postfile.write(BLOCK_HEAD.pack(-length if last else length, len(ids), ids[-1], self._maxweight, comp,
                                       length_to_byte(self._minlength or 0), length_to_byte(self._maxlength),
                                       id_kind, w_kind, len(id_bytes), len(w_bytes)))
        postfile.write(data)
        self._blockcount += 1
        self._new_block()

    def add_block(self, ids: Any, weights: Any, values: list[bytes], minlength: int, maxlength: int) -> None:
        """Add up to :data:`BLOCK_LIMIT` postings at once (``ids`` ascending), as
        :func:`flush` does; writes the previous block first if one is buffered."""
        if self._ids:
            self._write_block()
        self._ids = ids
        self._weights = weights
        self._values = values
        self._minlength = minlength
        self._maxlength = maxlength
        self._maxweight = max(weights)


class CompactLeafMatcher(W3LeafMatcher):
    """Reads the blocks :class:`CompactPostingsWriter` wrote (the W3 matcher otherwise)."""

    _data: Any
    _ids: Any
    _weights: Any
    _values: Any

    def _goto(self, position: int) -> None:
        self._data = None
        self._ids = None
        self._weights = None
        self._values = None
        self._i = 0
        head = self._postfile.get(position, BLOCK_HEAD.size)
        (length, count, maxid, maxweight, comp, mnlen, mxlen,
         self._idkind, self._wkind, self._idbytes, self._wbytes) = BLOCK_HEAD.unpack(head)
        if length < 0:
            self._lastblock = True
            length = -length
        self._nextoffset = position + 4 + length
        self._dataoffset = position + BLOCK_HEAD.size
        self._blocklength = count
        self._maxid = maxid
        self._maxweight = maxweight
        self._compression = comp
        self._minlength = byte_to_length(mnlen)
        self._maxlength = byte_to_length(mxlen)

    def _read_data(self) -> None:
        raw = self._postfile.get(self._dataoffset, self._nextoffset - self._dataoffset)
        self._data = zlib.decompress(raw) if self._compression else bytes(raw)

    def _read_ids(self) -> None:
        if self._data is None:
            self._read_data()
        self._ids = _decode_ids(self._idkind, self._data[:self._idbytes])

    def _read_weights(self) -> None:
        if self._data is None:
            self._read_data()
        start = self._idbytes
        self._weights = _decode_weights(self._wkind, self._data[start:start + self._wbytes], self._blocklength)

    def _read_values(self) -> None:
        if self._data is None:
            self._read_data()
        fixed = self._fixedsize
        count = self._blocklength
        raw = self._data[self._idbytes + self._wbytes:]
        if fixed is None or fixed < 0:
            code = chr(raw[0])
            width = array(code).itemsize
            sizes = array(code, raw[1:1 + width * count])
            self._values = _Values(raw, list(accumulate(sizes, initial=1 + width * count)))
        elif fixed == 0:
            self._values = (None,) * count
        else:
            self._values = tuple(raw[i:i + fixed] for i in range(0, len(raw), fixed))


    def skip_to(self, targetid: int) -> None:
        """Whoosh's ``skip_to`` (the first posting at or after ``targetid``), skipping
        blocks by their headers and finding the posting in a block by bisection (Whoosh
        steps posting by posting, most of a phrase's time beside a common word)."""
        if not self.is_active():
            raise ReadTooFar
        if self._ids is None:
            self._read_ids()
        if targetid <= self._ids[self._i]:
            return
        while targetid > self._maxid:
            if self._lastblock:
                self._atend = True
                return
            self._goto(self._nextoffset)
        if self._ids is None:
            self._read_ids()
        self._i = bisect_left(self._ids, targetid, self._i)


class _Values:
    """The values of one block, each cut from the block's bytes when asked for (a phrase
    beside a common word needs a few of each block's 128)."""

    __slots__ = ("raw", "ends")

    def __init__(self, raw: bytes, ends: list[int]) -> None:
        self.raw = raw
        self.ends = ends

    def __len__(self) -> int:
        return len(self.ends) - 1

    def __getitem__(self, i: int) -> bytes:
        if i < 0:
            i += len(self.ends) - 1
        return self.raw[self.ends[i]:self.ends[i + 1]]

    def __iter__(self):  # noqa: ANN204
        raw, ends = self.raw, self.ends
        return (raw[a:b] for a, b in zip(ends, ends[1:], strict=False))


class MemtuiCodec(W3Codec):
    """Whoosh's W3 codec (files, term tables, columns) with memtui's posting blocks."""

    def __init__(self, blocklimit: int = BLOCK_LIMIT, compression: int = 0, inlinelimit: int = 1) -> None:
        super().__init__(blocklimit=blocklimit, compression=compression, inlinelimit=inlinelimit)

    def postings_writer(self, dbfile, byteids: bool = False):  # noqa: ANN001, ANN201 - Whoosh's API
        if byteids:  # term vectors (memtui stores none): Whoosh's own format
            return super().postings_writer(dbfile, byteids)
        return CompactPostingsWriter(dbfile, blocklimit=self._blocklimit, byteids=False,
                                     compression=self._compression, inlinelimit=1)

    def postings_reader(self, dbfile, terminfo, format_, term=None, scorer=None):  # noqa: ANN001, ANN201
        offset, _length = terminfo.extent()
        return CompactLeafMatcher(dbfile, offset, _length, format_, term=term, scorer=scorer)


_ONE_POSTING = struct.Struct("<If")


class CompactPool(PostingPool):
    """A segment's postings per field and term: a term's first posting as one ``bytes``
    (document number, weight, value), from its second on as arrays — document numbers
    (``I``), weights (``f``), the values' bytes in one ``bytearray`` with a length array
    (``I``: a word said 40,000 times in a 5 MB note has a long value).
    Documents are added in order, so each term's postings are in order. :attr:`currentsize`
    is about the resident bytes this takes (objects, dictionary slots and the arrays'
    spare room, as measured on generated workspaces), which the build's segment budget
    reads."""

    def __init__(self, tempstore, segment, limitmb: int = 128, **kwargs) -> None:  # noqa: ANN001
        super().__init__(tempstore, segment, limitmb=limitmb, **kwargs)
        self.fields: dict[str, dict[bytes, Any]] = {}

    def add(self, item) -> None:  # noqa: ANN001 - Whoosh's (field, term bytes, docnum, weight, value)
        fieldname, tbytes, docnum, weight, value = item
        terms = self.fields.get(fieldname)
        if terms is None:
            terms = self.fields[fieldname] = {}
            self.fieldnames.add(fieldname)
        got = terms.get(tbytes)
        if got is None:
            terms[tbytes] = _ONE_POSTING.pack(docnum, weight) + (value or b"")
            self.currentsize += 180 + len(tbytes) + len(value or b"")
            return
        if type(got) is bytes:
            d0, w0 = _ONE_POSTING.unpack_from(got)
            v0 = got[_ONE_POSTING.size:]
            got = terms[tbytes] = [array("I", (d0,)), array("f", (w0,)), bytearray(v0),
                                   array("I", (len(v0),)) if value else None]
            self.currentsize += 500
        got[0].append(docnum)
        got[1].append(weight)
        if value:
            got[2] += value
            got[3].append(len(value))
            self.currentsize += 16 + len(value)
        else:
            self.currentsize += 10

    def postings(self, fieldname: str, tbytes: bytes) -> tuple[Any, Any, list[bytes] | None]:
        """``(document numbers, weights, values or None)`` of one term."""
        got = self.fields[fieldname][tbytes]
        if type(got) is bytes:
            d0, w0 = _ONE_POSTING.unpack_from(got)
            v0 = got[_ONE_POSTING.size:]
            return (d0,), (w0,), ([v0] if v0 else None)
        ids, weights, blob, sizes = got
        if sizes is None:
            return ids, weights, None
        ends = list(accumulate(sizes, initial=0))
        return ids, weights, [bytes(blob[a:b]) for a, b in zip(ends, ends[1:], strict=False)]

    def iter_postings(self):  # noqa: ANN201 - what Whoosh's own flush asks for; memtui's reads postings()
        for fieldname in sorted(self.fields):
            for tbytes in sorted(self.fields[fieldname]):
                ids, weights, values = self.postings(fieldname, tbytes)
                for i, (d, w) in enumerate(zip(ids, weights, strict=False)):
                    yield fieldname, tbytes, d, w, (values[i] if values else None)

    def cleanup(self) -> None:
        self.fields = {}
        super().cleanup()


def flush(writer, lengths) -> None:  # noqa: ANN001 - a Whoosh SegmentWriter and a length reader
    """Write ``writer``'s :class:`CompactPool` into its segment's term table and postings,
    a block of :data:`BLOCK_LIMIT` postings at a time (``lengths``: an object whose
    ``table(field)`` lists the documents' field lengths, or ``None``)."""
    pool: CompactPool = writer.pool
    fw = writer.fieldwriter
    schema = writer.schema
    for fieldname in sorted(pool.fields):
        fw.start_field(fieldname, schema[fieldname])
        table = lengths.table(fieldname) if lengths is not None else None
        terms = pool.fields[fieldname]
        for tbytes in sorted(terms):
            ids, weights, values = pool.postings(fieldname, tbytes)
            del terms[tbytes]  # written: its memory serves the term table, which grows meanwhile
            fw.start_term(tbytes)
            pw: CompactPostingsWriter = fw._postwriter
            for start in range(0, len(ids), BLOCK_LIMIT):
                block_ids = ids[start:start + BLOCK_LIMIT]
                if table is not None:
                    lens = [table[d] for d in block_ids]
                    minlength, maxlength = min(lens), max(lens)
                else:
                    minlength = maxlength = 0
                pw.add_block(block_ids, weights[start:start + BLOCK_LIMIT],
                             values[start:start + BLOCK_LIMIT] if values else [], minlength, maxlength)
            fw.finish_term()
        fw.finish_field()


# Whoosh's terminfo keeps per term the lengths of its block's documents; the postings writer
# asks the block for them by these names (W3PostingsWriter.min_length/max_length).
assert hasattr(W3PostingsWriter, "min_length") and hasattr(W3TermInfo, "add_block"), "whoosh 2.7 API"
assert whoosh3  # the module the codec extends
