"""Generate a realistic memory workspace of N articles for benchmarks.

Usage: python bench/make_workspace.py N OUT_DIR [--seed S]

The tree follows seed 000 §1: platform/, connectors/<system>/, and module branches with
symptom nodes and an experience node; about 40 articles a node, nested up to four levels,
150–600 words each, about 10 % of them with Bulgarian (Cyrillic) text, front matter with
title/summary/tags/dates, and a node index (AGENTS.md) listing every article. About 1 % of
articles carry a deliberate problem (unlisted, mismatched one-liner, bad YAML) so the audit
has work to report. Prints what it wrote and how long it took.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

WORDS = ("parcel depot route scan courier label invoice settlement customs manifest queue timeout "
         "retry sequence ledger window quota replica cache rotation budget canary driver hub stop "
         "address geocode refund payout batch export import schema index lock session token").split()
BG = "пратка депо куриер сканиране етикет фактура наложен платеж митница адрес грешка заявка".split()


def words(rng: random.Random, n: int, bulgarian: bool) -> str:
    pool = BG + WORDS if bulgarian else WORDS
    return " ".join(rng.choice(pool) for _ in range(n))


def article(rng: random.Random, i: int, bulgarian: bool) -> tuple[str, str, str]:
    title = f"{words(rng, 3, False).capitalize()} {i}"
    summary = words(rng, 9, bulgarian).capitalize()
    paragraphs = []
    remaining = rng.randint(150, 600)
    while remaining > 0:
        n = min(remaining, rng.randint(40, 90))
        paragraphs.append(words(rng, n, bulgarian).capitalize() + ".")
        remaining -= n
    body = f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n"
    text = (f'---\ntitle: "{title}"\nsummary: "{summary}"\ntags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]\n'
            f"updated: 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}\n---\n{body}")
    return title, summary, text


def build(n: int, out: Path, seed: int = 7, per_node: int = 40) -> tuple[int, int]:
    """Write the workspace; return (nodes, articles)."""
    rng = random.Random(seed)
    memory = out / "memory"
    memory.mkdir(parents=True, exist_ok=False)
    (out / "memtui.toml").write_text('[user]\nprofile = "bench.curator"\n')
    branches = ["platform", "connectors", "support", "billing", "operations", "development"]
    nodes: list[str] = []
    count_nodes = max(1, n // per_node)
    for k in range(count_nodes):
        branch = branches[k % len(branches)]
        depth = 1 + (k // len(branches)) % 3
        parts = [branch] + [f"n{k:05d}"] + [f"d{j}" for j in range(depth - 1)]
        nodes.append("/".join(parts))
    children: dict[str, list[str]] = {}
    for node in nodes:
        parts = node.split("/")
        for i in range(len(parts)):
            parent = "/".join(parts[:i])
            child = "/".join(parts[: i + 1])
            children.setdefault(parent, [])
            if child not in children[parent]:
                children[parent].append(child)
    written = 0
    for i, node in enumerate(nodes):
        folder = memory / node
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"---\nowner: bench.{node.split('/')[0]}\n---\n# Node {node}\n"]
        take = per_node if i < len(nodes) - 1 else n - written
        for j in range(take):
            bulgarian = rng.random() < 0.10
            title, summary, text = article(rng, written, bulgarian)
            name = f"a{written:06d}.md"
            problem = rng.random()
            if problem < 0.003:
                text = text.replace('summary: "', "summary: broken: ", 1)
            (folder / name).write_text(text, encoding="utf-8")
            if problem < 0.006 and problem >= 0.003:
                pass  # unlisted
            else:
                one_liner = summary if problem > 0.009 or problem < 0.006 else summary + " (stale)"
                lines.append(f"- [{title}]({name}) — {one_liner}")
            written += 1
        for child in children.get(node, []):
            lines.append(f"- [{child.rsplit('/', 1)[-1]}]({child.rsplit('/', 1)[-1]}/AGENTS.md) — child node")
        (folder / "AGENTS.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for parent, kids in children.items():
        if parent in nodes:
            continue
        folder = memory / parent if parent else memory
        folder.mkdir(parents=True, exist_ok=True)
        owner = "\n---\nowner: bench.root\n---\n" if not parent else ""
        lines = [f"{owner.lstrip()}# {parent or 'Memory'}\n"]
        lines += [f"- [{k.rsplit('/', 1)[-1]}]({k.rsplit('/', 1)[-1]}/AGENTS.md) — branch" for k in kids]
        (folder / "AGENTS.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(nodes), written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="number of articles")
    parser.add_argument("out", type=Path, help="folder to create (must not exist)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.perf_counter()
    nodes, articles = build(args.n, args.out, args.seed)
    print(f"wrote {articles} articles in {nodes} nodes to {args.out} in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
