"""Search benchmark (issue 8): build time, index size, query latency per type, save-to-searchable.

Usage: python bench/search.py N [--workdir DIR] [--queries 240] [--seed 7]

Generates an N-article workspace with ``bench/make_workspace.py`` (about 10 % Bulgarian),
builds the index from scratch, runs a fixed mix of queries (terms, AND, OR, phrases,
prefixes, fuzzy, filters, a pasted ticket; the same words every run for a given seed) and
prints, per query type, p50 and p95 latency in ms; then the time from saving one article to
it being searchable, the first result after a cold start, and peak RSS. The grep baseline
(substring counts over the index one-liners) runs on the same queries for comparison.
Prints figures; it is not a test.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from memtui.core.search.index import SearchIndex  # noqa: E402
from memtui.core.search.query import search  # noqa: E402
from memtui.core.workspace import Workspace  # noqa: E402

sys.path.insert(0, str(HERE))
from make_workspace import BG, WORDS  # noqa: E402


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def queries(rng: random.Random, n: int) -> list[tuple[str, str]]:
    kinds = ["term", "and", "or", "phrase", "prefix", "fuzzy", "filter", "bulgarian", "ticket"]
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        w = rng.sample(WORDS, 3)
        if kind == "term":
            q = w[0]
        elif kind == "and":
            q = f"{w[0]} AND {w[1]}"
        elif kind == "or":
            q = f"{w[0]} {w[1]} {w[2]}"
        elif kind == "phrase":
            q = f'"{w[0]} {w[1]}"'
        elif kind == "prefix":
            q = w[0][:3] + "*"
        elif kind == "fuzzy":
            word = w[0]
            j = rng.randrange(1, len(word))
            q = word[:j] + word[j + 1:] + "~" if len(word) > 4 else word + "~"
        elif kind == "filter":
            q = f"{w[0]} tag:{w[1]}"
        elif kind == "bulgarian":
            q = " ".join(rng.sample(BG, 2))
        else:
            q = " ".join(rng.choice(WORDS + BG) for _ in range(25))
        out.append((kind, q))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("--workdir")
    ap.add_argument("--queries", type=int, default=243)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="memtui-bench-"))
    root = work / f"ws{args.n}"
    if root.exists():
        shutil.rmtree(root)
    subprocess.run([sys.executable, str(HERE / "make_workspace.py"), str(args.n), str(root)],
                   check=True, stdout=subprocess.DEVNULL)
    ws = Workspace.open(root)
    idx = SearchIndex(ws)
    t0 = time.perf_counter()
    rep = idx.update(rebuild=True)
    build = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in idx.dir.iterdir() if p.is_file())
    print(f"articles {args.n}: build {build:.1f} s ({rep.documents} documents, "
          f"{rep.documents / build:.0f} docs/s), index {size / 1e6:.1f} MB")

    # first result after start: a fresh process opens the index and answers a query
    code = ("import time,sys; t=time.perf_counter(); sys.path.insert(0, %r);"
            "from memtui.core.workspace import Workspace; from memtui.core.search.index import SearchIndex;"
            "from memtui.core.search.query import search; ws=Workspace.open(%r); i=SearchIndex(ws);"
            "r=search(i, %r); print((time.perf_counter()-t)*1000)") % (str(HERE.parent), str(root), WORDS[3])
    cold = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    print(f"first result after start (new process, index built): {cold:.0f} ms")

    rng = random.Random(args.seed)
    mix = queries(rng, args.queries)
    times: dict[str, list[float]] = {}
    for kind, q in mix:
        t = time.perf_counter()
        search(idx, q, limit=10)
        times.setdefault(kind, []).append((time.perf_counter() - t) * 1000)
    print(f"{'query type':<12}{'n':>5}{'p50 ms':>10}{'p95 ms':>10}")
    for kind, vals in times.items():
        print(f"{kind:<12}{len(vals):>5}{statistics.median(vals):>10.1f}{pct(vals, 0.95):>10.1f}")

    # grep baseline on the same queries: substring counts over the one-liners
    lines = []
    for agents in ws.memory.rglob("AGENTS.md"):
        lines.extend(ln.lower() for ln in agents.read_text("utf-8").splitlines() if ln.startswith("- ["))
    base: list[float] = []
    for _, q in mix:
        t = time.perf_counter()
        wanted = {w.lower() for w in q.replace('"', " ").split() if len(w) >= 3}
        scored = sorted(((sum(w in ln for w in wanted), i) for i, ln in enumerate(lines)), reverse=True)[:5]
        del scored
        base.append((time.perf_counter() - t) * 1000)
    print(f"grep baseline over {len(lines)} one-liners: p50 {statistics.median(base):.1f} ms, "
          f"p95 {pct(base, 0.95):.1f} ms")

    # save one article → searchable
    article = next(p for p in sorted(ws.memory.rglob("*.md")) if p.name != "AGENTS.md")
    t = time.perf_counter()
    article.write_text(article.read_text("utf-8") + "\nwombatquartz\n", "utf-8")
    idx.update(only=[ws.shown(article)])
    hits = search(idx, "wombatquartz").hits
    print(f"save to searchable: {(time.perf_counter() - t) * 1000:.0f} ms (found: {bool(hits)})")
    t = time.perf_counter()
    idx.update()
    print(f"no-change catch-up scan: {(time.perf_counter() - t) * 1000:.0f} ms")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {rss:.0f} MB")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
