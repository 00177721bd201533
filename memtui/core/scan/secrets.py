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

Speed (the audit scans every article): the prefilters run over many texts at once (a
:class:`~memtui.core.scan.chunk.Chunk`, :func:`find_many`): an Aho–Corasick pass for the
literals the gated plugins' patterns require marks the lines a plugin is run on, byte class
maps find the texts where an ungated plugin's token run or an entropy plugin's quoted string
can be; a plugin's own patterns must match a line before the library analyses it; the line
filters (one of them, ``is_indirect_reference``, is a slow regex on long prose lines) run
only on lines a plugin flagged. The result is the same as detect-secrets' own line-by-line
scan (:func:`every_line`; the tests compare them).
"""

from __future__ import annotations

import bisect
import hashlib
import math
import logging
import re
import string
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from memtui.core.scan import factors
from memtui.core.scan.chunk import CLASSES, Chunk, class_map, mapped_class

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


class _Plugin:
    """One detect-secrets plugin with its gate.

    A plugin whose every pattern has a strong factor set (:func:`memtui.core.scan.factors.conditions`)
    is run only on the lines where a string of one pattern's first strong set occurs and that
    pattern's every other set is satisfied (:meth:`_Gate.line_passes`). The others are run on
    the texts their whole-text gate lets through (:meth:`whole`: ``^`` and ``$`` then match at
    every line, so the search finds whatever a line-by-line search finds), the entropy plugins
    on the lines holding one of their candidate strings. Before the library analyses a line,
    the plugin's own patterns must match in it (:attr:`precheck`): detect-secrets' regex
    plugins and the keyword plugin yield only what those patterns match.
    """

    __slots__ = ("plugin", "keyword", "entropy", "gates", "patterns", "run", "word_run", "precheck")

    def __init__(self, plugin: Any, keyword: bool, rules: dict) -> None:
        from detect_secrets.plugins.base import RegexBasedDetector

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
        # RegexBasedDetector.analyze_string yields the denylist's matches (JwtTokenDetector
        # filters them), the keyword plugin the matches of the rules it is given
        regex_based = keyword or (isinstance(plugin, RegexBasedDetector) and not self.entropy)
        self.precheck = self.patterns if regex_based and self.patterns else None
        # the token run every match holds (factors.required_run); for an entropy plugin, a
        # string over its limit has at least 2**limit characters (entropy <= log2(length))
        self.run = min((factors.required_run(p) for p in patterns), default=0)
        if self.entropy:
            self.run = max(self.run, math.ceil(2 ** float(plugin.entropy_limit)))
        # the run of word characters and hyphens every match holds (the prefilter of the
        # ungated plugins, :data:`_RUNS`)
        self.word_run = min((factors.required_run(p, "-") for p in patterns), default=0)

    def may_flag(self, line: str) -> bool:
        """False when the library cannot flag anything in ``line`` (:attr:`precheck`)."""
        return self.precheck is None or any(p.search(line) for p in self.precheck)


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
    """The configured plugins, the gated ones first (a value two plugins flag is reported
    with the first one's kind, the same on every path)."""
    plugins, keyword, rules, _, _ = _engine()
    every = [_Plugin(p, p is keyword, rules) for p in plugins]
    return [p for p in every if p.gates is not None] + [p for p in every if p.gates is None]


#: Characters a secret token is made of, to mask the whole token when a plugin reports only
#: a part of it (detect-secrets returns the first group: ``ghp`` of a GitHub token).
_TOKEN = re.compile(r"[^\s'\"`,;<>()\[\]{}|&]+")


class _Automaton:
    """Aho–Corasick search for many literals at once in UTF-8 bytes (the Rust
    ``aho-corasick`` crate through ``ahocorasick_rs``): every occurrence, overlapping ones
    included, with the plugins whose candidate lines it marks."""

    def __init__(self, values: dict[str, tuple[int, ...]]) -> None:
        import ahocorasick_rs

        self.words = list(values)
        self.plugins = [values[w] for w in self.words]
        encoded = [w.encode("utf-8", "surrogatepass") for w in self.words]
        self.search = (ahocorasick_rs.BytesAhoCorasick(encoded, implementation=ahocorasick_rs.Implementation.DFA)
                       .find_matches_as_indexes if encoded else None)

    def iter(self, data: bytes) -> list[tuple[int, tuple[int, ...]]]:
        """``[(offset of the last byte, plugin indexes)]`` of every occurrence in ``data``."""
        if self.search is None:
            return []
        plugins = self.plugins
        return [(end - 1, plugins[i]) for i, _start, end in self.search(data, overlapping=True)]

    def __len__(self) -> int:
        return len(self.words)


@lru_cache(maxsize=1)
def _automata() -> tuple[_Automaton, _Automaton]:
    """Automata of the strings of every gate's first strong set: ``(case-folded,
    case-sensitive)``; each string names the plugins (indexes into :func:`_plugins`) whose
    gate it opens on its line."""
    folded: dict[str, set[int]] = {}
    raw: dict[str, set[int]] = {}
    for p_index, plugin in enumerate(_plugins()):
        for gate in plugin.gates or ():
            for s in gate.strong[0]:
                (folded if gate.folded else raw).setdefault(s, set()).add(p_index)
    return (_Automaton({s: tuple(sorted(p)) for s, p in folded.items()}),
            _Automaton({s: tuple(sorted(p)) for s, p in raw.items()}))


#: The class map of the ungated plugins' prefilter: word characters and ``-`` are ``a``,
#: non-ASCII bytes too (``\\w`` holds letters of every script, so the map over-estimates a
#: run, never under-estimates it), everything else a space.
_RUNS = class_map({(string.ascii_letters + string.digits + "_-").encode(): b"a"}, other=b" ", high=b"a")


@lru_cache(maxsize=1)
def _quoted() -> tuple[re.Pattern[bytes], ...]:
    """What every candidate of every entropy plugin is, over the shared class map
    (:data:`memtui.core.scan.chunk.CLASSES`): a quote, a run of their charsets as long as the
    shortest string over any limit, the same quote; one pattern a quote (each starts with a
    literal, searched fast)."""
    entropy = [p for p in _plugins() if p.entropy]
    if not entropy:
        return ()
    chars = mapped_class("".join(sorted({c for p in entropy for c in p.plugin.charset})))
    shortest = min(p.run for p in entropy)
    return tuple(re.compile(re.escape(q) + chars + b"{%d,}" % shortest + re.escape(q)) for q in (b"'", b'"'))


def find(text: str, first_line: int = 1) -> list[Hit]:
    """The secrets detect-secrets finds in ``text``.

    Args:
        text: the text (a whole file, or one JSONL record).
        first_line: the file line of ``text``'s first line (hits are numbered from it).

    Returns:
        Hits in line order; ``[]`` for text with none. Never raises for odd text: a line the
        library cannot handle is skipped (its message is never shown: it may quote the value).
    """
    return find_many([text], [first_line])[0] if text else []


def find_many(texts: Sequence[str], first_lines: Sequence[int] | None = None,
              chunk: Chunk | None = None) -> list[list[Hit]]:
    """:func:`find` of each of ``texts``, the prefilters run once over all of them (a
    :class:`~memtui.core.scan.chunk.Chunk`; pass one to share it with other scans).

    Returns:
        One list of hits per text, in order; the same hits as :func:`find` of each text.
    """
    chunk = chunk if chunk is not None else Chunk(texts)
    with _LOCK:  # the library's settings and caches are process-global
        plans = _plans(chunk)
        return [_analyze(text, plans[i], first_lines[i] if first_lines else 1) if i in plans else []
                for i, text in enumerate(chunk.texts)]


_Plan = list[tuple[_Plugin, "set[int] | None"]]


def _plans(chunk: Chunk) -> dict[int, _Plan]:
    """Per text (index) that any plugin may flag: which plugins to run on which lines
    (``None``: every line), in the plugins' order."""
    every = _plugins()
    rows: dict[int, dict[int, set[int]]] = {}  # text -> plugin -> lines holding a first strong string
    auto_folded, auto_raw = _automata()
    for automaton, (data, starts) in ((auto_folded, chunk.folded()), (auto_raw, (chunk.data, chunk.starts))):
        if not len(automaton):
            continue
        for end, plugin_indexes in automaton.iter(data):
            index = bisect.bisect_right(starts, end) - 1
            line = data.count(b"\n", starts[index], end)
            of_text = rows.setdefault(index, {})
            for p_index in plugin_indexes:
                of_text.setdefault(p_index, set()).add(line)
    plans: dict[int, _Plan] = {index: [(every[p], lines) for p, lines in sorted(of_text.items())]
                               for index, of_text in rows.items()}
    ungated = [p for p in every if p.gates is None]
    entropy = [p for p in ungated if p.entropy]
    if entropy:  # the lines holding a quoted string as long as the shortest one over a limit
        data = chunk.mapped(CLASSES)
        quoted: dict[int, set[int]] = {}
        for pattern in _quoted():
            for match in pattern.finditer(data):
                index, line = chunk.line(match.start())
                quoted.setdefault(index, set()).add(line)
        for index, lines in quoted.items():
            plans.setdefault(index, []).extend((plugin, lines) for plugin in entropy)
    # token runs: the lines holding a run of word characters and hyphens as long as the
    # shortest one an ungated plugin's matches hold; a gated plugin whose matches hold one as
    # long is run on those lines only
    by_run = [p for p in ungated if not p.entropy and p.word_run > 0]
    shortest = min((p.word_run for p in by_run), default=0)
    long_lines = _run_lines(chunk, shortest) if shortest else {}
    if shortest:
        for index in list(plans):
            plan = [(p, rows & long_lines.get(index, set()) if rows is not None and p.word_run >= shortest else rows)
                    for p, rows in plans[index]]
            plans[index] = [(p, rows) for p, rows in plan if rows is None or rows]
            if not plans[index]:
                del plans[index]
    for plugin in ungated:
        if plugin.entropy:
            continue
        if plugin.word_run <= 0:  # nothing known: every line of every text
            for index in range(len(chunk)):
                plans.setdefault(index, []).append((plugin, None))
            continue
        for index, lines in long_lines.items():
            plans.setdefault(index, []).append((plugin, lines))
    for plan in plans.values():  # the plugins' own order: the first to flag a value names its kind
        plan.sort(key=lambda entry: every.index(entry[0]))
    return plans


#: UTF-8 continuation bytes: deleted before :data:`_RUNS` maps a text, so that a character is
#: one byte and a run is counted in characters, as ``re`` counts it.
_CONTINUATION = bytes(range(0x80, 0xC0))


def _run_lines(chunk: Chunk, length: int) -> dict[int, set[int]]:
    """Per text of ``chunk``, the lines (0-based) holding ``length`` or more consecutive word
    characters and hyphens (non-ASCII characters counted as such: a superset)."""
    data = chunk.data.translate(_RUNS, _CONTINUATION)  # offsets change, lines do not
    needle = b"a" * length
    out: dict[int, set[int]] = {}
    at = data.find(needle)
    if at < 0:
        return out
    firsts: list[int] = []  # the chunk line of each text's first line
    total = 0
    for index in range(len(chunk)):
        firsts.append(total)
        total += chunk.data.count(b"\n", chunk.starts[index], chunk.end(index)) + 1
    pos = line = 0  # line: the newlines in data[:pos]
    while at >= 0:
        line += data.count(b"\n", pos, at)
        index = bisect.bisect_right(firsts, line) - 1
        out.setdefault(index, set()).add(line - firsts[index])
        after = data.find(b"\n", at)
        if after < 0:
            break
        pos, line = after + 1, line + 1
        at = data.find(needle, pos)  # the next line that holds one
    return out


def every_line(text: str, first_line: int = 1) -> list[Hit]:
    """Every plugin on every line of ``text``, no prefilter: what :func:`find` must equal
    (slow; the tests compare the two)."""
    if not text:
        return []
    with _LOCK:
        return _analyze(text, [(p, None) for p in _plugins()], first_line)


def _analyze(text: str, plan: _Plan, first_line: int) -> list[Hit]:
    """Run ``plan``'s plugins on its lines of ``text`` through detect-secrets (its filters
    included) and turn what they flag into hits."""
    _, keyword, rules, filtered_out, snippet = _engine()
    lines = text.split("\n")
    hits: list[Hit] = []
    seen: set[tuple[int, str]] = set()
    contexts: dict[int, Any] = {}
    for plugin_entry, rows in plan:
        plugin = plugin_entry.plugin
        gates = plugin_entry.gates
        for index in (sorted(rows) if rows is not None else range(len(lines))):
            line = lines[index].rstrip()
            if not line:
                continue
            if gates is not None and rows is not None and not any(g.line_passes(line) for g in gates):
                continue
            if plugin_entry.run > 1 and max(map(len, line.split()), default=0) < plugin_entry.run:
                continue  # no token run as long as every match holds
            if not plugin_entry.may_flag(line):
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
