"""Graph speed at scale (a graph of tens of thousands of entities): load, full audit, one edit saved, peak RSS.

Usage: python bench/bench_graph.py [ENTITIES] [OBS_PER_ENTITY] [RELATIONS_PER_ENTITY]
Default 50,000 entities x 5 observations, 2 relations each (= 250,000 observations,
100,000 relations), generated into a temporary folder; a few misspelt names and type
variants are mixed in so the audit has work to do. Prints figures; it is not a test.
Targets: load < 2 s, full audit < 3 s (fuzzy included), one edit saved < 0.5 s,
peak RSS < 500 MB.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memtui.core import graph as g  # noqa: E402
from memtui.core.graph.audit import audit  # noqa: E402
from memtui.core.session import Session  # noqa: E402

WORDS = ["service", "database", "cluster", "ticket", "customer", "invoice", "report", "pipeline",
         "gateway", "session", "billing", "storage", "network", "monitor", "account", "release"]
TYPES = ["Service", "service", "Person", "people", "Document", "Job", "Dataset", "Decision"]


def make(path: Path, n: int, obs: int, rels: int) -> None:
    dump = lambda o: json.dumps(o, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            name = f"{WORDS[i % 16]} {WORDS[(i // 16) % 16]} {WORDS[(i // 256) % 16]} {i}"
            if i % 5000 == 17:
                name = f"{WORDS[i % 16]} {WORDS[(i // 16) % 16]}x {WORDS[(i // 256) % 16]} {i - 1}"
            f.write(dump({"type": "entity", "name": name, "entityType": TYPES[i % len(TYPES)],
                          "observations": [f"fact {k} about entity {i}: ümlaut" for k in range(obs)]}) + "\n")
        for i in range(n):
            for k in range(1, rels + 1):
                a = f"{WORDS[i % 16]} {WORDS[(i // 16) % 16]} {WORDS[(i // 256) % 16]} {i}"
                j = (i * 7 + k * 131) % n
                b = f"{WORDS[j % 16]} {WORDS[(j // 16) % 16]} {WORDS[(j // 256) % 16]} {j}"
                f.write(dump({"type": "relation", "from": a, "to": b, "relationType": "related_to"}) + "\n")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    obs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rels = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.jsonl"
        make(path, n, obs, rels)
        size = os.path.getsize(path)
        t = time.perf_counter()
        graph = g.load(path)
        _ = graph.entities
        load_s = time.perf_counter() - t
        t = time.perf_counter()
        findings = audit(graph)
        audit_s = time.perf_counter() - t
        name = graph.entities[n // 2].name
        t = time.perf_counter()
        session = Session.open(tmp, purpose="bench")
        saved = g.commit(path, graph, g.AddObservation(name, "one more fact"), session=session)
        edit_s = time.perf_counter() - t
        t = time.perf_counter()
        g.commit(path, saved.graph, g.RenameEntity(name, name + " (renamed)"), session=session)
        session.close()
        rename_s = time.perf_counter() - t
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"file: {size / 1e6:.1f} MB, {len(graph.entities):,} entities, "
              f"{sum(len(e.observations) for e in graph.entities):,} observations, {len(graph.relations):,} relations")
        print(f"load:               {load_s:6.2f} s   (target < 2 s)")
        print(f"full audit:         {audit_s:6.2f} s   (target < 3 s; {len(findings):,} findings)")
        print(f"one edit saved:     {edit_s:6.2f} s   (target < 0.5 s; add-observation)")
        print(f"rename saved:       {rename_s:6.2f} s   (relations follow)")
        print(f"peak RSS:           {rss:6.0f} MB  (target < 500 MB)")


if __name__ == "__main__":
    main()
