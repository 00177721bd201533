"""The anchors of the search benchmark (bench/search.py): SQLite FTS5, tantivy and GNU grep
over the same documents as memtui, each given the same query semantics where it has them.

Every anchor indexes the documents memtui's own parser makes of the workspace
(:func:`documents`: articles, node indexes and each index line, with the same text fields),
so a count of matches means the same thing in every column. Text fields go into four
columns weighted as memtui weighs them (:data:`COLUMNS`): ``title`` 2, ``summary`` 2, ``short``
(symptom, aliases, mechanism, systems, tags, environment, fix shape) 3, ``body`` 1.
English words are stemmed on both sides (FTS5 ``porter``, tantivy ``en_stem``), as memtui
stems them; neither anchor stems Bulgarian or reads Latin-typed Bulgarian (memtui does: its
Bulgarian counts are larger for that reason).

Query semantics per type of the mix (``kind``, see ``bench/search.py``):

- ``term``, ``or``, ``bulgarian``: any of the words, bm25 over the weighted columns;
- ``and``: both words; ``phrase``: the two words adjacent;
- ``prefix``: every term with the prefix (no cap; memtui's lone prefix reads every term with
  the prefix too, skipping blocks that cannot reach the page);
- ``fuzzy``: FTS5 has no fuzzy search: the anchor expands the word with rapidfuzz over the
  FTS5 vocabulary (held in memory, as spellfix does) with memtui's rule — edit distance 1,
  2 for words of 6+ letters, the first two letters as typed — and ORs the expansions;
  tantivy's ``FuzzyTermQuery`` has no fixed first letters (more work than memtui's rule);
- ``filter``: the word and the tag;
- ``ticket``: memtui searches a pasted ticket's 16 rarest words (``MAX_QUERY_WORDS``) and
  scores in full only the 300 documents its 6 rarest rank first; the anchors get the OR of
  the same number of the ticket's rarest words (by FTS5's document frequencies, chosen
  before timing), scored in full (``ticket``), and, as a second row, the OR of every word of
  the ticket (``ticket-all``).

Snippets: FTS5 ``snippet()`` and tantivy's ``SnippetGenerator`` on the body for each of the
top 10, as memtui computes one per hit. grep (``grep -rliF``, the files of the memory
folder) has no ranking and no fuzzy search; it counts files, not documents.
"""

from __future__ import annotations

import bisect
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from memtui.core.search.sources import TEXT_FIELDS, iter_owner_map, parse, read_source, scan  # noqa: E402
from memtui.core.workspace import Workspace  # noqa: E402

#: Columns of the anchors and their bm25 weights; ``short`` holds the short text fields.
COLUMNS = {"title": 2.0, "summary": 2.0, "short": 3.0, "body": 1.0}
SHORT_FIELDS = [f for f in TEXT_FIELDS if f not in ("title", "summary", "body")]
#: Words of a pasted ticket the anchors search in the ``ticket`` row (memtui's MAX_QUERY_WORDS).
TICKET_WORDS = 16
LIMIT = 10
SNIPPET_TOKENS = 24


def documents(ws: Workspace) -> Iterator[dict[str, str]]:
    """The documents memtui indexes, as ``{path, kind, title, summary, short, body, tags}``."""
    owners = iter_owner_map(ws)
    cache: dict[Path, str] = {}
    for src in scan(ws).sources:
        data, _ = read_source(src)
        if data is None:
            continue
        for doc in parse(ws, src, data.decode("utf-8"), cache, owners).docs:
            yield {"path": doc["path"] + (f"#L{doc['line']}" if doc.get("line") else ""),
                   "kind": doc["kind"], "title": str(doc.get("title") or ""),
                   "summary": str(doc.get("summary") or ""),
                   "short": "\n".join(str(doc.get(f) or "") for f in SHORT_FIELDS if doc.get(f)),
                   "body": str(doc.get("body") or ""), "tags": " ".join(str(doc.get("tag") or "").split(","))}


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def ticket_words(q: str) -> list[str]:
    """The distinct words of a ticket as FTS5's tokenizer splits them (letters and digits)."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(q)))


def _quote(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


# -- SQLite FTS5 ---------------------------------------------------------------------------------
class Fts5:
    """SQLite FTS5 (stdlib ``sqlite3``; ``porter unicode61 remove_diacritics 2``)."""

    name = "fts5"

    def __init__(self, db: Path) -> None:
        self.db = db
        self.con = sqlite3.connect(db)
        self.weights = ", ".join(["0", "0"] + [str(w) for w in COLUMNS.values()] + ["0"])
        self.vocab: list[str] = []
        self._df: dict[str, int] = {}
        import Stemmer

        self._porter = Stemmer.Stemmer("porter")

    @staticmethod
    def build(ws: Workspace, db: Path) -> dict[str, Any]:
        if db.exists():
            db.unlink()
        con = sqlite3.connect(db)
        con.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, kind UNINDEXED, "
                    + ", ".join(COLUMNS) + ", tags, tokenize='porter unicode61 remove_diacritics 2')")
        rows = 0
        parse_s = 0.0
        batch: list[tuple[str, ...]] = []
        it = documents(ws)
        while True:
            t = time.perf_counter()
            doc = next(it, None)
            parse_s += time.perf_counter() - t
            if doc is not None:
                batch.append((doc["path"], doc["kind"], *(doc[c] for c in COLUMNS), doc["tags"]))
            if len(batch) >= 2000 or (doc is None and batch):
                con.executemany(f"INSERT INTO docs VALUES ({', '.join('?' * (len(COLUMNS) + 3))})", batch)
                rows += len(batch)
                batch = []
            if doc is None:
                break
        con.execute("INSERT INTO docs(docs) VALUES('optimize')")
        con.commit()
        con.close()
        return {"documents": rows, "parse_s": parse_s}

    def size(self) -> int:
        return self.db.stat().st_size

    def load_vocabulary(self) -> None:
        """The FTS5 vocabulary in memory (sorted), for the fuzzy anchor and ticket words."""
        self.con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, docs, 'row')")
        rows = self.con.execute("SELECT term, doc FROM temp.vocab").fetchall()
        self.vocab = [t for t, _ in rows]
        self._df = dict(rows)

    def df(self, word: str) -> int:
        return self._df.get(self._porter.stemWord(word), 0)

    def rarest(self, q: str, n: int = TICKET_WORDS) -> list[str]:
        """The ``n`` words of ``q`` found in the fewest documents (found at all), in query order."""
        words = [w for w in ticket_words(q) if self.df(w)]
        keep = set(sorted(words, key=lambda w: (self.df(w), w))[:n])
        return [w for w in words if w in keep]

    def fuzzy_terms(self, word: str) -> list[str]:
        """Vocabulary terms within memtui's fuzzy rule of ``word`` (rapidfuzz OSA distance)."""
        from rapidfuzz.distance import OSA

        stem = self._porter.stemWord(word)
        maxdist = 2 if len(stem) >= 6 else 1
        lo = bisect.bisect_left(self.vocab, stem[:2])
        hi = bisect.bisect_left(self.vocab, stem[:2] + "\U0010ffff")
        return [t for t in self.vocab[lo:hi]
                if abs(len(t) - len(stem)) <= maxdist and OSA.distance(stem, t, score_cutoff=maxdist) <= maxdist]

    def expression(self, kind: str, q: str, words: list[str] | None = None) -> str | None:
        """The MATCH expression of one mix query over the text columns (``None``: nothing
        to search)."""
        expr = self._expression(kind, q, words)
        if expr is None or kind == "filter":
            return expr
        return "{" + " ".join(COLUMNS) + "} : (" + expr + ")"

    def _expression(self, kind: str, q: str, words: list[str] | None) -> str | None:
        if kind == "and":
            a, b = q.split(" AND ")
            return f"{_quote(a)} AND {_quote(b)}"
        if kind == "phrase":
            return q
        if kind == "prefix":
            return f"{_quote(q[:-1])}*"
        if kind == "fuzzy":
            terms = self.fuzzy_terms(q.rstrip("~"))
            return " OR ".join(_quote(t) for t in terms) if terms else None
        if kind == "filter":
            word, tag = q.split(" tag:")
            return "{" + " ".join(COLUMNS) + "} : " + f"{_quote(word)} AND tags : {_quote(tag)}"
        chosen = words if words is not None else ticket_words(q)
        return " OR ".join(_quote(w) for w in chosen) if chosen else None

    def search(self, kind: str, q: str, words: list[str] | None = None) -> list[tuple[str, str]]:
        expr = self.expression(kind, q, words)
        if expr is None:
            return []
        return self.con.execute(
            f"SELECT path, snippet(docs, -1, '[', ']', '…', {SNIPPET_TOKENS}) FROM docs WHERE docs MATCH ? "
            f"ORDER BY bm25(docs, {self.weights}) LIMIT {LIMIT}", (expr,)).fetchall()

    def count(self, kind: str, q: str, words: list[str] | None = None) -> int:
        expr = self.expression(kind, q, words)
        if expr is None:
            return 0
        return self.con.execute("SELECT count(*) FROM docs WHERE docs MATCH ?", (expr,)).fetchone()[0]

    def save(self, path: str, marker: str) -> tuple[float, bool]:
        """Append ``marker`` to one document's body, commit, find it: (ms, found).

        The row is found by its rowid, as an application on FTS5 keeps it (its own table of
        path → rowid, read here once before the timing): ``WHERE path = ?`` on the UNINDEXED
        column would scan every row of the table on each save, which no FTS5 user does."""
        if not hasattr(self, "_rowids"):
            self._rowids = dict(self.con.execute("SELECT path, rowid FROM docs").fetchall())
        rowid = self._rowids[path]
        t = time.perf_counter()
        self.con.execute("UPDATE docs SET body = body || ? WHERE rowid = ?", ("\n" + marker, rowid))
        self.con.commit()
        found = bool(self.con.execute("SELECT path FROM docs WHERE docs MATCH ? LIMIT 1", (_quote(marker),)).fetchall())
        return (time.perf_counter() - t) * 1000, found


# -- tantivy -------------------------------------------------------------------------------------
def _tantivy_schema():  # noqa: ANN202
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw")
    sb.add_text_field("kind", stored=True, tokenizer_name="raw")
    for c in COLUMNS:
        sb.add_text_field(c, stored=c == "body", tokenizer_name="en_stem")
    sb.add_text_field("tags", tokenizer_name="default")
    return sb.build()


class Tantivy:
    """tantivy (PyPI ``tantivy``, the Rust engine's Python binding): BM25, ``en_stem``."""

    name = "tantivy"

    def __init__(self, folder: Path) -> None:
        import tantivy

        self.tantivy = tantivy
        self.folder = folder
        self.schema = _tantivy_schema()
        self.index = tantivy.Index(self.schema, path=str(folder))
        self.index.reload()
        self.searcher = self.index.searcher()
        self.writer = None

    @staticmethod
    def build(ws: Workspace, folder: Path, threads: int) -> dict[str, Any]:
        import tantivy

        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        index = tantivy.Index(_tantivy_schema(), path=str(folder))
        writer = index.writer(heap_size=200_000_000, num_threads=threads)
        rows = 0
        parse_s = 0.0
        it = documents(ws)
        while True:
            t = time.perf_counter()
            doc = next(it, None)
            parse_s += time.perf_counter() - t
            if doc is None:
                break
            writer.add_document(tantivy.Document(**doc))
            rows += 1
        writer.commit()
        writer.wait_merging_threads()
        return {"documents": rows, "parse_s": parse_s}

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.folder.iterdir() if p.is_file())

    def query(self, kind: str, q: str, words: list[str] | None = None):  # noqa: ANN201
        t = self.tantivy
        fields = list(COLUMNS)
        boosts = {c: w for c, w in COLUMNS.items() if w != 1.0}
        if kind == "prefix":
            prefix = re.escape(q[:-1].lower())
            return t.Query.boolean_query([(t.Occur.Should, t.Query.boost_query(
                t.Query.regex_query(self.schema, c, prefix + ".*"), COLUMNS[c])) for c in fields])
        if kind == "fuzzy":
            word = q.rstrip("~").lower()
            dist = 2 if len(word) >= 6 else 1
            return self.index.parse_query(word, fields, field_boosts=boosts,
                                          fuzzy_fields={c: (False, dist, True) for c in fields})
        if kind == "filter":
            word, tag = q.split(" tag:")
            return self.index.parse_query(f"{_quote(word)} AND tags:{_quote(tag)}", fields, field_boosts=boosts)
        if kind in ("and", "phrase"):
            return self.index.parse_query(q if kind == "phrase" else " AND ".join(_quote(w) for w in q.split(" AND ")),
                                          fields, field_boosts=boosts)
        chosen = words if words is not None else ticket_words(q)
        return self.index.parse_query(" OR ".join(_quote(w) for w in chosen) or '""', fields, field_boosts=boosts)

    def search(self, kind: str, q: str, words: list[str] | None = None) -> list[tuple[str, str]]:
        query = self.query(kind, q, words)
        s = self.searcher
        hits = s.search(query, LIMIT, count=False).hits
        gen = self.tantivy.SnippetGenerator.create(s, query, self.schema, "body")
        gen.set_max_num_chars(160)
        out = []
        for _score, addr in hits:
            doc = s.doc(addr)
            out.append((doc["path"][0], gen.snippet_from_doc(doc).fragment()))
        return out

    def count(self, kind: str, q: str, words: list[str] | None = None) -> int:
        return self.searcher.search(self.query(kind, q, words), 1, count=True).count

    def save(self, path: str, body: str, doc: dict[str, str], marker: str) -> tuple[float, bool]:
        """Replace one document with ``marker`` appended to its body, commit, reload, find
        it: (ms, found). The writer is opened once beforehand, as an application keeps it."""
        t = self.tantivy
        if self.writer is None:
            self.writer = self.index.writer(heap_size=50_000_000, num_threads=1)
        started = time.perf_counter()
        self.writer.delete_documents("path", path)
        self.writer.add_document(t.Document(**{**doc, "body": body + "\n" + marker}))
        self.writer.commit()
        self.index.reload()
        self.searcher = self.index.searcher()
        found = self.searcher.search(self.index.parse_query(marker, ["body"]), 1).count > 0
        return (time.perf_counter() - started) * 1000, found


# -- grep ----------------------------------------------------------------------------------------
class Grep:
    """GNU grep: ``grep -rliF`` over the files of the memory folder (no ranking, no
    stemming; counts files). AND and filter pipe the files of the first word into a second
    grep (``xargs -0``); the filter's second step is ``grep -liE '^tags:.*\\bTAG\\b'``."""

    name = "grep"

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)

    def command(self, kind: str, q: str, words: list[str] | None = None) -> str | None:
        import shlex

        d = shlex.quote(self.folder)
        if kind == "fuzzy":
            return None
        if kind == "and":
            a, b = q.split(" AND ")
            return f"grep -rliFZ -- {shlex.quote(a)} {d} | xargs -0 -r grep -liF -- {shlex.quote(b)}"
        if kind == "filter":
            word, tag = q.split(" tag:")
            return (f"grep -rliFZ -- {shlex.quote(word)} {d} | xargs -0 -r grep -liE -- "
                    + shlex.quote(rf"^tags:.*\b{re.escape(tag)}\b"))
        if kind == "phrase":
            return f"grep -rliF -- {shlex.quote(q.strip(chr(34)))} {d}"
        if kind == "prefix":
            return f"grep -rliF -- {shlex.quote(q[:-1])} {d}"
        chosen = words if words is not None else ticket_words(q)
        if not chosen:
            return None
        return "grep -rliF " + " ".join(f"-e {shlex.quote(w)}" for w in chosen) + f" {d}"

    def search(self, kind: str, q: str, words: list[str] | None = None) -> list[str] | None:
        cmd = self.command(kind, q, words)
        if cmd is None:
            return None
        out = subprocess.run(cmd, shell=True, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C.UTF-8"})
        return out.stdout.splitlines()
