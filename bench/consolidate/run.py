"""Time and peak memory of the consolidation pass.

Usage: python bench/consolidate/run.py WORKSPACE [--repeat 3]

Runs ``memtui.core.consolidate.scan`` over WORKSPACE in a fresh process per run (so the peak
resident memory, ``ru_maxrss``, is the pass's own, interpreter and imports included), and
prints the wall time of each run, its phases and the candidates found. Build a workspace with
``python bench/make_workspace.py 10000 /tmp/ws10k-cons``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
from memtui.core.workspace import Workspace
from memtui.core import consolidate
phases = {}
started = time.perf_counter()
def progress(phase, done, total):
    phases.setdefault(phase, [time.perf_counter() - started, 0])[1] = time.perf_counter() - started
report = consolidate.scan(Workspace.open(sys.argv[1]), progress=progress)
print(json.dumps({"seconds": report.seconds, "articles": report.articles, "nodes": report.nodes,
                  "counts": report.counts(), "phases": phases,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for i in range(args.repeat):
        out = subprocess.run([sys.executable, "-c", CHILD, args.workspace], capture_output=True, text=True,
                             check=True).stdout
        r = json.loads(out)
        phases = ", ".join(f"{k} until {v[1]:.1f} s" for k, v in r["phases"].items())
        print(f"run {i + 1}: {r['seconds']:.2f} s, peak RSS {r['peak_rss_mb']:.0f} MB, {r['articles']} articles "
              f"in {r['nodes']} nodes; {phases}; candidates {r['counts']}")


if __name__ == "__main__":
    main()
