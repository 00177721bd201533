"""The audit of a knowledge graph: findings about its content (seed 002's three rules).

Seed 002 gives the graph three rules, each learnt from an agent getting it wrong: search
before you create (two spellings make two entities: duplicate, folded-equal and
near-identical names), create the relation too (orphans; and relations whose ends do not
exist), keep entityType consistent (type variants). The audit also reports duplicate and
empty observations, duplicate relations, and names holding control, zero-width or direction
characters (two different names must never look the same).

Reading problems (bad lines) come from :meth:`memtui.core.graph.Graph.read_findings`;
:func:`audit` adds them first, so one call gives the whole report.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter, defaultdict

from rapidfuzz import fuzz

from memtui.core.findings import Finding
from memtui.core.text import visible  # noqa: F401 - re-exported for graph_export and the CLI
from memtui.core.graph.format import Graph, fold_name, fold_type

#: Score (0-100, rapidfuzz ``fuzz.ratio``) from which two names count as near-identical.
NEAR_SCORE = 90.0
#: Names shorter than this (after folding) are not fuzzy-compared (too many false hits).
NEAR_MIN_LENGTH = 5
#: Characters of a (folded) name that are fuzzy-compared: a 16 MiB name must not cost minutes.
NEAR_MAX_LENGTH = 256
#: How many sorted neighbours each name is compared with (sorted-neighbourhood blocking).
NEAR_WINDOW = 4
#: At most this many findings of one kind per entity group are written out in full.
MAX_LISTED = 20

_DIGITS = re.compile(r"\d+")


def has_hidden_characters(text: str) -> bool:
    """True when ``text`` holds a control (Cc), format (Cf: zero-width, direction) or line/
    paragraph separator character."""
    return any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs") for c in text)


def _q(name: str) -> str:
    """A name quoted for a finding message, hidden characters made visible."""
    return '"' + visible(name).replace('"', '\\"') + '"'


def _code_points(name: str) -> str:
    """The code points of ``name`` beyond ASCII, ``U+0065 U+0301`` style (first 12)."""
    points = [f"U+{ord(c):04X}" for c in name if ord(c) > 0x7E][:12]
    return " ".join(points) or "ASCII only"


def _digits_only_difference(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ only in their digits (``node-000001`` / ``node-000002``):
    numbered series are distinct things, not misspellings."""
    return _DIGITS.sub("#", a) == _DIGITS.sub("#", b)


def near_duplicates(names: list[str], score: float = NEAR_SCORE,
                    window: int = NEAR_WINDOW) -> list[tuple[str, str, float]]:
    """Pairs of near-identical names by fuzzy matching, without comparing every pair.

    Sorted-neighbourhood blocking: the folded names are sorted forwards and by their reversed
    text, and each is scored against its ``window`` next neighbours in both orders with
    rapidfuzz's ``fuzz.ratio`` (so a typo early or late in a name is found). Pairs whose
    folds are equal (reported as ``graph-similar-names``), that differ only in digits, or
    that are shorter than :data:`NEAR_MIN_LENGTH` are skipped. Cost: O(n log n) sorting +
    O(n · window) comparisons (50,000 names in well under a second).

    Args:
        names: distinct entity names.
        score: the least ``fuzz.ratio`` (0-100) for a pair.
        window: neighbours compared in each order.

    Returns:
        ``(name_a, name_b, score)`` triples, ``name_a < name_b``, sorted by name.
    """
    folded: dict[str, str] = {}
    for name in names:
        key = fold_name(name)[:NEAR_MAX_LENGTH]
        if len(key) >= NEAR_MIN_LENGTH:
            folded.setdefault(key, name)
    keys = list(folded)
    found: dict[tuple[str, str], float] = {}
    for order in (sorted(keys), sorted(keys, key=lambda k: k[::-1])):
        for i, a in enumerate(order):
            for b in order[i + 1:i + 1 + window]:
                if _digits_only_difference(a, b):
                    continue
                value = fuzz.ratio(a, b, score_cutoff=score)
                if value:
                    pair = (a, b) if a < b else (b, a)
                    found[pair] = value
    return sorted((folded[a], folded[b], s) for (a, b), s in found.items())


def _name_findings(shown: str, by_name: dict[str, list], near: bool) -> list[Finding]:
    """Search before you create: a name written twice, names equal after Unicode
    normalisation or case folding, and (with ``near``) nearly identical names."""
    found: list[Finding] = []
    # search before you create: the same name twice, names equal after folding, near-identical
    for name, records in by_name.items():
        if len(records) > 1:
            lines = ", ".join(str(r.line) for r in records)
            found.append(Finding.make(
                "graph-duplicate-entity", shown,
                f"entity {_q(name)} is written {len(records)} times (lines {lines}); the server's "
                "add_observations only ever changes the first",
                f"merge them: memtui graph merge -- {_shell(name)}", line=records[0].line))
    composed: dict[str, list[str]] = defaultdict(list)
    for name in by_name:
        composed[unicodedata.normalize("NFC", name)].append(name)
    for group in composed.values():
        if len(group) > 1:
            first = min(by_name[n][0].line for n in group)
            found.append(Finding.make(
                "graph-unicode-twins", shown,
                "entity names that look the same but are written with different code points (equal after "
                "Unicode normalisation, NFC): " + ", ".join(f"{_q(n)} ({_code_points(n)})" for n in group),
                "merge them into one; an agent that searches for one spelling never finds the other", line=first))
    folds: dict[str, list[str]] = defaultdict(list)
    for name in by_name:
        folds[fold_name(name)].append(name)
    for group in folds.values():
        if len({unicodedata.normalize("NFC", n) for n in group}) > 1:  # not only twins (reported above)
            first = min(by_name[n][0].line for n in group)
            found.append(Finding.make(
                "graph-similar-names", shown,
                "entity names equal after case and space folding: " + ", ".join(_q(n) for n in group),
                "merge them into one (the others are kept as `alias:` observations)", line=first))
    if near:
        for a, b, value in near_duplicates(list(by_name)):
            found.append(Finding.make(
                "graph-near-duplicate", shown,
                f"entity names {_q(a)} and {_q(b)} are nearly identical ({value:.0f}% alike)",
                "merge them if they are the same thing", line=min(by_name[a][0].line, by_name[b][0].line)))
    return found


def _relation_findings(shown: str, relations: list, by_name: dict[str, list]) -> list[Finding]:
    """Create the relation too: self relations, dangling ends, duplicate relations, orphans."""
    found: list[Finding] = []
    # create the relation too: dangling ends, orphans
    known = set(by_name)
    linked: set[str] = set()
    triples: Counter = Counter()
    first_line: dict[tuple[str, str, str], int] = {}
    for relation in relations:
        linked.add(relation.source)
        linked.add(relation.target)
        triples[relation.triple] += 1
        first_line.setdefault(relation.triple, relation.line)
        if relation.source == relation.target:
            found.append(Finding.make(
                "graph-self-relation", shown,
                f"relation {_q(relation.source)} --{visible(relation.relation_type)}--> {_q(relation.target)} "
                "points from an entity to itself", "delete it unless it is meant: memtui graph unrelate -- "
                f"{_shell(relation.source)} {_shell(relation.relation_type)} {_shell(relation.target)}",
                line=relation.line))
        missing = [end for end in (relation.source, relation.target) if end not in known]
        if missing:
            found.append(Finding.make(
                "graph-dangling-relation", shown,
                f"relation {_q(relation.source)} --{visible(relation.relation_type)}--> {_q(relation.target)} "
                f"points at {' and '.join(_q(m) for m in dict.fromkeys(missing))}, which is not an entity",
                "create the missing entity, correct the name, or delete the relation", line=relation.line))
    for triple, count in triples.items():
        if count > 1:
            found.append(Finding.make(
                "graph-duplicate-relation", shown,
                f"relation {_q(triple[0])} --{visible(triple[2])}--> {_q(triple[1])} is written {count} times",
                "delete the copies (memtui graph unrelate removes all, then relate once)",
                line=first_line[triple]))
    orphans = [name for name in by_name if name not in linked]
    for name in orphans:
        found.append(Finding.make(
            "graph-orphan", shown, f"entity {_q(name)} has no relation; nothing leads to it",
            "relate it to what it belongs to (an entity is created with its relation)", line=by_name[name][0].line))
    return found


def audit(graph: Graph, near: bool = True) -> list[Finding]:
    """Every finding about ``graph``: reading problems, then content problems.

    Args:
        graph: a loaded graph (legacy-layout files are audited through their records).
        near: run the fuzzy near-duplicate search (the slowest part).

    Returns:
        Findings with codes ``graph-*`` (see :data:`memtui.core.findings.CODES`), with the
        line number of the first record concerned; user text quoted with hidden characters
        made visible.
    """
    shown = graph.shown
    out: list[Finding] = list(graph.read_findings())
    entities = graph.entities
    relations = graph.relations
    by_name: dict[str, list] = defaultdict(list)
    for entity in entities:
        by_name[entity.name].append(entity)

    out.extend(_name_findings(shown, by_name, near))
    out.extend(_relation_findings(shown, relations, by_name))

    # keep entityType consistent
    spellings: dict[str, Counter] = defaultdict(Counter)
    type_line: dict[str, int] = {}
    for entity in entities:
        spellings[fold_type(entity.entity_type)][entity.entity_type] += 1
        type_line.setdefault(entity.entity_type, entity.line)
    for _key, counts in spellings.items():
        if len(counts) > 1:
            ranked = counts.most_common()
            listed = ", ".join(f"{_q(t)} ({n})" for t, n in ranked)
            out.append(Finding.make(
                "graph-type-variants", shown, f"one entityType is spelled {len(counts)} ways: {listed}",
                f"pick one: memtui graph retype --to {_shell(ranked[0][0])} "
                + " ".join(_shell(t) for t, _ in ranked[1:]),
                line=min(type_line[t] for t in counts)))

    out.extend(_content_findings(shown, entities, by_name))
    return out


def _content_findings(shown: str, entities: list, by_name: dict[str, list]) -> list[Finding]:
    """Findings about what entities hold: repeated or empty observations, empty names and
    names with hidden characters."""
    out: list[Finding] = []
    for entity in entities:
        seen: set[str] = set()
        repeated: list[str] = []
        empty = 0
        for text in entity.observations:
            if not text.strip():
                empty += 1
            elif text in seen:
                repeated.append(text)
            seen.add(text)
        if repeated:
            sample = ", ".join(_q(t[:60]) for t in list(dict.fromkeys(repeated))[:3])
            out.append(Finding.make(
                "graph-duplicate-observation", shown,
                f"entity {_q(entity.name)} holds {len(repeated)} repeated observation"
                f"{'s' if len(repeated) != 1 else ''}: {sample}",
                "delete the copies", line=entity.line))
        if empty:
            out.append(Finding.make(
                "graph-empty-observation", shown,
                f"entity {_q(entity.name)} holds {empty} empty observation{'s' if empty != 1 else ''}",
                "delete it or write what was meant", line=entity.line))
    for name, records in by_name.items():
        if name == "":
            out.append(Finding.make(
                "graph-name-empty", shown, "an entity has an empty name; nothing can search for it",
                "rename it: memtui graph rename '' NEW-NAME", line=records[0].line))
        elif has_hidden_characters(name):
            out.append(Finding.make(
                "graph-name-control", shown,
                f"entity name {_q(name)} holds control, zero-width or direction characters "
                "(it can look like another name)", "rename it to plain text", line=records[0].line))
    return out


def _shell(text: str) -> str:
    """``text`` quoted for a POSIX shell command line (hidden characters made visible)."""
    import shlex

    return shlex.quote(visible(text))


def local_findings(ws) -> list[Finding]:
    """The findings of ``memory/graph.jsonl`` (the local part of
    :func:`memtui.core.graph.backend.workspace_findings`, ``memtui audit``'s graph check).

    Returns:
        :func:`audit` of ``memory/graph.jsonl`` (fuzzy search included); nothing when the
        workspace has no graph file; one ``symlink-outside`` finding when the file is a link
        out of the workspace (not followed); one ``file-unreadable`` / ``file-too-large``
        finding when it cannot be read. Never raises for the file's content.
    """
    from memtui.core.files import is_inside
    from memtui.core.graph.format import GraphEditError, load

    path = ws.graph_file
    if not os.path.lexists(path):
        return []
    shown = ws.shown(path)
    if not is_inside(ws.root, path):
        return [Finding.make("symlink-outside", shown, "the graph file is a link out of the workspace; not read",
                             "replace the link with the graph file itself")]
    if not path.is_file():
        return [] if not path.exists() else [Finding.make(
            "file-unreadable", shown, "is not a regular file", "make memory/graph.jsonl a file")]
    try:
        graph = load(path, shown)
    except GraphEditError as exc:
        return [Finding.make("file-too-large", shown, str(exc), "split or trim the graph file")]
    except OSError as exc:
        return [Finding.make("file-unreadable", shown, f"cannot be read ({exc.strerror or exc})",
                             "check the file's permissions")]
    return audit(graph)
