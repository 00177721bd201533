"""Measure what the dependency-scoped evaluation adds to an approve (seed 000 §7.4b).

Usage: python bench/eval_gate.py triage|big|all [--runs 3] [--anchor DIR]
       python bench/eval_gate.py big [--articles 10000] [--cases 200] [--keep DIR]

Each run approves the same proposal in fresh copies of one prepared workspace, each as a
fresh ``memtui proposals approve`` process, interleaved:

- ``without``: the domain's eval set removed (nothing to measure);
- ``anchor`` (with ``--anchor DIR``, a checkout of another memtui, e.g. ``git worktree add
  DIR REF``): that code's approve with the eval set, the figures *before* a change of the code;
- ``cold``: this code's approve with the eval set, nothing measured before it;
- ``warm``: the same after ``proposals show ID --evaluate`` (not timed) measured the same
  change on the same memory: the figures before the change are recalled, only those after
  it are measured (the flow of a reviewer who reads the evaluation, then approves).

The difference with ``without`` is the evaluation's cost. Wall seconds and the child's CPU
seconds (user+sys, ``RUSAGE_CHILDREN``) are printed per run with their medians, beside the
load average (the machine is shared: CPU time is the figure to compare).

- ``triage``: the triage memory of ../shared (about 100 entries) with its 40 dev cases as the
  ``support/experience`` eval set; the proposal removes exp-020's key passage (a regression,
  accepted with a reason so the approve lands). Target: at most 2 s more.
- ``big``: ``bench/make_workspace.py``'s workspace of ``--articles`` articles, with
  ``--cases`` cases (each an article of the ``support`` branch, given an ``id``, its ticket the
  article's one-line summary) as the ``support`` eval set, and a new article proposed into a
  ``support`` node. The live search index is built first (not counted). Target: at most 10 s
  more, with progress shown (the stages the approve printed are listed).
- ``all``: both, triage first.

Last measured (CPU seconds the evaluation adds, median of 3; anchor: the code before the
array ranking of an OR of words; the machine shared by others):

- ``big`` (10,000 articles, 200 cases): anchor 20.8, cold 8.3, warm 4.3 (load 2.1–7.8);
- ``triage`` (40 cases): anchor 1.11, cold 0.68, warm 0.46 (load 7.4–8.1).

Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("MEMTUI_SHARED", REPO.parent / "shared"))
CURATOR = "support.curator"


def memtui(ws: Path, *args: str, check: bool = True, code: Path | None = None) -> tuple[float, float, str, str, int]:
    """Run ``memtui ARGS -w WS`` in a fresh process (``code``: the memtui checkout imported
    instead of this one): (wall s, CPU s, stdout, stderr, code)."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code) + os.pathsep + env.get("PYTHONPATH", "")
    _cpu()  # what earlier children used is not this run's
    started = time.perf_counter()
    # run from the workspace: ``-m`` puts the working folder first on the path, and this
    # checkout's folder there would shadow the anchor
    proc = subprocess.Popen([sys.executable, "-m", "memtui", *args, "-w", str(ws)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env, cwd=ws)
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    cpu = _cpu()
    if check and proc.returncode != 0:
        raise SystemExit(f"memtui {' '.join(args)} failed ({proc.returncode}): {err.strip()}")
    return wall, cpu, out, err, proc.returncode


_CHILD = {"cpu": 0.0}


def _cpu() -> float:
    """CPU seconds (user+sys) the finished children used since the last call."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = ru.ru_utime + ru.ru_stime
    spent, _CHILD["cpu"] = total - _CHILD["cpu"], total
    return spent


def prepare_triage(base: Path) -> tuple[Path, str, str]:
    """The triage workspace, adopted and indexed, with the trimmed exp-020 proposed."""
    ws = base / "ws"
    shutil.copytree(SHARED / "triage" / "memory", ws / "memory")
    (ws / "memtui.toml").write_text('[user]\nprofile = "{CURATOR}"\n\n[owners]\n"support" = "{CURATOR}"\n'
                                    '"connectors" = "connector.steward"\n')
    cases = ws / "memory" / "support" / "experience" / "evals" / "cases.jsonl"
    cases.parent.mkdir()
    shutil.copy(SHARED / "triage" / "dev-cases.jsonl", cases)
    memtui(ws, "adopt", "--yes")
    memtui(ws, "index")
    article = next((ws / "memory" / "support" / "experience").glob("exp-020-*.md"))
    text = article.read_text()
    head, body = text.split("\n---\n", 1)
    head = re.sub(r"symptom:.*\n", "", head)
    head = re.sub(r"aliases:\n(  - .*\n)+", "aliases: []\n", head + "\n").rstrip("\n")
    trimmed = base / "trimmed.md"
    trimmed.write_text(head + "\n---\n\n" + body.strip().split("\n\n")[-1] + "\n")
    _, _, out, _, _ = memtui(ws, "propose", "--node", "support/experience", "--article", article.name, "--from",
                             str(trimmed), "--case", "C-1", "--source-request", "SR-1", "--profile", "support.summarizer")
    return ws, out.split()[-1], "support/experience/evals"


def prepare_big(base: Path, articles: int, n_cases: int) -> tuple[Path, str, str]:
    """make_workspace's tree with ``n_cases`` cases as the ``support`` eval set, indexed, and a
    new article proposed into a ``support`` node."""
    sys.path.insert(0, str(HERE))
    import make_workspace

    ws = base / "ws"
    started = time.perf_counter()
    make_workspace.build(articles, ws)
    rng = random.Random(25)
    support = sorted((ws / "memory" / "support").rglob("a*.md"))
    lines = []
    for n, path in enumerate(rng.sample(support, min(n_cases, len(support)))):
        text = path.read_text()
        summary = re.search(r'summary: "(.*)"', text)
        path.write_text(text.replace("---\n", f"---\nid: b-{n:04d}\n", 1))
        lines.append(json.dumps({"id": f"k{n:04d}", "ticket": summary.group(1) if summary else path.stem,
                                 "language": "en", "relevant": [f"b-{n:04d}"], "near_miss": []}))
    (ws / "memory" / "support" / "evals").mkdir()
    (ws / "memory" / "support" / "evals" / "cases.jsonl").write_text("\n".join(lines) + "\n")
    (ws / "memtui.toml").write_text('[user]\nprofile = "bench.support"\n')
    print(f"  wrote {articles} articles and {len(lines)} cases in {time.perf_counter() - started:.1f} s; indexing …",
          flush=True)
    wall, _, _, _, _ = memtui(ws, "index", check=False)  # exit 1: the generator's deliberate bad files
    print(f"  live index built in {wall:.1f} s", flush=True)
    node = support[0].parent.relative_to(ws / "memory").as_posix()
    new = base / "new.md"
    new.write_text("---\nid: b-new\ntitle: Depot scan gap after a route change\nsummary: a parcel shows no "
                   "scan after its route moved to another depot\n---\n\nThe depot scan stops when the route "
                   "changes; the parcel is found at the new depot.\n")
    _, _, out, _, _ = memtui(ws, "propose", "--node", node, "--article", "a-new.md", "--from", str(new), "--case",
                             "C-1", "--source-request", "SR-1", "--profile", "bench.support")
    return ws, out.split()[-1], "support/evals"


KINDS = ("without", "anchor", "cold", "warm")


def run(base: Path, ws: Path, proposal: str, evals: str, runs: int, anchor: Path | None) -> dict:
    kinds = [k for k in KINDS if k != "anchor" or anchor is not None]
    figures: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
    stages: list[str] = []
    for i in range(runs):
        for kind in kinds:
            copy = base / f"run-{i}-{kind}"
            shutil.copytree(ws, copy, symlinks=True)
            if kind == "without":
                shutil.rmtree(copy / "memory" / evals)
            if kind == "warm":
                memtui(copy, "proposals", "show", proposal, "--evaluate")
            load = os.getloadavg()[0]
            wall, cpu, out, err, _ = memtui(copy, "proposals", "approve", "--yes", "--reviewed", proposal,
                                            "--accept-regression", "--reason", "benchmark",
                                            code=anchor if kind == "anchor" else None)
            figures[kind].append((wall, cpu))
            if kind == "cold" and not stages:
                stages = [line for line in err.splitlines() if line.strip()]
            print(f"  run {i + 1} {kind:<8} wall {wall:6.2f} s  cpu {cpu:6.2f} s  (load {load:.2f})", flush=True)
            shutil.rmtree(copy)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in figures.items()}
    names = {"without": "without eval set", "anchor": "with, anchor code", "cold": "with, cold", "warm": "with, warm"}
    for k in kinds:
        print(f"  median {names[k] + ':':<19} wall {med[k][0]:6.2f} s, cpu {med[k][1]:6.2f} s")
    for k in kinds[1:]:
        print(f"  the evaluation adds ({k:<6}): wall {med[k][0] - med['without'][0]:6.2f} s, "
              f"cpu {med[k][1] - med['without'][1]:6.2f} s")
    print(f"  (load now {os.getloadavg()[0]:.2f})")
    print("  progress shown: " + " | ".join(stages))
    return {"median": med, "runs": figures, "progress": stages}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=("triage", "big", "all"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--articles", type=int, default=10_000)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--anchor", type=Path, help="a memtui checkout to compare with (its approve is run too)")
    parser.add_argument("--keep", type=Path, help="work in this folder (kept) instead of a temporary one")
    args = parser.parse_args()
    root = (args.keep or Path(tempfile.mkdtemp(prefix="eval-gate-"))).resolve()  # the runs start in the workspace
    anchor = args.anchor.resolve() if args.anchor else None
    if anchor is not None and not (anchor / "memtui" / "__main__.py").is_file():
        raise SystemExit(f"--anchor {anchor}: not a memtui checkout (no memtui/__main__.py)")
    try:
        for scenario in (("triage", "big") if args.scenario == "all" else (args.scenario,)):
            base = root / scenario
            base.mkdir(parents=True, exist_ok=True)
            prepared = base / "prepared.json"
            if scenario == "triage":
                print(f"triage memory, 40 cases (load {os.getloadavg()[0]:.2f})", flush=True)
            else:
                print(f"{args.articles} articles, {args.cases} cases (load {os.getloadavg()[0]:.2f})", flush=True)
            if prepared.is_file() and (base / "ws").is_dir():  # --keep: a workspace prepared by an earlier run
                ws, (proposal, evals) = base / "ws", json.loads(prepared.read_text())
                print(f"  reusing the workspace prepared in {base}", flush=True)
            else:
                ws, proposal, evals = (prepare_triage(base) if scenario == "triage"
                                       else prepare_big(base, args.articles, args.cases))
                prepared.write_text(json.dumps([proposal, evals]))
            run(base, ws, proposal, evals, args.runs, anchor)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
