"""Search benchmark: memtui beside SQLite FTS5, tantivy and grep on the same documents.

Usage: python bench/search.py WORKSPACE [--queries 243] [--seed 7] [--out bench/out]
                              [--reuse-index] [--engines memtui,fts5,tantivy,grep]

WORKSPACE is made by ``bench/make_workspace.py N DIR`` (only ``DIR/.memtui/index`` and the
anchors' files under ``DIR/.bench`` are written). In one run, on the same data:

1. **Build**, each engine in a fresh process from the same files: wall time, CPU time of
   the process *and its worker processes* (``RUSAGE_CHILDREN``), the peak RSS of the
   largest worker and of the parent, and the size on disk. The anchors index the
   documents memtui's own parser makes (``bench/anchors.py``), and the time of that parse
   is printed apart.
2. **Latency** of a fixed mix of known-item queries (terms, AND, OR, phrases, prefixes,
   fuzzy, filters, Bulgarian, pasted tickets; :func:`queries`), every engine returning 10
   hits *with snippets*: after a warm-up pass over another mix of the same kinds (another
   seed: caches are warm, but none holds the timed queries' own terms), the engines are run
   interleaved, query by query (the order of the engines rotating), so a slow moment of
   the machine hits all of them. Per query type: p50 and p95 in ms, memtui's CPU ms, each
   engine's p50 over memtui's, and the median number of matches each engine counted (its
   exact count, taken outside the timing; grep counts files), so a reader sees whether
   the engines did the same work. The semantics given to each anchor are in
   ``bench/anchors.py``.
3. **Save → searchable**: one document changed, the index updated, the change found
   (median of 5 saves), for memtui and the anchors.
4. **Start**: a fresh process opening the index and answering one query; the no-change
   catch-up scan a start does (``SearchIndex.update()`` with nothing changed) in a fresh
   process, and again in a warm one.

Prints text tables and writes them as JSON to ``--out`` (``bench/out/``, not in git). The
machine must be otherwise idle (2 cores: never beside the test suite or another bench).
Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from memtui.core.frontmatter import split  # noqa: E402
from memtui.core.workspace import Workspace  # noqa: E402

from make_workspace import BG_FUNCTION, FUNCTION  # noqa: E402

KINDS = ["term", "and", "or", "phrase", "prefix", "fuzzy", "filter", "bulgarian", "ticket"]
ENGINES = ["memtui", "fts5", "tantivy", "grep"]
SAVES = 5


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


_TOKEN = re.compile(r"[^\W\d_]+(?:[-_./][^\W_]+)*")


def queries(rng: random.Random, n: int, ws: Workspace) -> list[tuple[str, str]]:
    """A fixed mix of ``n`` known-item queries (the words a user remembers of an article).

    Each query takes its words from one article drawn at random (the same ones for a given
    seed and workspace), so words are as frequent in the queries as in the text: common
    content words often, rare ones seldom. Function words are never query words, but a
    pasted ticket keeps them (25 running words of an article).
    """
    articles = sorted(p for p in ws.memory.rglob("*.md") if p.name != "AGENTS.md")
    stop = set(FUNCTION) | set(BG_FUNCTION)
    out: list[tuple[str, str]] = []
    while len(out) < n:
        kind = KINDS[len(out) % len(KINDS)]
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
        w: list[str] = []
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


# -- builds, each in a fresh process ---------------------------------------------------------------
def _child_build(engine: str, root: str, work: str) -> None:
    """Build one engine's index (in this fresh process) and print its figures as JSON."""
    ws = Workspace.open(root)
    t0, r0, c0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    if engine == "memtui":
        from memtui.core.search.index import SearchIndex

        idx = SearchIndex(ws)
        rep = idx.update(rebuild=True)
        extra = {"documents": rep.documents}
        folder = idx.dir
        size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    elif engine == "fts5":
        from anchors import Fts5

        db = Path(work) / "fts5.db"
        extra = Fts5.build(ws, db)
        size = db.stat().st_size
    else:
        from anchors import Tantivy

        folder = Path(work) / "tantivy"
        extra = Tantivy.build(ws, folder, threads=os.cpu_count() or 1)
        size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    wall = time.perf_counter() - t0
    r1, c1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_self = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    cpu_children = (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)
    print(json.dumps({"engine": engine, "wall_s": wall, "cpu_s": cpu_self + cpu_children,
                      "cpu_self_s": cpu_self, "cpu_workers_s": cpu_children,
                      "rss_parent_mb": r1.ru_maxrss / 1024, "rss_worker_mb": c1.ru_maxrss / 1024 if cpu_children else None,
                      "bytes": size, **extra}))


def build(engine: str, root: Path, work: Path) -> dict[str, Any]:
    busy0 = cpu_seconds()[0]
    out = subprocess.run([sys.executable, __file__, "--child-build", engine, str(root), str(work)],
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{engine} build failed:\n{out.stderr}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    got["foreign_cpu_s"] = max(0.0, cpu_seconds()[0] - busy0 - got["cpu_s"])  # other processes' meanwhile
    return got


# -- start-up probes, each in a fresh process --------------------------------------------------------
_START = """
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {repo!r})
from memtui.core.workspace import Workspace
from memtui.core.search.index import SearchIndex
from memtui.core.search.query import search
idx = SearchIndex(Workspace.open({root!r}))
if {catchup!r}:
    t1 = time.perf_counter(); rep = idx.update(); t2 = time.perf_counter()
    t3 = time.perf_counter(); idx.update(); t4 = time.perf_counter()
    print(json.dumps({{"catchup_ms": (t2 - t1) * 1000, "warm_catchup_ms": (t4 - t3) * 1000,
                      "process_ms": (t2 - t0) * 1000, "changed": rep.added + rep.updated + rep.removed}}))
else:
    r = search(idx, {query!r})
    print(json.dumps({{"first_result_ms": (time.perf_counter() - t0) * 1000, "hits": len(r.hits),
                      "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def probe(root: Path, catchup: bool, query: str = "parcel") -> dict[str, Any]:
    code = _START.format(repo=str(HERE.parent), root=str(root), catchup=catchup, query=query)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- the engines as the timing loop sees them ---------------------------------------------------------
class Memtui:
    name = "memtui"

    def __init__(self, ws: Workspace) -> None:
        from memtui.core.search.index import SearchIndex
        from memtui.core.search.query import search

        self.idx = SearchIndex(ws)
        self._search = search
        self.last: Any = None

    def search(self, kind: str, q: str, words: list[str] | None = None) -> Any:
        self.last = self._search(self.idx, q, limit=10)
        return self.last

    def count(self, kind: str, q: str, words: list[str] | None = None) -> int:
        """memtui's exact number of matching documents (outside the timing): its query
        plan's matches, hidden states left out (a ticket: the matches of the candidates'
        plan, as searched)."""
        return exact_count(self.idx, q)


def exact_count(idx, q: str) -> int:  # noqa: ANN001
    """Every document memtui's plan for ``q`` matches (Whoosh's ``docs_for_query``)."""
    from whoosh import query as wq

    from memtui.core.search.engine import matching
    from memtui.core.search.query import parse

    items, filters = parse(q)
    with idx.search_lock:
        searcher = idx.searcher()
        reader = searcher.reader()
        hidden_q = wq.Or([wq.Term("state", s) for s in matching.HIDDEN_STATES])
        if len(items) == 1 and items[0].kind == "prefix" and not filters:
            # a lone prefix reads every term with it, and the prefix's stems
            terms = {t for leaf, _ in reader.leaf_readers()
                     for t in (x.decode() if isinstance(x, bytes) else x
                               for x, _info in leaf.iter_prefix(matching.CONTENT_FIELD, items[0].text))}
            terms.update(matching._stems_of(reader, matching.CONTENT_FIELD, items[0].text))
            query = wq.Or([wq.Term(matching.CONTENT_FIELD, t) for t in sorted(terms)])
            return len(set(searcher.docs_for_query(query)) - set(searcher.docs_for_query(hidden_q)))
        extra: dict[str, Any] = {}
        query, _, fq, _ = matching.build(items, filters, reader, extra)
        if query is None:
            return 0
        if fq is not None:
            query = wq.And([query, fq])
        hidden = set(searcher.docs_for_query(wq.Or([wq.Term("state", s) for s in matching.HIDDEN_STATES])))
        if "rare" in extra:  # a pasted ticket: its matches among the candidates searched
            cands = [h.docnum for h in searcher.search(extra["rare"], limit=matching.TICKET_CANDIDATES,
                                                        mask=hidden or None)]
            return len(set(searcher.docs_for_query(query)) & set(cands))
        return len(set(searcher.docs_for_query(query)) - hidden)


def cpu_seconds() -> tuple[float, float]:
    """(CPU seconds the whole machine has been busy, CPU seconds of this process and its
    waited-for children), to tell how much other processes ran during a measurement."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        busy = (sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        busy = float("nan")
    own = sum(getattr(resource.getrusage(w), a) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for a in ("ru_utime", "ru_stime"))
    return busy, own


def timed_loop(engines: dict[str, Any], mix: list[tuple[str, str]], words: list[list[str] | None],
               warm: list[tuple[str, str]], warm_words: list[list[str] | None], warm_grep: int = 3) -> dict[str, Any]:
    """A warm-up over another mix of the same kinds (so no engine's caches hold the timed
    queries' own terms or answers), then the mix interleaved query by query."""
    for i, (kind, q) in enumerate(warm):
        for name, eng in engines.items():
            if name == "grep" and i >= warm_grep:
                continue
            eng.search(kind, q, warm_words[i])
    rows: list[dict[str, Any]] = []
    names = list(engines)
    for i, (kind, q) in enumerate(mix):
        row: dict[str, Any] = {"kind": kind, "q": q, "ms": {}, "count": {}}
        order = names[i % len(names):] + names[:i % len(names)]
        for name in order:
            eng = engines[name]
            t, c = time.perf_counter(), time.process_time()
            got = eng.search(kind, q, words[i])
            ms, cpu = (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000
            if got is None:  # the engine cannot run this query (grep: fuzzy)
                continue
            row["ms"][name] = ms
            row.setdefault("cpu", {})[name] = cpu  # this process's CPU (grep's children not counted)
            if name == "memtui":
                row["cpu_ms"] = cpu
                row["memtui_reported"] = got.total
            if name == "grep":
                row["count"][name] = len(got)
        rows.append(row)
    for i, row in enumerate(rows):  # counts, outside the timing
        for name, eng in engines.items():
            if name != "grep" and hasattr(eng, "count"):
                row["count"][name] = eng.count(row["kind"], row["q"], words[i])
    return {"rows": rows}


def summarise(rows: list[dict[str, Any]], engines: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in KINDS + ["ticket-all", "all"]:
        sel = [r for r in rows if r["kind"] == kind or (kind == "all" and r["kind"] != "ticket-all")]
        if not sel:
            continue
        k: dict[str, Any] = {"n": len(sel)}
        for e in engines:
            vals = [r["ms"][e] for r in sel if e in r["ms"]]
            counts = [r["count"][e] for r in sel if e in r["count"]]
            cpus = [r["cpu"][e] for r in sel if e in r.get("cpu", {})]
            k[e] = {"p50": statistics.median(vals) if vals else None, "p95": pct(vals, 0.95) if vals else None,
                    "cpu_p50": statistics.median(cpus) if cpus else None,
                    "count_p50": statistics.median(counts) if counts else None}
        cpu = [r["cpu_ms"] for r in sel if "cpu_ms" in r]
        k["memtui_cpu_p50"] = statistics.median(cpu) if cpu else None
        out[kind] = k
    return out


def print_latency(summary: dict[str, Any], engines: list[str]) -> None:
    others = [e for e in engines if e != "memtui"]
    head = f"{'query type':<11}{'n':>4}" + "".join(f"{e:>10}{'p95':>8}" for e in engines) + f"{'m-cpu':>8}"
    head += "".join(f"{'×' + e:>10}" for e in others) + "   matches: " + " / ".join(engines)
    print(head)
    for kind, k in summary.items():
        line = f"{kind:<11}{k['n']:>4}"
        for e in engines:
            p50, p95 = k[e]["p50"], k[e]["p95"]
            line += f"{p50:>10.1f}{p95:>8.1f}" if p50 is not None else f"{'—':>10}{'':>8}"
        line += f"{k['memtui_cpu_p50']:>8.1f}" if k.get("memtui_cpu_p50") is not None else f"{'':>8}"
        for e in others:
            m, a = (k.get("memtui") or {}).get("p50"), k[e]["p50"]
            line += f"{m / a:>10.1f}" if m is not None and a else f"{'—':>10}"
        line += "   " + " / ".join(f"{k[e]['count_p50']:.0f}" if k[e]["count_p50"] is not None else "—" for e in engines)
        print(line)
    # CPU of this process per query (in-process engines; grep's work is in its children)
    cpu_engines = [e for e in engines if e != "grep"]
    print(f"\nCPU ms per query (p50, this process): {'query type':<11}"
          + "".join(f"{e:>10}" for e in cpu_engines) + "".join(f"{'×' + e:>10}" for e in cpu_engines if e != "memtui"))
    for kind, k in summary.items():
        line = f"{'':<37}{kind:<11}"
        line += "".join(f"{k[e]['cpu_p50']:>10.2f}" if k[e].get("cpu_p50") is not None else f"{'—':>10}"
                        for e in cpu_engines)
        for e in cpu_engines:
            if e == "memtui":
                continue
            m, a = k["memtui"].get("cpu_p50") if "memtui" in k else None, k[e].get("cpu_p50")
            line += f"{m / a:>10.1f}" if m is not None and a else f"{'—':>10}"
        print(line)


def save_to_searchable(engines: dict[str, Any], ws: Workspace, docs_by_path: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Median ms of :data:`SAVES` saves per engine (different articles each time)."""
    arts = [p for p in sorted(ws.memory.rglob("a*.md"))][::997][:SAVES]
    out: dict[str, Any] = {}
    if "memtui" in engines:
        m = engines["memtui"]
        times, found = [], []
        for n, article in enumerate(arts):
            original = article.read_bytes()
            marker = f"wombatquartz{n}"
            t = time.perf_counter()
            article.write_text(original.decode("utf-8") + f"\n{marker}\n", "utf-8")
            m.idx.update(only=[ws.shown(article)])
            hits = m._search(m.idx, marker).hits
            times.append((time.perf_counter() - t) * 1000)
            found.append(bool(hits))
            article.write_bytes(original)
            m.idx.update(only=[ws.shown(article)])
        out["memtui"] = {"ms": statistics.median(times), "runs": times, "found": all(found)}
    for name in ("fts5", "tantivy"):
        if name not in engines:
            continue
        times, found = [], []
        for n, article in enumerate(arts):
            path = ws.shown(article)
            if name == "fts5":
                ms, ok = engines[name].save(path, f"wombatquartz{n}")
            else:
                doc = docs_by_path[path]
                ms, ok = engines[name].save(path, doc["body"], doc, f"wombatquartz{n}")
            times.append(ms)
            found.append(ok)
        out[name] = {"ms": statistics.median(times), "runs": times, "found": all(found)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--queries", type=int, default=243)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--reuse-index", action="store_true", help="keep every engine's index from an earlier run")
    ap.add_argument("--engines", default=",".join(ENGINES))
    args = ap.parse_args()
    root = args.workspace.resolve()
    engines_wanted = [e for e in args.engines.split(",") if e]
    ws = Workspace.open(root)
    work = root / ".bench"
    work.mkdir(exist_ok=True)
    articles = sum(1 for _ in ws.memory.rglob("a*.md"))
    report: dict[str, Any] = {"workspace": str(root), "articles": articles, "cores": os.cpu_count(),
                              "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "build": {}}
    print(f"workspace {root}: {articles:,} articles; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")

    # 1. builds
    if not args.reuse_index:
        for e in [e for e in engines_wanted if e != "grep"]:
            report["build"][e] = b = build(e, root, work)
            worker = f", largest worker peak RSS {b['rss_worker_mb']:.0f} MB" if b.get("rss_worker_mb") else ""
            parse_s = f" (of which reading and parsing with memtui's parser {b['parse_s']:.1f} s)" if "parse_s" in b else ""
            print(f"build {e:<8} {b['wall_s']:7.1f} s wall{parse_s}, {b['cpu_s']:.1f} s CPU "
                  f"({b['cpu_workers_s']:.1f} s in workers), {b['documents']:,} documents, "
                  f"{b['bytes'] / 1e6:.1f} MB on disk; parent peak RSS {b['rss_parent_mb']:.0f} MB{worker}; "
                  f"other processes used {b['foreign_cpu_s']:.0f} CPU-s meanwhile")
        b = report["build"]
        if "memtui" in b and "fts5" in b:
            print(f"memtui / fts5: build {b['memtui']['wall_s'] / b['fts5']['wall_s']:.1f}× wall, "
                  f"{b['memtui']['cpu_s'] / b['fts5']['cpu_s']:.1f}× CPU of all processes "
                  f"(memtui's workers included), index {b['memtui']['bytes'] / b['fts5']['bytes']:.1f}× size"
                  + (f"; memtui / tantivy: build {b['memtui']['wall_s'] / b['tantivy']['wall_s']:.1f}× wall, "
                     f"{b['memtui']['cpu_s'] / b['tantivy']['cpu_s']:.1f}× CPU, "
                     f"index {b['memtui']['bytes'] / b['tantivy']['bytes']:.1f}×" if "tantivy" in b else ""))

    # 4a. start (before the loop: the page cache holds what the builds left); an installed
    # memtui has its bytecode compiled (pip does it): with PYTHONDONTWRITEBYTECODE set, a
    # checkout would compile every module in the probe's process and measure that
    if "memtui" in engines_wanted:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "memtui")], check=True,
                       capture_output=True)
        report["start"] = start = probe(root, catchup=False)
        report["catchup"] = catch = probe(root, catchup=True)
        print(f"first result after start (new process): {start['first_result_ms']:.0f} ms, peak RSS {start['rss_mb']:.0f} MB; "
              f"no-change catch-up at start: {catch['catchup_ms']:.0f} ms (whole process to then {catch['process_ms']:.0f} ms), "
              f"again in the same process {catch['warm_catchup_ms']:.0f} ms")

    # 2. latency
    engines: dict[str, Any] = {}
    for e in engines_wanted:
        if e == "memtui":
            engines[e] = Memtui(ws)
        elif e == "fts5":
            from anchors import Fts5

            engines[e] = Fts5(work / "fts5.db")
        elif e == "tantivy":
            from anchors import Tantivy

            engines[e] = Tantivy(work / "tantivy")
        elif e == "grep":
            from anchors import Grep

            engines[e] = Grep(ws.memory)
    from anchors import Fts5

    chooser = engines["fts5"] if "fts5" in engines else Fts5(work / "fts5.db")
    chooser.load_vocabulary()
    mix = queries(random.Random(args.seed), args.queries, ws)
    words: list[list[str] | None] = [chooser.rarest(q) if kind == "ticket" else None for kind, q in mix]
    warm = queries(random.Random(args.seed + 1), args.queries, ws)
    warm_words: list[list[str] | None] = [chooser.rarest(q) if kind == "ticket" else None for kind, q in warm]
    # the second ticket row: every word of the ticket for the anchors (memtui runs its plan again)
    extra = [(k, q) for k, q in mix if k == "ticket"]
    all_mix = mix + [("ticket-all", q) for _, q in extra]
    all_words = words + [None] * len(extra)

    class _Alias:  # ticket-all runs as ticket for every engine, with all words
        def __init__(self, eng: Any) -> None:
            self.eng = eng

        def search(self, kind: str, q: str, w: list[str] | None = None) -> Any:
            return self.eng.search("ticket" if kind == "ticket-all" else kind, q, w)

        def count(self, kind: str, q: str, w: list[str] | None = None) -> int:
            return self.eng.count("ticket" if kind == "ticket-all" else kind, q, w)

    busy0, own0, wall0 = *cpu_seconds(), time.perf_counter()
    loop = timed_loop({n: _Alias(e) for n, e in engines.items()}, all_mix, all_words, warm, warm_words)
    busy1, own1, wall1 = *cpu_seconds(), time.perf_counter()
    report["foreign_cpu"] = foreign = {"seconds": max(0.0, (busy1 - busy0) - (own1 - own0)), "wall": wall1 - wall0}
    report["queries"] = loop["rows"]
    report["latency"] = summary = summarise(loop["rows"], list(engines))
    print(f"\nlatency in ms, 10 hits with snippets, {len(mix)} queries + {len(extra)} ticket-all, interleaved after a "
          f"warm-up (p50 and p95; m-cpu: memtui's CPU ms p50; ×E: memtui p50 / E p50; matches: median count per "
          f"query, grep in files); load average {os.getloadavg()[0]:.1f}; other processes used "
          f"{foreign['seconds']:.0f} CPU-s in these {foreign['wall']:.0f} s")
    print_latency(summary, list(engines))

    # 3. save → searchable
    from anchors import documents

    docs_by_path = {d["path"]: d for d in documents(ws)} if "tantivy" in engines else {}
    report["save"] = saves = save_to_searchable(engines, ws, docs_by_path)
    print("\nsave → searchable (median of %d saves): " % SAVES
          + ", ".join(f"{e} {s['ms']:.0f} ms (found: {s['found']})" for e, s in saves.items()))
    if "memtui" in engines:
        m = engines["memtui"]
        t = time.perf_counter()
        m.idx.update()
        report["catchup"]["after_saves_ms"] = (time.perf_counter() - t) * 1000
        print(f"no-change catch-up in this process after the saves: {report['catchup']['after_saves_ms']:.0f} ms")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"search-{articles}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False), "utf-8")
    print(f"\nfigures written to {path}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child-build":
        _child_build(*sys.argv[2:5])
    else:
        main()
