"""Secrets in text, found by Yelp's detect-secrets (issue 17; seed 000 §2 rule 5: "the memory
tree holds no secrets ... by construction").

This module is the only door to detect-secrets: the rest of memtui gets :class:`Hit` values
that carry a masked value (:func:`mask`) and a fingerprint, never the secret itself, so no
finding, ``--json`` page, log line or exception message can hold one.

What is used of the library:

- every plugin of detect-secrets 1.5 except ``IPPublicDetector`` (a public IP address is not a
  credential, and the memory tree names hosts on purpose);
- its default false-positive filters (sequential strings, UUIDs, ids, templates, ``$VAR``,
  indirect references, ``pragma: allowlist secret`` comments, …); no verification filter, so
  no plugin ever calls a network service with a found value;
- the keyword plugin with detect-secrets' quoted-value rules plus its unquoted
  ``password=value`` rule (``FOLLOWED_BY_EQUAL_SIGNS_REGEX``): Markdown is prose, where an
  unquoted ``Password: reset it in the portal`` is common and means nothing, while
  ``password=hunter2`` is an assignment.

Speed (the audit scans every article): a plugin is run line by line only when it finds
something in the whole text; the entropy plugins only on the lines holding one of their
candidate strings; the line filters (one of them, ``is_indirect_reference``, is a slow regex
on long prose lines) only on lines a plugin flagged. The result is the same as
detect-secrets' own line-by-line scan.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import logging
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from memtui.core.scan import factors

#: detect-secrets plugins left out, with the reason in the module docstring.
EXCLUDED_PLUGINS = frozenset({"IPPublicDetector"})
#: Placeholder words (one a line) of detect-secrets' wordlist filter.
PLACEHOLDERS = Path(__file__).with_name("placeholders.txt")
#: The file name detect-secrets is told (its rules pick by extension: ``.md`` is "other").
_FILENAME = "memory.md"
_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class Hit:
    """One value that looks like a secret.

    Attributes:
        kind: detect-secrets' name of the kind (``"GitHub Token"``, ``"Secret Keyword"``).
        line: 1-based line within the scanned text (plus the caller's offset).
        column: 1-based column of the value in that line, or ``None``.
        masked: the value masked by :func:`mask` (safe to show and store).
        fingerprint: :func:`fingerprint` of the value (stable, not reversible for a real secret).
    """

    kind: str
    line: int
    column: int | None
    masked: str
    fingerprint: str


def mask(value: str) -> str:
    """A value shown without giving it away: ``ghp_****…3fA``.

    Long values keep their first 4 and last 3 characters (enough to recognise a token's kind
    and tell two apart), values of 12–19 characters their first 2 and last 2, shorter ones
    nothing (``****…``): a short secret is guessable from a few characters.
    """
    value = value.strip()
    if len(value) >= 20:
        return f"{value[:4]}****…{value[-3:]}"
    if len(value) >= 12:
        return f"{value[:2]}****…{value[-2:]}"
    return "****…"


def fingerprint(value: str) -> str:
    """The value's identity for allowing a false positive: 16 hex digits of SHA-256 (like
    detect-secrets' ``hashed_secret``, shortened). Stored instead of the value."""
    return hashlib.sha256(value.strip().encode("utf-8", "surrogatepass")).hexdigest()[:16]


@lru_cache(maxsize=1)
def _engine() -> tuple[list[Any], Any, dict, Any, Any]:
    """Configure detect-secrets once per process: ``(plugins, keyword plugin, keyword rules,
    filtered-out function, code-snippet function)``."""
    from detect_secrets.core import scan as ds_scan
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword as ds_keyword
    from detect_secrets.settings import get_plugins, get_settings
    from detect_secrets.util.code_snippet import get_code_snippet

    logging.getLogger("detect-secrets").setLevel(logging.CRITICAL)  # its info lines quote values
    settings = get_settings()
    settings.clear()  # the library's default filters, no verification
    plugin_classes: list[type] = list(get_mapping_from_secret_type_to_class().values())
    settings.configure_plugins([{"name": cls.__name__} for cls in plugin_classes
                                if cls.__name__ not in EXCLUDED_PLUGINS])
    from detect_secrets.filters import wordlist

    # detect-secrets' own wordlist filter drops values holding a placeholder word (YOUR_KEY,
    # your-key-here, DEMO_KEY): documentation shows where a key goes, not a key.
    wordlist.initialize(str(PLACEHOLDERS), min_length=4)
    assert not any("verification" in path for path in settings.filters), "verification must stay off"
    plugins = list(get_plugins())
    keyword = next((p for p in plugins if type(p).__name__ == "KeywordDetector"), None)
    rules = dict(ds_keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
    rules[ds_keyword.FOLLOWED_BY_EQUAL_SIGNS_REGEX] = 5
    return plugins, keyword, rules, ds_scan._is_filtered_out, get_code_snippet


def _strong(strings: frozenset[str], folded: bool) -> bool:
    """A factor set rare enough to gate on: strings of 2 or more characters (a single
    character such as ``:`` is in nearly every line)."""
    return min(map(len, strings)) >= 2


class _Gate:
    """One pattern's factor sets, split into the strong ones (found by the automata in one
    pass) and the weak ones (checked with a substring test once a strong one is there)."""

    __slots__ = ("folded", "strong", "weak")

    def __init__(self, folded: bool, sets: list[frozenset[str]]) -> None:
        self.folded = folded
        self.strong = sorted((s for s in sets if _strong(s, folded)), key=lambda s: -min(map(len, s)))
        self.weak = [s for s in sets if not _strong(s, folded)]

    def line_passes(self, line: str) -> bool:
        """Every factor set, strong and weak, has a string in ``line``."""
        where = line.casefold() if self.folded else line
        return all(any(f in where for f in need) for need in self.strong) and \
            all(any(f in where for f in need) for need in self.weak)

    def passes_weak(self, text: str, folded: str) -> bool:
        where = folded if self.folded else text
        return all(any(f in where for f in need) for need in self.weak)


class _Plugin:
    """One detect-secrets plugin with its gate.

    A plugin whose every pattern has a strong factor set (:func:`memtui.core.scan.factors.conditions`)
    is run only on the lines where one of those strings occurs and every other set is
    satisfied; the others are first searched in the whole text (``^`` and ``$`` then match at
    every line, so the search finds whatever a line-by-line search finds); the entropy plugins
    are run on the lines holding one of their candidate strings.
    """

    __slots__ = ("plugin", "keyword", "entropy", "gates", "patterns", "run")

    def __init__(self, plugin: Any, keyword: bool, rules: dict) -> None:
        self.plugin = plugin
        self.keyword = keyword
        self.entropy = hasattr(plugin, "entropy_limit")
        patterns = list(rules) if keyword else list(getattr(plugin, "denylist", ()) or ())
        if not patterns and isinstance(getattr(plugin, "regex", None), re.Pattern):
            patterns = [plugin.regex]
        gates: list[_Gate] | None = [] if patterns else None
        for pattern in patterns:
            found = factors.conditions(pattern)
            gate = _Gate(*found) if found else None
            if gate is None or not gate.strong or gates is None:
                gates = None
                break
            gates.append(gate)
        self.gates = gates if not self.entropy else None
        self.patterns = [re.compile(p.pattern, p.flags | re.MULTILINE) for p in patterns]
        # the token run every match holds (factors.required_run); for an entropy plugin, a
        # string over its limit has at least 2**limit characters (entropy <= log2(length))
        self.run = min((factors.required_run(p) for p in patterns), default=0)
        if self.entropy:
            self.run = max(self.run, math.ceil(2 ** float(plugin.entropy_limit)))

    def whole(self, text: str) -> set[str] | bool:
        """The whole-text gate of an ungated plugin (candidates for the entropy plugins)."""
        if self.entropy:
            return set(self.plugin.analyze_string(text))
        if self.patterns:
            return any(p.search(text) for p in self.patterns)
        return True


def _filtered(filtered_out: Any, plugin: Any, line: str, value: str, context: Any) -> bool:
    """detect-secrets' filters, in its own order: the value, the line, the context."""
    return bool(filtered_out(["secret"], filename=_FILENAME, secret=value, plugin=plugin, line=line)
                or filtered_out(["line"], filename=_FILENAME, line=line, context=context)
                or filtered_out(["context"], filename=_FILENAME, secret=value, plugin=plugin, line=line,
                                context=context))


_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _placeholder(value: str) -> bool:
    """A value documentation shows where a secret goes, not a secret: under 4 characters
    (``KEY``), elided (``abc123...``), or the name of a variable (``TWILIO_API_KEY``)."""
    value = value.strip().strip("\"'`")
    return len(value) < 4 or value.endswith(("...", "…")) or bool(_ENV_NAME.fullmatch(value))


def _assigned(line: str, value: str, at: int) -> bool:
    """For the keyword plugin in prose: the value is written next to its ``=``, ``:`` or
    quote (``password=hunter2``, ``"api_key": "…"``), not a word after "api_key= " in a
    sentence ("pass api_key= directly")."""
    if at <= 0:
        return True
    before = line[at - 1]
    return before in "\"'`=:" or not before.isspace()


@lru_cache(maxsize=1)
def _plugins() -> list[_Plugin]:
    plugins, keyword, rules, _, _ = _engine()
    return [_Plugin(p, p is keyword, rules) for p in plugins]


@lru_cache(maxsize=1)
def _quoted() -> re.Pattern[str] | None:
    """One search that every candidate of every entropy plugin passes: a quote, a run of the
    union of their charsets as long as the shortest string over any limit, the same quote.
    No match: no entropy plugin can flag anything in the text (one pass instead of two)."""
    entropy = [p for p in _plugins() if p.entropy]
    if not entropy:
        return None
    chars = "".join(sorted({c for p in entropy for c in p.plugin.charset}))
    shortest = min(p.run for p in entropy)
    return re.compile(r"(['\"])[%s]{%d,}\1" % (re.escape(chars), shortest))


#: Characters a secret token is made of, to mask the whole token when a plugin reports only
#: a part of it (detect-secrets returns the first group: ``ghp`` of a GitHub token).
_TOKEN = re.compile(r"[^\s'\"`,;<>()\[\]{}|&]+")


class _Automaton:
    """Aho–Corasick search for many literals at once (the Rust ``aho-corasick`` crate through
    ``ahocorasick_rs``): every occurrence, overlapping ones included, with what each satisfies."""

    def __init__(self, values: dict[str, list[tuple[int, int, int]]]) -> None:
        import ahocorasick_rs

        self.words = list(values)
        self.entries = [tuple(values[w]) for w in self.words]
        self.search = ahocorasick_rs.AhoCorasick(self.words).find_matches_as_indexes if self.words else None

    def iter(self, text: str) -> list[tuple[int, tuple[tuple[int, int, int], ...]]]:
        """``[(index of the last character, entries)]`` of every occurrence in ``text``."""
        if self.search is None:
            return []
        entries = self.entries
        return [(end - 1, entries[i]) for i, _start, end in self.search(text, overlapping=True)]

    def __len__(self) -> int:
        return len(self.words)


@lru_cache(maxsize=1)
def _automata() -> tuple[_Automaton, _Automaton, list[tuple[int, int, int]]]:
    """Automata of every strong factor: ``(case-folded, case-sensitive, gates)``.

    Each string's entries list the ``(plugin, gate, set)`` indexes it satisfies; ``gates``
    lists ``(plugin, gate, number of strong sets)``.
    """
    folded: dict[str, list[tuple[int, int, int]]] = {}
    raw: dict[str, list[tuple[int, int, int]]] = {}
    gates: list[tuple[int, int, int]] = []
    for p_index, plugin in enumerate(_plugins()):
        for g_index, gate in enumerate(plugin.gates or ()):
            gates.append((p_index, g_index, len(gate.strong)))
            for s_index, need in enumerate(gate.strong):
                for s in need:
                    (folded if gate.folded else raw).setdefault(s, []).append((p_index, g_index, s_index))
    return _Automaton(folded), _Automaton(raw), gates


def find(text: str, first_line: int = 1) -> list[Hit]:
    """The secrets detect-secrets finds in ``text``.

    Args:
        text: the text (a whole file, or one JSONL record).
        first_line: the file line of ``text``'s first line (hits are numbered from it).

    Returns:
        Hits in line order; ``[]`` for text with none. Never raises for odd text: a line the
        library cannot handle is skipped (its message is never shown: it may quote the value).
    """
    if not text:
        return []
    with _LOCK:  # the library's settings and caches are process-global
        return _find(text, first_line)


def _plan(text: str, every: list[_Plugin]) -> list[tuple[_Plugin, set[str] | None, set[int] | None]]:
    """Which plugins to run on which lines (``None``: every line), and the entropy candidates."""
    folded = text.casefold()
    auto_folded, auto_raw, gates = _automata()
    # the longest run of token characters is at most the longest word between white space
    # (an over-estimate only lets a detector run; 2x cheaper than finding the runs)
    longest = max(map(len, text.split()), default=0)
    plugins: list[_Plugin | None] = [p if p.run <= longest else None for p in every]
    present: set[tuple[int, int, int]] = set()
    ends: dict[tuple[int, int], list[int]] = {}  # (plugin, gate) -> ends of its first strong set
    for automaton, where in ((auto_folded, folded), (auto_raw, text)):
        if len(automaton):
            for end, entries in automaton.iter(where):
                present.update(entries)
                for p_index, g_index, s_index in entries:
                    if s_index == 0:
                        ends.setdefault((p_index, g_index), []).append(end)
    starts: list[int] = []
    rows_of: dict[int, set[int] | None] = {}
    for p_index, g_index, count in gates:
        if plugins[p_index] is None:
            continue
        if (p_index, g_index) not in ends or any((p_index, g_index, s) not in present for s in range(1, count)):
            continue
        gate = every[p_index].gates[g_index]  # type: ignore[index]
        if gate.weak and not gate.passes_weak(text, folded):
            continue
        if not starts:
            starts.append(0)
            at = text.find("\n")
            while at >= 0:
                starts.append(at + 1)
                at = text.find("\n", at + 1)
        rows = rows_of.setdefault(p_index, set())
        if len(folded) != len(text):  # pragma: no cover - casefold changed lengths (ß): every line
            rows_of[p_index] = None
        elif rows is not None:
            rows.update(bisect.bisect_right(starts, end) - 1 for end in ends[(p_index, g_index)])
    plan: list[tuple[_Plugin, set[str] | None, set[int] | None]] = [
        (every[p], None, rows) for p, rows in rows_of.items()]
    quoted = _quoted()
    if quoted is not None and any(p is not None and p.entropy for p in plugins) and not quoted.search(text):
        plugins = [None if p is not None and p.entropy else p for p in plugins]
    for plugin in plugins:
        if plugin is not None and plugin.gates is None:
            try:
                gate_value = plugin.whole(text)
            except Exception:  # noqa: BLE001 - a library failure must not stop an audit
                continue
            if gate_value:
                plan.append((plugin, gate_value if isinstance(gate_value, set) else None, None))
    return plan


def _find(text: str, first_line: int) -> list[Hit]:
    _, keyword, rules, filtered_out, snippet = _engine()
    plan = _plan(text, _plugins())
    if not plan:
        return []
    lines = text.split("\n")
    hits: list[Hit] = []
    seen: set[tuple[int, str]] = set()
    contexts: dict[int, Any] = {}
    for plugin_entry, values, rows in plan:
        plugin = plugin_entry.plugin
        gates = plugin_entry.gates
        for index in (sorted(rows) if rows is not None else range(len(lines))):
            line = lines[index].rstrip()
            if not line or (values is not None and not any(v in line for v in values)):
                continue
            if gates is not None and rows is not None and not any(g.line_passes(line) for g in gates):
                continue
            number = index + 1
            context = contexts.get(number)
            if context is None:
                context = contexts[number] = snippet(lines=lines, line_number=number)
            try:  # the library's own calls: a failure on odd text skips the line, never the audit
                if plugin_entry.keyword:
                    secrets = type(plugin).__mro__[1].analyze_line(  # type: ignore[attr-defined]
                        plugin, filename=_FILENAME, line=line, line_number=number, context=context,
                        denylist_regex_to_group=rules)
                else:
                    secrets = plugin.analyze_line(filename=_FILENAME, line=line, line_number=number,
                                                  context=context)
                found = [s.secret_value or "" for s in secrets or ()]
                kind = next(iter(secrets)).type if secrets else ""
                kept = [v for v in found if v and not _filtered(filtered_out, plugin, line, v, context)]
            except Exception:  # noqa: BLE001 - its message may quote the value: never shown
                continue
            for value in kept:
                at = line.find(value)
                if plugin_entry.keyword and not _assigned(line, value, at):
                    continue
                token = value
                if at >= 0:
                    whole = _TOKEN.match(line, at)
                    if whole:
                        token = whole.group(0)
                if _placeholder(token):
                    continue
                key = (number, token)
                if key in seen:
                    continue
                seen.add(key)
                hits.append(Hit(kind, number + first_line - 1, at + 1 if at >= 0 else None,
                                mask(token), fingerprint(token)))
    hits.sort(key=lambda h: (h.line, h.column or 0))
    return hits
