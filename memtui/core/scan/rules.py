"""Secret formats detect-secrets' own plugins do not know, as detect-secrets plugins: gitleaks'
maintained rules (:mod:`memtui.core.scan.gitleaks_rules`, translated by
``tools/gitleaks_rules.py``) and memtui's rules for AI-provider keys (:data:`EXTRA_RULES`).

Each rule is one :class:`RulePlugin`, a ``RegexBasedDetector`` that :mod:`memtui.core.scan.secrets`
runs beside the library's plugins, through the same prefilter, filters and masking. A rule
follows gitleaks' semantics, line by line:

- one of its **keywords** must be in the line (case-insensitively): gitleaks' own prefilter,
  and the literals the rule contributes to the Hyperscan pass (:attr:`RulePlugin.keywords`)
  when its pattern has no strong literal of its own;
- the **secret** is the first non-empty group of a match (the whole match without groups),
  and it is the value masked and fingerprinted (the rule knows where its secret ends);
- a word boundary (``\\b``) is also one after a JSON string escape (:func:`escaped_boundaries`);
- a secret whose Shannon **entropy** is at or under the rule's is no secret;
- the **allow lists** (the rule's and gitleaks' global one: regular expressions over the
  secret, the match or the line, and stop words in the secret) and a ``gitleaks:allow``
  comment on the line drop a match.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from typing import Generator

from detect_secrets.plugins.base import RegexBasedDetector

from memtui.core.scan import gitleaks_rules

#: memtui's own rules, in gitleaks' form: ``(id, pattern, keywords, entropy, allow lists)``.
#: gitleaks' OpenAI and Anthropic rules want the exact lengths and markers of today's keys
#: (``T3BlbkFJ``, a final ``AA``); these find a key by its provider prefix alone, whatever its
#: length (a provider changes the length of its keys, a key copied into notes may lose a few
#: characters), as long as 32 or more key characters follow with gitleaks' entropy of a key.
EXTRA_RULES: tuple[tuple[str, str, tuple[str, ...], float | None, tuple], ...] = (
    ("openai-api-key-prefix", r"\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,})(?![A-Za-z0-9_-])",
     ("sk-proj-", "sk-svcacct-", "sk-admin-"), 3.5, ()),
    ("anthropic-api-key-prefix", r"\b(sk-ant-(?:api|admin|sid|oat|ort)\d\d-[A-Za-z0-9_-]{32,})(?![A-Za-z0-9_-])",
     ("sk-ant-",), 3.5, ()),
)

_ALLOW_SIGNATURE = "gitleaks:allow"


#: A word boundary, or the end of a JSON string escape (``\n``, ``\r``, ``\t``): in a session
#: line or a graph record a key often follows ``\n`` ("key:\nsk-ant-…"), where ``\b`` sees
#: the escape's ``n`` and the key's first letter as one word.
_BOUNDARY = r"(?:\b|(?<=\\[nrt]))"


def escaped_boundaries(pattern: str) -> str:
    """``pattern`` with each ``\b`` outside a character class also true after a JSON string
    escape (:data:`_BOUNDARY`)."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            pair = pattern[i:i + 2]
            out.append(_BOUNDARY if pair == "\\b" and not in_class else pair)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            start = "[^]" if pattern.startswith("[^]", i) else "[]" if pattern.startswith("[]", i) else "["
            out.append(start)  # a "]" first in a class is one of its characters
            i += len(start)
            continue
        if c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (gitleaks' ``shannonEntropy``)."""
    if not value:
        return 0.0
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


class RulePlugin(RegexBasedDetector):
    """One gitleaks-form rule as a detect-secrets plugin (module docstring).

    Attributes:
        rule_id: the rule's id, shown as the finding's kind (``anthropic-api-key``).
        keywords: the rule's keywords, case-folded.
    """

    secret_type = "gitleaks rule"  # the class's; each instance names its rule (detect-secrets reads it per instance)

    def __init__(self, rule_id: str, pattern: str, keywords: tuple[str, ...], min_entropy: float | None,
                 allow: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]) -> None:
        self.rule_id = rule_id
        self.secret_type = rule_id  # per rule, shown as the kind
        self.pattern = re.compile(escaped_boundaries(pattern), re.ASCII)
        self.keywords = tuple(k.casefold() for k in keywords)
        self.min_entropy = min_entropy
        self.allow = [(target, [re.compile(r, re.ASCII) for r in regexes], tuple(w.lower() for w in words))
                      for target, regexes, words in allow]
        self.allow.append(("secret", _global_allow(), gitleaks_rules.STOPWORDS))

    @property
    def denylist(self) -> tuple[re.Pattern[str], ...]:
        return (self.pattern,)

    def analyze_string(self, string: str) -> Generator[str, None, None]:
        """The secrets of this rule in the line ``string``."""
        if self.keywords and not any(k in string.casefold() for k in self.keywords):
            return
        if _ALLOW_SIGNATURE in string:
            return
        for match in self.pattern.finditer(string):
            secret = next((g for g in match.groups() if g), match.group(0)).strip("\n")
            if self.min_entropy and entropy(secret) <= self.min_entropy:
                continue
            if not secret or self._allowed(secret, match.group(0), string):
                continue
            yield secret

    def _allowed(self, secret: str, whole: str, line: str) -> bool:
        lowered = secret.lower()
        for target, regexes, words in self.allow:
            text = whole if target == "match" else line if target == "line" else secret
            if any(r.search(text) for r in regexes) or any(w in lowered for w in words):
                return True
        return False


@lru_cache(maxsize=1)
def _global_allow() -> list[re.Pattern[str]]:
    return [re.compile(r, re.ASCII) for r in gitleaks_rules.ALLOW_REGEXES]


def plugins() -> list[RulePlugin]:
    """A plugin for each rule: gitleaks' translated rules, then :data:`EXTRA_RULES`."""
    return [RulePlugin(*rule) for rule in (*gitleaks_rules.RULES, *EXTRA_RULES)]
