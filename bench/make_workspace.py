"""Generate a realistic memory workspace of N articles for benchmarks.

Usage: python bench/make_workspace.py N OUT_DIR [--seed S] [--vocabulary zipf|small]

The tree follows seed 000 §1: platform/, connectors/<system>/, and module branches with
symptom nodes and an experience node; about 40 articles a node, nested up to four levels,
150–600 words each, about 10 % of them with Bulgarian (Cyrillic) text, front matter with
title/summary/tags/dates, and a node index (AGENTS.md) listing every article. About 1 % of
articles carry a deliberate problem (unlisted, mismatched one-liner, bad YAML) so the audit
has work to report. Prints what it wrote and how long it took.

Text (``--vocabulary zipf``, the default) follows the shape of real prose: English function
words, then a content vocabulary drawn by the Zipf–Mandelbrot law (exponent 1.0, offset
:data:`ZIPF_OFFSET`, calibrated on the real texts in ../shared) — the domain words of a
parcel carrier first, then 40,000 made-up English-like words and 12,000 Cyrillic ones — plus
about 3 % identifiers (error codes, ticket numbers, hosts, API paths) from a large space, and
each node's own handful of topic words, so the vocabulary grows with the workspace as real
vocabularies do (Heaps' law; about 350,000 distinct terms at 100,000 articles). Before
2026-11-30 the generator drew every word uniformly from 52 words (``--vocabulary small``,
kept to reproduce the old figures): then every word is in most articles, which no real memory
has, and a search benchmark on it measures a worst case only.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import random
import time
from pathlib import Path

WORDS = ("parcel depot route scan courier label invoice settlement customs manifest queue timeout "
         "retry sequence ledger window quota replica cache rotation budget canary driver hub stop "
         "address geocode refund payout batch export import schema index lock session token").split()
BG = "пратка депо куриер сканиране етикет фактура наложен платеж митница адрес грешка заявка".split()
#: English function words (they lead any real frequency list; search drops them as stop words).
FUNCTION = ("the of and to a in is for on that with as it by from be this are at or was not "
            "when if after before then but which have has can will its into all".split())
BG_FUNCTION = "на и да се в не за от с по е че при от които това след".split()
_EN_ONSETS = "b c d f g h k l m n p r s t v w br cl dr fl gr pl pr sh st tr".split()
_EN_VOWELS = "a e i o u ai ea ou".split()
_EN_CODAS = ["", "", "n", "r", "s", "t", "l", "nd", "st", "ck"]
_BG_ONSETS = "б в г д ж з к л м н п р с т ф х ц ч ш бр гр др кр пр ст тр".split()
_BG_VOWELS = "а е и о у ъ я".split()
_BG_CODAS = ["", "", "н", "р", "с", "т", "л", "к"]
_BG_ENDINGS = ["", "а", "ът", "и", "ите", "ия", "ата", "ове"]
EN_VOCABULARY = 40_000
#: Zipf–Mandelbrot offset of the content vocabulary (weight 1 / (rank + offset)): with 7 the
#: most frequent content word is about 1.4 % of an article's index terms, as in the real
#: texts of ../shared/triage (1.5 %) and ../shared/corpus (1.0 %); pure Zipf (offset 1) made
#: it 6 % and put it in every article.
ZIPF_OFFSET = 7
BG_VOCABULARY = 12_000


def _made_up(rng: random.Random, onsets: list[str], vowels: list[str], codas: list[str],
             seen: set[str], endings: list[str] | None = None) -> str:
    while True:
        word = "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                       for _ in range(rng.choice((1, 2, 2, 2, 3, 3))))
        if endings:
            word += rng.choice(endings)
        if word not in seen and len(word) >= 4:
            seen.add(word)
            return word


class Vocabulary:
    """Zipf-distributed word sampler: ``draw(k, bulgarian)`` gives k words of running text."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed * 7919 + 1)
        seen = set(WORDS) | set(BG) | set(FUNCTION) | set(BG_FUNCTION)
        self.en = list(WORDS) + [_made_up(rng, _EN_ONSETS, _EN_VOWELS, _EN_CODAS, seen)
                                 for _ in range(EN_VOCABULARY)]
        self.bg = list(BG) + [_made_up(rng, _BG_ONSETS, _BG_VOWELS, _BG_CODAS, seen, _BG_ENDINGS)
                              for _ in range(BG_VOCABULARY)]
        self.en_cum = list(itertools.accumulate(1.0 / (r + ZIPF_OFFSET) for r in range(len(self.en))))
        self.bg_cum = list(itertools.accumulate(1.0 / (r + ZIPF_OFFSET) for r in range(len(self.bg))))
        self.fn_cum = list(itertools.accumulate(1.0 / (r + 1) ** 0.7 for r in range(len(FUNCTION))))

    def identifier(self, rng: random.Random) -> str:
        kind = rng.randrange(5)
        if kind == 0:
            return f"ORA-{rng.randrange(100000):05d}"
        if kind == 1:
            return f"INC-{rng.randrange(1_000_000)}"
        if kind == 2:
            return f"{rng.choice(self.en[:400])}-{rng.randrange(1, 60):02d}.prod.internal"
        if kind == 3:
            return f"/api/{rng.choice(self.en[:300])}/{rng.choice(self.en[:2000])}"
        return f"{rng.choice(self.en[:200]).upper()}_{rng.choice(self.en[:3000]).upper()}"

    def draw(self, rng: random.Random, k: int, bulgarian: bool, topic: list[str]) -> list[str]:
        out: list[str] = []
        r = rng.random
        for _ in range(k):
            x = r()
            if x < 0.38:
                if bulgarian:
                    out.append(rng.choice(BG_FUNCTION) if r() < 0.7 else rng.choice(FUNCTION))
                else:
                    out.append(FUNCTION[bisect.bisect(self.fn_cum, r() * self.fn_cum[-1])])
            elif x < 0.45:
                out.append(rng.choice(topic))
            elif x < 0.48:
                out.append(self.identifier(rng))
            elif bulgarian and x < 0.85:
                out.append(self.bg[bisect.bisect(self.bg_cum, r() * self.bg_cum[-1])])
            else:
                out.append(self.en[min(len(self.en) - 1, bisect.bisect(self.en_cum, r() * self.en_cum[-1]))])
        return out


class Small:
    """The pre-2026-11-30 vocabulary: 52 words, uniform (a worst case for search)."""

    def draw(self, rng: random.Random, k: int, bulgarian: bool, topic: list[str]) -> list[str]:
        pool = BG + WORDS if bulgarian else WORDS
        return [rng.choice(pool) for _ in range(k)]


def sentence(words: list[str]) -> str:
    return " ".join(words).capitalize()


def article(rng: random.Random, i: int, bulgarian: bool, vocab, topic: list[str]) -> tuple[str, str, str]:
    title = f"{sentence(vocab.draw(rng, 3, False, topic))} {i}"
    summary = sentence(vocab.draw(rng, 9, bulgarian, topic))
    paragraphs = []
    remaining = rng.randint(150, 600)
    while remaining > 0:
        n = min(remaining, rng.randint(40, 90))
        paragraphs.append(sentence(vocab.draw(rng, n, bulgarian, topic)) + ".")
        remaining -= n
    body = f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n"
    text = (f'---\ntitle: "{title}"\nsummary: "{summary}"\ntags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]\n'
            f"updated: 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}\n---\n{body}")
    return title, summary, text


def build(n: int, out: Path, seed: int = 7, per_node: int = 40, vocabulary: str = "zipf") -> tuple[int, int]:
    """Write the workspace; return (nodes, articles). ``vocabulary``: ``zipf`` or ``small``."""
    rng = random.Random(seed)
    vocab = Vocabulary(seed) if vocabulary == "zipf" else Small()
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
        topic_rng = random.Random(seed * 104729 + i)  # its own stream: --vocabulary small output is unchanged
        topic = topic_rng.sample(vocab.en[:8000], 8) if vocabulary == "zipf" else []
        for j in range(take):
            bulgarian = rng.random() < 0.10
            title, summary, text = article(rng, written, bulgarian, vocab, topic)
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
    parser.add_argument("--vocabulary", choices=("zipf", "small"), default="zipf",
                        help="zipf: realistic text (default); small: the old 52-word worst case")
    args = parser.parse_args()
    started = time.perf_counter()
    nodes, articles = build(args.n, args.out, args.seed, vocabulary=args.vocabulary)
    print(f"wrote {articles} articles in {nodes} nodes to {args.out} in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
