"""What an agent's CLI call costs: fresh processes of memtui's writing commands and of search.

Usage: python bench/cli_start.py [--workspace DIR] [--runs 9] [--query parcel ...]

Every figure is one fresh process (imports and start-up count), run interleaved with its
anchor, command by command in a rotating order, so a slow moment of the shared machine hits
all of them. Each row gives the median wall time and the median CPU time (user + system of
the process, from ``wait4``), which a loaded machine disturbs far less than wall time.

1. On a copy of ``sample_workspace``: ``memtui propose``, ``memtui use``, ``memtui notes set``
   and ``memtui graph add-observation``, each writing something new each run (target:
   ≤ 0.25 s); the anchor is the interpreter itself (``python -c pass``).
2. With ``--workspace DIR`` (made by ``bench/make_workspace.py N DIR``): the first result of
   ``memtui search QUERY`` in a fresh process (the index brought up to date first, as the
   command does), beside SQLite FTS5 in a fresh process answering the same words with 10 hits
   ranked by bm25 and their snippets (target: ≤ 2× FTS5). Both indexes are built before the
   timing when missing (memtui's in ``DIR/.memtui``, FTS5's in ``DIR/.bench/fts5.db`` as
   ``bench/search.py`` makes it).

Not a test: prints the load average with every table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

PY = sys.executable

#: The anchor of the search row: a fresh process that opens the FTS5 database and prints the
#: top 10 by bm25 with their snippets (the columns and weights of bench/anchors.py, filled in
#: by :func:`fts5_program`, so the anchor's process imports only sqlite3).
FTS5_FRESH = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
expr = "{{{columns}}} : (" + " AND ".join('"' + w + '"' for w in sys.argv[2].split()) + ")"
for path, snip in con.execute(
        "SELECT path, snippet(docs, -1, '[', ']', '…', {tokens}) FROM docs WHERE docs MATCH ? "
        "ORDER BY bm25(docs, {weights}) LIMIT {limit}", (expr,)):
    print(path, snip)
"""


def fts5_program() -> str:
    from anchors import COLUMNS, LIMIT, SNIPPET_TOKENS

    weights = ", ".join(["0", "0"] + [str(w) for w in COLUMNS.values()] + ["0"])
    return FTS5_FRESH.format(columns=" ".join(COLUMNS), tokens=SNIPPET_TOKENS, weights=weights, limit=LIMIT)


def run_cpu(argv: list[str], stdin: str | None = None, cwd: Path = ROOT) -> tuple[float, float, int, str]:
    """Run ``argv`` in a fresh process: (wall s, user+sys CPU s of that process, exit code, stderr)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, proc.stderr


def table(rows: dict[str, list[tuple[float, float]]], anchor: str, target: float | None, ratio: bool) -> None:
    a_wall = statistics.median(w for w, _ in rows[anchor])
    a_cpu = statistics.median(c for _, c in rows[anchor])
    print(f"{'row':<34} {'wall p50':>9} {'wall max':>9} {'CPU p50':>8}" + ("  ×anchor wall  ×anchor CPU" if ratio else ""))
    for name, got in rows.items():
        wall = statistics.median(w for w, _ in got)
        cpu = statistics.median(c for _, c in got)
        extra = f"  {wall / a_wall:12.2f}× {cpu / a_cpu:11.2f}×" if ratio and name != anchor else ""
        mark = "" if target is None or name == anchor else ("  ok" if wall <= target else f"  over {target} s")
        print(f"{name:<34} {wall * 1000:7.0f}ms {max(w for w, _ in got) * 1000:7.0f}ms {cpu * 1000:6.0f}ms{extra}{mark}")


def writing_commands(runs: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="memtui-cli-start-"))
    try:
        ws = tmp / "ws"
        shutil.copytree(ROOT / "sample_workspace", ws)
        article = tmp / "article.md"
        article.write_text("---\ntitle: Bench article\nsummary: written by the start-up bench\n---\n"
                           "# Bench article\n\nA courier phone loses its fix in tunnels.\n", "utf-8")
        memtui = [PY, "-m", "memtui"]
        notes = (ws / "memory" / "MEMORY_CUSTOM.md").read_text("utf-8")

        def cmd(name: str, i: int) -> tuple[list[str], str | None]:
            if name == "propose":
                return [*memtui, "propose", "-w", str(ws), "--node", "support/courier-app", "--article",
                        f"bench-{i}.md", "--from", str(article), "--case", f"CASE-{i}", "--source-request",
                        f"SR-{i}", "--profile", "support.investigator"], None
            if name == "use":
                return [*memtui, "use", "-w", str(ws), "--version", "support/courier-app/gps-drift.md@1",
                        "--case", f"CASE-U-{i}", "--source-request", f"SR-U-{i}", "--verdict", "pass",
                        "--check", f"checked in run {i}"], None
            if name == "notes set":
                return [*memtui, "notes", "set", "-w", str(ws), "--from", "-"], notes + f"- bench line {i}\n"
            if name == "graph add-observation":
                return [*memtui, "graph", "add-observation", "-w", str(ws), "RouteCore", f"bench observation {i}"], None
            return [PY, "-c", "pass"], None

        names = ["python -c pass", "propose", "use", "notes set", "graph add-observation"]
        rows: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
        for i in range(runs + 1):
            order = names[i % len(names):] + names[:i % len(names)]
            for name in order:
                argv, stdin = cmd(name, i)
                wall, cpu, code, err = run_cpu(argv, stdin)
                if code != 0:
                    raise SystemExit(f"{name} failed (exit {code}): {err.strip()[:400]}")
                if i:  # the first round warms the page cache
                    rows[name].append((wall, cpu))
        print(f"\nwriting commands on the sample workspace, fresh process each, {runs} runs interleaved; "
              f"load average {os.getloadavg()[0]:.1f} (target ≤ 0.25 s wall)")
        table(rows, "python -c pass", 0.25, ratio=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def search_first_result(root: Path, runs: int, queries: list[str]) -> None:
    from anchors import Fts5

    from memtui.core.workspace import Workspace

    db = root / ".bench" / "fts5.db"
    if not db.exists():
        db.parent.mkdir(exist_ok=True)
        print("building the FTS5 anchor …", flush=True)
        Fts5.build(Workspace.open(root), db)
    built = subprocess.run([PY, "-m", "memtui", "index", "-w", str(root)], cwd=ROOT, capture_output=True, text=True)
    if built.returncode not in (0, 1):  # 1: built, with findings about some files
        raise SystemExit(f"memtui index failed: {built.stderr.strip()[:400]}")
    program = fts5_program()
    rows: dict[str, list[tuple[float, float]]] = {}
    names = [("fts5", q) for q in queries] + [("memtui", q) for q in queries]
    for i in range(runs + 1):
        order = names[i % len(names):] + names[:i % len(names)]
        for engine, q in order:
            if engine == "fts5":
                argv = [PY, "-c", program, str(db), q]
            else:
                argv = [PY, "-m", "memtui", "search", "-w", str(root), *q.split(" ")]
                if len(q.split()) > 1:
                    argv = [PY, "-m", "memtui", "search", "-w", str(root), " AND ".join(q.split())]
            wall, cpu, code, err = run_cpu(argv, cwd=HERE)
            if code not in (0, 1):
                raise SystemExit(f"{engine} {q!r} failed (exit {code}): {err.strip()[:400]}")
            if i:
                rows.setdefault(f"{engine} {q}", []).append((wall, cpu))
    articles = sum(1 for _ in (root / "memory").rglob("a*.md"))
    print(f"\nfirst result of a fresh process, {articles:,} articles, 10 hits with snippets, {runs} runs "
          f"interleaved; load average {os.getloadavg()[0]:.1f} (target: memtui ≤ 2× FTS5)")
    for q in queries:
        table({f"fts5 {q}": rows[f"fts5 {q}"], f"memtui search {q}": rows[f"memtui {q}"]}, f"fts5 {q}", None, ratio=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, help="a workspace from bench/make_workspace.py for the search row")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--query", action="append", help="a search (words; several words are ANDed on both sides)")
    ap.add_argument("--skip-writes", action="store_true", help="only the search row")
    args = ap.parse_args()
    # an installed memtui has its bytecode compiled (pip does it); a checkout run with
    # PYTHONDONTWRITEBYTECODE would compile every module in every process and measure that
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "memtui")], check=True, capture_output=True)
    if not args.skip_writes:
        writing_commands(args.runs)
    if args.workspace:
        search_first_result(args.workspace.resolve(), args.runs, args.query or ["parcel", "depot route"])


if __name__ == "__main__":
    main()
