"""Translate gitleaks' rules (its ``config/gitleaks.toml``) into memtui's secret scan.

Usage::

    python tools/gitleaks_rules.py path/to/gitleaks.toml COMMIT > memtui/core/scan/gitleaks_rules.py

gitleaks (https://github.com/gitleaks/gitleaks, MIT licence, Copyright (c) 2019 Zachary Rice)
keeps a maintained list of secret formats. Its rules are Go (RE2) regular expressions; this
script keeps each rule's id, keywords, entropy and allow lists and rewrites the two RE2 forms
Python's ``re`` does not take:

- a flag group in the middle of a pattern (``p8e-(?i)[a-z0-9]{32}``), which in RE2 applies to
  the rest of its group, becomes a scoped group (``p8e-(?i:[a-z0-9]{32})``), closed and reopened
  around each ``|`` of that group;
- ``\\z`` (end of text) becomes Python's ``\\Z``; an ASCII class (``[[:alnum:]]``) its ranges;
  a ``[`` inside a class is escaped.

The patterns are compiled with ``re.ASCII`` (RE2's ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are ASCII).
Rules left out are listed in :data:`LEFT_OUT` with the reason; the module written says which.
"""

from __future__ import annotations

import re
import sys
import tomllib

#: Rules not translated, with the reason (the generated module repeats it).
LEFT_OUT = {
    # detect-secrets' keyword and entropy plugins are memtui's generic rule; gitleaks' own
    # generic rule flags any long word after "key:" or "token=" in prose.
    "generic-api-key": "the generic rule: detect-secrets' keyword and entropy plugins cover it",
    # selected by a file's name, which memtui's texts (notes, sessions, skills) never have
    "freemius-secret-key": "selected by file name (.php)",
    "hashicorp-tf-password": "selected by file name (.tf, .hcl)",
    "kubernetes-secret-yaml": "selected by file name (.yaml) and spans lines",
    "nuget-config-password": "selected by file name (nuget.config)",
    "pkcs12-file": "a file name rule, no pattern",
    # identifiers, public by design: gitleaks reports them as a sign that a secret is near;
    # memtui reports the secret (the same service's secret rule is translated)
    **{rule_id: "an identifier, not a credential" for rule_id in (
        "adobe-client-id", "asana-client-id", "bitbucket-client-id", "discord-client-id", "linkedin-client-id",
        "looker-client-id", "messagebird-client-id", "plaid-client-id", "sendbird-access-id", "sumologic-access-id",
        "new-relic-user-api-id")},
    # detect-secrets' own plugins find these (the tests check each one on the rule's sample)
    "private-key": "detect-secrets' PrivateKeyDetector (and the pattern spans lines)",
    "aws-access-token": "detect-secrets' AWSKeyDetector",
    "github-pat": "detect-secrets' GitHubTokenDetector",
    "github-oauth": "detect-secrets' GitHubTokenDetector",
    "github-app-token": "detect-secrets' GitHubTokenDetector",
    "github-refresh-token": "detect-secrets' GitHubTokenDetector",
    "slack-bot-token": "detect-secrets' SlackDetector",
    "slack-user-token": "detect-secrets' SlackDetector",
    "slack-legacy-bot-token": "detect-secrets' SlackDetector",
    "slack-legacy-token": "detect-secrets' SlackDetector",
    "slack-legacy-workspace-token": "detect-secrets' SlackDetector",
    "mailchimp-api-key": "detect-secrets' MailchimpDetector",
    "jwt": "detect-secrets' JwtTokenDetector (which also checks that the parts are JSON)",
}

#: RE2's ASCII classes (``[[:alnum:]]``), which Python's ``re`` does not know.
_POSIX = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "lower": "a-z", "upper": "A-Z",
          "xdigit": "0-9a-fA-F", "space": "\\t\\n\\v\\f\\r ", "word": "\\w", "punct": "!-/:-@\\[-`{-~"}
_MID_FLAGS = re.compile(r"\(\?([a-zA-Z]+)\)")


def translate(go: str) -> str:
    """A Python ``re`` pattern for the RE2 pattern ``go`` (module docstring)."""
    out: list[str] = []
    pending: list[list[str]] = [[]]  # per open group: the scoped flag groups opened in it
    i = 0
    in_class = False
    while i < len(go):
        c = go[i]
        if c == "\\":
            pair = go[i:i + 2]
            out.append("\\Z" if pair == "\\z" else pair)
            i += 2
            continue
        if in_class:
            if c == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
                out.append(c)
            elif c == "[" and go.startswith("[:", i):
                end = go.index(":]", i) + 2
                out.append(_POSIX[go[i + 2:end - 2]])
                i = end
                continue
            else:
                out.append("\\" + c if c in "[&~|" else c)
            i += 1
            continue
        if c == "[":
            in_class = True
            if go.startswith("[^", i):
                out.append("[^")
                i += 2
                continue
            out.append("[")
        elif c == "(":
            flags = _MID_FLAGS.match(go, i)
            if flags and (i > 0 or len(pending) > 1):
                out.append(f"(?{flags.group(1)}:")
                pending[-1].append(flags.group(1))
                i = flags.end()
                continue
            pending.append([])
            out.append(c)
        elif c == ")":
            out.append(")" * len(pending.pop()) + ")")
        elif c == "|" and pending[-1]:
            out.append(")" * len(pending[-1]) + "|" + "".join(f"(?{f}:" for f in pending[-1]))
        else:
            out.append(c)
        i += 1
    out.append(")" * len(pending[0]))
    return "".join(out)


def _literal(value: str) -> str:
    """``value`` as a Python string literal, raw when that is possible."""
    if "\\" in value and not value.endswith("\\") and "\n" not in value:
        for quote in ("'", '"', "'''"):
            if quote not in value and not value.endswith(quote[0]):
                return f"r{quote}{value}{quote}"
    return repr(value)


def main(path: str, commit: str) -> None:
    with open(path, "rb") as handle:
        config = tomllib.load(handle)
    write = sys.stdout.write
    write(HEADER.format(commit=commit))
    write("#: The global allow list: a secret matching one of these is no secret.\n")
    write("ALLOW_REGEXES: tuple[str, ...] = (\n")
    for regex in config["allowlist"].get("regexes", ()):
        write(f"    {_literal(translate(regex))},\n")
    write(")\nSTOPWORDS: tuple[str, ...] = (\n")
    for word in config["allowlist"].get("stopwords", ()):
        write(f"    {_literal(word)},\n")
    write(")\n\n#: ``(id, pattern, keywords, entropy or None, allow lists)``; an allow list is\n"
          "#: ``(target, regexes, stopwords)`` with target ``secret``, ``match`` or ``line``.\n")
    write("RULES: tuple[tuple[str, str, tuple[str, ...], float | None, tuple[tuple[str, tuple[str, ...], "
          "tuple[str, ...]], ...]], ...] = (\n")
    left = []
    for rule in config["rules"]:
        if rule["id"] in LEFT_OUT or "regex" not in rule:
            left.append(rule["id"])
            continue
        allow = []
        for entry in rule.get("allowlists", ()):
            if entry.get("paths") and not (entry.get("regexes") or entry.get("stopwords")):
                continue  # a file-name allow list: memtui's texts have none of those names
            if entry.get("condition") == "AND" and entry.get("paths"):
                continue
            allow.append((entry.get("regexTarget", "secret"), tuple(translate(r) for r in entry.get("regexes", ())),
                          tuple(entry.get("stopwords", ()))))
        write(f"    ({rule['id']!r},\n     {_literal(translate(rule['regex']))},\n"
              f"     {tuple(rule.get('keywords', ()))!r}, {rule.get('entropy')!r},\n     (")
        for target, regexes, stopwords in allow:
            write(f"({target!r}, (" + "".join(f"{_literal(r)}, " for r in regexes) + "), "
                  f"{stopwords!r}), ")
        write(")),\n")
    write(")\n\n#: gitleaks' rules not translated, and why.\nLEFT_OUT: dict[str, str] = {\n")
    for rule_id in left:
        write(f"    {rule_id!r}: {LEFT_OUT.get(rule_id, 'no pattern')!r},\n")
    write("}\n")


HEADER = '''"""gitleaks' secret rules, translated to Python ``re`` by ``tools/gitleaks_rules.py`` (do not
edit by hand: run the tool on a newer ``config/gitleaks.toml`` instead).

Source: https://github.com/gitleaks/gitleaks, ``config/gitleaks.toml`` at commit {commit}.
Each rule keeps gitleaks' id (shown as the finding's kind), keywords, entropy and allow lists.

gitleaks' licence:

MIT License

Copyright (c) 2019 Zachary Rice

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""

# ruff: noqa: E501

from __future__ import annotations

'''

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
