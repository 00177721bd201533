"""The search index: one Whoosh index under ``.memtui/index/`` over the whole workspace.

Derived data (DESIGN.md §2): it can always be rebuilt from the files, so every problem with
it is repaired rather than shown as a traceback.

- **Incremental** (:meth:`SearchIndex.update`): a manifest
  (:mod:`~memtui.core.search.engine.manifest`, one SQLite table) records per source file
  its mtime, size and SHA-1; a file whose mtime or size changed is re-read and re-indexed
  only if its hash changed; removed files lose their documents.
  ``only=[paths]`` re-indexes just the files a save touched (an edit is searchable at once).
- **Schema version** (:data:`SCHEMA_VERSION`): a manifest with another version, or an index
  Whoosh cannot open, is rebuilt from scratch.
- **Writes** use ``writer(compound=False)`` and, for small updates, ``commit(merge=False)``
  (LIBRARY-NOTES, Whoosh: compound segments copy the index into the heap; merges make
  interactive commits slow).
- **Locks**: Whoosh's write lock is an ``flock``, so a crashed process frees it;
  the lock *file* staying behind means nothing. A writer held by another live process is
  waited for a bounded time (:data:`LOCK_WAIT_SECONDS`), then :class:`IndexBusyError` says
  which process holds it (from ``writer.pid``).
- **Damage**: an unreadable table of contents, a missing or cut segment
  (``FileNotFoundError``, ``EOFError``, ``TypeError: ord()`` …) is caught on open or on
  search; the index folder is emptied and rebuilt with a ``search-index-damaged`` finding.
"""

from __future__ import annotations

import os
import shutil
import types
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

from whoosh import fields as wf
from whoosh import formats as wformats
from whoosh import index as windex
from whoosh import scoring

from memtui.core.errors import MemtuiError
from memtui.core.files import is_inside
from memtui.core.findings import Finding
from memtui.core.text import json_text, well_formed
from memtui.core.search.engine import whoosh_fixes
from memtui.core.search.analysis import term_positions, term_positions_and_keys
from memtui.core.search.engine.analyzer import MemtuiAnalyzer
from memtui.core.search.engine.codec import CompactPool, MemtuiCodec, decode_positions, encode_positions, flush
from memtui.core.search.engine.manifest import Entry, Manifest, ManifestError
from memtui.core.search.sources import (CONTENT_FIELD, ID_WEIGHT, STORED_BODY_CHARS, TEXT_FIELDS,
                                        TRANSLIT_FIELD, TRANSLIT_SOURCES, Source, fingerprint,
                                        iter_owner_map, parse, read_source, scan,
                                        source_for)
from memtui.core.workspace import Workspace

whoosh_fixes.apply()  # matcher fixes the ranking relies on (see the module)

#: Bump when the schema or the analysis changes: an index of another version is rebuilt.
SCHEMA_VERSION = 11
#: Positions left empty between two fields in :data:`CONTENT_FIELD`, so that no phrase (nor
#: its slop) spans two fields.
FIELD_GAP = 100
#: How long a writer waits for another process's write lock before giving up (seconds).
LOCK_WAIT_SECONDS = 5.0
#: Updates touching at most this many sources commit without merging segments.
SMALL_UPDATE = 50
#: A build from empty of at least this many source files runs in worker processes, one
#: segment each (the index build is pure Python and CPU-bound).
PARALLEL_SOURCES = 1000
#: Most postings (MB, as :class:`~memtui.core.search.engine.codec.CompactPool` counts them) a
#: build worker holds before closing its segment and starting another (see
#: :func:`_index_part`); the worker's resident memory is this plus its parse and caches.
SEGMENT_BUDGET_MB = 128
#: zlib level of posting blocks: 0, not compressed (Whoosh's default is 3): most blocks hold
#: a single posting, compressing them cost build time, and reading a long posting list
#: spent time decompressing (the figures are in the changelog). Blocks written either way
#: stay readable.
BLOCK_COMPRESSION = 0
MANIFEST = "manifest.sqlite"
#: Whoosh's name of the index: its segment files are ``MAIN_<segment id>.<ext>``, its tables
#: of contents ``_MAIN_<generation>.toc``.
INDEX_NAME = "MAIN"
#: Whoosh's write lock file (``<index name>_WRITELOCK``).
LOCK_NAME = f"{INDEX_NAME}_WRITELOCK"
PIDFILE = "writer.pid"

#: Exceptions Whoosh raises on a damaged index (it never says "damaged").
DAMAGE_ERRORS = (OSError, EOFError, TypeError, ValueError, KeyError, IndexError, AttributeError,
                 ImportError, windex.EmptyIndexError, windex.IndexVersionError, MemoryError,
                 __import__("struct").error, __import__("pickle").UnpicklingError)

ProgressFn = Callable[[int, int], None]


def is_damage(exc: BaseException) -> bool:
    """True when ``exc``, raised while reading the index, means the index is damaged:
    one of :data:`DAMAGE_ERRORS`, or the bare ``Exception("Block tag error ...")`` that
    Whoosh raises on a cut posting file (it crashed the TUI)."""
    return isinstance(exc, DAMAGE_ERRORS) or (
        type(exc) is Exception and str(exc).startswith("Block tag error"))


class IndexBusyError(MemtuiError):
    """Another process is writing the search index; try again shortly."""


class IndexWriteError(MemtuiError):
    """The index could not be written (disk full, read-only folder); the files are untouched."""


class WeightedPositions(wformats.Positions):
    """Positions of a term in the one combined text field (:data:`CONTENT_FIELD`), each
    occurrence weighted by the field it came from: BM25F as Lucene's ``CombinedFieldQuery``
    computes it (Robertson, Zaragoza & Taylor, "Simple BM25 extension to multiple weighted
    fields", CIKM 2004): a document's term frequency is ``sum(w_f * tf_f)`` and its length
    ``sum(w_f * len_f)`` over the fields of :data:`TEXT_FIELDS`, so one posting list per
    term carries every field (a query word cost one posting list per field, and
    Whoosh's block-max pruning could not work across them).

    ``value`` is a list of ``(weight, text)`` pairs, one per field (``str`` is weight 1).
    Each field's positions start :data:`FIELD_GAP` after the previous field's last, so a
    phrase never spans two fields. The posting's weight (``Matcher.weight()``) is the
    weighted frequency; its value is the positions in memtui's compact encoding
    (:func:`~memtui.core.search.engine.codec.encode_positions`).

    The sound keys of the same texts are found in the same pass and kept for
    :class:`FastFrequency` (:data:`_KEYS`), which Whoosh asks next for the same document
    (the ``translit`` field sorts after ``text``): a body was analysed twice.
    """

    def encode(self, poslist):  # noqa: ANN001, ANN201 - Whoosh's API
        return encode_positions(poslist)

    def decode_positions(self, valuestring):  # noqa: ANN001, ANN201
        return list(decode_positions(valuestring))

    def decode_frequency(self, valuestring):  # noqa: ANN001, ANN201
        return len(decode_positions(valuestring))

    def decode_weight(self, valuestring):  # noqa: ANN001, ANN201
        return self.decode_frequency(valuestring) * self.field_boost

    def word_values(self, value, analyzer, **kwargs):  # noqa: ANN001, ANN201 - Whoosh's API
        if isinstance(value, str):
            value = [(1.0, value)]
        if not isinstance(analyzer, MemtuiAnalyzer):
            raise TypeError("WeightedPositions needs the MemtuiAnalyzer")
        fb = self.field_boost
        positions: dict[str, list[int]] = {}
        weights: dict[str, float] = {}
        base = 0
        _KEYS.clear()
        for weight, text in value:
            found, used, keys = term_positions_and_keys(text)
            _KEYS[id(text)] = (text, keys)
            for term, poslist in found.items():
                got = positions.get(term)
                if got is None:
                    positions[term] = [p + base for p in poslist] if base else poslist
                    weights[term] = weight * len(poslist)
                else:
                    got.extend(p + base for p in poslist)
                    weights[term] += weight * len(poslist)
            base += used + FIELD_GAP
        encode = self.encode
        for term, poslist in positions.items():
            w = weights[term]
            # freq is only summed into the field length by Whoosh: the weighted length
            yield term, w, w * fb, _encode_one(poslist[0]) if len(poslist) == 1 else encode(poslist)


class FastFrequency(wformats.Frequency):
    """Whoosh's ``Frequency`` format for the sound-key field, weighted per field as
    :class:`WeightedPositions` is: ``value`` is a list of ``(weight, text)`` pairs (``str`` is
    weight 1), a document's term frequency is ``sum(w_f * tf_f)`` and its length
    ``sum(w_f * len_f)`` (BM25F). The terms come from
    :func:`~memtui.core.search.analysis.term_positions` in one pass instead of Whoosh's token
    stream (a token object a word was a large share of an index build).

    Why weighted: a Latin-typed Bulgarian word matches through its sound key only; with the
    keys unweighted, its match in a symptom or an alias counted as a body match, far less
    than the same word typed in Cyrillic scores, so Latin-typed tickets fell under the
    confidence cut.
    """

    def word_values(self, value, analyzer, **kwargs):  # noqa: ANN001, ANN201 - Whoosh's API
        if not isinstance(analyzer, MemtuiAnalyzer):
            yield from super().word_values(value, analyzer, **kwargs)
            return
        if isinstance(value, str):
            value = [(1.0, value)]
        fb = self.field_boost
        weights: dict[str, float] = {}
        for weight, text in value:
            got = _KEYS.get(id(text))
            counts = got[1] if got is not None and got[0] is text else None
            if counts is None:
                counts = {t: len(p) for t, p in term_positions(text, analyzer.keys, analyzer.plain)[0].items()}
            for term, n in counts.items():
                weights[term] = weights.get(term, 0.0) + weight * n
        _KEYS.clear()
        for term, w in weights.items():
            yield term, w, w * fb, b""

    # the weight is the posting's: no value is stored (Whoosh stored the count again)
    posting_size = 0

    def decode_frequency(self, valuestring):  # noqa: ANN001, ANN201
        return 1

    def decode_weight(self, valuestring):  # noqa: ANN001, ANN201
        return self.field_boost


#: The sound keys of the texts :class:`WeightedPositions` analysed for the document being
#: added, by ``id`` of the text (checked by identity): ``{id: (text, {key: count})}``.
_KEYS: dict[int, tuple[str, dict[str, int]]] = {}


@lru_cache(maxsize=65536)
def _encode_one(pos: int) -> bytes:
    return encode_positions([pos])


class _CachedLengths:
    """Per-document field lengths read once per field (not once per posting) while a
    segment's postings are written: Whoosh's flush asks for the length of every posting's
    document (a tenth of an index build)."""

    def __init__(self, pdr) -> None:  # noqa: ANN001 - a Whoosh per-document reader
        self.pdr = pdr
        self.tables: dict[str, list[int]] = {}

    def table(self, fieldname: str) -> list[int]:
        """Every document's length of ``fieldname``, by document number."""
        table = self.tables.get(fieldname)
        if table is None:
            get = self.pdr.doc_field_length
            table = self.tables[fieldname] = [get(d, fieldname, 0) or 0 for d in range(self.pdr.doc_count_all())]
        return table

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> int:
        table = self.table(fieldname)
        return table[docnum] if docnum < len(table) else default


def _flush_with_cached_lengths(writer) -> None:  # noqa: ANN001 - a Whoosh SegmentWriter
    """``SegmentWriter._flush_segment`` (whoosh 2.7) writing the :class:`CompactPool` block by
    block (:func:`~memtui.core.search.engine.codec.flush`), with :class:`_CachedLengths`."""
    writer.perdocwriter.close()
    pdr = writer.per_document_reader() if writer.codec.length_stats else None
    flush(writer, _CachedLengths(pdr) if pdr else None)
    writer.fieldwriter.close()
    if pdr:
        pdr.close()


def _codec():  # noqa: ANN202 - a Whoosh codec
    """:class:`~memtui.core.search.engine.codec.MemtuiCodec` with :data:`BLOCK_COMPRESSION`."""
    return MemtuiCodec(compression=BLOCK_COMPRESSION)


def _fast_flush(writer):  # noqa: ANN001, ANN202 - a Whoosh SegmentWriter
    """``writer`` with a :class:`CompactPool` and :func:`_flush_with_cached_lengths` as its
    flush (this writer only)."""
    old = writer.pool
    writer.pool = CompactPool(old.tempstore, old.segment, limitmb=old.limit // 2**20)
    writer._flush_segment = types.MethodType(_flush_with_cached_lengths, writer)
    return writer


def build_schema() -> wf.Schema:
    """The Whoosh schema: id fields for filters, one weighted text field, stored fields.

    Fields: ``id`` (unique: ``kind:path``), ``source`` (the file the document came from),
    ``kind``, ``path``, ``node``, ``state``, ``owner``, ``entry_id``, ``target`` (stored IDs);
    ``tag`` (comma keyword); ``line`` (stored number); every key of :data:`TEXT_FIELDS`
    stored only (the body's first :data:`STORED_BODY_CHARS` characters);
    :data:`CONTENT_FIELD`: all of them indexed as one positioned field, weighted per field
    (:class:`WeightedPositions`, plain terms of :class:`MemtuiAnalyzer`); ``translit``: the
    sound keys of the short fields and the body's head (not stored).
    """
    spec: dict[str, Any] = {
        "id": wf.ID(unique=True, stored=True),
        "source": wf.ID(stored=True),
        "kind": wf.ID(stored=True),
        "path": wf.ID(stored=True),
        "node": wf.ID(stored=True),
        "state": wf.ID(stored=True),
        "owner": wf.ID(stored=True),
        "entry_id": wf.ID(stored=True),
        "target": wf.ID(stored=True),
        "tag": wf.KEYWORD(stored=True, commas=True, lowercase=True),
        "line": wf.STORED(),
    }
    for name in TEXT_FIELDS:
        spec[name] = wf.STORED()
    spec[CONTENT_FIELD] = wf.TEXT(analyzer=MemtuiAnalyzer(keys=False), phrase=True)
    spec[CONTENT_FIELD].format = WeightedPositions()
    spec[TRANSLIT_FIELD] = wf.TEXT(analyzer=MemtuiAnalyzer(keys=True, plain=False), phrase=False)
    spec[TRANSLIT_FIELD].format = FastFrequency()
    return wf.Schema(**spec)


@dataclass(slots=True)
class IndexReport:
    """What one :meth:`SearchIndex.update` did.

    Attributes:
        added, updated, removed, unchanged: counts of source files.
        documents: documents in the index afterwards.
        rebuilt: the index was built from scratch (asked, new, schema change or damage).
        seconds: wall time of the update.
        findings: files skipped and why, and ``search-index-damaged`` when it was repaired.
    """

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    documents: int = 0
    rebuilt: bool = False
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict of every attribute (findings as dicts)."""
        return {"added": self.added, "updated": self.updated, "removed": self.removed,
                "unchanged": self.unchanged, "documents": self.documents, "rebuilt": self.rebuilt,
                "seconds": round(self.seconds, 3), "findings": [f.to_json() for f in self.findings]}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SearchIndex:
    """The workspace's search index (``ws.state_dir / "index"``).

    Opening reads nothing but the index folder; nothing is built until :meth:`update`.
    Searching is in :mod:`memtui.core.search.query`. Not thread-safe for writes: one
    :meth:`update` at a time per process (other processes are kept out by Whoosh's lock).
    """

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.dir = ws.state_dir / "index"
        #: why the index may not be read or written (``.memtui`` leads outside the workspace:
        #), else ``None``
        self.refused = None if is_inside(ws.root, self.dir) else (
            f"the search index {ws.shown(self.dir)} leads outside the workspace (to {os.path.realpath(self.dir)}); "
            "memtui neither reads nor writes it there: make .memtui a real folder")
        self._ix: windex.Index | None = None
        self.findings: list[Finding] = []
        #: Set when :meth:`open` had to empty a damaged or outdated index: call :meth:`update`.
        self.needs_update = False
        #: Held while a search uses :meth:`searcher` (a Whoosh searcher is not thread-safe).
        self.search_lock = threading.Lock()
        self._searcher = None
        self.manifest = Manifest(self.dir / MANIFEST, readable=self.refused is None)

    # -- opening -------------------------------------------------------------------------
    def _write_manifest(self, changed: dict[str, Entry], removed: Iterable[str] = (), replace: bool = False) -> None:
        """Record ``changed`` and drop ``removed`` manifest entries (``replace``: only these);
        the caller holds the write lock.

        Raises:
            IndexWriteError: the manifest cannot be written.
        """
        try:
            self.manifest.write(SCHEMA_VERSION, changed, removed, replace=replace)
        except ManifestError as exc:
            raise IndexWriteError(f"the search index manifest could not be written ({exc})") from exc

    def _toc_present(self) -> bool:
        """True when Whoosh finds a table of contents (readable or not) in the folder."""
        if self.refused:
            return False
        try:
            return any(p.name.startswith("_MAIN_") and p.name.endswith(".toc") for p in self.dir.iterdir())
        except OSError:
            return False

    def exists(self) -> bool:
        """True when an index of the current schema version is present (maybe stale)."""
        return self._toc_present() and self.manifest.schema() == SCHEMA_VERSION

    def _drop_searcher(self) -> None:
        with self.search_lock:  # never close it under a search in another thread
            searcher, self._searcher = self._searcher, None
        if searcher is not None:
            try:
                searcher.close()
            except Exception:  # noqa: BLE001 - closing a reader of a damaged index
                pass

    def searcher(self):
        """A BM25F searcher over the latest committed version of the index.

        Kept between searches; when an update committed, a new one is made that keeps the
        segment readers of the segments that did not change (:func:`_reader_reusing`), and
        every new segment's document lengths are read into memory once
        (:func:`_load_lengths`): BM25F asks for a length per matching posting, which
        otherwise is a file read each time. Call it, and use the searcher, only while
        holding :attr:`search_lock`.

        Raises:
            whatever :meth:`open` raises; damage shows as the exceptions of
            :data:`DAMAGE_ERRORS` (the caller repairs).
        """
        from whoosh.searching import Searcher

        ix = self.open()
        current = self._searcher
        if current is not None and current._ix is ix and ix.latest_generation() == current.reader().generation():
            return current
        self._searcher = None
        reader = _reader_reusing(ix, current.reader() if current is not None and current._ix is ix else None)
        if current is not None and current._ix is not ix:
            try:
                current.close()
            except Exception:  # noqa: BLE001 - closing a reader of a replaced index
                pass
        current = Searcher(reader, weighting=scoring.BM25F(), fromindex=ix)
        _load_lengths(current.reader())
        self._searcher = current
        return current

    def mirror_to(self, target: Path) -> None:
        """Make ``target`` (a new folder) a copy of this index's folder that shares no
        writable file with it: segment files as hard links, everything else copied.

        Whoosh never rewrites a segment file: a commit writes new segment files and a new
        table of contents (deleted documents are recorded in the table of contents), and
        removes files no table of contents uses any more; so a segment file linked into
        another folder stays valid for that folder's index, and an index written there
        never changes a byte here. The manifest (SQLite, written in place) and the tables
        of contents are copied; the write lock and the writer's pid file are not (a shared
        lock file would lock both indexes). A file that cannot be linked (another file
        system) is copied.

        Raises:
            OSError: the folder cannot be read or ``target`` written.
        """
        target.mkdir(parents=True)
        for entry in os.scandir(self.dir):
            name = entry.name
            if name in (LOCK_NAME, PIDFILE) or name.endswith(".tmp"):
                continue
            dst = target / name
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), dst)
            elif entry.is_dir():
                shutil.copytree(entry.path, dst, symlinks=True)
            elif name.startswith(f"{INDEX_NAME}_"):
                try:
                    os.link(entry.path, dst, follow_symlinks=False)
                except OSError:
                    shutil.copy2(entry.path, dst)
            else:
                shutil.copy2(entry.path, dst)

    def _busy(self) -> IndexBusyError:
        """The error for a write lock held by another writer, naming its process."""
        holder = ""
        try:
            pid = int((self.dir / PIDFILE).read_text().strip())
            if _pid_alive(pid):
                holder = f" (pid {pid})"
        except (OSError, ValueError):
            pass
        return IndexBusyError(f"the search index is being updated by another memtui process{holder}; "
                              "try again when it has finished")

    @contextmanager
    def _locked(self):
        """Hold Whoosh's write lock (``MAIN_WRITELOCK``, an ``flock``: a crashed holder frees
        it) for a change of the index *and* its manifest, which readers take together
        (a search that saw another process's new index before its manifest took it
        for a foreign one and wiped it mid-build).

        Raises:
            IndexBusyError: another writer holds it past :data:`LOCK_WAIT_SECONDS`.
        """
        from whoosh.filedb.filestore import FileStorage
        from whoosh.util.filelock import try_for

        if self.refused:
            raise IndexWriteError(self.refused)
        self.dir.mkdir(parents=True, exist_ok=True)
        lock = FileStorage(str(self.dir)).lock(LOCK_NAME)
        if not try_for(lock.acquire, LOCK_WAIT_SECONDS, 0.1):
            raise self._busy()
        try:
            yield
        finally:
            lock.release()

    def _wipe(self) -> None:
        """Remove the index folder's contents (only inside it) and start an empty index,
        holding Whoosh's write lock (a search that found no manifest while another
        process rebuilt the index wiped that build's files from under it).

        Raises:
            IndexBusyError: another writer holds the lock past :data:`LOCK_WAIT_SECONDS`;
                nothing is removed.
        """
        self._drop_searcher()
        with self._locked():
            if not self.dir.is_symlink():
                for child in self.dir.iterdir():
                    if child.name == LOCK_NAME:
                        continue  # the locked file itself: removing it would void the lock
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child, ignore_errors=True)
                    else:
                        try:
                            child.unlink()
                        except FileNotFoundError:
                            pass
            self._ix = windex.create_in(str(self.dir), build_schema())

    def _damaged(self, exc: BaseException) -> Finding:
        return Finding.make(
            "search-index-damaged", self.ws.shown(self.dir),
            f"the search index is damaged ({type(exc).__name__}); rebuilding it from the files",
            "nothing to do: the index holds no data of its own")

    def open(self) -> windex.Index:
        """The Whoosh index, creating or repairing it when needed (never raises for damage).

        Returns:
            The opened index. A missing index is created empty; an index of another schema
            version, or one Whoosh cannot read, is emptied (a ``search-index-damaged`` finding
            is added to :attr:`findings` for damage) and must be filled by :meth:`update`.

        Raises:
            IndexWriteError: the index folder cannot be created or written.
        """
        if self._ix is not None:
            return self._ix
        if self.refused:
            raise IndexWriteError(self.refused)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            if not self._toc_present():
                self._wipe()
            elif self.manifest.schema() != SCHEMA_VERSION:
                self._wipe()
                self.needs_update = True
            else:
                try:
                    ix = windex.open_dir(str(self.dir))
                    with ix.reader() as reader:  # touches every segment: finds missing files
                        reader.doc_count_all()
                        for fname in ("kind",):
                            list(reader.lexicon(fname))
                    self._ix = ix
                except Exception as exc:  # noqa: BLE001 - only damage is handled here
                    if not is_damage(exc):
                        raise
                    self.findings.append(self._damaged(exc))
                    self._wipe()
                    self.needs_update = True
        except OSError as exc:
            raise IndexWriteError(
                f"the search index folder {self.ws.shown(self.dir)} cannot be written "
                f"({exc.strerror or exc}); searching is unavailable until it can") from exc
        assert self._ix is not None
        return self._ix

    def repair(self, exc: BaseException, progress: ProgressFn | None = None) -> IndexReport:
        """Rebuild after ``exc`` showed damage during a search; the report holds the finding."""
        self._ix = None
        finding = self._damaged(exc)
        try:
            self._wipe()
        except OSError as err:
            raise IndexWriteError(f"the search index cannot be rebuilt ({err})") from err
        report = self.update(progress=progress, rebuild=True)
        report.findings.insert(0, finding)
        return report

    # -- writing ---------------------------------------------------------------------------
    @contextmanager
    def _writing(self, ix: windex.Index):
        """Whoosh's writer (with :func:`_fast_flush`), its holder's pid in :data:`PIDFILE`.

        Yields the writer; the caller commits it inside the block. On any exception the
        writer is cancelled (the lock released, the index unchanged) and an ``OSError``
        becomes :class:`IndexWriteError`.

        Raises:
            IndexBusyError: another process holds the write lock past :data:`LOCK_WAIT_SECONDS`.
        """
        pidfile = self.dir / PIDFILE
        with self._locked():
            # _lk=False: the lock is ours (see _locked), held until the manifest is written too
            writer = _fast_flush(ix.writer(_lk=False, compound=False, codec=_codec()))
            try:
                pidfile.write_text(str(os.getpid()))
            except OSError:
                pass
            try:
                yield writer
            except BaseException as exc:
                try:
                    writer.cancel()
                except Exception:  # noqa: BLE001 - best effort: the index must stay as it was
                    pass
                if isinstance(exc, OSError):
                    raise IndexWriteError(
                        f"the search index could not be written ({exc.strerror or exc}); "
                        "the index is unchanged and catches up at the next update") from exc
                raise
            finally:
                try:
                    pidfile.unlink()
                except OSError:
                    pass

    def update(self, progress: ProgressFn | None = None, rebuild: bool = False,
               only: list[str] | None = None) -> IndexReport:
        """Bring the index up to date with the files.

        Args:
            progress: called as ``progress(done, total)`` with counts of source files, at
                least at the start and the end.
            rebuild: empty the index and read every file again.
            only: workspace-relative paths of files just saved (or deleted): only these are
                looked at (the fast path after an edit).

        Returns:
            An :class:`IndexReport`. Unreadable files are findings, never exceptions, and never
            leave the writer open.

        Raises:
            IndexBusyError: another process holds the write lock past the wait.
            IndexWriteError: the index cannot be written (disk full, permissions); the index
                stays as it was before the update.
        """
        if self.refused:
            raise IndexWriteError(self.refused)
        started = time.perf_counter()
        report = IndexReport()
        self.needs_update = False
        if rebuild:
            self._ix = None
            try:
                self._wipe()
            except OSError as exc:
                raise IndexWriteError(f"the search index cannot be rebuilt ({exc})") from exc
        had_index = self.exists()
        ix = self.open()
        report.findings.extend(self.findings)
        self.findings = []
        listed = self.manifest.schema() == SCHEMA_VERSION
        wanted = {p.replace(os.sep, "/") for p in only} if only is not None else set()
        old = (self.manifest.stamps(wanted if only is not None else None) if listed else {})
        empty = not old and (only is None or not listed or self.manifest.count() == 0)
        report.rebuilt = rebuild or not had_index or empty and bool(report.findings)
        current, gone = self._sources_now(None if only is None else wanted, old, report)
        changed: dict[str, Entry] = {}
        total = len(current) + report.unchanged
        if progress:
            progress(0, total)
        if empty and only is None and total >= PARALLEL_SOURCES and _workers() > 1:
            self._build_parallel(ix, list(current.values()), report, progress)
            return self._finish_report(ix, report, progress, total, started)
        todo = self._changed_sources(current, old, gone, changed, report)
        checked = total - len(todo)
        owners = iter_owner_map(self.ws) if todo else {}
        node_cache: dict[Path, str] = {}
        if todo or gone:
            with self._writing(ix) as writer:
                for path in gone:
                    self._delete_source(writer, path)
                    report.removed += 1
                for i, (src, data, entry) in enumerate(todo, start=1):
                    if src.rel in old:
                        report.updated += 1
                    else:
                        report.added += 1
                    # always: a commit whose manifest write was lost left the documents in
                    self._delete_source(writer, src.rel)
                    report.findings.extend(_add_source(writer, self.ws, src, data, node_cache, owners))
                    changed[src.rel] = entry
                    if progress and (i % 25 == 0):
                        progress(checked + i, total)
                small = len(todo) + len(gone) <= SMALL_UPDATE and not report.rebuilt
                writer.commit(merge=not small)
                self._write_manifest(changed, gone)  # under the same lock as the commit
        elif changed or not had_index:
            with self._locked():
                self._write_manifest(changed)
        return self._finish_report(ix, report, progress, total, started)

    def _sources_now(self, wanted: set[str] | None, old: dict[str, tuple[int, int]],
                     report: IndexReport) -> tuple[dict[str, Source], list[str]]:
        """The source files to look at and the indexed ones gone: the whole workspace's
        (``wanted`` ``None``; the files it leaves unchanged by their stamps in ``old`` are
        counted in ``report``) or only the ``wanted`` paths'."""
        if wanted is None:
            found = scan(self.ws, old)
            report.findings.extend(found.findings)
            current = {s.rel: s for s in found.sources}
            report.unchanged += found.unchanged
            known_seen = found.unchanged + sum(1 for rel_path in current if rel_path in old)
            gone = [] if known_seen == len(old) else sorted(set(old).difference(found.seen))
            return current, gone
        current = {}
        for path in sorted(wanted):
            src = source_for(self.ws, path)
            if src is not None:
                current[path] = src
        return current, [p for p in wanted if p in old and p not in current]

    def _changed_sources(self, current: dict[str, Source], old: dict[str, tuple[int, int]], gone: list[str],
                         changed: dict[str, Entry], report: IndexReport) -> list[tuple[Source, bytes, Entry]]:
        """The sources whose content differs from what is indexed, read: ``(source, bytes,
        manifest entry)``. A file whose stamp is unchanged is not read; one touched with the
        same content only gets its new stamp in ``changed``; one that vanished or cannot be
        read is added to ``gone`` (when indexed) with its finding in ``report``."""
        stale: list[tuple[Source, os.stat_result]] = []
        for rel_path, src in current.items():
            try:
                st = src.stat if src.stat is not None else src.path.stat()
            except OSError:
                gone.append(rel_path)
                continue
            if old.get(rel_path) == (st.st_mtime_ns, st.st_size):
                report.unchanged += 1
                continue
            stale.append((src, st))
        old_sha = self.manifest.sha(src.rel for src, _ in stale if src.rel in old) if stale else {}
        todo: list[tuple[Source, bytes, Entry]] = []
        for src, st in stale:
            data, finding = read_source(src)
            if finding:
                report.findings.append(finding)
            if data is None:
                if src.rel in old:
                    gone.append(src.rel)
                continue
            entry = _entry(st, data)
            if old_sha.get(src.rel) == entry[2]:
                changed[src.rel] = entry  # touched, same content: only the stamp is new
                report.unchanged += 1
                continue
            todo.append((src, data, entry))
        return todo

    def _delete_source(self, writer, rel_path: str) -> None:  # noqa: ANN001 - a Whoosh writer
        """Delete the documents of one source file in ``writer``.

        Whoosh's ``delete_by_term`` opens a reader over every segment for it (a large share
        of a save in a big index); the kept searcher, brought to
        the version the writer started from (:meth:`searcher` keeps the readers of unchanged
        segments), finds the documents instead."""
        with self.search_lock:
            searcher = self.searcher()
            reader = searcher.reader()
            same = (reader.generation() == writer.generation - 1
                    and [seg.segment_id() for seg in writer.segments]
                    == [leaf.segment().segment_id() for leaf, _ in reader.leaf_readers()])
            docnums = list(searcher.document_numbers(source=rel_path)) if same else None
        if docnums is None:
            writer.delete_by_term("source", rel_path)
            return
        for docnum in docnums:
            writer.delete_document(docnum)

    def _finish_report(self, ix, report: IndexReport, progress: ProgressFn | None, total: int,
                       started: float) -> IndexReport:
        # the table of contents' counts: opening a reader of every segment grew with the index
        report.documents = sum(seg.doc_count() for seg in ix._read_toc().segments)
        if progress:
            progress(total, total)
        report.seconds = time.perf_counter() - started
        return report

    def _build_parallel(self, ix, sources: list[Source], report: IndexReport,
                        progress: ProgressFn | None) -> dict[str, Any]:
        """Index ``sources`` into an empty index with :func:`worker_count` processes.

        Each worker reads, parses and indexes its share of the files into a segment of its
        own (:func:`_index_part`); this process holds Whoosh's write lock throughout and
        commits the segments in one table of contents, as Whoosh's own ``MultiSegmentWriter``
        does (its ``_commit_toc``/``_finish`` steps; whoosh 2.7). Nothing is visible to
        searchers until that commit; a failed worker cancels the build (the index stays
        empty and the next update starts again).

        Returns:
            The new manifest entries (``rel → (mtime, size, sha)``); counts and findings go
            into ``report``.

        Raises:
            IndexBusyError, IndexWriteError: as :meth:`update`.
        """
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        import queue as queue_mod

        workers = _workers()
        parts = [[(s.rel, os.fspath(s.path), s.kind) for s in sources[i::workers]] for i in range(workers)]
        context = _worker_context()
        messages = context.Queue()
        manifest: dict[str, Any] = {}
        done_by_part = [0] * workers
        try:
            with self._writing(ix) as writer, \
                    ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                        initializer=_set_progress_queue, initargs=(messages,)) as pool:
                budget = _segment_budget(workers)
                pending = {pool.submit(_index_part, os.fspath(self.ws.root), str(self.dir), k, part, budget)
                           for k, part in enumerate(parts)}
                segments = []
                while pending:
                    finished, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                    for future in finished:
                        made, entries, findings, added = future.result()
                        segments.extend(made)
                        manifest.update(entries)
                        report.findings.extend(findings)
                        report.added += added
                    try:
                        while True:
                            k, count = messages.get_nowait()
                            done_by_part[k] = count
                    except queue_mod.Empty:
                        pass
                    if progress:
                        progress(sum(done_by_part), len(sources))
                pool.shutdown()
                # the commit of Whoosh's MultiSegmentWriter: the workers' segments, one new TOC
                writer._close_segment()
                writer._commit_toc(list(writer.segments) + segments)
                writer._finish()
                self._write_manifest(manifest, replace=True)  # under the same lock as the commit
        finally:
            messages.close()
        return manifest

    # -- reading ---------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """``{"state", "path", "exists", "schema", "documents", "sources", "bytes", "updated"}``.

        ``state`` is one sentence starting with ``ready``, ``absent``, ``incomplete`` (a build
        was interrupted before it recorded its manifest: the next search or ``memtui index``
        builds it), ``outdated`` (another schema version), ``damaged`` or ``refused``.
        ``updated`` is the time of the last update (seconds since the epoch) or ``None``.
        Never builds or repairs anything (a damaged index shows ``documents: None``).
        """
        if self.refused:
            return {"state": f"refused: {self.refused}", "path": self.ws.shown(self.dir), "exists": False,
                    "schema": None, "documents": None, "sources": 0, "updated": None, "bytes": 0,
                    "refused": self.refused}
        meta = self.manifest.meta()
        out: dict[str, Any] = {"path": self.ws.shown(self.dir), "exists": self._toc_present(),
                               "schema": meta.get("schema"), "documents": None,
                               "sources": self.manifest.count(),
                               "updated": meta.get("updated"), "bytes": 0}
        if self.dir.is_dir():
            out["bytes"] = sum(p.stat().st_size for p in self.dir.iterdir() if p.is_file())
        if out["exists"]:
            try:
                ix = windex.open_dir(str(self.dir))
                with ix.reader() as reader:
                    out["documents"] = reader.doc_count()
            except DAMAGE_ERRORS:
                out["documents"] = None
        later = "the next search or `memtui index` builds it"
        if not out["exists"]:
            state = f"absent: {later}"
        elif out["documents"] is None:
            state = "damaged: the next search or `memtui index` rebuilds it from the files"
        elif out["schema"] is None:
            state = f"incomplete: a build was interrupted before it finished; {later}"
        elif out["schema"] != SCHEMA_VERSION:
            state = f"outdated: built with schema {out['schema']}, this memtui uses {SCHEMA_VERSION}; {later}"
        else:
            state = "ready"
        return {"state": state, **out}


def _reader_reusing(ix, old):  # noqa: ANN001, ANN202 - Whoosh index and readers
    """A reader of ``ix``'s latest version that reuses ``old``'s reader of every segment
    whose documents and deletions are the same (Whoosh's own ``reader(reuse=)`` compares
    segment ids only, so a file deleted since would still be found); the readers of
    ``old`` not reused are closed. Opening a reader of every segment, twice per save, grew
    with the index."""
    from whoosh.reading import EmptyReader, MultiReader, SegmentReader

    toc = ix._read_toc()
    reusable: dict[str, Any] = {}
    if old is not None:
        for leaf, _offset in old.leaf_readers():
            seg = leaf.segment()
            if seg is not None:
                reusable[seg.segment_id()] = leaf
    readers = []
    try:
        for seg in toc.segments:
            leaf = reusable.get(seg.segment_id())
            if leaf is not None and leaf.segment().doc_count_all() == seg.doc_count_all() \
                    and set(leaf.segment().deleted_docs()) == set(seg.deleted_docs()):
                del reusable[seg.segment_id()]
                leaf._gen = toc.generation  # it reads this version too
                readers.append(leaf)
            else:
                readers.append(SegmentReader(ix.storage, toc.schema, seg, generation=toc.generation))
    finally:
        for leaf in reusable.values():
            try:
                leaf.close()
            except Exception:  # noqa: BLE001 - closing a reader of a replaced segment
                pass
    if not readers:
        return EmptyReader(toc.schema)
    return readers[0] if len(readers) == 1 else MultiReader(readers, generation=toc.generation)


def _load_lengths(reader) -> None:  # noqa: ANN001 - a Whoosh reader
    """Read each text field's per-document length column into a ``bytearray`` (one byte per
    document, as stored) and put it where Whoosh's per-document reader caches its column
    readers, so ``doc_field_length`` indexes memory instead of reading the file
    (reading it was a large share of an OR query's time). Best effort: relies on
    whoosh 2.7's ``W3PerDocReader`` internals and leaves a reader it does not recognise alone.
    """
    try:
        from whoosh.codec.whoosh3 import LENGTHS_COLUMN
        leaves = reader.leaf_readers()
    except (ImportError, AttributeError):
        return
    for segreader, _offset in leaves:
        perdoc = getattr(segreader, "_perdoc", None)
        cache = getattr(perdoc, "_readers", None)
        if perdoc is None or cache is None:
            continue
        for name in (CONTENT_FIELD, TRANSLIT_FIELD):
            lenfield = f"_{name}_len"
            if isinstance(cache.get(lenfield), bytearray):
                continue
            try:
                column = perdoc._cached_reader(lenfield, LENGTHS_COLUMN)
                if column is None:
                    continue
                data = bytearray(column._dbfile.get(column._basepos, column._count * column._fixedlen))
                if column._fixedlen != 1:
                    continue
                data.extend(bytes(max(0, perdoc._doccount - len(data))))  # absent: length 0, as stored
                cache[lenfield] = data
            except (AttributeError, TypeError, ValueError, OSError):
                continue


def _whoosh_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """The Whoosh fields of one parsed document. Whoosh encodes every term as UTF-8, so each
    value is :func:`well_formed` here (a lone surrogate that JSON allows is indexed and shown as
    ``U+FFFD``); the id keeps one apart as its ``\\udXXX`` escape, so two records differing only
    there stay two documents."""
    out: dict[str, Any] = {}
    ident = f"{doc['kind']}:{doc['path']}" + (f"#L{doc['line']}" if doc.get("line") else "")
    out["id"] = json_text(ident, indent=None)[1:-1] if well_formed(ident) is not ident else ident
    for key in ("source", "kind", "path", "node", "state", "owner", "entry_id", "target", "tag"):
        value = doc.get(key) or ""
        out[key] = well_formed(str(value))
    out["owner"] = out["owner"].lower()
    if doc.get("line") is not None:
        out["line"] = doc["line"]
    content: list[tuple[float, str]] = []
    if doc.get("entry_id"):
        content.append((ID_WEIGHT, out["entry_id"]))
    for name, weight in TEXT_FIELDS.items():
        value = well_formed(str(doc.get(name) or ""))
        if value:
            content.append((weight, value))
            out[name] = value[:STORED_BODY_CHARS]
    if content:
        out[CONTENT_FIELD] = content
    keyed = [(TEXT_FIELDS[name], well_formed(str(doc.get(name) or ""))) for name in TRANSLIT_SOURCES]
    out[TRANSLIT_FIELD] = [(w, k) for w, k in keyed if k]
    return out


def _add_source(writer, ws: Workspace, src: Source, data: bytes, node_cache: dict[Path, str],
                owners: dict[str, str]) -> list[Finding]:  # noqa: ANN001 - a Whoosh writer
    """Parse ``data`` (the bytes of ``src``) and add its documents to ``writer``; returns the
    parsing findings."""
    parsed = parse(ws, src, data.decode("utf-8"), node_cache, owners)
    for doc in parsed.docs:
        writer.add_document(**_whoosh_doc(doc))
    return parsed.findings


def _entry(st: os.stat_result, data: bytes) -> Entry:
    """The manifest entry of a source file: ``(mtime ns, size in bytes, SHA-1)``."""
    return (st.st_mtime_ns, st.st_size, fingerprint(data))


_progress_queue = None


def _set_progress_queue(q) -> None:  # noqa: ANN001 - a multiprocessing queue
    global _progress_queue
    _progress_queue = q


def _segment_budget(workers: int) -> int:
    """Bytes of postings (Whoosh's own estimate) one worker holds before it closes a segment:
    :data:`SEGMENT_BUDGET_MB`, less when a quarter of the free memory split over the workers
    is smaller (never under 64 MB)."""
    budget = SEGMENT_BUDGET_MB * 2**20
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        budget = min(budget, free // (4 * max(1, workers)))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    return max(64 * 2**20, budget)


def _worker_context():  # noqa: ANN202 - a multiprocessing context
    """How build workers start: spawned (a clean interpreter, a child of this process), never
    forked from this process, whose scan of the workspace each forked worker would carry
    (a build worker's resident memory held the parent's too). The resource tracker
    runs, and each worker dies with this process (:func:`memtui.core.procs.spawn_context`)."""
    from memtui.core.procs import spawn_context

    return spawn_context()


def _workers() -> int:
    """:func:`memtui.core.procs.worker_count`, its module (``multiprocessing``) imported only by
    a build (a search never starts a process)."""
    from memtui.core.procs import worker_count

    return worker_count()


def _release_memory() -> None:
    """Hand the memory of a closed segment back to the system: the pool's objects are freed,
    but the C allocator keeps the heap they fragmented, so each segment a worker built added
    to its resident size (glibc's ``malloc_trim``; nothing elsewhere)."""
    import gc

    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _index_part(root: str, index_dir: str, part: int, sources: list[tuple[str, str, str]],
                budget: int) -> tuple[list[Any], dict[str, Any], list[Finding], int]:
    """Worker process of :meth:`SearchIndex._build_parallel`: index ``sources`` (``(rel,
    path, kind)``) into new segments of the index in ``index_dir``, without its lock (the
    parent holds it). Reports ``(part, files done)`` on the progress queue every 50 files.

    A segment is closed when its postings reach ``budget`` bytes and the next one started:
    Whoosh would otherwise spill sorted runs to disk and merge them back, pickling every
    posting twice.

    Returns:
        ``(segments, manifest entries, findings, files added)``.
    """
    from whoosh.writing import SegmentWriter

    ws = Workspace.open(root)
    ix = windex.open_dir(index_dir)
    owners = iter_owner_map(ws)
    node_cache: dict[Path, str] = {}
    entries: dict[str, Any] = {}
    findings: list[Finding] = []
    segments: list[Any] = []
    added = 0
    limitmb = 4 * budget // 2**20  # the pool itself never spills: the segment closes first
    writer = _fast_flush(SegmentWriter(ix, _lk=False, compound=False, limitmb=limitmb, codec=_codec()))
    try:
        for i, (rel_path, path, kind) in enumerate(sources, start=1):
            src = Source(rel_path, Path(path), kind)
            try:
                st = src.path.stat()
            except OSError:
                continue
            data, finding = read_source(src)
            if finding:
                findings.append(finding)
            if data is None:
                continue
            findings.extend(_add_source(writer, ws, src, data, node_cache, owners))
            entries[rel_path] = _entry(st, data)
            added += 1
            if writer.pool.currentsize >= budget:
                segments.append(writer._finalize_segment())
                _release_memory()
                writer = _fast_flush(SegmentWriter(ix, _lk=False, compound=False, limitmb=limitmb, codec=_codec()))
            if _progress_queue is not None and i % 50 == 0:
                _progress_queue.put((part, i))
        if writer._added:
            segments.append(writer._finalize_segment())
        else:
            writer.cancel()
    except BaseException:
        writer.cancel()
        raise
    if _progress_queue is not None:
        _progress_queue.put((part, len(sources)))
    return segments, entries, findings, added
