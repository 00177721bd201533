"""datasketch MinHash/LSH against rapidfuzz on normalised text, for duplicate articles.

Usage: python bench/consolidate/compare.py WORKSPACE [--sample 1000]

Both run on the same normalised bodies (content words, :mod:`memtui.core.consolidate.duplicates`):
datasketch signs every article and queries an LSH index (the pass's way); rapidfuzz scores all
pairs (``process.cdist`` with ``token_set_ratio``, all cores) on a sample of articles, and the
time is extrapolated to the whole workspace by the number of pairs (quadratic).
"""

from __future__ import annotations

import argparse
import random
import time

from rapidfuzz import fuzz, process

from memtui.core.consolidate import duplicates as dup
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace")
    parser.add_argument("--sample", type=int, default=1000)
    args = parser.parse_args()
    tree = MemoryTree(Workspace.open(args.workspace))
    docs, texts = [], []
    for node in tree.walk_nodes():
        for path in tree.article_files(node):
            a = tree.read_article(path)
            if a.ok:
                docs.append(dup.doc_of(path, a.body, [(a.title, "title")]))
                texts.append(" ".join(sorted(docs[-1].words)))
    n = len(docs)
    started = time.perf_counter()
    pairs = dup.find(docs)
    lsh = time.perf_counter() - started
    print(f"datasketch MinHash/LSH: {n} articles in {lsh:.1f} s, {len(pairs)} pairs flagged")
    sample = random.Random(1).sample(texts, min(args.sample, n))
    started = time.perf_counter()
    process.cdist(sample, sample, scorer=fuzz.token_set_ratio, score_cutoff=80, workers=-1)
    took = time.perf_counter() - started
    factor = (n * (n - 1)) / (len(sample) * (len(sample) - 1))
    print(f"rapidfuzz cdist token_set_ratio: {len(sample)} articles in {took:.1f} s; "
          f"all {n} would take about {took * factor:.0f} s ({factor:.0f}x the pairs)")


if __name__ == "__main__":
    main()
