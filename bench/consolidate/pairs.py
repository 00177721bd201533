"""The duplicate detector's precision on hand-labelled pairs.

Usage:
  python bench/consolidate/pairs.py candidates WORKSPACE [--top N]   # pairs to label, JSON lines
  python bench/consolidate/pairs.py seed /tmp/cons-seeded                 # the seeded workspace
  python bench/consolidate/pairs.py score bench/consolidate/labelled.jsonl

``candidates`` lists the WORKSPACE's article pairs with the highest exact body similarity
(content-word Jaccard, :mod:`memtui.core.consolidate.duplicates`) and every pair sharing a
name, whether or not the detector would flag them, so the labelled set holds pairs on both
sides of its threshold. A person then reads both articles and adds ``"label": "duplicate"``
or ``"distinct"``. ``score`` recomputes each pair's signals from the workspaces named in the
file and reports the detector's precision (flagged pairs that are duplicates) and recall
(duplicates that are flagged) on the labelled set.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memtui.core.consolidate import duplicates as dup
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace


def _docs(root: str) -> dict[str, dup.Doc]:
    ws = Workspace.open(root)
    tree = MemoryTree(ws)
    out = {}
    for node in tree.walk_nodes():
        for path in tree.article_files(node):
            a = tree.read_article(path)
            if not a.ok:
                continue
            aliases = a.meta.get("aliases") if isinstance(a.meta, dict) else None
            names = [(a.title, "title")] + [(x, "alias") for x in (aliases or []) if isinstance(x, str)]
            if a.summary:
                names.append((a.summary, "summary"))
            out[path] = dup.doc_of(path, a.body, names)
    return out


def _signals(da: dup.Doc, db: dup.Doc) -> tuple[float, list]:
    body = dup.jaccard(da.words, db.words)
    shared = [k for k in da.names.keys() & db.names.keys()
              if "alias" not in (da.names[k][1], db.names[k][1]) or da.names[k][1] != db.names[k][1]]
    return body, shared


def flagged(body: float, shared: list, da: dup.Doc, db: dup.Doc) -> bool:
    """The detector's rule (duplicates.find) for one pair."""
    enough = len(da.words) >= dup.MIN_WORDS and len(db.words) >= dup.MIN_WORDS
    return (enough and body >= dup.BODY_JACCARD) or bool(shared)


def candidates(root: str, top: int) -> None:
    docs = _docs(root)
    paths = sorted(docs)
    rows = []
    for i, a in enumerate(paths):
        for b in paths[i + 1:]:
            body, shared = _signals(docs[a], docs[b])
            rows.append((body, bool(shared), a, b))
    rows.sort(key=lambda r: (-(r[1]), -r[0]))
    chosen = [r for r in rows if r[1]] + [r for r in rows if not r[1]][:top]
    for body, shared, a, b in chosen:
        print(json.dumps({"workspace": root, "a": a, "b": b, "body": round(body, 3), "names": shared},
                         ensure_ascii=False))


def score(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    cache: dict[str, dict[str, dup.Doc]] = {}
    tp = fp = fn = tn = 0
    for r in rows:
        docs = cache.setdefault(r["workspace"], _docs(r["workspace"]))
        da, db = docs[r["a"]], docs[r["b"]]
        body, shared = _signals(da, db)
        hit = flagged(body, shared, da, db)
        dupe = r["label"] == "duplicate"
        tp += hit and dupe
        fp += hit and not dupe
        fn += (not hit) and dupe
        tn += (not hit) and not dupe
        if hit != dupe:
            print(f"  {'false positive' if hit else 'missed'}: {r['a']} / {r['b']} (body {body:.2f})")
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    print(f"{len(rows)} labelled pairs ({tp + fn} duplicates): flagged {tp + fp}, precision {precision:.2f} "
          f"({tp}/{tp + fp}), recall {recall:.2f} ({tp}/{tp + fn}); {tn} distinct pairs left alone")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("candidates")
    c.add_argument("workspace")
    c.add_argument("--top", type=int, default=20)
    d = sub.add_parser("seed", help="write the workspace tests/test_consolidate.py seeds (paraphrased and "
                       "cross-language duplicates, a conflict, a stale entry)")
    d.add_argument("out", type=Path)
    s = sub.add_parser("score")
    s.add_argument("file", type=Path)
    args = parser.parse_args()
    if args.cmd == "candidates":
        candidates(args.workspace, args.top)
    elif args.cmd == "seed":
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
        from tests.test_consolidate import seeded

        seeded(args.out)
    else:
        score(args.file)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
