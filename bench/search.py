"""Search benchmark (issue 8): build time, index size, query latency per type, save-to-searchable.

Usage: python bench/search.py N [--workdir DIR] [--queries 243] [--seed 7] [--vocabulary small]
       python bench/search.py N --workspace /tmp/ws100k [--reuse-index]

Generates an N-article workspace with ``bench/make_workspace.py`` (about 10 % Bulgarian), or
uses ``--workspace`` (made by the same script; only its ``.memtui/index`` is written, and with
``--reuse-index`` an index already there is kept), builds the index from scratch, runs a fixed
mix of known-item queries (terms, AND, OR, phrases, prefixes, fuzzy, filters, Bulgarian, a
pasted ticket; words taken from articles drawn at random, the same every run for a given seed
and workspace: see :func:`queries`) and prints, per query type, p50 and p95 latency in
ms; then the time from saving one article to it being searchable, the first result after a
cold start, and peak RSS. On the same data and the same queries, in the same run: the seed's
grep baseline (substring counts over the node index one-liners) and SQLite FTS5 (stdlib
``sqlite3``, ``unicode61`` tokenizer, bm25 ranking; FTS5 has no fuzzy search, so ``word~``
runs as the exact word there). Prints figures; it is not a test.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import statistics
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from memtui.core.frontmatter import split  # noqa: E402
from memtui.core.search.index import SearchIndex  # noqa: E402
from memtui.core.search.query import search  # noqa: E402
from memtui.core.workspace import Workspace  # noqa: E402

sys.path.insert(0, str(HERE))
from make_workspace import BG_FUNCTION, FUNCTION  # noqa: E402


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


_TOKEN = re.compile(r"[^\W\d_]+(?:[-_./][^\W_]+)*")


def queries(rng: random.Random, n: int, ws: Workspace) -> list[tuple[str, str]]:
    """A fixed mix of ``n`` known-item queries (the words a user remembers of an article).

    Each query takes its words from one article drawn at random (the same ones for a given
    seed and workspace), so words are as frequent in the queries as in the text: common
    content words often, rare ones seldom. Function words are never query words, but a
    pasted ticket keeps them (25 running words of an article).
    """
    kinds = ["term", "and", "or", "phrase", "prefix", "fuzzy", "filter", "bulgarian", "ticket"]
    articles = sorted(p for p in ws.memory.rglob("*.md") if p.name != "AGENTS.md")
    stop = set(FUNCTION) | set(BG_FUNCTION)
    out: list[tuple[str, str]] = []
    while len(out) < n:
        kind = kinds[len(out) % len(kinds)]
        fm = split(rng.choice(articles).read_text("utf-8", errors="replace"))
        meta = fm.meta if isinstance(fm.meta, dict) else {}
        running = _TOKEN.findall(fm.body.split("\n", 1)[-1])
        content = [t.lower() for t in running if t.lower() not in stop and len(t) > 2 and t.isalpha()]
        cyrillic = [t for t in content if re.search("[а-я]", t)]
        if kind == "bulgarian":
            content = cyrillic
        elif cyrillic and kind != "ticket" and rng.random() < 0.8:
            content = [t for t in content if t not in cyrillic] or content
        if len(set(content)) < 3:
            continue
        w = []
        while len(w) < 3:
            t = rng.choice(content)
            if t not in w:
                w.append(t)
        if kind == "term":
            q = w[0]
        elif kind == "and":
            q = f"{w[0]} AND {w[1]}"
        elif kind == "or":
            q = f"{w[0]} {w[1]} {w[2]}"
        elif kind == "phrase":
            pairs = [(a.lower(), b.lower()) for a, b in zip(running, running[1:])
                     if a.lower() not in stop and b.lower() not in stop and a.isalpha() and b.isalpha()]
            if not pairs:
                continue
            q = '"%s %s"' % rng.choice(pairs)
        elif kind == "prefix":
            longer = [t for t in content if len(t) >= 5] or content
            word = rng.choice(longer)
            q = word[:rng.randint(3, min(5, len(word) - 1))] + "*"
        elif kind == "fuzzy":
            word = w[0]
            j = rng.randrange(2, len(word)) if len(word) > 4 else len(word)
            q = (word[:j] + word[j + 1:] if len(word) > 4 else word) + "~"
        elif kind == "filter":
            tags = meta.get("tags") if isinstance(meta.get("tags"), list) else ["parcel"]
            q = f"{w[0]} tag:{rng.choice(tags)}"
        elif kind == "bulgarian":
            q = f"{w[0]} {w[1]}"
        else:
            at = rng.randrange(max(1, len(running) - 25))
            q = " ".join(running[at:at + 25])
        out.append((kind, q))
    return out


def fts_query(kind: str, q: str) -> tuple[str, str | None]:
    """The FTS5 MATCH expression of one mix query (and a tag for the filter type)."""
    if kind == "and":
        a, b = q.split(" AND ")
        return f'"{a}" AND "{b}"', None
    if kind == "phrase":
        return q, None
    if kind == "prefix":
        return f'"{q[:-1]}"*', None
    if kind == "fuzzy":
        return f'"{q.rstrip("~")}"', None
    if kind == "filter":
        word, tag = q.split(" tag:")
        return f'"{word}" AND tags:"{tag}"', None
    words = [w for w in re.findall(r"\w+", q)]
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words)), None


def build_fts(ws: Workspace, db: Path) -> tuple[sqlite3.Connection, float, int]:
    """Index every article of ``ws`` in an FTS5 table; returns (connection, seconds, rows)."""
    if db.exists():
        db.unlink()
    con = sqlite3.connect(db)
    t = time.perf_counter()
    con.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, title, summary, tags, body, "
                "tokenize='unicode61 remove_diacritics 2')")
    rows = 0
    batch = []
    for path in ws.memory.rglob("*.md"):
        fm = split(path.read_text("utf-8", errors="replace"))
        meta = fm.meta if isinstance(fm.meta, dict) else {}
        tags = meta.get("tags")
        batch.append((ws.shown(path), str(meta.get("title") or ""), str(meta.get("summary") or ""),
                      " ".join(map(str, tags)) if isinstance(tags, list) else str(tags or ""), fm.body))
        if len(batch) >= 2000:
            con.executemany("INSERT INTO docs VALUES (?,?,?,?,?)", batch)
            rows += len(batch)
            batch = []
    con.executemany("INSERT INTO docs VALUES (?,?,?,?,?)", batch)
    rows += len(batch)
    con.execute("INSERT INTO docs(docs) VALUES('optimize')")
    con.commit()
    return con, time.perf_counter() - t, rows


def table(rows: dict[str, dict[str, list[float]]]) -> None:
    engines = list(rows)
    kinds = list(next(iter(rows.values())))
    head = f"{'query type':<11}{'n':>4}" + "".join(f"{e + ' p50':>16}{e + ' p95':>16}" for e in engines)
    print(head)
    for kind in kinds:
        line = f"{kind:<11}{len(rows[engines[0]][kind]):>4}"
        for e in engines:
            vals = rows[e].get(kind) or [float("nan")]
            line += f"{statistics.median(vals):>16.1f}{pct(vals, 0.95):>16.1f}"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("--workdir")
    ap.add_argument("--workspace", help="an existing workspace from make_workspace.py (kept)")
    ap.add_argument("--reuse-index", action="store_true", help="keep an index already built there")
    ap.add_argument("--queries", type=int, default=243)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--vocabulary", choices=("zipf", "small"), default="zipf",
                    help="text of a generated workspace (see make_workspace.py)")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="memtui-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.workspace:
        root = Path(args.workspace)
    else:
        root = work / f"ws{args.n}"
        if root.exists():
            shutil.rmtree(root)
        subprocess.run([sys.executable, str(HERE / "make_workspace.py"), str(args.n), str(root),
                        "--vocabulary", args.vocabulary],
                       check=True, stdout=subprocess.DEVNULL)
    ws = Workspace.open(root)
    idx = SearchIndex(ws)
    if args.reuse_index and idx.exists():
        print(f"articles {args.n}: index reused (build not measured in this run)")
    else:
        t0, c0 = time.perf_counter(), time.process_time()
        rep = idx.update(rebuild=True)
        build, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"articles {args.n}: memtui build {build:.1f} s wall, {cpu:.1f} s CPU ({rep.documents} documents, "
              f"{rep.documents / build:.0f} docs/s); load average {os.getloadavg()[0]:.1f}")
    size = sum(p.stat().st_size for p in idx.dir.iterdir() if p.is_file())
    print(f"memtui index {size / 1e6:.1f} MB")

    # first result after start: a fresh process opens the index and answers a query
    code = ("import time,sys,resource; t=time.perf_counter(); sys.path.insert(0, %r);"
            "from memtui.core.workspace import Workspace; from memtui.core.search.index import SearchIndex;"
            "from memtui.core.search.query import search; ws=Workspace.open(%r); i=SearchIndex(ws);"
            "r=search(i, %r); print((time.perf_counter()-t)*1000, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024)"
            ) % (str(HERE.parent), str(root), "parcel")
    cold, cold_rss = map(float, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                               check=True).stdout.split())
    print(f"first result after start (new process, index built): {cold:.0f} ms, that process's peak RSS {cold_rss:.0f} MB")

    rng = random.Random(args.seed)
    mix = queries(rng, args.queries, ws)
    rows: dict[str, dict[str, list[float]]] = {"memtui": {}, "memtui-cpu": {}, "fts5": {}, "grep": {}}
    for kind, q in mix:
        t, c = time.perf_counter(), time.process_time()
        search(idx, q, limit=10)
        rows["memtui"].setdefault(kind, []).append((time.perf_counter() - t) * 1000)
        rows["memtui-cpu"].setdefault(kind, []).append((time.process_time() - c) * 1000)
    rss_memtui = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    # SQLite FTS5 on the same articles and queries
    con, fts_build, fts_rows = build_fts(ws, work / "fts5.db")
    print(f"fts5 build {fts_build:.1f} s ({fts_rows} articles), db {(work / 'fts5.db').stat().st_size / 1e6:.1f} MB")
    for kind, q in mix:
        expr, _ = fts_query(kind, q)
        t = time.perf_counter()
        con.execute("SELECT path FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0, 3.0, 2.0, 2.0, 1.0) LIMIT 10",
                    (expr,)).fetchall()
        rows["fts5"].setdefault(kind, []).append((time.perf_counter() - t) * 1000)

    # grep baseline on the same queries: substring counts over the one-liners
    lines = []
    for agents in ws.memory.rglob("AGENTS.md"):
        lines.extend(ln.lower() for ln in agents.read_text("utf-8").splitlines() if ln.startswith("- ["))
    for kind, q in mix:
        t = time.perf_counter()
        wanted = {w.lower().strip("*~") for w in q.replace('"', " ").split() if len(w) >= 3 and ":" not in w}
        scored = sorted(((sum(w in ln for w in wanted), i) for i, ln in enumerate(lines)), reverse=True)[:5]
        del scored
        rows["grep"].setdefault(kind, []).append((time.perf_counter() - t) * 1000)
    print(f"latency in ms over {len(mix)} queries (grep: over {len(lines)} one-liners; memtui-cpu: "
          f"CPU time of the same memtui queries; load average {os.getloadavg()[0]:.1f})")
    table(rows)

    # save one article → searchable
    article = next(p for p in sorted(ws.memory.rglob("*.md")) if p.name != "AGENTS.md")
    original = article.read_bytes()
    t = time.perf_counter()
    article.write_text(original.decode("utf-8") + "\nwombatquartz\n", "utf-8")
    idx.update(only=[ws.shown(article)])
    hits = search(idx, "wombatquartz").hits
    print(f"save to searchable: {(time.perf_counter() - t) * 1000:.0f} ms (found: {bool(hits)})")
    article.write_bytes(original)
    idx.update(only=[ws.shown(article)])
    t = time.perf_counter()
    idx.update()
    print(f"no-change catch-up scan: {(time.perf_counter() - t) * 1000:.0f} ms")
    print(f"peak RSS of this process after memtui queries: {rss_memtui:.0f} MB; "
          f"at the end (FTS5 too): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
