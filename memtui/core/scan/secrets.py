"""Secrets in text, found by Yelp's detect-secrets (seed 000 §2 rule 5: "the memory
tree holds no secrets ... by construction").

This module is the only door to detect-secrets: the rest of memtui gets :class:`Hit` values
that carry a masked value (:func:`mask`) and a fingerprint, never the secret itself, so no
finding, ``--json`` page, log line or exception message can hold one.

What is used of the library:

- every plugin of detect-secrets 1.5 except ``IPPublicDetector`` (a public IP address is not a
  credential, and the memory tree names hosts on purpose), then the formats it does not know
  (gitleaks' maintained rules and memtui's AI-provider rules, :mod:`memtui.core.scan.rules`);
- its default false-positive filters (sequential strings, UUIDs, ids, templates, ``$VAR``,
  indirect references, ``pragma: allowlist secret`` comments, …); no verification filter, so
  no plugin ever calls a network service with a found value;
- the keyword plugin with detect-secrets' quoted-value rules plus its unquoted
  ``password=value`` rule (``FOLLOWED_BY_EQUAL_SIGNS_REGEX``): Markdown is prose, where an
  unquoted ``Password: reset it in the portal`` is common and means nothing, while
  ``password=hunter2`` is an assignment.

Speed (the audit scans every article): the prefilters run over many texts at once (a
:class:`~memtui.core.scan.chunk.Chunk`, :func:`find_many`) in one pass of Hyperscan
(:class:`_Prefilter`): the literals the gated plugins' patterns require mark the lines a
plugin is run on; the token runs and quoted strings the ungated and entropy plugins need mark
theirs. A plugin's own patterns must match a line before the library analyses it; the line
filters (one of them, ``is_indirect_reference``, is a slow regex on long prose lines) run only
on lines a plugin flagged. The result is the same as detect-secrets' own line-by-line scan
(:func:`every_line`; the tests compare them).
"""

from __future__ import annotations

import hashlib
import math
import logging
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from memtui.core.scan import factors
from memtui.core.scan.chunk import HINTS, Chunk, literal

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
    from memtui.core.scan import rules as more_rules

    plugins += more_rules.plugins()  # after the library's: a value both flag keeps the library's kind
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
    the lines holding a token run as long as their matches hold (:attr:`word_run`), the entropy
    plugins on the lines holding a quoted string as long as the shortest one over their limit
    (:class:`_Prefilter` finds them all). Before the library analyses a line, the line must
    hold a token as long as every match holds (:attr:`run`) and the plugin's own patterns must
    match in it (:attr:`precheck`): detect-secrets' regex plugins and the keyword plugin yield
    only what those patterns match.
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
        keywords = getattr(plugin, "keywords", None)
        if keywords and min(map(len, keywords)) >= 2:
            # a rule that checks its own keywords in the line (core/scan/rules.py) is gated on
            # them when its patterns give no gate or only shorter literals ("airtable", not "pat")
            shortest = min((min(map(len, g.strong[0])) for g in gates or ()), default=0)
            if gates is None or min(map(len, keywords)) > shortest:
                gates = [_Gate(True, [frozenset(keywords)])]
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
    """detect-secrets' filters, in its own order: the value, the line, the context.

    A rule of :mod:`memtui.core.scan.rules` skips :data:`RULE_EXEMPT`: its pattern and keyword
    already say the value is a key (a Heroku API key is a UUID)."""
    if getattr(plugin, "rule_id", None):
        return _rule_filtered(plugin, line, value, context)
    return bool(filtered_out(["secret"], filename=_FILENAME, secret=value, plugin=plugin, line=line)
                or filtered_out(["line"], filename=_FILENAME, line=line, context=context)
                or filtered_out(["context"], filename=_FILENAME, secret=value, plugin=plugin, line=line,
                                context=context))


#: detect-secrets' filters the translated rules skip (module of :func:`_filtered`).
RULE_EXEMPT = frozenset({"detect_secrets.filters.heuristic.is_potential_uuid"})


def _rule_filtered(plugin: Any, line: str, value: str, context: Any) -> bool:
    """:func:`_filtered` for a rule: the same filters in the same order, minus :data:`RULE_EXEMPT`."""
    from detect_secrets.core.scan import get_filters_with_parameter
    from detect_secrets.util.inject import call_function_with_arguments

    stages = ((["secret"], dict(filename=_FILENAME, secret=value, plugin=plugin, line=line)),
              (["line"], dict(filename=_FILENAME, line=line, context=context)),
              (["context"], dict(filename=_FILENAME, secret=value, plugin=plugin, line=line, context=context)))
    for required, kwargs in stages:
        for filter_fn in get_filters_with_parameter(*required):
            if filter_fn.path in RULE_EXEMPT:
                continue
            try:
                if call_function_with_arguments(filter_fn, **kwargs):
                    return True
            except TypeError:  # a filter that takes other arguments (the library skips it too)
                continue
    return False


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


def _bytes_class(chars: str) -> bytes:
    """A Hyperscan class (``[...]``) of the ASCII ``chars`` (every byte escaped)."""
    return b"[" + b"".join(b"\\x%02x" % ord(c) for c in sorted(set(chars))) + b"]"


#: What a token run is made of, in bytes: word characters, ``-``, and every byte of a
#: non-ASCII character (``\\w`` holds letters of every script, so a run of these over-estimates
#: a character run, never under-estimates it).
_RUN_BYTES = b"A-Za-z0-9_\\x2d\\x80-\\xff"


class _Prefilter:
    """The plugins' prefilters, contributed to the chunk's one Hyperscan pass
    (:data:`memtui.core.scan.chunk.HINTS`, under :data:`HINTS_NAME`):

    - the strings of each gate's first strong set (case-insensitively for a case-insensitive
      pattern: ASCII case, exact for ASCII text; a non-ASCII text is searched again in its
      ``casefold()``);
    - the start of each run of word characters and hyphens as long as the shortest one an
      ungated plugin's matches hold (:attr:`_Plugin.word_run`);
    - a quoted string of the entropy plugins' charsets as long as the shortest one over any
      limit (every candidate of an entropy plugin is one).

    :attr:`meaning` says what each pattern of :data:`HINTS_NAME` (by its index) marks:
    ``("literal", plugin indexes)`` or ``("quoted", ())``; :data:`RUNS_NAME` has the run.
    """

    def __init__(self, plugins: list["_Plugin"]) -> None:
        meaning: list[tuple[str, tuple[int, ...]]] = []
        patterns: list[tuple[bytes, bool, bool]] = []
        literals: dict[tuple[str, bool], set[int]] = {}
        for p_index, plugin in enumerate(plugins):
            for gate in plugin.gates or ():
                for value in gate.strong[0]:
                    literals.setdefault((value, gate.folded), set()).add(p_index)
        for (value, folded), owners in literals.items():
            meaning.append(("literal", tuple(sorted(owners))))
            patterns.append((literal(value), folded, False))
        self.run = min((p.word_run for p in plugins if p.gates is None and not p.entropy and p.word_run > 0),
                       default=0)
        runs: list[tuple[bytes, bool, bool]] = []
        if self.run:  # a run's first `run` characters, after a character that is none
            runs.append((b"(?:^|[^" + _RUN_BYTES + b"])[" + _RUN_BYTES + b"]{%d}" % self.run, False, True))
        entropy = [p for p in plugins if p.entropy]
        if entropy:
            charset = _bytes_class("".join(p.plugin.charset for p in entropy))
            shortest = min(p.run for p in entropy)
            for quote in "'\"":
                meaning.append(("quoted", ()))
                patterns.append((literal(quote) + charset + b"{%d,}" % shortest + literal(quote), False, False))
        self.meaning = meaning
        HINTS.add(HINTS_NAME, patterns)
        HINTS.add(RUNS_NAME, runs, own_pass=True)


#: The names of the secret detectors' hints in :data:`memtui.core.scan.chunk.HINTS`: the
#: literals and quoted strings, and the token runs (a pass of their own).
HINTS_NAME = "secrets"
RUNS_NAME = "secrets-runs"


@lru_cache(maxsize=1)
def _prefilter() -> _Prefilter:
    return _Prefilter(_plugins())


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
    prefilter = _prefilter()
    rows, long_lines, quoted = _hinted_lines(chunk, prefilter.meaning)
    run = prefilter.run
    plans: dict[int, _Plan] = {}
    for index, of_text in rows.items():
        # a gated plugin whose matches hold a token run as long is run on those lines only
        plan: _Plan = []
        for p, lines in sorted(of_text.items()):
            if run and every[p].word_run >= run:
                lines = lines & long_lines.get(index, set())
            if lines:
                plan.append((every[p], lines))
        if plan:
            plans[index] = plan
    _plan_ungated(plans, every, len(chunk), long_lines, quoted)
    for entries in plans.values():  # the plugins' own order: the first to flag a value names its kind
        entries.sort(key=lambda entry: every.index(entry[0]))
    return plans


def _hinted_lines(chunk: Chunk, meaning: Any) -> tuple[dict[int, dict[int, set[int]]], dict[int, set[int]],
                                                        dict[int, set[int]]]:
    """What the prefilter's hints say of each text: ``(rows, long_lines, quoted)``, by text
    index: the lines holding a plugin's first strong string (by plugin), the lines holding a
    token run, the lines holding an entropy candidate. Case-insensitive strings are looked
    for in the ``casefold()`` of the non-ASCII texts too (``ſ`` is ``s``)."""
    rows: dict[int, dict[int, set[int]]] = {}
    long_lines: dict[int, set[int]] = {}
    quoted: dict[int, set[int]] = {}
    for id_, end in chunk.hints(HINTS_NAME):
        kind, owners = meaning[id_]
        index, line = chunk.line(end - 1)
        if kind == "literal":
            of_text = rows.setdefault(index, {})
            for p_index in owners:
                of_text.setdefault(p_index, set()).add(line)
        else:
            quoted.setdefault(index, set()).add(line)
    for _, end in chunk.hints(RUNS_NAME):
        index, line = chunk.line(end - 1)
        long_lines.setdefault(index, set()).add(line)
    others = [i for i, plain in enumerate(chunk.ascii) if not plain]
    if others:
        folded = Chunk([chunk.texts[i].casefold() for i in others])
        for id_, end in folded.hints(HINTS_NAME):
            kind, owners = meaning[id_]
            if kind == "literal":
                sub, line = folded.line(end - 1)
                of_text = rows.setdefault(others[sub], {})
                for p_index in owners:
                    of_text.setdefault(p_index, set()).add(line)
    return rows, long_lines, quoted


def _plan_ungated(plans: dict[int, _Plan], every: list[_Plugin], texts: int, long_lines: dict[int, set[int]],
                  quoted: dict[int, set[int]]) -> None:
    """Add the plugins no string gates to ``plans``: an entropy plugin on the lines with a
    candidate, one with a known token run on the lines holding one, the others everywhere."""
    ungated = [p for p in every if p.gates is None]
    entropy = [p for p in ungated if p.entropy]
    for index, lines in quoted.items():
        plans.setdefault(index, []).extend((plugin, lines) for plugin in entropy)
    for plugin in ungated:
        if plugin.entropy:
            continue
        if plugin.word_run <= 0:  # nothing known: every line of every text
            for index in range(texts):
                plans.setdefault(index, []).append((plugin, None))
            continue
        for index, lines in long_lines.items():
            plans.setdefault(index, []).append((plugin, lines))


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
    seen: set[tuple[int, int | str]] = set()
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
                if at >= 0 and not getattr(plugin, "rule_id", None):  # a rule's secret is whole
                    whole = _TOKEN.match(line, at)
                    if whole:
                        token = whole.group(0)
                if _placeholder(token):
                    continue
                key = (number, at if at >= 0 else token)  # one value, however many plugins flag it
                if key in seen:
                    continue
                seen.add(key)
                hits.append(Hit(kind, number + first_line - 1, at + 1 if at >= 0 else None,
                                mask(token), fingerprint(token)))
    hits.sort(key=lambda h: (h.line, h.column or 0))
    return hits
