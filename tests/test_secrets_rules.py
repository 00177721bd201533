"""Secret formats beyond detect-secrets' plugins: gitleaks' rules translated into memtui's scan
(memtui.core.scan.rules, gitleaks_rules) and memtui's AI-provider rules.

Each rule is checked on a secret generated from its own pattern (random characters from each
class, random case where the pattern ignores case, a seed per rule), the way gitleaks' own rule
tests make their samples; the placeholders documentation writes are checked to stay quiet.
Values are built at run time: no file of the project holds a whole key.
"""

from __future__ import annotations

import random
import re
import string
from pathlib import Path
from re import _parser as sre  # type: ignore[attr-defined]

import pytest

from memtui.core import audit
from memtui.core.backup import commit as backup
from memtui.core.scan import factors, gitleaks_rules, rules, secrets
from memtui.core.session import Session
from memtui.core.workspace import Workspace
from tests.backup_helpers import isolate_git
from tests.test_audit_privacy_and_integrity import session_line, write

ALNUM = string.ascii_letters + string.digits
_PRINTABLE = [chr(c) for c in range(33, 127)]
_CATEGORIES = {sre.CATEGORY_DIGIT: string.digits, sre.CATEGORY_WORD: ALNUM + "_",
               sre.CATEGORY_SPACE: " ", sre.CATEGORY_NOT_SPACE: ALNUM, sre.CATEGORY_NOT_WORD: "-",
               sre.CATEGORY_NOT_DIGIT: string.ascii_letters}


def _class(items: list) -> list[str]:
    chars: set[str] = set()
    negate = False
    for op, arg in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            chars.add(chr(arg))
        elif op is sre.RANGE:
            chars.update(chr(c) for c in range(arg[0], arg[1] + 1))
        elif op is sre.CATEGORY:
            chars.update(_CATEGORIES[arg])
    if negate:
        return [c for c in ALNUM + " ;" if c not in chars]
    return sorted(c for c in chars if c not in "\r\n\t\x0b\x0c") or [" "]


def _generate(seq: list, rng: random.Random, folded: bool) -> str:
    out = []
    for op, arg in seq:
        if op is sre.LITERAL:
            c = chr(arg)
            out.append(rng.choice([c.lower(), c.upper()]) if folded else c)
        elif op is sre.NOT_LITERAL:
            out.append(rng.choice([c for c in ALNUM if c != chr(arg)]))
        elif op is sre.ANY:
            out.append(rng.choice(ALNUM))
        elif op is sre.IN:
            out.append(rng.choice(_class(arg)))
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            low, high, item = arg
            count = low if low >= 8 or high == 0 else min(high, max(low, rng.randint(low, min(high, low + 3))))
            out.extend(_generate(list(item), rng, folded) for _ in range(count))
        elif op is sre.SUBPATTERN:
            _group, add, remove, item = arg
            inner = (folded or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            out.append(_generate(list(item), rng, inner))
        elif op is sre.BRANCH:
            out.append(_generate(list(rng.choice(arg[1])), rng, folded))
        elif op is sre.AT or op is sre.ASSERT_NOT or op is sre.ASSERT:
            continue
        else:
            raise AssertionError(f"the sample generator does not know {op}")
    return "".join(out)


def sample(rule: rules.RulePlugin) -> str:
    """A line holding one secret of ``rule``, generated from its pattern: the first of 200
    seeded tries that the rule itself accepts (pattern, keywords, entropy, allow lists). A
    rule whose pattern does not hold its keyword (``airtable`` for ``pat…``) gets the keyword
    before the value on the line."""
    tree = sre.parse(rule.pattern.pattern, rule.pattern.flags)
    folded = bool(rule.pattern.flags & re.IGNORECASE)
    rng = random.Random(rule.rule_id)
    for _ in range(200):
        text = _generate(list(tree), rng, folded).strip()
        if rule.keywords and not any(k in text.casefold() for k in rule.keywords):
            text = f"{rule.keywords[0]}: {text}"
        if rule.pattern.search(text) and list(rule.analyze_string(text)):
            return text
    raise AssertionError(f"no sample found for {rule.rule_id}")


ALL_RULES = rules.plugins()


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.rule_id)
def test_each_rule_finds_a_secret_generated_from_its_own_pattern(rule: rules.RulePlugin) -> None:
    line = sample(rule)
    hits = secrets.find(line)
    assert hits, f"{rule.rule_id}: nothing found in its own sample"
    assert hits == secrets.every_line(line)  # the prefilter lets it through (literals, case)
    for hit in hits:  # masked as every secret is
        assert "****…" in hit.masked and len(hit.masked) <= 12
    secret = next(rule.analyze_string(line))
    assert all(secret not in h.masked for h in hits)


def test_every_translated_rule_is_gated_by_literals() -> None:
    """No rule runs on every line: each feeds the Hyperscan pass with its literals or keywords."""
    ours = [p for p in secrets._plugins() if isinstance(p.plugin, rules.RulePlugin)]
    assert len(ours) == len(ALL_RULES) > 150
    assert [p.plugin.rule_id for p in ours if p.gates is None] == []


def _covered() -> list[str]:
    """The rules left out because detect-secrets' own plugins find them (one line)."""
    return sorted(r for r, why in gitleaks_rules.LEFT_OUT.items()
                  if why.startswith("detect-secrets' ") and "spans lines" not in why)


@pytest.mark.parametrize("rule_id", _covered())
def test_a_rule_left_out_as_covered_is_found_by_detect_secrets_own_plugins(rule_id: str) -> None:
    from tools.gitleaks_rules import translate  # the same translation

    source = _left_out_patterns()[rule_id]
    plugin = rules.RulePlugin(rule_id, translate(source[0]), tuple(source[1]), source[2], ())
    line = sample(plugin) if rule_id != "jwt" else _jwt()
    kinds = {h.kind for h in secrets.find(line)}
    assert kinds and not kinds & {r.rule_id for r in ALL_RULES}, (rule_id, kinds)


def _left_out_patterns() -> dict[str, tuple[str, list[str], float | None]]:
    """The left-out rules' gitleaks patterns (as gitleaks writes them), kept here to check the claim."""
    return {
        "aws-access-token": (r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b", ["akia"], 3),
        "github-pat": (r"ghp_[0-9a-zA-Z]{36}", ["ghp_"], 3),
        "github-oauth": (r"gho_[0-9a-zA-Z]{36}", ["gho_"], None),
        "github-app-token": (r"(?:ghu|ghs)_[0-9a-zA-Z]{36}", ["ghu_", "ghs_"], 3),
        "github-refresh-token": (r"ghr_[0-9a-zA-Z]{36}", ["ghr_"], None),
        "slack-bot-token": (r"(xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*)", ["xoxb"], None),
        "slack-user-token": (r"(xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34})", ["xoxp-", "xoxe-"], 2),
        "slack-legacy-bot-token": (r"(xoxb-[0-9]{8,14}-[a-zA-Z0-9]{18,26})", ["xoxb"], None),
        "slack-legacy-token": (r"xox[os]-\d+-\d+-\d+-[a-fA-F\d]+", ["xoxo", "xoxs"], None),
        "slack-legacy-workspace-token": (r"xox[ar]-(?:\d-)?[0-9a-zA-Z]{8,48}", ["xoxa", "xoxr"], None),
        "mailchimp-api-key": (r"\b([a-f0-9]{32}-us\d{1,2})\b", ["mailchimp"], None),
        "jwt": (r"\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)", ["ey"], 3),
    }


def _jwt() -> str:
    """A JSON Web Token (detect-secrets checks that its parts decode to JSON)."""
    import base64
    import json

    part = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")  # noqa: E731
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': 'u-8812', 'iat': 1764000000})}.{_key(random.Random(3), 43)}"


def test_the_claims_of_the_left_out_list_are_all_checked() -> None:
    assert set(_covered()) == set(_left_out_patterns())


def _key(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(ALNUM + "_-") for _ in range(n))


def provider_keys() -> dict[str, str]:
    """Keys of today's AI-provider formats (shapes only; random characters)."""
    rng = random.Random(5)
    alnum = lambda n: "".join(rng.choice(ALNUM) for _ in range(n))  # noqa: E731
    return {
        "openai project": "sk-proj-" + _key(rng, 74) + "T3Blbk" + "FJ" + _key(rng, 74),
        "openai project, short form": "sk-proj-" + _key(rng, 48),
        "openai service account": "sk-svcacct-" + _key(rng, 58) + "T3Blbk" + "FJ" + _key(rng, 58),
        "openai admin": "sk-admin-" + _key(rng, 64),
        "openai legacy": "sk-" + alnum(20) + "T3Blbk" + "FJ" + alnum(20),
        "anthropic api": "sk-ant-api03-" + _key(rng, 93) + "AA",
        "anthropic admin": "sk-ant-admin01-" + _key(rng, 93) + "AA",
        "anthropic api, other length": "sk-ant-api03-" + _key(rng, 60),
    }


@pytest.mark.parametrize("name", list(provider_keys()))
def test_a_bare_ai_provider_key_in_prose_is_a_secret(name: str) -> None:
    key = provider_keys()[name]
    for line in (f"the key is {key} for now", key, f"`{key}`", f"- OPENAI key: {key} (rotated)"):
        hits = secrets.find(line)
        assert len(hits) == 1, (name, line)
        assert hits[0].masked == secrets.mask(key) and key not in hits[0].masked


def test_a_key_after_a_json_escape_in_a_session_line_is_found_and_masked_whole() -> None:
    import json

    keys = provider_keys()
    anthropic, openai = keys["anthropic api"], keys["openai project, short form"]
    line = json.dumps({"role": "user", "content": f"key:\n{anthropic}\tthen {openai}.\nthanks"})
    hits = secrets.find(line)
    assert [h.masked for h in hits] == [secrets.mask(anthropic), secrets.mask(openai)]
    assert [h.fingerprint for h in hits] == [secrets.fingerprint(anthropic), secrets.fingerprint(openai)]


@pytest.mark.parametrize("text", [
    "ANTHROPIC_API_KEY=sk-ant-api03-" + "X" * 93 + "AA",
    "sk-ant-api03-XXXX…",
    "set it to sk-ant-api03-... in your shell",
    "OPENAI_API_KEY=sk-proj-your-key-here",
    "export OPENAI_API_KEY=your-key-here",
    "api_key: sk-proj-" + "x" * 48,
    "sk-proj-" + "abc123" * 8,
    "The sk-proj- prefix marks a project key; sk-ant-api03- marks an Anthropic one.",
    "openai_api_key = os.environ['OPENAI_API_KEY']",
    "Use `sk-...` keys only from the vault.",
    "an 1password-style a3-xxxxxx code and the adobe team",
])
def test_placeholders_are_no_secret(text: str) -> None:
    assert secrets.find(text) == []


def test_gitleaks_allow_comment_and_the_global_allow_list_are_honoured() -> None:
    key = provider_keys()["anthropic api"]
    assert secrets.find(f"{key}  # gitleaks:allow") == []
    assert [h.kind for h in secrets.find(key)] == ["anthropic-api-key"]


def test_a_case_insensitive_group_in_a_case_sensitive_pattern_gives_no_case_sensitive_gate() -> None:
    pattern = re.compile(r"(?i:abc)def[0-9]{4}")
    found = factors.conditions(pattern)
    assert found is not None
    folded, sets = found
    assert not folded
    line = "ABCdef1234"
    assert all(any(s in line for s in need) for need in sets)  # the gate lets the match through


def test_the_notebook_and_a_session_line_with_provider_keys_are_findings_and_block_the_backup(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = provider_keys()
    openai, anthropic = keys["openai project"], keys["anthropic api"]
    root = tmp_path / "ws"
    write(root, "memory/AGENTS.md", "---\nowner: root.owner\n---\n# Root\n")
    write(root, "memory/MEMORY.md", f"# Notebook\n\nOpenAI for the eval runs: {openai}\n")
    write(root, "sessions/durable/tg-1.jsonl",
          session_line("user", f"here is the key {anthropic}", "2026-11-02T09:00:00Z"))
    report = audit.run(Workspace.open(root))
    found = {(f.path, f.line): f for f in report.findings if f.code == "secret"}
    assert set(found) == {("memory/MEMORY.md", 3), ("sessions/durable/tg-1.jsonl", 1)}
    assert secrets.mask(openai) in found[("memory/MEMORY.md", 3)].message
    assert all(openai not in f.message and anthropic not in f.message for f in found.values())
    isolate_git(monkeypatch, tmp_path / "home")
    ws = Workspace.open(root)
    with Session.open(ws) as session, pytest.raises(backup.BackupBlocked) as refused:
        backup.backup(ws, tmp_path / "repo", session=session)
    assert {(f.path, f.line) for f in refused.value.findings} == set(found)
    assert not (tmp_path / "repo").exists()
